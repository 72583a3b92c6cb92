/* collect: heurist-collect verify's loops (verify_cmd.c, verify_gemm_cmd.c) run end to end on the fake backend
 * (verify_backend.h, HEURIST_COLLECT_FAKE) with fake models registered here, and every row of the report is
 * checked against picks, shortlists and times computed independently from the fake collector's numbers:
 * precision classes, the vendor's list, the cheap mode on a collected find-db, --resume, GEMM families. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "collect.h"
#include "data/portable.h"
#include "gemm.h"
#include "helpers/testutil.h"
#include "timer.h"
#include "verify.h"
#include "verify_backend.h"
#include "verify_models.h"

/* ---- fake models ---- */

/* every cuDNN kernel name of every direction: the vocabulary of the fake selection models */
#define N_KERNELS ((8 + 6 + 7) * COLLECT_MATH_COUNT)
static char kernel_names[N_KERNELS][64];

static int fake_n_kernels(void)
{
    return N_KERNELS;
}

static const char *fake_kernel_name(int k)
{
    if (!kernel_names[0][0]) {
        int n = 0;
        for (int d = 0; d < COLLECT_DIR_COUNT; d++)
            for (int a = 0; a < collect_algo_count((collect_dir)d); a++)
                for (int m = 0; m < COLLECT_MATH_COUNT; m++)
                    collect_kernel_name((collect_dir)d, a, m, kernel_names[n++], sizeof kernel_names[0]);
    }
    return k >= 0 && k < N_KERNELS ? kernel_names[k] : NULL;
}

static int fake_select(const char *key, float *scores, uint64_t salt)
{
    collect_conv cv;
    if (collect_conv_from_key(key, strlen(key), &cv)) return -1;
    int best = 0;
    float s[N_KERNELS];
    for (int k = 0; k < N_KERNELS; k++) {
        s[k] = (float)(collect_fake_hash(key, salt, (uint64_t)k) % 100000) / 100000.0f;
        if (s[k] > s[best]) best = k;
    }
    if (scores) memcpy(scores, s, sizeof s);
    return best;
}

static int fake_select_a(const char *key, float *scores)
{
    return fake_select(key, scores, 1001);
}

static int fake_select_b(const char *key, float *scores)
{
    return fake_select(key, scores, 2002);
}

/* fake_b as a runtime exported with the vendor guard: its scores kept to cuDNN's first three candidates, and its
 * pick replacing cuDNN's first only by a margin of 0.2 (data_portable_guard, as heurist export --guard writes it) */
static int fake_select_b_vendor(const char *key, const int *vendor, int n_vendor, float *scores)
{
    float s[N_KERNELS];
    int16_t rank[N_KERNELS];
    if (fake_select(key, s, 2002) < 0) return -1;
    for (int k = 0; k < N_KERNELS; k++) rank[k] = -1;
    for (int r = n_vendor - 1; r >= 0; r--)
        if (vendor[r] >= 0 && vendor[r] < N_KERNELS) rank[vendor[r]] = (int16_t)r;
    int pick = data_portable_guard(s, N_KERNELS, rank, 3, 0.2f);
    if (scores) memcpy(scores, s, sizeof s);
    return pick;
}

static const char *problem_column(int j)
{
    static const char *const cols[6] = {"M", "N", "K", "dtype", "trans_a", "trans_b"};
    return j >= 0 && j < 6 ? cols[j] : NULL;
}

static const char *kernel_column_a(int j)
{
    return j >= 0 && j < COLLECT_GEMM_N_FIELDS ? collect_gemm_kernel_columns[j] : NULL;
}

static const char *kernel_column_v(int j)
{
    return j == COLLECT_GEMM_N_FIELDS ? "vendor_rank" : kernel_column_a(j);
}

static double category(const char *column, const char *value)
{
    (void)column;
    return (double)(unsigned char)value[0];
}

/* a hash of a row of values */
static uint64_t values_hash(const double *v, int n, uint64_t salt)
{
    char buf[1024];
    size_t used = 0;
    for (int j = 0; j < n && used < sizeof buf - 32; j++) used += (size_t)snprintf(buf + used, sizeof buf - used, "%g,", v[j]);
    return collect_fake_hash(buf, salt, 0);
}

/* ranking (n): indices by descending score, ties to the lower index */
static void sort_ranking(const float *scores, int *ranking, int n)
{
    for (int i = 0; i < n; i++) ranking[i] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && scores[ranking[j - 1]] < scores[ranking[j]]; j--) {
            int t = ranking[j];
            ranking[j] = ranking[j - 1];
            ranking[j - 1] = t;
        }
}

static int rank_by(const double *pv, const double *kv, int n, int nk, int vendor, float *scores, int *ranking)
{
    uint64_t hp = values_hash(pv, 6, 5);
    for (int i = 0; i < n; i++) {
        const double *row = kv + (size_t)i * nk;
        scores[i] = (float)(values_hash(row, COLLECT_GEMM_N_FIELDS, hp) % 100000) / 100000.0f;
        if (vendor && row[COLLECT_GEMM_N_FIELDS] < COLLECT_GEMM_UNLISTED) scores[i] += 0.5f;
    }
    sort_ranking(scores, ranking, n);
    return 0;
}

static int rank_a(const double *pv, const double *kv, int n, float *scores, int *ranking)
{
    return rank_by(pv, kv, n, COLLECT_GEMM_N_FIELDS, 0, scores, ranking);
}

static int rank_v(const double *pv, const double *kv, int n, float *scores, int *ranking)
{
    return rank_by(pv, kv, n, COLLECT_GEMM_N_FIELDS + 1, 1, scores, ranking);
}

/* tab_a exported with the vendor guard (heurist export --guard 0.3 --guard-top 2): its scores under
 * data_portable_guard, as an exported table runtime's P_rank_vendor ranks them */
static int rank_a_guarded(const double *pv, const double *kv, int n, const int16_t *vendor_rank, float *scores,
                          int *ranking)
{
    rank_a(pv, kv, n, scores, ranking);
    data_portable_guard(scores, n, vendor_rank, 2, 0.3f);
    sort_ranking(scores, ranking, n);
    return 0;
}

static int n_configs(void)
{
    return 0;
}

const verify_select_model verify_select_models[] = {
    {"fake_a", fake_n_kernels, fake_kernel_name, fake_select_a, NULL},
    {"fake_b", fake_n_kernels, fake_kernel_name, fake_select_b, fake_select_b_vendor},
};
const int verify_n_select_models = 2;
const verify_table_model verify_table_models[] = {
    {"tab_a", {6, COLLECT_GEMM_N_FIELDS, problem_column, kernel_column_a, category}, rank_a, n_configs, rank_a_guarded},
    {"tab_v", {6, COLLECT_GEMM_N_FIELDS + 1, problem_column, kernel_column_v, category}, rank_v, n_configs, NULL},
};
const int verify_n_table_models = 2;

/* A tune model's categories: the kernel columns' ids as their numbers, so that a value names its category back */
static double tune_category(const char *column, const char *value)
{
    return collect_gemm_is_categorical(column) && strncmp(column, "trans", 5) && strcmp(column, "dtype")
               ? strtod(value, NULL)
               : category(column, value);
}

static const char *tune_category_name(const char *column, int value)
{
    static char text[32];
    (void)column;
    if (value < 0) return NULL;
    snprintf(text, sizeof text, "%d", value);
    return text;
}

#define TUNE_CUSTOM 8 /* custom_option's column */
/* tune_t writes, by a hash of the shape, one of its candidates (picked by hash), that candidate with custom_option
 * raised by one (a configuration no row holds, which the fake AlgoCheck may refuse), or one whose algo_id it cannot
 * name (refused): returns the candidate's index, or -1 */
static int tune_t(const double *pv, const double *kv, int n, double *values)
{
    uint64_t hp = values_hash(pv, 6, 7), best_h = 0;
    int best = 0;
    for (int i = 0; i < n; i++) {
        uint64_t h = values_hash(kv + (size_t)i * COLLECT_GEMM_N_FIELDS, COLLECT_GEMM_N_FIELDS, hp) % 100000;
        if (i == 0 || h > best_h) best = i, best_h = h;
    }
    memcpy(values, kv + (size_t)best * COLLECT_GEMM_N_FIELDS, COLLECT_GEMM_N_FIELDS * sizeof *values);
    if (hp % 3 == 0) return best;
    if (hp % 3 == 1) values[TUNE_CUSTOM] += 1;
    else values[0] = -1;
    return -1;
}

#define TUNE_MARGIN 0.25f
/* tune_g's score of a configuration for a shape (as a tuner's log-probability): a hash of both, -INFINITY for an
 * algo_id it never writes */
static float tune_score(const double *pv, const double *values)
{
    if (values[0] < 0) return -INFINITY;
    return (float)(values_hash(values, COLLECT_GEMM_N_FIELDS, values_hash(pv, 6, 9)) % 100000) / 100000.0f;
}

/* tune_t exported with the vendor guard (heurist export --guard 0.25), as P_tune_vendor decides: its configuration
 * stands only where its score beats the first pick's, a finite one, by TUNE_MARGIN; otherwise it writes the first
 * pick. Returns the index of the candidate equal to what it writes, or -1. */
static int tune_g_vendor(const double *pv, const double *kv, int n, const double *first, double *values)
{
    const size_t bytes = COLLECT_GEMM_N_FIELDS * sizeof *values;
    int at = tune_t(pv, kv, n, values);
    if (!first || !memcmp(values, first, bytes)) return at;
    float sf = tune_score(pv, first);
    if (isfinite(sf) && tune_score(pv, values) - sf >= TUNE_MARGIN) return at;
    memcpy(values, first, bytes);
    for (at = 0; at < n && memcmp(kv + (size_t)at * COLLECT_GEMM_N_FIELDS, first, bytes); at++) continue;
    return at < n ? at : -1;
}

const verify_tune_model verify_tune_models[] = {
    {"tune_t", {6, COLLECT_GEMM_N_FIELDS, problem_column, kernel_column_a, tune_category}, tune_category_name, tune_t,
     NULL, 0},
    {"tune_g", {6, COLLECT_GEMM_N_FIELDS, problem_column, kernel_column_a, tune_category}, tune_category_name, tune_t,
     tune_g_vendor, TUNE_MARGIN},
};
const int verify_n_tune_models = 2;

/* ---- running the commands ---- */

/* Runs cmd with the words of args (after "heurist-collect verify"), its stdout discarded; its status. */
/* Runs the command with args split at spaces, its output written to log. */
static int run_to(int (*cmd)(int, char **), const char *args, const char *log)
{
    char *copy = strdup(args), *argv[64] = {"heurist-collect", "verify"};
    int argc = 2;
    for (char *w = strtok(copy, " "); w && argc < 63; w = strtok(NULL, " ")) argv[argc++] = w;
    argv[argc] = NULL;
    fflush(stdout);
    int saved = dup(1), null = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(null, 1);
    int rc = cmd(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(null);
    free(copy);
    return rc;
}

static int run(int (*cmd)(int, char **), const char *args)
{
    return run_to(cmd, args, "/dev/null");
}

/* The rows of a report as fields (tab-separated; '#' lines and the header left out). */
typedef struct table_rows {
    int n;
    char *text;
    char *f[256][32];
    int nf[256];
} table_rows;

/* A file's whole text, malloc'd (*len, when given, its length). */
static char *slurp(const char *path, size_t *len)
{
    char *text = test_file_read(path, len);
    cr_assert(text, "%s", path);
    return text;
}

static void rows_read(const char *path, table_rows *t)
{
    t->text = slurp(path, NULL);
    t->n = 0;
    for (char *line = strtok(t->text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#' || strncmp(line, "key\t", 4) == 0) continue;
        cr_assert(t->n < 256);
        int n = 0;
        for (char *c = line;;) {
            t->f[t->n][n++] = c;
            char *tab = strchr(c, '\t');
            if (!tab || n == 32) break;
            *tab = '\0';
            c = tab + 1;
        }
        t->nf[t->n++] = n;
    }
}

static double num(const char *s)
{
    return strtod(s, NULL);
}

static void setup(void)
{
    setenv("HEURIST_COLLECT_FAKE", "1", 1);
}

/* ---- convolutions, computed again from the fake collector's numbers ---- */

typedef struct conv_expect {
    int verified;                /* the problem has rows */
    char model[2][64], heur[64];
    double t_model[2], t_heur, t_best, t_topk[2], t_vtopk;
    double by_topk[2], by_vtopk;  /* the shortlists' kernels' times by one launch, summed */
    int topk_timings[2];
    int find_algos;              /* the fake cudnnFind's kernels: every collected candidate */
    double find_kernel_ms;       /* their collected times, summed */
} conv_expect;

static double res_ms(const collect_result *res, int n, int a, int m)
{
    for (int r = 0; r < n; r++)
        if (res[r].algo == a && res[r].math == m) return res[r].ms;
    return NAN;
}

/* A shortlist's pick as verify makes it: the fastest by the shortlist's timing (the collected time, or with
 * `once` that time times the fake backend's single-launch factor, as the fake times a batch too), its collected
 * time kept in *t and *t_by; *sum adds the kernel's time by one launch. */
static void shortlist_consider(const char *key, const collect_result *r, int once, double *t, double *t_by, double *sum)
{
    double by = once ? r->ms * collect_fake_once_factor(key, r->algo, r->math) : r->ms;
    *sum += r->ms * collect_fake_once_factor(key, r->algo, r->math);
    if (!(by >= *t_by)) {
        *t_by = by;
        *t = r->ms;
    }
}

static const collect_result *res_of(const collect_result *res, int n, int a, int m)
{
    for (int r = 0; r < n; r++)
        if (res[r].algo == a && res[r].math == m) return &res[r];
    return NULL;
}

static void conv_expected(const char *key, int cls, int k, int once, conv_expect *e)
{
    memset(e, 0, sizeof *e);
    collect_conv cv;
    cr_assert_eq(collect_conv_from_key(key, strlen(key), &cv), 0);
    collect_conv_timer t;
    collect_conv_opts o = {.repeats = 1, .classes = 1};
    cr_assert_eq(collect_conv_timer_open_fake(&t, 0, &o), 0);
    collect_conv_measured m;
    cli_tally cand = {0};
    const char *why;
    int rc = t.measure(&t, &cv, key, &m, &cand, &why);
    t.close(&t);
    if (rc) return;
    e->find_algos = m.n_res;
    for (int r = 0; r < m.n_res; r++) e->find_kernel_ms += m.res[r].ms;
    /* the allowed candidates */
    collect_result res[64];
    int n = 0;
    for (int r = 0; r < m.n_res; r++)
        if (collect_kernel_allowed(cls, cv.dtype, cv.dir, m.res[r].algo, m.res[r].math)) res[n++] = m.res[r];
    if (n == 0) return;
    e->t_best = INFINITY;
    for (int r = 0; r < n; r++) e->t_best = fmin(e->t_best, res[r].ms);
    /* the heuristic's list under the class's math type, as its user runs it */
    int hmath = collect_heuristic_math(cls, cv.dtype), *la = m.heur_algo, *lm = m.heur_math, ln = m.n_heur;
    for (int c = 0; c < m.n_cls; c++)
        if (hmath != m.heur_math_asked && hmath == collect_precision_math(collect_conv_classes[c])) {
            la = m.cls_algo[c];
            lm = m.cls_math[c];
            ln = m.cls_n[c];
        }
    int va[64], vm[64], nv = collect_heuristic_kernels(cls, cv.dtype, cv.dir, hmath, la, lm, ln, va, vm);
    int vt[64], n_vt = 0;
    for (int i = 0; i < nv; i++) {
        double ms = res_ms(res, n, va[i], vm[i]);
        if (isnan(ms)) continue;
        if (e->t_heur == 0) {
            e->t_heur = ms;
            collect_kernel_name(cv.dir, va[i], vm[i], e->heur, sizeof e->heur);
        }
        int dup = 0;
        for (int j = 0; j < n_vt; j++) dup |= va[vt[j]] == va[i];
        if (!dup) vt[n_vt++] = i;
    }
    if (e->t_heur == 0) return;
    const collect_result *heur = NULL;
    for (int i = 0; i < nv && !heur; i++) heur = res_of(res, n, va[i], vm[i]);
    double by = INFINITY;
    e->t_vtopk = INFINITY;
    for (int j = 0; j < n_vt && j < k; j++)
        shortlist_consider(key, res_of(res, n, va[vt[j]], vm[vt[j]]), once, &e->t_vtopk, &by, &e->by_vtopk);
    for (int mi = 0; mi < 2; mi++) {
        float scores[N_KERNELS], s[64];
        int vk[64];
        /* cuDNN's list in the model's kernel indices, for a runtime with the vendor guard */
        for (int i = 0; i < nv; i++) {
            char name[64];
            collect_kernel_name(cv.dir, va[i], vm[i], name, sizeof name);
            vk[i] = 0;
            while (strcmp(fake_kernel_name(vk[i]), name)) vk[i]++;
        }
        if (verify_select_models[mi].select_key_vendor) verify_select_models[mi].select_key_vendor(key, vk, nv, scores);
        else verify_select_models[mi].select_key(key, scores);
        for (int r = 0; r < n; r++) {
            char name[64];
            collect_kernel_name(cv.dir, res[r].algo, res[r].math, name, sizeof name);
            int kk = 0;
            while (strcmp(fake_kernel_name(kk), name)) kk++;
            s[r] = scores[kk];
        }
        /* the ranking of the candidates with a finite score, best first; the shortlist keeps one kernel per
         * algorithm */
        int order[64], used[64] = {0}, n_order = 0;
        for (int i = 0; i < n; i++) {
            int b = -1;
            for (int r = 0; r < n; r++)
                if (!used[r] && isfinite(s[r]) && (b < 0 || s[r] > s[b])) b = r;
            if (b < 0) break;
            used[b] = 1;
            order[n_order++] = b;
        }
        cr_assert_gt(n_order, 0, "%s: the guard keeps cuDNN's pick", key);
        collect_kernel_name(cv.dir, res[order[0]].algo, res[order[0]].math, e->model[mi], sizeof e->model[mi]);
        e->t_model[mi] = res[order[0]].ms;
        int algos[64], taken = 0, has_heur = 0;
        e->t_topk[mi] = by = INFINITY;
        for (int i = 0; i < n_order && taken < k; i++) {
            int r = order[i], dup = 0;
            for (int j = 0; j < taken; j++) dup |= algos[j] == res[r].algo;
            if (dup) continue;
            algos[taken++] = res[r].algo;
            char name[64];
            collect_kernel_name(cv.dir, res[r].algo, res[r].math, name, sizeof name);
            has_heur |= strcmp(name, e->heur) == 0;
            shortlist_consider(key, &res[r], once, &e->t_topk[mi], &by, &e->by_topk[mi]);
        }
        e->topk_timings[mi] = taken + !has_heur;
        if (!has_heur) shortlist_consider(key, heur, once, &e->t_topk[mi], &by, &e->by_topk[mi]);
    }
    e->verified = 1;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* columns of the conv report */
enum { C_KEY, C_MODEL, C_HEUR, C_BEST, C_TM, C_TH, C_TB, C_SPEEDUP, C_EFF, C_DECIDE, C_HEUR_US, C_FIND, C_NAME,
       C_SOURCE, C_PREC, C_K, C_TIMINGS, C_TOPK_PICK, C_TTOPK, C_TOPK_MS, C_VPICK, C_TVTOPK, C_VTOPK_MS,
       C_SHORTLIST_TIMING, C_FIND_ALGOS, C_FIND_KERNEL, C_COUNT };

/* How a report's shortlists were timed (--shortlist-timing) */
enum { TIMING_CAREFUL, TIMING_ONCE, TIMING_BATCH };
static const char *const timing_names[] = {"careful", "once", "batch"};

/* The report's rows against the problems computed again, its shortlists timed as `timing` says. A batch's cost
 * is the fake's wall time of its pass: its kernels' times by one launch, twice (a warm-up, a timed launch). */
static void check_conv_report(const char *path, const char *list, int n_keys, int cls, int k, int timing)
{
    int once = timing != TIMING_CAREFUL;
    collect_problem *p;
    int np;
    cr_assert_eq(collect_problems_read(list, "-", &p, &np), 0);
    table_rows t;
    rows_read(path, &t);
    int row = 0, verified = 0;
    for (int i = 0; i < n_keys && i < np; i++) {
        conv_expect e;
        conv_expected(p[i].key, cls, k ? k : 1, once, &e);
        if (!e.verified) continue;
        verified++;
        collect_conv cv;
        collect_conv_from_key(p[i].key, strlen(p[i].key), &cv);
        for (int mi = 0; mi < 2; mi++, row++) {
            cr_assert(row < t.n, "%s: no row for model %d", p[i].key, mi);
            char **f = t.f[row];
            cr_assert_eq(t.nf[row], C_COUNT);
            cr_assert_str_eq(f[C_KEY], p[i].key);
            cr_assert_str_eq(f[C_NAME], verify_select_models[mi].name);
            cr_assert_str_eq(f[C_SOURCE], p[i].source);
            cr_assert_str_eq(f[C_PREC], cv.dtype == COLLECT_DTYPE_FP32 ? data_portable_precision_name(cls) : "-");
            cr_assert_str_eq(f[C_MODEL], e.model[mi], "%s, model %d", p[i].key, mi);
            cr_assert_str_eq(f[C_HEUR], e.heur, "%s", p[i].key);
            cr_assert_float_eq(num(f[C_TM]), e.t_model[mi], 1e-5 * e.t_model[mi]);
            cr_assert_float_eq(num(f[C_TH]), e.t_heur, 1e-5 * e.t_heur);
            cr_assert_float_eq(num(f[C_TB]), e.t_best, 1e-5 * e.t_best, "%s", p[i].key);
            if (cls == DATA_PRECISION_STRICT && cv.dtype == COLLECT_DTYPE_FP32)
                for (int c = C_MODEL; c <= C_BEST; c++) cr_assert(ends_with(f[c], ".fma"), "%s: %s", p[i].key, f[c]);
            /* cudnnFind's kernels and their times beside its wall time, which adds the fake's host work a kernel */
            if (strcmp(f[C_FIND], "-")) {
                cr_assert_eq(atoi(f[C_FIND_ALGOS]), e.find_algos, "%s", p[i].key);
                cr_assert_float_eq(num(f[C_FIND_KERNEL]), e.find_kernel_ms, 1e-3 * e.find_kernel_ms, "%s", p[i].key);
                cr_assert_float_eq(num(f[C_FIND]), e.find_kernel_ms + VERIFY_FAKE_FIND_HOST_MS * e.find_algos,
                                   1e-3 + 1e-3 * e.find_kernel_ms, "%s", p[i].key);
            } else {
                cr_assert_str_eq(f[C_FIND_ALGOS], "-");
                cr_assert_str_eq(f[C_FIND_KERNEL], "-");
            }
            if (!k) {
                cr_assert_str_eq(f[C_K], "-");
                cr_assert_str_eq(f[C_TTOPK], "-");
                cr_assert_str_eq(f[C_SHORTLIST_TIMING], "-");
                continue;
            }
            cr_assert_str_eq(f[C_SHORTLIST_TIMING], timing_names[timing]);
            cr_assert_eq(atoi(f[C_K]), k);
            cr_assert_eq(atoi(f[C_TIMINGS]), e.topk_timings[mi], "%s, model %d", p[i].key, mi);
            cr_assert_float_eq(num(f[C_TTOPK]), e.t_topk[mi], 1e-5 * e.t_topk[mi], "%s, model %d", p[i].key, mi);
            cr_assert_float_eq(num(f[C_TVTOPK]), e.t_vtopk, 1e-5 * e.t_vtopk, "%s", p[i].key);
            cr_assert(num(f[C_TOPK_MS]) >= 0 && num(f[C_VTOPK_MS]) >= 0);
            if (timing == TIMING_BATCH) {
                cr_assert_float_eq(num(f[C_TOPK_MS]), 2 * e.by_topk[mi], 1e-3, "%s, model %d", p[i].key, mi);
                cr_assert_float_eq(num(f[C_VTOPK_MS]), 2 * e.by_vtopk, 1e-3, "%s", p[i].key);
            }
            if (cls == DATA_PRECISION_STRICT && cv.dtype == COLLECT_DTYPE_FP32)
                cr_assert(ends_with(f[C_TOPK_PICK], ".fma") && ends_with(f[C_VPICK], ".fma"));
        }
    }
    cr_assert_eq(row, t.n, "%d rows expected, %d in the report", row, t.n);
    cr_assert(verified >= n_keys / 2, "only %d of %d problems verified", verified, n_keys);
    free(t.text);
    collect_problems_free(p, np);
}

static const char *networks(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/h100/networks/networks.tsv", HEURIST_DATASETS_DIR);
    return path;
}

/* The networks list's problems and the fake collector that times them, as a fake collection would. */
typedef struct fake_pool {
    collect_problem *p;
    int np;
    collect_conv_timer t;
} fake_pool;

static void fake_pool_open(fake_pool *f)
{
    cr_assert_eq(collect_problems_read(networks(), "-", &f->p, &f->np), 0);
    collect_conv_opts o = {.repeats = 1};
    cr_assert_eq(collect_conv_timer_open_fake(&f->t, 0, &o), 0);
}

/* Problem i measured by the fake collector: 0 with *cv and *m set, nonzero when its key does not parse or the
 * fake skips it. */
static int fake_pool_measure(fake_pool *f, int i, collect_conv *cv, collect_conv_measured *m)
{
    cli_tally cand = {0};
    const char *why;
    if (collect_conv_from_key(f->p[i].key, strlen(f->p[i].key), cv)) return -1;
    return f->t.measure(&f->t, cv, f->p[i].key, m, &cand, &why);
}

static void fake_pool_close(fake_pool *f)
{
    f->t.close(&f->t);
    collect_problems_free(f->p, f->np);
}

Test(collect_verify_run, conv_rows_follow_the_fake_numbers, .init = setup)
{
    char *out = test_tmppath(".tsv"), args[8192];
    static const int classes[3] = {DATA_PRECISION_STRICT, DATA_PRECISION_TF32, DATA_PRECISION_CONVERSION};
    for (int c = 0; c < 3; c++) {
        snprintf(args, sizeof args, "--problems %s --limit 27 --out %s --top-k 2 --find-cost --precision %s "
                                    "--noise-ratio 1.02", networks(), out, data_portable_precision_name(classes[c]));
        cr_assert_eq(run(cmd_verify, args), 0, "%s", args);
        check_conv_report(out, networks(), 27, classes[c], 2, 0);
        collect_report r;
        cr_assert_eq(collect_report_read(out, &r), 0, "%s", collect_last_error());
        for (int i = 0; i < r.n; i++) cr_assert(r.rows[i].v.find_ms > 0 && r.rows[i].v.find_algos > 0);
        collect_report_free(&r);
    }
    /* no shortlist, the default class */
    snprintf(args, sizeof args, "--problems %s --limit 18 --out %s", networks(), out);
    cr_assert_eq(run(cmd_verify, args), 0);
    check_conv_report(out, networks(), 18, DATA_PRECISION_TF32, 0, 0);
    remove(out);
    free(out);
}

/* --shortlist-timing once: each shortlist's pick is the fastest by one launch (the fake backend's factor on the
 * collected time), its re-timed time the careful one; on some problems that pick is not the careful pick. */
Test(collect_verify_run, conv_shortlists_timed_once, .init = setup)
{
    char *once = test_tmppath(".tsv"), *careful = test_tmppath(".tsv"), args[8192];
    snprintf(args, sizeof args, "--problems %s --limit 18 --out %s --top-k 3 --shortlist-timing once", networks(), once);
    cr_assert_eq(run(cmd_verify, args), 0, "%s", args);
    check_conv_report(once, networks(), 18, DATA_PRECISION_TF32, 3, TIMING_ONCE);
    snprintf(args, sizeof args, "--problems %s --limit 18 --out %s --top-k 3", networks(), careful);
    cr_assert_eq(run(cmd_verify, args), 0, "%s", args);
    check_conv_report(careful, networks(), 18, DATA_PRECISION_TF32, 3, TIMING_CAREFUL);
    table_rows a, b;
    rows_read(once, &a);
    rows_read(careful, &b);
    cr_assert_eq(a.n, b.n);
    int differ = 0;
    for (int r = 0; r < a.n; r++) differ += strcmp(a.f[r][C_TOPK_PICK], b.f[r][C_TOPK_PICK]) != 0;
    cr_assert_gt(differ, 0, "one launch picked as the careful timing on every problem");
    free(a.text);
    free(b.text);
    remove(once);
    remove(careful);
    free(once);
    free(careful);
}

/* --shortlist-timing batch: each shortlist one pass of the backend's time_list, its pick the fastest of the pass
 * (the fake backend's one-launch factor), its cost the pass's wall time; a kernel the backend refuses inside a
 * pass (a find-db entry the fake collection rejected) is never the pick. */
Test(collect_verify_run, conv_shortlists_timed_in_one_pass, .init = setup)
{
    char *out = test_tmppath(".tsv"), *fdb = test_tmppath(".fdb.txt"), args[8192];
    snprintf(args, sizeof args, "--problems %s --limit 12 --out %s --top-k 3 --shortlist-timing batch --shortlist-warmup --find-cost",
             networks(), out);
    cr_assert_eq(run(cmd_verify, args), 0, "%s", args);
    check_conv_report(out, networks(), 12, DATA_PRECISION_TF32, 3, TIMING_BATCH);
    collect_report r;
    cr_assert_eq(collect_report_read(out, &r), 0, "%s", collect_last_error());
    for (int i = 0; i < r.n; i++) cr_assert(r.rows[i].v.find_ms > 0);
    collect_report_free(&r);

    /* a find-db holding every kernel of each problem's direction, those the fake rejects too */
    fake_pool fp;
    fake_pool_open(&fp);
    collect_problem *p = fp.p;
    FILE *f = fopen(fdb, "w");
    char rejected[24][COLLECT_DIR_COUNT * 8 * COLLECT_MATH_COUNT][64];
    int n_rejected[24] = {0};
    for (int i = 0; i < 24; i++) {
        collect_conv cv;
        collect_conv_measured m;
        if (fake_pool_measure(&fp, i, &cv, &m) || m.n_res == 0) continue;
        collect_result all[8 * COLLECT_MATH_COUNT];
        int n = 0;
        for (int a = 0; a < collect_algo_count(cv.dir); a++)
            for (int mt = 0; mt < COLLECT_MATH_COUNT; mt++) {
                const collect_result *got = res_of(m.res, m.n_res, a, mt);
                all[n++] = got ? *got : (collect_result){a, mt, 0.5, 0};
                if (!got) collect_kernel_name(cv.dir, a, mt, rejected[i][n_rejected[i]++], 64);
            }
        cr_assert_eq(collect_fdb_write_line(f, p[i].key, cv.dir, all, n), 0);
    }
    fclose(f);
    snprintf(args, sizeof args,
             "--problems %s --limit 24 --out %s --top-k 3 --shortlist-timing batch --shortlist-warmup --fdb %s",
             networks(), out, fdb);
    char *log = test_tmppath(".log");
    cr_assert_eq(run_to(cmd_verify, args, log), 0, "%s", args);
    table_rows rows;
    rows_read(out, &rows);
    /* without --find-cost too, every problem's shortlist kernels ran once untimed before the passes timed them */
    char *text = slurp(log, NULL), want[96];
    snprintf(want, sizeof want, "their kernels launched once untimed first on %d problems\n", rows.n / verify_n_select_models);
    cr_assert(strstr(text, want), "'%s' not in:\n%s", want, text);
    free(text);
    remove(log);
    free(log);
    int refused_first = 0;
    for (int row = 0; row < rows.n; row++) {
        char **fr = rows.f[row];
        int i = 0;
        while (i < 24 && strcmp(p[i].key, fr[C_KEY])) i++;
        cr_assert(i < 24);
        int model_refused = 0;
        for (int j = 0; j < n_rejected[i]; j++) {
            cr_assert_str_neq(fr[C_TOPK_PICK], rejected[i][j], "%s: a refused kernel picked", fr[C_KEY]);
            cr_assert_str_neq(fr[C_VPICK], rejected[i][j], "%s: a refused kernel picked", fr[C_KEY]);
            model_refused |= strcmp(fr[C_MODEL], rejected[i][j]) == 0;
        }
        /* the model's first kernel is in its shortlist: refused, the pass kept another */
        refused_first += model_refused;
        cr_assert_str_eq(fr[C_SHORTLIST_TIMING], "batch");
    }
    cr_assert_gt(refused_first, 0, "no shortlist held a refused kernel");
    free(rows.text);
    fake_pool_close(&fp);
    remove(out);
    remove(fdb);
    free(out);
    free(fdb);
}

/* A pass of the fake backend's time_list over a problem's first collected kernels and one it rejects, as each of
 * the pass's options launches them: the times and the cost follow the fake's first and held launches
 * (verify_backend.h), computed here from the fake collection's numbers. */
Test(collect_verify_run, conv_pass_retime_and_no_warmup, .init = setup)
{
    fake_pool fp;
    fake_pool_open(&fp);
    collect_problem *p = fp.p;
    verify_conv_backend be;
    verify_conv_opts bo = {1, 0.2, (size_t)1 << 40};
    cr_assert_eq(verify_conv_backend_open_fake(&be, &bo), 0);
    int checked = 0, spared = 0;
    for (int i = 0; i < fp.np && checked < 8; i++) {
        collect_conv cv;
        collect_conv_measured m;
        const char *why;
        if (fake_pool_measure(&fp, i, &cv, &m) || m.n_res < 3) continue;
        cr_assert_eq(be.problem(&be, &cv, p[i].key, &why), 0);
        /* the first four collected kernels and one the fake rejects */
        int a[5], mt[5], n = 0;
        double held[5], first[5];
        for (int r = 0; r < m.n_res && n < 4; r++, n++) {
            a[n] = m.res[r].algo;
            mt[n] = m.res[r].math;
            held[n] = m.res[r].ms * collect_fake_once_factor(p[i].key, a[n], mt[n]);
            first[n] = held[n] * collect_fake_first_factor(p[i].key, a[n], mt[n]);
        }
        for (int x = 0; x < collect_algo_count(cv.dir) * COLLECT_MATH_COUNT && n < 5; x++)
            if (!res_of(m.res, m.n_res, x / COLLECT_MATH_COUNT, x % COLLECT_MATH_COUNT)) {
                a[n] = x / COLLECT_MATH_COUNT;
                mt[n] = x % COLLECT_MATH_COUNT;
                held[n] = first[n] = INFINITY;
                n++;
            }
        double ms[5], sum_held = 0, sum_first = 0, fastest = INFINITY;
        int n_ok = 0;
        for (int k = 0; k < n; k++)
            if (isfinite(held[k])) {
                sum_held += held[k];
                sum_first += first[k];
                fastest = fmin(fastest, first[k]);
                n_ok++;
            }
        verify_list_timing lt;
        /* the default: untimed warm-ups, every kernel launched again */
        verify_list_opts o = {1, 0};
        cr_assert_eq(be.time_list(&be, a, mt, n, &o, ms, &lt), 0);
        for (int k = 0; k < n; k++) cr_assert(isfinite(held[k]) ? ms[k] == held[k] : isinf(ms[k]), "%s", p[i].key);
        cr_assert_float_eq(lt.wall_ms, 2 * sum_held, 1e-9 * sum_held);
        cr_assert_eq(lt.launches, 2 * n_ok);
        /* no warm-up: one launch each, the same times at half the cost */
        o = (verify_list_opts){0, 0};
        cr_assert_eq(be.time_list(&be, a, mt, n, &o, ms, &lt), 0);
        for (int k = 0; k < n; k++) cr_assert(isfinite(held[k]) ? ms[k] == held[k] : isinf(ms[k]));
        cr_assert_float_eq(lt.wall_ms, sum_held, 1e-9 * sum_held);
        cr_assert_eq(lt.launches, n_ok);
        /* timed warm-ups, each factor: the kernels within it of the fastest warm-up launched again when two or more
         * are, the others keeping their warm-up's time */
        static const double within[4] = {1.0, 1.2, 1.5, 1e3};
        for (int w = 0; w < 4; w++) {
            o = (verify_list_opts){1, within[w]};
            cr_assert_eq(be.time_list(&be, a, mt, n, &o, ms, &lt), 0);
            int again = 0;
            for (int k = 0; k < n; k++) again += isfinite(first[k]) && first[k] <= within[w] * fastest;
            if (again < 2) again = 0;
            double cost = sum_first;
            for (int k = 0; k < n; k++) {
                int launched = again && isfinite(first[k]) && first[k] <= within[w] * fastest;
                cost += launched ? held[k] : 0;
                double want = !isfinite(first[k]) ? INFINITY : launched ? held[k] : first[k];
                cr_assert(ms[k] == want, "%s, x%g, kernel %d: %g, expected %g", p[i].key, within[w], k, ms[k], want);
            }
            cr_assert_float_eq(lt.wall_ms, cost, 1e-9 * cost);
            cr_assert_eq(lt.launches, n_ok + again);
            if (w == 3) cr_assert_eq(again, n_ok, "a factor of 1000 launches every kernel again");
            spared += w == 2 && again < n_ok;
        }
        be.problem_end(&be);
        checked++;
    }
    cr_assert_eq(checked, 8);
    cr_assert_gt(spared, 0, "x1.5 launched every kernel of every problem again");
    be.close(&be);
    fake_pool_close(&fp);
}

/* verify's batch pass by default (and with --shortlist-no-warmup, its name) launches each kernel once and picks as
 * the pass with --shortlist-warmup does at half its cost; with --shortlist-retime-within 1 (no kernel launched
 * again unless two warm-ups tie) each pass costs less than the warm-up pass's; the report names the pass;
 * malformed or misplaced values of the shortlist timing options are refused. */
Test(collect_verify_run, conv_pass_options, .init = setup)
{
    char *out = test_tmppath(".tsv"), *base = test_tmppath(".tsv"), args[8192];
    snprintf(args, sizeof args, "--problems %s --limit 12 --out %s --top-k 3 --shortlist-timing batch --shortlist-warmup",
             networks(), base);
    cr_assert_eq(run(cmd_verify, args), 0, "%s", args);
    table_rows b;
    rows_read(base, &b);
    cr_assert_gt(b.n, 8);
    for (int row = 0; row < b.n; row++) cr_assert_str_eq(b.f[row][C_SHORTLIST_TIMING], "batch");
    static const char *const variants[3] = {"", "--shortlist-no-warmup", "--shortlist-retime-within 1"};
    static const char *const names[3] = {"batch-no-warmup", "batch-no-warmup", "batch-retime-1"};
    for (int v = 0; v < 3; v++) {
        snprintf(args, sizeof args, "--problems %s --limit 12 --out %s --top-k 3 --shortlist-timing batch %s", networks(),
                 out, variants[v]);
        cr_assert_eq(run(cmd_verify, args), 0, "%s", args);
        table_rows r;
        rows_read(out, &r);
        cr_assert_eq(r.n, b.n);
        for (int row = 0; row < r.n; row++) {
            char **f = r.f[row], **g = b.f[row];
            cr_assert_str_eq(f[C_KEY], g[C_KEY]);
            cr_assert_str_eq(f[C_SHORTLIST_TIMING], names[v]);
            for (int c = C_TOPK_MS; c <= C_VTOPK_MS; c += C_VTOPK_MS - C_TOPK_MS) {
                if (v < 2) cr_assert_float_eq(num(f[c]), num(g[c]) / 2, 2e-3, "%s", f[C_KEY]);
                else cr_assert_lt(num(f[c]), num(g[c]), "%s", f[C_KEY]);
            }
            if (v < 2) {
                cr_assert_str_eq(f[C_TOPK_PICK], g[C_TOPK_PICK]);
                cr_assert_str_eq(f[C_VPICK], g[C_VPICK]);
            }
        }
        free(r.text);
    }
    free(b.text);
    static const char *const bad[] = {"--shortlist-timing twice",
                                      "--shortlist-timing batched",
                                      "--shortlist-timing batch --shortlist-retime-within 0.5",
                                      "--shortlist-timing batch --shortlist-retime-within 1.5x",
                                      "--shortlist-timing batch --shortlist-retime-within -1",
                                      "--shortlist-timing batch --shortlist-retime-within",
                                      "--shortlist-timing once --shortlist-retime-within 1.5",
                                      "--shortlist-no-warmup",
                                      "--shortlist-timing careful --shortlist-no-warmup",
                                      "--shortlist-timing batch --shortlist-no-warmup --shortlist-retime-within 1.5",
                                      "--shortlist-warmup",
                                      "--shortlist-timing once --shortlist-warmup",
                                      "--shortlist-timing batch --shortlist-warmup --shortlist-no-warmup"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(args, sizeof args, "--problems %s --limit 1 --out %s --top-k 3 %s", networks(), out, bad[i]);
        cr_assert_eq(run(cmd_verify, args), 2, "%s", bad[i]);
    }
    remove(out);
    remove(base);
    free(out);
    free(base);
}

/* The report without its wall-clock columns (decision, shortlist timing) and '#' lines. */
static char *stable_columns(const char *path, int gemm)
{
    table_rows t;
    rows_read(path, &t);
    size_t cap = 1 << 20, used = 0;
    char *s = malloc(cap);
    s[0] = '\0';
    for (int i = 0; i < t.n; i++)
        for (int j = 0; j < t.nf[i]; j++) {
            int wall = j == C_DECIDE || (gemm ? (j == 11 || j == 23 || j == 26) : (j == C_TOPK_MS || j == C_VTOPK_MS));
            used += (size_t)snprintf(s + used, cap - used, "%s%c", wall ? "." : t.f[i][j], j + 1 < t.nf[i] ? '\t' : '\n');
        }
    free(t.text);
    return s;
}

static int count_lines(const char *path, const char *prefix)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) n += strncmp(line, prefix, strlen(prefix)) == 0;
    fclose(f);
    return n;
}

Test(collect_verify_run, conv_resume_and_the_collected_find_db, .init = setup)
{
    char *whole = test_tmppath(".tsv"), *parts = test_tmppath(".tsv"), *cheap = test_tmppath(".tsv");
    char *fdb = test_tmppath(".fdb.txt"), args[8192];
    snprintf(args, sizeof args, "--problems %s --limit 18 --out %s --top-k 1", networks(), whole);
    cr_assert_eq(run(cmd_verify, args), 0);
    /* in two runs: the second continues after the first's problems, its summary replaced */
    snprintf(args, sizeof args, "--problems %s --limit 7 --out %s --top-k 1 --resume", networks(), parts);
    cr_assert_eq(run(cmd_verify, args), 0);
    cr_assert_eq(count_lines(parts, "# problems:"), 2); /* one per model */
    snprintf(args, sizeof args, "--problems %s --limit 18 --out %s --top-k 1 --resume", networks(), parts);
    cr_assert_eq(run(cmd_verify, args), 0);
    cr_assert_eq(count_lines(parts, "# problems:"), 2);
    char *a = stable_columns(whole, 0), *b = stable_columns(parts, 0);
    cr_assert_str_eq(a, b);
    free(b);
    /* another header: refused */
    FILE *f = fopen(parts, "w");
    fputs("key\tmodel\n", f);
    fclose(f);
    cr_assert_eq(run(cmd_verify, args), 1);

    /* the cheap mode on the fake collection of the same keys: the same picks and times */
    fake_pool fp;
    fake_pool_open(&fp);
    f = fopen(fdb, "w");
    for (int i = 0; i < 18; i++) {
        collect_conv cv;
        collect_conv_measured m;
        if (fake_pool_measure(&fp, i, &cv, &m) == 0 && m.n_res > 0)
            cr_assert_eq(collect_fdb_write_line(f, fp.p[i].key, cv.dir, m.res, m.n_res), 0);
    }
    fclose(f);
    fake_pool_close(&fp);
    snprintf(args, sizeof args, "--problems %s --limit 18 --out %s --top-k 1 --fdb %s --fdb-top 2", networks(), cheap, fdb);
    cr_assert_eq(run(cmd_verify, args), 0);
    b = stable_columns(cheap, 0);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
    const char *files[4] = {whole, parts, cheap, fdb};
    for (int i = 0; i < 4; i++) {
        remove(files[i]);
        free((char *)files[i]);
    }
}

Test(collect_verify_run, conv_refuses_what_it_cannot_verify, .init = setup)
{
    char *out = test_tmppath(".tsv"), args[8192];
    snprintf(args, sizeof args, "--problems %s --out %s --precision fp64", networks(), out);
    cr_assert_eq(run(cmd_verify, args), 2);
    snprintf(args, sizeof args, "--problems %s --out %s --shortlist-by math", networks(), out);
    cr_assert_eq(run(cmd_verify, args), 2);
    snprintf(args, sizeof args, "--problems /nonexistent/keys --out %s", out);
    cr_assert_eq(run(cmd_verify, args), 1);
    remove(out);
    free(out);
}

/* The report written over an input (the problem list, the find-db) is refused as a usage error before anything is
 * written: the input keeps its bytes. */
Test(collect_verify_run, conv_output_over_an_input_refused, .init = setup)
{
    char *keys = test_tmppath(".tsv"), *fdb = test_tmppath(".fdb.txt"), *out = test_tmppath(".tsv"), args[8192];
    FILE *src = fopen(networks(), "r"), *dst = fopen(keys, "w");
    cr_assert(src && dst);
    char line[4096];
    for (int i = 0; i < 4 && fgets(line, sizeof line, src); i++) fputs(line, dst);
    fclose(src);
    fclose(dst);
    dst = fopen(fdb, "w");
    fputs("not read\n", dst);
    fclose(dst);
    const char *inputs[2] = {keys, fdb};
    char *before[2] = {slurp(keys, NULL), slurp(fdb, NULL)};
    snprintf(args, sizeof args, "--problems %s --limit 2 --out %s", keys, keys);
    cr_assert_eq(run(cmd_verify, args), 2, "%s", args);
    snprintf(args, sizeof args, "--problems %s --limit 2 --fdb %s --out %s", keys, fdb, fdb);
    cr_assert_eq(run(cmd_verify, args), 2, "%s", args);
    for (int i = 0; i < 2; i++) {
        char *after = slurp(inputs[i], NULL);
        cr_assert_str_eq(after, before[i], "%s changed", inputs[i]);
        free(after);
        free(before[i]);
    }
    const char *files[3] = {keys, fdb, out};
    for (int i = 0; i < 3; i++) {
        remove(files[i]);
        free((char *)files[i]);
    }
}

/* ---- GEMMs ---- */

static const char gemm_shapes[] = "# M N K DTYPE TA TB  # FAMILY\n"
                                  "4096 4096 4096 bf16 N T  # llama3 a\n"
                                  "64 131072 31 fp16 N N  # odd b\n"
                                  "1024 1024 64 fp32 T N  # bert c\n"
                                  "512 2048 768 tf32 N T  # vit d\n"
                                  "8 16032 8192 bf16 N T  # llama3 e\n"
                                  "333 555 777 fp16 T T  # odd f\n"
                                  "2048 512 1024 bf16 T N  # vit g\n"
                                  "96 96 96 fp32 N N  # odd h\n"
                                  "4000 12 3000 fp16 N T  # bert i\n"
                                  "128 4096 14336 bf16 N T  # llama3 j\n"
                                  "7 9 11 tf32 T T  # odd k\n"
                                  "1536 1536 1536 fp16 N N  # vit l\n";

/* A fake collection of the shapes: what `heurist-collect gemm` writes under HEURIST_COLLECT_FAKE. */
static void gemm_table_write(const char *shapes_path, const char *table)
{
    collect_gemm_shape *s;
    int n;
    cr_assert_eq(collect_gemm_shapes_read(shapes_path, &s, &n), 0, "%s", collect_last_error());
    collect_gemm_timer t;
    collect_gemm_opts o = {.n_enum = 64, .n_heur = 32, .repeats = 1, .max_batch = 1, .slow_factor = 5};
    cr_assert_eq(collect_gemm_timer_open_fake(&t, 0, &o), 0);
    collect_gemm_out out;
    cr_assert_eq(collect_gemm_out_open(&out, table, 0), 0, "%s", collect_last_error());
    collect_gemm_row *rows = malloc(COLLECT_GEMM_MAX_CANDIDATES * sizeof *rows);
    for (int i = 0; i < n; i++) {
        collect_gemm_capset caps;
        cr_assert_eq(t.caps(&t, s[i].dtype, &caps), 0);
        char key[128];
        collect_gemm_shape_key(&s[i], key, sizeof key);
        int nr, nc;
        const char *why;
        if (t.measure(&t, &s[i], key, &caps, rows, &nr, &nc, &why) == 0 && nr > 0)
            cr_assert_eq(collect_gemm_out_write(&out, &s[i], rows, nr), 0);
        collect_gemm_capset_free(&caps);
    }
    cr_assert_eq(collect_gemm_out_close(&out), 0);
    t.close(&t);
    free(rows);
    free(s);
}

/* A GEMM verify's files: the shapes, their fake collection (gemm_table_write) and the report's path */
typedef struct gemm_files {
    char *shapes, *table, *out;
} gemm_files;

static void gemm_files_open(gemm_files *g)
{
    g->shapes = test_tmpfile(".txt", gemm_shapes, strlen(gemm_shapes));
    g->table = test_tmppath(".csv.gz");
    g->out = test_tmppath(".tsv");
    gemm_table_write(g->shapes, g->table);
}

static void gemm_files_close(gemm_files *g)
{
    char *files[3] = {g->shapes, g->table, g->out};
    for (int i = 0; i < 3; i++) {
        remove(files[i]);
        free(files[i]);
    }
}

/* the fake's hash of a configuration of a shape, and the time it gives it (verify_fake.c, timer_fake.c) */
static uint64_t fake_gemm_hash(const char *key, const collect_gemm_config *c)
{
    char name[512];
    collect_gemm_config_name(c, name, sizeof name);
    return collect_fake_hash(key, collect_fake_hash(name, 0, 0), 1);
}

static double fake_gemm_us(const char *key, const collect_gemm_config *c, int *valid)
{
    uint64_t h = fake_gemm_hash(key, c);
    *valid = h % 11 != 0;
    return 1.0 + (double)((h >> 16) % 1000000) / 100.0;
}

/* What tune_expected finds of a tune model's configuration: a candidate, a new one the fake AlgoCheck accepts, a new
 * one it refuses, one whose fields name no configuration */
enum { TUNE_CANDIDATE, TUNE_NEW, TUNE_NEW_REFUSED, TUNE_UNNAMED, TUNE_KINDS };

/* What tune_expected finds of a guarded tuner's decision: no guard or a decode equal to the first pick, the guard
 * keeping the first pick over another decode, the decode replacing it */
enum { GUARD_NONE, GUARD_KEPT, GUARD_REPLACED };

/* The pick verify reports for tune model md on shape s given candidates cfg[0..n) (vrank: their places in
 * cuBLASLt's list; a guarded model is given the one of rank 0 as the first pick): the configuration it writes, or
 * cuBLASLt's first pick (heur) when the fake AlgoCheck refuses it or its fields name none; *kind a TUNE_* value,
 * *guard a GUARD_* value. */
static void tune_expected(const verify_tune_model *md, const collect_gemm_shape *s, const char *key,
                          const collect_gemm_config *cfg, const int *vrank, int n, const char *heur, char *name,
                          size_t size, int *kind, int *guard)
{
    double pv[8], kv[256 * COLLECT_GEMM_N_FIELDS], values[COLLECT_GEMM_N_FIELDS];
    collect_gemm_config c;
    cr_assert(n <= 256);
    cr_assert_eq(collect_gemm_model_values(&md->api, s, cfg, vrank, n, pv, kv), 0);
    int at = md->tune(pv, kv, n, values);
    *guard = GUARD_NONE;
    if (md->tune_vendor) {
        int r0 = 0;
        while (r0 < n && vrank[r0] != 0) r0++;
        cr_assert_lt(r0, n, "%s: cuBLASLt's first pick is a candidate", key);
        const double *first = kv + (size_t)r0 * COLLECT_GEMM_N_FIELDS;
        int differs = memcmp(values, first, sizeof values) != 0;
        at = md->tune_vendor(pv, kv, n, first, values);
        int kept = !memcmp(values, first, sizeof values);
        *guard = kept ? (differs ? GUARD_KEPT : GUARD_NONE) : GUARD_REPLACED;
        if (kept) cr_assert_eq(at, r0);
    }
    int named = collect_gemm_model_config(&md->api, md->category_name, values, &c) == 0, ok = named;
    if (ok && at < 0) fake_gemm_us(key, &c, &ok);
    *kind = !named ? TUNE_UNNAMED : at >= 0 ? TUNE_CANDIDATE : ok ? TUNE_NEW : TUNE_NEW_REFUSED;
    if (ok) collect_gemm_config_name(&c, name, size);
    else snprintf(name, size, "%s", heur);
}

/* columns of the GEMM report */
enum { G_KEY, G_MODEL, G_HEUR, G_BEST, G_TM, G_TH, G_TB, G_AUTOTUNE = 11, G_LIST_BEST, G_TLIST, G_CANDS, G_LIST,
       G_FALLBACKS, G_NAME, G_SOURCE, G_K, G_TIMINGS, G_TOPK_PICK, G_TTOPK, G_TOPK_MS, G_VPICK, G_TVTOPK, G_VTOPK_MS,
       G_TIMING, G_COUNT };

/* 1 when the report at path has the line `text` (without its newline) */
static int report_has_line(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s", path);
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        found = strcmp(line, text) == 0;
    }
    fclose(f);
    return found;
}

static void check_gemm_report(const char *path, const char *table, const collect_gemm_tags *tags, int k, int list)
{
    collect_gemm_measured *sh;
    int ns;
    cr_assert_eq(collect_gemm_measured_read(table, &sh, &ns), 0);
    table_rows t;
    rows_read(path, &t);
    const int per = verify_n_table_models + verify_n_tune_models;
    cr_assert_eq(t.n, per * ns, "%d rows for %d shapes", t.n, ns);
    int guard_kept = 0; /* shapes where tab_a's guard keeps a pick its own ranking would not make */
    int tune_kinds[8][TUNE_KINDS] = {{0}}, guards[8][3] = {{0}}; /* per tune model */
    cr_assert(verify_n_tune_models <= 8);
    for (int row = 0; row < t.n; row++) {
        char **f = t.f[row];
        const collect_gemm_measured *m = &sh[row / per];
        const int mi = row % per, tune = mi >= verify_n_table_models;
        char key[128];
        collect_gemm_shape_key(&m->s, key, sizeof key);
        cr_assert_eq(t.nf[row], G_COUNT);
        cr_assert_str_eq(f[G_KEY], key);
        cr_assert_str_eq(f[G_NAME], tune ? verify_tune_models[mi - verify_n_table_models].name : verify_table_models[mi].name);
        const char *family = collect_gemm_tags_find(tags, key);
        cr_assert_not_null(family);
        cr_assert_str_eq(f[G_SOURCE], family, "%s", key);
        cr_assert_str_eq(f[G_TIMING], list || k ? "careful" : "-");
        /* the heuristic's pick, the list's best, the table's best: the fake's times */
        double best = INFINITY, list_best = INFINITY, t_heur = NAN;
        for (int r = 0; r < m->n; r++) {
            best = fmin(best, m->rows[r].time_us);
            if (m->rows[r].heuristic_rank >= 0) list_best = fmin(list_best, m->rows[r].time_us);
            if (m->rows[r].heuristic_rank == 0) t_heur = m->rows[r].time_us;
        }
        cr_assert_float_eq(num(f[G_TH]), t_heur, 1e-5 * t_heur);
        cr_assert_float_eq(num(f[G_TB]), best, 1e-5 * best, "%s", key);
        cr_assert(num(f[G_TM]) >= best * (1 - 1e-5));
        /* the model's pick: its best-ranked candidate (every row of a fake table passes AlgoCheck), or the tune
         * model's configuration unless the fake AlgoCheck refuses it, when cuBLASLt's first pick stands in */
        collect_gemm_config cfg[256];
        int vrank[256], ranking[256], own[256];
        int16_t vrank16[256];
        double pv[8], kv[256 * (COLLECT_GEMM_N_FIELDS + 1)];
        float scores[256];
        cr_assert(m->n <= 256);
        for (int r = 0; r < m->n; r++) {
            cfg[r] = m->rows[r].cfg;
            vrank[r] = m->rows[r].heuristic_rank;
            vrank16[r] = (int16_t)vrank[r];
        }
        char name[512];
        int valid;
        if (tune) {
            int kind, guard;
            tune_expected(&verify_tune_models[mi - verify_n_table_models], &m->s, key, cfg, vrank, m->n, f[G_HEUR], name,
                          sizeof name, &kind, &guard);
            tune_kinds[mi - verify_n_table_models][kind]++;
            guards[mi - verify_n_table_models][guard]++;
            cr_assert_str_eq(f[G_FALLBACKS], kind >= TUNE_NEW_REFUSED ? "1" : "0", "%s", key);
        } else {
            const verify_table_model *md = &verify_table_models[mi];
            cr_assert_eq(collect_gemm_model_values(&md->api, &m->s, cfg, vrank, m->n, pv, kv), 0);
            md->rank(pv, kv, m->n, scores, ranking);
            if (md->rank_vendor) {
                memcpy(own, ranking, (size_t)m->n * sizeof *own);
                md->rank_vendor(pv, kv, m->n, vrank16, scores, ranking);
                guard_kept += own[0] != ranking[0];
            }
            collect_gemm_config_name(&cfg[ranking[0]], name, sizeof name);
        }
        cr_assert_str_eq(f[G_MODEL], name, "%s, model %s", key, f[G_NAME]);
        collect_gemm_config c;
        cr_assert_eq(collect_gemm_config_parse(f[G_MODEL], &c), 0);
        cr_assert_float_eq(num(f[G_TM]), fake_gemm_us(key, &c, &valid), 1e-5 * num(f[G_TM]));
        if (list) {
            cr_assert_float_eq(num(f[G_TLIST]), list_best, 1e-5 * list_best);
            cr_assert(num(f[G_AUTOTUNE]) >= 0);
        } else {
            cr_assert_str_eq(f[G_AUTOTUNE], "-");
            cr_assert_str_eq(f[G_LIST_BEST], "-");
        }
        if (k) {
            cr_assert_eq(atoi(f[G_K]), k);
            /* a tune model's shortlist: its configuration and cuBLASLt's first pick */
            if (tune) cr_assert(atoi(f[G_TIMINGS]) == 1 + (strcmp(f[G_MODEL], f[G_HEUR]) != 0));
            else cr_assert(atoi(f[G_TIMINGS]) == k || atoi(f[G_TIMINGS]) == k + 1);
            cr_assert(num(f[G_TTOPK]) <= fmin(num(f[G_TM]), t_heur) * (1 + 1e-5));
            /* the vendor's first k: the best of the list's first k ranks */
            double vt = INFINITY;
            for (int r = 0; r < m->n; r++)
                if (m->rows[r].heuristic_rank >= 0 && m->rows[r].heuristic_rank < k) vt = fmin(vt, m->rows[r].time_us);
            cr_assert_float_eq(num(f[G_TVTOPK]), vt, 1e-5 * vt, "%s", key);
        } else {
            cr_assert_str_eq(f[G_K], "-");
        }
    }
    cr_assert_gt(guard_kept, 0, "the guarded model's pick differs from its own ranking's somewhere");
    /* the fake tune models wrote candidates, new configurations and refused ones; the guarded one kept cuBLASLt's
     * first pick over its decode somewhere and replaced it elsewhere. The report names the entry each decided with
     * and counts what became of its configurations. */
    for (int u = 0; u < verify_n_tune_models; u++) {
        const verify_tune_model *md = &verify_tune_models[u];
        const int *kd = tune_kinds[u], *gd = guards[u];
        const int refused = kd[TUNE_NEW_REFUSED] + kd[TUNE_UNNAMED];
        cr_assert(kd[TUNE_CANDIDATE] > 0 && kd[TUNE_NEW] > 0 && refused > 0, "%s: %d %d %d", md->name,
                  kd[TUNE_CANDIDATE], kd[TUNE_NEW], refused);
        if (md->tune_vendor)
            cr_assert(gd[GUARD_KEPT] > 0 && gd[GUARD_REPLACED] > 0, "kept %d, replaced %d", gd[GUARD_KEPT],
                      gd[GUARD_REPLACED]);
        char line[1024], guard[256] = "";
        if (md->tune_vendor)
            snprintf(guard, sizeof guard, "; the decode differed from cuBLASLt's first pick on %d shapes: the guard kept "
                     "the pick on %d, the decode replaced it on %d", gd[GUARD_KEPT] + gd[GUARD_REPLACED], gd[GUARD_KEPT],
                     gd[GUARD_REPLACED]);
        snprintf(line, sizeof line, "# tune model %s decides with %s_%s: %d configurations written this run: %d among the "
                 "table's rows, 0 among cuBLASLt's list only, %d new; %d refused (cuBLASLt's first pick instead)%s",
                 md->name, md->name, md->tune_vendor ? "tune_vendor (the vendor guard, margin 0.25, given cuBLASLt's "
                 "first pick)" : "tune", ns, kd[TUNE_CANDIDATE], kd[TUNE_NEW] + kd[TUNE_NEW_REFUSED], refused, guard);
        cr_assert(report_has_line(path, line), "%s: no line '%s'", path, line);
    }
    free(t.text);
    collect_gemm_measured_free(sh, ns);
}

/* verify --table with --tune-candidates `cand` (no list timing): each tune model's pick is its decoding within the
 * first `first_n` entries of cuBLASLt's list (in its order; the guarded tuner's first pick its first). Returns how
 * many (shape, tune model) pairs decide otherwise within the whole list. */
static int check_tune_within(const gemm_files *g, const char *cand, int first_n)
{
    char args[8192];
    snprintf(args, sizeof args, "--table %s --out %s --no-list --tune-candidates %s", g->table, g->out, cand);
    cr_assert_eq(run(cmd_verify_gemm, args), 0, "%s", args);
    collect_gemm_measured *sh;
    int ns, other = 0;
    cr_assert_eq(collect_gemm_measured_read(g->table, &sh, &ns), 0);
    table_rows t;
    rows_read(g->out, &t);
    const int per = verify_n_table_models + verify_n_tune_models;
    cr_assert_eq(t.n, per * ns);
    for (int i = 0; i < ns; i++) {
        char key[128], name[512], whole[512];
        collect_gemm_shape_key(&sh[i].s, key, sizeof key);
        collect_gemm_config cfg[64];
        int vrank[64], n = 0, kind, guard;
        for (int r = 0; r < 64; r++)
            for (int c = 0; c < sh[i].n; c++)
                if (sh[i].rows[c].heuristic_rank == r) cfg[n] = sh[i].rows[c].cfg, vrank[n] = r, n++;
        for (int u = 0; u < verify_n_tune_models; u++) {
            char **f = t.f[i * per + verify_n_table_models + u];
            tune_expected(&verify_tune_models[u], &sh[i].s, key, cfg, vrank, n < first_n ? n : first_n, f[G_HEUR],
                          name, sizeof name, &kind, &guard);
            cr_assert_str_eq(f[G_NAME], verify_tune_models[u].name);
            cr_assert_str_eq(f[G_MODEL], name, "%s, model %s", key, f[G_NAME]);
            tune_expected(&verify_tune_models[u], &sh[i].s, key, cfg, vrank, n, f[G_HEUR], whole, sizeof whole, &kind,
                          &guard);
            other += strcmp(name, whole) != 0;
        }
    }
    free(t.text);
    collect_gemm_measured_free(sh, ns);
    return other;
}

/* --tune-candidates list: a tune model decodes within cuBLASLt's list alone (in its order), as a deployed tuner
 * would for a shape no table holds; a value other than rows or list is a usage error */
Test(collect_verify_run, gemm_tune_within_the_list, .init = setup)
{
    gemm_files g;
    gemm_files_open(&g);
    check_tune_within(&g, "list", 64); /* within the whole list: the count is 0 by construction */
    char args[8192];
    snprintf(args, sizeof args, "--table %s --out %s --tune-candidates table", g.table, g.out);
    cr_assert_eq(run(cmd_verify_gemm, args), 2);
    gemm_files_close(&g);
}

/* --tune-candidates list:2: a tune model decodes within the list's first two entries alone, which decides otherwise
 * than the whole list on some shape; N of 0, above the list's cap or not a number is a usage error */
Test(collect_verify_run, gemm_tune_within_the_lists_first_n, .init = setup)
{
    gemm_files g;
    gemm_files_open(&g);
    cr_assert_gt(check_tune_within(&g, "list:2", 2), 0,
                 "the first two entries decide as the whole list everywhere: the test tells nothing");
    char args[8192];
    const char *bad[] = {"list:0", "list:", "list:2x", "list:65", "list2"};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        snprintf(args, sizeof args, "--table %s --out %s --tune-candidates %s", g.table, g.out, bad[b]);
        cr_assert_eq(run(cmd_verify_gemm, args), 2, "%s", bad[b]);
    }
    gemm_files_close(&g);
}

/* --shortlist-fill: each table model's shortlist is K timings in all (cuBLASLt's first pick and the model's K - 1
 * best others), never more, and its fastest is no slower than the first pick; a tune model's is its configuration
 * and the first pick, one timing when they are the same */
Test(collect_verify_run, gemm_shortlist_fill_times_k_in_all, .init = setup)
{
    gemm_files g;
    gemm_files_open(&g);
    char args[8192];
    snprintf(args, sizeof args, "--table %s --out %s --top-k 2 --shortlist-fill --no-list", g.table, g.out);
    cr_assert_eq(run(cmd_verify_gemm, args), 0, "%s", args);
    table_rows t;
    rows_read(g.out, &t);
    cr_assert_gt(t.n, 0);
    for (int row = 0; row < t.n; row++) {
        char **f = t.f[row];
        cr_assert_eq(atoi(f[G_K]), 2);
        const int tune = row % (verify_n_table_models + verify_n_tune_models) >= verify_n_table_models;
        const int want = tune ? 1 + (strcmp(f[G_MODEL], f[G_HEUR]) != 0) : 2;
        cr_assert_eq(atoi(f[G_TIMINGS]), want, "row %d: %s timings", row, f[G_TIMINGS]);
        cr_assert(num(f[G_TTOPK]) <= num(f[G_TH]) * (1 + 1e-5));
    }
    free(t.text);
    gemm_files_close(&g);
}

Test(collect_verify_run, gemm_rows_follow_the_fake_numbers, .init = setup)
{
    gemm_files g;
    gemm_files_open(&g);
    char *again = test_tmppath(".tsv"), args[8192];
    collect_gemm_tags tags;
    cr_assert_eq(collect_gemm_tags_read(g.shapes, &tags), 0);
    snprintf(args, sizeof args, "--table %s --shapes %s --out %s --top-k 2 --noise-ratio 1.02", g.table, g.shapes,
             g.out);
    cr_assert_eq(run(cmd_verify_gemm, args), 0, "%s", args);
    check_gemm_report(g.out, g.table, &tags, 2, 1);
    collect_gemm_tags_free(&tags);
    /* resumed after two shapes: the same rows */
    snprintf(args, sizeof args, "--table %s --shapes %s --out %s --top-k 2 --limit 2 --resume", g.table, g.shapes,
             again);
    cr_assert_eq(run(cmd_verify_gemm, args), 0);
    snprintf(args, sizeof args, "--table %s --shapes %s --out %s --top-k 2 --resume", g.table, g.shapes, again);
    cr_assert_eq(run(cmd_verify_gemm, args), 0);
    char *a = stable_columns(g.out, 1), *b = stable_columns(again, 1);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
    /* the cheaper run: no list timing, no shortlist, the table's three fastest re-timed */
    snprintf(args, sizeof args, "--table %s --out %s --no-list --table-top 3", g.table, g.out);
    cr_assert_eq(run(cmd_verify_gemm, args), 0);
    collect_report r;
    cr_assert_eq(collect_report_read(g.out, &r), 0, "%s", collect_last_error());
    cr_assert_str_eq(r.rows[0].source, "-");
    cr_assert_eq(r.rows[0].v.t_list, 0);
    collect_report_free(&r);
    remove(again);
    free(again);
    gemm_files_close(&g);
}

/* The lines of a re-timed configurations file (verify --retimed-out) after its header, which it checks */
static int retimed_lines(const char *path, char **text, char ***lines)
{
    *text = slurp(path, NULL);
    char *nl = strchr(*text, '\n');
    cr_assert_not_null(nl, "%s: no header", path);
    *nl = '\0';
    char want[1024];
    size_t at = (size_t)snprintf(want, sizeof want, "key");
    for (int i = 0; i < COLLECT_GEMM_N_FIELDS; i++)
        at += (size_t)snprintf(want + at, sizeof want - at, "\t%s", collect_gemm_kernel_columns[i]);
    snprintf(want + at, sizeof want - at, "\ttime_us");
    cr_assert_str_eq(*text, want);
    int n = 0;
    *lines = malloc(4096 * sizeof **lines);
    for (char *l = strtok(nl + 1, "\n"); l; l = strtok(NULL, "\n")) {
        cr_assert_lt(n, 4096);
        (*lines)[n++] = l;
    }
    return n;
}

/* 1 when the configuration of a re-timed row (its fields after the key) is c */
static int retimed_is(const char *row, const collect_gemm_config *c)
{
    int f[COLLECT_GEMM_N_FIELDS];
    char own[512];
    cr_assert_eq(collect_gemm_config_fields(c, f), 0);
    size_t at = 0;
    for (int i = 0; i < COLLECT_GEMM_N_FIELDS; i++) at += (size_t)snprintf(own + at, sizeof own - at, "\t%d", f[i]);
    const char *tab = strchr(row, '\t');
    return tab && strncmp(tab, own, at) == 0 && tab[at] == '\t';
}

/* --retimed-out with --retime-list: per verified shape, one row for each configuration the interleaved re-timing
 * ran (each model's pick, cuBLASLt's first pick and every entry of its list, the table's --table-top fastest) and
 * nothing else, its time the fake timer's (every round's, hence the median); written to FILE.tmp and renamed. A run
 * stopped after two shapes and resumed, even from an interrupted run's FILE.tmp holding a shape the report lacks
 * and a cut line, writes the same file; a report whose shapes the file lacks is refused. */
Test(collect_verify_run, gemm_retimed_out, .init = setup)
{
    gemm_files g;
    gemm_files_open(&g);
    char *rt = test_tmppath(".tsv"), *out2 = test_tmppath(".tsv"), *rt2 = test_tmppath(".tsv"), args[8192], tmp[4200];
    const char *common = "--no-list --table-top 3 --retime-list";
    snprintf(args, sizeof args, "--table %s --out %s %s --retimed-out %s", g.table, g.out, common, rt);
    cr_assert_eq(run(cmd_verify_gemm, args), 0, "%s", args);
    snprintf(tmp, sizeof tmp, "%s.tmp", rt);
    cr_assert_neq(access(tmp, F_OK), 0, "%s left behind", tmp);
    collect_gemm_measured *sh;
    int ns;
    cr_assert_eq(collect_gemm_measured_read(g.table, &sh, &ns), 0);
    table_rows t;
    rows_read(g.out, &t);
    char *text, **lines;
    int nl = retimed_lines(rt, &text, &lines), shapes = 0, listed = 0, matched = 0;
    const int per = verify_n_table_models + verify_n_tune_models;
    for (int i = 0; i < ns; i++) {
        char key[128];
        collect_gemm_shape_key(&sh[i].s, key, sizeof key);
        int row0 = -1;
        for (int r = 0; r < t.n && row0 < 0; r++)
            if (!strcmp(t.f[r][G_KEY], key)) row0 = r;
        /* the shape's rows in the file: each a distinct configuration timed as the fake times it */
        int first = -1, count = 0;
        size_t kl = strlen(key);
        for (int l = 0; l < nl; l++) {
            if (strncmp(lines[l], key, kl) || lines[l][kl] != '\t') continue;
            if (first < 0) first = l;
            cr_assert_eq(l, first + count, "%s: rows not together", key);
            count++;
            int f[COLLECT_GEMM_N_FIELDS], valid;
            char *p = lines[l] + kl;
            for (int j = 0; j < COLLECT_GEMM_N_FIELDS; j++) f[j] = (int)strtol(p + 1, &p, 10);
            collect_gemm_config c;
            cr_assert_eq(collect_gemm_config_from_fields(f, &c), 0, "%s", lines[l]);
            double want = fake_gemm_us(key, &c, &valid);
            cr_assert_float_eq(num(p + 1), want, 1e-5 * want, "%s", lines[l]);
            for (int q = first; q < l; q++) cr_assert(!retimed_is(lines[q], &c), "%s: twice", lines[l]);
        }
        if (row0 < 0) {
            cr_assert_eq(count, 0, "%s: re-timed rows of a shape the report lacks", key);
            continue;
        }
        shapes++;
        /* what must be there: the list, the table's three fastest, the picks */
        collect_gemm_config want[256];
        int nw = 0;
        for (int r = 0; r < sh[i].n; r++)
            if (sh[i].rows[r].heuristic_rank >= 0) want[nw++] = sh[i].rows[r].cfg;
        const int n_list = nw;
        int used[256] = {0};
        for (int j = 0; j < 3 && j < sh[i].n; j++) {
            int b = -1;
            for (int r = 0; r < sh[i].n; r++)
                if (!used[r] && (b < 0 || sh[i].rows[r].time_us < sh[i].rows[b].time_us)) b = r;
            used[b] = 1;
            want[nw++] = sh[i].rows[b].cfg;
        }
        for (int m = 0; m < per; m++)
            cr_assert_eq(collect_gemm_config_parse(t.f[row0 + m][G_MODEL], &want[nw++]), 0);
        /* list entries neither among the table's fastest nor a pick: re-timed for --retime-list alone */
        for (int w = 0; w < n_list; w++) {
            int other = 0;
            for (int v = n_list; v < nw; v++) other |= collect_gemm_config_equal(&want[v], &want[w]);
            listed += !other;
        }
        int distinct = 0;
        for (int w = 0; w < nw; w++) {
            int dup = 0, found = 0;
            for (int v = 0; v < w; v++) dup |= collect_gemm_config_equal(&want[v], &want[w]);
            distinct += !dup;
            for (int l = first; l >= 0 && l < first + count; l++) found |= retimed_is(lines[l], &want[w]);
            cr_assert(found, "%s: configuration %d of %d not re-timed", key, w, nw);
        }
        cr_assert_eq(count, distinct, "%s: %d rows for %d configurations", key, count, distinct);
        matched += count;
    }
    cr_assert_eq(shapes * per, t.n);
    cr_assert_eq(matched, nl, "rows of keys the table lacks");
    cr_assert_gt(listed, 0, "no list entry beyond the table's fastest and the picks: the test tells nothing of the list");

    /* two shapes, then an interrupted run's FILE.tmp with the third shape's rows and a cut line, then the rest */
    snprintf(args, sizeof args, "--table %s --out %s %s --retimed-out %s --limit 2 --resume", g.table, out2, common, rt2);
    cr_assert_eq(run(cmd_verify_gemm, args), 0, "%s", args);
    char *part = slurp(rt2, NULL);
    snprintf(tmp, sizeof tmp, "%s.tmp", rt2);
    FILE *f = fopen(tmp, "w");
    cr_assert_not_null(f);
    fputs(part, f);
    for (int l = 0; l < nl; l++) {
        char key3[128];
        collect_gemm_shape_key(&sh[2].s, key3, sizeof key3);
        if (!strncmp(lines[l], key3, strlen(key3))) fprintf(f, "%s\n", lines[l]);
    }
    fputs("1,2,3,bf16,N,T\t6\t12", f);
    fclose(f);
    free(part);
    snprintf(args, sizeof args, "--table %s --out %s %s --retimed-out %s --resume", g.table, out2, common, rt2);
    cr_assert_eq(run(cmd_verify_gemm, args), 0, "%s", args);
    char *whole = slurp(rt, NULL), *resumed = slurp(rt2, NULL);
    cr_assert_str_eq(whole, resumed);
    cr_assert_neq(access(tmp, F_OK), 0, "%s left behind", tmp);
    /* the report resumed into a file that lacks its shapes */
    remove(rt2);
    cr_assert_eq(run(cmd_verify_gemm, args), 1);
    free(whole);
    free(resumed);
    free(text);
    free(lines);
    free(t.text);
    collect_gemm_measured_free(sh, ns);
    char *files[4] = {rt, out2, rt2, NULL};
    for (int i = 0; files[i]; i++) {
        remove(files[i]);
        free(files[i]);
    }
    remove(tmp);
    gemm_files_close(&g);
}

/* An output that would be written over an input (the report or the re-timed file over the table, the re-timed
 * file over the report or the shape list) is refused as a usage error before anything is written: the input
 * keeps its bytes and no PATH.tmp appears. */
Test(collect_verify_run, gemm_output_over_an_input_refused, .init = setup)
{
    gemm_files g;
    gemm_files_open(&g);
    size_t len0, len1, rlen0, rlen1;
    char *table0 = slurp(g.table, &len0), args[8192], tmp[4200];
    snprintf(args, sizeof args, "--table %s --out %s --no-list", g.table, g.out);
    cr_assert_eq(run(cmd_verify_gemm, args), 0, "%s", args);
    char *report0 = slurp(g.out, &rlen0);
    /* the re-timed file over the table, the report over the table, the re-timed file over the report, the shapes */
    const char *over[4] = {g.table, g.table, g.out, g.shapes};
    for (int c = 0; c < 4; c++) {
        if (c == 1) snprintf(args, sizeof args, "--table %s --out %s --no-list", g.table, g.table);
        else
            snprintf(args, sizeof args, "--table %s --shapes %s --out %s --no-list --retimed-out %s", g.table, g.shapes,
                     g.out, over[c]);
        cr_assert_eq(run(cmd_verify_gemm, args), 2, "%s", args);
        char *table1 = slurp(g.table, &len1), *report1 = slurp(g.out, &rlen1);
        cr_assert(len1 == len0 && !memcmp(table0, table1, len0), "%s: the table changed", args);
        cr_assert(rlen1 == rlen0 && !memcmp(report0, report1, rlen0), "%s: the report changed", args);
        snprintf(tmp, sizeof tmp, "%s.tmp", over[c]);
        cr_assert_neq(access(tmp, F_OK), 0, "%s: %s written", args, tmp);
        free(table1);
        free(report1);
    }
    free(table0);
    free(report0);
    gemm_files_close(&g);
}

/* ---- GEMM shortlists timed interleaved ---- */

#define MAX_MODELS_TESTED 8

/* An interleaved pass over configurations c[0..n) of a shape as the fake backend times it (verify_backend.h): each
 * launch the configuration's time times its round's factor, one hashed to a multiple of 13 refused, the cost the
 * warm-up (the configuration's time) and the launches' times plus 5 us each. The fastest by its median (the first of equals; -1 when all are refused), *ms
 * one attempt's cost, *refused the refused ones; *fastest_differs 1 when the pick is not the fastest by the
 * configurations' own times among those that ran. rounds odd. */
static int fake_pass(const char *key, const collect_gemm_config *c, int n, int rounds, double *ms, int *refused,
                     int *fastest_differs)
{
    int pick = -1, own = -1;
    double pick_t = 0, own_t = 0;
    *ms = 0;
    for (int i = 0; i < n; i++) {
        uint64_t h = fake_gemm_hash(key, &c[i]);
        int valid;
        double base = fake_gemm_us(key, &c[i], &valid), t[16];
        *ms += (rounds + 1) * 5e-3;
        if (h % 13 == 0) {
            (*refused)++;
            continue;
        }
        *ms += base * 1e-3;
        for (int r = 0; r < rounds; r++) {
            t[r] = base * collect_fake_pass_factor(key, h, r);
            *ms += t[r] * 1e-3;
            for (int j = r; j > 0 && t[j - 1] > t[j]; j--) {
                double x = t[j];
                t[j] = t[j - 1];
                t[j - 1] = x;
            }
        }
        if (pick < 0 || t[rounds / 2] < pick_t) pick = i, pick_t = t[rounds / 2];
        if (own < 0 || base < own_t) own = i, own_t = base;
    }
    *fastest_differs = pick != own;
    return pick;
}

/* Attempts at the pass the fake backend is asked for as its (*passes)-th: the hold of every seventh times out, and
 * verify runs a timed-out pass again, three attempts at most */
static int fake_pass_attempts(long *passes)
{
    int attempts = 0, timed_out;
    do {
        attempts++;
        timed_out = (*passes)++ % 7 == 3;
    } while (timed_out && attempts < 3);
    return attempts;
}

/* 1 when configuration c is named `name` in a report */
static int config_named(const collect_gemm_config *c, const char *name)
{
    char own[512];
    collect_gemm_config_name(c, own, sizeof own);
    return strcmp(own, name) == 0;
}

/* --shortlist-timing interleaved: cuBLASLt's list, each model's shortlist and the list's first K are each timed in
 * one pass of their own, and each keeps its fastest by the pass's medians, a configuration refused at launch never
 * (a shape with a shortlist that ran none is skipped); its cost is the pass's (twice where the hold timed out and
 * the pass ran again); the report says how they were timed and counts the passes */
Test(collect_verify_run, gemm_shortlists_timed_interleaved, .init = setup)
{
    gemm_files g;
    gemm_files_open(&g);
    char args[8192];
    const int k = 2, rounds = 3, per = verify_n_table_models + verify_n_tune_models;
    snprintf(args, sizeof args, "--table %s --out %s --top-k %d --shortlist-timing interleaved --shortlist-rounds %d",
             g.table, g.out, k, rounds);
    cr_assert_eq(run(cmd_verify_gemm, args), 0, "%s", args);
    collect_gemm_measured *sh;
    int ns;
    cr_assert_eq(collect_gemm_measured_read(g.table, &sh, &ns), 0);
    table_rows t;
    rows_read(g.out, &t);
    long passes = 0;
    int refused = 0, differs = 0, reruns = 0, row = 0, skipped = 0;
    double cost_topk = 0, cost_list = 0;
    for (int i = 0; i < ns; i++) {
        const collect_gemm_measured *m = &sh[i];
        char key[128], heur[512];
        collect_gemm_shape_key(&m->s, key, sizeof key);
        /* the list, in cuBLASLt's order, and the candidates */
        collect_gemm_config list[64], cfg[256], sl[MAX_MODELS_TESTED][64];
        int nl = 0, n_sl[MAX_MODELS_TESTED], pick[MAX_MODELS_TESTED], attempts[MAX_MODELS_TESTED], vrank[256], d;
        int16_t vrank16[256];
        double ms[MAX_MODELS_TESTED];
        cr_assert(m->n <= 256 && per <= MAX_MODELS_TESTED);
        for (int r = 0; r < 64; r++)
            for (int c = 0; c < m->n; c++)
                if (m->rows[c].heuristic_rank == r) list[nl++] = m->rows[c].cfg;
        for (int c = 0; c < m->n; c++) {
            cfg[c] = m->rows[c].cfg;
            vrank[c] = m->rows[c].heuristic_rank;
            vrank16[c] = (int16_t)vrank[c];
        }
        collect_gemm_config_name(&list[0], heur, sizeof heur);
        /* the passes in the order verify asks for them: the list; each model's shortlist (a table model's k best
         * candidates AlgoCheck accepts, a tune model's configuration, each with cuBLASLt's first pick when not
         * among them); the list's first k */
        double list_ms, vt_ms;
        int list_attempts = fake_pass_attempts(&passes);
        int il = fake_pass(key, list, nl, rounds, &list_ms, &refused, &d);
        differs += d;
        int skip = 0;
        for (int mi = 0; mi < per; mi++) {
            int first_in = 0;
            n_sl[mi] = 0;
            if (mi < verify_n_table_models) {
                const verify_table_model *md = &verify_table_models[mi];
                double pv[8], kv[256 * (COLLECT_GEMM_N_FIELDS + 1)];
                float scores[256];
                int ranking[256];
                cr_assert_eq(collect_gemm_model_values(&md->api, &m->s, cfg, vrank, m->n, pv, kv), 0);
                if (md->rank_vendor) md->rank_vendor(pv, kv, m->n, vrank16, scores, ranking);
                else md->rank(pv, kv, m->n, scores, ranking);
                for (int r = 0; r < m->n && n_sl[mi] < k; r++) {
                    int valid, c = ranking[r];
                    fake_gemm_us(key, &cfg[c], &valid);
                    if (vrank[c] < 0 && !valid) continue; /* refused by the fake AlgoCheck */
                    sl[mi][n_sl[mi]++] = cfg[c];
                    first_in |= vrank[c] == 0;
                }
            } else {
                char name[512];
                int kind, guard;
                tune_expected(&verify_tune_models[mi - verify_n_table_models], &m->s, key, cfg, vrank, m->n, heur, name,
                              sizeof name, &kind, &guard);
                cr_assert_eq(collect_gemm_config_parse(name, &sl[mi][0]), 0);
                n_sl[mi] = 1;
                first_in = collect_gemm_config_equal(&sl[mi][0], &list[0]);
            }
            if (!first_in) sl[mi][n_sl[mi]++] = list[0];
            attempts[mi] = fake_pass_attempts(&passes);
            pick[mi] = fake_pass(key, sl[mi], n_sl[mi], rounds, &ms[mi], &refused, &d);
            skip |= pick[mi] < 0;
        }
        int vt_attempts = fake_pass_attempts(&passes);
        int vp = fake_pass(key, list, nl < k ? nl : k, rounds, &vt_ms, &refused, &d);
        skip |= vp < 0;
        reruns += list_attempts - 1 + vt_attempts - 1;
        for (int mi = 0; mi < per; mi++) reruns += attempts[mi] - 1;
        if (skip) {
            skipped++;
            cr_assert(row == t.n || strcmp(t.f[row][G_KEY], key), "%s: a shortlist ran nothing, yet rows", key);
            continue;
        }
        for (int mi = 0; mi < per; mi++, row++) {
            cr_assert_lt(row, t.n);
            char **f = t.f[row];
            cr_assert_str_eq(f[G_KEY], key);
            cr_assert_str_eq(f[G_TIMING], "interleaved");
            cr_assert_float_eq(num(f[G_AUTOTUNE]), list_ms * list_attempts, 1.1e-3, "%s: %s ms, expected %.4f", key,
                               f[G_AUTOTUNE], list_ms * list_attempts);
            if (il < 0) {
                cr_assert_str_eq(f[G_LIST_BEST], "-");
            } else {
                int valid;
                cr_assert(config_named(&list[il], f[G_LIST_BEST]), "%s: list pick %s", key, f[G_LIST_BEST]);
                double want = fake_gemm_us(key, &list[il], &valid);
                cr_assert_float_eq(num(f[G_TLIST]), want, 1e-5 * want);
            }
            cr_assert(config_named(&sl[mi][pick[mi]], f[G_TOPK_PICK]), "%s, %s: shortlist pick %s", key, f[G_NAME],
                      f[G_TOPK_PICK]);
            cr_assert_eq(atoi(f[G_TIMINGS]), n_sl[mi], "%s, %s", key, f[G_NAME]);
            cr_assert_float_eq(num(f[G_TOPK_MS]), ms[mi] * attempts[mi], 1.1e-3, "%s, %s", key, f[G_NAME]);
            cr_assert(config_named(&list[vp], f[G_VPICK]), "%s: the list's top-k pick %s", key, f[G_VPICK]);
            cr_assert_float_eq(num(f[G_VTOPK_MS]), vt_ms * vt_attempts, 1.1e-3);
            cost_topk += num(f[G_TOPK_MS]);
            cost_list += num(f[G_AUTOTUNE]);
        }
    }
    cr_assert_eq(row, t.n);
    /* the cases this fake run covers: refused launches, a pass's pick that is not the fastest by the configurations'
     * own times, passes run again, a shape skipped; shortlists cost less than the list */
    cr_assert(refused > 0 && differs > 0 && reruns > 0 && skipped > 0, "%d %d %d %d", refused, differs, reruns, skipped);
    cr_assert_lt(cost_topk, cost_list);
    char line[512];
    snprintf(line, sizeof line, "# shortlist timing interleaved: %d rounds a pass; %ld passes this run, %d run again "
             "after their hold timed out, 0 kept after 3 timed-out attempts", rounds, passes, reruns);
    cr_assert(report_has_line(g.out, line), "no line '%s'", line);
    free(t.text);
    collect_gemm_measured_free(sh, ns);
    gemm_files_close(&g);
}

/* --shortlist-timing takes careful or interleaved; --shortlist-rounds a number of 1 to 16, only with interleaved,
 * and no more than a pass's 256 launches over cuBLASLt's list (--heuristic-count, 32) or a shortlist */
Test(collect_verify_run, gemm_shortlist_timing_options, .init = setup)
{
    static const char *const bad[] = {"--shortlist-timing once", "--shortlist-timing", "--shortlist-timing interleaved "
                                      "--shortlist-rounds 0", "--shortlist-timing interleaved --shortlist-rounds 17",
                                      "--shortlist-timing interleaved --shortlist-rounds 2x",
                                      "--shortlist-rounds 3", "--shortlist-timing careful --shortlist-rounds 3",
                                      "--shortlist-timing interleaved --shortlist-rounds 9",
                                      "--shortlist-timing interleaved --heuristic-count 4 --top-k 60"};
    char args[1024];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(args, sizeof args, "--table missing.csv.gz --out missing.tsv %s", bad[i]);
        cr_assert_eq(run(cmd_verify_gemm, args), 2, "%s", args);
    }
}
