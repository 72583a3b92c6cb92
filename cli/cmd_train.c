/* heurist train | cv | eval | predict */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "pipeline/pipeline.h"

/* Options every training command shares. */
typedef struct train_common {
    const char *data, *task, *solver;
    const model_family *fam;
    cJSON *config;
    uint64_t seed;
    int threads;
    double valid_fraction; /* pipe_opts.valid_fraction */
    hr_log log;
} train_common;

static int common_parse(const cli_args *a, const char *cmd, int need_model, train_common *c)
{
    memset(c, 0, sizeof *c);
    c->log = hr_log_stderr(cli_has(a, "quiet") ? HR_LOG_WARN : HR_LOG_INFO);
    c->data = cli_need(a, cmd, "data");
    if (!c->data) return 2;
    c->task = cli_get(a, "task");
    if (c->task && strcmp(c->task, "select") && strcmp(c->task, "tune")) {
        fprintf(stderr, "heurist %s: --task '%s': expected select or tune\n", cmd, c->task);
        return 2;
    }
    c->solver = cli_get(a, "solver");
    if (need_model) {
        const char *m = cli_need(a, cmd, "model");
        if (!m) return 2;
        c->fam = model_family_find(m);
        if (!c->fam) {
            fprintf(stderr, "heurist %s: unknown --model '%s' (available: %s)\n", cmd, m, model_family_names());
            return 2;
        }
    }
    const char *cfg = cli_get(a, "config");
    if (cfg) {
        c->config = cJSON_Parse(cfg);
        if (!c->config) {
            /* a path to a JSON file is accepted as well as inline JSON */
            char *text;
            size_t len;
            if (hr_file_read_all(cfg, &text, &len) == HR_OK) {
                c->config = cJSON_Parse(text);
                free(text);
            }
        }
        if (!cJSON_IsObject(c->config)) {
            fprintf(stderr, "heurist %s: --config is neither a JSON object nor a file holding one: %.60s\n", cmd, cfg);
            cJSON_Delete(c->config);
            return 2;
        }
    }
    long long seed, threads;
    if (cli_get_int(a, "seed", 0, &seed) || cli_get_int(a, "threads", 0, &threads)) return 2;
    c->seed = (uint64_t)seed;
    c->threads = hr_threads_resolve((int)threads);
    if (cli_get_valid_fraction(a, &c->valid_fraction)) return 2;
    return 0;
}

static void print_result(const char *name, const pipe_result *r)
{
    if (r->task == MODEL_TASK_SELECT)
        printf("%-12s top1 %.4f  top5 %.4f  efficiency mean %.4f median %.4f p10 %.4f min %.4f  unmeasured %.4f"
               "  train %.1f s  predict %.2f us  params %ld  bytes %ld\n",
               name, r->sel.top1, r->sel.top5, r->sel.efficiency_mean, r->sel.efficiency_median,
               r->sel.efficiency_p10, r->sel.efficiency_min, r->sel.unmeasured_rate, r->train_seconds,
               r->predict_us, r->params, r->model_bytes);
    else
        printf("%-12s param_accuracy %.4f  exact %.4f  valid %.4f  decode %.1f us  train %.1f s  predict %.2f us"
               "  params %ld  bytes %ld\n",
               name, r->tune.param_accuracy, r->tune.exact, r->tune.valid, r->decode_us, r->train_seconds,
               r->predict_us, r->params, r->model_bytes);
}

static int make_split(const pipe_dataset *d, const char *spec, uint64_t seed, data_split *s, char *desc, size_t n)
{
    double frac;
    uint64_t sseed;
    if (data_split_spec_parse(spec, &frac, &sseed, seed)) return 1;
    snprintf(desc, n, "random:%g:seed=%llu", frac, (unsigned long long)sseed);
    return data_split_random(d->n, frac, sseed, s) != HR_OK;
}

int cli_cmd_train(int argc, char **argv)
{
    static const char *const spec[] = {"data", "task", "solver", "model", "config", "split", "seed", "out", "report",
                                       "threads", "checkpoint", "resume!", "init-model", "valid-fraction", "quiet!", NULL};
    cli_args a;
    train_common c;
    if (cli_args_parse(argc, argv, spec, &a) || common_parse(&a, "train", 1, &c)) return 2;
    const char *out = cli_need(&a, "train", "out");
    if (!out) return 2;
    pipe_dataset d;
    if (pipe_dataset_load(c.data, c.task, c.solver, &c.log, &d)) return cli_fail("train");
    data_split s;
    char desc[64];
    int rc = 0;
    if (make_split(&d, cli_get(&a, "split") ? cli_get(&a, "split") : "random:0.2", c.seed, &s, desc, sizeof desc)) {
        pipe_dataset_free(&d);
        return cli_fail("train");
    }
    pipe_opts o = {c.seed, c.threads, &c.log, c.config, out, cli_get(&a, "checkpoint"), cli_has(&a, "resume"),
                   cli_get(&a, "init-model"), 0, c.valid_fraction};
    hr_log_printf(&c.log, HR_LOG_INFO, "train: %s on %s, %d training / %d test problems (%s), %d threads\n",
                  c.fam->name, d.name, s.n_train, s.n_test, desc, c.threads);
    pipe_result r;
    if (pipe_run(&d, &s, c.fam, &o, &r, NULL)) {
        rc = cli_fail("train");
    } else {
        print_result(c.fam->name, &r);
        printf("model written to %s\n", out);
        const char *rep = cli_get(&a, "report");
        if (rep) {
            cJSON *j = pipe_report_object(&d, c.fam->name, desc, &r);
            if (pipe_json_write(rep, j)) rc = cli_fail("train");
            cJSON_Delete(j);
        }
    }
    pipe_result_free(&r);
    data_split_free(&s);
    pipe_dataset_free(&d);
    cJSON_Delete(c.config);
    return rc;
}

/* Runs k folds of one family; results into folds (k). */
int cli_run_folds(const pipe_dataset *d, const model_family *fam, int k, const pipe_opts *o, pipe_result *folds)
{
    for (int f = 0; f < k; f++) {
        data_split s;
        if (data_split_group_kfold(d->group, d->n, d->n_groups, k, o->seed, f, &s)) return 1;
        hr_log_printf(o->log, HR_LOG_INFO, "%s fold %d/%d: %d train / %d test problems\n", fam->name, f + 1, k,
                      s.n_train, s.n_test);
        int rc = pipe_run(d, &s, fam, o, &folds[f], NULL);
        data_split_free(&s);
        if (rc) return 1;
        print_result(fam->name, &folds[f]);
    }
    return 0;
}

int cli_cmd_cv(int argc, char **argv)
{
    static const char *const spec[] = {"data", "task", "solver", "model", "config", "folds", "seed", "report",
                                       "threads", "valid-fraction", "quiet!", NULL};
    cli_args a;
    train_common c;
    if (cli_args_parse(argc, argv, spec, &a) || common_parse(&a, "cv", 1, &c)) return 2;
    const char *rep = cli_need(&a, "cv", "report");
    long long k;
    if (!rep || cli_get_int(&a, "folds", 5, &k)) return 2;
    pipe_dataset d;
    if (pipe_dataset_load(c.data, c.task, c.solver, &c.log, &d)) return cli_fail("cv");
    pipe_result *folds = calloc((size_t)(k > 0 ? k : 1), sizeof *folds);
    pipe_opts o = {c.seed, c.threads, &c.log, c.config, NULL, NULL, 0, NULL, 0, c.valid_fraction};
    int rc = 0;
    if (!folds || cli_run_folds(&d, c.fam, (int)k, &o, folds)) {
        rc = cli_fail("cv");
    } else {
        cJSON *j = pipe_report_cv(&d, c.fam->name, (int)k, c.seed, folds);
        char *mean = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "metrics"));
        printf("%s %d-fold GroupKFold mean: %s\n", c.fam->name, (int)k, mean);
        free(mean);
        if (pipe_json_write(rep, j)) rc = cli_fail("cv");
        cJSON_Delete(j);
    }
    for (int f = 0; folds && f < k; f++) pipe_result_free(&folds[f]);
    free(folds);
    pipe_dataset_free(&d);
    cJSON_Delete(c.config);
    return rc;
}

int cli_cmd_eval(int argc, char **argv)
{
    static const char *const spec[] = {"model", "data", "solver", "split", "seed", "report", "quiet!", NULL};
    cli_args a;
    if (cli_args_parse(argc, argv, spec, &a)) return 2;
    const char *mpath = cli_need(&a, "eval", "model"), *dpath = cli_need(&a, "eval", "data");
    const char *rep = cli_need(&a, "eval", "report");
    long long seed;
    if (!mpath || !dpath || !rep || cli_get_int(&a, "seed", 0, &seed)) return 2;
    hr_log log = hr_log_stderr(HR_LOG_WARN);
    model *m;
    if (model_load(mpath, &m)) return cli_fail("eval");
    pipe_dataset d;
    if (pipe_dataset_load(dpath, NULL, m->solver ? m->solver : cli_get(&a, "solver"), &log, &d)) {
        model_free(m);
        return cli_fail("eval");
    }
    int rc = 0;
    data_split s;
    memset(&s, 0, sizeof s);
    char desc[64] = "all";
    int *rows = NULL, n_rows = d.n;
    if (cli_get(&a, "split")) {
        if (make_split(&d, cli_get(&a, "split"), (uint64_t)seed, &s, desc, sizeof desc)) rc = cli_fail("eval");
        rows = s.test;
        n_rows = s.n_test;
    } else {
        rows = malloc((size_t)d.n * sizeof *rows);
        for (int i = 0; rows && i < d.n; i++) rows[i] = i;
    }
    pipe_result r;
    memset(&r, 0, sizeof r);
    if (!rc && (!rows || pipe_evaluate(&d, m, rows, n_rows, &r))) rc = cli_fail("eval");
    if (!rc) {
        r.train_seconds = m->train_seconds;
        print_result(m->family->name, &r);
        cJSON *j = pipe_report_object(&d, m->family->name, desc, &r);
        if (pipe_json_write(rep, j)) rc = cli_fail("eval");
        cJSON_Delete(j);
    }
    if (!cli_get(&a, "split")) free(rows);
    pipe_result_free(&r);
    data_split_free(&s);
    pipe_dataset_free(&d);
    model_free(m);
    return rc;
}

typedef struct ranked {
    int k;
    float s;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->s != y->s) return x->s > y->s ? -1 : 1;
    return x->k - y->k;
}

int cli_cmd_predict(int argc, char **argv)
{
    static const char *const spec[] = {"model", "problem", "top", NULL};
    cli_args a;
    if (cli_args_parse(argc, argv, spec, &a)) return 2;
    const char *mpath = cli_need(&a, "predict", "model"), *key = cli_need(&a, "predict", "problem");
    long long top;
    if (!mpath || !key || cli_get_int(&a, "top", 10, &top)) return 2;
    data_problem p;
    const char *why;
    /* a whole find-db line is accepted too: the key is what precedes '=' */
    const char *eq = strchr(key, '=');
    if (data_key_parse(key, eq ? (size_t)(eq - key) : strlen(key), &p, &why)) {
        fprintf(stderr, "heurist predict: --problem '%s': %s\n", key, why);
        return 2;
    }
    model *m;
    if (model_load(mpath, &m)) return cli_fail("predict");
    int rc = 0;
    if (m->task == MODEL_TASK_SELECT) {
        float *s = malloc((size_t)m->n_kernels * sizeof *s);
        ranked *r = malloc((size_t)m->n_kernels * sizeof *r);
        if (!s || !r || model_predict_select(m, &p, s)) {
            rc = cli_fail("predict");
        } else {
            for (int k = 0; k < m->n_kernels; k++) r[k] = (ranked){k, s[k]};
            qsort(r, (size_t)m->n_kernels, sizeof *r, cmp_ranked);
            printf("rank  score       kernel\n");
            for (int i = 0; i < m->n_kernels && i < top; i++) printf("%4d  %-10.6g  %s\n", i + 1, r[i].s, m->kernels[r[i].k]);
        }
        free(s);
        free(r);
    } else {
        int32_t v[64];
        if (m->length > 64 || model_predict_tune(m, &p, v)) {
            rc = cli_fail("predict");
        } else {
            for (int j = 0; j < m->length; j++) printf("%s%d", j ? "," : "", v[j]);
            printf("\n");
            for (int j = 0; j < m->length; j++) printf("  %-18s %d\n", m->param_names[j], v[j]);
            if (m->constraint)
                printf("  valid under %s rules: %s\n", m->solver, m->constraint->valid_prefix(&p, v, m->length) ? "yes" : "no");
        }
    }
    model_free(m);
    return rc;
}
