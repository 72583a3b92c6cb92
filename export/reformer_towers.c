/* A Reformer towers model of a benchmark table as C source (export/table.c writes the schema, the API and the
 * known configurations' values hm_configs around it): the problem tower's folded weights, the configuration tower,
 * the interaction weights, v of every known configuration as the model computed it (the view known_v, so that a
 * known candidate's v is the library's, bit for bit) and an open-addressing table from a configuration's values to
 * its index; the kernels are export/runtime/towers.h. Everything is read through the model's views
 * (models/reformer_view.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "export/runtime/towers.h"
#include "models/view.h"

/* The sizes the writer reads */
typedef struct tv {
    int ni, n_ple, depth, hidden, expand, D, nc, ch, nq;
} tv;

static tv tv_read(const model_views *v)
{
    tv t = {(int)model_view_int(v, "n_in"),   (int)model_view_int(v, "n_ple"),     (int)model_view_int(v, "depth"),
            (int)model_view_int(v, "hidden"), (int)model_view_int(v, "expand"),    (int)model_view_int(v, "tower_dim"),
            (int)model_view_int(v, "n_cfg"),  (int)model_view_int(v, "config_hidden"), (int)model_view_int(v, "n_q")};
    return t;
}

/* block l's folded parts: 0 w12 ((hidden + expand), d_in), 1 b12 (hidden + expand), 2 a3 (hidden, expand) */
static const char *const parts[] = {"w12", "b12", "a3"};

static size_t part_size(const tv *t, int l, int p)
{
    const size_t o = (size_t)t->hidden + (size_t)t->expand, din = (size_t)(l ? t->hidden : t->ni);
    return p == 0 ? o * din : p == 1 ? o : (size_t)t->hidden * t->expand;
}

static const float *block(const model_views *v, const tv *t, int l, int p)
{
    char name[MODEL_VIEW_NAME];
    snprintf(name, sizeof name, "block%d.%s", l, parts[p]);
    return model_view_floats(v, name, part_size(t, l, p));
}

int export_towers_check(const model *m, const model_views *v, const char *name)
{
    (void)m;
    const model_view *mode = model_view_find(v, "mode");
    if (!mode || mode->kind != MODEL_VIEW_TEXT || strcmp(mode->data, "towers"))
        return hr_error(HR_EINVAL, "%s: not a reformer towers model", name);
    if (!model_view_int(v, "folded"))
        return hr_error(HR_EINVAL, "%s: a towers model with layer norm cannot be exported to C (batch norm only)",
                        name);
    const tv t = tv_read(v);
    int rc = export_check_params(name, model_view_params(v, "params"));
    if (!rc) rc = export_check_finite(name, "zscore_std", model_view_floats(v, "zscore_std", (size_t)t.ni), (size_t)t.ni);
    for (int l = 0; !rc && l < t.depth; l++)
        for (int p = 0; !rc && p < 3; p++) rc = export_check_finite(name, "fold", block(v, &t, l, p), part_size(&t, l, p));
    return rc;
}

/* block l's folded weights, transposed: W12 (d_in, d_out + d_hidden), b12, A3 (d_hidden, d_out) */
static int write_blocks(FILE *c, const model_views *v, const tv *t)
{
    char name[64];
    for (int l = 0; l < t->depth; l++) {
        const int din = l ? t->hidden : t->ni, dh = t->expand, dout = t->hidden, o = dout + dh;
        snprintf(name, sizeof name, "hm_w12_%d", l);
        int rc = export_c_floats_transposed(c, name, block(v, t, l, 0), o, din, 0);
        if (rc) return rc;
        snprintf(name, sizeof name, "hm_b12_%d", l);
        export_c_floats(c, name, block(v, t, l, 1), (size_t)o);
        snprintf(name, sizeof name, "hm_a3_%d", l);
        if ((rc = export_c_floats_transposed(c, name, block(v, t, l, 2), dout, dh, 0))) return rc;
    }
    for (int p = 0; p < 3; p++) {
        fprintf(c, "static const float *const hm_%s[%d] = {", parts[p], t->depth);
        for (int l = 0; l < t->depth; l++) fprintf(c, "%shm_%s_%d", l ? ", " : "", parts[p], l);
        fprintf(c, "};\n");
    }
    return HR_OK;
}

/* hm_vknown (K, D): v of the known configurations; hm_slot: their open-addressing table */
static int write_known(FILE *c, const model *m, const model_views *v, const tv *t)
{
    const int K = m->n_kernels, D = t->D, nk = data_codec_config_width(m->codec);
    uint32_t size = 2;
    while (size < 2u * (uint32_t)K) size <<= 1;
    int *slot = hr_malloc(size * sizeof *slot);
    if (!slot) return HR_ENOMEM;
    for (uint32_t s = 0; s < size; s++) slot[s] = -1;
    for (int k = 0; k < K; k++) {
        const double *kv = m->kernel_values + (size_t)k * nk;
        uint32_t s = hm_config_hash(kv, nk, size - 1);
        while (slot[s] >= 0) s = (s + 1) & (size - 1);
        slot[s] = k;
    }
    fprintf(c, "#define HM_NKNOWN %d\n#define HM_HASH %u\n", K, size);
    export_c_floats(c, "hm_vknown", model_view_floats(v, "known_v", (size_t)K * D), (size_t)K * D);
    export_c_ints(c, "int", "hm_slot", slot, size);
    free(slot);
    return HR_OK;
}

int export_towers_write(FILE *c, const model *m, const model_views *v)
{
    const tv t = tv_read(v);
    const size_t ni = (size_t)t.ni, np = (size_t)t.n_ple, D = (size_t)t.D, nc = (size_t)t.nc, ch = (size_t)t.ch,
                 nq = (size_t)t.nq, H = (size_t)t.hidden;
    fprintf(c, "#define HM_NIN %d\n#define HM_NPLE %d\n#define HM_LOG %d\n#define HM_DEPTH %d\n#define HM_HID %d\n"
               "#define HM_EXP %d\n#define HM_D %d\n#define HM_NC %d\n#define HM_CH %d\n#define HM_NQ %d\n",
            t.ni, t.n_ple, (int)model_view_int(v, "input_log"), t.depth, t.hidden, t.expand, t.D, t.nc, t.ch, t.nq);
    export_c_floats(c, "hm_zmean", model_view_floats(v, "zscore_mean", ni), ni);
    export_c_floats(c, "hm_zstd", model_view_floats(v, "zscore_std", ni), ni);
    export_c_ints(c, "int", "hm_ple_src", model_view_ints(v, "ple_feature", np), np);
    export_c_floats(c, "hm_ple_lo", model_view_floats(v, "ple_lo", np), np);
    export_c_floats(c, "hm_ple_hi", model_view_floats(v, "ple_hi", np), np);
    int rc = write_blocks(c, v, &t);
    if (!rc) rc = export_c_floats_transposed(c, "hm_head_w", model_view_tensor(v, "params", "head.weight", D * H), t.D,
                                             t.hidden, 0);
    export_c_floats(c, "hm_head_b", model_view_tensor(v, "params", "head.bias", D), D);
    export_c_floats(c, "hm_cmean", model_view_floats(v, "config_mean", nc), nc);
    export_c_floats(c, "hm_cstd", model_view_floats(v, "config_std", nc), nc);
    if (!rc) rc = export_c_floats_transposed(c, "hm_c1_w", model_view_tensor(v, "params", "config.0.weight", ch * nc),
                                             t.ch, t.nc, 0);
    export_c_floats(c, "hm_c1_b", model_view_tensor(v, "params", "config.0.bias", ch), ch);
    if (!rc) rc = export_c_floats_transposed(c, "hm_c2_w", model_view_tensor(v, "params", "config.1.weight", D * ch),
                                             t.D, t.ch, 0);
    export_c_floats(c, "hm_c2_b", model_view_tensor(v, "params", "config.1.bias", D), D);
    export_c_floats(c, "hm_inter_w", nq ? model_view_tensor(v, "params", "interaction.weight", nq) : NULL, nq);
    fprintf(c, "static const float hm_inter_b = %#.9gf;\n",
            nq ? (double)model_view_tensor(v, "params", "interaction.bias", 1)[0] : 0.0);
    export_c_floats(c, "hm_qmean", model_view_floats(v, "interaction_mean", nq), nq);
    export_c_floats(c, "hm_qstd", model_view_floats(v, "interaction_std", nq), nq);
    if (!rc) rc = write_known(c, m, v, &t);
    if (rc) return rc;
    export_section(c, "export/runtime/towers.h", "hash");
    export_section(c, "export/runtime/towers.h", "scores");
    return HR_OK;
}
