/* Which kernels can run which problems, as the training data shows it (part of every selection model).
 *
 * A find-db lists, per problem, only the kernels that ran for it: a forward problem has no backward-data
 * kernels, an FP16 problem no FP32-only kernel. Kernel names do not tell this reliably (MIOpen's
 * ConvOclDirectFwd also runs backward-data problems), so the rule is the data's: a kernel applies to a
 * problem when it was measured for at least one training problem of the same direction, data type and
 * layout. model_base_init fills the table from the training rows, and model_save writes it into the model
 * file as the group "applicability":
 *   attributes directions, dtypes, layouts   comma-separated names of the values the training rows held
 *   measured   uint8 (n_kernels, n_directions * n_dtypes * n_layouts), row-major, kernels in the order
 *              of the file's "kernels" list
 * Axes are stored by name so that a reader with other enums maps them; a file without the group (older
 * models, or tune models) has no table. The problem's precision class then refuses the kernels of a math type it
 * does not allow (data/portable.h), whatever the table says: a model never ranks a kernel outside the class.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/models_internal.h"

#define N_COMBOS MODEL_APPLICABILITY_COMBOS

static int combo(int dir, int dtype, int layout)
{
    return (dir * DATA_DTYPE_COUNT + dtype) * DATA_LAYOUT_COUNT + layout;
}

static int problem_combo(const data_problem *p)
{
    return combo(p->direction, p->dtype, p->layout);
}

int model_applicability_compute(model *m, const data_select *s, const int *const rows[2], const int n_rows[2])
{
    free(m->applicable);
    m->applicable = hr_calloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1) * N_COMBOS, 1);
    int *col = hr_malloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1) * sizeof *col);
    if (!m->applicable || !col) {
        free(col);
        return HR_ENOMEM;
    }
    for (int k = 0; k < m->n_kernels; k++) col[k] = data_select_kernel_index(s, m->kernels[k]);
    for (int part = 0; part < 2; part++)
        for (int i = 0; i < n_rows[part]; i++) {
            int r = rows[part][i];
            const float *t = s->runtime + (size_t)r * (size_t)s->n_kernels;
            int c = problem_combo(&s->problems[r]);
            for (int k = 0; k < m->n_kernels; k++)
                if (col[k] >= 0 && isfinite(t[col[k]])) m->applicable[(size_t)k * N_COMBOS + (size_t)c] = 1;
        }
    free(col);
    return HR_OK;
}

static model_applies model_applicable_shape(const model *m, const data_problem *p, unsigned char *ok);

/* Refuses the kernels p's precision class does not allow (data_portable_precision_allows); 1 when one is left. */
static int class_mask(const model *m, const data_problem *p, unsigned char *ok)
{
    int any = 0;
    for (int k = 0; k < m->n_kernels; k++) {
        if (ok[k] && !data_portable_precision_allows(p->precision, p->dtype, m->kernels[k], strlen(m->kernels[k]))) ok[k] = 0;
        any |= ok[k];
    }
    return any;
}

model_applies model_applicable(const model *m, const data_problem *p, unsigned char *ok)
{
    model_applies r = model_applicable_shape(m, p, ok);
    /* a table's configurations are named by their fields, which no precision class refuses */
    if (!m->table && !class_mask(m, p, ok)) {
        memset(ok, 1, (size_t)m->n_kernels);
        class_mask(m, p, ok);
        return MODEL_APPLIES_ALL;
    }
    return r;
}

/* The kernels measured for p's direction, data type and layout (or the wider rules), before its class. */
static model_applies model_applicable_shape(const model *m, const data_problem *p, unsigned char *ok)
{
    if (!m->applicable) {
        memset(ok, 1, (size_t)m->n_kernels);
        /* a table model: every configuration, the problem's candidate list decides */
        return m->table ? MODEL_APPLIES_ALL : MODEL_APPLIES_UNRECORDED;
    }
    const unsigned char *t = m->applicable;
    int c = problem_combo(p), any = 0;
    for (int k = 0; k < m->n_kernels; k++) any |= ok[k] = t[(size_t)k * N_COMBOS + (size_t)c];
    if (any) return MODEL_APPLIES_EXACT;
    /* no training problem had this data type and layout in this direction: the direction alone */
    for (int k = 0; k < m->n_kernels; k++) {
        ok[k] = 0;
        for (int y = 0; y < DATA_DTYPE_COUNT && !ok[k]; y++)
            for (int l = 0; l < DATA_LAYOUT_COUNT && !ok[k]; l++)
                ok[k] = t[(size_t)k * N_COMBOS + (size_t)combo(p->direction, y, l)];
        any |= ok[k];
    }
    if (any) return MODEL_APPLIES_DIRECTION;
    memset(ok, 1, (size_t)m->n_kernels);
    return MODEL_APPLIES_ALL;
}

static int cmp_ranked(const void *a, const void *b)
{
    const model_ranked *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->kernel - y->kernel;
}

int model_rank(const model *m, const data_problem *p, const float *scores, model_ranked *out, model_applies *rule)
{
    unsigned char *ok = hr_malloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1));
    if (!ok) return HR_ENOMEM;
    model_applies r = model_applicable(m, p, ok);
    if (rule) *rule = r;
    int n = 0, allowed = 0;
    double hi = -INFINITY, z = 0;
    for (int k = 0; k < m->n_kernels; k++) {
        allowed += ok[k];
        if (ok[k] && isfinite(scores[k])) {
            out[n++] = (model_ranked){k, scores[k], 0};
            if (scores[k] > hi) hi = scores[k];
        }
    }
    free(ok);
    /* an empty ranking is no answer: every kernel refused by the problem's precision class, or the allowed ones
     * scored NaN or infinite by a diverged or damaged model */
    if (n == 0 && !allowed)
        return hr_error(HR_ESTATE, "no kernel of this model is allowed for the problem's precision class");
    if (n == 0)
        return hr_error(HR_ESTATE, "no %s gets a finite score (the model's scores are NaN or infinite)",
                        m->table ? "configuration" : "kernel");
    /* softmax over the ranked kernels, in double, shifted by the largest score */
    for (int i = 0; i < n; i++) z += exp((double)out[i].score - hi);
    for (int i = 0; i < n; i++) out[i].prob = (float)(exp((double)out[i].score - hi) / z);
    qsort(out, (size_t)n, sizeof *out, cmp_ranked);
    return n;
}

/* Which values of each axis the table uses: used[axis][value]. */
static void axes_used(const model *a, unsigned char used[3][16])
{
    memset(used, 0, 3 * 16);
    for (int k = 0; k < a->n_kernels; k++)
        for (int d = 0; d < DATA_DIR_COUNT; d++)
            for (int t = 0; t < DATA_DTYPE_COUNT; t++)
                for (int l = 0; l < DATA_LAYOUT_COUNT; l++)
                    if (a->applicable[(size_t)k * N_COMBOS + (size_t)combo(d, t, l)]) used[0][d] = used[1][t] = used[2][l] = 1;
}

int model_applicability_write(const model *a, hid_t f)
{
    unsigned char used[3][16];
    axes_used(a, used);
    const char *const *names[3] = {data_direction_names, data_dtype_names, data_layout_names};
    const int counts[3] = {DATA_DIR_COUNT, DATA_DTYPE_COUNT, DATA_LAYOUT_COUNT};
    const char *const attrs[3] = {"directions", "dtypes", "layouts"};
    int idx[3][16], n[3] = {0, 0, 0};
    hid_t g;
    int rc = hr_h5_group_create(f, "applicability", &g);
    if (rc) return rc;
    for (int ax = 0; ax < 3 && !rc; ax++) {
        char list[256] = "";
        for (int v = 0; v < counts[ax]; v++)
            if (used[ax][v]) {
                if (n[ax]) strcat(list, ",");
                strcat(list, names[ax][v]);
                idx[ax][n[ax]++] = v;
            }
        rc = hr_h5_attr_write_str(g, attrs[ax], list);
    }
    size_t cols = (size_t)n[0] * (size_t)n[1] * (size_t)n[2];
    unsigned char *t = rc ? NULL : hr_calloc((size_t)(a->n_kernels > 0 ? a->n_kernels : 1) * (cols ? cols : 1), 1);
    if (!rc && !t) rc = HR_ENOMEM;
    for (int k = 0; !rc && k < a->n_kernels; k++)
        for (int d = 0; d < n[0]; d++)
            for (int y = 0; y < n[1]; y++)
                for (int l = 0; l < n[2]; l++)
                    t[(size_t)k * cols + ((size_t)d * n[1] + y) * n[2] + l] =
                        a->applicable[(size_t)k * N_COMBOS + (size_t)combo(idx[0][d], idx[1][y], idx[2][l])];
    if (!rc && cols) rc = hr_h5_write(g, "measured", H5T_NATIVE_UINT8, (size_t)a->n_kernels, cols, t);
    free(t);
    H5Gclose(g);
    return rc;
}

/* Maps each stored name of an axis (a comma-separated attribute) to our index (-1: a value this build
 * does not know). */
static int read_axis(hid_t g, const char *name, const char *const *known, int n_known, int **map, size_t *n)
{
    char *list;
    int rc = hr_h5_attr_read_str(g, name, &list);
    if (rc) return rc;
    *n = 0;
    *map = hr_malloc((strlen(list) + 1) * sizeof **map);
    if (!*map) rc = HR_ENOMEM;
    for (char *save = NULL, *tok = rc ? NULL : strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v = -1;
        for (int i = 0; i < n_known; i++)
            if (strcmp(tok, known[i]) == 0) v = i;
        (*map)[(*n)++] = v;
    }
    free(list);
    return rc;
}

int model_applicability_read(model *m, hid_t f)
{
    if (!hr_h5_exists(f, "applicability")) return HR_OK;
    hid_t g;
    int *map[3] = {NULL, NULL, NULL};
    size_t n[3] = {0, 0, 0}, rows = 0, cols = 0;
    unsigned char *t = NULL;
    int rc = hr_h5_group_open(f, "applicability", &g);
    if (rc) return rc;
    rc = read_axis(g, "directions", data_direction_names, DATA_DIR_COUNT, &map[0], &n[0]);
    if (!rc) rc = read_axis(g, "dtypes", data_dtype_names, DATA_DTYPE_COUNT, &map[1], &n[1]);
    if (!rc) rc = read_axis(g, "layouts", data_layout_names, DATA_LAYOUT_COUNT, &map[2], &n[2]);
    size_t want = n[0] * n[1] * n[2];
    if (!rc && want) {
        if ((rc = hr_h5_shape(g, "measured", &rows, &cols)) == HR_OK &&
            (rows != (size_t)m->n_kernels || cols != want))
            rc = hr_error(HR_EFORMAT, "applicability/measured is (%zu, %zu), expected (%d, %zu)", rows, cols,
                          m->n_kernels, want);
        if (!rc && !(t = hr_malloc(rows * cols > 0 ? rows * cols : 1))) rc = HR_ENOMEM;
        if (!rc) rc = hr_h5_read(g, "measured", H5T_NATIVE_UINT8, rows, cols, t);
    }
    if (!rc && !(m->applicable = hr_calloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1) * N_COMBOS, 1)))
        rc = HR_ENOMEM;
    for (int k = 0; !rc && want && k < m->n_kernels; k++)
        for (size_t d = 0; d < n[0]; d++)
            for (size_t y = 0; y < n[1]; y++)
                for (size_t l = 0; l < n[2]; l++)
                    if (map[0][d] >= 0 && map[1][y] >= 0 && map[2][l] >= 0)
                        m->applicable[(size_t)k * N_COMBOS + (size_t)combo(map[0][d], map[1][y], map[2][l])] =
                            t[(size_t)k * cols + (d * n[1] + y) * n[2] + l];
    free(t);
    for (int ax = 0; ax < 3; ax++) free(map[ax]);
    H5Gclose(g);
    if (rc) {
        free(m->applicable);
        m->applicable = NULL;
    }
    return rc;
}
