/* collect: the CPU part of verify (collect/verify.h): problem lists with their tags, precision classes,
 * shortlists, GEMM families, the report read back (the shipped reports too), resume, slices, summaries and
 * bootstrap intervals, against hand-computed values. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "collect.h"
#include "data/portable.h"
#include "helpers/testutil.h"
#include "verify.h"

static char *tmp_text(const char *tag, const char *text)
{
    return test_tmpfile(tag, text, strlen(text));
}

static char *file_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

#define KEY_F "64-56-56-3x3-64-56-56-8-1x1-1x1-1x1-0-NCHW-FP32-F"
#define KEY_W_DW "216-16-14-14-3x3x3-216-16-28-28-4-1x1x1-1x2x2-1x1x1-0-NCDHW-FP16-W_g216"
#define KEY_B_G "192-36-36-3x3-192-36-36-32-1x1-1x1-1x1-0-NCHW-BF16-B_g4"

Test(collect_verify, problem_list_plain_with_tags)
{
    char *path = tmp_text(".keys", "# comment\n\n" KEY_F "\n" KEY_W_DW "  resnet50\n" KEY_B_G " unet strict\n"
                                   KEY_F "=FWD_GEMM.default:1,0,c\n");
    collect_problem *p;
    int n;
    cr_assert_eq(collect_problems_read(path, "pool", &p, &n), 0, "%s", collect_last_error());
    cr_assert_eq(n, 4);
    cr_assert_str_eq(p[0].key, KEY_F);
    cr_assert_str_eq(p[0].source, "pool");
    cr_assert_eq(p[0].precision, -1);
    cr_assert_str_eq(p[1].source, "resnet50");
    cr_assert_str_eq(p[2].key, KEY_B_G);
    cr_assert_str_eq(p[2].source, "unet");
    cr_assert_eq(p[2].precision, DATA_PRECISION_STRICT);
    cr_assert_str_eq(p[3].key, KEY_F); /* a find-db line gives its key */
    cr_assert_str_eq(p[3].source, "pool");
    collect_problems_free(p, n);
    remove(path);
    free(path);
}

Test(collect_verify, problem_list_table_by_column_name)
{
    /* networks.tsv's layout: the network is the source; "precision" names the class */
    char *path = tmp_text(".tsv", "key\tnetwork\tlayer\tfamily\tprecision\n" KEY_F "\tresnet18\tconv1\tresnet\tconversion\n"
                                  KEY_W_DW "\tx3d_m\ts4\tvideo3d\t\n");
    collect_problem *p;
    int n;
    cr_assert_eq(collect_problems_read(path, "-", &p, &n), 0, "%s", collect_last_error());
    cr_assert_eq(n, 2);
    cr_assert_str_eq(p[0].source, "resnet18");
    cr_assert_eq(p[0].precision, DATA_PRECISION_CONVERSION);
    cr_assert_str_eq(p[1].key, KEY_W_DW);
    cr_assert_str_eq(p[1].source, "x3d_m");
    cr_assert_eq(p[1].precision, -1);
    collect_problems_free(p, n);
    remove(path);
    free(path);
    /* the shipped network set reads with its networks */
    char shipped[4096];
    snprintf(shipped, sizeof shipped, "%s/h100/networks/networks.tsv", HEURIST_DATASETS_DIR);
    cr_assert_eq(collect_problems_read(shipped, "-", &p, &n), 0, "%s", collect_last_error());
    cr_assert_eq(n, 9000);
    cr_assert_str_eq(p[0].source, "vgg16");
    collect_problems_free(p, n);
}

Test(collect_verify, problem_list_errors_name_the_line)
{
    char *path = tmp_text(".keys", KEY_F "\n" KEY_F " pool fp64\n");
    collect_problem *p;
    int n;
    cr_assert_eq(collect_problems_read(path, "-", &p, &n), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), ":2: precision class 'fp64'"), "%s", collect_last_error());
    cr_assert_null(p);
    cr_assert_eq(n, 0);
    remove(path);
    free(path);
    path = tmp_text(".keys", KEY_F " a tf32 extra\n");
    cr_assert_eq(collect_problems_read(path, "-", &p, &n), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), ":1: expected KEY [SOURCE [PRECISION]]"), "%s", collect_last_error());
    remove(path);
    free(path);
    cr_assert_eq(collect_problems_read("/nonexistent/keys.txt", "-", &p, &n), COLLECT_EIO);
}

/* the pairs of a candidate list as kernel names joined by spaces */
static void names(collect_dir dir, const int *a, const int *m, int n, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        char k[64];
        cr_assert_eq(collect_kernel_name(dir, a[i], m[i], k, sizeof k), 0);
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? " " : "", k);
    }
}

Test(collect_verify, precision_classes_filter_kernels)
{
    enum { DEF = COLLECT_MATH_DEFAULT, TC = COLLECT_MATH_TENSOR_OP, CONV = COLLECT_MATH_TENSOR_OP_ALLOW_CONVERSION,
           FMA = COLLECT_MATH_FMA };
    cr_assert(collect_kernel_allowed(DATA_PRECISION_STRICT, COLLECT_DTYPE_FP32, COLLECT_DIR_F, 1, FMA));
    cr_assert_not(collect_kernel_allowed(DATA_PRECISION_STRICT, COLLECT_DTYPE_FP32, COLLECT_DIR_F, 1, DEF));
    cr_assert(collect_kernel_allowed(DATA_PRECISION_TF32, COLLECT_DTYPE_FP32, COLLECT_DIR_F, 1, TC));
    cr_assert_not(collect_kernel_allowed(DATA_PRECISION_TF32, COLLECT_DTYPE_FP32, COLLECT_DIR_F, 1, CONV));
    cr_assert(collect_kernel_allowed(DATA_PRECISION_CONVERSION, COLLECT_DTYPE_FP32, COLLECT_DIR_F, 1, CONV));
    /* the class applies to FP32 only */
    cr_assert(collect_kernel_allowed(DATA_PRECISION_STRICT, COLLECT_DTYPE_FP16, COLLECT_DIR_W, 0, CONV));
    cr_assert_eq(collect_heuristic_math(DATA_PRECISION_STRICT, COLLECT_DTYPE_FP32), FMA);
    cr_assert_eq(collect_heuristic_math(DATA_PRECISION_TF32, COLLECT_DTYPE_FP32), DEF);
    cr_assert_eq(collect_heuristic_math(DATA_PRECISION_CONVERSION, COLLECT_DTYPE_FP32), CONV);
    cr_assert_eq(collect_heuristic_math(DATA_PRECISION_STRICT, COLLECT_DTYPE_BF16), TC);
    cr_assert_eq(collect_precision_parse("tf32", 4), DATA_PRECISION_TF32);
    cr_assert_eq(collect_precision_parse("tf3", 3), -1);

    /* cuDNN's list under strict FP32: an entry reported with another math type runs with FMA, the descriptor's */
    int ha[5] = {1, 0, 1, 9, 2}, hm[5] = {DEF, FMA, FMA, FMA, CONV}, ka[5], km[5];
    char buf0[512];
    int nk = collect_heuristic_kernels(DATA_PRECISION_STRICT, COLLECT_DTYPE_FP32, COLLECT_DIR_F, FMA, ha, hm, 5, ka, km);
    names(COLLECT_DIR_F, ka, km, nk, buf0, sizeof buf0);
    cr_assert_str_eq(buf0, "FWD_IMPLICIT_PRECOMP_GEMM.fma FWD_IMPLICIT_GEMM.fma FWD_GEMM.fma", "%s", buf0);
    nk = collect_heuristic_kernels(DATA_PRECISION_CONVERSION, COLLECT_DTYPE_FP32, COLLECT_DIR_F, CONV, ha, hm, 5, ka, km);
    cr_assert_eq(nk, 5 - 1); /* algorithm 9 dropped, every math type allowed */
    nk = collect_heuristic_kernels(DATA_PRECISION_TF32, COLLECT_DTYPE_FP32, COLLECT_DIR_F, DEF, ha, hm, 5, ka, km);
    names(COLLECT_DIR_F, ka, km, nk, buf0, sizeof buf0);
    cr_assert_str_eq(buf0, "FWD_IMPLICIT_PRECOMP_GEMM.default FWD_IMPLICIT_GEMM.fma FWD_IMPLICIT_PRECOMP_GEMM.fma "
                           "FWD_GEMM.default", "%s", buf0);

    /* the heuristic's entries first (a disallowed one and a repeat dropped), then the rest in order */
    int fa[4] = {6, 1, 6, 1}, fm[4] = {FMA, CONV, FMA, FMA}, oa[32], om[32];
    char buf[2048];
    int n = collect_conv_candidates(COLLECT_DIR_B, COLLECT_DTYPE_FP32, DATA_PRECISION_STRICT, fa, fm, 4, oa, om);
    names(COLLECT_DIR_B, oa, om, n, buf, sizeof buf);
    cr_assert_eq(n, 6, "%s", buf); /* six backward-data algorithms, fma only */
    cr_assert_str_eq(buf, "BWD_DATA_ALGO_1.fma BWD_DATA_ALGO_0.fma BWD_DATA_FFT.fma BWD_DATA_FFT_TILING.fma "
                          "BWD_DATA_WINOGRAD.fma BWD_DATA_WINOGRAD_NONFUSED.fma", "%s", buf);
    n = collect_conv_candidates(COLLECT_DIR_F, COLLECT_DTYPE_FP32, DATA_PRECISION_TF32, NULL, NULL, 0, oa, om);
    cr_assert_eq(n, 8 * 3);
    n = collect_conv_candidates(COLLECT_DIR_F, COLLECT_DTYPE_FP16, DATA_PRECISION_STRICT, NULL, NULL, 0, oa, om);
    cr_assert_eq(n, 8 * 4);
}

Test(collect_verify, fdb_candidates_allowed_and_fastest_first)
{
    char *path = tmp_text(".fdb.txt", KEY_F "=FWD_GEMM.fma:3,0,c;FWD_IMPLICIT_GEMM.tensor_op_allow_conversion:1,0,c;"
                                      "FWD_FFT.default:2,0,c;FWD_IMPLICIT_GEMM.tensor_op:2,0,c\n"
                                      "k2=BWD_DATA_ALGO_0.fma:1,0,c\n");
    collect_file f;
    cr_assert_eq(collect_file_read(path, &f), 0, "%s", collect_last_error());
    collect_result res[32];
    int n;
    cr_assert_eq(collect_fdb_candidates(&f.lines[0], COLLECT_DIR_F, COLLECT_DTYPE_FP32, DATA_PRECISION_TF32, res, 32, &n), 0);
    cr_assert_eq(n, 3);
    /* ties by time go by algorithm: FFT (4) after IMPLICIT_GEMM (0) */
    cr_assert_eq(res[0].algo, 0);
    cr_assert_eq(res[0].math, COLLECT_MATH_TENSOR_OP);
    cr_assert_eq(res[1].algo, 4);
    cr_assert_float_eq(res[2].ms, 3.0, 1e-12);
    cr_assert_eq(collect_fdb_candidates(&f.lines[0], COLLECT_DIR_F, COLLECT_DTYPE_FP32, DATA_PRECISION_STRICT, res, 32, &n), 0);
    cr_assert_eq(n, 1);
    cr_assert_eq(collect_fdb_candidates(&f.lines[0], COLLECT_DIR_F, COLLECT_DTYPE_FP32, DATA_PRECISION_CONVERSION, res, 2, &n), 0);
    cr_assert_eq(n, 2); /* at most max, the first ones of the line kept */
    cr_assert_eq(collect_fdb_candidates(&f.lines[1], COLLECT_DIR_F, COLLECT_DTYPE_FP32, DATA_PRECISION_TF32, res, 32, &n),
                 COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "k2: entry 'BWD_DATA_ALGO_0.fma'"), "%s", collect_last_error());
    collect_file_free(&f);
    remove(path);
    free(path);
}

Test(collect_verify, rankings_and_shortlists)
{
    const float s[6] = {0.5f, 2.0f, -INFINITY, 2.0f, 1.0f, NAN};
    int order[6];
    cr_assert_eq(collect_rank_scores(s, 6, order), 4);
    cr_assert_eq(order[0], 1); /* ties to the lower index */
    cr_assert_eq(order[1], 3);
    cr_assert_eq(order[2], 4);
    cr_assert_eq(order[3], 0);

    /* candidates 0..5 of algorithms 7, 7, 2, 7, 5, 2: one per algorithm */
    const int group[6] = {7, 7, 2, 7, 5, 2}, rank[6] = {1, 3, 0, 2, 4, 5};
    int out[8];
    cr_assert_eq(collect_shortlist(rank, 6, group, 2, 4, out), 3); /* 1 (7), 2 (2), then the vendor's 4 */
    cr_assert_eq(out[0], 1);
    cr_assert_eq(out[1], 2);
    cr_assert_eq(out[2], 4);
    cr_assert_eq(collect_shortlist(rank, 6, group, 3, 4, out), 3); /* 1, 2, 4: the vendor's pick among them */
    cr_assert_eq(out[2], 4);
    cr_assert_eq(collect_shortlist(rank, 6, NULL, 2, -1, out), 2); /* every candidate its own: 1, 3 */
    cr_assert_eq(out[1], 3);
    cr_assert_eq(collect_shortlist(rank, 6, group, 5, -1, out), 3); /* three algorithms only */
    /* the vendor's exact kernel is added when only another math type of its algorithm is in the list */
    cr_assert_eq(collect_shortlist(rank, 6, group, 1, 3, out), 2);
    cr_assert_eq(out[0], 1);
    cr_assert_eq(out[1], 3);
    cr_assert_eq(collect_shortlist(rank, 0, group, 3, 0, out), 1);
    cr_assert_eq(out[0], 0);
}

Test(collect_verify, gemm_families_from_a_shapes_file)
{
    char *path = tmp_text(".txt", "# M N K DTYPE TA TB  # FAMILY\n16 1025 128 bf16 N T  # llama3 a.b\n"
                                  "4 8 16 fp32 T N\n16 1025 128 bf16 N T  # bert later\n2 2 2 tf32 N N #vit\n");
    collect_gemm_tags t;
    cr_assert_eq(collect_gemm_tags_read(path, &t), 0, "%s", collect_last_error());
    cr_assert_eq(t.n, 3);
    cr_assert_str_eq(collect_gemm_tags_find(&t, "16,1025,128,bf16,N,T"), "llama3"); /* the first line's family */
    cr_assert_str_eq(collect_gemm_tags_find(&t, "4,8,16,fp32,T,N"), "-");
    cr_assert_str_eq(collect_gemm_tags_find(&t, "2,2,2,tf32,N,N"), "vit");
    cr_assert_null(collect_gemm_tags_find(&t, "1,1,1,fp32,N,N"));
    collect_gemm_tags_free(&t);
    remove(path);
    free(path);
    path = tmp_text(".txt", "16 1025 128 bf16 N T\n16 x 128 bf16 N T\n");
    cr_assert_eq(collect_gemm_tags_read(path, &t), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), ":2:"), "%s", collect_last_error());
    remove(path);
    free(path);
}

/* The shipped reports (twelve and seventeen columns, before shortlists) read back to the summaries they end
 * with; one of 24 columns, before cudnnFind's kernel columns, reads with none counted. */
Test(collect_verify, shipped_reports_summarize_as_recorded)
{
    char path[4096];
    collect_report r;
    collect_verify_summary s;
    snprintf(path, sizeof path, "%s/h100/verify/h100_reformer_verify.tsv.gz", HEURIST_DATASETS_DIR);
    cr_assert_eq(collect_report_read(path, &r), 0, "%s", collect_last_error());
    cr_assert_eq(r.kind, COLLECT_REPORT_CONV);
    cr_assert_eq(r.n, 1500);
    cr_assert_str_eq(r.rows[0].model, "-");
    collect_verify_row *v = malloc((size_t)r.n * sizeof *v);
    for (int i = 0; i < r.n; i++) v[i] = r.rows[i].v;
    cr_assert_eq(collect_verify_summarize(v, r.n, 1.0175, &s), 0);
    /* "# speed-up ... geometric mean 1.0044", "efficiency ... model 0.9930, heuristic 0.9900", "0.0120; 0.0147" */
    cr_assert_float_eq(s.speedup_geomean, 1.0044, 5e-5);
    cr_assert_float_eq(s.efficiency_mean, 0.9930, 5e-5);
    cr_assert_float_eq(s.heur_efficiency_mean, 0.9900, 5e-5);
    cr_assert_float_eq(s.share_slower, 0.0120, 5e-5);
    cr_assert_float_eq(s.find_ms_mean, 19.44, 5e-3);
    cr_assert_eq(s.n_topk, 0);
    char val[64];
    cr_assert_eq(collect_report_field(&r, 0, "dir", val, sizeof val), 0);
    cr_assert_str_eq(val, "B");
    cr_assert_eq(collect_report_field(&r, 0, "dtype", val, sizeof val), 0);
    cr_assert_str_eq(val, "FP16");
    free(v);
    collect_report_free(&r);

    snprintf(path, sizeof path, "%s/h100/verify/h100_gemm_gbdt_vendor_verify.tsv.gz", HEURIST_DATASETS_DIR);
    cr_assert_eq(collect_report_read(path, &r), 0, "%s", collect_last_error());
    cr_assert_eq(r.kind, COLLECT_REPORT_GEMM);
    cr_assert_eq(r.n, 400);
    v = malloc((size_t)r.n * sizeof *v);
    for (int i = 0; i < r.n; i++) v[i] = r.rows[i].v;
    cr_assert_eq(collect_verify_summarize(v, r.n, 1.02, &s), 0);
    /* "geometric mean 1.0481", "model 0.9559, heuristic 0.9202", "autotuning the list 36.62 ms" */
    cr_assert_float_eq(s.speedup_geomean, 1.0481, 5e-5);
    cr_assert_float_eq(s.efficiency_mean, 0.9559, 5e-5);
    cr_assert_float_eq(s.heur_efficiency_mean, 0.9202, 5e-5);
    cr_assert_float_eq(s.find_ms_mean, 36.62, 5e-3);
    cr_assert_eq(s.n_list, 400);
    cr_assert_eq(collect_report_field(&r, 0, "trans", val, sizeof val), 0);
    cr_assert_str_eq(val, "NT");
    cr_assert_eq(collect_report_field(&r, 0, "dtype", val, sizeof val), 0);
    cr_assert_str_eq(val, "bf16");
    cr_assert_eq(collect_report_field(&r, 0, "dims", val, sizeof val), COLLECT_EINVAL);
    free(v);
    collect_report_free(&r);

    snprintf(path, sizeof path, "%s/h100/verify/h200_networks_nowarmup.tsv.gz", HEURIST_DATASETS_DIR);
    cr_assert_eq(collect_report_read(path, &r), 0, "%s", collect_last_error());
    cr_assert_eq(r.n, 1506);
    for (int i = 0; i < r.n; i++) cr_assert(r.rows[i].v.find_ms > 0 && r.rows[i].v.find_algos == 0);
    collect_report_free(&r);
}

Test(collect_verify, shortlist_summary_by_hand)
{
    collect_verify_row rows[3] = {
        {.t_model = 1.0, .t_heur = 2.0, .t_best = 1.0, .decide_us = 5.0, .find_ms = 10.0, .k = 2, .topk_timings = 3,
         .t_topk = 1.0, .topk_ms = 2.0, .t_vtopk = 1.5, .vtopk_ms = 3.0},
        {.t_model = 2.0, .t_heur = 1.0, .t_best = 0.8, .decide_us = 7.0, .k = 2, .topk_timings = 2, .t_topk = 1.05,
         .topk_ms = 4.0, .t_vtopk = 0.8, .vtopk_ms = 1.0},
        {.t_model = 1.0, .t_heur = 1.0, .t_best = 1.0, .decide_us = 6.0}, /* no shortlist */
    };
    collect_verify_summary s;
    cr_assert_eq(collect_verify_summarize(rows, 3, 1.02, &s), 0);
    cr_assert_float_eq(s.speedup_geomean, 1.0, 1e-12);
    cr_assert_float_eq(s.speedup_worst, 0.5, 1e-12);
    cr_assert_eq(s.n_find, 1);
    cr_assert_eq(s.n_topk, 2);
    cr_assert_float_eq(s.topk_efficiency_mean, (1.0 + 0.8 / 1.05) / 2, 1e-12);
    cr_assert_float_eq(s.vtopk_efficiency_mean, (1.0 / 1.5 + 1.0) / 2, 1e-12);
    cr_assert_float_eq(s.topk_speedup_geomean, sqrt(2.0 / 1.05), 1e-12);
    cr_assert_float_eq(s.topk_speedup_worst, 1.0 / 1.05, 1e-12);
    cr_assert_float_eq(s.vtopk_speedup_geomean, sqrt(2.0 / 1.5 * 1.0 / 0.8), 1e-12);
    cr_assert_float_eq(s.topk_ms_mean, 3.0, 1e-12);
    cr_assert_float_eq(s.vtopk_ms_mean, 2.0, 1e-12);
    /* against cudnnFind only where it was timed: the first row */
    cr_assert_float_eq(s.topk_find_ratio, 0.2, 1e-12);
    cr_assert_float_eq(s.vtopk_find_ratio, 0.3, 1e-12);
    cr_assert_float_eq(s.share_topk_slower, 0.5, 1e-12); /* 1.05 > 1.0 x 1.02 */
    cr_assert_float_eq(s.share_topk_extra, 0.5, 1e-12);
    rows[1].t_vtopk = 0;
    cr_assert_eq(collect_verify_summarize(rows, 3, 1.02, &s), COLLECT_EINVAL);
    /* without any timed search the ratios are undefined */
    rows[1].t_vtopk = 0.8;
    rows[0].find_ms = 0;
    cr_assert_eq(collect_verify_summarize(rows, 3, 1.02, &s), 0);
    cr_assert(isnan(s.topk_find_ratio));
}

Test(collect_verify, bootstrap_interval)
{
    double same[5] = {1.1, 1.1, 1.1, 1.1, 1.1}, lo, hi;
    cr_assert_eq(collect_bootstrap_geomean(same, 5, 200, 7, &lo, &hi), 0);
    cr_assert_float_eq(lo, 1.1, 1e-12);
    cr_assert_float_eq(hi, 1.1, 1e-12);
    double x[40];
    for (int i = 0; i < 40; i++) x[i] = 0.9 + 0.005 * i; /* geometric mean 0.9966, standard error about 0.009 */
    double lo2, hi2, gm = 0;
    for (int i = 0; i < 40; i++) gm += log(x[i]);
    gm = exp(gm / 40);
    cr_assert_eq(collect_bootstrap_geomean(x, 40, 2000, 1, &lo, &hi), 0);
    cr_assert(lo < gm && gm < hi, "%g %g %g", lo, gm, hi);
    cr_assert(hi - lo > 0.025 && hi - lo < 0.05, "%g %g", lo, hi); /* about 2 x 1.96 standard errors */
    cr_assert_eq(collect_bootstrap_geomean(x, 40, 2000, 1, &lo2, &hi2), 0);
    cr_assert_eq(lo, lo2); /* the same seed, the same interval */
    cr_assert_eq(hi, hi2);
    cr_assert_eq(collect_bootstrap_geomean(x, 40, 2000, 2, &lo2, &hi2), 0);
    cr_assert(lo != lo2 || hi != hi2);
    cr_assert_eq(collect_bootstrap_geomean(x, 0, 10, 1, &lo, &hi), COLLECT_EINVAL);
    x[3] = 0;
    cr_assert_eq(collect_bootstrap_geomean(x, 40, 10, 1, &lo, &hi), COLLECT_EINVAL);
}

/* a report of two models over three problems, with shortlists on the first two */
static const char report_text[] =
    COLLECT_REPORT_CONV_HEADER
    KEY_F "\tA.default\tH.default\tB.default\t1\t2\t1\t2\t1\t5\t100\t10\tmA\tresnet\ttf32\t2\t3\tA\t1\t2\tV\t1.5\t3\tcareful\t12\t7.5\n"
    KEY_F "\tA.default\tH.default\tB.default\t2\t2\t1\t1\t0.5\t5\t100\t10\tmB\tresnet\ttf32\t2\t2\tA\t1\t2\tV\t1.5\t3\tcareful\t12\t7.5\n"
    KEY_W_DW "\tA\tH\tB\t2\t1\t0.8\t0.5\t0.4\t7\t100\t-\tmA\tx3d\t-\t2\t2\tA\t1.05\t4\tV\t0.8\t1\tcareful\t-\t-\n"
    KEY_W_DW "\tA\tH\tB\t1\t1\t0.8\t1\t0.8\t7\t100\t-\tmB\tx3d\t-\t2\t2\tA\t1\t4\tV\t0.8\t1\tcareful\t-\t-\n"
    KEY_B_G "\tA\tH\tB\t1\t1\t1\t1\t1\t6\t100\t-\tmA\tunet\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n"
    KEY_B_G "\tA\tH\tB\t1\t1\t1\t1\t1\t6\t100\t-\tmB\tunet\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n"
    "# problems: 3\n";

Test(collect_verify, report_rows_fields_and_summaries)
{
    char *path = tmp_text(".tsv", report_text);
    collect_report r;
    cr_assert_eq(collect_report_read(path, &r), 0, "%s", collect_last_error());
    cr_assert_eq(r.kind, COLLECT_REPORT_CONV);
    cr_assert_eq(r.n, 6);
    cr_assert_str_eq(r.rows[1].model, "mB");
    cr_assert_str_eq(r.rows[2].source, "x3d");
    cr_assert_str_eq(r.rows[0].precision, "tf32");
    cr_assert_eq(r.rows[0].v.k, 2);
    cr_assert_eq(r.rows[0].v.topk_timings, 3);
    cr_assert_float_eq(r.rows[2].v.t_topk, 1.05, 1e-12);
    cr_assert_float_eq(r.rows[2].v.find_ms, 0, 1e-12); /* "-": not timed */
    cr_assert_eq(r.rows[0].v.find_algos, 12);
    cr_assert_float_eq(r.rows[0].v.find_kernel_ms, 7.5, 1e-12);
    cr_assert_eq(r.rows[2].v.find_algos, 0);
    cr_assert_eq(r.rows[4].v.k, 0);
    char val[64];
    static const struct { int row; const char *field, *value; } want[] = {
        {0, "dir", "F"}, {0, "dims", "2d"}, {0, "groups", "dense"}, {2, "dir", "W"}, {2, "dtype", "FP16"},
        {2, "dims", "3d"}, {2, "groups", "depthwise"}, {4, "groups", "grouped"}, {4, "dtype", "BF16"}, {4, "dir", "B"},
        {1, "model", "mB"}, {3, "source", "x3d"}, {3, "precision", "-"},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        cr_assert_eq(collect_report_field(&r, want[i].row, want[i].field, val, sizeof val), 0);
        cr_assert_str_eq(val, want[i].value, "%s of row %d", want[i].field, want[i].row);
    }
    cr_assert_eq(collect_report_field(&r, 0, "trans", val, sizeof val), COLLECT_EINVAL);

    char *out_path = test_tmppath(".txt");
    FILE *f = fopen(out_path, "w");
    cr_assert_eq(collect_report_summarize(f, &r, 1.02, 100, 3, "source,dir+dtype"), 0, "%s", collect_last_error());
    fclose(f);
    char *text = file_text(out_path);
    /* model mA: speed-ups 2, 0.5, 1: geometric mean 1, worst 0.5 on the depthwise problem */
    cr_assert(strstr(text, "model mA (bootstrap: 100 resamples, seed 3)"), "%s", text);
    cr_assert(strstr(text, "geometric mean 1.0000"), "%s", text);
    cr_assert(strstr(text, "worst speed-up 0.5000 (" KEY_W_DW ")"), "%s", text);
    cr_assert(strstr(text, "shortlist of 2 (2 problems; the vendor's pick added on 0.5000 of them)"), "%s", text);
    cr_assert(strstr(text, "by dir+dtype:"), "%s", text);
    cr_assert(strstr(text, "  W+FP16 "), "%s", text);
    cr_assert(strstr(text, "  resnet "), "%s", text);
    cr_assert(strstr(text, "model mB"), "%s", text);
    free(text);
    /* the report's own tail: the summary lines per model */
    f = fopen(out_path, "w");
    cr_assert_eq(collect_report_tail(f, &r, 1.02), 0);
    fclose(f);
    text = file_text(out_path);
    cr_assert(strstr(text, "# model mA\n# problems: 3\n# speed-up over cuDNN's heuristic: geometric mean 1.0000"), "%s",
              text);
    cr_assert(strstr(text, "cudnnFind 10.00 ms per problem (1 timed)"), "%s", text);
    cr_assert(strstr(text, "# cudnnFind ran 12.00 algorithms a problem (1 problems); their times as it reports them: "
                           "0.7500 of its wall time\n"), "%s", text);
    f = fopen(out_path, "w");
    cr_assert_eq(collect_report_summarize(f, &r, 1.02, 10, 3, "nonsense"), COLLECT_EINVAL);
    fclose(f);
    free(text);
    remove(out_path);
    free(out_path);
    collect_report_free(&r);
    remove(path);
    free(path);
}

Test(collect_verify, malformed_reports_name_the_line)
{
    static const struct { const char *text, *error; } bad[] = {
        {"key\tmodel\n", "neither t_model_ms nor t_model_us"},
        {"key\tt_model_ms\tt_heur_ms\tt_best_ms\tdecide_us\n", "no column find_ms"},
        {COLLECT_REPORT_CONV_HEADER "k\tA\tH\tB\t1\t2\n", ":2: 6 tab-separated columns, the header has 26"},
        {COLLECT_REPORT_CONV_HEADER "k\tA\tH\tB\tx\t2\t1\t2\t1\t5\t100\t10\tm\ts\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n",
         ":2: column t_model_ms: 'x' is not a number"},
        {COLLECT_REPORT_CONV_HEADER "k\tA\tH\tB\t1\t2\t1\t2\t1\t5\t100\t10\tm\ts\t-\t2\t2\tA\t-\t2\tV\t1\t1\tonce\t-\t-\n",
         ":2: a shortlist of k 2 without its picks' times"},
        {COLLECT_REPORT_CONV_HEADER "k\tA\tH\tB\t1\t2\t1\t2\t1\t5\t100\t-\tm\ts\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t4\t3\n",
         ":2: cudnnFind's 4 algorithms without its time (find_ms)"},
        {COLLECT_REPORT_CONV_HEADER "k\tA\tH\tB\t1\t2\t1\t2\t1\t5\t100\t9\tm\ts\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t4.5\t3\n",
         ":2: column find_algos: '4.5' is not a whole number"},
        {COLLECT_REPORT_CONV_HEADER "k\tA\tH\tB\t1\t2\t1", ":2: the last line is cut short"},
        {"# only a summary\n", "no header row"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *path = tmp_text(".tsv", bad[i].text);
        collect_report r;
        cr_assert_eq(collect_report_read(path, &r), COLLECT_EFORMAT, "case %zu", i);
        cr_assert(strstr(collect_last_error(), bad[i].error), "case %zu: %s", i, collect_last_error());
        cr_assert_null(r.rows);
        remove(path);
        free(path);
    }
}

/* Numbers a summary cannot use (not finite, negative, a time below 1e-9 whose ratios underflow, a shortlist
 * length that is no whole int), a NUL byte (gzgets reads past it: the '#' line it cut swallowed the row after it)
 * and a header of more columns than the reader splits: refused, naming the line. */
Test(collect_verify, reports_with_unusable_values_are_refused)
{
#define ROW_T(tm, th, k) "k\tA\tH\tB\t" tm "\t" th "\t1\t2\t1\t5\t100\t10\tm\ts\t-\t" k "\t2\tA\t1\t2\tV\t1\t1\tonce\t-\t-\n"
#define BAD(text, error) {text, sizeof text - 1, error}
    static const struct { const char *text; size_t len; const char *error; } bad[] = {
        BAD(COLLECT_REPORT_CONV_HEADER ROW_T("inf", "2", "2"), ":2: column t_model_ms: 'inf' is not a number"),
        BAD(COLLECT_REPORT_CONV_HEADER ROW_T("1", "nan", "2"), ":2: column t_heur_ms: 'nan' is not a number"),
        BAD(COLLECT_REPORT_CONV_HEADER ROW_T("1", "-2", "2"), ":2: column t_heur_ms: '-2' is outside 0 .. 1e+12"),
        BAD(COLLECT_REPORT_CONV_HEADER ROW_T("1", "1e-12", "2"), ":2: column t_heur_ms: the time '1e-12' is below"),
        BAD(COLLECT_REPORT_CONV_HEADER ROW_T("1", "2", "2.5"), ":2: column k: '2.5' is not a whole number"),
        BAD(COLLECT_REPORT_CONV_HEADER ROW_T("1", "2", "1e10"), ":2: column k: '1e10' is not a whole number"),
        BAD(COLLECT_REPORT_CONV_HEADER ROW_T("1", "2", "2") "# a summary\0 line\n" ROW_T("1", "2", "2"),
            ":3: a NUL byte"),
    };
#undef BAD
#undef ROW_T
    collect_report r;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *path = test_tmpfile(".tsv", bad[i].text, bad[i].len);
        cr_assert_eq(collect_report_read(path, &r), COLLECT_EFORMAT, "case %zu", i);
        cr_assert(strstr(collect_last_error(), bad[i].error), "case %zu: %s", i, collect_last_error());
        cr_assert_null(r.rows);
        remove(path);
        free(path);
    }
    char header[1024] = "key\tt_model_ms\tt_heur_ms\tt_best_ms\tdecide_us\tfind_ms";
    for (int c = 6; c < 65; c++) strcat(header, "\tx");
    strcat(header, "\n");
    char *path = tmp_text(".tsv", header);
    cr_assert_eq(collect_report_read(path, &r), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "more than 64 columns"), "%s", collect_last_error());
    remove(path);
    free(path);
}

/* A gzip-compressed report reads as the plain one does (shipped_reports_summarize_as_recorded reads two), its
 * faults named alike: a last line cut short, and a compressed stream cut short. */
Test(collect_verify, gzip_reports_name_their_faults)
{
    char *path = test_tmppath(".tsv.gz");
    static const char cut[] = COLLECT_REPORT_CONV_HEADER "k\tA\tH\tB\t1\t2\t1";
    gzFile g = gzopen(path, "wb");
    cr_assert(g);
    cr_assert_eq(gzwrite(g, cut, (unsigned)strlen(cut)), (int)strlen(cut));
    gzclose(g);
    collect_report r;
    cr_assert_eq(collect_report_read(path, &r), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), ":2: the last line is cut short"), "%s", collect_last_error());
    /* a whole report compressed, then its compressed bytes cut in half */
    char text[8192];
    int n = snprintf(text, sizeof text, "%s", COLLECT_REPORT_CONV_HEADER);
    for (int i = 0; i < 40; i++)
        n += snprintf(text + n, sizeof text - (size_t)n,
                      "k%d\tA\tH\tB\t1\t2\t1\t2\t1\t5\t100\t10\tm\ts\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", i);
    g = gzopen(path, "wb");
    gzwrite(g, text, (unsigned)n);
    gzclose(g);
    cr_assert_eq(collect_report_read(path, &r), 0, "%s", collect_last_error());
    cr_assert_eq(r.n, 40);
    collect_report_free(&r);
    char *whole = file_text(path);
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    f = fopen(path, "wb");
    fwrite(whole, 1, (size_t)size / 2, f);
    fclose(f);
    free(whole);
    cr_assert_neq(collect_report_read(path, &r), 0, "half a compressed report read as whole");
    cr_assert(strstr(collect_last_error(), path), "%s", collect_last_error());
    cr_assert_null(r.rows);
    remove(path);
    free(path);
}

#define FINISHED(key, model) key "\tA\tH\tB\t1\t2\t1\t2\t1\t5\t100\t10\t" model "\ts\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n"

Test(collect_verify, resume_cuts_back_to_finished_rows)
{
    /* two finished problems (the second with two rows), an earlier run's summary, then nothing */
    static const char rows[] = COLLECT_REPORT_CONV_HEADER FINISHED("kb", "m") FINISHED("ka", "m") FINISHED("kb", "m2");
    char *path = tmp_text(".tsv", COLLECT_REPORT_CONV_HEADER FINISHED("kb", "m") FINISHED("ka", "m")
                                      FINISHED("kb", "m2") "# problems: 2\n# more\n");
    char **keys;
    int n, has_header;
    cr_assert_eq(collect_report_resume(path, COLLECT_REPORT_CONV_HEADER, &keys, &n, &has_header), 0, "%s",
                 collect_last_error());
    cr_assert_eq(has_header, 1);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(keys[0], "ka");
    cr_assert_str_eq(keys[1], "kb");
    for (int i = 0; i < n; i++) free(keys[i]);
    free(keys);
    char *text = file_text(path);
    cr_assert_str_eq(text, rows);
    free(text);
    remove(path);
    free(path);
    /* a line cut short by a killed run is dropped; a blank line is no problem */
    path = tmp_text(".tsv", COLLECT_REPORT_CONV_HEADER FINISHED("ka", "m") "\nkb\tro");
    cr_assert_eq(collect_report_resume(path, COLLECT_REPORT_CONV_HEADER, &keys, &n, &has_header), 0, "%s",
                 collect_last_error());
    cr_assert_eq(n, 1);
    cr_assert_str_eq(keys[0], "ka");
    free(keys[0]);
    free(keys);
    text = file_text(path);
    cr_assert_str_eq(text, COLLECT_REPORT_CONV_HEADER FINISHED("ka", "m") "\n");
    free(text);
    /* another header: refused, the file untouched */
    cr_assert_eq(collect_report_resume(path, COLLECT_REPORT_GEMM_HEADER, &keys, &n, &has_header), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "resume into a new report"), "%s", collect_last_error());
    text = file_text(path);
    cr_assert_str_eq(text, COLLECT_REPORT_CONV_HEADER FINISHED("ka", "m") "\n");
    free(text);
    remove(path);
    free(path);
    /* a finished row that does not read (the resumed run's summary would fail on it): refused naming its line,
     * the file untouched */
    static const char bad[] = COLLECT_REPORT_CONV_HEADER FINISHED("ka", "m") "kb\trow\n# problems: 1\n";
    path = tmp_text(".tsv", bad);
    cr_assert_eq(collect_report_resume(path, COLLECT_REPORT_CONV_HEADER, &keys, &n, &has_header), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), ":3: 2 tab-separated columns"), "%s", collect_last_error());
    cr_assert_eq(n, 0);
    text = file_text(path);
    cr_assert_str_eq(text, bad);
    free(text);
    remove(path);
    free(path);
    /* no file: nothing done, a header to write */
    path = test_tmppath(".tsv");
    cr_assert_eq(collect_report_resume(path, COLLECT_REPORT_CONV_HEADER, &keys, &n, &has_header), 0);
    cr_assert_eq(n, 0);
    cr_assert_eq(has_header, 0);
    free(path);
}
#undef FINISHED
