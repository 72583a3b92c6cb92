/* Hostile runs of the commands (train, predict, diff, data) on the reproducers' GEMM table: results that were
 * silently wrong are errors or printed as undefined, and options that do not apply are refused, never ignored. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/h5.h"
#include "helpers/gemm_caps_fixture.h"
#include "helpers/h5_nan.h"
#include "helpers/run_in.h"
#include "helpers/testutil.h"

static char *dir;

static void setup(void)
{
    dir = test_gemm_table_dir();
}

static void teardown(void)
{
    test_dir_remove(dir);
}

#define OK(...) TEST_HEURIST_OK(dir, __VA_ARGS__)

/* non-zero exit `code` (0: any), a last line holding `why`, and no file `absent` (NULL: none to check) */
#define REFUSED(code, why, absent, ...)                                                                           \
    do {                                                                                                          \
        char *o_;                                                                                                 \
        int r_ = test_heurist_in(dir, &o_, __VA_ARGS__);                                                                        \
        refused_check(r_, code, o_, why, absent);                                                                 \
    } while (0)

static void refused_check(int rc, int code, char *out, const char *why, const char *absent)
{
    cr_assert(rc > 0 && (!code || rc == code), "exit %d (expected %d): %s", rc, code, out);
    cr_assert(strstr(out, why), "'%s' lacks '%s'", out, why);
    free(out);
    test_assert_absent(dir, absent);
}

TestSuite(hostile_cli, .init = setup, .fini = teardown, .timeout = 180);

#define DIVERGE "'{\"objective\":\"rank\",\"learning_rate\":10,\"rounds\":200,\"lambda_l2\":0,\"min_sum_hessian_in_leaf\":0," \
                "\"min_data_in_leaf\":0,\"rank_weight\":\"none\",\"early_stopping_rounds\":0}'"

/* A gbdt whose scores run off to infinity (learning_rate 10, no L2, no hessian floor) was written with non-finite
 * leaves and exit 0: it stops with "diverged", with a validation split and without, and writes nothing. */
Test(hostile_cli, a_diverged_gbdt_is_an_error_and_no_model)
{
    REFUSED(0, "diverged", "m.h5", "train --data t.csv --task select --model gbdt --config " DIVERGE " --out m.h5 --quiet");
    REFUSED(0, "diverged", "m.h5",
            "train --data t.csv --task select --model gbdt --valid-fraction 0 --config " DIVERGE " --out m.h5 --quiet");
}

/* A model whose scores are all NaN (its numbers edited to NaN, as a diverged run wrote them): predict ranked
 * "0 configurations" and exited 0. */
Test(hostile_cli, predict_with_no_finite_score_fails)
{
    OK("train --data t.csv --task select --model frequent --valid-fraction 0 --out r.h5 --quiet");
    char path[1024];
    snprintf(path, sizeof path, "%s/r.h5", dir);
    /* every float dataset of the family (the frequent baseline's shares) set to NaN */
    cr_assert_gt(test_h5_fill_nan(path, "family", NULL), 0, "%s", hr_last_error());
    REFUSED(1, "no configuration gets a finite score", NULL, "predict --model r.h5 --problem 'M=128,N=4096,K=64,dtype=fp16'");
}

/* A neural model whose saved weights hold NaN (a diverged run, a damaged copy) loaded, and eval reported NaN
 * metrics: loading refuses it, naming the file and the tensor, for each neural family; a gbdt leaf edited to NaN
 * is refused at load likewise. */
Test(hostile_cli, a_model_with_non_finite_weights_is_refused_at_load, .timeout = 600)
{
    static const char *const fams[][3] = {
        {"select", "reformer", "{\"epochs\":1,\"hidden\":8,\"expand\":8,\"depth\":1}"},
        {"select", "transformer", "{\"epochs\":1,\"d\":8,\"heads\":2,\"d_ff\":16}"},
        {"tune", "seq2seq", "{\"epochs\":1,\"embed\":8,\"hidden\":8,\"attn\":8,\"conv_channels\":8}"},
    };
    char path[1024];
    snprintf(path, sizeof path, "%s/n.h5", dir);
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
        OK("train --data t.csv --task %s --model %s --config '%s' --valid-fraction 0 --out n.h5 --quiet", fams[i][0],
           fams[i][1], fams[i][2]);
        OK("eval --model n.h5 --data t.csv --report e.json");
        cr_assert_gt(test_h5_fill_nan(path, "family/params/w", NULL), 0, "%s: %s", fams[i][1], hr_last_error());
        REFUSED(0, "n.h5: checkpoint tensor 'params/w/", NULL, "eval --model n.h5 --data t.csv --report e.json");
        REFUSED(0, "holds a non-finite value (nan at index 0", NULL, "predict --model n.h5 --problem 'M=128,N=4096,K=64,dtype=fp16'");
    }
    OK("train --data t.csv --task select --model gbdt --config '{\"rounds\":2}' --valid-fraction 0 --out g.h5 --quiet");
    snprintf(path, sizeof path, "%s/g.h5", dir);
    cr_assert_eq(test_h5_fill_nan(path, "family/booster0/trees", "leaf_value"), 1, "%s", hr_last_error());
    REFUSED(0, "leaf 0 value is not finite", NULL, "eval --model g.h5 --data t.csv --report e.json");
}

/* r2 of a model that regresses no per-pair target was printed "r2 nan". */
Test(hostile_cli, undefined_r2_prints_as_a_dash)
{
    char *out;
    int rc = test_heurist_in(dir, &out, "train --data t.csv --task select --model frequent --out f.h5");
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "  r2 -"), "%s", out);
    cr_assert_null(strstr(out, "nan"), "%s", out);
    free(out);
}

/* diff: a gbdt (softmax) model that lacks configurations the data measures exited 1 with a decision. A learned
 * model that knows configurations by name is refused (exit 2, naming the configuration); a model that scores
 * configurations by their fields (gbdt rank) ranks them and decides, and so does a baseline, whose fixed rule never
 * picks a configuration it does not know. */
Test(hostile_cli, diff_refuses_a_learned_model_lacking_measured_configurations)
{
    char cmd[1024], *out;
    snprintf(cmd, sizeof cmd, "cd '%s' && awk -F, 'NR==1 || $5!=64' t.csv > sub.csv && cp t.schema.json sub.schema.json", dir);
    cr_assert_eq(test_run_shell(cmd, &out), 0);
    free(out);
    OK("train --data sub.csv --task select --model gbdt --config '{\"rounds\":3,\"objective\":\"softmax\"}' --out old_gbdt.h5 --quiet");
    OK("train --data sub.csv --task select --model frequent --out old_freq.h5 --quiet");
    OK("train --data sub.csv --task select --model gbdt --config '{\"rounds\":3,\"objective\":\"rank\"}' --out old_rank.h5 --quiet");
    OK("train --data t.csv --task select --model gbdt --config '{\"rounds\":3}' --out new.h5 --quiet");
    REFUSED(2, "which the model does not know", NULL, "diff old_gbdt.h5 new.h5 --data t.csv");
    int rc = test_heurist_in(dir, &out, "diff old_rank.h5 new.h5 --data t.csv");
    cr_assert(rc == 0 || rc == 1, "a rank model decides: exit %d\n%s", rc, out);
    free(out);
    rc = test_heurist_in(dir, &out, "diff old_freq.h5 new.h5 --data t.csv");
    cr_assert(rc == 0 || rc == 1, "a baseline decides: exit %d\n%s", rc, out);
    free(out);
}

/* --schema with a dataset cache (or a find-db) was ignored without a word, even when it was not JSON. */
Test(hostile_cli, schema_with_a_source_that_has_none_is_refused)
{
    OK("data cache --data t.csv --out t.h5 --quiet");
    REFUSED(0, "--schema applies to a benchmark table", NULL, "data info --data t.h5 --schema t.schema.json");
    REFUSED(0, "--schema applies to a benchmark table", NULL, "data info --data t.h5 --schema '{garbage'");
    REFUSED(0, "--schema applies to a benchmark table", "m.h5",
            "train --data t.h5 --task select --model frequent --schema t.schema.json --out m.h5");
    char args[2048];
    snprintf(args, sizeof args, "data info --data %s --schema t.schema.json", test_miopen("gfx906_60.HIP.fdb.txt.bz2"));
    REFUSED(0, "is a find-db, which has no schema", NULL, "%s", args);
}

/* The tune vendor baseline printed INT32_MIN fields as a prediction for a problem its list does not hold; --caps
 * with a cache is applied (tune) or refused (select), never ignored. */
Test(hostile_cli, tune_vendor_without_a_pick_and_caps_with_a_tune_cache)
{
    char *csv = gemm_caps_fixture_write(24, 3), args[4096];
    snprintf(args, sizeof args, "train --data '%s' --task tune --model vendor --valid-fraction 0 --out v.h5 --quiet", csv);
    OK("%s", args);
    REFUSED(1, "makes no prediction", NULL,
            "predict --model v.h5 --problem 'M=7,N=7,K=7,dtype=bf16,trans_a=N,trans_b=T'");
    /* --caps with a cache: applied where the cache's table is tuned, refused where it is not */
    snprintf(args, sizeof args, "data cache --data '%s' --out tc.h5 --quiet", csv);
    OK("%s", args);
    char caps[2048];
    snprintf(caps, sizeof caps, "%s", csv);
    strcpy(strstr(caps, "gemm.csv"), "gemm.caps.json");
    OK("train --data tc.h5 --task tune --model gbdt --config '{\"rounds\":2}' --caps '%s' --valid-fraction 0 --out t1.h5 --quiet",
       caps);
    REFUSED(0, "capability rules are for --task tune", "m.h5",
            "train --data tc.h5 --task select --model frequent --caps '%s' --out m.h5", caps);
    free(csv);
}

/* A tune model whose parameter lists more values than its booster has classes: prediction read that many outputs
 * from a fixed buffer. The two are compared as the model file is read (and a table tune model's parameter count
 * with its table's kernel columns). */
Test(hostile_cli, a_tune_model_whose_vocabulary_outgrows_its_booster_is_refused)
{
    char *csv = gemm_caps_fixture_write(24, 5), args[4096];
    snprintf(args, sizeof args, "train --data '%s' --task tune --model gbdt --config '{\"rounds\":2}' --valid-fraction 0 "
             "--out g.h5 --quiet", csv);
    OK("%s", args);
    char path[1024];
    snprintf(path, sizeof path, "%s/g.h5", dir);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), g = H5Gopen2(f, "vocab", H5P_DEFAULT);
    cr_assert_geq(g, 0);
    hsize_t n = 2000;
    int32_t *v = malloc(n * sizeof *v);
    for (hsize_t i = 0; i < n; i++) v[i] = (int32_t)i;
    cr_assert_geq(H5Ldelete(g, "tile_m", H5P_DEFAULT), 0);
    hid_t sp = H5Screate_simple(1, &n, NULL), d = H5Dcreate2(g, "tile_m", H5T_NATIVE_INT32, sp, H5P_DEFAULT, H5P_DEFAULT,
                                                            H5P_DEFAULT);
    cr_assert_geq(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
    free(v);
    H5Dclose(d);
    H5Sclose(sp);
    H5Gclose(g);
    H5Fclose(f);
    cr_assert_eq(hr_h5_seal_file(path), HR_OK, "%s", hr_last_error());
    REFUSED(1, "classes for the 2000 values of parameter 'tile_m'", NULL,
            "predict --model g.h5 --problem 'M=128,N=300,K=256,dtype=bf16,trans_a=N,trans_b=T'");
    free(csv);
}
