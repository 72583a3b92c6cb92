/* The predictor of the C API (include/heurist.h) as another program uses it: only heurist.h and the tests'
 * helpers, linked against libheurist. A table model ranks problems given as text or values, over the
 * configurations it knows or a candidate matrix, one at a time or in a batch; bad values are refused by column. */
#define _POSIX_C_SOURCE 200809L /* getpid: this test sees only heurist.h, not the library's build flags */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heurist.h"
#include "helpers/testutil.h"

/* A model of a synthetic GEMM table (M,N,K,dtype x tile_m,tile_n,tile_k,stages,split_k), trained by the heurist
 * command (family and config); its path (malloc'd), the table's files removed. */
static char *table_model_of(const char *family, const char *config)
{
    char *csv = test_tmppath(".csv"), *mpath = test_tmppath(".h5"), *out, args[2048];
    snprintf(args, sizeof args, "'%s' --problems 60 --seed 3 --out '%s'", HEURIST_GEN_GEMM_TABLE, csv);
    cr_assert_eq(system(args), 0, "%s", args);
    snprintf(args, sizeof args,
             "train --data '%s' --task select --model %s --config '%s' --split random:0.5 --threads 1 --out '%s' --quiet",
             csv, family, config, mpath);
    cr_assert_eq(test_run_heurist(args, 1, &out), 0, "%s", out);
    free(out);
    remove(csv);
    strcpy(strstr(csv, ".csv"), ".schema.json");
    remove(csv);
    free(csv);
    return mpath;
}

static char *table_model(void)
{
    return table_model_of("gbdt", "{\"objective\":\"rank\",\"rounds\":3}");
}

/* The column of a model named `name` (problem columns first, then configuration columns), or -1. */
static int column_of(const heurist_model *m, const char *name)
{
    int np = heurist_model_problem_count(m), nc = heurist_model_config_count(m);
    for (int j = 0; j < np + nc; j++) {
        const char *c = j < np ? heurist_model_problem_name(m, j) : heurist_model_config_name(m, j - np);
        if (strcmp(c, name) == 0) return j;
    }
    return -1;
}

/* Values of "col=value,..." text in the model's columns starting at `first` (a category by its index). */
static void values_of_text(const heurist_model *m, const char *text, int first, double *v)
{
    char *copy = strdup(text), *save = NULL;
    int np = heurist_model_problem_count(m);
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        cr_assert_not_null(eq, "%s", text);
        *eq = '\0';
        int j = column_of(m, tok);
        cr_assert_geq(j, 0, "column %s", tok);
        int nv = heurist_model_category_count(m, j);
        if (nv == 0) v[j - first] = strtod(eq + 1, NULL);
        for (int c = 0; c < nv; c++)
            if (strcmp(heurist_model_category_name(m, j, c), eq + 1) == 0) v[j - first] = c;
        cr_assert(j >= np || first == 0);
    }
    free(copy);
}

/* Every configuration the model knows, as a candidate matrix (K, config_count): its names read back. */
static double *known_configs(const heurist_model *m, int *K)
{
    *K = heurist_model_kernel_count(m);
    int nc = heurist_model_config_count(m), np = heurist_model_problem_count(m);
    double *kv = malloc((size_t)*K * (size_t)nc * sizeof *kv);
    for (int k = 0; k < *K; k++) values_of_text(m, heurist_model_kernel_name(m, k), np, kv + (size_t)k * nc);
    return kv;
}

static const char *const problems[] = {
    "M=128,N=4096,K=4096,dtype=bf16", "M=1,N=11008,K=4096,dtype=fp16", "M=4096,N=4096,K=4096,dtype=fp32",
    "M=77,N=1000,K=333,dtype=bf16",
};
#define N_PROBLEMS (int)(sizeof problems / sizeof *problems)

Test(api_predictor, a_table_model_ranks_its_configurations_as_the_same_rows_given_as_candidates, .timeout = 300)
{
    char *mpath = table_model();
    heurist_model *m;
    cr_assert_eq(heurist_model_load(mpath, &m), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_eq(heurist_api_version(), 2);
    cr_assert_eq(heurist_model_problem_count(m), 4);
    cr_assert_str_eq(heurist_model_problem_name(m, 3), "dtype");
    cr_assert_eq(heurist_model_category_count(m, 3), 3);
    cr_assert_null(heurist_model_problem_name(m, 4));
    cr_assert_eq(heurist_model_config_count(m), 5);
    cr_assert_str_eq(heurist_model_config_name(m, 0), "tile_m");
    cr_assert_eq(heurist_model_category_count(m, 4), 0, "tile_m is numeric");
    int K, np = heurist_model_problem_count(m);
    double *kv = known_configs(m, &K);
    heurist_predictor *p;
    cr_assert_eq(heurist_predictor_create(m, &p), HEURIST_OK, "%s", heurist_last_error());
    int *a = malloc((size_t)K * sizeof *a), *b = malloc((size_t)K * sizeof *b), *c = malloc((size_t)K * sizeof *c);
    float *sa = malloc((size_t)K * sizeof *sa), *sb = malloc((size_t)K * sizeof *sb);
    int restricted = 0;
    for (int i = 0; i < N_PROBLEMS; i++) {
        int na = 0, nb = 0, nk = 0;
        double pv[8], parsed[8];
        values_of_text(m, problems[i], 0, pv);
        cr_assert_eq(heurist_model_problem_parse(m, problems[i], parsed), HEURIST_OK, "%s", heurist_last_error());
        cr_assert_arr_eq(parsed, pv, 4 * sizeof *pv, "%s", problems[i]);
        cr_assert_eq(heurist_predictor_rank(p, problems[i], NULL, 0, K, a, sa, &na), HEURIST_OK, "%s",
                     heurist_last_error());
        cr_assert_gt(na, 0);
        cr_assert_leq(na, K);
        restricted += na < K; /* the configurations training measured for the problem's dtype */
        /* the same rows as a candidate matrix, in the model's order: the same ranking */
        int *rows = malloc((size_t)na * sizeof *rows), at = 0;
        for (int k = 0; k < K; k++)
            for (int r = 0; r < na; r++)
                if (a[r] == k) rows[at++] = k;
        cr_assert_eq(at, na, "each configuration ranked once");
        double *sub = malloc((size_t)na * 5 * sizeof *sub);
        for (int r = 0; r < na; r++) memcpy(sub + (size_t)r * 5, kv + (size_t)rows[r] * 5, 5 * sizeof *sub);
        cr_assert_eq(heurist_predictor_rank_values(p, pv, sub, na, K, b, sb, &nb), HEURIST_OK, "%s", heurist_last_error());
        cr_assert_eq(nb, na);
        for (int r = 0; r < na; r++) {
            cr_assert_eq(a[r], rows[b[r]], "%s: rank %d: known %d, candidates %d", problems[i], r, a[r], rows[b[r]]);
            cr_assert_float_eq(sa[r], sb[r], 0, "%s: rank %d", problems[i], r);
            if (r) cr_assert_geq(sa[r - 1], sa[r], "best first");
        }
        free(rows);
        free(sub);
        /* a shortlist is the ranking's head */
        cr_assert_eq(heurist_predictor_rank_values(p, pv, NULL, 0, 3, c, NULL, &nk), HEURIST_OK, "%s",
                     heurist_last_error());
        cr_assert_eq(nk, na);
        cr_assert_arr_eq(c, a, 3 * sizeof *c);
        /* every configuration as candidates, in the model's order and reversed: the same scores, indices into the
         * caller's rows */
        cr_assert_eq(heurist_predictor_rank_values(p, pv, kv, K, K, b, sb, &nb), HEURIST_OK, "%s", heurist_last_error());
        cr_assert_eq(nb, K);
        /* candidates in another order: the same configurations, indices into the caller's rows */
        double *rev = malloc((size_t)K * 5 * sizeof *rev);
        for (int k = 0; k < K; k++) memcpy(rev + (size_t)k * 5, kv + (size_t)(K - 1 - k) * 5, 5 * sizeof *rev);
        float *score_of = malloc((size_t)K * sizeof *score_of), *sc = malloc((size_t)K * sizeof *sc);
        for (int r = 0; r < K; r++) score_of[b[r]] = sb[r];
        cr_assert_eq(heurist_predictor_rank_values(p, pv, rev, K, K, c, sc, NULL), HEURIST_OK, "%s",
                     heurist_last_error());
        for (int r = 0; r < K; r++) {
            cr_assert_float_eq(sc[r], sb[r], 0, "rank %d", r);
            cr_assert_float_eq(score_of[K - 1 - c[r]], sc[r], 0, "rank %d: row %d", r, c[r]);
            /* ties go to the lower index: of the caller's rows */
            if (r && sc[r] == sc[r - 1]) cr_assert_lt(c[r - 1], c[r]);
        }
        free(score_of);
        free(sc);
        free(rev);
    }
    cr_assert_gt(restricted, 0, "a problem ranks only the configurations measured for its dtype");
    /* the batch: each problem's k best, whatever the threads */
    double *pvs = malloc((size_t)N_PROBLEMS * (size_t)np * sizeof *pvs);
    for (int i = 0; i < N_PROBLEMS; i++) values_of_text(m, problems[i], 0, pvs + (size_t)i * np);
    int top1[N_PROBLEMS * 4], top2[N_PROBLEMS * 4], top3[N_PROBLEMS * 4];
    cr_assert_eq(heurist_rank_values_batch(m, pvs, N_PROBLEMS, NULL, 0, 4, 1, top1), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_eq(heurist_rank_values_batch(m, pvs, N_PROBLEMS, NULL, 0, 4, 2, top2), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_eq(heurist_rank_values_batch(m, pvs, N_PROBLEMS, kv, K, 4, 2, top3), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_arr_eq(top1, top2, sizeof top1);
    for (int i = 0; i < N_PROBLEMS; i++) {
        cr_assert_eq(heurist_predictor_rank(p, problems[i], NULL, 0, 4, a, NULL, NULL), HEURIST_OK);
        cr_assert_arr_eq(top1 + 4 * i, a, 4 * sizeof *a, "%s", problems[i]);
        cr_assert_eq(heurist_predictor_rank(p, problems[i], kv, K, 4, a, NULL, NULL), HEURIST_OK);
        cr_assert_arr_eq(top3 + 4 * i, a, 4 * sizeof *a, "%s", problems[i]);
    }
    /* k past the ranked count: -1 */
    int *wide = malloc((size_t)(K + 2) * sizeof *wide);
    cr_assert_eq(heurist_rank_values_batch(m, pvs, 1, kv, 2, K + 2, 0, wide), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_geq(wide[1], 0);
    cr_assert_eq(wide[2], -1);
    cr_assert_eq(wide[K + 1], -1);
    free(wide);
    free(pvs);
    heurist_predictor_free(p);
    heurist_predictor_free(NULL);
    heurist_model_free(m);
    free(kv), free(a), free(b), free(c), free(sa), free(sb);
    remove(mpath);
    free(mpath);
}

Test(api_predictor, bad_values_and_columns_are_refused_naming_the_column, .timeout = 300)
{
    char *mpath = table_model();
    heurist_model *m;
    cr_assert_eq(heurist_model_load(mpath, &m), HEURIST_OK, "%s", heurist_last_error());
    heurist_predictor *p;
    cr_assert_eq(heurist_predictor_create(m, &p), HEURIST_OK, "%s", heurist_last_error());
    int K, idx[4], top[8];
    double *kv = known_configs(m, &K), pv[4], good[4];
    values_of_text(m, problems[0], 0, good);
    struct {
        int column;
        double value;
        const char *says;
    } bad[] = {{1, NAN, "'N'"}, {0, INFINITY, "'M'"}, {3, 3, "'dtype'"}, {3, -1, "'dtype'"}, {3, 0.5, "'dtype'"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memcpy(pv, good, sizeof pv);
        pv[bad[i].column] = bad[i].value;
        cr_assert_eq(heurist_predictor_rank_values(p, pv, NULL, 0, 4, idx, NULL, NULL), HEURIST_EINVAL, "case %zu", i);
        cr_assert(strstr(heurist_last_error(), bad[i].says) != NULL, "%s", heurist_last_error());
        cr_assert_eq(heurist_rank_values_batch(m, pv, 1, NULL, 0, 2, 1, top), HEURIST_EINVAL, "case %zu", i);
        cr_assert(strstr(heurist_last_error(), bad[i].says) != NULL, "%s", heurist_last_error());
        cr_assert_eq(top[0], -1);
    }
    /* a candidate's bad value names the candidate and the column */
    kv[5 * 2 + 1] = NAN;
    cr_assert_eq(heurist_predictor_rank_values(p, good, kv, K, 4, idx, NULL, NULL), HEURIST_EINVAL);
    cr_assert(strstr(heurist_last_error(), "candidate 2") && strstr(heurist_last_error(), "'tile_n'"), "%s",
              heurist_last_error());
    cr_assert_eq(heurist_predictor_rank_values(p, good, kv, 0, 4, idx, NULL, NULL), HEURIST_EINVAL);
    cr_assert(strstr(heurist_last_error(), "n_candidates") != NULL, "%s", heurist_last_error());
    /* text: a missing column, an unknown one, an unknown category */
    const char *texts[][2] = {{"M=128,N=4096,dtype=bf16", "K"},
                              {"M=128,N=4096,K=1,dtype=bf16,Q=1", "Q"},
                              {"M=128,N=4096,K=4096,dtype=fp64", "fp64"}};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(heurist_predictor_rank(p, texts[i][0], NULL, 0, 4, idx, NULL, NULL), HEURIST_EINVAL, "%s",
                     texts[i][0]);
        cr_assert(strstr(heurist_last_error(), texts[i][1]) != NULL, "%s", heurist_last_error());
    }
    /* a batch with one bad problem: its row is -1, the others are ranked, the error names it */
    double two[8];
    memcpy(two, good, sizeof good);
    memcpy(two + 4, good, sizeof good);
    two[4 + 3] = 7;
    cr_assert_eq(heurist_rank_values_batch(m, two, 2, NULL, 0, 2, 2, top), HEURIST_EINVAL);
    cr_assert(strstr(heurist_last_error(), "problem 1") && strstr(heurist_last_error(), "'dtype'"), "%s",
              heurist_last_error());
    cr_assert_geq(top[0], 0);
    cr_assert_eq(top[2], -1);
    /* a selection predictor does not tune; NULL arguments */
    int32_t values[8];
    cr_assert_eq(heurist_predictor_tune(p, problems[0], values), HEURIST_ESTATE);
    cr_assert_eq(heurist_predictor_rank(NULL, problems[0], NULL, 0, 4, idx, NULL, NULL), HEURIST_EINVAL);
    heurist_predictor *none = p;
    cr_assert_eq(heurist_predictor_create(NULL, &none), HEURIST_EINVAL);
    cr_assert_null(none);
    cr_assert_eq(heurist_model_problem_count(NULL), 0);
    cr_assert_null(heurist_model_category_name(m, 3, 3));
    heurist_predictor_free(p);
    heurist_model_free(m);
    free(kv);
    remove(mpath);
    free(mpath);
}

Test(api_predictor, a_convolution_model_takes_no_candidate_matrix, .timeout = 300)
{
    char *fdb = test_fdb_synthetic_write(200, 0), *mpath = test_tmppath(".h5"), *out, args[2048];
    snprintf(args, sizeof args, "train --data '%s' --task select --model gbdt --config '{\"rounds\":2}' --threads 1 "
             "--out '%s' --quiet", fdb, mpath);
    cr_assert_eq(test_run_heurist(args, 1, &out), 0, "%s", out);
    free(out);
    heurist_model *m;
    cr_assert_eq(heurist_model_load(mpath, &m), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_eq(heurist_model_config_count(m), 0);
    int np = heurist_model_problem_count(m);
    cr_assert_gt(np, 4);
    cr_assert_str_eq(heurist_model_problem_name(m, np - 4), "layout");
    cr_assert_gt(heurist_model_category_count(m, np - 3), 1, "dtype is categorical");
    heurist_predictor *p;
    cr_assert_eq(heurist_predictor_create(m, &p), HEURIST_OK, "%s", heurist_last_error());
    const char *key = "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F";
    int K = heurist_model_kernel_count(m), *a = malloc((size_t)K * sizeof *a), *b = malloc((size_t)K * sizeof *b);
    int na = 0, nb = 0;
    cr_assert_eq(heurist_predictor_rank(p, key, NULL, 0, K, a, NULL, &na), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_eq(heurist_rank(m, key, K, b, NULL, &nb), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_eq(na, nb);
    cr_assert_arr_eq(a, b, (size_t)na * sizeof *a, "the predictor ranks as heurist_rank");
    double one[1] = {0};
    cr_assert_eq(heurist_predictor_rank(p, key, one, 1, K, a, NULL, &na), HEURIST_EINVAL);
    cr_assert(strstr(heurist_last_error(), "known by name") != NULL, "%s", heurist_last_error());
    heurist_predictor_free(p);
    heurist_model_free(m);
    free(a), free(b);
    remove(mpath), remove(fdb);
    free(mpath), free(fdb);
}

/* The Reformer's pairs and towers heads score only the configurations a problem allows: the same scores as the
 * same rows given as candidates. */
Test(api_predictor, reformer_heads_rank_their_configurations_as_the_same_rows_given_as_candidates, .timeout = 300)
{
    const char *configs[] = {"{\"mode\":\"pairs\",\"epochs\":1}", "{\"mode\":\"towers\",\"epochs\":1}"};
    for (int c = 0; c < 2; c++) {
        char *mpath = table_model_of("reformer", configs[c]);
        heurist_model *m;
        heurist_predictor *p;
        cr_assert_eq(heurist_model_load(mpath, &m), HEURIST_OK, "%s", heurist_last_error());
        cr_assert_eq(heurist_predictor_create(m, &p), HEURIST_OK, "%s", heurist_last_error());
        int K, na, nb;
        double *kv = known_configs(m, &K), pv[4];
        int *a = malloc((size_t)K * sizeof *a), *b = malloc((size_t)K * sizeof *b), *rows = malloc((size_t)K * sizeof *rows);
        float *sa = malloc((size_t)K * sizeof *sa), *sb = malloc((size_t)K * sizeof *sb);
        double *sub = malloc((size_t)K * 5 * sizeof *sub);
        for (int i = 0; i < N_PROBLEMS; i++) {
            cr_assert_eq(heurist_model_problem_parse(m, problems[i], pv), HEURIST_OK, "%s", heurist_last_error());
            cr_assert_eq(heurist_predictor_rank_values(p, pv, NULL, 0, K, a, sa, &na), HEURIST_OK, "%s",
                         heurist_last_error());
            int at = 0;
            for (int k = 0; k < K; k++)
                for (int r = 0; r < na; r++)
                    if (a[r] == k) rows[at++] = k;
            for (int r = 0; r < na; r++) memcpy(sub + (size_t)r * 5, kv + (size_t)rows[r] * 5, 5 * sizeof *sub);
            cr_assert_eq(heurist_predictor_rank_values(p, pv, sub, na, K, b, sb, &nb), HEURIST_OK, "%s",
                         heurist_last_error());
            cr_assert_eq(nb, na);
            for (int r = 0; r < na; r++) {
                cr_assert_eq(a[r], rows[b[r]], "%s %s: rank %d", configs[c], problems[i], r);
                cr_assert_float_eq(sa[r], sb[r], 0, "%s %s: rank %d", configs[c], problems[i], r);
            }
        }
        heurist_predictor_free(p);
        heurist_model_free(m);
        free(kv), free(a), free(b), free(rows), free(sa), free(sb), free(sub);
        remove(mpath);
        free(mpath);
    }
}
