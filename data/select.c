/* The selection dataset (data_select) whatever its source, with the table it may hold, and the count of skipped
 * input lines every loader keeps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "data/table.h"

void data_skips_add(data_skips *s, const char *reason, long line)
{
    s->total++;
    for (int i = 0; i < s->n_reasons; i++) {
        if (strcmp(s->reason[i], reason) == 0) {
            s->count[i]++;
            return;
        }
    }
    if (s->n_reasons == DATA_SKIP_MAX_REASONS) return; /* counted in total only */
    int i = s->n_reasons++;
    snprintf(s->reason[i], sizeof s->reason[i], "%s", reason);
    s->count[i] = 1;
    s->first_line[i] = line;
}

/* A table's values and groups, owned by the dataset that holds it. */
void data_table_free(data_table *t)
{
    if (!t) return;
    data_table_spec_free(&t->spec);
    free(t->pv);
    free(t->kv);
    free(t->group);
    for (int i = 0; i < t->n_group_names; i++) free(t->group_names[i]);
    free(t->group_names);
    free(t);
}

void data_select_free(data_select *ds)
{
    if (!ds) return;
    if (ds->keys)
        for (int i = 0; i < ds->n; i++) free(ds->keys[i]);
    if (ds->kernels)
        for (int k = 0; k < ds->n_kernels; k++) free(ds->kernels[k]);
    free(ds->keys);
    free(ds->kernels);
    free(ds->problems);
    free(ds->runtime);
    free(ds->vendor_rank);
    free(ds->source);
    data_sources_clear(ds);
    data_table_free(ds->table);
    free(ds);
}

int data_select_best(const data_select *ds, int i)
{
    const float *t = ds->runtime + (size_t)i * (size_t)ds->n_kernels;
    int best = -1;
    for (int k = 0; k < ds->n_kernels; k++)
        if (isfinite(t[k]) && (best < 0 || t[k] < t[best])) best = k;
    return best;
}

int data_select_kernel_index(const data_select *ds, const char *name)
{
    for (int k = 0; k < ds->n_kernels; k++)
        if (strcmp(ds->kernels[k], name) == 0) return k;
    return -1;
}
