/* The tuning dataset (data_tune) whatever its source: its lifecycle and its per-position value vocabularies. */
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "data/table.h"

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int data_tune_build_vocab(data_tune *dt, int length)
{
    dt->length = length;
    dt->vocab_size = hr_calloc((size_t)length, sizeof *dt->vocab_size);
    dt->vocab = hr_calloc((size_t)length, sizeof *dt->vocab);
    dt->tokens = hr_malloc((size_t)dt->n * (size_t)length * sizeof *dt->tokens);
    int32_t *col = hr_malloc((size_t)dt->n * sizeof *col);
    if (!dt->vocab_size || !dt->vocab || !dt->tokens || !col) {
        free(col);
        return HR_ENOMEM;
    }
    for (int j = 0; j < length; j++) {
        for (int i = 0; i < dt->n; i++) col[i] = dt->values[(size_t)i * (size_t)length + (size_t)j];
        qsort(col, (size_t)dt->n, sizeof *col, cmp_i32);
        int u = 0;
        for (int i = 0; i < dt->n; i++)
            if (i == 0 || col[i] != col[u - 1]) col[u++] = col[i];
        dt->vocab_size[j] = u;
        dt->vocab[j] = hr_malloc((size_t)u * sizeof **dt->vocab);
        if (!dt->vocab[j]) {
            free(col);
            return HR_ENOMEM;
        }
        memcpy(dt->vocab[j], col, (size_t)u * sizeof *col);
        for (int i = 0; i < dt->n; i++)
            dt->tokens[(size_t)i * (size_t)length + (size_t)j] =
                data_tune_token(dt, j, dt->values[(size_t)i * (size_t)length + (size_t)j]);
    }
    free(col);
    return HR_OK;
}

int data_tune_token(const data_tune *dt, int j, int32_t v)
{
    int lo = 0, hi = dt->vocab_size[j] - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (dt->vocab[j][mid] == v) return mid;
        if (dt->vocab[j][mid] < v) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

void data_tune_free(data_tune *dt)
{
    if (!dt) return;
    for (int j = 0; j < dt->length; j++) {
        if (dt->param_names) free(dt->param_names[j]);
        if (dt->vocab) free(dt->vocab[j]);
    }
    free(dt->param_names);
    free(dt->vocab);
    free(dt->vocab_size);
    free(dt->tokens);
    free(dt->values);
    free(dt->problems);
    free(dt->solver);
    free(dt->source);
    data_select_free(dt->sel);
    free(dt->best);
    free(dt->cand_off);
    free(dt->cand);
    free(dt->cand_kernel);
    free(dt->constraint);
    data_table_rules_free(dt->rules);
    free(dt);
}
