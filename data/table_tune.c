/* A benchmark table as a tuning dataset (data/table.h): per problem the kernel fields of its fastest measured
 * configuration, its measured configurations as sequences, and the capability rules. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/table.h"

int data_table_config_sequence(const data_table_spec *s, const double *kv, int32_t *v)
{
    for (int j = 0; j < s->n_kernel; j++) {
        double x = kv[j];
        if (!(x == floor(x) && x >= INT32_MIN && x <= INT32_MAX))
            return hr_error(HR_EINVAL, "kernel column '%s': value %g is no int32 integer, which a tuned sequence needs",
                            s->kernel[j].name, x);
        v[j] = (int32_t)x;
    }
    return HR_OK;
}

/* FILE.caps.json beside the table */
static char *caps_sidecar(const char *path)
{
    return data_table_sidecar(path, ".caps.json");
}

static int tune_rules(const char *path, data_tune *dt, const char *caps, const hr_log *log)
{
    char *side = caps ? NULL : caps_sidecar(path), *json = NULL;
    const char *file = caps ? caps : side;
    int rc = file ? HR_OK : HR_ENOMEM;
    if (!rc && !caps && !hr_file_exists(file)) {
        if (log) hr_log_printf(log, HR_LOG_INFO, "%s: no capability file (%s): every configuration counts as valid\n", path, file);
        free(side);
        return HR_OK;
    }
    size_t len;
    if (!rc && !hr_file_exists(file)) rc = hr_error(HR_EINVAL, "--caps %s: no such file", file);
    if (!rc) rc = hr_file_read_all(file, &json, &len);
    if (!rc) rc = data_table_rules_parse(json, file, &dt->sel->table->spec, dt->sel, &dt->rules);
    if (!rc && !(dt->constraint = data_table_rules_constraint(dt->rules, &dt->sel->table->spec))) rc = HR_ENOMEM;
    /* the rules describe what cuBLASLt accepts: every measured configuration should pass them */
    long refused = 0;
    for (int i = 0; !rc && i < dt->n; i++) {
        data_tune_problem q = data_tune_problem_of(dt, dt->sel->table->pv, i, 0);
        for (int c = dt->cand_off[i]; c < dt->cand_off[i + 1]; c++)
            refused += !data_constraint_check(dt->constraint, &q, dt->cand + (size_t)c * dt->length, dt->length);
    }
    if (!rc && refused && log)
        hr_log_printf(log, HR_LOG_WARN, "%s: %ld measured configurations break the rules of %s\n", path, refused, file);
    if (!rc && log) hr_log_printf(log, HR_LOG_INFO, "%s: validity rules from %s\n", path, file);
    free(json);
    free(side);
    return rc;
}

int data_table_tune(const char *path, data_select *ds, const char *caps, const hr_log *log, data_tune **out)
{
    *out = NULL;
    const data_table *t = ds->table;
    if (!t) {
        data_select_free(ds);
        return hr_error(HR_EINVAL, "%s: not a benchmark table", path);
    }
    data_tune *dt = hr_calloc(1, sizeof *dt);
    if (!dt) {
        data_select_free(ds);
        return HR_ENOMEM;
    }
    dt->sel = ds;
    const int n = ds->n, K = ds->n_kernels, L = t->spec.n_kernel;
    dt->n = n;
    dt->length = L;
    dt->solver = hr_strdup("table");
    dt->source = hr_strdup(ds->source ? ds->source : hr_path_basename(path));
    dt->param_names = hr_calloc((size_t)L, sizeof *dt->param_names);
    dt->problems = hr_calloc((size_t)(n ? n : 1), sizeof *dt->problems);
    dt->values = hr_malloc((size_t)(n ? n : 1) * (size_t)L * sizeof *dt->values);
    dt->best = hr_malloc((size_t)(n ? n : 1) * sizeof *dt->best);
    dt->cand_off = hr_calloc((size_t)n + 1, sizeof *dt->cand_off);
    int rc = dt->solver && dt->source && dt->param_names && dt->problems && dt->values && dt->best && dt->cand_off
                 ? HR_OK : HR_ENOMEM;
    for (int j = 0; !rc && j < L; j++)
        if (!(dt->param_names[j] = hr_strdup(t->spec.kernel[j].name))) rc = HR_ENOMEM;
    /* every configuration as a sequence once; a problem's candidates copy those it measured */
    int32_t *seq = rc ? NULL : hr_malloc((size_t)(K ? K : 1) * (size_t)L * sizeof *seq);
    if (!rc && !seq) rc = HR_ENOMEM;
    for (int k = 0; !rc && k < K; k++)
        if ((rc = data_table_config_sequence(&t->spec, t->kv + (size_t)k * L, seq + (size_t)k * L)))
            hr_error_wrap(rc, "%s: configuration %s", path, ds->kernels[k]);
    for (int i = 0; !rc && i < n; i++) {
        int m = 0;
        for (int k = 0; k < K; k++) m += isfinite(ds->runtime[(size_t)i * K + k]) != 0;
        dt->cand_off[i + 1] = dt->cand_off[i] + m;
        if ((dt->best[i] = data_select_best(ds, i)) < 0) rc = hr_error(HR_EINVAL, "%s: problem %s has no measurement", path, ds->keys[i]);
    }
    if (!rc) {
        size_t nc = (size_t)dt->cand_off[n];
        dt->cand = hr_malloc((nc ? nc : 1) * (size_t)L * sizeof *dt->cand);
        dt->cand_kernel = hr_malloc((nc ? nc : 1) * sizeof *dt->cand_kernel);
        if (!dt->cand || !dt->cand_kernel) rc = HR_ENOMEM;
    }
    for (int i = 0; !rc && i < n; i++) {
        int at = dt->cand_off[i];
        for (int k = 0; k < K; k++) {
            if (!isfinite(ds->runtime[(size_t)i * K + k])) continue;
            memcpy(dt->cand + (size_t)at * L, seq + (size_t)k * L, (size_t)L * sizeof *seq);
            dt->cand_kernel[at++] = k;
        }
        memcpy(dt->values + (size_t)i * L, seq + (size_t)dt->best[i] * L, (size_t)L * sizeof *seq);
    }
    free(seq);
    if (!rc) rc = data_tune_build_vocab(dt, L);
    if (!rc) rc = tune_rules(path, dt, caps, log);
    if (rc) {
        data_tune_free(dt);
        return rc;
    }
    *out = dt;
    return HR_OK;
}
