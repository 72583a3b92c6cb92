/* The exported runtime of a table model (gbdt rank, reformer towers), compiled with cc: on 200 problems of a
 * generated table it gives the library's scores (gbdt to 1e-5 relative; towers to 1e-4, its sums run in another
 * order) and ranking for each problem's measured configurations (up to 140: rankings by insertion and by heapsort,
 * scores in several blocks), three it never measured and, for gbdt, one with a NaN value, ranks the model's own
 * configurations as predict_select does, and looks categories up. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/portable.h"
#include "eval/eval.h"
#include "export/export.h"
#include "export/export_internal.h"
#include "helpers/exported_runtime.h"
#include "helpers/run_in.h"
#include "helpers/table_fixture.h"
#include "helpers/testutil.h"

/* per problem on input: n, the problem's values, n configurations' values; on output: the scores, the ranking,
 * then the best of the model's own configurations */
static const char *driver =
    "#include <stdio.h>\n#include \"hm.h\"\n"
    "int main(int argc, char **argv) {\n"
    "  FILE *in = fopen(argv[1], \"r\"), *out = fopen(argv[2], \"w\");\n"
    "  static double pv[HM_N_PROBLEM], kv[4096 * HM_N_KERNEL];\n"
    "  static float s[4096];\n  static int r[4096];\n  int n;\n"
    "  if (!in || !out || argc != 3) return 1;\n"
    "  fprintf(out, \"%g %g %g\\n\", hm_category(\"dtype\", \"fp32\"), hm_category(\"dtype\", \"fp64\"),\n"
    "          hm_category(\"nope\", \"fp32\"));\n"
    "  while (fscanf(in, \"%d\", &n) == 1 && n <= 4096) {\n"
    "    for (int j = 0; j < HM_N_PROBLEM; j++) if (fscanf(in, \"%lf\", &pv[j]) != 1) return 1;\n"
    "    for (int i = 0; i < n * HM_N_KERNEL; i++) if (fscanf(in, \"%lf\", &kv[i]) != 1) return 1;\n"
    "    if (hm_rank(pv, kv, n, s, r)) return 1;\n"
    "    for (int i = 0; i < n; i++) fprintf(out, \"%.9g \", s[i]);\n"
    "    for (int i = 0; i < n; i++) fprintf(out, \"%d \", r[i]);\n"
    "    if (hm_rank_known(pv, s, r)) return 1;\n"
    "    fprintf(out, \"%d\\n\", r[0]);\n"
    "  }\n  fclose(out);\n  return 0;\n}\n";

/* ranking (n) best first by score, ties to the lower index: the order the runtime documents */
static const float *cmp_scores;
static int cmp_rank(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    if (cmp_scores[i] != cmp_scores[j]) return cmp_scores[i] > cmp_scores[j] ? -1 : 1;
    return i - j;
}

/* the measured configurations of problem p into kv (n, nk); returns n */
static int measured_fill(const table_fixture *f, int p, double *kv)
{
    const data_table *t = f->sel->table;
    int K = f->sel->n_kernels, nk = t->spec.n_kernel, n = 0;
    for (int k = 0; k < K; k++)
        if (isfinite(f->sel->runtime[(size_t)p * K + k]))
            memcpy(kv + (size_t)n++ * nk, t->kv + (size_t)k * nk, (size_t)nk * sizeof *kv);
    return n;
}

/* candidates of problem p into kv (n, nk): its measured configurations, then three no problem measured and, with
 * nan, one with a NaN tile (gbdt's trees send it their NaN way); returns n */
static int export_candidates_fill(const table_fixture *f, int p, int nan, double *kv)
{
    const data_table *t = f->sel->table;
    int nk = t->spec.n_kernel, n = measured_fill(f, p, kv);
    for (int u = 0; u < 3; u++, n++) {
        memcpy(kv + (size_t)n * nk, t->kv + (size_t)u * nk, (size_t)nk * sizeof *kv);
        kv[(size_t)n * nk] = 24 + 8 * u; /* tile_m 24, 32, 40 */
    }
    if (nan) {
        memcpy(kv + (size_t)n * nk, t->kv, (size_t)nk * sizeof *kv);
        kv[(size_t)n++ * nk + 1] = NAN; /* tile_n */
    }
    return n;
}

/* a driver's input line for problem p with n candidates kv (n, nk): n, the problem's values, the candidates' values
 * (the caller ends the line) */
static void input_write(FILE *in, const table_fixture *f, int p, const double *kv, int n)
{
    const data_table *t = f->sel->table;
    int nk = t->spec.n_kernel, np = t->spec.n_problem + t->spec.n_hardware;
    fprintf(in, "%d", n);
    for (int j = 0; j < np; j++) fprintf(in, " %.17g", t->pv[(size_t)p * np + j]);
    for (int i = 0; i < n * nk; i++) fprintf(in, " %.17g", kv[i]);
}

/* tol: the scores' relative tolerance; a place of the ranking may hold another candidate only where the library
 * scores both within that tolerance of each other (0: the very same candidate) */
static void check_runtime(const char *family, const char *config, float tol, int nan)
{
    table_fixture f = table_fixture_make(200, 13, 0.05);
    model *m = table_fixture_train(&f, family, config);
    const data_table *t = f.sel->table;
    int K = f.sel->n_kernels, nk = t->spec.n_kernel, np = t->spec.n_problem + t->spec.n_hardware;
    char *dir = test_tmppath("_export_table");
    test_runtime_build(m, dir, driver, "-O2");
    char path[1024];

    double *kv = malloc(((size_t)K + 4) * nk * sizeof *kv);
    float *lib = malloc(((size_t)K + 4) * sizeof *lib), *known = malloc((size_t)K * sizeof *known);
    int *rank = malloc(((size_t)K + 4) * sizeof *rank), *ncand = malloc((size_t)f.sel->n * sizeof *ncand);
    snprintf(path, sizeof path, "%s/in.txt", dir);
    FILE *in = fopen(path, "w");
    for (int p = 0; p < f.sel->n; p++) {
        int n = export_candidates_fill(&f, p, nan, kv);
        ncand[p] = n;
        input_write(in, &f, p, kv, n);
        fprintf(in, "\n");
    }
    fclose(in);
    FILE *out = test_runtime_run(dir, "in.txt");
    double fp32, unknown_value, unknown_column;
    cr_assert_eq(fscanf(out, "%lf %lf %lf", &fp32, &unknown_value, &unknown_column), 3);
    const data_table_column *dtype = &data_codec_table_spec(m->codec)->problem[3];
    cr_assert_str_eq(dtype->name, "dtype");
    cr_assert_str_eq(dtype->vocab[(int)fp32], "fp32");
    cr_assert_eq(unknown_value, -1);
    cr_assert_eq(unknown_column, -1);
    model_ws *ws;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    for (int p = 0; p < f.sel->n; p++) {
        int n = export_candidates_fill(&f, p, nan, kv);
        cr_assert_eq(n, ncand[p]);
        const float *x = f.X + (size_t)p * f.F;
        cr_assert_eq(model_predict_candidates(m, ws, x, kv, n, lib), HR_OK, "%s", hr_last_error());
        for (int i = 0; i < n; i++) {
            float s;
            cr_assert_eq(fscanf(out, "%f", &s), 1);
            cr_assert(isfinite(lib[i]));
            cr_assert_leq(fabsf(s - lib[i]), tol * fmaxf(1.0f, fabsf(lib[i])), "problem %d candidate %d: %.9g vs %.9g",
                          p, i, (double)s, (double)lib[i]);
        }
        for (int i = 0; i < n; i++) rank[i] = i;
        cmp_scores = lib;
        qsort(rank, (size_t)n, sizeof *rank, cmp_rank);
        for (int i = 0; i < n; i++) {
            int r;
            cr_assert_eq(fscanf(out, "%d", &r), 1);
            cr_assert(r == rank[i] || (r >= 0 && r < n && fabsf(lib[r] - lib[rank[i]]) <= 2 * tol * fmaxf(1.0f, fabsf(lib[r]))),
                      "problem %d place %d: %d vs %d", p, i, r, rank[i]);
        }
        int best;
        cr_assert_eq(fscanf(out, "%d", &best), 1);
        cr_assert_eq(model_predict_select_x(m, ws, f.sel->table->pv + (size_t)p * np, x, known), HR_OK);
        const int top = eval_select_argmax(known, K);
        cr_assert(best == top || (best >= 0 && best < K && fabsf(known[best] - known[top]) <= 2 * tol * fmaxf(1.0f, fabsf(known[top]))),
                  "problem %d: %d vs %d", p, best, top);
    }
    fclose(out);
    model_ws_free(ws);
    test_dir_remove(dir);
    free(kv);
    free(lib);
    free(known);
    free(rank);
    free(ncand);
    model_free(m);
    table_fixture_free(&f);
}

Test(export_table, runtime_matches_the_library_on_200_problems, .timeout = 600)
{
    check_runtime("gbdt", "{\"objective\": \"rank\", \"rounds\": 60, \"log_every\": 0}", 1e-5f, 1);
}

/* towers: v of a known configuration comes precomputed, of the three unknown ones from the configuration tower */
Test(export_table, towers_runtime_matches_the_library_on_200_problems, .timeout = 600)
{
    check_runtime("reformer",
                  "{\"mode\": \"towers\", \"epochs\": 4, \"hidden\": 24, \"expand\": 16, \"tower_dim\": 8, "
                  "\"config_hidden\": 16}",
                  1e-4f, 0);
}

/* Only a model that scores configurations from their fields has a table runtime: a softmax model of a table is
 * refused with the reason. */
Test(export_table, a_softmax_table_model_is_refused, .timeout = 300)
{
    table_fixture f = table_fixture_make(40, 17, 0.05);
    model *m = table_fixture_train(&f, "gbdt", "{\"objective\": \"softmax\", \"rounds\": 3, \"log_every\": 0}");
    char *dir = test_tmppath("_export_table_softmax");
    cr_assert_eq(export_c_write(m, "model.h5", dir, "hm"), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "only gbdt with objective rank"), "%s", hr_last_error());
    free(dir);
    model_free(m);
    table_fixture_free(&f);
}

/* per problem on input: n, the problem's values, n configurations' values, each one's place in the vendor's list;
 * on output: hm_rank's scores (every candidate scored), then hm_rank_vendor's scores under the guard and ranking */
static const char *driver_guard =
    "#include <stdio.h>\n#include \"hm.h\"\n"
    "int main(int argc, char **argv) {\n"
    "  FILE *in = fopen(argv[1], \"r\"), *out = fopen(argv[2], \"w\");\n"
    "  static double pv[HM_N_PROBLEM], kv[4096 * HM_N_KERNEL];\n"
    "  static float s[4096];\n  static int r[4096];\n  static int16_t vr[4096];\n  int n, v;\n"
    "  if (!in || !out || argc != 3) return 1;\n"
    "  fprintf(out, \"%g %d\\n\", (double)HM_GUARD_MARGIN, HM_GUARD_TOP);\n"
    "  while (fscanf(in, \"%d\", &n) == 1 && n <= 4096) {\n"
    "    for (int j = 0; j < HM_N_PROBLEM; j++) if (fscanf(in, \"%lf\", &pv[j]) != 1) return 1;\n"
    "    for (int i = 0; i < n * HM_N_KERNEL; i++) if (fscanf(in, \"%lf\", &kv[i]) != 1) return 1;\n"
    "    for (int i = 0; i < n; i++) { if (fscanf(in, \"%d\", &v) != 1) return 1; vr[i] = (int16_t)v; }\n"
    "    if (hm_rank(pv, kv, n, s, 0)) return 1;\n"
    "    for (int i = 0; i < n; i++) fprintf(out, \"%.9g \", s[i]);\n"
    "    if (hm_rank_vendor(pv, kv, n, vr, s, r)) return 1;\n"
    "    for (int i = 0; i < n; i++) fprintf(out, \"%.9g \", s[i]);\n"
    "    for (int i = 0; i < n; i++) fprintf(out, \"%d \", r[i]);\n"
    "    fprintf(out, \"\\n\");\n"
    "  }\n  fclose(out);\n  return 0;\n}\n";

/* Candidate i's place in the vendor's list on problem p of n candidates: every third configuration in reverse
 * order; on every fifth problem from the second, no first pick (places from 1); from the third, only two places
 * (fewer than the guard's top 3); from the fourth, each place given twice (the runtime scores every candidate) */
static int vendor_place(int p, int i, int n)
{
    if (i % 3) return -1;
    int place = (n - 1 - i) / 3;
    switch (p % 5) {
    case 1: return place + 1;
    case 2: return place < 2 ? place : -1;
    case 3: return place / 2;
    }
    return place;
}

/* A table runtime exported with the vendor guard (--guard, --guard-top) decides as heurist's evaluation does
 * (data_portable_guard over the library's scores of the problem's measured configurations) on 40 problems, the
 * vendor's pick kept on some and the model's taken on others. It scores only the vendor's first three candidates
 * where the vendor's pick is present, yet gives the very scores and ranking of scoring every candidate (its own
 * hm_rank's under the same guard), with or without a first pick, with fewer listed than the guard's top, and with
 * places given twice. */
Test(export_table, guarded_runtime_agrees_with_the_guard_rule, .timeout = 300)
{
    table_fixture f = table_fixture_make(40, 19, 0.05);
    model *m = table_fixture_train(&f, "gbdt", "{\"objective\": \"rank\", \"rounds\": 12, \"log_every\": 0}");
    m->select_guard = 0.05f;
    m->select_guard_top = 3;
    int K = f.sel->n_kernels, nk = f.sel->table->spec.n_kernel;
    char *dir = test_tmppath("_export_table_guard");
    test_runtime_build(m, dir, driver_guard, "-O0");
    char path[1024];

    double *kv = malloc((size_t)K * nk * sizeof *kv);
    float *lib = malloc((size_t)K * sizeof *lib), *all = malloc((size_t)K * sizeof *all);
    int16_t *vr = malloc((size_t)K * sizeof *vr);
    int *ncand = malloc((size_t)f.sel->n * sizeof *ncand), *rank = malloc((size_t)K * sizeof *rank);
    snprintf(path, sizeof path, "%s/in.txt", dir);
    FILE *in = fopen(path, "w");
    for (int p = 0; p < f.sel->n; p++) {
        int n = measured_fill(&f, p, kv);
        ncand[p] = n;
        input_write(in, &f, p, kv, n);
        for (int i = 0; i < n; i++) fprintf(in, " %d", vendor_place(p, i, n));
        fprintf(in, "\n");
    }
    fclose(in);
    FILE *out = test_runtime_run(dir, "in.txt");
    double margin;
    int top;
    cr_assert_eq(fscanf(out, "%lf %d", &margin, &top), 2);
    cr_assert_float_eq(margin, 0.05, 1e-7);
    cr_assert_eq(top, 3);
    model_ws *ws;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    int kept = 0, taken = 0;
    for (int p = 0; p < f.sel->n; p++) {
        int n = measured_fill(&f, p, kv);
        cr_assert_eq(n, ncand[p]);
        for (int i = 0; i < n; i++) vr[i] = (int16_t)vendor_place(p, i, n);
        cr_assert_eq(model_predict_candidates(m, ws, f.X + (size_t)p * f.F, kv, n, lib), HR_OK, "%s", hr_last_error());
        int own = eval_select_argmax(lib, n);
        int want = data_portable_guard(lib, n, vr, 3, 0.05f);
        for (int i = 0; i < n; i++) cr_assert_eq(fscanf(out, "%f", &all[i]), 1);
        int want_rt = data_portable_guard(all, n, vr, 3, 0.05f);
        for (int i = 0; i < n; i++) {
            float s;
            cr_assert_eq(fscanf(out, "%f", &s), 1);
            cr_assert(s == all[i], "problem %d candidate %d: %.9g, every candidate scored %.9g", p, i, (double)s,
                      (double)all[i]);
            cr_assert(isinf(s) == isinf(lib[i]), "problem %d candidate %d: %g vs %g", p, i, (double)s, (double)lib[i]);
            if (isfinite(lib[i])) cr_assert_leq(fabsf(s - lib[i]), 1e-5f * fmaxf(1.0f, fabsf(lib[i])));
        }
        for (int i = 0; i < n; i++) rank[i] = i;
        cmp_scores = all;
        qsort(rank, (size_t)n, sizeof *rank, cmp_rank);
        for (int i = 0; i < n; i++) {
            int r;
            cr_assert_eq(fscanf(out, "%d", &r), 1);
            cr_assert_eq(r, rank[i], "problem %d place %d: %d vs %d", p, i, r, rank[i]);
        }
        const int pick = rank[0];
        cr_assert_eq(pick, want_rt, "problem %d: the runtime ranked %d first, its guard chose %d", p, pick, want_rt);
        cr_assert_eq(pick, want, "problem %d: the runtime chose %d, the guard rule %d", p, pick, want);
        if (p % 5 == 1) {
            cr_assert_eq(pick, own, "problem %d: without the vendor's pick the model's own stands", p);
            continue;
        }
        cr_assert(vr[pick] >= 0 && vr[pick] < 3, "problem %d: the choice is one of the vendor's first three", p);
        kept += vr[pick] == 0 && own != pick;
        taken += vr[pick] != 0;
    }
    cr_assert_gt(kept, 0, "the guard kept the vendor's pick somewhere");
    cr_assert_gt(taken, 0, "the model's pick passed the guard somewhere");
    fclose(out);
    model_ws_free(ws);
    test_dir_remove(dir);
    free(kv);
    free(lib);
    free(vr);
    free(ncand);
    free(all);
    free(rank);
    model_free(m);
    table_fixture_free(&f);
}

/* The guard's margin is written as a C float constant whatever its value: a whole number (0 with --guard-top alone,
 * or --guard 2) printed without a decimal point would read "0f", which no compiler takes. */
Test(export_table, guard_margin_is_a_float_constant)
{
    static const float margins[] = {0.0f, 2.0f, 0.745107f, 1e-12f};
    for (size_t i = 0; i < sizeof margins / sizeof *margins; i++) {
        model *m = calloc(1, sizeof *m);
        m->select_guard = margins[i];
        m->select_guard_top = 2;
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        export_c_guard_macros(f, m, "HM");
        fclose(f);
        const char *lit = strstr(text, "HM_GUARD_MARGIN ");
        cr_assert(lit, "%s", text);
        lit += strlen("HM_GUARD_MARGIN ");
        char *end;
        double v = strtod(lit, &end);
        cr_assert_eq(*end, 'f', "margin %g: '%s'", margins[i], text);
        cr_assert(memchr(lit, '.', (size_t)(end - lit)) || memchr(lit, 'e', (size_t)(end - lit)),
                  "margin %g: '%.*s' is no floating constant", margins[i], (int)(end - lit), lit);
        cr_assert_float_eq(v, margins[i], 1e-6 * fabs(margins[i]) + 1e-30);
        free(text);
        free(m);
    }
}
