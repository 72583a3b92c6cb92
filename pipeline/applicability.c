/* Which kernels can run which problems, as the training data shows it.
 *
 * A find-db lists, per problem, only the kernels that ran for it: a forward problem has no backward-data
 * kernels, an FP16 problem no FP32-only kernel. Kernel names do not tell this reliably (MIOpen's
 * ConvOclDirectFwd also runs backward-data problems), so the rule is the data's: a kernel applies to a
 * problem when it was measured for at least one training problem of the same direction, data type and
 * layout. The table is saved in the model file as the group "applicability":
 *   attributes directions, dtypes, layouts   comma-separated names of the values the training rows held
 *   measured   uint8 (n_kernels, n_directions * n_dtypes * n_layouts), row-major, kernels in the order
 *              of the file's "kernels" list
 * Axes are stored by name so that a reader with other enums maps them; a file without the group (older
 * models, or tune models) has no table.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "pipeline/pipeline.h"

#define N_COMBOS (DATA_DIR_COUNT * DATA_DTYPE_COUNT * DATA_LAYOUT_COUNT)

static int combo(int dir, int dtype, int layout)
{
    return (dir * DATA_DTYPE_COUNT + dtype) * DATA_LAYOUT_COUNT + layout;
}

static int problem_combo(const data_problem *p)
{
    return combo(p->direction, p->dtype, p->layout);
}

int pipe_applicability_compute(const data_select *s, const int *rows, int n_rows, const model *m,
                               pipe_applicability *out)
{
    out->n_kernels = m->n_kernels;
    out->measured = hr_calloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1) * N_COMBOS, 1);
    int *col = hr_malloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1) * sizeof *col);
    if (!out->measured || !col) {
        free(col);
        pipe_applicability_free(out);
        return HR_ENOMEM;
    }
    for (int k = 0; k < m->n_kernels; k++) col[k] = data_select_kernel_index(s, m->kernels[k]);
    for (int i = 0; i < n_rows; i++) {
        const float *t = s->runtime + (size_t)rows[i] * (size_t)s->n_kernels;
        int c = problem_combo(&s->problems[rows[i]]);
        for (int k = 0; k < m->n_kernels; k++)
            if (col[k] >= 0 && isfinite(t[col[k]])) out->measured[(size_t)k * N_COMBOS + (size_t)c] = 1;
    }
    free(col);
    return HR_OK;
}

void pipe_applicability_free(pipe_applicability *a)
{
    free(a->measured);
    a->measured = NULL;
    a->n_kernels = 0;
}

int pipe_applicability_of(const pipe_applicability *a, const data_problem *p, unsigned char *applicable)
{
    int c = problem_combo(p), any = 0;
    for (int k = 0; k < a->n_kernels; k++) any |= applicable[k] = a->measured[(size_t)k * N_COMBOS + (size_t)c];
    if (any) return 3;
    /* no training problem had this data type and layout in this direction: the direction alone */
    for (int k = 0; k < a->n_kernels; k++) {
        applicable[k] = 0;
        for (int t = 0; t < DATA_DTYPE_COUNT && !applicable[k]; t++)
            for (int l = 0; l < DATA_LAYOUT_COUNT && !applicable[k]; l++)
                applicable[k] = a->measured[(size_t)k * N_COMBOS + (size_t)combo(p->direction, t, l)];
        any |= applicable[k];
    }
    if (any) return 1;
    memset(applicable, 1, (size_t)a->n_kernels);
    return 0;
}

/* Which values of each axis the table uses: used[axis][value]. */
static void axes_used(const pipe_applicability *a, unsigned char used[3][16])
{
    memset(used, 0, 3 * 16);
    for (int k = 0; k < a->n_kernels; k++)
        for (int d = 0; d < DATA_DIR_COUNT; d++)
            for (int t = 0; t < DATA_DTYPE_COUNT; t++)
                for (int l = 0; l < DATA_LAYOUT_COUNT; l++)
                    if (a->measured[(size_t)k * N_COMBOS + (size_t)combo(d, t, l)]) used[0][d] = used[1][t] = used[2][l] = 1;
}

static int write_table(hid_t f, const pipe_applicability *a)
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
                        a->measured[(size_t)k * N_COMBOS + (size_t)combo(idx[0][d], idx[1][y], idx[2][l])];
    if (!rc && cols) rc = hr_h5_write(g, "measured", H5T_NATIVE_UINT8, (size_t)a->n_kernels, cols, t);
    free(t);
    H5Gclose(g);
    return rc;
}

int pipe_model_save(const model *m, const pipe_applicability *a, const char *path)
{
    if (!a) return model_save(m, path);
    /* the model file is completed under a temporary name and renamed into place whole */
    char *tmp = hr_file_tmp_path(path);
    if (!tmp) return HR_ENOMEM;
    int rc = model_save(m, tmp);
    if (!rc) {
        hid_t f = H5Fopen(tmp, H5F_ACC_RDWR, H5P_DEFAULT);
        if (f < 0) {
            rc = hr_error(HR_EIO, "%s: cannot reopen the model file to add its applicability table", path);
        } else {
            rc = write_table(f, a);
            if (H5Fclose(f) < 0 && !rc) rc = hr_error(HR_EIO, "%s: cannot close the model file", path);
            if (rc) hr_error_wrap(rc, "%s", path);
        }
    }
    if (!rc) rc = hr_file_commit(tmp, path);
    else remove(tmp);
    free(tmp);
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

int pipe_applicability_load(const char *model_path, const model *m, pipe_applicability *out, int *found)
{
    memset(out, 0, sizeof *out);
    *found = 0;
    hid_t f;
    int rc = hr_h5_open(model_path, MODEL_FILE_FORMAT, MODEL_FILE_VERSION, &f, NULL);
    if (rc) return rc;
    if (!hr_h5_exists(f, "applicability")) {
        H5Fclose(f);
        return HR_OK;
    }
    hid_t g;
    int *map[3] = {NULL, NULL, NULL};
    size_t n[3] = {0, 0, 0}, rows = 0, cols = 0;
    unsigned char *t = NULL;
    rc = hr_h5_group_open(f, "applicability", &g);
    if (rc) {
        H5Fclose(f);
        return rc;
    }
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
    out->n_kernels = m->n_kernels;
    if (!rc && !(out->measured = hr_calloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1) * N_COMBOS, 1))) rc = HR_ENOMEM;
    for (int k = 0; !rc && want && k < m->n_kernels; k++)
        for (size_t d = 0; d < n[0]; d++)
            for (size_t y = 0; y < n[1]; y++)
                for (size_t l = 0; l < n[2]; l++)
                    if (map[0][d] >= 0 && map[1][y] >= 0 && map[2][l] >= 0)
                        out->measured[(size_t)k * N_COMBOS + (size_t)combo(map[0][d], map[1][y], map[2][l])] =
                            t[(size_t)k * cols + (d * n[1] + y) * n[2] + l];
    free(t);
    for (int ax = 0; ax < 3; ax++) free(map[ax]);
    H5Gclose(g);
    H5Fclose(f);
    if (rc) {
        pipe_applicability_free(out);
        return hr_error_wrap(rc, "%s", model_path);
    }
    *found = 1;
    return HR_OK;
}
