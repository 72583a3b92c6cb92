/* The reformer and transformer families on a small real subset of gfx90878's find-db: learning,
 * determinism, resume, save/load, single-problem vs batched paths, version refusal, config checks, and the
 * Reformer's applicability head (fewer unmeasured picks, version-1 files without it still load) and its
 * piecewise-linear input encoding (bins from the training rows' quantiles, checked files). */
#define _GNU_SOURCE
#include <bzlib.h>
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/h5.h"
#include "eval/eval.h"
#include "helpers/testutil.h"
#include "models/model.h"
#include "nn/nn.h"

typedef struct fixture {
    data_select *sel;
    float *X;  /* (n, nf) */
    int nf;
    int *train, *valid, *test;
    int n_train, n_valid, n_test;
} fixture;

/* The first ~max_bytes of the decompressed find-db, cut at a line end, parsed. */
static fixture fixture_load(size_t max_bytes)
{
    fixture f;
    memset(&f, 0, sizeof f);
    hr_h5_quiet();
    FILE *fp = fopen(test_miopen("gfx90878.HIP.fdb.txt.bz2"), "rb");
    cr_assert(fp);
    int bzerr;
    BZFILE *bz = BZ2_bzReadOpen(&bzerr, fp, 0, 0, NULL, 0);
    cr_assert_eq(bzerr, BZ_OK);
    char *buf = malloc(max_bytes + 1);
    size_t len = 0;
    while (len < max_bytes) {
        int got = BZ2_bzRead(&bzerr, bz, buf + len, (int)(max_bytes - len));
        if (got > 0) len += (size_t)got;
        if (bzerr != BZ_OK) break;
    }
    BZ2_bzReadClose(&bzerr, bz);
    fclose(fp);
    while (len && buf[len - 1] != '\n') len--;
    buf[len] = '\0';
    data_load_opts o = {0, NULL};
    cr_assert_eq(data_fdb_parse("subset", buf, len, &o, &f.sel), HR_OK, "%s", hr_last_error());
    free(buf);
    const int n = f.sel->n;
    f.nf = data_features_count();
    f.X = malloc((size_t)n * f.nf * sizeof *f.X);
    data_features_compute_all(f.sel->problems, n, f.X);
    data_split s;
    cr_assert_eq(data_split_random(n, 0.2, 7, &s), HR_OK);
    f.test = s.test;
    f.n_test = s.n_test;
    f.train = malloc((size_t)s.n_train * sizeof *f.train);
    f.valid = malloc((size_t)s.n_train * sizeof *f.valid);
    for (int i = 0; i < s.n_train; i++) {
        if (i % 10 == 3) f.valid[f.n_valid++] = s.train[i];
        else f.train[f.n_train++] = s.train[i];
    }
    free(s.train);
    return f;
}

static void fixture_free(fixture *f)
{
    data_select_free(f->sel);
    free(f->X);
    free(f->train);
    free(f->valid);
    free(f->test);
}

static int train_threads = 1; /* model_ctx.threads of train_family */

static model *train_family(const fixture *f, const char *family, const char *config, uint64_t seed,
                           const char *checkpoint, int resume, const hr_log *log)
{
    const model_family *fam = model_family_find(family);
    cr_assert(fam, "family %s not registered", family);
    cJSON *cfg = cJSON_Parse(config);
    cr_assert(cfg);
    hr_log silent = hr_log_silent();
    model_train_data d = {MODEL_TASK_SELECT, f->sel, NULL, f->X, f->nf, f->train, f->n_train, f->valid, f->n_valid};
    model_ctx ctx = {seed, train_threads, log ? log : &silent, cfg, checkpoint, resume, NULL};
    model *m = NULL;
    int rc = fam->train(&d, &ctx, &m);
    cJSON_Delete(cfg);
    cr_assert_eq(rc, HR_OK, "%s", hr_last_error());
    return m;
}

/* scores (n_rows, K) through the single-problem path */
static float *scores_of(const model *m, const fixture *f, const int *rows, int n)
{
    const int K = m->n_kernels;
    float *s = malloc((size_t)n * K * sizeof *s);
    for (int i = 0; i < n; i++)
        cr_assert_eq(m->family->predict_select(m, &f->sel->problems[rows[i]], f->X + (size_t)rows[i] * f->nf,
                                               s + (size_t)i * K),
                     HR_OK);
    return s;
}

static double top1_of(const fixture *f, const float *scores, const int *rows, int n)
{
    const int K = f->sel->n_kernels;
    long hits = 0;
    for (int i = 0; i < n; i++) {
        const float *t = f->sel->runtime + (size_t)rows[i] * K;
        int pred = eval_select_argmax(scores + (size_t)i * K, K), best = data_select_best(f->sel, rows[i]);
        hits += best >= 0 && t[pred] == t[best];
    }
    return (double)hits / n;
}

/* top-1 of always answering the kernel most often fastest on the training rows */
static double baseline_top1(const fixture *f)
{
    const int K = f->sel->n_kernels;
    int *count = calloc((size_t)K, sizeof *count), arg = 0;
    for (int i = 0; i < f->n_train; i++) {
        int b = data_select_best(f->sel, f->train[i]);
        if (b >= 0 && ++count[b] > count[arg]) arg = b;
    }
    float *s = calloc((size_t)f->n_test * K, sizeof *s);
    for (int i = 0; i < f->n_test; i++) s[(size_t)i * K + arg] = 1.0f;
    double t = top1_of(f, s, f->test, f->n_test);
    free(s);
    free(count);
    return t;
}

#define SMALL_REFORMER "{\"epochs\": 6, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"lr\": 0.003}"
/* the paper's recipe: no applicability head, z-score input, runtime-ratio labels */
#define SMALL_REFORMER_PAPER                                                                                    \
    "{\"epochs\": 6, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"lr\": 0.003, \"applicability\": 0,"  \
    " \"input\": \"zscore\", \"label\": \"soft\"}"
#define SMALL_TRANSFORMER "{\"epochs\": 3, \"batch_size\": 64, \"d\": 16, \"heads\": 2, \"d_ff\": 32, \"lr\": 0.003}"

static void check_learns(const char *family, const char *config)
{
    fixture f = fixture_load(1200000);
    cr_assert_gt(f.sel->n, 2000);
    model *m = train_family(&f, family, config, 1, NULL, 0, NULL);
    cr_assert_geq(m->n_curve, 2);
    cr_assert_lt(m->curve[m->n_curve - 1].train_loss, m->curve[0].train_loss, "loss %g -> %g",
                 m->curve[0].train_loss, m->curve[m->n_curve - 1].train_loss);
    float *s = scores_of(m, &f, f.test, f.n_test);
    double top1 = top1_of(&f, s, f.test, f.n_test), base = baseline_top1(&f);
    cr_log_info("%s: test top1 %.3f, majority baseline %.3f, %ld params\n", family, top1, base, model_n_params(m));
    cr_assert_gt(top1, base + 0.1, "top1 %.3f vs baseline %.3f", top1, base);
    free(s);
    model_free(m);
    fixture_free(&f);
}

Test(models_reformer, loss_decreases_and_beats_the_majority_baseline, .timeout = 120)
{
    check_learns("reformer", SMALL_REFORMER);
}

/* save -> load gives bit-identical scores, and the loaded model records its provenance */
static void check_round_trip(const char *family, const char *config)
{
    fixture f = fixture_load(400000);
    model *m = train_family(&f, family, config, 3, NULL, 0, NULL);
    char *path = test_tmppath(".h5");
    cr_assert_eq(model_save(m, path), HR_OK, "%s", hr_last_error());
    model *m2 = NULL;
    cr_assert_eq(model_load(path, &m2), HR_OK, "%s", hr_last_error());
    cr_assert_str_eq(m2->family->name, family);
    cr_assert_eq(model_n_params(m2), model_n_params(m));
    cr_assert_eq(m2->n_curve, m->n_curve);
    float *a = scores_of(m, &f, f.test, f.n_test), *b = scores_of(m2, &f, f.test, f.n_test);
    cr_assert(memcmp(a, b, (size_t)f.n_test * m->n_kernels * sizeof *a) == 0);
    /* model_predict_select computes the features itself: same answer */
    float *c = malloc((size_t)m->n_kernels * sizeof *c);
    cr_assert_eq(model_predict_select(m2, &f.sel->problems[f.test[0]], c), HR_OK);
    cr_assert(memcmp(a, c, (size_t)m->n_kernels * sizeof *c) == 0);
    free(a);
    free(b);
    free(c);
    model_free(m2);
    model_free(m);
    remove(path);
    free(path);
    fixture_free(&f);
}

Test(models_reformer, save_load_round_trip_is_bit_identical, .timeout = 120)
{
    check_round_trip("reformer", SMALL_REFORMER);
    check_round_trip("reformer", "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 16, \"expand\": 8, \"norm\": \"layer\","
                                 " \"input\": \"zscore\", \"dropout\": 0.1, \"label\": \"soft\", \"tau\": 0.5,"
                                 " \"combine\": \"mask\"}");
    check_round_trip("reformer", "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 16, \"expand\": 8, \"combine\": \"head\","
                                 " \"app_target\": \"efficiency\", \"combine_weight\": 2}");
    check_round_trip("reformer", "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 16, \"expand\": 8, \"applicability\": 0}");
    check_round_trip("reformer", "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 16, \"expand\": 8,"
                                 " \"input\": \"ple\", \"input_bins\": 8}");
}

/* Same seed and data => the same model bit for bit, with 1 or 2 OpenBLAS threads; another seed differs. */
Test(models_reformer, same_seed_is_bit_identical_across_blas_threads, .timeout = 120)
{
    fixture f = fixture_load(400000);
    const char *cfg = "{\"epochs\": 3, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"dropout\": 0.1}";
    hr_blas_set_threads(1);
    model *a = train_family(&f, "reformer", cfg, 5, NULL, 0, NULL);
    hr_blas_set_threads(2);
    model *b = train_family(&f, "reformer", cfg, 5, NULL, 0, NULL);
    hr_blas_set_threads(1);
    model *c = train_family(&f, "reformer", cfg, 6, NULL, 0, NULL);
    float *sa = scores_of(a, &f, f.test, f.n_test), *sb = scores_of(b, &f, f.test, f.n_test);
    float *sc = scores_of(c, &f, f.test, f.n_test);
    size_t bytes = (size_t)f.n_test * a->n_kernels * sizeof *sa;
    cr_assert(memcmp(sa, sb, bytes) == 0, "same seed, 1 vs 2 BLAS threads: different models");
    cr_assert(memcmp(sa, sc, bytes) != 0, "different seeds gave the same model");
    free(sa);
    free(sb);
    free(sc);
    model_free(a);
    model_free(b);
    model_free(c);
    fixture_free(&f);
}

/* "batch_parts": a batch's parts go through the passes on up to that many threads, with BatchNorm's
 * statistics and the gradients summed in part order, so the model is the same bit for bit at 1, 2 or 3
 * threads (3 threads on 2 parts start 2). Dropout draws per part; a part count of 3 does not divide the
 * batch of 64; layer norm has no statistics to share. With SGD (updates proportional to the gradients)
 * two parts stay within float rounding of one pass. */
Test(models_reformer, batch_parts_are_bit_identical_across_threads, .timeout = 240)
{
    fixture f = fixture_load(400000);
    const char *cfgs[] = {
        "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"dropout\": 0.1, \"batch_parts\": 2}",
        "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"batch_parts\": 3, \"input\": \"ple\","
        " \"input_bins\": 8}",
        "{\"epochs\": 2, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"batch_parts\": 3, \"norm\": \"layer\","
        " \"applicability\": 0}",
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++) {
        float *s[3];
        model *m[3];
        for (int t = 0; t < 3; t++) {
            train_threads = t + 1;
            m[t] = train_family(&f, "reformer", cfgs[c], 5, NULL, 0, NULL);
            s[t] = scores_of(m[t], &f, f.test, f.n_test);
        }
        train_threads = 1;
        size_t bytes = (size_t)f.n_test * m[0]->n_kernels * sizeof **s;
        cr_assert(memcmp(s[0], s[1], bytes) == 0, "%s: 1 vs 2 threads: different models", cfgs[c]);
        cr_assert(memcmp(s[0], s[2], bytes) == 0, "%s: 1 vs 3 threads: different models", cfgs[c]);
        for (int t = 0; t < 3; t++) {
            free(s[t]);
            model_free(m[t]);
        }
    }
    const char *sgd[] = {"{\"epochs\": 1, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"optimizer\": \"sgd\","
                         " \"lr\": 0.01}",
                         "{\"epochs\": 1, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"optimizer\": \"sgd\","
                         " \"lr\": 0.01, \"batch_parts\": 2}"};
    train_threads = 2;
    model *one = train_family(&f, "reformer", sgd[0], 5, NULL, 0, NULL);
    model *two = train_family(&f, "reformer", sgd[1], 5, NULL, 0, NULL);
    train_threads = 1;
    float *s1 = scores_of(one, &f, f.test, f.n_test), *s2 = scores_of(two, &f, f.test, f.n_test);
    double worst = 0.0;
    for (size_t i = 0; i < (size_t)f.n_test * one->n_kernels; i++) worst = fmax(worst, fabs(s1[i] - s2[i]));
    cr_assert(worst < 1e-3, "1 vs 2 parts under SGD: scores differ by %g", worst);
    free(s1);
    free(s2);
    model_free(one);
    model_free(two);
    fixture_free(&f);
}

/* A log sink that kills the (forked) training process when epoch `kill_at` is announced, i.e. after the
 * checkpoint of the epoch before it was committed: a crash in the middle of a run. */
static int kill_at;
static ssize_t killer_write(void *cookie, const char *buf, size_t size)
{
    char tag[32];
    snprintf(tag, sizeof tag, "epoch %3d/", kill_at);
    if (memmem(buf, size, tag, strlen(tag))) _exit(0);
    return (ssize_t)size;
}

static void check_resume(const char *family, const char *config)
{
    fixture f = fixture_load(400000);
    char *ckpt = test_tmppath(".ckpt.h5");
    model *full = train_family(&f, family, config, 9, NULL, 0, NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        kill_at = 3;
        cookie_io_functions_t io = {NULL, killer_write, NULL, NULL};
        FILE *sink = fopencookie(NULL, "w", io);
        setvbuf(sink, NULL, _IONBF, 0);
        hr_log log = {sink, HR_LOG_INFO};
        train_family(&f, family, config, 9, ckpt, 0, &log);
        _exit(1); /* should have been killed at epoch 3 */
    }
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the interrupted run was not interrupted");
    cr_assert(hr_file_exists(ckpt));
    model *resumed = train_family(&f, family, config, 9, ckpt, 1, NULL);
    cr_assert_eq(resumed->n_curve, full->n_curve);
    float *a = scores_of(full, &f, f.test, f.n_test), *b = scores_of(resumed, &f, f.test, f.n_test);
    cr_assert(memcmp(a, b, (size_t)f.n_test * full->n_kernels * sizeof *a) == 0,
              "resumed training differs from uninterrupted training");
    /* a checkpoint of another run is refused */
    cJSON *other = cJSON_Parse(config);
    cJSON_ReplaceItemInObject(other, "epochs", cJSON_CreateNumber(7));
    char *other_s = cJSON_PrintUnformatted(other);
    const model_family *fam = model_family_find(family);
    model_train_data d = {MODEL_TASK_SELECT, f.sel, NULL, f.X, f.nf, f.train, f.n_train, f.valid, f.n_valid};
    hr_log silent = hr_log_silent();
    model_ctx ctx = {9, 1, &silent, other, ckpt, 1, NULL};
    model *m = NULL;
    cr_assert_neq(fam->train(&d, &ctx, &m), HR_OK);
    cr_assert(strstr(hr_last_error(), "another run"), "%s", hr_last_error());
    /* a damaged checkpoint is refused by its checksum, not resumed from */
    FILE *fp = fopen(ckpt, "r+b");
    cr_assert_not_null(fp);
    cr_assert_eq(fseek(fp, 1000, SEEK_SET), 0);
    int byte = fgetc(fp);
    cr_assert_eq(fseek(fp, 1000, SEEK_SET), 0);
    fputc(byte ^ 0x40, fp);
    fclose(fp);
    model_ctx same = {9, 1, &silent, NULL, ckpt, 1, NULL};
    cJSON *cfg = cJSON_Parse(config);
    same.config = cfg;
    cr_assert_neq(fam->train(&d, &same, &m), HR_OK);
    cr_assert(strstr(hr_last_error(), "checksum mismatch, the file is damaged") && strstr(hr_last_error(), ckpt), "%s",
              hr_last_error());
    cJSON_Delete(cfg);
    free(other_s);
    cJSON_Delete(other);
    free(a);
    free(b);
    model_free(full);
    model_free(resumed);
    remove(ckpt);
    free(ckpt);
    fixture_free(&f);
}

Test(models_reformer, resume_from_checkpoint_equals_uninterrupted_training, .timeout = 120)
{
    check_resume("reformer", "{\"epochs\": 5, \"batch_size\": 64, \"hidden\": 24, \"expand\": 16, \"dropout\": 0.1,"
                             " \"patience\": 3}");
}

/* The single-problem path (folded BatchNorm, matrix-vector products) agrees with the batched training-time
 * evaluation: the validation top-1 recorded for the restored epoch is reproduced, and so is the validation
 * loss when the scores are the softmax head's logits (check_loss; with the applicability head the recorded
 * loss adds the BCE term, and the scores are log P(fastest) + log P(measured), each <= 0). */
static void check_single_vs_batched(const char *family, const char *config, int check_loss)
{
    fixture f = fixture_load(400000);
    model *m = train_family(&f, family, config, 11, NULL, 0, NULL);
    int best = 0;
    for (int i = 1; i < m->n_curve; i++)
        if (m->curve[i].valid_loss < m->curve[best].valid_loss) best = i;
    const int K = m->n_kernels;
    float *s = scores_of(m, &f, f.valid, f.n_valid);
    float *y = malloc((size_t)f.n_valid * K * sizeof *y), *p = malloc((size_t)f.n_valid * K * sizeof *p);
    data_labels_fill(f.sel, f.valid, f.n_valid, DATA_LABEL_SOFT_RATIO, 1.0f, y);
    float loss = nn_xent_forward(s, y, p, f.n_valid, K);
    double top1 = top1_of(&f, s, f.valid, f.n_valid);
    if (check_loss)
        cr_assert_float_eq(loss, m->curve[best].valid_loss, 1e-4 * fabsf(loss) + 1e-5, "%g vs %g", loss,
                           m->curve[best].valid_loss);
    else
        for (size_t i = 0; i < (size_t)f.n_valid * K; i++) cr_assert_leq(s[i], 1e-6f, "score %g > 0", s[i]);
    cr_assert_float_eq(top1, m->curve[best].valid_top1, 1.5 / f.n_valid, "%g vs %g", top1, m->curve[best].valid_top1);
    free(s);
    free(y);
    free(p);
    model_free(m);
    fixture_free(&f);
}

Test(models_reformer, single_problem_prediction_equals_batched, .timeout = 120)
{
    check_single_vs_batched("reformer", SMALL_REFORMER, 0);
    check_single_vs_batched("reformer", SMALL_REFORMER_PAPER, 1);
    check_single_vs_batched("reformer", "{\"epochs\": 3, \"batch_size\": 64, \"hidden\": 16, \"expand\": 16,"
                                        " \"norm\": \"layer\", \"depth\": 2, \"applicability\": 0,"
                                        " \"label\": \"soft\"}", 1);
    check_single_vs_batched("reformer", "{\"epochs\": 3, \"batch_size\": 64, \"hidden\": 16, \"expand\": 16,"
                                        " \"norm\": \"layer\", \"depth\": 2, \"combine\": \"mask\"}", 0);
    check_single_vs_batched("reformer", "{\"epochs\": 3, \"batch_size\": 64, \"hidden\": 16, \"expand\": 16,"
                                        " \"input\": \"ple\", \"input_bins\": 16}", 0);
    /* the encoded input's first product folded into two columns per feature (reformer_fold_input) against the
     * batched forward over the 16-bin encoding: the validation loss to 1e-4 */
    check_single_vs_batched("reformer", "{\"epochs\": 3, \"batch_size\": 64, \"hidden\": 16, \"expand\": 16,"
                                        " \"input\": \"ple\", \"input_bins\": 16, \"applicability\": 0,"
                                        " \"label\": \"soft\"}", 1);
}

static void set_int_attr(const char *path, const char *group, const char *name, long long v)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    hid_t g = group ? H5Gopen2(f, group, H5P_DEFAULT) : f;
    cr_assert_geq(g, 0);
    hid_t a = H5Aopen(g, name, H5P_DEFAULT);
    cr_assert_geq(a, 0);
    cr_assert_geq(H5Awrite(a, H5T_NATIVE_LLONG, &v), 0);
    H5Aclose(a);
    if (group) H5Gclose(g);
    H5Fclose(f);
    cr_assert_eq(hr_h5_seal_file(path), HR_OK, "%s", hr_last_error()); /* the edit is on purpose */
}

/* Dataset `name` of a saved model's "family" group, read whole into a buffer the caller frees; *n its rows */
static void *family_read(const char *path, const char *name, hid_t type, size_t *n)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), g = H5Gopen2(f, "family", H5P_DEFAULT);
    cr_assert_geq(g, 0);
    size_t cols;
    void *buf = NULL;
    cr_assert_eq(hr_h5_read_alloc(g, name, type, n, &cols, &buf), HR_OK, "%s", hr_last_error());
    H5Gclose(g);
    H5Fclose(f);
    return buf;
}

/* Overwrites dataset `name` of a saved model's "family" group with buf (its shape unchanged) */
static void family_write(const char *path, const char *name, hid_t type, const void *buf)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), g = H5Gopen2(f, "family", H5P_DEFAULT);
    cr_assert_geq(g, 0);
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    cr_assert_geq(d, 0);
    cr_assert_geq(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
    H5Dclose(d);
    H5Gclose(g);
    H5Fclose(f);
    cr_assert_eq(hr_h5_seal_file(path), HR_OK, "%s", hr_last_error()); /* the edit is on purpose */
}

static void check_newer_refused(const char *family, const char *config, const char *family_attr)
{
    fixture f = fixture_load(200000);
    model *m = train_family(&f, family, config, 1, NULL, 0, NULL);
    char *path = test_tmppath(".h5");
    cr_assert_eq(model_save(m, path), HR_OK);
    model *m2 = NULL;
    set_int_attr(path, NULL, "version", MODEL_FILE_VERSION + 1);
    cr_assert_eq(model_load(path, &m2), HR_EVERSION);
    cr_assert_null(m2);
    set_int_attr(path, NULL, "version", MODEL_FILE_VERSION);
    set_int_attr(path, "family", family_attr, 99);
    cr_assert_eq(model_load(path, &m2), HR_EVERSION, "%s", hr_last_error());
    cr_assert(strstr(hr_last_error(), "newer"), "%s", hr_last_error());
    model_free(m);
    remove(path);
    free(path);
    fixture_free(&f);
}

Test(models_reformer, newer_model_file_is_refused, .timeout = 120)
{
    check_newer_refused("reformer", "{\"epochs\": 1, \"hidden\": 8, \"expand\": 8}", "reformer_version");
}

Test(models_reformer, config_is_validated)
{
    fixture f = fixture_load(100000);
    const model_family *fam = model_family_find("reformer");
    const char *bad[] = {"{\"epoch\": 3}", "{\"norm\": \"group\"}", "{\"optimizer\": \"lion\"}", "{\"depth\": 0}",
                         "{\"label\": \"fastest\"}", "{\"dropout\": 1.5}", "{\"batch_size\": 1}", "{\"hidden\": 2.5}",
                         "{\"applicability\": -1}", "{\"combine\": \"sum\"}", "{\"combine_weight\": -1}",
                         "{\"app_target\": \"fastest\"}", "{\"input\": \"bins\"}", "{\"input_bins\": 1}",
                         "{\"input\": \"ple\", \"input_bins\": 5000}", "{\"batch_parts\": 0}", "{\"batch_parts\": 9}",
                         "{\"batch_size\": 8, \"batch_parts\": 5}"};
    hr_log silent = hr_log_silent();
    model_train_data d = {MODEL_TASK_SELECT, f.sel, NULL, f.X, f.nf, f.train, f.n_train, f.valid, f.n_valid};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cJSON *cfg = cJSON_Parse(bad[i]);
        model_ctx ctx = {1, 1, &silent, cfg, NULL, 0, NULL};
        model *m = NULL;
        cr_assert_eq(fam->train(&d, &ctx, &m), HR_EINVAL, "%s accepted", bad[i]);
        cr_assert_null(m);
        cJSON_Delete(cfg);
    }
    fixture_free(&f);
}

Test(models_reformer, default_size_is_about_the_papers, .timeout = 300)
{
    /* the default architecture with the full kernel vocabulary (70 kernels on gfx90878) */
    fixture f = fixture_load(100000);
    cr_assert_lt(f.sel->n_kernels, 70);
    long blocks = 0, in = f.nf, w = 92, e = 96, K = 70;
    for (int l = 0; l < 3; l++) {
        blocks += in * w + w + in * e + e + 2 * e + e * w + w;
        in = w;
    }
    cr_assert_eq(f.nf, 76);
    cr_assert_eq(blocks + w * K + K, 83302); /* the paper's instantiation: 80,978 */
    model *m = train_family(&f, "reformer", "{\"epochs\": 1, \"applicability\": 0}", 1, NULL, 0, NULL);
    cr_assert_eq(model_n_params(m), blocks + w * f.sel->n_kernels + f.sel->n_kernels);
    model_free(m);
    /* the default adds the applicability head, one more hidden -> K linear map */
    m = train_family(&f, "reformer", "{\"epochs\": 1}", 1, NULL, 0, NULL);
    cr_assert_eq(model_n_params(m), blocks + 2 * (w * f.sel->n_kernels + f.sel->n_kernels));
    model_free(m);
    fixture_free(&f);
}

/* The applicability head learns which kernels were measured for a held-out problem: ranked by the head alone
 * (combine "head": scores = log sigmoid(a)), measured kernels get a much higher mean probability than the
 * others (3-4 of ~60 kernels are measured), and its first choice was measured for most problems. (Whether it
 * lowers the unmeasured picks of the combined ranking is measured on the full data in docs/BENCHMARKS.md; a
 * 6-epoch model on a small subset cannot show it reliably.) */
Test(models_reformer, applicability_head_separates_measured_kernels, .timeout = 180)
{
    fixture f = fixture_load(1200000);
    const int K = f.sel->n_kernels;
    const char *cfg = "{\"epochs\": 6, \"batch_size\": 64, \"hidden\": 32, \"expand\": 24, \"lr\": 0.003,"
                      " \"combine\": \"head\"}";
    model *m = train_family(&f, "reformer", cfg, 1, NULL, 0, NULL);
    float *s = scores_of(m, &f, f.test, f.n_test);
    double sum[2] = {0, 0};
    long cnt[2] = {0, 0}, first_measured = 0;
    for (int i = 0; i < f.n_test; i++) {
        const float *t = f.sel->runtime + (size_t)f.test[i] * K, *si = s + (size_t)i * K;
        for (int k = 0; k < K; k++) {
            int measured = isfinite(t[k]) != 0;
            sum[measured] += exp(si[k]);
            cnt[measured]++;
        }
        first_measured += isfinite(t[eval_select_argmax(si, K)]) != 0;
    }
    double p_meas = sum[1] / cnt[1], p_other = sum[0] / cnt[0], hit = (double)first_measured / f.n_test;
    cr_log_info("applicability head: mean P %.3f on measured kernels, %.3f on the others; first choice measured"
                " %.3f\n", p_meas, p_other, hit);
    cr_assert_gt(p_meas, p_other + 0.4, "P(measured) %.3f vs %.3f", p_meas, p_other);
    cr_assert_gt(hit, 0.85, "first choice measured for %.3f of the problems", hit);
    free(s);
    model_free(m);
    fixture_free(&f);
}

/* Version-1 files (before the applicability head) still load, as models without the head. */
Test(models_reformer, version_1_file_loads_without_the_head, .timeout = 120)
{
    fixture f = fixture_load(200000);
    model *m = train_family(&f, "reformer", "{\"epochs\": 1, \"hidden\": 8, \"expand\": 8, \"applicability\": 0}", 1,
                            NULL, 0, NULL);
    char *path = test_tmppath(".h5");
    cr_assert_eq(model_save(m, path), HR_OK);
    set_int_attr(path, "family", "reformer_version", 1);
    model *m2 = NULL;
    cr_assert_eq(model_load(path, &m2), HR_OK, "%s", hr_last_error());
    float *a = scores_of(m, &f, f.test, f.n_test), *b = scores_of(m2, &f, f.test, f.n_test);
    cr_assert(memcmp(a, b, (size_t)f.n_test * m->n_kernels * sizeof *a) == 0);
    free(a);
    free(b);
    model_free(m2);
    model_free(m);
    remove(path);
    free(path);
    fixture_free(&f);
}

/* ---- piecewise-linear input encoding ---- */

static float test_slog(float v)
{
    return v >= 0.0f ? log2f(1.0f + v) : -log2f(1.0f - v);
}

static int cmp_f(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Input "ple": the bins stored in the model file are, feature by feature and in order, the intervals between
 * the distinct order statistics v_(floor(i (n - 1) / B)), i = 0..B, of the slog feature over the training rows
 * (recomputed here on their own); features with fewer than three distinct edges (flags, one-hot codes) have
 * none; the first block reads the features and the encoding columns. */
Test(models_reformer, ple_bins_are_the_training_quantiles, .timeout = 120)
{
    fixture f = fixture_load(400000);
    const int B = 8, H = 16, E = 8;
    char cfg[160];
    snprintf(cfg, sizeof cfg, "{\"epochs\": 1, \"hidden\": %d, \"expand\": %d, \"input\": \"ple\", \"input_bins\": %d}",
             H, E, B);
    model *m = train_family(&f, "reformer", cfg, 1, NULL, 0, NULL);
    char *path = test_tmppath(".h5");
    cr_assert_eq(model_save(m, path), HR_OK, "%s", hr_last_error());
    size_t n = 0, n2;
    int *src = family_read(path, "ple_feature", H5T_NATIVE_INT, &n);
    float *lo = family_read(path, "ple_lo", H5T_NATIVE_FLOAT, &n2);
    cr_assert_eq(n2, n);
    float *hi = family_read(path, "ple_hi", H5T_NATIVE_FLOAT, &n2);
    cr_assert_eq(n2, n);
    float *v = malloc((size_t)f.n_train * sizeof *v), e[9];
    size_t c = 0;
    int with_bins = 0, flags_without = 0;
    for (int j = 0; j < f.nf; j++) {
        for (int i = 0; i < f.n_train; i++) v[i] = test_slog(f.X[(size_t)f.train[i] * f.nf + j]);
        qsort(v, (size_t)f.n_train, sizeof *v, cmp_f);
        int ne = 0;
        for (int i = 0; i <= B; i++) {
            float q = v[(size_t)i * (size_t)(f.n_train - 1) / B];
            if (ne == 0 || q > e[ne - 1]) e[ne++] = q;
        }
        if (ne < 3) {
            flags_without += ne == 2;
            continue;
        }
        with_bins++;
        for (int t = 0; t + 1 < ne; t++, c++) {
            cr_assert_lt(c, n, "fewer bins stored than computed (feature %d)", j);
            cr_assert_eq(src[c], j, "bin %zu: feature %d, expected %d", c, src[c], j);
            cr_assert(lo[c] == e[t] && hi[c] == e[t + 1], "feature %d bin %d: [%g, %g] vs [%g, %g]", j, t, lo[c], hi[c],
                      e[t], e[t + 1]);
        }
    }
    cr_assert_eq(c, n, "%zu bins stored, %zu computed", n, c);
    cr_assert_gt(with_bins, 20, "%d features encoded", with_bins);
    cr_assert_gt(flags_without, 10, "%d two-valued features", flags_without);
    /* the first block reads nf + n inputs: A1 (H) and A2 (E) rows */
    const long in = f.nf + (long)n;
    long expect = in * H + H + in * E + E + 2 * E + E * H + H + 2 * (H * E + E + H * H + H + 2 * E + E * H + H);
    expect += 2 * (H * m->n_kernels + m->n_kernels);
    cr_assert_eq(model_n_params(m), expect, "%ld params, expected %ld", model_n_params(m), expect);
    free(v);
    free(src);
    free(lo);
    free(hi);
    model_free(m);
    remove(path);
    free(path);
    fixture_free(&f);
}

/* A model file whose encoding bins are broken is refused with a message naming the bin */
Test(models_reformer, broken_ple_bins_are_refused, .timeout = 120)
{
    fixture f = fixture_load(200000);
    const char *cfg = "{\"epochs\": 1, \"hidden\": 8, \"expand\": 8, \"input\": \"ple\"}";
    model *m = train_family(&f, "reformer", cfg, 1, NULL, 0, NULL);
    for (int what = 0; what < 2; what++) {
        char *path = test_tmppath(".h5");
        cr_assert_eq(model_save(m, path), HR_OK);
        size_t n;
        const char *name = what ? "ple_feature" : "ple_hi";
        const hid_t type = what ? H5T_NATIVE_INT : H5T_NATIVE_FLOAT;
        void *buf = family_read(path, name, type, &n);
        if (what) ((int *)buf)[n - 1] = 1000; /* not a feature */
        else ((float *)buf)[0] = -1e30f;     /* hi below lo */
        family_write(path, name, type, buf);
        free(buf);
        model *m2 = NULL;
        cr_assert_eq(model_load(path, &m2), HR_EFORMAT, "%s", hr_last_error());
        cr_assert_null(m2);
        cr_assert(strstr(hr_last_error(), what ? "not a feature" : "is not an interval"), "%s", hr_last_error());
        remove(path);
        free(path);
    }
    model_free(m);
    fixture_free(&f);
}

/* A file whose bins overlap (here by one float step, which moves no training value) is still a model: prediction
 * takes the plain product over the z-scored encoding instead of the folded one, and agrees with the original */
Test(models_reformer, overlapping_ple_bins_take_the_plain_product, .timeout = 120)
{
    fixture f = fixture_load(200000);
    const char *cfg = "{\"epochs\": 2, \"hidden\": 8, \"expand\": 8, \"input\": \"ple\", \"input_bins\": 8}";
    model *m = train_family(&f, "reformer", cfg, 1, NULL, 0, NULL);
    char *path = test_tmppath(".h5");
    cr_assert_eq(model_save(m, path), HR_OK);
    size_t n, n2;
    float *lo = family_read(path, "ple_lo", H5T_NATIVE_FLOAT, &n);
    int *src = family_read(path, "ple_feature", H5T_NATIVE_INT, &n2);
    size_t c = 1;
    while (c < n && src[c] != src[c - 1]) c++;
    cr_assert_lt(c, n, "no feature with two bins");
    lo[c] = nextafterf(lo[c], -INFINITY); /* below the end of the bin before */
    family_write(path, "ple_lo", H5T_NATIVE_FLOAT, lo);
    model *m2 = NULL;
    cr_assert_eq(model_load(path, &m2), HR_OK, "%s", hr_last_error());
    const int K = m->n_kernels;
    float *s1 = scores_of(m, &f, f.valid, f.n_valid), *s2 = scores_of(m2, &f, f.valid, f.n_valid);
    for (size_t i = 0; i < (size_t)f.n_valid * K; i++)
        cr_assert_float_eq(s2[i], s1[i], 1e-4f * fabsf(s1[i]) + 1e-4f, "score %zu: %g vs %g", i, s2[i], s1[i]);
    free(s1);
    free(s2);
    free(lo);
    free(src);
    model_free(m2);
    model_free(m);
    remove(path);
    free(path);
    fixture_free(&f);
}

/* ---- transformer ---- */

Test(models_transformer, learns, .timeout = 120)
{
    check_learns("transformer", SMALL_TRANSFORMER);
}

Test(models_transformer, save_load_and_resume, .timeout = 120)
{
    check_round_trip("transformer", SMALL_TRANSFORMER);
    check_resume("transformer", "{\"epochs\": 4, \"batch_size\": 64, \"d\": 8, \"heads\": 2, \"d_ff\": 16}");
}

Test(models_transformer, single_problem_prediction_equals_batched_and_newer_refused, .timeout = 120)
{
    check_single_vs_batched("transformer", SMALL_TRANSFORMER, 1);
    check_newer_refused("transformer", "{\"epochs\": 1, \"d\": 8, \"heads\": 2, \"d_ff\": 16}", "transformer_version");
}

/* The gbdt family records a training curve like the networks do: one point per boosting round with the
 * validation loss and top-1, the top-1 recomputed here from the validation rows' scores of the final model. */
Test(models_gbdt, softmax_records_a_curve_per_round, .timeout = 300)
{
    fixture f = fixture_load(400000);
    const char *cfg = "{\"rounds\": 6, \"num_leaves\": 15, \"log_every\": 0, \"early_stopping_rounds\": 0}";
    model *m = train_family(&f, "gbdt", cfg, 1, NULL, 0, NULL);
    cr_assert_gt(f.n_valid, 100);
    cr_assert_eq(m->n_curve, 6);
    for (int i = 0; i < m->n_curve; i++) {
        cr_assert_eq(m->curve[i].step, i + 1);
        cr_assert(isfinite(m->curve[i].valid_loss) && m->curve[i].valid_loss > 0);
        cr_assert(m->curve[i].valid_top1 >= 0 && m->curve[i].valid_top1 <= 1);
        if (i) cr_assert_lt(m->curve[i].valid_loss, m->curve[i - 1].valid_loss);
    }
    float *s = scores_of(m, &f, f.valid, f.n_valid);
    long hit = 0;
    for (int i = 0; i < f.n_valid; i++) {
        const float *t = f.sel->runtime + (size_t)f.valid[i] * f.sel->n_kernels;
        int pred = 0;
        float best = t[0];
        for (int k = 1; k < f.sel->n_kernels; k++) {
            if (s[(size_t)i * f.sel->n_kernels + k] > s[(size_t)i * f.sel->n_kernels + pred]) pred = k;
            if (t[k] < best) best = t[k];
        }
        hit += t[pred] == best;
    }
    cr_assert_float_eq(m->curve[5].valid_top1, (float)hit / (float)f.n_valid, 1e-6);
    free(s);
    model_free(m);
    fixture_free(&f);
}
