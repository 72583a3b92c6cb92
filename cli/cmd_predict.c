/* heurist predict: the kernel ranking or the tuned parameters of one problem. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "data/table.h"

static const cli_opt predict_opts[] = {
    {"model", "MODEL.h5", "the saved model (required)"},
    {"problem", "KEY", "a find-db problem key or a whole find-db line; for a benchmark-table model \"M=128,N=4096,...\" (required)"},
    {"top", "N", "kernels to list, 1..100000 (default 10)"},
    CLI_OPT_END,
};

const cli_spec cli_predict_spec = {
    "heurist predict --model MODEL.h5 --problem KEY [--top N]",
    "Ranks the kernels that can run the problem (selection models) or predicts its tuning parameters.",
    predict_opts,
    "A kernel can run the problem when the training data measured it for a problem of the same direction,\n"
    "data type and layout (recorded in the model file at training time). When no training problem had this\n"
    "data type and layout, the kernels measured for its direction are ranked; a model file without the table\n"
    "(written by an older heurist) ranks every kernel. Probabilities are the softmax of the model's scores\n"
    "over the ranked kernels.\n"
    "A model of a benchmark table takes the problem as column=value pairs, every problem and hardware column\n"
    "of its schema once, and ranks every configuration it knows, with its score; a tune model of a table prints\n"
    "the configuration it predicts, decoded within the capability rules its file keeps (a seq2seq model of the\n"
    "measured space has no measured configurations here: it decodes within the rules).",
};

/* A benchmark-table model: the problem as "col=value,..." and every configuration ranked. */
static int predict_table(const model *m, model_ws *ws, const char *key, long long top)
{
    double pv[DATA_TABLE_MAX_COLUMNS];
    if (data_table_problem_parse(m->table, key, pv)) {
        fprintf(stderr, "heurist predict: --problem: %s\n", hr_last_error());
        return 2;
    }
    float *x = hr_malloc((size_t)m->n_features * sizeof *x), *s = hr_malloc((size_t)m->n_kernels * sizeof *s);
    model_ranked *r = hr_malloc((size_t)m->n_kernels * sizeof *r);
    data_problem p;
    memset(&p, 0, sizeof p);
    int n = -1;
    if (x && s && r) {
        data_table_problem_features(m->table, pv, x);
        if (!model_predict_select_x(m, ws, &p, x, s)) n = model_rank(m, &p, s, r, NULL);
    }
    char canon[1024];
    if (n >= 0 && data_table_problem_format(m->table, pv, canon, sizeof canon)) n = -1;
    if (n >= 0) {
        printf("%s: %d configurations ranked\nrank  probability       score  configuration\n", canon, n);
        for (int i = 0; i < n && i < top; i++)
            printf("%4d  %10.2f%%  %10.4f  %s\n", i + 1, 100.0 * r[i].prob, r[i].score, m->kernels[r[i].kernel]);
    }
    free(x);
    free(s);
    free(r);
    return n < 0 ? cli_fail("predict") : 0;
}

/* A benchmark-table tune model: the problem as "col=value,..." and the configuration it predicts, field by field. */
static int predict_table_tune(const model *m, model_ws *ws, const char *key)
{
    double pv[DATA_TABLE_MAX_COLUMNS], kv[DATA_TABLE_MAX_COLUMNS];
    int32_t v[DATA_TABLE_MAX_COLUMNS];
    if (data_table_problem_parse(m->table, key, pv)) {
        fprintf(stderr, "heurist predict: --problem: %s\n", hr_last_error());
        return 2;
    }
    float *x = hr_malloc((size_t)m->n_features * sizeof *x);
    if (!x) return cli_fail("predict");
    data_table_problem_features(m->table, pv, x);
    data_tune_problem q = {NULL, pv, NULL, 0, m->length};
    int rc = model_predict_tune_q(m, ws, &q, x, v);
    free(x);
    if (!rc && model_tune_no_pick(v, m->length))
        rc = hr_error(HR_ESTATE, "the model makes no prediction for '%s' (the vendor's list does not hold it)", key);
    if (rc) return cli_fail("predict");
    char canon[1024], name[2048];
    for (int j = 0; j < m->length; j++) kv[j] = v[j];
    data_table_problem_format(m->table, pv, canon, sizeof canon);
    /* a value outside a categorical field's vocabulary (the vendor baseline's "no pick") has no name */
    int named = 1;
    for (int j = 0; j < m->length; j++)
        if (m->table->kernel[j].categorical && (v[j] < 0 || v[j] >= m->table->kernel[j].n_vocab)) named = 0;
    if (!named || data_table_config_format(m->table, kv, name, sizeof name) < 0) snprintf(name, sizeof name, "(none)");
    printf("%s: %s\n", canon, name);
    for (int j = 0; j < m->length && named; j++) {
        const data_table_column *c = &m->table->kernel[j];
        if (c->categorical) printf("  %-18s %s\n", c->name, c->vocab[v[j]]);
        else printf("  %-18s %d\n", c->name, v[j]);
    }
    if (m->constraint)
        printf("  valid under the capability rules: %s\n", data_constraint_check(m->constraint, &q, v, m->length) ? "yes" : "no");
    return 0;
}

static int predict_select(const model *m, model_ws *ws, const data_problem *p, long long top)
{
    float *s = hr_malloc((size_t)m->n_kernels * sizeof *s);
    model_ranked *r = hr_malloc((size_t)m->n_kernels * sizeof *r);
    model_applies rule = MODEL_APPLIES_EXACT;
    int n = -1;
    if (s && r && !model_predict_select(m, ws, p, s)) n = model_rank(m, p, s, r, &rule);
    if (n < 0) {
        free(s);
        free(r);
        return cli_fail("predict");
    }
    char key[256];
    data_key_format(p, key, sizeof key);
    printf("%s: %d of %d kernels can run it", key, n, m->n_kernels);
    if (rule == MODEL_APPLIES_UNRECORDED) printf(" (this model file records no applicability: every kernel is ranked)");
    else if (rule == MODEL_APPLIES_DIRECTION)
        printf(" (no training problem had its data type and layout: kernels measured for its direction)");
    else if (rule == MODEL_APPLIES_ALL) printf(" (no training problem had its direction: every kernel is ranked)");
    printf("\nrank  probability  kernel\n");
    for (int i = 0; i < n && i < top; i++) printf("%4d  %10.2f%%  %s\n", i + 1, 100.0 * r[i].prob, m->kernels[r[i].kernel]);
    free(s);
    free(r);
    return 0;
}

static int predict_tune(const model *m, model_ws *ws, const data_problem *p)
{
    int32_t v[64];
    if (m->length > 64) {
        fprintf(stderr, "heurist predict: the model predicts %d parameters, at most 64 are supported\n", m->length);
        return 1;
    }
    if (model_predict_tune(m, ws, p, v)) return cli_fail("predict");
    if (model_tune_no_pick(v, m->length)) {
        hr_error(HR_ESTATE, "the model makes no prediction for this problem (the vendor's list does not hold it)");
        return cli_fail("predict");
    }
    for (int j = 0; j < m->length; j++) printf("%s%d", j ? "," : "", v[j]);
    printf("\n");
    for (int j = 0; j < m->length; j++) printf("  %-18s %d\n", m->param_names[j], v[j]);
    if (m->constraint)
        printf("  valid under %s rules: %s\n", m->solver, m->constraint->valid_prefix(p, v, m->length) ? "yes" : "no");
    return 0;
}

int cli_cmd_predict(int argc, char **argv)
{
    cli_args a;
    int prc = cli_args_parse(argc, argv, &cli_predict_spec, &a);
    if (prc) return cli_args_exit(prc);
    const char *mpath = cli_need(&a, "predict", "model"), *key = cli_need(&a, "predict", "problem");
    long long top;
    if (!mpath || !key || cli_get_int(&a, "top", 10, 1, 100000, &top)) return 2;
    data_problem p;
    const char *why;
    /* a whole find-db line is accepted too: the key is what precedes '='; a key that does not parse and has no
     * '=' (no table problem either) is an error before the model is read */
    const char *eq = strchr(key, '=');
    int bad_key = data_key_parse(key, eq ? (size_t)(eq - key) : strlen(key), &p, &why) != 0;
    if (bad_key && !eq) {
        fprintf(stderr, "heurist predict: --problem '%s': %s\n", key, why);
        return 2;
    }
    model *m;
    if (model_load(mpath, &m)) return cli_fail("predict");
    if (!m->table && bad_key) {
        fprintf(stderr, "heurist predict: --problem '%s': %s\n", key, why);
        model_free(m);
        return 2;
    }
    model_ws *ws = NULL;
    if (model_ws_create(m, &ws)) {
        model_free(m);
        return cli_fail("predict");
    }
    int rc = m->table && m->task == MODEL_TASK_TUNE ? predict_table_tune(m, ws, key)
             : m->table ? predict_table(m, ws, key, top)
             : m->task == MODEL_TASK_SELECT ? predict_select(m, ws, &p, top) : predict_tune(m, ws, &p);
    model_ws_free(ws);
    model_free(m);
    return rc;
}
