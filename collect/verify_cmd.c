/* heurist-collect verify, for convolutions: exported heurist selection models' picks against cuDNN's
 * heuristic pick and a fresh best, on the GPU, per problem (verify.h for the CPU part, verify_models.h for
 * the models of the build).
 *
 * Per problem, under its precision class (--precision, or the list's column; FP32 problems only: the
 * kernels the class allows, data/portable.h):
 *   - each model's decision as a deployed runtime makes it (select_key, then its best allowed kernel of the
 *     direction; decide_us the mean of 3 to 50 calls, as many as fit 2 ms) and cuDNN's v7 heuristic asked with the class's math type;
 *   - the candidates: every allowed kernel timed once more (the collection's method, gpu.h), or with --fdb the
 *     collected find-db's allowed entries, no timing (the cheap mode);
 *   - with --find-cost, one cudnnFind*AlgorithmEx call on the same tensors, timed (the exhaustive search's cost;
 *     the kernels it ran and their reported times summed beside it: find_algos, find_kernel_ms), after an untimed
 *     one and an untimed pass over the shortlists' kernels, so that both sides run warm; with --shortlist-timing
 *     batch the untimed pass runs without --find-cost too (a kernel's first launch in the process loads it: its
 *     warm-up call's host time would leave the pass unheld, and its timed launches would then measure the host's
 *     launch rate);
 *   - a model's pick is its highest-scored candidate, the heuristic's pick the first of its list among them;
 *   - with --top-k K, each model's shortlist (its K best candidates, one per algorithm unless --shortlist-by
 *     kernel, plus the heuristic's pick when not among them) and cuDNN's first K are each timed once and the
 *     fastest kept, as torch.backends.cudnn.benchmark does; a kernel timed for one shortlist is not timed
 *     again for another, its time and cost shared; each timed by the collection's method (--shortlist-timing
 *     careful), or as a runtime would afford it (once: one warm-up, one launch timed; batch: each shortlist
 *     one pass of its own, one launch each behind one hold, its cost the pass's wall time; with
 *     --shortlist-warmup a warm-up of each first and every kernel launched again behind the hold, with
 *     --shortlist-retime-within F the warm-ups timed and only the kernels within F of the fastest warm-up
 *     launched again), the cost compared with cudnnFind's;
 *   - every pick, the shortlists' picks and the best candidates (the exhaustive timing's fastest, or the
 *     find-db's --fdb-top fastest) are timed again, interleaved, --rounds times; median per kernel. The
 *     fresh best is the fastest of them.
 * Report: one tab-separated row per (problem, model) (COLLECT_REPORT_CONV_HEADER), then '#' summary lines
 * (collect_report_tail over the whole file, so a resumed run's are complete). Each problem's rows are written
 * and flushed together as they come (no temporary file and rename) so that a run stopped early keeps them, and
 * --resume continues after the problems already in the report. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "data/portable.h"
#include "timer.h"
#include "verify.h"
#include "verify_backend.h"
#include "verify_models.h"

#define MAX_MODELS 16
#define MAX_RES (8 * COLLECT_MATH_COUNT)
#define MAX_ROUNDS 16

/* A model's kernel vocabulary in cuDNN's terms and its scores for the current problem. */
typedef struct model_vocab {
    const verify_select_model *api;
    int n;
    collect_dir *dir;   /* (n): direction of each kernel, -1 if not a cuDNN name */
    int *algo, *math;   /* (n) */
    char *allowed;      /* (n): of the problem's direction and allowed by its class */
    float *scores;      /* (n) */
} model_vocab;

static void vocab_free(model_vocab *v)
{
    free(v->dir);
    free(v->algo);
    free(v->math);
    free(v->allowed);
    free(v->scores);
}

static int vocab_init(model_vocab *v, const verify_select_model *api)
{
    memset(v, 0, sizeof *v);
    v->api = api;
    v->n = api->n_kernels();
    size_t n = (size_t)(v->n > 0 ? v->n : 1);
    v->dir = calloc(n, sizeof *v->dir);
    v->algo = calloc(n, sizeof *v->algo);
    v->math = calloc(n, sizeof *v->math);
    v->allowed = calloc(n, 1);
    v->scores = calloc(n, sizeof *v->scores);
    if (!v->dir || !v->algo || !v->math || !v->allowed || !v->scores)
        return collect_error(COLLECT_ENOMEM, "out of memory");
    for (int k = 0; k < v->n; k++) {
        const char *name = api->kernel_name(k);
        if (collect_kernel_parse(name, strlen(name), &v->dir[k], &v->algo[k], &v->math[k])) v->dir[k] = (collect_dir)-1;
    }
    return COLLECT_OK;
}

/* The model's scores as a deployed runtime gives them: a runtime with the vendor guard (select_key_vendor) given
 * cuDNN's list in its kernel indices (vendor, n_vendor), any other the key alone; -1 when the key does not parse. */
static int model_scores(model_vocab *v, const char *key, const int *vendor, int n_vendor)
{
    if (v->api->select_key_vendor) return v->api->select_key_vendor(key, vendor, n_vendor, v->scores) < 0 ? -1 : 0;
    return v->api->select_key(key, v->scores) < 0 ? -1 : 0;
}

/* The model's decision as a deployed runtime makes it: scores, then its best allowed kernel; -1 when the key
 * does not parse. */
static int model_decide(model_vocab *v, const char *key, const int *vendor, int n_vendor)
{
    if (model_scores(v, key, vendor, n_vendor) < 0) return -1;
    int best = -1;
    for (int k = 0; k < v->n; k++)
        if (v->allowed[k] && (best < 0 || v->scores[k] > v->scores[best])) best = k;
    return best;
}

static int res_find(const collect_result *res, int n, int algo, int math)
{
    for (int r = 0; r < n; r++)
        if (res[r].algo == algo && res[r].math == math) return r;
    return -1;
}

/* Seconds spent per part of the run, for the closing line. */
enum { PART_DECIDE, PART_HEURISTIC, PART_CANDIDATES, PART_WARM, PART_FIND, PART_SHORTLISTS, PART_RETIME, PART_COUNT };
static const char *const part_names[PART_COUNT] = {"decisions", "heuristic call", "candidates", "warm-ups",
                                                   "cudnnFind", "shortlists", "re-timing"};

/* How a shortlist's kernels are timed: the collection's method (warm-up, repeats behind a spin), one warm-up
 * and one timed launch each, or the whole shortlist in one pass (warm-ups, then every timed launch queued behind
 * a hold, one synchronisation): what a runtime choosing among K kernels on the fly can afford. */
typedef enum shortlist_timing { SHORTLIST_CAREFUL, SHORTLIST_ONCE, SHORTLIST_BATCH, SHORTLIST_COUNT } shortlist_timing;
static const char *const shortlist_timing_names[SHORTLIST_COUNT] = {"careful", "once", "batch"};

/* The passes of --shortlist-timing batch: how many, how their holds went, their launches and the host's wait
 * between timed warm-ups and the launches again. */
typedef struct pass_tally {
    int passes, reruns, timed_out, spin, unheld, launches;
    double sync_ms;
} pass_tally;

/* Times candidate r once (no bound), unless a shortlist already did: its time (INFINITY when cuDNN rejects
 * it) and the wall time spent. 0, or negative on a fatal CUDA error. */
static int time_single(verify_conv_backend *b, shortlist_timing how, const collect_result *res, int r, double *t1,
                       double *c1)
{
    if (!isnan(t1[r])) return 0;
    size_t ws;
    const char *why = NULL;
    double a0 = cli_now_s();
    int rc = how == SHORTLIST_ONCE ? b->time_once(b, res[r].algo, res[r].math, &t1[r], &why)
                                   : b->time(b, res[r].algo, res[r].math, 0, &t1[r], &ws, &why);
    c1[r] = (cli_now_s() - a0) * 1e3;
    if (rc < 0) return rc;
    if (rc > 0) t1[r] = INFINITY;
    return 0;
}

/* Candidates sl[0..n) timed in one pass of the backend's time_list as o says: their times (t, INFINITY when
 * refused) and the pass's wall time, the pass tallied in pt. 0, or negative on a fatal CUDA error. */
static int list_run(verify_conv_backend *b, const verify_list_opts *o, const collect_result *res, const int *sl, int n,
                    double *t, double *wall_ms, pass_tally *pt)
{
    int a[MAX_RES + 1], m[MAX_RES + 1];
    for (int i = 0; i < n; i++) {
        a[i] = res[sl[i]].algo;
        m[i] = res[sl[i]].math;
    }
    verify_list_timing lt;
    int rc = b->time_list(b, a, m, n, o, t, &lt);
    if (rc) return rc < 0 ? rc : collect_error(COLLECT_EIO, "a shortlist pass failed");
    *wall_ms = lt.wall_ms;
    pt->passes++;
    pt->reruns += lt.reruns;
    pt->timed_out += lt.timed_out;
    pt->spin |= lt.spin;
    pt->unheld += lt.unheld;
    pt->launches += lt.launches;
    pt->sync_ms += lt.sync_ms;
    return 0;
}

/* A shortlist timed: its fastest entry (-1 when none ran) and the time spent on all of them. With batch timing
 * the shortlist is one pass of its own and its cost that pass's wall time; otherwise a kernel timed for an
 * earlier shortlist keeps its time and cost (t1, c1). */
static int shortlist_run(verify_conv_backend *b, shortlist_timing how, const verify_list_opts *o,
                         const collect_result *res, const int *sl, int n, double *t1, double *c1, pass_tally *pt,
                         int *pick, double *cost)
{
    *pick = -1;
    *cost = 0;
    if (how == SHORTLIST_BATCH) {
        double t[MAX_RES + 1];
        int rc = list_run(b, o, res, sl, n, t, cost, pt);
        if (rc) return rc;
        int best = -1;
        for (int i = 0; i < n; i++)
            if (isfinite(t[i]) && (best < 0 || t[i] < t[best])) best = i;
        *pick = best < 0 ? -1 : sl[best];
        return 0;
    }
    for (int i = 0; i < n; i++) {
        int rc = time_single(b, how, res, sl[i], t1, c1);
        if (rc < 0) return rc;
        *cost += c1[sl[i]];
        if (isfinite(t1[sl[i]]) && (*pick < 0 || t1[sl[i]] < t1[*pick])) *pick = sl[i];
    }
    return 0;
}

/* The GPU's backend, or the fake one under HEURIST_COLLECT_FAKE (and in a build without CUDA: the tests). */
static int backend_open(verify_conv_backend *b, const verify_conv_opts *o)
{
#ifdef HEURIST_COLLECT_CUDA
    if (!collect_timer_is_fake()) return verify_conv_backend_open_gpu(b, o);
#endif
    return verify_conv_backend_open_fake(b, o);
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cmd_verify(int argc, char **argv)
{
    static const char *const known[] = {"--problems", "--out", "--repeats", "--rounds", "--noise-ratio", "--time-limit",
                                        "--min-repeat-ms", "--workspace-mib", "--limit", "--top-k", "--shortlist-by",
                                        "--precision", "--source", "--fdb", "--fdb-top", "--shortlist-timing",
                                        "--shortlist-retime-within", NULL};
    static const char *const flags[] = {"--no-find", "--find-cost", "--resume", "--shortlist-no-warmup",
                                        "--shortlist-warmup", NULL};
    if (cli_check(argc, argv, known, flags)) return 2;
    const char *problems = cli_opt(argc, argv, "--problems"), *out = cli_opt(argc, argv, "--out");
    const char *by = cli_opt(argc, argv, "--shortlist-by"), *prec = cli_opt(argc, argv, "--precision");
    const char *source = cli_opt(argc, argv, "--source"), *fdb_path = cli_opt(argc, argv, "--fdb");
    const char *timing = cli_opt(argc, argv, "--shortlist-timing");
    double repeats, rounds_d, noise, limit, min_ms, ws_mib, max_problems, topk_d, fdb_top_d, retime_within;
    if (cli_number(argc, argv, "--repeats", 5, 1, COLLECT_CONV_MAX_REPEATS, &repeats) ||
        cli_number(argc, argv, "--rounds", 3, 1, MAX_ROUNDS, &rounds_d) ||
        cli_number(argc, argv, "--noise-ratio", 1.0, 1.0, 1e3, &noise) ||
        cli_number(argc, argv, "--time-limit", 0, 0, 1e9, &limit) ||
        cli_number(argc, argv, "--min-repeat-ms", 0.2, 0, 1e3, &min_ms) ||
        cli_number(argc, argv, "--workspace-mib", 4096, 0, 1 << 20, &ws_mib) ||
        cli_number(argc, argv, "--limit", 0, 0, 1e9, &max_problems) ||
        cli_number(argc, argv, "--top-k", 0, 0, MAX_RES, &topk_d) ||
        cli_number(argc, argv, "--fdb-top", 3, 1, MAX_RES, &fdb_top_d) ||
        cli_number(argc, argv, "--shortlist-retime-within", 0, 0, 1e3, &retime_within))
        return 2;
    int find_cost = cli_flag(argc, argv, "--find-cost"), resume = cli_flag(argc, argv, "--resume");
    int cls_default = prec ? collect_precision_parse(prec, strlen(prec)) : DATA_PRECISION_TF32;
    if (!problems || !out) {
        fprintf(stderr, "heurist-collect verify: --problems and --out are required\n");
        return 2;
    }
    /* the report is written as it goes, so it is never one of the inputs: the problem list or the find-db */
    const char *const reads[][2] = {{"--problems", problems}, {"--fdb", fdb_path}};
    const char *const writes[][2] = {{"--out", out}};
    if (cli_written_over("heurist-collect verify", writes, 1, reads, 2)) return 2;
    const char *cls_default_name = data_portable_precision_name(cls_default);
    if (!cls_default_name || (by && strcmp(by, "algo") && strcmp(by, "kernel"))) {
        fprintf(stderr, "heurist-collect verify: %s '%s': expected %s\n", cls_default < 0 ? "--precision" : "--shortlist-by",
                cls_default < 0 ? prec : by, cls_default < 0 ? "strict, tf32 or conversion" : "algo or kernel");
        return 2;
    }
    shortlist_timing how = SHORTLIST_CAREFUL;
    if (timing) {
        while (how < SHORTLIST_COUNT && strcmp(timing, shortlist_timing_names[how])) how++;
        if (how == SHORTLIST_COUNT) {
            fprintf(stderr, "heurist-collect verify: --shortlist-timing '%s': expected careful, once or batch\n", timing);
            return 2;
        }
    }
    /* how a batch pass launches its kernels: by default one launch each behind the hold, as cudnnFind runs each
     * algorithm once (on one H200 as accurate as warm-ups then every kernel again, at about half the cost:
     * docs/BENCHMARKS.md, Shortlist passes on the H200); --shortlist-warmup warms each kernel up first,
     * --shortlist-retime-within times those warm-ups */
    int want_warm = cli_flag(argc, argv, "--shortlist-warmup"), no_warm = cli_flag(argc, argv, "--shortlist-no-warmup");
    verify_list_opts list_opts = {want_warm || retime_within > 0, retime_within};
    const char *bad_pass = (want_warm || no_warm || retime_within > 0) && how != SHORTLIST_BATCH
                               ? "--shortlist-warmup, --shortlist-no-warmup and --shortlist-retime-within choose "
                                 "how a pass launches: they need --shortlist-timing batch"
                           : retime_within > 0 && retime_within < 1
                               ? "--shortlist-retime-within: a factor of 1 or more (0: every kernel launched again)"
                           : no_warm && (want_warm || retime_within > 0)
                               ? "--shortlist-no-warmup: not with --shortlist-warmup or --shortlist-retime-within, "
                                 "which warm the kernels up"
                               : NULL;
    if (bad_pass) {
        fprintf(stderr, "heurist-collect verify: %s\n", bad_pass);
        return 2;
    }
    /* the report's shortlist_timing: the mode, and for batch how its pass launches (batch alone: warm-ups, then
     * every kernel again) */
    char timing_name[64];
    if (how == SHORTLIST_BATCH && !list_opts.warmup) snprintf(timing_name, sizeof timing_name, "batch-no-warmup");
    else if (retime_within > 0) snprintf(timing_name, sizeof timing_name, "batch-retime-%g", retime_within);
    else snprintf(timing_name, sizeof timing_name, "%s", shortlist_timing_names[how]); /* batch: with warm-ups */
    if (verify_n_select_models < 1) {
        fprintf(stderr, "heurist-collect verify: this build holds no selection model of a find-db (its models rank "
                        "GEMM configurations: verify --table)\n");
        return 2;
    }
    if (verify_n_select_models > MAX_MODELS) {
        fprintf(stderr, "heurist-collect verify: %d models in the build, at most %d\n", verify_n_select_models, MAX_MODELS);
        return 2;
    }
    int rounds = (int)rounds_d, topk = (int)topk_d, fdb_top = (int)fdb_top_d, by_algo = !by || !strcmp(by, "algo");
    int n_models = verify_n_select_models;
    double t_start = cli_now_s(), part[PART_COUNT] = {0};
    model_vocab vocab[MAX_MODELS];
    memset(vocab, 0, sizeof vocab);
    collect_problem *list = NULL;
    collect_file fdb = {0};
    char **done = NULL;
    int n_list = 0, n_read = 0, n_done = 0, has_header = 0, rc = 1, resumed = 0;
    FILE *fo = NULL;
    char *rowbuf = NULL;
    size_t rowcap = 8192 * (size_t)n_models;
    verify_conv_backend be = {0};
    for (int m = 0; m < n_models; m++)
        if (vocab_init(&vocab[m], &verify_select_models[m])) goto fail;
    if (collect_problems_read(problems, source ? source : "-", &list, &n_read)) goto fail;
    n_list = n_read;
    if (max_problems > 0 && n_list > (int)max_problems) n_list = (int)max_problems;
    if (fdb_path && collect_file_read(fdb_path, &fdb)) goto fail;
    if (resume && collect_report_resume(out, COLLECT_REPORT_CONV_HEADER, &done, &n_done, &has_header)) goto fail;
    if (!(rowbuf = malloc(rowcap))) {
        collect_error(COLLECT_ENOMEM, "out of memory");
        goto fail;
    }
    if (!(fo = fopen(out, has_header ? "a" : "w"))) {
        collect_error(COLLECT_EIO, "%s: cannot open for writing", out);
        goto fail;
    }
    if (!has_header && (fputs(COLLECT_REPORT_CONV_HEADER, fo) == EOF || fflush(fo))) {
        collect_error(COLLECT_EIO, "%s: write failed", out);
        goto fail;
    }
    verify_conv_opts bo = {(int)repeats, min_ms, (size_t)(ws_mib * 1048576.0)};
    if (backend_open(&be, &bo)) goto fail;
    be.describe(&be, stdout);
    for (int m = 0; m < n_models; m++) printf("model %s: %d kernels\n", vocab[m].api->name, vocab[m].n);
    static const char *const how_text[SHORTLIST_COUNT] = {
        "each timed by the collection's method", "each timed by one launch after a warm-up",
        "each timed in one pass: warm-ups, then every launch behind one hold, one synchronisation"};
    char how_line[256];
    if (how == SHORTLIST_BATCH && !list_opts.warmup)
        snprintf(how_line, sizeof how_line, "each timed in one pass: one launch each behind one hold, no warm-up");
    else if (retime_within > 0)
        snprintf(how_line, sizeof how_line, "each timed in one pass: warm-ups timed, a synchronisation, then behind "
                 "one hold only the kernels within x%g of the fastest warm-up launched again", retime_within);
    else snprintf(how_line, sizeof how_line, "%s", how_text[how]);
    printf("%d problems in %s (%d already in the report); precision %s for FP32 problems without a class; "
           "%d interleaved rounds; candidates: %s; shortlists: %s%d (%s, %s); cudnnFind %s\n",
           n_list, problems, n_done, cls_default_name, rounds,
           fdb_path ? "the find-db's entries (no exhaustive timing)" : "every allowed kernel timed", topk ? "top-" : "",
           topk, by_algo ? "one kernel per algorithm" : "every kernel", how_line,
           !find_cost ? "not timed"
           : topk     ? "timed warm, as the shortlists are (an untimed cudnnFind and an untimed pass over the "
                        "shortlists' kernels first)"
                      : "timed warm (an untimed cudnnFind first)");
    if (fdb_path) printf("find-db %s: %d lines; its %d fastest allowed kernels are re-timed\n", fdb_path, fdb.n, fdb_top);
    fflush(stdout);
    cli_tally skipped = {0}, cand = {0};
    pass_tally passes = {0};
    int warm_passes = 0; /* problems verified whose shortlists' kernels ran once untimed before their timing */
    int stopped = 0, measured = 0;
    double longest = 0;
    for (int i = 0; i < n_list; i++) {
        const char *key = list[i].key;
        if (n_done && bsearch(&key, done, (size_t)n_done, sizeof *done, cmp_key)) {
            resumed++;
            continue;
        }
        double t0 = cli_now_s();
        if (limit > 0 && t0 - t_start + (longest * 2 > 3 ? longest * 2 : 3) > limit) {
            stopped = 1;
            break;
        }
        collect_conv cv;
        if (collect_conv_from_key(key, strlen(key), &cv)) {
            cli_tally_add(&skipped, "key not supported");
            continue;
        }
        int cls = list[i].precision >= 0 ? list[i].precision : cls_default;
        int hmath = collect_heuristic_math(cls, cv.dtype);
        const collect_line *line = NULL;
        if (fdb_path) {
            int li = collect_file_find(&fdb, key);
            if (li < 0) {
                cli_tally_add(&skipped, "not in the find-db");
                continue;
            }
            line = &fdb.lines[li];
        }
        const char *why = NULL;
        int pr = be.problem(&be, &cv, key, &why);
        if (pr) {
            if (pr < 0) goto fail;
            cli_tally_add(&skipped, why);
            continue;
        }
        /* cuDNN's heuristic (one call), then each model's decision as a deployed runtime makes it (many calls,
         * averaged), a guarded runtime's given cuDNN's list */
        int ha[64], hm[64], nh = 0, va[64], vm[64], nv = 0;
        double heur_us = 0, d0 = cli_now_s();
        if (be.heuristic(&be, hmath, ha, hm, 64, &nh, &heur_us)) cli_tally_add(&cand, "heuristic call failed");
        part[PART_HEURISTIC] += cli_now_s() - d0;
        nv = collect_heuristic_kernels(cls, cv.dtype, cv.dir, hmath, ha, hm, nh, va, vm);
        double decide_us[MAX_MODELS];
        int parsed = 1;
        d0 = cli_now_s();
        for (int m = 0; m < n_models && parsed; m++) {
            model_vocab *v = &vocab[m];
            int vk[64];
            for (int k = 0; k < v->n; k++)
                v->allowed[k] = v->dir[k] == cv.dir && collect_kernel_allowed(cls, cv.dtype, cv.dir, v->algo[k], v->math[k]);
            /* cuDNN's list in the model's kernel indices (-1: a kernel the model does not know) */
            for (int j = 0; j < nv; j++) {
                vk[j] = -1;
                for (int k = 0; k < v->n && vk[j] < 0; k++)
                    if (v->dir[k] == cv.dir && v->algo[k] == va[j] && v->math[k] == vm[j]) vk[j] = k;
            }
            if (model_scores(v, key, vk, nv) < 0) {
                parsed = 0;
                break;
            }
            /* at least 3 calls, then up to 50 while they take under 2 ms */
            int reps = 0;
            double m0 = cli_now_s(), el;
            do {
                model_decide(v, key, vk, nv);
                el = cli_now_s() - m0;
            } while (++reps < 50 && (reps < 3 || el < 2e-3));
            decide_us[m] = el * 1e6 / reps;
        }
        part[PART_DECIDE] += cli_now_s() - d0;
        if (!parsed) {
            be.problem_end(&be);
            cli_tally_add(&skipped, "a model does not parse the key");
            continue;
        }
        /* the candidates: every allowed kernel timed, heuristic's order first, or the find-db's entries */
        collect_result res[MAX_RES];
        int n_res = 0;
        d0 = cli_now_s();
        if (line) {
            if (collect_fdb_candidates(line, cv.dir, cv.dtype, cls, res, MAX_RES, &n_res)) {
                be.problem_end(&be);
                goto fail;
            }
        } else {
            int ca[MAX_RES], cm[MAX_RES];
            int nc = collect_conv_candidates(cv.dir, cv.dtype, cls, va, vm, nv, ca, cm);
            double bound = 0;
            for (int c = 0; c < nc; c++) {
                double ms;
                size_t ws;
                int trc = be.time(&be, ca[c], cm[c], bound, &ms, &ws, &why);
                if (trc < 0) {
                    be.problem_end(&be);
                    goto fail;
                }
                if (trc > 0) {
                    cli_tally_add(&cand, why);
                    continue;
                }
                res[n_res++] = (collect_result){ca[c], cm[c], ms, ws};
                if (bound == 0 || ms < bound) bound = ms;
            }
        }
        part[PART_CANDIDATES] += cli_now_s() - d0;
        /* the picks among the candidates */
        int order[MAX_MODELS][MAX_RES], n_order[MAX_MODELS], ih = -1, missing = 0;
        for (int m = 0; m < n_models; m++) {
            float s[MAX_RES];
            const model_vocab *v = &vocab[m];
            collect_candidate_scores(res, n_res, v->algo, v->math, v->allowed, v->scores, v->n, s);
            n_order[m] = collect_rank_scores(s, n_res, order[m]);
            missing |= n_order[m] == 0;
        }
        int vorder[64], nvo = 0;
        for (int k = 0; k < nv; k++) {
            int r = res_find(res, n_res, va[k], vm[k]);
            if (r < 0) continue;
            if (ih < 0) ih = r;
            int dup = 0;
            for (int j = 0; j < nvo; j++) dup |= vorder[j] == r;
            if (!dup) vorder[nvo++] = r;
        }
        if (n_res == 0 || missing || ih < 0) {
            be.problem_end(&be);
            cli_tally_add(&skipped, n_res == 0 ? "no allowed kernel ran" : missing ? "a model knows no runnable kernel"
                                                                                   : "no heuristic pick among the candidates");
            continue;
        }
        /* the shortlists: each model's (with the heuristic's pick), then cuDNN's first k */
        int group[MAX_RES], tk_pick[MAX_MODELS], tk_n[MAX_MODELS], vt_pick = -1, vt_n = 0;
        int tk_sl[MAX_MODELS][MAX_RES + 1], vt_sl[MAX_RES + 1];
        for (int r = 0; r < n_res; r++) group[r] = by_algo ? res[r].algo : r;
        for (int m = 0; m < n_models && topk; m++) tk_n[m] = collect_shortlist(order[m], n_order[m], group, topk, ih, tk_sl[m]);
        if (topk) vt_n = collect_shortlist(vorder, nvo, group, topk, -1, vt_sl);
        /* cudnnFind's cost against the shortlists', both warm: CUDA loads a kernel on its first launch in the
         * process (lazy module loading), so whichever side ran a kernel first would pay for loading it. An
         * untimed cudnnFind and an untimed pass over the shortlists' kernels load both sides' kernels first. */
        double find_ms = 0, find_kernel_ms = 0;
        int find_algos = 0, fatal = 0, warm_pass = topk && (find_cost || how == SHORTLIST_BATCH);
        if (find_cost || warm_pass) {
            d0 = cli_now_s();
            if (find_cost) be.find(&be, hmath, &find_ms, &find_algos, &find_kernel_ms);
            if (warm_pass) {
                int warm[MAX_RES], n_warm = 0;
                char in_warm[MAX_RES] = {0};
                for (int m = 0; m <= n_models; m++) {
                    const int *sl = m < n_models ? tk_sl[m] : vt_sl;
                    for (int j = 0; j < (m < n_models ? tk_n[m] : vt_n); j++)
                        if (!in_warm[sl[j]]) {
                            in_warm[sl[j]] = 1;
                            warm[n_warm++] = sl[j];
                        }
                }
                double t[MAX_RES], wall;
                pass_tally untimed = {0};
                static const verify_list_opts every = {1, 0};
                fatal = list_run(&be, &every, res, warm, n_warm, t, &wall, &untimed) < 0;
            }
            part[PART_WARM] += cli_now_s() - d0;
            d0 = cli_now_s();
            if (find_cost && !fatal && be.find(&be, hmath, &find_ms, &find_algos, &find_kernel_ms))
                cli_tally_add(&cand, "cudnnFind failed");
            part[PART_FIND] += cli_now_s() - d0;
        }
        /* shortlists: each kernel timed once, the fastest kept */
        double t1[MAX_RES], c1[MAX_RES];
        for (int r = 0; r < n_res; r++) t1[r] = c1[r] = NAN;
        double tk_cost[MAX_MODELS], vt_cost = 0;
        d0 = cli_now_s();
        for (int m = 0; m < n_models && topk && !fatal; m++)
            fatal = shortlist_run(&be, how, &list_opts, res, tk_sl[m], tk_n[m], t1, c1, &passes, &tk_pick[m],
                                  &tk_cost[m]) < 0;
        if (topk && !fatal)
            fatal = shortlist_run(&be, how, &list_opts, res, vt_sl, vt_n, t1, c1, &passes, &vt_pick, &vt_cost) < 0;
        part[PART_SHORTLISTS] += cli_now_s() - d0;
        if (fatal) {
            be.problem_end(&be);
            goto fail;
        }
        int no_topk = 0;
        for (int m = 0; m < n_models && topk; m++) no_topk |= tk_pick[m] < 0;
        if (topk && (no_topk || vt_pick < 0)) {
            be.problem_end(&be);
            cli_tally_add(&skipped, "no kernel of a shortlist ran");
            continue;
        }
        /* the kernels re-timed: every pick and the best candidates */
        int set[MAX_RES], n_set = 0;
        char in_set[MAX_RES] = {0};
#define SET_ADD(r)                                                                                                     \
    do {                                                                                                               \
        if (!in_set[r]) {                                                                                              \
            in_set[r] = 1;                                                                                             \
            set[n_set++] = (r);                                                                                        \
        }                                                                                                              \
    } while (0)
        for (int m = 0; m < n_models; m++) SET_ADD(order[m][0]);
        SET_ADD(ih);
        if (line) {
            for (int r = 0; r < n_res && r < fdb_top; r++) SET_ADD(r); /* res is fastest first */
        } else {
            int ib = 0;
            for (int r = 1; r < n_res; r++)
                if (res[r].ms < res[ib].ms) ib = r;
            SET_ADD(ib);
        }
        for (int m = 0; m < n_models && topk; m++) SET_ADD(tk_pick[m]);
        if (topk) SET_ADD(vt_pick);
#undef SET_ADD
        d0 = cli_now_s();
        double t[MAX_RES][MAX_ROUNDS];
        for (int r = 0; r < rounds && !fatal; r++)
            for (int u = 0; u < n_set; u++) {
                size_t ws;
                const char *w2 = NULL;
                int trc = be.time(&be, res[set[u]].algo, res[set[u]].math, 0, &t[u][r], &ws, &w2);
                if (trc < 0) fatal = 1;
                if (trc) t[u][r] = res[set[u]].ms;
            }
        part[PART_RETIME] += cli_now_s() - d0;
        be.problem_end(&be);
        if (fatal) goto fail;
        double med[MAX_RES];
        int ib = set[0];
        for (int u = 0; u < n_set; u++) {
            med[set[u]] = collect_median(t[u], rounds);
            if (med[set[u]] < med[ib]) ib = set[u];
        }
        /* one row per model, written together */
        char nm_h[64], nm_b[64], nm_vt[64] = "-";
        collect_kernel_name(cv.dir, res[ih].algo, res[ih].math, nm_h, sizeof nm_h);
        collect_kernel_name(cv.dir, res[ib].algo, res[ib].math, nm_b, sizeof nm_b);
        if (topk) collect_kernel_name(cv.dir, res[vt_pick].algo, res[vt_pick].math, nm_vt, sizeof nm_vt);
        const char *cls_name = cv.dtype == COLLECT_DTYPE_FP32 ? data_portable_precision_name(cls) : "-";
        char find_s[32] = "-", find_k[64] = "-\t-";
        if (find_ms > 0) {
            snprintf(find_s, sizeof find_s, "%.3f", find_ms);
            snprintf(find_k, sizeof find_k, "%d\t%.4g", find_algos, find_kernel_ms);
        }
        size_t used = 0;
        for (int m = 0; m < n_models; m++) {
            int im = order[m][0];
            char nm_m[64], nm_tk[64] = "-", tail[256];
            collect_kernel_name(cv.dir, res[im].algo, res[im].math, nm_m, sizeof nm_m);
            if (topk) {
                collect_kernel_name(cv.dir, res[tk_pick[m]].algo, res[tk_pick[m]].math, nm_tk, sizeof nm_tk);
                snprintf(tail, sizeof tail, "%d\t%d\t%s\t%.6g\t%.3f\t%s\t%.6g\t%.3f\t%s\t%s", topk, tk_n[m], nm_tk,
                         med[tk_pick[m]], tk_cost[m], nm_vt, med[vt_pick], vt_cost, timing_name, find_k);
            } else {
                snprintf(tail, sizeof tail, "-\t-\t-\t-\t-\t-\t-\t-\t-\t%s", find_k);
            }
            int w = snprintf(rowbuf + used, rowcap - used,
                             "%s\t%s\t%s\t%s\t%.6g\t%.6g\t%.6g\t%.4f\t%.4f\t%.3f\t%.1f\t%s\t%s\t%s\t%s\t%s\n", key, nm_m,
                             nm_h, nm_b, med[im], med[ih], med[ib], med[ih] / med[im], med[ib] / med[im], decide_us[m],
                             heur_us, find_s, vocab[m].api->name, list[i].source, cls_name, tail);
            if (w < 0 || (size_t)w >= rowcap - used) {
                collect_error(COLLECT_EINVAL, "%s: a report row longer than %zu bytes", key, rowcap);
                goto fail;
            }
            used += (size_t)w;
        }
        if (fwrite(rowbuf, 1, used, fo) != used || fflush(fo)) {
            collect_error(COLLECT_EIO, "%s: write failed", out);
            goto fail;
        }
        measured++;
        warm_passes += warm_pass;
        double dt = cli_now_s() - t0;
        if (dt > longest) longest = dt;
        if (measured % 50 == 0) {
            printf("%d/%d problems, %.1f s\n", i + 1, n_list, cli_now_s() - t_start);
            fflush(stdout);
        }
    }
    printf("%d problems verified, %d already in the report, %.1f s\n", measured, resumed, cli_now_s() - t_start);
    if (stopped) printf("stopped by --time-limit: run again with --resume to continue\n");
    cli_tally_print(&skipped, stdout, "problems skipped");
    cli_tally_print(&cand, stdout, "candidates rejected");
    if (passes.passes) {
        printf("shortlist passes: %d, held by %s; not held (a warm-up's call took 0.5 ms of host time or more): %d; "
               "hold timed out and the pass run again: %d; timed out on the last run (times may include the host's "
               "gaps): %d\n",
               passes.passes, passes.spin ? "a spin (mapped pinned memory not available for the hold)" : "the hold",
               passes.unheld, passes.reruns, passes.timed_out);
        printf("shortlist launches: %d (%.2f a pass); the host's wait between timed warm-ups and the launches "
               "again: %.1f ms in all\n", passes.launches, (double)passes.launches / passes.passes, passes.sync_ms);
    }
    if (warm_passes) printf("shortlists timed warm: their kernels launched once untimed first on %d problems\n", warm_passes);
    int frc = collect_report_finish(fo, out, "problem", measured, cli_now_s() - t_start, PART_COUNT, part_names, part,
                                    noise);
    fo = NULL;
    if (frc) goto fail;
    /* 3: stopped by --time-limit with problems left (--resume continues) */
    rc = stopped ? 3 : 0;
    goto cleanup;
fail:
    fprintf(stderr, "heurist-collect verify: %s\n", collect_last_error());
cleanup:
    if (be.close) be.close(&be);
    if (fo && fclose(fo)) rc = 1;
    free(rowbuf);
    for (int i = 0; i < n_done; i++) free(done[i]);
    free(done);
    collect_file_free(&fdb);
    collect_problems_free(list, n_read);
    for (int m = 0; m < n_models; m++) vocab_free(&vocab[m]);
    return rc;
}
