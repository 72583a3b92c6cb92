/* Which kernels can run which problems, as the training data shows it (part of every selection model).
 *
 * A find-db lists, per problem, only the kernels that ran for it: a forward problem has no backward-data
 * kernels, an FP16 problem no FP32-only kernel. Kernel names do not tell this reliably (MIOpen's
 * ConvOclDirectFwd also runs backward-data problems), so the rule is the data's: a kernel applies to a
 * problem when it was measured for at least one training problem of the same combination of the source's slices
 * (data/codec.h: a convolution's direction, data type and layout). model_base_init fills the table from the
 * training rows, and model_save writes it into the model file as the group "applicability":
 *   attributes <slice>s ("directions", "dtypes", "layouts")   comma-separated names of the values the training
 *              rows held
 *   measured   uint8 (n_kernels, product of those counts), row-major, kernels in the order of the file's "kernels"
 *              list
 * Axes are stored by name so that a reader with other vocabularies maps them; a file without the group (older
 * models, or tune models) has no table, and a source without slices (a benchmark table, whose problems' candidates
 * are what was measured for each) needs none. The slices the table keys on are the codec's measured ones; the
 * kernels a problem refuses by rule (an FP32 convolution's precision class, data_codec_allow_class) are then
 * refused whatever the table says: a model never ranks a kernel outside the class.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/models_internal.h"

#define MAX_SLICES 8
#define MAX_SLICE_VALUES 64

/* The slices kernels are measured per: the codec's first slices, as many as are marked measured. */
static int measured_slices(const data_codec *c)
{
    int n = 0;
    while (n < data_codec_slice_count(c) && data_codec_slice_at(c, n)->measured) n++;
    HR_ASSERT(n <= MAX_SLICES);
    return n;
}

int model_slice_combo(const data_codec *c, const double *pv)
{
    int v[MAX_SLICES], n = measured_slices(c), combo = 0;
    HR_ASSERT(data_codec_slice_count(c) <= MAX_SLICES);
    data_codec_slices(c, pv, v);
    for (int s = 0; s < n; s++) combo = combo * data_codec_slice_at(c, s)->n_values + v[s];
    return combo;
}

int model_applicability_combos(const data_codec *c)
{
    int n = 1;
    for (int s = 0; s < measured_slices(c); s++) n *= data_codec_slice_at(c, s)->n_values;
    return n;
}

int model_applicability_compute(model *m, const model_train_data *d)
{
    const data_select *s = d->sel;
    int ns = measured_slices(m->codec), nv = data_codec_value_count(d->codec);
    if (!ns) return HR_OK;
    m->n_combos = model_applicability_combos(m->codec);
    free(m->applicable);
    m->applicable = hr_calloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1) * (size_t)m->n_combos, 1);
    int *col = hr_malloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1) * sizeof *col);
    if (!m->applicable || !col) {
        free(col);
        return HR_ENOMEM;
    }
    for (int k = 0; k < m->n_kernels; k++) col[k] = data_select_kernel_index(s, m->kernels[k]);
    const int *const rows[2] = {d->train, d->valid};
    const int n_rows[2] = {d->n_train, d->n_valid};
    for (int part = 0; part < 2; part++)
        for (int i = 0; i < n_rows[part]; i++) {
            int r = rows[part][i];
            const float *t = s->runtime + (size_t)r * (size_t)s->n_kernels;
            int c = model_slice_combo(m->codec, d->V + (size_t)r * nv);
            for (int k = 0; k < m->n_kernels; k++)
                if (col[k] >= 0 && isfinite(t[col[k]])) m->applicable[(size_t)k * m->n_combos + (size_t)c] = 1;
        }
    free(col);
    return HR_OK;
}

static model_applies model_applicable_shape(const model *m, const double *pv, unsigned char *ok);

/* Refuses the kernels the problem refuses by rule (data_codec_allow_class); 1 when one is left. */
static int class_mask(const model *m, const double *pv, unsigned char *ok)
{
    int cls = data_codec_allow_class(m->codec, pv), any = 0;
    for (int k = 0; k < m->n_kernels; k++) {
        if (ok[k] && !data_codec_class_allows(m->codec, cls, m->kernels[k])) ok[k] = 0;
        any |= ok[k];
    }
    return any;
}

model_applies model_applicable(const model *m, const double *pv, unsigned char *ok)
{
    model_applies r = model_applicable_shape(m, pv, ok);
    if (!class_mask(m, pv, ok)) {
        memset(ok, 1, (size_t)m->n_kernels);
        class_mask(m, pv, ok);
        return MODEL_APPLIES_ALL;
    }
    return r;
}

/* The kernels measured for the problem's combination of measured slices (or the wider rules), before its rule. */
static model_applies model_applicable_shape(const model *m, const double *pv, unsigned char *ok)
{
    if (!m->applicable) {
        memset(ok, 1, (size_t)m->n_kernels);
        /* valued configurations: those measured for the problem's categorical values (models/match.c), else every
         * one */
        if (model_match_apply(m, pv, ok)) return MODEL_APPLIES_EXACT;
        return measured_slices(m->codec) ? MODEL_APPLIES_UNRECORDED : MODEL_APPLIES_ALL;
    }
    const unsigned char *t = m->applicable;
    size_t nc = (size_t)m->n_combos;
    int c = model_slice_combo(m->codec, pv), any = 0;
    for (int k = 0; k < m->n_kernels; k++) any |= ok[k] = t[(size_t)k * nc + (size_t)c];
    if (any) return MODEL_APPLIES_EXACT;
    /* no training problem had this combination: the first slice (a convolution's direction) alone, whose
     * combinations are a contiguous run */
    size_t inner = nc / (size_t)data_codec_slice_at(m->codec, 0)->n_values, first = (size_t)c / inner * inner;
    for (int k = 0; k < m->n_kernels; k++) {
        ok[k] = 0;
        for (size_t j = first; j < first + inner && !ok[k]; j++) ok[k] = t[(size_t)k * nc + j];
        any |= ok[k];
    }
    if (any) return MODEL_APPLIES_DIRECTION;
    memset(ok, 1, (size_t)m->n_kernels);
    return MODEL_APPLIES_ALL;
}

/* The slices' values of combination c (mixed radix in slice order). */
static void combo_values(const data_codec *cd, int c, int *v)
{
    for (int s = measured_slices(cd) - 1; s >= 0; s--) {
        int n = data_codec_slice_at(cd, s)->n_values;
        v[s] = c % n;
        c /= n;
    }
}

/* Which values of each slice the table uses: used[slice][value]. */
static void slices_used(const model *a, unsigned char used[MAX_SLICES][MAX_SLICE_VALUES])
{
    int ns = measured_slices(a->codec), v[MAX_SLICES];
    memset(used, 0, MAX_SLICES * MAX_SLICE_VALUES);
    for (int c = 0; c < a->n_combos; c++) {
        int hit = 0;
        for (int k = 0; k < a->n_kernels && !hit; k++) hit = a->applicable[(size_t)k * a->n_combos + (size_t)c];
        if (!hit) continue;
        combo_values(a->codec, c, v);
        for (int s = 0; s < ns; s++) used[s][v[s]] = 1;
    }
}

int model_applicability_write(const model *a, hid_t f)
{
    const data_codec *cd = a->codec;
    int ns = measured_slices(cd);
    unsigned char used[MAX_SLICES][MAX_SLICE_VALUES];
    slices_used(a, used);
    int idx[MAX_SLICES][MAX_SLICE_VALUES], n[MAX_SLICES] = {0};
    hid_t g;
    int rc = hr_h5_group_create(f, "applicability", &g);
    if (rc) return rc;
    size_t cols = 1;
    for (int s = 0; s < ns && !rc; s++) {
        const data_codec_slice *sl = data_codec_slice_at(cd, s);
        char list[1024] = "", attr[64];
        for (int v = 0; v < sl->n_values; v++)
            if (used[s][v]) {
                if (n[s]) strcat(list, ",");
                strcat(list, sl->names[v]);
                idx[s][n[s]++] = v;
            }
        snprintf(attr, sizeof attr, "%ss", sl->name);
        rc = hr_h5_attr_write_str(g, attr, list);
        cols *= (size_t)n[s];
    }
    unsigned char *t = rc ? NULL : hr_calloc((size_t)(a->n_kernels > 0 ? a->n_kernels : 1) * (cols ? cols : 1), 1);
    if (!rc && !t) rc = HR_ENOMEM;
    /* every combination of the used values, mixed radix over the used lists */
    for (size_t j = 0; !rc && j < cols; j++) {
        size_t rest = j;
        int combo = 0, pos[MAX_SLICES];
        for (int s = ns - 1; s >= 0; s--) {
            pos[s] = (int)(rest % (size_t)n[s]);
            rest /= (size_t)n[s];
        }
        for (int s = 0; s < ns; s++) combo = combo * data_codec_slice_at(cd, s)->n_values + idx[s][pos[s]];
        for (int k = 0; k < a->n_kernels; k++) t[(size_t)k * cols + j] = a->applicable[(size_t)k * a->n_combos + (size_t)combo];
    }
    if (!rc && cols) rc = hr_h5_write(g, "measured", H5T_NATIVE_UINT8, (size_t)a->n_kernels, cols, t);
    free(t);
    H5Gclose(g);
    return rc;
}

/* Maps each stored name of a slice (a comma-separated attribute) to our index (-1: a value this build does not
 * know). */
static int read_axis(hid_t g, const data_codec_slice *sl, int **map, size_t *n)
{
    char *list, attr[64];
    snprintf(attr, sizeof attr, "%ss", sl->name);
    int rc = hr_h5_attr_read_str(g, attr, &list);
    if (rc) return rc;
    *n = 0;
    *map = hr_malloc((strlen(list) + 1) * sizeof **map);
    if (!*map) rc = HR_ENOMEM;
    for (char *save = NULL, *tok = rc ? NULL : strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v = -1;
        for (int i = 0; i < sl->n_values; i++)
            if (strcmp(tok, sl->names[i]) == 0) v = i;
        (*map)[(*n)++] = v;
    }
    free(list);
    return rc;
}

int model_applicability_read(model *m, hid_t f)
{
    int ns = measured_slices(m->codec);
    if (!ns || !hr_h5_exists(f, "applicability")) return HR_OK;
    hid_t g;
    int *map[MAX_SLICES] = {NULL};
    size_t n[MAX_SLICES] = {0}, rows = 0, cols = 0, want = 1;
    unsigned char *t = NULL;
    int rc = hr_h5_group_open(f, "applicability", &g);
    if (rc) return rc;
    for (int s = 0; s < ns && !rc; s++) {
        rc = read_axis(g, data_codec_slice_at(m->codec, s), &map[s], &n[s]);
        want *= n[s];
    }
    if (!rc && want) {
        if ((rc = hr_h5_shape(g, "measured", &rows, &cols)) == HR_OK &&
            (rows != (size_t)m->n_kernels || cols != want))
            rc = hr_error(HR_EFORMAT, "applicability/measured is (%zu, %zu), expected (%d, %zu)", rows, cols,
                          m->n_kernels, want);
        if (!rc && !(t = hr_malloc(rows * cols > 0 ? rows * cols : 1))) rc = HR_ENOMEM;
        if (!rc) rc = hr_h5_read(g, "measured", H5T_NATIVE_UINT8, rows, cols, t);
    }
    m->n_combos = model_applicability_combos(m->codec);
    if (!rc && !(m->applicable = hr_calloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1) * (size_t)m->n_combos, 1)))
        rc = HR_ENOMEM;
    /* every stored combination whose values this build knows */
    for (size_t j = 0; !rc && j < want; j++) {
        size_t rest = j;
        int combo = 0, known = 1, pos[MAX_SLICES];
        for (int s = ns - 1; s >= 0; s--) {
            pos[s] = (int)(rest % n[s]);
            rest /= n[s];
        }
        for (int s = 0; s < ns; s++) {
            int v = map[s][pos[s]];
            known &= v >= 0;
            combo = combo * data_codec_slice_at(m->codec, s)->n_values + (v >= 0 ? v : 0);
        }
        for (int k = 0; known && k < m->n_kernels; k++)
            m->applicable[(size_t)k * m->n_combos + (size_t)combo] = t[(size_t)k * cols + j];
    }
    free(t);
    for (int s = 0; s < ns; s++) free(map[s]);
    H5Gclose(g);
    if (rc) {
        free(m->applicable);
        m->applicable = NULL;
    }
    return rc;
}
