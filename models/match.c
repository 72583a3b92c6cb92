/* Which configurations a table's problems are measured with, per combination of its categorical problem columns
 * (part of a selection model of valued configurations).
 *
 * A benchmark table measures a problem only on the configurations that can run it: cuBLASLt's algorithms differ
 * by data type, a kernel built for one GPU does not run on another. A configuration's fields do not tell this, so
 * the rule is the data's, as models/applicability.c's for kernels known by name: a configuration can run a problem
 * when a training problem with the same values of every categorical problem and hardware column measured it. A
 * problem whose combination no training problem had is ranked over every configuration. In a model file, the
 * group "config_match":
 *   attribute columns  comma-separated names of the categorical problem columns, in the codec's order
 *   combos    int32 (n_matches, columns): each combination's category indices (the file's own codec's vocabularies)
 *   measured  uint8 (n_kernels, n_matches), kernels in the order of the file's "kernels" list
 */
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "core/h5.h"
#include "models/models_internal.h"

struct model_match {
    int n_columns;
    int columns[DATA_CODEC_MAX_VALUES]; /* the problem values that are categorical */
    int n_matches;
    int32_t *combos;                    /* (n_matches, n_columns) */
    unsigned char *measured;            /* (n_kernels, n_matches) */
};

void model_match_free(model_match *t)
{
    if (!t) return;
    free(t->combos);
    free(t->measured);
    free(t);
}

/* The categorical problem columns of a codec; 0 when it has none. */
static int match_columns(const data_codec *c, int *columns)
{
    int n = 0, n_names;
    for (int j = 0; j < data_codec_value_count(c); j++)
        if (data_codec_column(c, j, &n_names, NULL) && n_names > 0) columns[n++] = j;
    return n;
}

/* The combination of problem pv among t's, or -1. */
static int match_find(const model_match *t, const double *pv)
{
    for (int i = 0; i < t->n_matches; i++) {
        const int32_t *c = t->combos + (size_t)i * t->n_columns;
        int j = 0;
        while (j < t->n_columns && (double)c[j] == pv[t->columns[j]]) j++;
        if (j == t->n_columns) return i;
    }
    return -1;
}

int model_match_compute(model *m, const model_train_data *d)
{
    model_match *t = hr_calloc(1, sizeof *t);
    if (!t) return HR_ENOMEM;
    if (!(t->n_columns = match_columns(m->codec, t->columns))) {
        free(t);
        return HR_OK;
    }
    const data_select *s = d->sel;
    int nv = data_codec_value_count(d->codec), K = m->n_kernels, rc = HR_OK;
    const int *const rows[2] = {d->train, d->valid};
    const int n_rows[2] = {d->n_train, d->n_valid};
    int *row_combo = hr_malloc((size_t)(d->n_train + d->n_valid + 1) * sizeof *row_combo);
    int *col = hr_malloc((size_t)(K > 0 ? K : 1) * sizeof *col);
    t->combos = hr_malloc((size_t)(d->n_train + d->n_valid + 1) * (size_t)t->n_columns * sizeof *t->combos);
    if (!row_combo || !col || !t->combos) rc = HR_ENOMEM;
    /* the distinct combinations, in order of first appearance */
    for (int part = 0, at = 0; !rc && part < 2; part++)
        for (int i = 0; i < n_rows[part]; i++, at++) {
            const double *pv = d->V + (size_t)rows[part][i] * nv;
            int c = match_find(t, pv);
            if (c < 0) {
                c = t->n_matches++;
                for (int j = 0; j < t->n_columns; j++) t->combos[(size_t)c * t->n_columns + j] = (int32_t)pv[t->columns[j]];
            }
            row_combo[at] = c;
        }
    if (!rc && !(t->measured = hr_calloc((size_t)(K > 0 ? K : 1) * (size_t)(t->n_matches > 0 ? t->n_matches : 1), 1)))
        rc = HR_ENOMEM;
    for (int k = 0; !rc && k < K; k++) col[k] = data_select_kernel_index(s, m->kernels[k]);
    for (int part = 0, at = 0; !rc && part < 2; part++)
        for (int i = 0; i < n_rows[part]; i++, at++) {
            const float *time = s->runtime + (size_t)rows[part][i] * (size_t)s->n_kernels;
            for (int k = 0; k < K; k++)
                if (col[k] >= 0 && isfinite(time[col[k]])) t->measured[(size_t)k * t->n_matches + row_combo[at]] = 1;
        }
    free(row_combo);
    free(col);
    if (rc) {
        model_match_free(t);
        return rc;
    }
    model_match_free(m->match);
    m->match = t;
    return HR_OK;
}

int model_match_apply(const model *m, const double *pv, unsigned char *ok)
{
    const model_match *t = m->match;
    int c = t ? match_find(t, pv) : -1, any = 0;
    if (c < 0) return 0;
    for (int k = 0; k < m->n_kernels; k++) any |= ok[k] & t->measured[(size_t)k * t->n_matches + c];
    if (!any) return 0;
    for (int k = 0; k < m->n_kernels; k++) ok[k] &= t->measured[(size_t)k * t->n_matches + c];
    return 1;
}

int model_match_write(const model *m, hid_t f)
{
    const model_match *t = m->match;
    char list[4096] = "";
    size_t used = 0;
    for (int j = 0; j < t->n_columns; j++) {
        const char *name = data_codec_column(m->codec, t->columns[j], NULL, NULL);
        int w = snprintf(list + used, sizeof list - used, "%s%s", j ? "," : "", name);
        if (w < 0 || (size_t)w >= sizeof list - used) return hr_error(HR_EINVAL, "config_match: column names too long");
        used += (size_t)w;
    }
    hid_t g;
    int rc = hr_h5_group_create(f, "config_match", &g);
    if (rc) return rc;
    rc = hr_h5_attr_write_str(g, "columns", list);
    if (!rc && t->n_matches)
        rc = hr_h5_write(g, "combos", H5T_NATIVE_INT32, (size_t)t->n_matches, (size_t)t->n_columns, t->combos);
    if (!rc && t->n_matches && m->n_kernels)
        rc = hr_h5_write(g, "measured", H5T_NATIVE_UINT8, (size_t)m->n_kernels, (size_t)t->n_matches, t->measured);
    H5Gclose(g);
    return rc;
}

int model_match_read(model *m, hid_t f)
{
    if (!hr_h5_exists(f, "config_match")) return HR_OK;
    model_match *t = hr_calloc(1, sizeof *t);
    if (!t) return HR_ENOMEM;
    t->n_columns = match_columns(m->codec, t->columns);
    hid_t g;
    char *list = NULL, want[4096] = "";
    size_t used = 0, rows = 0, cols = 0;
    for (int j = 0; j < t->n_columns; j++)
        used += (size_t)snprintf(want + used, sizeof want - used, "%s%s", j ? "," : "",
                                 data_codec_column(m->codec, t->columns[j], NULL, NULL));
    int rc = hr_h5_group_open(f, "config_match", &g);
    if (rc) {
        free(t);
        return rc;
    }
    if (!(rc = hr_h5_attr_read_str(g, "columns", &list)) && strcmp(list, want) != 0)
        rc = hr_error(HR_EFORMAT, "config_match: columns '%.200s', the model's categorical problem columns are '%.200s'",
                      list, want);
    if (!rc && hr_h5_exists(g, "combos")) {
        void *combos = NULL, *measured = NULL;
        rc = hr_h5_read_alloc(g, "combos", H5T_NATIVE_INT32, &rows, &cols, &combos);
        t->combos = combos;
        if (!rc && cols != (size_t)t->n_columns)
            rc = hr_error(HR_EFORMAT, "config_match/combos has %zu columns, expected %d", cols, t->n_columns);
        t->n_matches = (int)rows;
        size_t r2 = 0, c2 = 0;
        if (!rc) rc = hr_h5_read_alloc(g, "measured", H5T_NATIVE_UINT8, &r2, &c2, &measured);
        t->measured = measured;
        if (!rc && (r2 != (size_t)m->n_kernels || c2 != rows))
            rc = hr_error(HR_EFORMAT, "config_match/measured is (%zu, %zu), expected (%d, %zu)", r2, c2, m->n_kernels,
                          rows);
        /* a category index past its column's vocabulary never matches a problem, but would name none */
        for (size_t i = 0; !rc && i < rows * cols; i++) {
            int n_names;
            data_codec_column(m->codec, t->columns[i % cols], &n_names, NULL);
            if (t->combos[i] < 0 || t->combos[i] >= n_names)
                rc = hr_error(HR_EFORMAT, "config_match/combos: category %d of column %zu is out of range",
                              t->combos[i], i % cols);
        }
    }
    free(list);
    H5Gclose(g);
    if (rc) {
        model_match_free(t);
        return rc;
    }
    m->match = t;
    return HR_OK;
}
