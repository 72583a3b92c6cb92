/* A Reformer towers model of a benchmark table as C source (export/table.c writes the schema, the API and the
 * known configurations' values hm_configs around it): the problem tower's folded weights, the configuration tower,
 * the interaction weights, v of every known configuration computed here by the library (so that a known
 * candidate's v is the library's, bit for bit) and an open-addressing table from a configuration's values to its
 * index; the kernels are export/runtime/towers.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/table.h"
#include "export/export_internal.h"
#include "export/runtime/towers.h"
#include "models/models_internal.h"
#include "models/reformer_internal.h"

int export_towers_check(const model *m, const char *name)
{
    const reformer *r = (const reformer *)m;
    if (m->family != &model_family_reformer || r->mode != &reformer_head_towers)
        return hr_error(HR_EINVAL, "%s: not a reformer towers model", name);
    if (r->norm != NN_NORM_BATCH)
        return hr_error(HR_EINVAL, "%s: a towers model with layer norm cannot be exported to C (batch norm only)",
                        name);
    int rc = export_check_params(name, &r->p);
    if (!rc) rc = export_check_finite(name, "zscore_std", r->zstd, (size_t)r->n_in);
    if (!rc) rc = export_check_finite(name, "fold", r->fold, r->fold_off[r->depth - 1] + 1);
    return rc;
}

/* block l's folded weights, transposed: W12 (d_in, d_out + d_hidden), b12, A3 (d_hidden, d_out) */
static int write_blocks(FILE *c, const reformer *r)
{
    char name[64];
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const int din = g->d_in, dh = g->d_hidden, dout = g->d_out, o = dout + dh;
        const float *W12 = r->fold + r->fold_off[l], *b12 = W12 + (size_t)o * din, *A3 = b12 + o;
        snprintf(name, sizeof name, "hm_w12_%d", l);
        int rc = export_c_floats_transposed(c, name, W12, o, din, 0);
        if (rc) return rc;
        snprintf(name, sizeof name, "hm_b12_%d", l);
        export_c_floats(c, name, b12, (size_t)o);
        snprintf(name, sizeof name, "hm_a3_%d", l);
        if ((rc = export_c_floats_transposed(c, name, A3, dout, dh, 0))) return rc;
    }
    static const char *const tab[] = {"w12", "b12", "a3"};
    for (int t = 0; t < 3; t++) {
        fprintf(c, "static const float *const hm_%s[%d] = {", tab[t], r->depth);
        for (int l = 0; l < r->depth; l++) fprintf(c, "%shm_%s_%d", l ? ", " : "", tab[t], l);
        fprintf(c, "};\n");
    }
    return HR_OK;
}

/* hm_vknown (K, D): v of the known configurations; hm_slot: their open-addressing table */
static int write_known(FILE *c, const model *m, const reformer *r)
{
    const int K = m->n_kernels, D = r->tower_dim, nk = m->table->n_kernel;
    uint32_t size = 2;
    while (size < 2u * (uint32_t)K) size <<= 1;
    void *ws = NULL;
    float *v = hr_malloc((size_t)(K ? K : 1) * D * sizeof *v);
    int *slot = hr_malloc(size * sizeof *slot);
    int rc = v && slot ? m->family->ws_create(m, &ws) : HR_ENOMEM;
    if (!rc) {
        reformer_towers_config(r, ws, m->kernel_values, K, v);
        for (uint32_t s = 0; s < size; s++) slot[s] = -1;
        for (int k = 0; k < K; k++) {
            const double *kv = m->kernel_values + (size_t)k * nk;
            uint32_t s = hm_config_hash(kv, nk, size - 1);
            while (slot[s] >= 0) s = (s + 1) & (size - 1);
            slot[s] = k;
        }
        fprintf(c, "#define HM_NKNOWN %d\n#define HM_HASH %u\n", K, size);
        export_c_floats(c, "hm_vknown", v, (size_t)K * D);
        export_c_ints(c, "int", "hm_slot", slot, size);
    }
    if (ws) m->family->ws_free(ws);
    free(v);
    free(slot);
    return rc;
}

int export_towers_write(FILE *c, const model *m)
{
    const reformer *r = (const reformer *)m;
    const float *w = r->p.w;
    fprintf(c, "#define HM_NIN %d\n#define HM_NPLE %d\n#define HM_LOG %d\n#define HM_DEPTH %d\n#define HM_HID %d\n"
               "#define HM_EXP %d\n#define HM_D %d\n#define HM_NC %d\n#define HM_CH %d\n#define HM_NQ %d\n",
            r->n_in, r->n_ple, r->input_log, r->depth, r->hidden, r->expand, r->tower_dim, r->n_cfg, r->cfg_hidden,
            r->n_q);
    export_c_floats(c, "hm_zmean", r->zmean, (size_t)r->n_in);
    export_c_floats(c, "hm_zstd", r->zstd, (size_t)r->n_in);
    export_c_ints(c, "int", "hm_ple_src", r->ple_src, (size_t)r->n_ple);
    export_c_floats(c, "hm_ple_lo", r->ple_lo, (size_t)r->n_ple);
    export_c_floats(c, "hm_ple_hi", r->ple_hi, (size_t)r->n_ple);
    int rc = write_blocks(c, r);
    if (!rc) rc = export_c_floats_transposed(c, "hm_head_w", w + r->head.w, r->tower_dim, r->hidden, 0);
    export_c_floats(c, "hm_head_b", w + r->head.b, (size_t)r->tower_dim);
    export_c_floats(c, "hm_cmean", r->cfg_mean, (size_t)r->n_cfg);
    export_c_floats(c, "hm_cstd", r->cfg_std, (size_t)r->n_cfg);
    if (!rc) rc = export_c_floats_transposed(c, "hm_c1_w", w + r->cfg1.w, r->cfg_hidden, r->n_cfg, 0);
    export_c_floats(c, "hm_c1_b", w + r->cfg1.b, (size_t)r->cfg_hidden);
    if (!rc) rc = export_c_floats_transposed(c, "hm_c2_w", w + r->cfg2.w, r->tower_dim, r->cfg_hidden, 0);
    export_c_floats(c, "hm_c2_b", w + r->cfg2.b, (size_t)r->tower_dim);
    export_c_floats(c, "hm_inter_w", r->n_q ? w + r->inter.w : NULL, (size_t)r->n_q);
    fprintf(c, "static const float hm_inter_b = %#.9gf;\n", r->n_q ? (double)w[r->inter.b] : 0.0);
    export_c_floats(c, "hm_qmean", r->q_mean, (size_t)r->n_q);
    export_c_floats(c, "hm_qstd", r->q_std, (size_t)r->n_q);
    if (!rc) rc = write_known(c, m, r);
    if (rc) return rc;
    export_section(c, "export/runtime/towers.h", "hash");
    export_section(c, "export/runtime/towers.h", "scores");
    return HR_OK;
}
