/* --task tune on a benchmark table through the command line: train, eval, predict, compare (with the vendor row),
 * a malformed capability file; and export, in-process: a seq2seq model of the measured space as a runtime compiled
 * with cc that decodes as the library does, a model of the caps space and a gbdt refused with the reason; on the
 * small cuBLASLt-style fixture. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/core.h"
#include "data/table.h"
#include "export/export.h"
#include "helpers/exported_runtime.h"
#include "helpers/gemm_caps_fixture.h"
#include "helpers/run_in.h"
#include "helpers/testutil.h"
#include "models/model.h"
#include "pipeline/pipeline.h"

#define SMALL "{\"epochs\":2,\"embed\":8,\"hidden\":16,\"attn\":16,\"conv_channels\":8}"

/* per problem on input: n, the problem's values, n candidate configurations' values; on output: what hm_tune
 * returns, then the configuration */
static const char *tune_driver =
    "#include <stdio.h>\n#include \"hm.h\"\n"
    "int main(int argc, char **argv) {\n"
    "  FILE *in = fopen(argv[1], \"r\"), *out = fopen(argv[2], \"w\");\n"
    "  static double pv[HM_N_PROBLEM], kv[4096 * HM_N_KERNEL], v[HM_N_KERNEL];\n  int n;\n"
    "  if (!in || !out || argc != 3) return 1;\n"
    "  fprintf(out, \"%d %s\\n\", hm_tune(pv, kv, -1, v), hm_category_name(\"algo_id\", 0));\n"
    "  while (fscanf(in, \"%d\", &n) == 1 && n <= 4096) {\n"
    "    for (int j = 0; j < HM_N_PROBLEM; j++) if (fscanf(in, \"%lf\", &pv[j]) != 1) return 1;\n"
    "    for (int i = 0; i < n * HM_N_KERNEL; i++) if (fscanf(in, \"%lf\", &kv[i]) != 1) return 1;\n"
    "    fprintf(out, \"%d\", hm_tune(pv, kv, n, v));\n"
    "    for (int j = 0; j < HM_N_KERNEL; j++) fprintf(out, \" %.17g\", v[j]);\n"
    "    fprintf(out, \"\\n\");\n"
    "  }\n  fclose(out);\n  return 0;\n}\n";

/* per problem on input: n, the problem's values, the vendor's first pick, n candidate configurations' values; on
 * output: what hm_tune_vendor returns, the configuration, and hm_score of the unguarded decode and of the first pick */
static const char *guard_driver =
    "#include <stdio.h>\n#include \"hm.h\"\n"
    "int main(int argc, char **argv) {\n"
    "  FILE *in = fopen(argv[1], \"r\"), *out = fopen(argv[2], \"w\");\n"
    "  static double pv[HM_N_PROBLEM], first[HM_N_KERNEL], kv[4096 * HM_N_KERNEL], v[HM_N_KERNEL], d[HM_N_KERNEL];\n"
    "  int n;\n"
    "  if (!in || !out || argc != 3) return 1;\n"
    "  while (fscanf(in, \"%d\", &n) == 1 && n <= 4096) {\n"
    "    for (int j = 0; j < HM_N_PROBLEM; j++) if (fscanf(in, \"%lf\", &pv[j]) != 1) return 1;\n"
    "    for (int j = 0; j < HM_N_KERNEL; j++) if (fscanf(in, \"%lf\", &first[j]) != 1) return 1;\n"
    "    for (int i = 0; i < n * HM_N_KERNEL; i++) if (fscanf(in, \"%lf\", &kv[i]) != 1) return 1;\n"
    "    fprintf(out, \"%d\", hm_tune_vendor(pv, kv, n, first, v));\n"
    "    for (int j = 0; j < HM_N_KERNEL; j++) fprintf(out, \" %.17g\", v[j]);\n"
    "    hm_tune(pv, kv, n, d);\n"
    "    fprintf(out, \" %.9g %.9g\\n\", hm_score(pv, d), hm_score(pv, first));\n"
    "  }\n  fclose(out);\n  return 0;\n}\n";

/* A small seq2seq (or gbdt) tune model of d trained in-process on three quarters of its problems; space: the
 * seq2seq's decoding space */
static model *train_small(const pipe_dataset *d, const char *family, const char *space)
{
    char text[256];
    if (!strcmp(family, "gbdt")) snprintf(text, sizeof text, "{\"rounds\":1}");
    else snprintf(text, sizeof text, "{\"epochs\":1,\"embed\":4,\"hidden\":4,\"attn\":4,\"conv_channels\":4,\"beam\":2,"
                  "\"space\":\"%s\"}", space);
    cJSON *cfg = cJSON_Parse(text);
    data_split split;
    char desc[64];
    cr_assert_eq(pipe_split_random(d, "random:0.25", 0, &split, desc, sizeof desc), HR_OK);
    pipe_opts o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.threads = 1;
    o.config = cfg;
    o.keep_model = 1;
    o.valid_fraction = -1;
    pipe_result r;
    model *m = NULL;
    cr_assert_eq(pipe_run(d, &split, model_family_find(family), &o, &r, &m), HR_OK, "%s", hr_last_error());
    pipe_result_free(&r);
    cJSON_Delete(cfg);
    data_split_free(&split);
    return m;
}

/* The runtime's answer for problem i read from f (the candidate it names, then the configuration's values) is the
 * library's configuration want (q->length) and the candidate equal to it (-1: none). */
static void check_answer(FILE *f, const data_tune_problem *q, const int32_t *want, int i)
{
    const int L = q->length;
    int at = -1, rc;
    for (int c = 0; c < q->n_cand && at < 0; c++)
        if (!memcmp(q->cand + (size_t)c * L, want, (size_t)L * sizeof *want)) at = c;
    cr_assert_eq(fscanf(f, "%d", &rc), 1);
    cr_assert_eq(rc, at, "problem %d: candidate %d, the library's %d", i, rc, at);
    for (int j = 0; j < L; j++) {
        double v;
        cr_assert_eq(fscanf(f, "%lf", &v), 1);
        cr_assert_eq(v, want[j], "problem %d field %d: %g, the library's %d", i, j, v, want[j]);
    }
}

/* m exported, compiled with cc, and asked for each problem of d given its measured configurations: the runtime
 * writes the library's configuration (model_predict_tune within the same candidates) and names the candidate it
 * is; then the same without candidates, which decodes unconstrained and names none. */
static void check_tune_runtime(const model *m, const pipe_dataset *d)
{
    const data_tune *t = d->tune;
    const int L = t->length;
    char *dir = test_tmppath("_export_tune"), path[1024];
    /* unoptimised: the quickest build, and on x86-64 (no FMA without -march) the same float arithmetic as -O2 */
    test_runtime_build(m, dir, tune_driver, "-O0");
    snprintf(path, sizeof path, "%s/in.txt", dir);
    FILE *f = fopen(path, "w");
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < t->n; i++) {
            data_tune_problem q = data_tune_problem_of(t, d->V, i, pass == 0);
            fprintf(f, "%d", q.n_cand);
            for (int j = 0; j < d->n_values; j++) fprintf(f, " %.17g", q.pv[j]);
            for (int c = 0; c < q.n_cand * L; c++) fprintf(f, " %d", q.cand[c]);
            fprintf(f, "\n");
        }
    fclose(f);
    f = test_runtime_run(dir, "in.txt");
    int rc;
    char algo[32];
    cr_assert_eq(fscanf(f, "%d %31s", &rc, algo), 2);
    cr_assert_eq(rc, -2, "n < 0 is refused");
    cr_assert_str_eq(algo, t->sel->table->spec.kernel[0].vocab[0]);
    model_ws *ws = NULL;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    for (int i = 0; i < t->n; i++) {
        data_tune_problem q = data_tune_problem_of(t, d->V, i, 1);
        int32_t want[64];
        cr_assert_eq(model_predict_tune(m, ws, &q, want), HR_OK, "%s", hr_last_error());
        check_answer(f, &q, want, i);
    }
    for (int i = 0; i < t->n; i++) {
        cr_assert_eq(fscanf(f, "%d", &rc), 1);
        cr_assert_eq(rc, -1, "problem %d without candidates names none", i);
        for (int j = 0; j < L; j++) {
            double v;
            cr_assert_eq(fscanf(f, "%lf", &v), 1);
        }
    }
    fclose(f);
    model_ws_free(ws);
    test_dir_remove(dir);
}

Test(cli_table_tune, train_eval_predict_compare, .timeout = 300)
{
    char *csv = gemm_caps_fixture_write(60, 7), *mpath = test_tmppath(".h5"), *rep = test_tmppath(".json");
    char *dir = test_tmppath(""), args[4096], *out = NULL, *text = NULL;
    size_t len;
    snprintf(args, sizeof args,
             "train --data '%s' --task tune --model seq2seq --config '" SMALL "' --threads 1 --out '%s' --report '%s' --quiet",
             csv, mpath, rep);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "valid 1.0000"), "%s", out);
    cr_assert(strstr(out, "measured 1.0000"), "the default space is measured: %s", out);
    free(out);
    cr_assert_eq(hr_file_read_all(rep, &text, &len), HR_OK);
    cr_assert(strstr(text, "\"task\":\t\"tune\""), "%s", text);
    cr_assert(strstr(text, "\"efficiency_mean\""), "%s", text);
    cr_assert(strstr(text, "\"efficiency_p10\""), "%s", text);
    cr_assert(strstr(text, "\"measured\""), "%s", text);
    free(text);
    /* eval reads the table as tune data because the model is a table tune model */
    snprintf(args, sizeof args, "eval --model '%s' --data '%s' --split random:0.2 --report '%s'", mpath, csv, rep);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "efficiency"), "%s", out);
    free(out);
    /* predict: a configuration, field by field, valid under the rules the model file keeps */
    snprintf(args, sizeof args, "predict --model '%s' --problem 'M=128,N=300,K=256,dtype=bf16,trans_a=N,trans_b=T'", mpath);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "algo_id="), "%s", out);
    cr_assert(strstr(out, "  split_k "), "%s", out);
    cr_assert(strstr(out, "valid under the capability rules: yes"), "%s", out);
    free(out);
    /* a problem key of a convolution is no table problem */
    snprintf(args, sizeof args, "predict --model '%s' --problem 'M=128,N=300'", mpath);
    cr_assert_neq(test_cli_run(args, &out), 0, "%s", out);
    free(out);
    /* compare: both families and the vendor row, in the terminal and in report.md */
    snprintf(args, sizeof args,
             "compare --data '%s' --task tune --models seq2seq,gbdt --config '{\"seq2seq\":" SMALL ",\"gbdt\":{\"rounds\":5}}' "
             "--split random:0.25 --threads 1 --out '%s' --quiet",
             csv, dir);
    cr_assert_eq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "| vendor |"), "%s", out);
    cr_assert(strstr(out, "efficiency mean"), "%s", out);
    free(out);
    char md[4096];
    snprintf(md, sizeof md, "%s/report.json", dir);
    cr_assert_eq(hr_file_read_all(md, &text, &len), HR_OK);
    cr_assert(strstr(text, "\"model\":\t\"vendor\""), "%s", text);
    free(text);
    remove(mpath);
    remove(rep);
    free(csv), free(mpath), free(rep), free(dir);
}

/* export, in-process: the runtime of a small seq2seq of the measured space decodes as the library; a seq2seq of the
 * caps space and a gbdt are refused with the reason */
Test(cli_table_tune, export_decodes_as_the_library, .timeout = 60)
{
    char *csv = gemm_caps_fixture_write(16, 3), *dir = test_tmppath("_export_refused");
    pipe_dataset d;
    cr_assert_eq(pipe_dataset_load_caps(csv, "tune", NULL, NULL, NULL, 1, NULL, &d), HR_OK, "%s", hr_last_error());
    model *m = train_small(&d, "seq2seq", "measured");
    check_tune_runtime(m, &d);
    model_free(m);
    m = train_small(&d, "seq2seq", "caps");
    cr_assert_eq(export_c_write(m, "caps.h5", dir, "hm"), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "exports with space measured"), "%s", hr_last_error());
    model_free(m);
    m = train_small(&d, "gbdt", NULL);
    cr_assert_eq(export_c_write(m, "gbdt.h5", dir, "hm"), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "only seq2seq is"), "%s", hr_last_error());
    model_free(m);
    pipe_dataset_free(&d);
    free(dir);
    free(csv);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The tuner's vendor guard, in the library (model_predict_tune given a first pick) and in a runtime exported with
 * --guard (hm_tune_vendor). The small model's beam seldom misses a first pick it scores higher, so each problem's
 * first pick is its candidate the model scores lowest (every fourth problem's, where there is one, a candidate with a
 * value the model never writes, score -INFINITY, which the guard keeps), and the margin is set between two of the problems' score gaps:
 * the guard keeps some decodes and returns the first pick for others; the runtime decides as the library and scores as
 * it to float rounding. --guard-top is refused for a tune runtime. */
Test(cli_table_tune, export_guard_decides_as_the_library, .timeout = 60)
{
    char *csv = gemm_caps_fixture_write(16, 3), *dir = test_tmppath("_export_guard"), path[1024];
    pipe_dataset d;
    cr_assert_eq(pipe_dataset_load_caps(csv, "tune", NULL, NULL, NULL, 1, NULL, &d), HR_OK, "%s", hr_last_error());
    const data_tune *t = d.tune;
    const int L = t->length, n = t->n;
    model *m = train_small(&d, "seq2seq", "measured");
    model_ws *ws = NULL;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    /* the library's unguarded decodes and their score gaps over the first pick */
    int32_t *dec = malloc((size_t)n * L * sizeof *dec);
    float *gap = malloc((size_t)n * sizeof *gap), *pos = malloc((size_t)n * sizeof *pos), lib[2];
    int n_pos = 0, n_unwritable = 0, *first = malloc((size_t)n * sizeof *first);
    for (int i = 0; i < n; i++) {
        data_tune_problem q = data_tune_problem_of(t, d.V, i, 1);
        cr_assert(q.vendor, "problem %d: the fixture ranks a first pick", i);
        const int32_t *cs[64];
        float csc[64];
        cr_assert_leq(q.n_cand, 64);
        for (int c = 0; c < q.n_cand; c++) cs[c] = q.cand + (size_t)c * L;
        cr_assert_eq(model_score_tune(m, ws, &q, cs, q.n_cand, csc), HR_OK, "%s", hr_last_error());
        first[i] = -1;
        for (int c = 0; c < q.n_cand; c++)
            if (isfinite(csc[c]) && (first[i] < 0 || csc[c] < csc[first[i]])) first[i] = c;
        cr_assert_geq(first[i], 0, "problem %d: a candidate the model can write", i);
        /* every fourth problem's first pick one the model cannot write, where there is one: the guard keeps it */
        for (int c = 0; i % 4 == 3 && c < q.n_cand; c++)
            if (!isfinite(csc[c])) {
                first[i] = c;
                n_unwritable++;
                break;
            }
        q.vendor = cs[first[i]];
        cr_assert_eq(model_predict_tune(m, ws, &q, dec + (size_t)i * L), HR_OK, "%s", hr_last_error());
        const int32_t *seqs[2] = {dec + (size_t)i * L, q.vendor};
        cr_assert_eq(model_score_tune(m, ws, &q, seqs, 2, lib), HR_OK, "%s", hr_last_error());
        gap[i] = lib[0] - lib[1];
        if (memcmp(seqs[0], seqs[1], (size_t)L * sizeof *dec) && isfinite(gap[i]) && gap[i] > 0) pos[n_pos++] = gap[i];
    }
    cr_assert_gt(n_unwritable, 0, "the small model cannot write some candidates");
    cr_assert_geq(n_pos, 2, "the small model beats the first pick on %d problems", n_pos);
    qsort(pos, (size_t)n_pos, sizeof *pos, cmp_float);
    int mid = n_pos / 2;
    while (mid > 1 && pos[mid - 1] == pos[mid]) mid--;
    cr_assert_lt(pos[mid - 1], pos[mid]);
    m->select_guard = 0.5f * (pos[mid - 1] + pos[mid]);
    test_runtime_build(m, dir, guard_driver, "-O0");
    snprintf(path, sizeof path, "%s/in.txt", dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < n; i++) {
        data_tune_problem q = data_tune_problem_of(t, d.V, i, 1);
        q.vendor = q.cand + (size_t)first[i] * L;
        fprintf(f, "%d", q.n_cand);
        for (int j = 0; j < d.n_values; j++) fprintf(f, " %.17g", q.pv[j]);
        for (int j = 0; j < L; j++) fprintf(f, " %d", q.vendor[j]);
        for (int c = 0; c < q.n_cand * L; c++) fprintf(f, " %d", q.cand[c]);
        fprintf(f, "\n");
    }
    fclose(f);
    f = test_runtime_run(dir, "in.txt");
    int kept = 0, fell = 0;
    for (int i = 0; i < n; i++) {
        data_tune_problem q = data_tune_problem_of(t, d.V, i, 1);
        q.vendor = q.cand + (size_t)first[i] * L;
        int32_t want[64];
        cr_assert_eq(model_predict_tune(m, ws, &q, want), HR_OK, "%s", hr_last_error());
        int same_dec = !memcmp(want, dec + (size_t)i * L, (size_t)L * sizeof *want);
        int same_first = !memcmp(want, q.vendor, (size_t)L * sizeof *want);
        cr_assert(same_dec || same_first, "problem %d: the guard returns the decode or the first pick", i);
        if (!same_first) kept++;
        else if (!same_dec) fell++;
        cr_assert_eq(same_dec && !same_first, isfinite(gap[i]) && gap[i] >= m->select_guard,
                     "problem %d: gap %g, margin %g", i, gap[i], m->select_guard);
        check_answer(f, &q, want, i);
        double s_dec, s_first;
        cr_assert_eq(fscanf(f, "%lf %lf", &s_dec, &s_first), 2);
        const int32_t *seqs[2] = {dec + (size_t)i * L, q.vendor};
        cr_assert_eq(model_score_tune(m, ws, &q, seqs, 2, lib), HR_OK);
        cr_assert_float_eq(s_dec, lib[0], 1e-4 * (1 + fabs(lib[0])), "problem %d: score %g, the library's %g", i, s_dec, lib[0]);
        if (isfinite(lib[1]))
            cr_assert_float_eq(s_first, lib[1], 1e-4 * (1 + fabs(lib[1])), "problem %d: %g, the library's %g", i, s_first,
                               lib[1]);
        else
            cr_assert(s_first == -INFINITY && lib[1] == -INFINITY, "problem %d: %g, the library's %g", i, s_first, lib[1]);
    }
    fclose(f);
    cr_assert(kept > 0 && fell > 0, "the guard keeps %d decodes and returns the first pick for %d", kept, fell);
    /* a tune model's guard has no --guard-top, in a runtime or an evaluation */
    m->select_guard_top = 2;
    cr_assert_eq(export_c_write(m, "model", dir, "hm"), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "--guard-top"), "%s", hr_last_error());
    int all = 0;
    pipe_result res;
    memset(&res, 0, sizeof res);
    cr_assert_eq(pipe_evaluate(&d, m, &all, 1, &res), HR_EINVAL);
    cr_assert(strstr(hr_last_error(), "--guard-top"), "%s", hr_last_error());
    pipe_result_free(&res);
    model_ws_free(ws);
    model_free(m);
    /* a gbdt tuner's fields are independent classifiers: its pick, each field's most probable value, scores at least
     * as high as any candidate */
    m = train_small(&d, "gbdt", NULL);
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    for (int i = 0; i < n; i++) {
        data_tune_problem q = data_tune_problem_of(t, d.V, i, 1);
        int32_t pick[64];
        cr_assert_eq(model_predict_tune(m, ws, &q, pick), HR_OK, "%s", hr_last_error());
        for (int c = 0; c < q.n_cand; c++) {
            const int32_t *seqs[2] = {pick, q.cand + (size_t)c * L};
            cr_assert_eq(model_score_tune(m, ws, &q, seqs, 2, lib), HR_OK, "%s", hr_last_error());
            cr_assert(isfinite(lib[0]) && lib[0] >= lib[1], "problem %d candidate %d: %g < %g", i, c, lib[0], lib[1]);
        }
    }
    model_ws_free(ws);
    model_free(m);
    pipe_dataset_free(&d);
    test_dir_remove(dir);
    free(dec), free(gap), free(pos), free(first), free(csv);
}

Test(cli_table_tune, malformed_caps_is_one_line_naming_the_field)
{
    char *csv = gemm_caps_fixture_write(12, 8), args[4096], *out = NULL;
    const char bad[] = "{\"format\": \"heurist-collect gemm capabilities\", \"version\": 1, \"cluster_shapes_tried\": [],"
                       " \"types\": [{\"dtype\": \"bf16\", \"algos\": [{\"algo_id\": 5, \"tiles\": 3}]}]}";
    char *caps = test_tmpfile("caps.json", bad, sizeof bad - 1);
    snprintf(args, sizeof args, "train --data '%s' --task tune --caps '%s' --model gbdt --out '%s.h5' --quiet", csv, caps, caps);
    cr_assert_neq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "types[0].algos[0].tiles"), "%s", out);
    cr_assert_eq(test_lines_count(out), 1, "%s", out);
    free(out);
    snprintf(args, sizeof args, "train --data '%s' --task tune --caps '%s.none' --model gbdt --out '%s.h5' --quiet", csv, caps,
             caps);
    cr_assert_neq(test_cli_run(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "--caps"), "%s", out);
    free(out);
    free(caps);
    free(csv);
}
