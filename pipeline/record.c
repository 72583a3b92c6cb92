/* What the task tables (select.c, tune.c) share with the rest of the pipeline, kept apart from the code that
 * reaches the tables through pipe_task_of so that no file calls back into a file that calls it: a row's values,
 * a figure in JSON, the slices a report breaks results down by, the digests the ranks of a run compare, and a
 * rank's result records read back. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/pipeline_internal.h"

const double *pipe_dataset_values(const pipe_dataset *d, int row)
{
    return d->V + (size_t)row * (size_t)d->n_values;
}

const char *const pipe_report_slices[PIPE_REPORT_SLICES] = {"direction", "dtype"};

void pipe_json_num(cJSON *o, const char *key, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

const char *pipe_text_num(char *buf, size_t n, double v, int decimals)
{
    if (isfinite(v)) snprintf(buf, n, "%.*f", decimals, v);
    else snprintf(buf, n, "-");
    return buf;
}

uint64_t pipe_digest(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

uint64_t pipe_digest_str(uint64_t h, const char *s)
{
    unsigned char tag = s != NULL;
    h = pipe_digest(h, &tag, 1);
    return s ? pipe_digest(h, s, strlen(s) + 1) : h;
}

uint64_t pipe_digest_select(const data_select *s, uint64_t h)
{
    h = pipe_digest(h, &s->n_kernels, sizeof s->n_kernels);
    for (int k = 0; k < s->n_kernels; k++) h = pipe_digest_str(h, s->kernels[k]);
    for (int i = 0; i < s->n; i++) h = pipe_digest_str(h, s->keys ? s->keys[i] : NULL);
    return pipe_digest(h, s->runtime, (size_t)s->n * (size_t)s->n_kernels * sizeof *s->runtime);
}

int pipe_ranks_read(const char *buf, size_t len, size_t *at, void *dst, size_t n)
{
    if (n > len - *at) return hr_error(HR_EFORMAT, "ranks: a result record ends %zu bytes early", n - (len - *at));
    memcpy(dst, buf + *at, n);
    *at += n;
    return HR_OK;
}
