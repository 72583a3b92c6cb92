/* heurist predict: the kernel ranking or the tuned parameters of one problem, given as text its model's codec reads,
 * or of a file of problems, one a line, into a file. A table model ranks the configurations it knows that a problem
 * of its categorical values was measured with, or the candidate configurations of a CSV file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const cli_opt predict_opts[] = {
    {"model", "MODEL.h5", "the saved model (required)"},
    {"problem", "KEY", "a find-db problem key or a whole find-db line; for a benchmark-table model \"M=128,N=4096,...\" (this or --problems)"},
    {"problems", "FILE", "problems, one a line (as --problem; empty lines and lines starting with # skipped), ranked into --output"},
    {"output", "FILE", "with --problems: a TSV of each problem's top N (problem, rank, score, kernel) or tuned configuration"},
    {"candidates", "FILE", "a benchmark-table model: a CSV of candidate configurations (a header naming every configuration column, one configuration a row) to rank instead of the model's own"},
    {"top", "N", "kernels to list per problem, 1..100000 (default 10)"},
    CLI_OPT_END,
};

const cli_spec cli_predict_spec = {
    "heurist predict --model MODEL.h5 (--problem KEY | --problems FILE --output OUT) [--candidates FILE] [--top N]",
    "Ranks the kernels that can run a problem (selection models) or predicts its tuning parameters.",
    predict_opts,
    "A kernel can run the problem when the training data measured it for a problem of the same direction,\n"
    "data type and layout (recorded in the model file at training time). When no training problem had this\n"
    "data type and layout, the kernels measured for its direction are ranked; a model file without the table\n"
    "(written by an older heurist) ranks every kernel. Probabilities are the softmax of the model's scores\n"
    "over the ranked kernels.\n"
    "A model of a benchmark table takes the problem as column=value pairs, every problem and hardware column\n"
    "of its schema once. It ranks the configurations it knows that training measured for a problem with the same\n"
    "categorical problem and hardware values (every one when no training problem had them), or with --candidates\n"
    "the configurations of that file, and prints each with the model's score (higher is better; scores compare\n"
    "configurations of one problem). A tune model of a table prints the configuration it predicts, decoded within\n"
    "the capability rules its file keeps (a seq2seq model of the measured space has no measured configurations\n"
    "here: it decodes within the rules).\n"
    "--problems ranks each line's problem into --output (a temporary file renamed into place when every problem\n"
    "was answered), as a TSV: problem, rank, score, kernel for selection; problem, configuration for tuning.",
};

/* ---- candidates from a CSV file ---- */

typedef struct candidates {
    int n;
    double *kv;  /* (n, config width) */
    int *line;   /* (n) each candidate's line in the file */
} candidates;

static void candidates_free(candidates *c)
{
    free(c->kv);
    free(c->line);
}

/* The next line of text at *p (its end written over with '\0'), or NULL at the end. */
static char *next_line(char **p)
{
    char *s = *p;
    if (!*s) return NULL;
    char *e = strchr(s, '\n');
    if (e) {
        *e = '\0';
        *p = e + 1;
    } else {
        *p = s + strlen(s);
    }
    size_t n = strlen(s);
    if (n && s[n - 1] == '\r') s[n - 1] = '\0';
    return s;
}

/* A CSV of configurations: its header names columns of the model's configurations (every one once), each row one
 * configuration, read through the codec as "col=value,..." so a value is checked as in a model's own names. */
static int candidates_read(const model *m, const char *path, candidates *c)
{
    memset(c, 0, sizeof *c);
    int width = data_codec_config_width(m->codec);
    if (!width)
        return hr_error(HR_EINVAL, "--candidates: a %s model's kernels are known by name only, it takes no candidate "
                        "configurations", data_codec_name(m->codec));
    char *text;
    size_t len;
    int rc = hr_file_read_all(path, &text, &len);
    if (rc) return hr_error_wrap(rc, "--candidates %s", path);
    char *p = text, *header = next_line(&p), *cols[DATA_CODEC_MAX_VALUES];
    int ncol = 0;
    for (char *save = NULL, *tok = header ? strtok_r(header, ",", &save) : NULL; tok && !rc;
         tok = strtok_r(NULL, ",", &save)) {
        if (ncol == DATA_CODEC_MAX_VALUES) rc = hr_error(HR_EINVAL, "%s:1: more than %d columns", path, ncol);
        else cols[ncol++] = tok;
    }
    if (!rc && ncol != width) {
        char want[2048];
        size_t used = 0;
        for (int j = 0; j < width && used < sizeof want; j++)
            used += (size_t)snprintf(want + used, sizeof want - used, "%s%s", j ? "," : "",
                                     data_codec_column(m->codec, data_codec_value_count(m->codec) + j, NULL, NULL));
        rc = hr_error(HR_EINVAL, "%s:1: the header names %d columns, the model's configurations have %d: %s", path, ncol,
                      width, want);
    }
    size_t cap = len / 2 + 1; /* a row is at least a value and a separator */
    if (!rc && (!(c->kv = hr_malloc(cap * (size_t)width * sizeof *c->kv)) || !(c->line = hr_malloc(cap * sizeof *c->line))))
        rc = HR_ENOMEM;
    char name[4096];
    int lineno = 1;
    for (char *row; !rc && (row = next_line(&p));) {
        lineno++;
        if (!*row) continue;
        size_t used = 0;
        int nv = 0;
        for (char *save = NULL, *v = strtok_r(row, ",", &save); v && !rc; v = strtok_r(NULL, ",", &save), nv++)
            if (nv < ncol) used += (size_t)snprintf(name + used, used < sizeof name ? sizeof name - used : 0, "%s%s=%s",
                                                    nv ? "," : "", cols[nv], v);
        if (nv != ncol) rc = hr_error(HR_EINVAL, "%s:%d: %d values, the header names %d columns", path, lineno, nv, ncol);
        else if (used >= sizeof name) rc = hr_error(HR_EINVAL, "%s:%d: the row is too long", path, lineno);
        else if (data_codec_config_parse(m->codec, name, c->kv + (size_t)c->n * width))
            rc = hr_error_wrap(HR_EINVAL, "%s:%d", path, lineno);
        else c->line[c->n++] = lineno;
    }
    if (!rc && !c->n) rc = hr_error(HR_EINVAL, "%s: no candidate configuration after the header", path);
    free(text);
    if (rc) candidates_free(c);
    return rc;
}

/* ---- selection ---- */

/* What a table model's ranking covered: the configurations measured for the problem's categorical values, or
 * every one it knows when training had none of them. */
static const char *valued_rule(const model *m, model_applies rule)
{
    if (!m->match) return "";
    return rule == MODEL_APPLIES_EXACT ? " (those measured in training for its categorical values)"
                                       : " (no training problem had its categorical values: every one the model knows)";
}

/* One problem's ranking into r (its first `top` sorted): over the candidates when there are, else over the model's
 * kernels; returns how many were ranked or a negative status. */
static int rank_problem(const model *m, model_ws *ws, const double *pv, const candidates *cand, int top, float *scores,
                        model_ranked *r, model_applies *rule)
{
    *rule = MODEL_APPLIES_ALL;
    if (cand->n) return model_rank_candidates(m, ws, pv, cand->kv, cand->n, top, scores, r);
    return model_rank_problem(m, ws, pv, top, r, rule);
}

/* The name of ranked entry e: a candidate's configuration, or the model's kernel. */
static const char *ranked_name(const model *m, const candidates *cand, const model_ranked *e, char *buf, size_t size)
{
    if (!cand->n) return m->kernels[e->kernel];
    int width = data_codec_config_width(m->codec);
    if (data_codec_config_format(m->codec, cand->kv + (size_t)e->kernel * width, buf, size) < 0) snprintf(buf, size, "?");
    return buf;
}

/* The problem's canonical text, its kernels ranked: kernels known by name with the rule that chose them and their
 * probabilities, configurations with the model's scores. */
static int predict_select(const model *m, model_ws *ws, const double *pv, long long top, const candidates *cand,
                          float *scores, model_ranked *r)
{
    int valued = data_codec_config_width(m->codec) > 0;
    model_applies rule = MODEL_APPLIES_EXACT;
    char canon[1024], name[4096];
    int n = rank_problem(m, ws, pv, cand, (int)(valued ? top : m->n_kernels), scores, r, &rule);
    if (n >= 0 && data_codec_problem_format(m->codec, pv, canon, sizeof canon)) n = -1;
    if (n < 0) return cli_fail("predict");
    if (cand->n) {
        printf("%s: %d of %d candidates ranked\nrank       score  line  configuration\n", canon, n, cand->n);
    } else if (valued) {
        printf("%s: %d of %d configurations ranked%s\nrank       score  configuration\n", canon, n, m->n_kernels,
               valued_rule(m, rule));
    } else {
        /* probabilities over every ranked kernel */
        double z = 0;
        for (int i = 0; i < n; i++) z += exp((double)r[i].score - r[0].score);
        for (int i = 0; i < n; i++) r[i].prob = (float)(exp((double)r[i].score - r[0].score) / z);
        printf("%s: %d of %d kernels can run it", canon, n, m->n_kernels);
        if (rule == MODEL_APPLIES_UNRECORDED) printf(" (this model file records no applicability: every kernel is ranked)");
        else if (rule == MODEL_APPLIES_DIRECTION)
            printf(" (no training problem had its data type and layout: kernels measured for its direction)");
        else if (rule == MODEL_APPLIES_ALL) printf(" (no training problem had its direction: every kernel is ranked)");
        printf("\nrank  probability  kernel\n");
    }
    for (int i = 0; i < n && i < top; i++) {
        if (cand->n) printf("%4d  %10.4f  %4d  %s\n", i + 1, r[i].score, cand->line[r[i].kernel], ranked_name(m, cand, &r[i], name, sizeof name));
        else if (valued) printf("%4d  %10.4f  %s\n", i + 1, r[i].score, m->kernels[r[i].kernel]);
        else printf("%4d  %10.2f%%  %s\n", i + 1, 100.0 * r[i].prob, m->kernels[r[i].kernel]);
    }
    return 0;
}

/* ---- tuning ---- */

/* The tuned configuration's text into buf: its name where configurations have values, else the values; HR_ESTATE
 * when the model makes no prediction for the problem. */
static int tune_text(const model *m, model_ws *ws, const double *pv, int32_t *v, char *buf, size_t size)
{
    data_tune_problem q = {pv, NULL, 0, m->length, NULL};
    int rc = model_predict_tune(m, ws, &q, v);
    if (rc) return rc;
    if (model_tune_no_pick(v, m->length)) {
        char canon[1024];
        data_codec_problem_format(m->codec, pv, canon, sizeof canon);
        return hr_error(HR_ESTATE, "the model makes no prediction for '%s' (the vendor's list does not hold it)", canon);
    }
    if (data_codec_config_width(m->codec) > 0) {
        double kv[64];
        for (int j = 0; j < m->length; j++) kv[j] = v[j];
        if (data_codec_config_format(m->codec, kv, buf, size) < 0) snprintf(buf, size, "(none)");
        return HR_OK;
    }
    size_t used = 0;
    for (int j = 0; j < m->length && used < size; j++) used += (size_t)snprintf(buf + used, size - used, "%s%d", j ? "," : "", v[j]);
    return HR_OK;
}

/* The predicted sequence, field by field: as the configuration it names where configurations have values (a
 * category by its name), else the parameter values; then whether the codec's rules accept it. */
static int predict_tune(const model *m, model_ws *ws, const double *pv)
{
    int32_t v[64];
    char canon[1024], name[2048], buf[64];
    if (tune_text(m, ws, pv, v, name, sizeof name)) return cli_fail("predict");
    int valued = data_codec_config_width(m->codec) > 0, named = 1;
    /* a value outside a categorical field's vocabulary has no name */
    for (int j = 0; j < m->length; j++) named &= data_codec_config_field_text(m->codec, j, v[j], buf, sizeof buf) != NULL;
    if (valued) {
        data_codec_problem_format(m->codec, pv, canon, sizeof canon);
        printf("%s: %s\n", canon, named ? name : "(none)");
    } else {
        printf("%s\n", name);
    }
    for (int j = 0; j < m->length && named; j++)
        printf("  %-18s %s\n", m->param_names[j], data_codec_config_field_text(m->codec, j, v[j], buf, sizeof buf));
    if (m->constraint) {
        data_tune_problem q = {pv, NULL, 0, m->length, NULL};
        int ok = data_constraint_check(m->constraint, &q, v, m->length);
        if (valued) printf("  valid under the capability rules: %s\n", ok ? "yes" : "no");
        else printf("  valid under %s rules: %s\n", m->solver, ok ? "yes" : "no");
    }
    return 0;
}

/* ---- a file of problems ---- */

/* Each problem line of `path` answered into the temporary file `out`: a selection model's top rows, a tune model's
 * configuration. An error names the file and line. */
static int predict_file(const model *m, model_ws *ws, const char *path, FILE *out, long long top, const candidates *cand,
                        float *scores, model_ranked *r)
{
    char *text;
    size_t len;
    int rc = hr_file_read_all(path, &text, &len), lineno = 0;
    if (rc) return hr_error_wrap(rc, "--problems %s", path);
    if (m->task == MODEL_TASK_SELECT) fprintf(out, "problem\trank\tscore\tkernel\n");
    else fprintf(out, "problem\tconfiguration\n");
    char *p = text, name[4096], canon[1024];
    for (char *line; !rc && (line = next_line(&p));) {
        lineno++;
        while (*line == ' ' || *line == '\t') line++;
        if (!*line || *line == '#') continue;
        double pv[DATA_CODEC_MAX_VALUES];
        model_applies rule;
        int32_t v[64];
        if ((rc = model_problem_parse(m, line, pv)) || (rc = data_codec_problem_format(m->codec, pv, canon, sizeof canon))) {
        } else if (m->task == MODEL_TASK_TUNE) {
            if (!(rc = tune_text(m, ws, pv, v, name, sizeof name))) fprintf(out, "%s\t%s\n", canon, name);
        } else {
            int n = rank_problem(m, ws, pv, cand, (int)top, scores, r, &rule);
            rc = n < 0 ? n : HR_OK;
            for (int i = 0; i < n && i < top; i++)
                fprintf(out, "%s\t%d\t%.6g\t%s\n", canon, i + 1, r[i].score, ranked_name(m, cand, &r[i], name, sizeof name));
        }
        if (rc) hr_error_wrap(rc, "%s:%d", path, lineno);
    }
    free(text);
    if (!rc && ferror(out)) rc = hr_error(HR_EIO, "writing the predictions failed");
    return rc;
}

static int predict_batch(const model *m, model_ws *ws, const char *path, const char *output, long long top,
                         const candidates *cand, float *scores, model_ranked *r)
{
    char *tmp = hr_file_tmp_path(output);
    FILE *out = tmp ? fopen(tmp, "w") : NULL;
    if (!out) {
        if (tmp) hr_error(HR_EIO, "--output %s: cannot create %s", output, tmp);
        free(tmp);
        return cli_fail("predict");
    }
    int rc = predict_file(m, ws, path, out, top, cand, scores, r);
    if (fclose(out) && !rc) rc = hr_error(HR_EIO, "--output %s: writing failed", output);
    if (!rc) rc = hr_file_commit(tmp, output);
    else remove(tmp);
    free(tmp);
    return rc ? cli_fail("predict") : 0;
}

int cli_cmd_predict(int argc, char **argv)
{
    cli_args a;
    int prc = cli_args_parse(argc, argv, &cli_predict_spec, &a);
    if (prc) return cli_args_exit(prc);
    const char *mpath = cli_need(&a, "predict", "model"), *key = cli_get(&a, "problem");
    const char *file = cli_get(&a, "problems"), *output = cli_get(&a, "output"), *cpath = cli_get(&a, "candidates");
    long long top;
    if (!mpath || cli_get_int(&a, "top", 10, 1, 100000, &top)) return 2;
    if (!key == !file) {
        fprintf(stderr, "heurist predict: give --problem KEY or --problems FILE (with --output), one of them\n");
        return 2;
    }
    if (!file != !output) {
        fprintf(stderr, "heurist predict: --problems FILE and --output OUT go together\n");
        return 2;
    }
    /* a problem no source reads is an error before the model is read */
    if (key && data_codec_problem_plausible(key)) {
        fprintf(stderr, "heurist predict: --problem: %s\n", hr_last_error());
        return 2;
    }
    cli_inputs in = {0};
    cli_inputs_add(&in, "--model", mpath);
    cli_inputs_add(&in, "--problems", file);
    cli_inputs_add(&in, "--candidates", cpath);
    int bad = cli_check_output("predict", "output", output, &in);
    cli_inputs_free(&in);
    if (bad) return 2;
    model *m;
    if (model_load(mpath, &m)) return cli_fail("predict");
    if (m->task == MODEL_TASK_TUNE && m->length > 64) {
        fprintf(stderr, "heurist predict: the model predicts %d parameters, at most 64 are supported\n", m->length);
        model_free(m);
        return 1;
    }
    candidates cand = {0};
    if (cpath && m->task != MODEL_TASK_SELECT) hr_error(HR_EINVAL, "--candidates: a tune model predicts, it ranks no candidates");
    if (cpath && (m->task != MODEL_TASK_SELECT || candidates_read(m, cpath, &cand))) {
        fprintf(stderr, "heurist predict: %s\n", hr_last_error());
        model_free(m);
        return 2;
    }
    double pv[DATA_CODEC_MAX_VALUES];
    if (key && model_problem_parse(m, key, pv)) {
        fprintf(stderr, "heurist predict: --problem: %s\n", hr_last_error());
        candidates_free(&cand);
        model_free(m);
        return 2;
    }
    size_t rows = (size_t)(cand.n > m->n_kernels ? cand.n : m->n_kernels) + 1;
    float *scores = hr_malloc(rows * sizeof *scores);
    model_ranked *r = hr_malloc(rows * sizeof *r);
    model_ws *ws = NULL;
    int rc;
    if (!scores || !r || model_ws_create(m, &ws)) rc = cli_fail("predict");
    else if (file) rc = predict_batch(m, ws, file, output, top, &cand, scores, r);
    else if (m->task == MODEL_TASK_SELECT) rc = predict_select(m, ws, pv, top, &cand, scores, r);
    else rc = predict_tune(m, ws, pv);
    model_ws_free(ws);
    free(scores);
    free(r);
    candidates_free(&cand);
    model_free(m);
    return rc;
}
