/* heurist predict: the kernel ranking or the tuned parameters of one problem, given as text its model's codec reads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

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

/* The problem's canonical text, its kernels ranked: kernels known by name with the rule that chose them, valued
 * configurations (every one the model knows) with their scores. */
static int predict_select(const model *m, model_ws *ws, const double *pv, long long top)
{
    int valued = data_codec_config_width(m->codec) > 0;
    float *s = hr_malloc((size_t)(m->n_kernels ? m->n_kernels : 1) * sizeof *s);
    model_ranked *r = hr_malloc((size_t)(m->n_kernels ? m->n_kernels : 1) * sizeof *r);
    model_applies rule = MODEL_APPLIES_EXACT;
    char canon[1024];
    int n = -1;
    if (s && r && !model_predict_select(m, ws, pv, s)) n = model_rank(m, pv, s, r, &rule);
    if (n >= 0 && data_codec_problem_format(m->codec, pv, canon, sizeof canon)) n = -1;
    if (n < 0) {
        free(s);
        free(r);
        return cli_fail("predict");
    }
    if (valued) {
        printf("%s: %d configurations ranked\nrank  probability       score  configuration\n", canon, n);
    } else {
        printf("%s: %d of %d kernels can run it", canon, n, m->n_kernels);
        if (rule == MODEL_APPLIES_UNRECORDED) printf(" (this model file records no applicability: every kernel is ranked)");
        else if (rule == MODEL_APPLIES_DIRECTION)
            printf(" (no training problem had its data type and layout: kernels measured for its direction)");
        else if (rule == MODEL_APPLIES_ALL) printf(" (no training problem had its direction: every kernel is ranked)");
        printf("\nrank  probability  kernel\n");
    }
    for (int i = 0; i < n && i < top; i++) {
        if (valued) printf("%4d  %10.2f%%  %10.4f  %s\n", i + 1, 100.0 * r[i].prob, r[i].score, m->kernels[r[i].kernel]);
        else printf("%4d  %10.2f%%  %s\n", i + 1, 100.0 * r[i].prob, m->kernels[r[i].kernel]);
    }
    free(s);
    free(r);
    return 0;
}

/* The predicted sequence, field by field: as the configuration it names where configurations have values (a
 * category by its name), else the parameter values; then whether the codec's rules accept it. */
static int predict_tune(const model *m, model_ws *ws, const double *pv, long long top)
{
    (void)top;
    int32_t v[64];
    if (m->length > 64) {
        fprintf(stderr, "heurist predict: the model predicts %d parameters, at most 64 are supported\n", m->length);
        return 1;
    }
    data_tune_problem q = {pv, NULL, 0, m->length};
    if (model_predict_tune(m, ws, &q, v)) return cli_fail("predict");
    char canon[1024], name[2048], buf[64];
    if (model_tune_no_pick(v, m->length)) {
        data_codec_problem_format(m->codec, pv, canon, sizeof canon);
        hr_error(HR_ESTATE, "the model makes no prediction for '%s' (the vendor's list does not hold it)", canon);
        return cli_fail("predict");
    }
    int valued = data_codec_config_width(m->codec) > 0, named = 1;
    /* a value outside a categorical field's vocabulary (the vendor baseline's "no pick") has no name */
    for (int j = 0; j < m->length; j++) named &= data_codec_config_field_text(m->codec, j, v[j], buf, sizeof buf) != NULL;
    if (valued) {
        double kv[64];
        for (int j = 0; j < m->length; j++) kv[j] = v[j];
        data_codec_problem_format(m->codec, pv, canon, sizeof canon);
        if (!named || data_codec_config_format(m->codec, kv, name, sizeof name) < 0) snprintf(name, sizeof name, "(none)");
        printf("%s: %s\n", canon, name);
    } else {
        for (int j = 0; j < m->length; j++) printf("%s%d", j ? "," : "", v[j]);
        printf("\n");
    }
    for (int j = 0; j < m->length && named; j++)
        printf("  %-18s %s\n", m->param_names[j], data_codec_config_field_text(m->codec, j, v[j], buf, sizeof buf));
    if (m->constraint) {
        int ok = data_constraint_check(m->constraint, &q, v, m->length);
        if (valued) printf("  valid under the capability rules: %s\n", ok ? "yes" : "no");
        else printf("  valid under %s rules: %s\n", m->solver, ok ? "yes" : "no");
    }
    return 0;
}

/* What predict prints for each task. */
static const struct predict_task {
    model_task task;
    int (*print)(const model *m, model_ws *ws, const double *pv, long long top);
} predict_tasks[] = {{MODEL_TASK_SELECT, predict_select}, {MODEL_TASK_TUNE, predict_tune}};

int cli_cmd_predict(int argc, char **argv)
{
    cli_args a;
    int prc = cli_args_parse(argc, argv, &cli_predict_spec, &a);
    if (prc) return cli_args_exit(prc);
    const char *mpath = cli_need(&a, "predict", "model"), *key = cli_need(&a, "predict", "problem");
    long long top;
    if (!mpath || !key || cli_get_int(&a, "top", 10, 1, 100000, &top)) return 2;
    /* a problem no source reads is an error before the model is read */
    if (data_codec_problem_plausible(key)) {
        fprintf(stderr, "heurist predict: --problem: %s\n", hr_last_error());
        return 2;
    }
    model *m;
    if (model_load(mpath, &m)) return cli_fail("predict");
    double pv[DATA_CODEC_MAX_VALUES];
    if (model_problem_parse(m, key, pv)) {
        fprintf(stderr, "heurist predict: --problem: %s\n", hr_last_error());
        model_free(m);
        return 2;
    }
    model_ws *ws = NULL;
    if (model_ws_create(m, &ws)) {
        model_free(m);
        return cli_fail("predict");
    }
    int rc = 1;
    for (size_t i = 0; i < sizeof predict_tasks / sizeof *predict_tasks; i++)
        if (predict_tasks[i].task == m->task) rc = predict_tasks[i].print(m, ws, pv, top);
    model_ws_free(ws);
    model_free(m);
    return rc;
}
