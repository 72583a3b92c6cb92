/* The fake timer (timer.h): every number a hash of the problem key and the candidate, so that a collection
 * depends on its key list alone, whichever worker measures which problem and in which order. It skips some
 * problems and rejects some candidates, as a GPU does, so that the loops' every path is taken. */
#include "timer.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/portable.h"

const int collect_conv_classes[COLLECT_CONV_CLASSES] = {DATA_PRECISION_STRICT, DATA_PRECISION_CONVERSION};

uint64_t collect_fake_hash(const char *s, uint64_t a, uint64_t b)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = (h ^ *p) * 1099511628211ull;
    h ^= a * 0x9E3779B97F4A7C15ull + b * 0xC2B2AE3D27D4EB4Full;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    return h ^ (h >> 31);
}

double collect_fake_once_factor(const char *key, int algo, int math)
{
    return 0.5 + (double)(collect_fake_hash(key, 1000 + (uint64_t)algo, 1000 + (uint64_t)math) % 1001) / 1000.0;
}

double collect_fake_first_factor(const char *key, int algo, int math)
{
    return 1.0 + (double)(collect_fake_hash(key, 3000 + (uint64_t)algo, 3000 + (uint64_t)math) % 501) / 1000.0;
}

double collect_fake_pass_factor(const char *key, uint64_t h, int round)
{
    return 0.9 + (double)(collect_fake_hash(key, h, 2000 + (uint64_t)round) % 201) / 1000.0;
}

typedef struct fake_state {
    int device, devices;
    double us;                  /* mean time a problem takes */
    const char *fail, *kill;    /* key substrings that fail or kill the worker */
    const char *trace;          /* a file each problem's key is appended to, in the order measured */
    long problems;
    collect_conv_opts o;
} fake_state;

static int fake_init(fake_state **out, int device)
{
    const char *n = getenv("HEURIST_COLLECT_FAKE"), *us = getenv("HEURIST_COLLECT_FAKE_US");
    fake_state *f = calloc(1, sizeof *f);
    if (!f) return collect_error(COLLECT_ENOMEM, "out of memory");
    f->device = device;
    f->devices = n ? atoi(n) : 1;
    f->us = us ? atof(us) : 0;
    f->fail = getenv("HEURIST_COLLECT_FAKE_FAIL");
    f->kill = getenv("HEURIST_COLLECT_FAKE_KILL");
    f->trace = getenv("HEURIST_COLLECT_FAKE_TRACE");
    if (f->trace && !*f->trace) f->trace = NULL;
    if (f->fail && !*f->fail) f->fail = NULL;
    if (f->kill && !*f->kill) f->kill = NULL;
    if (device < 0 || device >= f->devices) {
        free(f);
        return collect_error(COLLECT_EINVAL, "fake device %d: HEURIST_COLLECT_FAKE lends %s", device, n ? n : "1");
    }
    *out = f;
    return COLLECT_OK;
}

/* Traces the key, sleeps the problem's time, then fails or kills the worker where the environment asks. */
static int fake_problem(fake_state *f, const char *key)
{
    f->problems++;
    if (f->trace) {
        FILE *t = fopen(f->trace, "a");
        int bad = !t || fprintf(t, "%s\n", key) < 0;
        if ((t && fclose(t)) || bad)
            return collect_error(COLLECT_EIO, "HEURIST_COLLECT_FAKE_TRACE %s: cannot append", f->trace);
    }
    if (f->us > 0) {
        double us = f->us * (double)(collect_fake_hash(key, 7, 7) % 2001) / 1000.0;
        struct timespec ts = {(time_t)(us / 1e6), (long)((us - (time_t)(us / 1e6) * 1e6) * 1e3)};
        nanosleep(&ts, NULL);
    }
    if (f->kill && strstr(key, f->kill)) raise(SIGKILL);
    if (f->fail && strstr(key, f->fail)) return collect_error(COLLECT_EIO, "fake device %d: device error injected", f->device);
    return COLLECT_OK;
}

static void fake_describe_line(const fake_state *f, char *buf, size_t size)
{
    snprintf(buf, size, "fake device %d of %d (HEURIST_COLLECT_FAKE): times hashed from the problem key", f->device,
             f->devices);
}

/* ---- convolutions ---- */

static void conv_describe(collect_conv_timer *t, char *buf, size_t size)
{
    fake_describe_line(t->state, buf, size);
}

/* A heuristic's ranking: up to three distinct (algo, math) pairs drawn from the key and a salt. */
static void fake_ranking(const char *key, uint64_t salt, int n_algo, int *algos, int *maths, int *n)
{
    *n = 0;
    for (int i = 0; i < 3; i++) {
        uint64_t h = collect_fake_hash(key, salt, (uint64_t)i);
        int a = (int)(h % (uint64_t)n_algo), mt = (int)((h >> 8) % COLLECT_MATH_COUNT), seen = 0;
        for (int k = 0; k < *n; k++) seen |= algos[k] == a && maths[k] == mt;
        if (seen) continue;
        algos[*n] = a;
        maths[(*n)++] = mt;
    }
}

static int conv_measure(collect_conv_timer *t, const collect_conv *cv, const char *key, collect_conv_measured *m,
                        cli_tally *cand, const char **why)
{
    fake_state *f = t->state;
    int rc = fake_problem(f, key);
    if (rc) return rc;
    m->n_res = m->n_heur = m->n_cls = 0;
    if (collect_fake_hash(key, 0, 0) % 23 == 0) {
        *why = "fake: problem refused";
        return 1;
    }
    int n_algo = collect_algo_count(cv->dir);
    m->heur_math_asked = cv->dtype == COLLECT_DTYPE_FP32 ? COLLECT_MATH_DEFAULT : COLLECT_MATH_TENSOR_OP;
    m->heur_us = (double)(collect_fake_hash(key, 99, 0) % 10000) / 100.0;
    fake_ranking(key, 100, n_algo, m->heur_algo, m->heur_math, &m->n_heur);
    m->n_cls = f->o.classes && cv->dtype == COLLECT_DTYPE_FP32 ? COLLECT_CONV_CLASSES : 0;
    for (int c = 0; c < m->n_cls; c++) {
        fake_ranking(key, 200 + 100 * (uint64_t)c, n_algo, m->cls_algo[c], m->cls_math[c], &m->cls_n[c]);
        m->cls_us[c] = (double)(collect_fake_hash(key, 99, (uint64_t)c + 1) % 10000) / 100.0;
    }
    for (int a = 0; a < n_algo; a++)
        for (int mt = 0; mt < COLLECT_MATH_COUNT; mt++) {
            uint64_t h = collect_fake_hash(key, (uint64_t)a + 1, (uint64_t)mt + 1);
            if (h % 7 == 0) {
                cli_tally_add(cand, "fake: candidate rejected");
                continue;
            }
            double ms = 0.001 + (double)((h >> 16) % 1000000) / 1e4;
            size_t ws = a % 2 ? (size_t)((h >> 40) % 4096) * 1024 : 0;
            m->res[m->n_res++] = (collect_result){a, mt, ms, ws};
        }
    return 0;
}

static void fake_close_conv(collect_conv_timer *t)
{
    free(t->state);
    t->state = NULL;
}

int collect_conv_timer_open_fake(collect_conv_timer *t, int device, const collect_conv_opts *o)
{
    memset(t, 0, sizeof *t);
    fake_state *f;
    int rc = fake_init(&f, device);
    if (rc) return rc;
    f->o = *o;
    *t = (collect_conv_timer){conv_describe, conv_measure, fake_close_conv, f};
    return COLLECT_OK;
}

/* ---- GEMMs ---- */

typedef struct fake_gemm {
    fake_state *f;
    collect_gemm_opts o;
    long timed;
} fake_gemm;

static void gemm_describe(collect_gemm_timer *t, char *buf, size_t size, char *name, size_t name_size, int *sms)
{
    fake_gemm *g = t->state;
    fake_describe_line(g->f, buf, size);
    snprintf(name, name_size, "fake device %d", g->f->device);
    *sms = 132;
}

static long gemm_version(collect_gemm_timer *t)
{
    (void)t;
    return 0;
}

/* Two algorithm ids per data type: id 1 with three tiles and two stage counts, split-K, every reduction scheme
 * and strided batches; id 2 with two tiles, no split-K, a custom option, no strided batches. */
static int gemm_caps(collect_gemm_timer *t, collect_gemm_dtype dtype, collect_gemm_capset *out)
{
    (void)t;
    static const int tiles1[] = {15, 18, 20}, stages1[] = {1, 2}, tiles2[] = {17, 20}, stages2[] = {2};
    memset(out, 0, sizeof *out);
    out->dtype = dtype;
    out->algos = calloc(2, sizeof *out->algos);
    if (!out->algos) return collect_error(COLLECT_ENOMEM, "out of memory");
    out->n_algos = 2;
    const int *tl[2] = {tiles1, tiles2}, *sl[2] = {stages1, stages2}, nt[2] = {3, 2}, ns[2] = {2, 1};
    for (int a = 0; a < 2; a++) {
        collect_gemm_caps *c = &out->algos[a];
        c->algo_id = a + 1;
        c->tiles = malloc((size_t)nt[a] * sizeof *c->tiles);
        c->stages = malloc((size_t)ns[a] * sizeof *c->stages);
        if (!c->tiles || !c->stages) {
            collect_gemm_capset_free(out);
            return collect_error(COLLECT_ENOMEM, "out of memory");
        }
        memcpy(c->tiles, tl[a], (size_t)nt[a] * sizeof *c->tiles);
        memcpy(c->stages, sl[a], (size_t)ns[a] * sizeof *c->stages);
        c->n_tiles = nt[a];
        c->n_stages = ns[a];
        c->splitk_support = a == 0;
        c->reduction_mask = a == 0 ? 7u : 0u;
        c->swizzle_support = 1;
        c->custom_option_max = a;
        c->strided_batch = a == 0;
        for (int k = 0; k < 4; k++) c->min_align[k] = 16;
    }
    return COLLECT_OK;
}

static int gemm_measure(collect_gemm_timer *t, const collect_gemm_shape *s, const char *key,
                        const collect_gemm_capset *caps, collect_gemm_row *rows, int *n_rows, int *n_cand,
                        const char **why)
{
    fake_gemm *g = t->state;
    int rc = fake_problem(g->f, key);
    if (rc) return rc;
    *n_rows = *n_cand = 0;
    if (s->dtype == COLLECT_GEMM_FP8E4M3 &&
        (s->trans_a != 'T' || s->trans_b != 'N' || s->m % 16 || s->n % 16 || s->k % 16)) {
        *why = "fake: cuBLASLt offers no configuration (FP8 runs TN with sizes multiples of 16)";
        return 1;
    }
    if (collect_fake_hash(key, 0, 0) % 29 == 0) {
        *why = "fake: shape refused";
        return 1;
    }
    collect_gemm_rng r;
    collect_gemm_rng_seed(&r, g->o.seed, key);
    int target = g->o.n_enum + 3, attempts = 20 * target, left_out[1024] = {0}, alive = caps->n_algos;
    if (target > COLLECT_GEMM_MAX_CANDIDATES) target = COLLECT_GEMM_MAX_CANDIDATES;
    collect_gemm_draw_exclude(caps, s, left_out, 1, &alive); /* a batch draws from the strided-batch ids */
    for (int a = 0; *n_rows < target && attempts > 0 && alive > 0; a = (a + 1) % caps->n_algos, attempts--) {
        if (a < 1024 && left_out[a]) continue;
        collect_gemm_config c;
        collect_gemm_config_draw(&caps->algos[a], s->k, &r, &c);
        int seen = 0;
        for (int k = 0; k < *n_rows && !seen; k++) seen = collect_gemm_config_equal(&rows[k].cfg, &c);
        if (seen) continue;
        (*n_cand)++;
        char name[512];
        if (collect_gemm_config_name(&c, name, sizeof name)) continue;
        uint64_t h = collect_fake_hash(key, collect_fake_hash(name, 0, 0), 1);
        if (h % 11 == 0) continue; /* rejected, as AlgoCheck rejects some */
        int rank = *n_rows < 3 && *n_rows < g->o.n_heur ? *n_rows : -1;
        rows[(*n_rows)++] = (collect_gemm_row){c, 1.0 + (double)((h >> 16) % 1000000) / 100.0, rank,
                                               (size_t)((h >> 40) % 64) * 4096};
    }
    g->timed += *n_rows;
    return 0;
}

static void gemm_print_stats(collect_gemm_timer *t, FILE *f)
{
    fake_gemm *g = t->state;
    fprintf(f, "fake timer: %ld shapes, %ld configurations timed\n", g->f->problems, g->timed);
}

static void gemm_close(collect_gemm_timer *t)
{
    fake_gemm *g = t->state;
    if (g) free(g->f);
    free(g);
    t->state = NULL;
}

int collect_gemm_timer_open_fake(collect_gemm_timer *t, int device, const collect_gemm_opts *o)
{
    memset(t, 0, sizeof *t);
    fake_gemm *g = calloc(1, sizeof *g);
    if (!g) return collect_error(COLLECT_ENOMEM, "out of memory");
    int rc = fake_init(&g->f, device);
    if (rc) {
        free(g);
        return rc;
    }
    g->o = *o;
    *t = (collect_gemm_timer){gemm_describe, gemm_version, gemm_caps, gemm_measure, gemm_print_stats, gemm_close, g};
    return COLLECT_OK;
}
