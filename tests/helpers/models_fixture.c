/* The model family tests' shared fixture and checks (see models_fixture.h). */
#define _GNU_SOURCE
#include "helpers/models_fixture.h"

#include <bzlib.h>
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/h5.h"
#include "eval/eval.h"
#include "helpers/testutil.h"
#include "nn/nn.h"

/* The first ~max_bytes of the decompressed find-db, cut at a line end, parsed. */
fixture fixture_load(size_t max_bytes)
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
    data_load_opts o = {0};
    cr_assert_eq(data_fdb_parse("subset", buf, len, &o, &f.sel), HR_OK, "%s", hr_last_error());
    free(buf);
    const int n = f.sel->n;
    f.nf = data_features_count();
    f.X = malloc((size_t)n * f.nf * sizeof *f.X);
    data_features_compute_all(f.sel->problems, n, f.X);
    cr_assert_eq(data_codec_of_select(f.sel, &f.codec), HR_OK);
    f.nv = data_codec_value_count(f.codec);
    f.V = malloc((size_t)n * f.nv * sizeof *f.V);
    data_select_values(f.sel, f.V);
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

void fixture_free(fixture *f)
{
    data_select_free(f->sel);
    data_codec_free(f->codec);
    free(f->V);
    free(f->X);
    free(f->train);
    free(f->valid);
    free(f->test);
}

model_train_data fixture_train_data(const fixture *f)
{
    model_train_data d = {.task = MODEL_TASK_SELECT, .sel = f->sel, .codec = f->codec, .V = f->V, .X = f->X,
                          .n_features = f->nf, .train = f->train, .n_train = f->n_train, .valid = f->valid,
                          .n_valid = f->n_valid};
    return d;
}

const double *fixture_values(const fixture *f, int r)
{
    return f->V + (size_t)r * f->nv;
}

int train_threads = 1;

model *train_family(const fixture *f, const char *family, const char *config, uint64_t seed,
                           const char *checkpoint, int resume, const hr_log *log)
{
    const model_family *fam = model_family_find(family);
    cr_assert(fam, "family %s not registered", family);
    cJSON *cfg = cJSON_Parse(config);
    cr_assert(cfg);
    hr_log silent = hr_log_silent();
    model_train_data d = fixture_train_data(f);
    model_ctx ctx = {seed, train_threads, log ? log : &silent, cfg, checkpoint, resume, NULL, NULL, NULL, NULL};
    model *m = NULL;
    int rc = model_train(fam, &d, &ctx, &m);
    cJSON_Delete(cfg);
    cr_assert_eq(rc, HR_OK, "%s", hr_last_error());
    return m;
}

/* scores (n_rows, K) through the single-problem path */
float *scores_of(const model *m, const fixture *f, const int *rows, int n)
{
    const int K = m->n_kernels;
    float *s = malloc((size_t)n * K * sizeof *s);
    model_ws *ws = NULL;
    cr_assert_eq(model_ws_create(m, &ws), HR_OK);
    for (int i = 0; i < n; i++)
        cr_assert_eq(model_predict_select_x(m, ws, fixture_values(f, rows[i]), f->X + (size_t)rows[i] * f->nf,
                                            s + (size_t)i * K),
                     HR_OK);
    model_ws_free(ws);
    return s;
}

double top1_of(const fixture *f, const float *scores, const int *rows, int n)
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
double baseline_top1(const fixture *f)
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

void check_learns(const char *family, const char *config)
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

/* save -> load gives bit-identical scores, and the loaded model records its provenance */
void check_round_trip(const char *family, const char *config)
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
    model_ws *ws = NULL;
    cr_assert_eq(model_ws_create(m2, &ws), HR_OK);
    cr_assert_eq(model_predict_select(m2, ws, fixture_values(&f, f.test[0]), c), HR_OK);
    cr_assert(memcmp(a, c, (size_t)m->n_kernels * sizeof *c) == 0);
    /* a workspace fits only the model it was created for */
    cr_assert_eq(model_predict_select(m, ws, fixture_values(&f, f.test[0]), c), HR_EINVAL);
    model_ws_free(ws);
    free(a);
    free(b);
    free(c);
    model_free(m2);
    model_free(m);
    remove(path);
    free(path);
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

void check_resume(const char *family, const char *config)
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
    model_train_data d = fixture_train_data(&f);
    hr_log silent = hr_log_silent();
    model_ctx ctx = {9, 1, &silent, other, ckpt, 1, NULL, NULL, NULL, NULL};
    model *m = NULL;
    cr_assert_neq(model_train(fam, &d, &ctx, &m), HR_OK);
    cr_assert(strstr(hr_last_error(), "another run"), "%s", hr_last_error());
    /* a damaged checkpoint is refused by its checksum, not resumed from */
    FILE *fp = fopen(ckpt, "r+b");
    cr_assert_not_null(fp);
    cr_assert_eq(fseek(fp, 1000, SEEK_SET), 0);
    int byte = fgetc(fp);
    cr_assert_eq(fseek(fp, 1000, SEEK_SET), 0);
    fputc(byte ^ 0x40, fp);
    fclose(fp);
    model_ctx same = {9, 1, &silent, NULL, ckpt, 1, NULL, NULL, NULL, NULL};
    cJSON *cfg = cJSON_Parse(config);
    same.config = cfg;
    cr_assert_neq(model_train(fam, &d, &same, &m), HR_OK);
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

/* The single-problem path (folded BatchNorm, matrix-vector products) agrees with the batched training-time
 * evaluation: the validation top-1 recorded for the restored epoch is reproduced, and so is the validation
 * loss when the scores are the softmax head's logits (check_loss; with the applicability head the recorded
 * loss adds the BCE term, and the scores are log P(fastest) + log P(measured), each <= 0). */
void check_single_vs_batched(const char *family, const char *config, int check_loss)
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
    cr_assert_float_eq(top1, m->curve[best].valid_metric, 1.5 / f.n_valid, "%g vs %g", top1, m->curve[best].valid_metric);
    free(s);
    free(y);
    free(p);
    model_free(m);
    fixture_free(&f);
}

void set_int_attr(const char *path, const char *group, const char *name, long long v)
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
void *family_read(const char *path, const char *name, hid_t type, size_t *n)
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
void family_write(const char *path, const char *name, hid_t type, const void *buf)
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

void check_newer_refused(const char *family, const char *config, const char *family_attr)
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

/* One thread's share of check_threads_share: every row, through its own workspace, many times over. */
typedef struct share_job {
    const model *m;
    const fixture *f;
    float *scores; /* (n_test, K) */
    int rc;
} share_job;

static void *share_run(void *arg)
{
    share_job *j = arg;
    const int K = j->m->n_kernels;
    model_ws *ws = NULL;
    j->rc = model_ws_create(j->m, &ws);
    for (int rep = 0; rep < 20 && !j->rc; rep++)
        for (int i = 0; i < j->f->n_test && !j->rc; i++)
            j->rc = model_predict_select(j->m, ws, fixture_values(j->f, j->f->test[i]), j->scores + (size_t)i * K);
    model_ws_free(ws);
    return NULL;
}

void check_threads_share(const char *family, const char *config)
{
    fixture f = fixture_load(200000);
    model *trained = train_family(&f, family, config, 5, NULL, 0, NULL);
    const model *m = trained;
    const int K = m->n_kernels;
    const size_t n = (size_t)f.n_test * K;
    float *one = scores_of(m, &f, f.test, f.n_test);
    enum { THREADS = 2 };
    share_job jobs[THREADS];
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) {
        jobs[t] = (share_job){m, &f, calloc(n, sizeof(float)), -1};
        cr_assert_eq(pthread_create(&th[t], NULL, share_run, &jobs[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) cr_assert_eq(pthread_join(th[t], NULL), 0);
    for (int t = 0; t < THREADS; t++) {
        cr_assert_eq(jobs[t].rc, HR_OK, "thread %d: %s", t, hr_last_error());
        cr_assert(memcmp(jobs[t].scores, one, n * sizeof *one) == 0, "thread %d's scores differ from one thread's", t);
        free(jobs[t].scores);
    }
    free(one);
    model_free(trained);
    fixture_free(&f);
}
