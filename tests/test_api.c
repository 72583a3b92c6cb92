/* The C API (include/heurist.h) as another program uses it: of heurist's headers this test includes only
 * heurist.h (beside the tests' own helpers), and it links only libheurist. Models are trained with the heurist
 * command; the API's answers are checked against `heurist predict`, between one problem and a batch, and
 * between one thread and several. */
#define _POSIX_C_SOURCE 200809L /* popen, getpid: this test sees only heurist.h, not the library's build flags */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heurist.h"
#include "helpers/testutil.h"

#define MIOPEN HEURIST_DATASETS_DIR "/miopen/"

static int run(const char *args, char **out)
{
    return test_run_heurist(args, 0, out);
}

static char *tmp_model(void)
{
    const char *dir = getenv("TMPDIR");
    char *p = malloc(512);
    static int k;
    snprintf(p, 512, "%s/heurist_api_%d_%d.h5", dir && *dir ? dir : "/tmp", (int)getpid(), k++);
    return p;
}

static const char *const keys[] = {
    "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F", "256-56-56-1x1-64-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-B",
    "64-56-56-3x3-64-56-56-16-1x1-1x1-1x1-0-NCHW-FP16-F",  "128-28-28-3x3-128-28-28-8-1x1-1x1-1x1-0-NCHW-FP32-W",
    "512-7-7-1x1-2048-7-7-64-0x0-1x1-1x1-0-NCHW-BF16-F",   "3-224-224-7x7-64-112-112-4-3x3-2x2-1x1-0-NCHW-FP32-F",
};
#define N_KEYS (int)(sizeof keys / sizeof *keys)

Test(api, selection_ranks_as_predict_does_in_one_call_a_batch_and_threads)
{
    char *mpath = tmp_model(), *out, args[1024];
    snprintf(args, sizeof args,
             "train --data " MIOPEN "gfx906_60.HIP.fdb.txt.bz2 --task select --model gbdt --config '{\"rounds\":3}' "
             "--split random:0.5 --threads 1 --out %s --quiet", mpath);
    cr_assert_eq(run(args, &out), 0, "%s", out);
    free(out);
    heurist_model *m;
    cr_assert_eq(heurist_model_load(mpath, &m), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_eq(heurist_model_task(m), HEURIST_TASK_SELECT);
    int K = heurist_model_kernel_count(m);
    cr_assert_gt(K, 1);
    cr_assert_null(heurist_model_kernel_name(m, K));
    int kernel[256], n = 0, single[N_KEYS];
    float prob[256];
    cr_assert_leq(K, 256);
    for (int i = 0; i < N_KEYS; i++) {
        cr_assert_eq(heurist_rank(m, keys[i], 256, kernel, prob, &n), HEURIST_OK, "%s", heurist_last_error());
        cr_assert_gt(n, 0);
        double sum = 0;
        for (int r = 0; r < n; r++) {
            sum += prob[r];
            if (r) cr_assert_geq(prob[r - 1], prob[r], "ranked best first");
        }
        cr_assert_float_eq(sum, 1.0, 1e-5);
        single[i] = kernel[0];
        /* the same first kernel and probability as `heurist predict` prints */
        snprintf(args, sizeof args, "predict --model %s --problem %s --top 1", mpath, keys[i]);
        cr_assert_eq(run(args, &out), 0, "%s", out);
        char name[256];
        float pct;
        const char *line = strstr(out, "\n   1 ");
        cr_assert_not_null(line, "%s", out);
        cr_assert_eq(sscanf(line, " 1 %f%% %255s", &pct, name), 2, "%s", out);
        cr_assert_str_eq(name, heurist_model_kernel_name(m, kernel[0]));
        cr_assert_float_eq(pct, 100 * prob[0], 0.006);
        free(out);
    }
    /* a batch gives each problem's first kernel, on one thread or several */
    int best1[N_KEYS], best3[N_KEYS];
    cr_assert_eq(heurist_rank_batch(m, keys, N_KEYS, 1, best1), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_eq(heurist_rank_batch(m, keys, N_KEYS, 3, best3), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_arr_eq(best1, single, sizeof single);
    cr_assert_arr_eq(best3, single, sizeof single);
    /* errors: a key that does not parse (alone, or inside a batch, whose other answers stand), a tune call */
    cr_assert_eq(heurist_rank(m, "not-a-key", 256, kernel, prob, &n), HEURIST_EINVAL);
    cr_assert(strstr(heurist_last_error(), "not-a-key") != NULL, "%s", heurist_last_error());
    const char *mixed[3] = {keys[0], "1-2-3", keys[1]};
    int best[3];
    cr_assert_eq(heurist_rank_batch(m, mixed, 3, 2, best), HEURIST_EINVAL);
    cr_assert(strstr(heurist_last_error(), "problem 1") != NULL, "%s", heurist_last_error());
    cr_assert_eq(best[0], single[0]);
    cr_assert_eq(best[1], -1);
    cr_assert_eq(best[2], single[1]);
    int32_t v[8];
    cr_assert_eq(heurist_tune(m, keys[0], v), HEURIST_ESTATE);
    heurist_model_free(m);
    remove(mpath);
    free(mpath);
}

Test(api, tuning_predicts_as_predict_does)
{
    char *mpath = tmp_model(), *out, args[1024];
    snprintf(args, sizeof args,
             "train --data " MIOPEN "gfx906_60.db.bz2 --task tune --solver ConvAsm1x1U --model gbdt "
             "--config '{\"rounds\":2}' --threads 1 --out %s --quiet", mpath);
    cr_assert_eq(run(args, &out), 0, "%s", out);
    free(out);
    heurist_model *m;
    cr_assert_eq(heurist_model_load(mpath, &m), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_eq(heurist_model_task(m), HEURIST_TASK_TUNE);
    int L = heurist_model_param_count(m);
    cr_assert_eq(L, 8);
    cr_assert_str_eq(heurist_model_param_name(m, 0), "read_size");
    int32_t one[N_KEYS][8], batch[N_KEYS][8];
    for (int i = 0; i < N_KEYS; i++) {
        cr_assert_eq(heurist_tune(m, keys[i], one[i]), HEURIST_OK, "%s", heurist_last_error());
        snprintf(args, sizeof args, "predict --model %s --problem %s", mpath, keys[i]);
        cr_assert_eq(run(args, &out), 0, "%s", out);
        char want[128], got[128] = "";
        for (int j = 0; j < L; j++) snprintf(got + strlen(got), sizeof got - strlen(got), "%s%d", j ? "," : "", one[i][j]);
        cr_assert_eq(sscanf(out, "%127s", want), 1);
        cr_assert_str_eq(got, want);
        free(out);
    }
    cr_assert_eq(heurist_tune_batch(m, keys, N_KEYS, 2, &batch[0][0]), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_arr_eq(batch, one, sizeof one);
    /* a predictor tunes as heurist_tune does, and does not rank */
    heurist_predictor *p;
    cr_assert_eq(heurist_predictor_create(m, &p), HEURIST_OK, "%s", heurist_last_error());
    for (int i = 0; i < N_KEYS; i++) {
        int32_t v[8];
        cr_assert_eq(heurist_predictor_tune(p, keys[i], v), HEURIST_OK, "%s", heurist_last_error());
        cr_assert_arr_eq(v, one[i], sizeof v, "%s", keys[i]);
    }
    int k;
    cr_assert_eq(heurist_predictor_rank(p, keys[0], NULL, 0, 1, &k, NULL, NULL), HEURIST_ESTATE);
    cr_assert_eq(heurist_predictor_tune(p, "1-2-3", batch[0]), HEURIST_EINVAL);
    heurist_predictor_free(p);
    cr_assert_eq(heurist_rank(m, keys[0], 1, &k, NULL, NULL), HEURIST_ESTATE);
    heurist_model_free(m);
    remove(mpath);
    free(mpath);
}

Test(api, load_errors_say_what_is_wrong)
{
    heurist_model *m = (heurist_model *)1;
    cr_assert_eq(heurist_model_load("no/such/model.h5", &m), HEURIST_EIO);
    cr_assert_null(m);
    cr_assert(strstr(heurist_last_error(), "no/such/model.h5") != NULL, "%s", heurist_last_error());
    /* a file that is not a model */
    cr_assert_neq(heurist_model_load(MIOPEN "README.md", &m), HEURIST_OK);
    cr_assert(strstr(heurist_last_error(), "README.md") != NULL, "%s", heurist_last_error());
    cr_assert_eq(heurist_api_version(), HEURIST_API_VERSION);
    heurist_model_free(NULL);
}

/* A model of a benchmark table answers through the same calls: its problems are the table's column values, and its
 * first configuration is the one `heurist predict` ranks first. */
Test(api, a_table_model_ranks_problems_given_by_their_column_values, .timeout = 300)
{
    char *dir = tmp_model(), *mpath = tmp_model(), *out, args[2048], csv[600];
    snprintf(csv, sizeof csv, "%s.csv", dir);
    snprintf(args, sizeof args, "'%s' --problems 60 --seed 3 --out '%s'", HEURIST_GEN_GEMM_TABLE, csv);
    cr_assert_eq(system(args), 0, "%s", args);
    snprintf(args, sizeof args,
             "train --data '%s' --task select --model gbdt --config '{\"objective\":\"rank\",\"rounds\":3}' "
             "--split random:0.5 --threads 1 --out %s --quiet", csv, mpath);
    cr_assert_eq(run(args, &out), 0, "%s", out);
    free(out);
    heurist_model *m;
    cr_assert_eq(heurist_model_load(mpath, &m), HEURIST_OK, "%s", heurist_last_error());
    int K = heurist_model_kernel_count(m), n = 0;
    int *kernel = malloc((size_t)K * sizeof *kernel);
    const char *problem = "M=128,N=4096,K=4096,dtype=bf16";
    cr_assert_eq(heurist_rank(m, problem, K, kernel, NULL, &n), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_eq(n, K, "every configuration the model knows is ranked");
    snprintf(args, sizeof args, "predict --model %s --problem '%s' --top 1", mpath, problem);
    cr_assert_eq(run(args, &out), 0, "%s", out);
    const char *line = strstr(out, "\n   1 ");
    cr_assert_not_null(line, "%s", out);
    cr_assert(strstr(line, heurist_model_kernel_name(m, kernel[0])) != NULL, "%s vs %s", out,
              heurist_model_kernel_name(m, kernel[0]));
    free(out);
    /* a convolution key is no problem of a table */
    cr_assert_eq(heurist_rank(m, keys[0], K, kernel, NULL, &n), HEURIST_EINVAL);
    cr_assert(strstr(heurist_last_error(), "column values") != NULL, "%s", heurist_last_error());
    heurist_model_free(m);
    free(kernel);
    char schema[640];
    snprintf(schema, sizeof schema, "%s.schema.json", dir);
    remove(csv);
    remove(schema);
    remove(mpath);
    free(mpath);
    free(dir);
}
