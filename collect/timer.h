/* timer: what measures one problem for the conv and gemm loops (conv_cmd.c, gemm_cmd.c), behind a table of
 * functions so that the loops, the workers and the merge run without a GPU.
 *
 * Two implementations: the GPU's (timer_cudnn.c over gpu.h, timer_cublaslt.c over gemm_gpu.h; built with
 * CUDA) and a fake one (timer_fake.c) whose times are a hash of the problem key and the candidate, so that a
 * collection is a pure function of its key list whatever the workers and their order: the merge tests compare
 * files bit for bit. The environment selects the fake timer:
 *   HEURIST_COLLECT_FAKE=N          the fake timer, with N devices (what --gpus all counts)
 *   HEURIST_COLLECT_FAKE_US=U       each problem takes U microseconds on average (0 to 2U, from its key)
 *   HEURIST_COLLECT_FAKE_FAIL=S     a problem whose key contains S ends its worker with a device error
 *   HEURIST_COLLECT_FAKE_KILL=S     a problem whose key contains S kills its worker (SIGKILL)
 *   HEURIST_COLLECT_FAKE_TRACE=F    each problem's key is appended to file F as its measuring begins (the
 *                                   dealing order, for the tests)
 * and one variable changes how the GPU timers hold their buffers, for compute-sanitizer (scripts/device_sanitize.sh):
 *   HEURIST_COLLECT_MEMCHECK=1      each problem's tensors or operands, and each candidate's convolution workspace,
 *                                   allocated at their exact sizes (not grown and kept a quarter larger), so that
 *                                   an access past a tensor's end leaves its allocation and memcheck reports it;
 *                                   and the device reset when a timer closes, so that its leak check sees every
 *                                   allocation still held
 * Functions return 0 or a negative COLLECT_E* code with collect_last_error() set.
 */
#ifndef HEURIST_COLLECT_TIMER_H
#define HEURIST_COLLECT_TIMER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "collect.h"
#include "gemm.h"

/* The devices a worker can bind: N fake ones under HEURIST_COLLECT_FAKE=N, else the visible GPUs, counted in
 * a child process so that the caller stays free of CUDA and may fork workers afterwards. */
int collect_device_count(int *n);
/* 1 when HEURIST_COLLECT_FAKE selects the fake timer. */
int collect_timer_is_fake(void);
/* 1 when HEURIST_COLLECT_MEMCHECK asks the GPU timers for exact-size buffers and a device reset at close. */
int collect_timer_memcheck(void);
/* The PCI bus id of device `device` (0-based among the visible ones), as CUDA spells it ("0000:1B:00.0"),
 * without making its context; a fake device d is "0000:<d + 1>:00.0". 0, or negative with the error set. */
int collect_device_bus_id(int device, char *buf, size_t size);

/* ---- convolutions ---- */
typedef struct collect_conv_opts {
    int repeats;            /* timed repeats per candidate */
    double min_repeat_ms;   /* a repeat lasts at least this long */
    size_t ws_limit;        /* workspace limit, bytes */
    int classes;            /* ask the heuristic of FP32 problems under the other precision classes too */
} collect_conv_opts;

#define COLLECT_CONV_MAX_REPEATS 64
#define COLLECT_CONV_MAX_RESULTS (8 * COLLECT_MATH_COUNT)
#define COLLECT_CONV_MAX_HEUR 64

/* The precision classes (data/portable.h) beside the problem's own whose heuristic lists FP32 problems get. */
#define COLLECT_CONV_CLASSES 2
/* DATA_PRECISION_STRICT, DATA_PRECISION_CONVERSION (defined in timer_fake.c, the timers' CPU part) */
extern const int collect_conv_classes[COLLECT_CONV_CLASSES];

/* One problem: every candidate that ran, and the vendor heuristic's ranking as (algo, math) pairs, asked with
 * heur_math_asked (gpu_heuristic_math of its data type) in heur_us microseconds of host time; with
 * opts.classes and an FP32 problem, the rankings under collect_conv_classes too (n_cls 2, else 0). */
typedef struct collect_conv_measured {
    collect_result res[COLLECT_CONV_MAX_RESULTS];
    int n_res;
    int heur_algo[COLLECT_CONV_MAX_HEUR], heur_math[COLLECT_CONV_MAX_HEUR];
    int n_heur, heur_math_asked;
    double heur_us;
    int n_cls;
    int cls_algo[COLLECT_CONV_CLASSES][COLLECT_CONV_MAX_HEUR], cls_math[COLLECT_CONV_CLASSES][COLLECT_CONV_MAX_HEUR];
    int cls_n[COLLECT_CONV_CLASSES];
    double cls_us[COLLECT_CONV_CLASSES];
} collect_conv_measured;

typedef struct collect_conv_timer collect_conv_timer;
struct collect_conv_timer {
    /* One line naming the device: host, name, PCI bus id, UUID, driver and library versions. */
    void (*describe)(collect_conv_timer *t, char *buf, size_t size);
    /* 0 with m filled (m->n_res >= 0); 1 with *why when the problem is skipped; negative on a device error
     * that ends the worker. Rejected candidates are tallied in cand. */
    int (*measure)(collect_conv_timer *t, const collect_conv *cv, const char *key, collect_conv_measured *m,
                   cli_tally *cand, const char **why);
    void (*close)(collect_conv_timer *t);
    void *state;
};

/* Opens the timer of device `device` (0-based among the visible ones): the fake one under
 * HEURIST_COLLECT_FAKE, else cuDNN's (COLLECT_EINVAL in a build without CUDA). */
int collect_conv_timer_open(collect_conv_timer *t, int device, const collect_conv_opts *o);
int collect_conv_timer_open_fake(collect_conv_timer *t, int device, const collect_conv_opts *o);
int collect_conv_timer_open_cudnn(collect_conv_timer *t, int device, const collect_conv_opts *o);

/* ---- GEMMs ---- */
typedef struct collect_gemm_opts {
    int n_enum;              /* sampled candidates beyond the heuristic's list */
    int n_heur;              /* heuristic entries asked for */
    int verbose;
    uint64_t seed;
    int repeats, max_batch;
    double min_batch_us, slow_factor;
    size_t ws_bytes;
    size_t a_max, b_max, d_max; /* operand bytes allocated when the timer opens (0: grown to the shapes measured) */
} collect_gemm_opts;

#define COLLECT_GEMM_MAX_CANDIDATES 1024
#define COLLECT_GEMM_MAX_REPEATS 16

typedef struct collect_gemm_timer collect_gemm_timer;
struct collect_gemm_timer {
    /* One line naming the device (as conv's); the GPU's name and SM count through the last arguments. */
    void (*describe)(collect_gemm_timer *t, char *buf, size_t size, char *name, size_t name_size, int *sms);
    long (*library_version)(collect_gemm_timer *t);
    /* The algorithm ids and their capabilities for one data type. */
    int (*caps)(collect_gemm_timer *t, collect_gemm_dtype dtype, collect_gemm_capset *out);
    /* The shape's candidates timed into rows (room for COLLECT_GEMM_MAX_CANDIDATES), *n_cand candidates
     * tried; caps is the shape's data type's. 0; 1 with *why when the shape is skipped; negative on a device
     * error that ends the worker. */
    int (*measure)(collect_gemm_timer *t, const collect_gemm_shape *s, const char *key, const collect_gemm_capset *caps,
                   collect_gemm_row *rows, int *n_rows, int *n_cand, const char **why);
    /* The timer's tallies over the problems it measured. */
    void (*print_stats)(collect_gemm_timer *t, FILE *f);
    void (*close)(collect_gemm_timer *t);
    void *state;
};

int collect_gemm_timer_open(collect_gemm_timer *t, int device, const collect_gemm_opts *o);
int collect_gemm_timer_open_fake(collect_gemm_timer *t, int device, const collect_gemm_opts *o);
int collect_gemm_timer_open_cublaslt(collect_gemm_timer *t, int device, const collect_gemm_opts *o);

/* ---- builds with CUDA (timer_cudnn.c) ---- */
/* Binds GPU `device` (0-based among the visible ones) to this process; the number of visible GPUs; one line
 * naming the bound GPU (host, name, PCI bus id, UUID, SMs, memory, driver and runtime versions, then library). */
int collect_gpu_bind(int device);
int collect_gpu_count(int *n);
int collect_gpu_bus_id(int device, char *buf, size_t size);
void collect_gpu_name(char *buf, size_t size, const char *library);

/* ---- the fake timer's pieces, exposed for its tests ---- */
/* 64-bit FNV-1a of s mixed with a and b (splitmix64 finaliser): the fake timer's source of every number. */
uint64_t collect_fake_hash(const char *s, uint64_t a, uint64_t b);
/* The fake verify backend's single-launch time of kernel (algo, math) of a problem: the collected time times
 * this factor, 0.5 to 1.5 in steps of 0.001 (a hash of the key and the kernel). */
double collect_fake_once_factor(const char *key, int algo, int math);
/* The fake verify backend's time of a kernel's first launch in a shortlist pass with timed warm-ups, unheld: its
 * single-launch time (collect_fake_once_factor) times this factor, 1 to 1.5 in steps of 0.001 (a hash of the key
 * and the kernel), as the host's gaps before an unheld launch. */
double collect_fake_first_factor(const char *key, int algo, int math);
/* The fake verify backend's time of one launch of a GEMM configuration in round `round` of an interleaved pass:
 * the configuration's time times this factor, 0.9 to 1.1 in steps of 0.001 (a hash of the key, the
 * configuration's hash h as verify_fake.c computes it, and the round). */
double collect_fake_pass_factor(const char *key, uint64_t h, int round);

#endif
