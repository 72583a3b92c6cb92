/* heurist-collect verify, for GEMMs: exported table models' picks against cuBLASLt's heuristic on the GPU, per
 * held-out shape (verify.h for the CPU part, verify_models.h for the models of the build, verify_gemm_pool.h for
 * the configurations a shape times and the timing of the list and the shortlists).
 *
 * Input: a table heurist-collect gemm wrote, holding the held-out shapes (collect/scripts/split_table.py);
 * each shape's rows are its candidates, the configurations the collector's enumeration found valid
 * (cublasLtMatmulAlgoCheck) and timed. Per shape:
 *   - cuBLASLt's heuristic, called fresh: its first pick and its list (entries missing from the shape's rows
 *     join the candidates);
 *   - each model's decision: a table model's runtime ranks the candidates, given each one's rank in the
 *     heuristic's list when the model reads it (a table read with "vendor_feature") or decides under the vendor
 *     guard (a runtime exported with --guard, rank_vendor); its pick is the best-ranked one cuBLASLt still accepts
 *     (rebuilt from its fields and checked). A tune model's runtime writes a configuration, decoding within the
 *     candidates; it is rebuilt from its fields and checked (cublasLtMatmulAlgoCheck) whether or not the table
 *     holds it, and one cuBLASLt refuses is invalid: the model's pick is then cuBLASLt's first
 *     (model_rank_fallbacks 1); with --tune-candidates list it decodes within the list's entries alone, with
 *     list:N within its first N (in the list's order, so the first pick is always among them). A tune
 *     runtime exported with the vendor guard (tune_vendor) is given cuBLASLt's first pick as well, and where the
 *     guard keeps it, the pick is the heuristic's entry itself. decide_us is the mean of 3 to 200 calls, as many
 *     as fit 2 ms (the guard included);
 *   - unless --no-list, every entry of the list timed once (autotune_ms, the exhaustive search's cost) and its
 *     fastest kept: what autotuning over the list gets;
 *   - with --top-k K, each model's shortlist (its K best accepted candidates, plus the heuristic's first pick
 *     when not among them; with --shortlist-fill K in all, the first pick and the model's K - 1 best others)
 *     and the list's first K, each timed once and the fastest kept, as Triton's
 *     autotuner does; a configuration timed once is not timed again, its time and cost shared. With
 *     --shortlist-timing interleaved the list and each shortlist are timed instead in one pass of their own
 *     (gemm_gpu.h): a warm-up launch of each configuration, then --shortlist-rounds rounds (5), each one launch
 *     of every configuration in turn behind a hold,
 *     each configuration's time the median of its launches, the cost the pass's wall time; a pass whose hold
 *     timed out runs again (up to three attempts, then kept and counted on the report's '#' line);
 *   - the table's --table-top fastest configurations, and with --retime-list every entry of cuBLASLt's list;
 * then every pick and those are timed again, interleaved, --rounds times (median per configuration; the
 * collector's method, gemm_gpu.h). The best is the fastest of those re-timed. With --retimed-out FILE, every
 * configuration re-timed and its median go to FILE as well (verify.h: collect_retimed_*), labels measured by
 * this method for a table to train on (collect/scripts/gemm_retimed_table.py).
 * Report: one tab-separated row per (shape, model) (COLLECT_REPORT_GEMM_HEADER; the first twelve columns as
 * the convolution verify's, so `heurist-collect summarize` reads both), then '#' summary lines. Each shape's
 * rows are written and flushed together as they come, and --resume continues after the shapes in the report. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "collect.h"
#include "timer.h"
#include "verify.h"
#include "verify_backend.h"
#include "verify_gemm_pool.h"
#include "verify_models.h"

#define MAX_MODELS 16
#define MAX_ROUNDS 16

/* The build's GEMM models, table models (P_rank) first, then tune models (P_tune): model m's name and columns */
static const char *model_name(int m)
{
    return m < verify_n_table_models ? verify_table_models[m].name : verify_tune_models[m - verify_n_table_models].name;
}

static const collect_gemm_model_api *model_api(int m)
{
    return m < verify_n_table_models ? &verify_table_models[m].api : &verify_tune_models[m - verify_n_table_models].api;
}

/* What became of tune models' configurations over the run; with the vendor guard, the shapes whose decoded
 * configuration differed from cuBLASLt's first pick: the guard kept the pick, or the decode replaced it */
typedef struct tune_tally {
    int decoded, in_rows, in_list, new_cfg, refused;
    int kept, replaced;
} tune_tally;

/* 1 when two configurations in a model's kernel columns (n values) are the same */
static int values_equal(const double *a, const double *b, int n)
{
    int j = 0;
    while (j < n && a[j] == b[j]) j++;
    return j == n;
}

/* The pool index of the configuration a tune model wrote (values, in its column order), or -1 when it is none
 * cuBLASLt accepts: a candidate's index through candidate_build, else rebuilt and checked. first: the candidate
 * that is cuBLASLt's first pick where the vendor guard kept it (values are its columns, which name it even where
 * the model has no category for one of its fields), else -1. 0, or a negative COLLECT_E* code on a device
 * error. */
static int tune_build(verify_gemm_backend *b, verify_gemm_pool *pl, const verify_tune_model *md, const double *values,
                      int first, const collect_gemm_config *cfgs, int nc, int n_rows, const int *vrank, const int *hidx,
                      int *built, tune_tally *tt, int *out)
{
    collect_gemm_config cfg;
    *out = -1;
    tt->decoded++;
    int c = first;
    if (c < 0) {
        if (collect_gemm_model_config(&md->api, md->category_name, values, &cfg)) {
            tt->refused++;
            return 0;
        }
        c = 0;
        while (c < nc && !collect_gemm_config_equal(&cfgs[c], &cfg)) c++;
    }
    if (c < nc) {
        tt->in_rows += c < n_rows;
        tt->in_list += c >= n_rows;
        int rc = verify_gemm_candidate_build(b, pl, cfgs, vrank, hidx, built, c);
        if (rc < 0) return rc;
        *out = built[c];
    } else {
        tt->new_cfg++;
        const char *why = NULL;
        int handle, rc = b->build(b, &cfg, &handle, &why);
        if (rc < 0) return rc;
        if (rc == 0) *out = verify_gemm_pool_add(pl, &cfg, handle);
    }
    tt->refused += *out < 0;
    return 0;
}

/* The GPU's backend, or the fake one under HEURIST_COLLECT_FAKE (and in a build without CUDA: the tests). */
static int backend_open(verify_gemm_backend *b, const verify_gemm_opts *o)
{
#ifdef HEURIST_COLLECT_CUDA
    if (!collect_timer_is_fake()) return verify_gemm_backend_open_gpu(b, o);
#endif
    return verify_gemm_backend_open_fake(b, o);
}

/* A tune model's entry and what became of its configurations, as one line (prefix "# " in the report, where
 * "# model P" begins a model's summary) */
static void tune_tally_print(FILE *f, const char *prefix, const verify_tune_model *md, const tune_tally *tt)
{
    fprintf(f, "%stune model %s decides with %s_%s", prefix, md->name, md->name, md->tune_vendor ? "tune_vendor" : "tune");
    if (md->tune_vendor) fprintf(f, " (the vendor guard, margin %g, given cuBLASLt's first pick)", md->guard_margin);
    fprintf(f, ": %d configurations written this run: %d among the table's rows, %d among cuBLASLt's list only, %d new; "
               "%d refused (cuBLASLt's first pick instead)",
            tt->decoded, tt->in_rows, tt->in_list, tt->new_cfg, tt->refused);
    if (md->tune_vendor)
        fprintf(f, "; the decode differed from cuBLASLt's first pick on %d shapes: the guard kept the pick on %d, the "
                   "decode replaced it on %d",
                tt->kept + tt->replaced, tt->kept, tt->replaced);
    fprintf(f, "\n");
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Seconds spent per part of the run, for the closing line. */
enum { PART_HEURISTIC, PART_DECIDE, PART_BUILD, PART_LIST, PART_SHORTLISTS, PART_RETIME, PART_COUNT };
static const char *const part_names[PART_COUNT] = {"heuristic call", "decisions", "AlgoCheck", "list timing",
                                                   "shortlists", "re-timing"};

int cmd_verify_gemm(int argc, char **argv)
{
    static const char *const known[] = {"--table", "--out", "--repeats", "--rounds", "--noise-ratio", "--time-limit",
                                        "--limit", "--heuristic-count", "--min-batch-us", "--max-batch",
                                        "--workspace-mib", "--top-k", "--shapes", "--source", "--table-top",
                                        "--tune-candidates", "--shortlist-timing", "--shortlist-rounds", "--retimed-out",
                                        NULL};
    static const char *const flags[] = {"--no-list", "--resume", "--shortlist-fill", "--retime-list", NULL};
    if (cli_check(argc, argv, known, flags)) return 2;
    const char *table = cli_opt(argc, argv, "--table"), *out = cli_opt(argc, argv, "--out");
    const char *shapes_path = cli_opt(argc, argv, "--shapes"), *source = cli_opt(argc, argv, "--source");
    const char *retimed_path = cli_opt(argc, argv, "--retimed-out");
    double repeats, rounds_d, noise, limit, max_shapes, n_heur_d, min_batch, max_batch, ws_mib, topk_d, ttop_d, srounds;
    if (cli_number(argc, argv, "--repeats", 3, 1, COLLECT_GEMM_MAX_REPEATS, &repeats) ||
        cli_number(argc, argv, "--rounds", 3, 1, MAX_ROUNDS, &rounds_d) ||
        cli_number(argc, argv, "--noise-ratio", 1.0, 1.0, 1e3, &noise) ||
        cli_number(argc, argv, "--time-limit", 0, 0, 1e9, &limit) ||
        cli_number(argc, argv, "--limit", 0, 0, 1e9, &max_shapes) ||
        cli_number(argc, argv, "--heuristic-count", 32, 1, VERIFY_GEMM_MAX_HEUR, &n_heur_d) ||
        cli_number(argc, argv, "--min-batch-us", 100, 0, 1e6, &min_batch) ||
        cli_number(argc, argv, "--max-batch", 64, 1, 1e4, &max_batch) ||
        cli_number(argc, argv, "--workspace-mib", 32, 0, 1 << 16, &ws_mib) ||
        cli_number(argc, argv, "--top-k", 0, 0, VERIFY_GEMM_MAX_HEUR, &topk_d) ||
        cli_number(argc, argv, "--table-top", 1, 1, 64, &ttop_d) ||
        cli_number(argc, argv, "--shortlist-rounds", 5, 1, MAX_ROUNDS, &srounds))
        return 2;
    const char *timing = cli_opt(argc, argv, "--shortlist-timing");
    if (timing && strcmp(timing, "careful") && strcmp(timing, "interleaved")) {
        fprintf(stderr, "heurist-collect verify: --shortlist-timing '%s': expected careful or interleaved\n", timing);
        return 2;
    }
    verify_shortlist_how how = {
        timing && !strcmp(timing, "interleaved") ? VERIFY_SHORTLIST_INTERLEAVED : VERIFY_SHORTLIST_CAREFUL,
        (int)srounds, 0, 0, 0};
    if (cli_opt(argc, argv, "--shortlist-rounds") && how.timing != VERIFY_SHORTLIST_INTERLEAVED) {
        fprintf(stderr, "heurist-collect verify: --shortlist-rounds applies to --shortlist-timing interleaved\n");
        return 2;
    }
    /* the list's entries, or a shortlist (K and cuBLASLt's first pick), times the rounds: one pass's launches */
    const int pass_n = n_heur_d > topk_d + 1 ? (int)n_heur_d : (int)topk_d + 1;
    if (how.timing == VERIFY_SHORTLIST_INTERLEAVED && pass_n * how.rounds > VERIFY_GEMM_MAX_PASS_LAUNCHES) {
        fprintf(stderr, "heurist-collect verify: --shortlist-rounds %d with passes of up to %d configurations "
                        "(--heuristic-count, --top-k + 1): at most %d launches a pass\n",
                how.rounds, pass_n, VERIFY_GEMM_MAX_PASS_LAUNCHES);
        return 2;
    }
    int no_list = cli_flag(argc, argv, "--no-list"), resume = cli_flag(argc, argv, "--resume");
    int fill = cli_flag(argc, argv, "--shortlist-fill"), retime_list = cli_flag(argc, argv, "--retime-list");
    /* what a tune model decodes within: the shape's rows and the list's entries, the list alone (all a deployed
     * tuner has for a shape no table holds), or the list's first N entries (list:N) */
    const char *tune_cands = cli_opt(argc, argv, "--tune-candidates");
    int tune_list = 0, tune_top = 0;
    if (tune_cands && strcmp(tune_cands, "rows")) {
        const char *n = strncmp(tune_cands, "list", 4) ? NULL : tune_cands + 4;
        char *end = NULL;
        long top = n && n[0] == ':' && n[1] >= '1' && n[1] <= '9' ? strtol(n + 1, &end, 10) : 0;
        if (!n || (*n && (!end || *end || top > VERIFY_GEMM_MAX_HEUR))) {
            fprintf(stderr, "heurist-collect verify: --tune-candidates '%s': expected rows, list or list:N (N from 1 to "
                            "%d)\n", tune_cands, VERIFY_GEMM_MAX_HEUR);
            return 2;
        }
        tune_list = 1;
        tune_top = (int)top;
    }
    if (!table || !out) {
        fprintf(stderr, "heurist-collect verify: --table and --out are required\n");
        return 2;
    }
    /* an output is never written over an input: the report, the re-timed file or its PATH.tmp over the table, the
     * shape list or the report */
    char retimed_tmp[4096] = "";
    if (retimed_path) snprintf(retimed_tmp, sizeof retimed_tmp, "%s.tmp", retimed_path);
    const char *const reads[][2] = {{"--table", table}, {"--shapes", shapes_path}, {"--out", out}};
    const char *const writes[][2] = {{"--out", out}, {"--retimed-out", retimed_path}, {"--retimed-out", retimed_tmp}};
    if (cli_written_over("heurist-collect verify", writes, 3, reads, 3)) return 2;
    int n_models = verify_n_table_models + verify_n_tune_models;
    if (n_models < 1 || n_models > MAX_MODELS) {
        fprintf(stderr, n_models < 1 ? "heurist-collect verify: this build holds no model of the GEMM table (its models "
                                       "select convolution kernels: verify --problems)\n"
                                     : "heurist-collect verify: too many models in the build\n");
        return 2;
    }
    int rounds = (int)rounds_d, n_heur = (int)n_heur_d, topk = (int)topk_d, ttop = (int)ttop_d;
    double t_start = cli_now_s(), part[PART_COUNT] = {0};
    collect_gemm_measured *shapes = NULL;
    collect_gemm_tags tags = {0};
    char **done = NULL;
    int n_shapes = 0, n_read = 0, n_done = 0, has_header = 0, rc = 1;
    FILE *fo = NULL;
    verify_gemm_backend be = {0};
    double *pv = NULL, *kv = NULL, *t = NULL;
    float *scores = NULL;
    int *ranking = NULL, *vrank = NULL, *built = NULL, *sl = NULL;
    int16_t *vrank16 = NULL;
    collect_gemm_config *cfgs = NULL;
    char *rowbuf = NULL;
    size_t rowcap = 8192 * (size_t)n_models;
    verify_gemm_pool pl = {0};
    collect_retimed_out ro = {0};
    if (collect_gemm_measured_read(table, &shapes, &n_read)) goto fail;
    if (shapes_path && collect_gemm_tags_read(shapes_path, &tags)) goto fail;
    if (resume && collect_report_resume(out, COLLECT_REPORT_GEMM_HEADER, &done, &n_done, &has_header)) goto fail;
    if (retimed_path && collect_retimed_open(&ro, retimed_path, done, n_done, resume)) goto fail;
    n_shapes = n_read;
    if (max_shapes > 0 && n_shapes > (int)max_shapes) n_shapes = (int)max_shapes;
    int max_c = 1, max_np = 1, max_nk = 1;
    size_t amax = 0, bmax = 0, dmax = 0;
    for (int i = 0; i < n_shapes; i++) {
        size_t a, b, d;
        collect_gemm_shape_bytes(&shapes[i].s, &a, &b, &d);
        amax = a > amax ? a : amax;
        bmax = b > bmax ? b : bmax;
        dmax = d > dmax ? d : dmax;
        if (shapes[i].n > max_c) max_c = shapes[i].n;
    }
    max_c += VERIFY_GEMM_MAX_HEUR;
    for (int m = 0; m < n_models; m++) {
        const collect_gemm_model_api *api = model_api(m);
        if (api->n_problem > max_np) max_np = api->n_problem;
        if (api->n_kernel > max_nk) max_nk = api->n_kernel;
    }
    const int pool_cap = VERIFY_GEMM_MAX_HEUR + ttop + n_models * (topk + 2) + 1;
    double tuned[MAX_MODELS][64], first[MAX_MODELS][64], plain[64];
    int guard_kept[MAX_MODELS];
    tune_tally tally[MAX_MODELS] = {{0}};
    if (max_nk > 64) {
        collect_error(COLLECT_EINVAL, "a model has %d kernel columns, at most 64", max_nk);
        goto fail;
    }
    if (verify_gemm_pool_init(&pl, pool_cap)) goto fail;
    t = malloc((size_t)pl.cap * MAX_ROUNDS * sizeof *t);
    pv = malloc((size_t)max_np * sizeof *pv);
    kv = malloc((size_t)max_c * (size_t)max_nk * sizeof *kv);
    scores = malloc((size_t)max_c * sizeof *scores);
    ranking = malloc((size_t)n_models * (size_t)max_c * sizeof *ranking);
    vrank = malloc((size_t)max_c * sizeof *vrank);
    vrank16 = malloc((size_t)max_c * sizeof *vrank16);
    built = malloc((size_t)max_c * sizeof *built);
    sl = malloc((size_t)(VERIFY_GEMM_MAX_HEUR + topk + 2) * sizeof *sl);
    cfgs = malloc((size_t)max_c * sizeof *cfgs);
    rowbuf = malloc(rowcap);
    if (!t || !pv || !kv || !scores || !ranking || !vrank || !vrank16 || !built || !sl || !cfgs || !rowbuf) {
        collect_error(COLLECT_ENOMEM, "out of memory");
        goto fail;
    }
    if (!(fo = fopen(out, has_header ? "a" : "w"))) {
        collect_error(COLLECT_EIO, "%s: cannot open for writing", out);
        goto fail;
    }
    if (!has_header && (fputs(COLLECT_REPORT_GEMM_HEADER, fo) == EOF || fflush(fo))) {
        collect_error(COLLECT_EIO, "%s: write failed", out);
        goto fail;
    }
    verify_gemm_opts bo = {amax, bmax, dmax, (size_t)(ws_mib * 1048576.0), (int)repeats, (int)max_batch, min_batch};
    if (backend_open(&be, &bo)) goto fail;
    be.describe(&be, stdout);
    for (int m = 0; m < n_models; m++) {
        const collect_gemm_model_api *api = model_api(m);
        if (m < verify_n_table_models)
            printf("model %s: a table model of %d problem and %d kernel columns, %d configurations known\n", model_name(m),
                   api->n_problem, api->n_kernel, verify_table_models[m].n_configs());
        else
            printf("model %s: a tune model of %d problem and %d kernel columns, writing a configuration (%s_%s)\n",
                   model_name(m), api->n_problem, api->n_kernel, model_name(m),
                   verify_tune_models[m - verify_n_table_models].tune_vendor ? "tune_vendor: the vendor guard" : "tune");
    }
    printf("%d shapes in %s (%d already in the report); %d interleaved rounds of %d batches (>= %.0f us each); "
           "cuBLASLt's list %s; shortlists: %s%d; the table's %d fastest re-timed%s\n",
           n_shapes, table, n_done, rounds, (int)repeats, min_batch, no_list ? "not timed" : "timed", topk ? "top-" : "",
           topk, ttop, retime_list ? ", and every entry of the list" : "");
    if (retimed_path) printf("the re-timed configurations and their medians to %s\n", retimed_path);
    if (!no_list || topk) {
        if (how.timing == VERIFY_SHORTLIST_INTERLEAVED)
            printf("the list and shortlists timed interleaved: each in one pass of %d rounds, one launch of each of its "
                   "configurations a round, behind a hold\n", how.rounds);
        else
            printf("the list and shortlists timed carefully: each configuration once by the collector's method, "
                   "shared between them\n");
    }
    fflush(stdout);
    cli_tally skipped = {0};
    int stopped = 0, measured = 0, resumed = 0;
    double longest = 0;
    for (int i = 0; i < n_shapes; i++) {
        const collect_gemm_measured *sh = &shapes[i];
        char key[128];
        collect_gemm_shape_key(&sh->s, key, sizeof key);
        const char *kp = key;
        if (n_done && bsearch(&kp, done, (size_t)n_done, sizeof *done, cmp_key)) {
            resumed++;
            continue;
        }
        double t0 = cli_now_s();
        if (limit > 0 && t0 - t_start + (longest * 2 > 3 ? longest * 2 : 3) > limit) {
            stopped = 1;
            break;
        }
        const char *tag = shapes_path ? collect_gemm_tags_find(&tags, key) : NULL;
        if (!tag) tag = source ? source : "-";
        const char *why = NULL;
        int pr = be.problem(&be, &sh->s, key, &why);
        if (pr) {
            if (pr < 0) goto fail;
            cli_tally_add(&skipped, why);
            continue;
        }
        /* cuBLASLt's heuristic, fresh */
        collect_gemm_config heur[VERIFY_GEMM_MAX_HEUR];
        int nh = 0, hhandle[VERIFY_GEMM_MAX_HEUR];
        double hus = 0, d0 = cli_now_s();
        int hrc = be.heuristic(&be, n_heur, heur, hhandle, &nh, &hus);
        if (hrc < 0) goto fail;
        if (hrc) nh = 0;
        part[PART_HEURISTIC] += cli_now_s() - d0;
        /* the candidates: the shape's timed configurations and any list entry missing from them, each with its
         * rank in the list */
        int nc = 0;
        for (int c = 0; c < sh->n; c++) cfgs[nc++] = sh->rows[c].cfg;
        for (int k = 0; k < nh; k++) {
            int c = 0;
            while (c < nc && !collect_gemm_config_equal(&cfgs[c], &heur[k])) c++;
            if (c == nc) cfgs[nc++] = heur[k];
        }
        for (int c = 0; c < nc; c++) {
            vrank[c] = -1;
            built[c] = -2; /* not built yet */
            for (int k = 0; k < nh && vrank[c] < 0; k++)
                if (collect_gemm_config_equal(&cfgs[c], &heur[k])) vrank[c] = k;
            vrank16[c] = (int16_t)vrank[c];
        }
        /* each model's decision over them, as a deployed runtime makes it */
        double decide_us[MAX_MODELS];
        d0 = cli_now_s();
        int hrank[VERIFY_GEMM_MAX_HEUR], c_first = -1;
        for (int k = 0; k < nh; k++) hrank[k] = k;
        for (int c = 0; c < nc && c_first < 0; c++)
            if (vrank[c] == 0) c_first = c;
        for (int m = 0; m < n_models; m++) {
            const int tune = m >= verify_n_table_models, listed = tune && tune_list;
            const verify_tune_model *tm = tune ? &verify_tune_models[m - verify_n_table_models] : NULL;
            const int nk = model_api(m)->n_kernel, n_in = !listed ? nc : tune_top && tune_top < nh ? tune_top : nh;
            if (collect_gemm_model_values(model_api(m), &sh->s, listed ? heur : cfgs, listed ? hrank : vrank, n_in, pv,
                                          kv)) {
                be.problem_end(&be);
                goto fail;
            }
            /* a guarded tuner's first pick: the candidate of rank 0 in the model's columns */
            const double *fp = NULL;
            if (tm && tm->tune_vendor && c_first >= 0) {
                memcpy(first[m], kv + (size_t)(listed ? 0 : c_first) * (size_t)nk, (size_t)nk * sizeof *kv);
                fp = first[m];
            }
            /* at least 3 calls, then up to 200 while they take under 2 ms */
            int reps = 0, trc = 0;
            double m0 = cli_now_s(), el;
            do {
                if (tm && tm->tune_vendor) trc = tm->tune_vendor(pv, kv, n_in, fp, tuned[m]);
                else if (tm) trc = tm->tune(pv, kv, n_in, tuned[m]);
                else if (verify_table_models[m].rank_vendor)
                    verify_table_models[m].rank_vendor(pv, kv, nc, vrank16, scores, ranking + (size_t)m * max_c);
                else verify_table_models[m].rank(pv, kv, nc, scores, ranking + (size_t)m * max_c);
                el = cli_now_s() - m0;
            } while (++reps < 200 && (reps < 3 || el < 2e-3));
            decide_us[m] = el * 1e6 / reps;
            if (trc == -2) {
                collect_error(COLLECT_EINVAL, "%s: model %s refuses the shape's candidates or cuBLASLt's first pick", key,
                              tm->name);
                be.problem_end(&be);
                goto fail;
            }
            /* where the guarded configuration is the first pick, whether the decode alone differed (the guard kept
             * the pick): one unguarded call, outside the timing */
            guard_kept[m] = fp && values_equal(tuned[m], fp, nk);
            if (fp && !guard_kept[m]) tally[m].replaced++;
            if (guard_kept[m] && tm->tune(pv, kv, n_in, plain) != -2 && !values_equal(plain, fp, nk)) tally[m].kept++;
        }
        part[PART_DECIDE] += cli_now_s() - d0;
        /* the pool: the heuristic's list, each model's accepted candidates in its order, the table's fastest */
        pl.n = 0;
        int hidx[VERIFY_GEMM_MAX_HEUR];
        for (int k = 0; k < nh; k++) hidx[k] = verify_gemm_pool_add(&pl, &heur[k], hhandle[k]);
        int order[MAX_MODELS][VERIFY_GEMM_MAX_HEUR + 2], n_order[MAX_MODELS], fallbacks[MAX_MODELS], missing = 0;
        int want = topk > 1 ? topk : 1;
        d0 = cli_now_s();
        for (int m = 0; m < n_models; m++) {
            const int *rk = ranking + (size_t)m * max_c;
            n_order[m] = fallbacks[m] = 0;
            if (m >= verify_n_table_models) {
                /* a tune model's configuration, or cuBLASLt's first pick where cuBLASLt refuses it */
                int u;
                if (tune_build(&be, &pl, &verify_tune_models[m - verify_n_table_models], tuned[m],
                               guard_kept[m] ? c_first : -1, cfgs, nc, sh->n, vrank, hidx, built, &tally[m], &u) < 0)
                    goto fail;
                if (u < 0 && nh > 0) {
                    fallbacks[m] = 1;
                    u = hidx[0];
                }
                if (u >= 0) order[m][n_order[m]++] = u;
                missing |= n_order[m] == 0;
                continue;
            }
            for (int r = 0; r < nc && n_order[m] < want; r++) {
                int c = rk[r];
                if (verify_gemm_candidate_build(&be, &pl, cfgs, vrank, hidx, built, c) < 0) goto fail;
                if (built[c] < 0) {
                    if (n_order[m] == 0) fallbacks[m]++;
                    continue;
                }
                order[m][n_order[m]++] = built[c];
            }
            missing |= n_order[m] == 0;
        }
        int tops[64], n_tops = 0;
        for (int j = 0; j < ttop && j < sh->n; j++) {
            /* the j-th fastest row */
            int best = -1;
            for (int c = 0; c < sh->n; c++) {
                int used = 0;
                for (int q = 0; q < j; q++) used |= tops[q] == c;
                if (!used && (best < 0 || sh->rows[c].time_us < sh->rows[best].time_us)) best = c;
            }
            tops[j] = best;
        }
        int ttop_idx[64];
        for (int j = 0; j < ttop && j < sh->n; j++) {
            if (verify_gemm_candidate_build(&be, &pl, cfgs, vrank, hidx, built, tops[j]) < 0) goto fail;
            if (built[tops[j]] >= 0) ttop_idx[n_tops++] = built[tops[j]];
        }
        part[PART_BUILD] += cli_now_s() - d0;
        if (missing || nh == 0) {
            be.problem_end(&be);
            cli_tally_add(&skipped, missing ? "no candidate of a model passed AlgoCheck" : "no heuristic entry");
            continue;
        }
        int ih = hidx[0], fatal = 0, il = -1, vt_pick = -1, tk_pick[MAX_MODELS], tk_n[MAX_MODELS];
        double autotune_ms = 0, vt_cost = 0, tk_cost[MAX_MODELS];
        /* autotuning over the whole list: each entry timed once */
        d0 = cli_now_s();
        if (!no_list) fatal = verify_gemm_shortlist_time(&be, &pl, &how, hidx, nh, &il, &autotune_ms) < 0;
        part[PART_LIST] += cli_now_s() - d0;
        d0 = cli_now_s();
        for (int m = 0; m < n_models && topk && !fatal; m++) {
            if (fill) {
                /* K timings in all: the heuristic's first pick and the model's K - 1 best other candidates */
                int others[VERIFY_GEMM_MAX_HEUR + 2], n_others = 0;
                for (int r = 0; r < n_order[m]; r++)
                    if (order[m][r] != ih) others[n_others++] = order[m][r];
                tk_n[m] = collect_shortlist(others, n_others, NULL, topk - 1, ih, sl);
            } else {
                tk_n[m] = collect_shortlist(order[m], n_order[m], NULL, topk, ih, sl);
            }
            fatal = verify_gemm_shortlist_time(&be, &pl, &how, sl, tk_n[m], &tk_pick[m], &tk_cost[m]) < 0;
        }
        if (topk && !fatal) {
            int n = collect_shortlist(hidx, nh, NULL, topk, -1, sl);
            fatal = verify_gemm_shortlist_time(&be, &pl, &how, sl, n, &vt_pick, &vt_cost) < 0;
        }
        part[PART_SHORTLISTS] += cli_now_s() - d0;
        if (fatal) {
            be.problem_end(&be);
            goto fail;
        }
        int no_topk = topk && vt_pick < 0;
        for (int m = 0; m < n_models && topk; m++) no_topk |= tk_pick[m] < 0;
        if (no_topk) {
            be.problem_end(&be);
            cli_tally_add(&skipped, "no configuration of a shortlist ran");
            continue;
        }
        /* interleaved re-timing of every pick and the table's fastest */
        int set[VERIFY_GEMM_MAX_HEUR + 64 + 4 * MAX_MODELS], n_set = 0;
#define SET_ADD(u)                                                                                                     \
    do {                                                                                                               \
        int u_ = (u), dup_ = 0;                                                                                        \
        for (int q_ = 0; q_ < n_set; q_++) dup_ |= set[q_] == u_;                                                      \
        if (u_ >= 0 && !dup_) set[n_set++] = u_;                                                                       \
    } while (0)
        for (int m = 0; m < n_models; m++) SET_ADD(order[m][0]);
        SET_ADD(ih);
        SET_ADD(il);
        for (int j = 0; j < n_tops; j++) SET_ADD(ttop_idx[j]);
        for (int m = 0; m < n_models && topk; m++) SET_ADD(tk_pick[m]);
        if (topk) SET_ADD(vt_pick);
        for (int k = 0; k < nh && retime_list; k++) SET_ADD(hidx[k]);
#undef SET_ADD
        d0 = cli_now_s();
        for (int r = 0; r < rounds && !fatal; r++)
            for (int u = 0; u < n_set && !fatal; u++) {
                double us;
                const char *w2 = NULL;
                int trc = be.time(&be, pl.handle[set[u]], &us, &w2);
                if (trc < 0) fatal = 1;
                t[(size_t)u * MAX_ROUNDS + r] = trc ? INFINITY : us;
            }
        part[PART_RETIME] += cli_now_s() - d0;
        be.problem_end(&be);
        if (fatal) goto fail;
        double med[VERIFY_GEMM_MAX_HEUR + 64 + 4 * MAX_MODELS];
        int ib = 0;
        for (int u = 0; u < n_set; u++) {
            med[u] = collect_median(t + (size_t)u * MAX_ROUNDS, rounds);
            if (med[u] < med[ib]) ib = u;
        }
        int bad = 0;
        for (int u = 0; u < n_set; u++) bad |= !isfinite(med[u]) && (set[u] == ih || set[u] == il);
        for (int m = 0; m < n_models; m++)
            for (int u = 0; u < n_set; u++) bad |= !isfinite(med[u]) && (set[u] == order[m][0] ||
                                                                      (topk && set[u] == tk_pick[m]));
        for (int u = 0; u < n_set && topk; u++) bad |= !isfinite(med[u]) && set[u] == vt_pick;
        if (bad) {
            cli_tally_add(&skipped, "a pick failed to run when re-timed");
            continue;
        }
        size_t used = 0;
        char nm_h[256], nm_b[256], nm_l[256] = "-", nm_vt[256] = "-", tl_s[32] = "-", at_s[32] = "-";
        double med_of[4] = {0};
        for (int u = 0; u < n_set; u++) {
            if (set[u] == ih) med_of[0] = med[u];
            if (set[u] == il) med_of[1] = med[u];
            if (topk && set[u] == vt_pick) med_of[2] = med[u];
        }
        collect_gemm_config_name(&pl.cfg[ih], nm_h, sizeof nm_h);
        collect_gemm_config_name(&pl.cfg[set[ib]], nm_b, sizeof nm_b);
        if (il >= 0) {
            collect_gemm_config_name(&pl.cfg[il], nm_l, sizeof nm_l);
            snprintf(tl_s, sizeof tl_s, "%.6g", med_of[1]);
            snprintf(at_s, sizeof at_s, "%.3f", autotune_ms);
        }
        if (topk) collect_gemm_config_name(&pl.cfg[vt_pick], nm_vt, sizeof nm_vt);
        for (int m = 0; m < n_models; m++) {
            double tm = 0, ttk = 0;
            for (int u = 0; u < n_set; u++) {
                if (set[u] == order[m][0]) tm = med[u];
                if (topk && set[u] == tk_pick[m]) ttk = med[u];
            }
            char nm_m[256], nm_tk[256] = "-", tail[1024];
            const char *timed = !no_list || topk ? verify_shortlist_timing_names[how.timing] : "-";
            collect_gemm_config_name(&pl.cfg[order[m][0]], nm_m, sizeof nm_m);
            if (topk) {
                collect_gemm_config_name(&pl.cfg[tk_pick[m]], nm_tk, sizeof nm_tk);
                snprintf(tail, sizeof tail, "%d\t%d\t%s\t%.6g\t%.3f\t%s\t%.6g\t%.3f\t%s", topk, tk_n[m], nm_tk, ttk,
                         tk_cost[m], nm_vt, med_of[2], vt_cost, timed);
            } else {
                snprintf(tail, sizeof tail, "-\t-\t-\t-\t-\t-\t-\t-\t%s", timed);
            }
            int w = snprintf(rowbuf + used, rowcap - used,
                             "%s\t%s\t%s\t%s\t%.6g\t%.6g\t%.6g\t%.4f\t%.4f\t%.3f\t%.1f\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t"
                             "%s\n",
                             key, nm_m, nm_h, nm_b, tm, med_of[0], med[ib], med_of[0] / tm, med[ib] / tm, decide_us[m],
                             hus, at_s, nm_l, tl_s, nc, nh, fallbacks[m], model_name(m), tag, tail);
            if (w < 0 || (size_t)w >= rowcap - used) {
                collect_error(COLLECT_EINVAL, "%s: a report row longer than %zu bytes", key, rowcap);
                goto fail;
            }
            used += (size_t)w;
        }
        /* the re-timed configurations first: a report row never precedes its shape's re-timings */
        if (retimed_path) {
            collect_gemm_config rcfg[VERIFY_GEMM_MAX_HEUR + 64 + 4 * MAX_MODELS];
            for (int u = 0; u < n_set; u++) rcfg[u] = pl.cfg[set[u]];
            if (collect_retimed_write(&ro, key, rcfg, med, n_set)) goto fail;
        }
        if (fwrite(rowbuf, 1, used, fo) != used || fflush(fo)) {
            collect_error(COLLECT_EIO, "%s: write failed", out);
            goto fail;
        }
        measured++;
        double dt = cli_now_s() - t0;
        if (dt > longest) longest = dt;
        if (measured % 50 == 0) {
            printf("%d/%d shapes, %.1f s\n", i + 1, n_shapes, cli_now_s() - t_start);
            fflush(stdout);
        }
    }
    printf("%d shapes verified, %d already in the report, %.1f s\n", measured, resumed, cli_now_s() - t_start);
    if (stopped) printf("stopped by --time-limit: run again with --resume to continue\n");
    cli_tally_print(&skipped, stdout, "shapes skipped");
    /* each tune model's entry and tally, also in the report before its summary */
    for (int m = verify_n_table_models; m < n_models; m++) {
        tune_tally_print(stdout, "", &verify_tune_models[m - verify_n_table_models], &tally[m]);
        tune_tally_print(fo, "# ", &verify_tune_models[m - verify_n_table_models], &tally[m]);
    }
    if (how.timing == VERIFY_SHORTLIST_INTERLEAVED && (!no_list || topk)) {
        verify_gemm_shortlist_how_print(stdout, "", &how);
        verify_gemm_shortlist_how_print(fo, "# ", &how);
    }
    if (ferror(fo)) {
        collect_error(COLLECT_EIO, "%s: write failed", out);
        goto fail;
    }
    int frc = collect_report_finish(fo, out, "shape", measured, cli_now_s() - t_start, PART_COUNT, part_names, part,
                                    noise);
    fo = NULL;
    if (frc || collect_retimed_close(&ro)) goto fail;
    /* 3: stopped by --time-limit with shapes left (--resume continues) */
    rc = stopped ? 3 : 0;
    goto cleanup;
fail:
    fprintf(stderr, "heurist-collect verify: %s\n", collect_last_error());
    collect_retimed_abandon(&ro);
cleanup:
    if (be.close) be.close(&be);
    if (fo && fclose(fo)) rc = 1;
    for (int i = 0; i < n_done; i++) free(done[i]);
    free(done);
    collect_gemm_tags_free(&tags);
    collect_gemm_measured_free(shapes, n_read);
    verify_gemm_pool_free(&pl);
    free(t);
    free(pv);
    free(kv);
    free(scores);
    free(vrank16);
    free(ranking);
    free(vrank);
    free(built);
    free(sl);
    free(cfgs);
    free(rowbuf);
    return rc;
}
