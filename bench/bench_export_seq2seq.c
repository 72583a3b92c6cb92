/* Benchmark: time per problem of an exported seq2seq runtime (the model's own decoding, by default a
 * constrained beam of width 4) against heurist's model_predict_tune on the same held-out problems.
 * usage: bench_export_seq2seq PERFDB.bz2 [MODEL.h5 [CC_FLAGS]]
 *   without MODEL, trains the family's default architecture for 2 epochs on 3,000 ConvAsm1x1U rows;
 *   CC_FLAGS (default "-O2") are passed to cc when building the runtime.
 * Both are timed in CPU seconds (clock(), one thread: run with OPENBLAS_NUM_THREADS=1) over REPS passes
 * of the keys, the runtime by a driver compiled with it; its outputs are checked against heurist's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/h5.h"
#include "data/data.h"
#include "models/model.h"
#include "export/export.h"

#define N_PROBLEMS 1000
#define REPS 5
#define STR_(x) #x
#define STR(x) STR_(x)

static const char driver[] =
    "#include <stdio.h>\n#include <string.h>\n#include <time.h>\n#include \"hm.h\"\n"
    "static char keys[1000][256];\n"
    "int main(int argc, char **argv) {\n"
    "  FILE *in = fopen(argv[1], \"r\"), *out = fopen(argv[2], \"w\");\n"
    "  int n = 0, v[64];\n  clock_t c0, c1;\n  long sink = 0;\n"
    "  if (!in || !out || argc < 3) return 1;\n"
    "  while (n < 1000 && fgets(keys[n], sizeof keys[n], in)) {\n    keys[n][strcspn(keys[n], \"\\n\")] = 0;\n    n++;\n  }\n"
    "  for (int i = 0; i < n; i++) {\n    hm_tune_key(keys[i], v);\n"
    "    for (int j = 0; j < hm_length(); j++) fprintf(out, \"%s%d\", j ? \" \" : \"\", v[j]);\n"
    "    fprintf(out, \"\\n\");\n  }\n"
    "  c0 = clock();\n"
    "  for (int r = 0; r < " STR(REPS) "; r++)\n    for (int i = 0; i < n; i++) {\n      hm_tune_key(keys[i], v);\n      sink += v[0];\n    }\n"
    "  c1 = clock();\n"
    "  double s = (double)(c1 - c0) / CLOCKS_PER_SEC;\n"
    "  printf(\"%.3f\\n\", 1e6 * s / (" STR(REPS) ".0 * n));\n  fclose(out);\n  return sink == -1;\n}\n";

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int bad = fputs(text, f) < 0;
    return fclose(f) || bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_export_seq2seq PERFDB.bz2 [MODEL.h5 [CC_FLAGS]]\n");
        return 2;
    }
    hr_h5_quiet();
    const char *cflags = argc > 3 ? argv[3] : "-O2";
    data_tune *dt;
    if (data_perfdb_load(argv[1], "ConvAsm1x1U", NULL, &dt)) {
        fprintf(stderr, "bench_export_seq2seq: %s\n", hr_last_error());
        return 1;
    }
    data_split s;
    if (data_split_random(dt->n, 0.2, 3, &s) || s.n_test < N_PROBLEMS) {
        fprintf(stderr, "bench_export_seq2seq: need %d held-out problems\n", N_PROBLEMS);
        return 1;
    }
    model *m = NULL;
    int rc;
    if (argc > 2 && strcmp(argv[2], "-") != 0) {
        rc = model_load(argv[2], &m);
    } else {
        model_train_data d;
        if (model_train_data_tune(dt, &d)) return 1;
        d.train = s.train, d.n_train = s.n_train < 3000 ? s.n_train : 3000;
        cJSON *cfg = cJSON_Parse("{\"epochs\": 2}");
        hr_log silent = hr_log_silent();
        model_ctx ctx = {7, 0, &silent, cfg, NULL, 0, NULL, NULL, NULL, NULL};
        double t0 = hr_now();
        rc = model_train(model_family_find("seq2seq"), &d, &ctx, &m);
        printf("trained seq2seq (defaults, 2 epochs, %d rows) in %.1f s\n", d.n_train, hr_now() - t0);
        cJSON_Delete(cfg);
        model_train_data_free(&d);
    }
    if (rc) {
        fprintf(stderr, "bench_export_seq2seq: %s\n", hr_last_error());
        return 1;
    }
    if (strcmp(m->family->name, "seq2seq") != 0) {
        fprintf(stderr, "bench_export_seq2seq: %s is a %s model\n", argv[2], m->family->name);
        return 1;
    }

    /* heurist itself */
    int32_t (*want)[64] = malloc(N_PROBLEMS * sizeof *want);
    if (!want) return 1;
    model_ws *ws = NULL;
    if (model_ws_create(m, &ws)) {
        fprintf(stderr, "bench_export_seq2seq: %s\n", hr_last_error());
        return 1;
    }
    double (*pv)[DATA_CODEC_MAX_VALUES] = malloc(N_PROBLEMS * sizeof *pv);
    if (!pv) return 1;
    for (int i = 0; i < N_PROBLEMS; i++) data_problem_values(&dt->problems[s.test[i]], pv[i]);
    clock_t c0 = clock();
    for (int r = 0; r < REPS; r++)
        for (int i = 0; i < N_PROBLEMS; i++) {
            data_tune_problem q = {pv[i], NULL, 0, m->length, NULL};
            model_predict_tune(m, ws, &q, want[i]);
        }
    double heurist_us = 1e6 * (double)(clock() - c0) / CLOCKS_PER_SEC / (REPS * N_PROBLEMS);
    model_ws_free(ws);

    /* the exported runtime */
    const char *tmp = getenv("TMPDIR");
    char dir[512], path[1024], cmd[4096];
    snprintf(dir, sizeof dir, "%s/bench_export_seq2seq_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return 1;
    if (export_c_write(m, "model", dir, "hm")) {
        fprintf(stderr, "bench_export_seq2seq: %s\n", hr_last_error());
        return 1;
    }
    snprintf(path, sizeof path, "%s/driver.c", dir);
    if (write_text(path, driver)) return 1;
    snprintf(path, sizeof path, "%s/keys.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    for (int i = 0; i < N_PROBLEMS; i++) {
        char key[256];
        data_key_format(&dt->problems[s.test[i]], key, sizeof key);
        fprintf(f, "%s\n", key);
    }
    if (fclose(f)) return 1;
    snprintf(cmd, sizeof cmd, "cc -std=c11 %s -Wall -Werror -o %s/drv %s/driver.c %s/hm.c -lm", cflags, dir, dir, dir);
    if (system(cmd)) {
        fprintf(stderr, "bench_export_seq2seq: compile failed: %s\n", cmd);
        return 1;
    }
    snprintf(cmd, sizeof cmd, "%s/drv %s/keys.txt %s/out.txt", dir, dir, dir);
    FILE *p = popen(cmd, "r");
    double runtime_us = -1;
    if (!p || fscanf(p, "%lf", &runtime_us) != 1 || pclose(p)) {
        fprintf(stderr, "bench_export_seq2seq: running the driver failed\n");
        return 1;
    }
    snprintf(path, sizeof path, "%s/out.txt", dir);
    f = fopen(path, "r");
    int differ = 0;
    for (int i = 0; f && i < N_PROBLEMS; i++) {
        int same = 1;
        for (int j = 0; j < m->length; j++) {
            int v;
            same &= fscanf(f, "%d", &v) == 1 && v == want[i][j];
        }
        differ += !same;
    }
    if (f) fclose(f);
    printf("exported runtime (cc %s): %.1f us/problem; heurist model_predict_tune: %.1f us/problem; "
           "%d of %d sequences differ\n", cflags, runtime_us, heurist_us, differ, N_PROBLEMS);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "bench_export_seq2seq: could not remove %s\n", dir);
    free(want);
    free(pv);
    model_free(m);
    data_split_free(&s);
    data_tune_free(dt);
    return differ != 0;
}
