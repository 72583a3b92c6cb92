/* The transformer family as C source for an exported runtime: the sizes and the weights, read through the model's
 * views (models/transformer_model.c), around the inference path of export/runtime/transformer.h. Matrices are
 * written transposed (in, out), as the runtime's axpy loops read them. */
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "models/view.h"

/* The sizes the writer reads */
typedef struct tv {
    int T, d, heads, ff, K;
} tv;

static tv tv_read(const model *m, const model_views *v)
{
    tv t = {m->n_features, (int)model_view_int(v, "d"), (int)model_view_int(v, "heads"), (int)model_view_int(v, "d_ff"),
            m->n_kernels};
    return t;
}

static const float *tensor(const model_views *v, const char *name, size_t n)
{
    return model_view_tensor(v, "params", name, n);
}

static int export_weights(const tv *t, const model_views *v, FILE *out)
{
    const int T = t->T, d = t->d, ff = t->ff, K = t->K;
    const size_t Td = (size_t)T * d;
    int rc;
    export_c_floats(out, "hm_zmean", model_view_floats(v, "zscore_mean", (size_t)T), (size_t)T);
    export_c_floats(out, "hm_zstd", model_view_floats(v, "zscore_std", (size_t)T), (size_t)T);
    export_c_floats(out, "hm_value", tensor(v, "embed.value", Td), Td);
    export_c_floats(out, "hm_pos", tensor(v, "embed.position", Td), Td);
    const size_t d3 = (size_t)3 * d, dd = (size_t)d * d, dff = (size_t)d * ff;
    if ((rc = export_c_floats_transposed(out, "hm_in_wt", tensor(v, "block.self_attn.in_proj.weight", d3 * d), 3 * d, d,
                                         0)))
        return rc;
    export_c_floats(out, "hm_in_b", tensor(v, "block.self_attn.in_proj.bias", d3), d3);
    if ((rc = export_c_floats_transposed(out, "hm_out_wt", tensor(v, "block.self_attn.out_proj.weight", dd), d, d, 0)))
        return rc;
    export_c_floats(out, "hm_out_b", tensor(v, "block.self_attn.out_proj.bias", (size_t)d), (size_t)d);
    export_c_floats(out, "hm_ln1_g", tensor(v, "block.norm1.weight", (size_t)d), (size_t)d);
    export_c_floats(out, "hm_ln1_b", tensor(v, "block.norm1.bias", (size_t)d), (size_t)d);
    if ((rc = export_c_floats_transposed(out, "hm_ff1_wt", tensor(v, "block.linear1.weight", dff), ff, d, 0))) return rc;
    export_c_floats(out, "hm_ff1_b", tensor(v, "block.linear1.bias", (size_t)ff), (size_t)ff);
    if ((rc = export_c_floats_transposed(out, "hm_ff2_wt", tensor(v, "block.linear2.weight", dff), d, ff, 0))) return rc;
    export_c_floats(out, "hm_ff2_b", tensor(v, "block.linear2.bias", (size_t)d), (size_t)d);
    export_c_floats(out, "hm_ln2_g", tensor(v, "block.norm2.weight", (size_t)d), (size_t)d);
    export_c_floats(out, "hm_ln2_b", tensor(v, "block.norm2.bias", (size_t)d), (size_t)d);
    if ((rc = export_c_floats_transposed(out, "hm_head_wt", tensor(v, "head.weight", (size_t)K * d), K, d, 0))) return rc;
    export_c_floats(out, "hm_head_b", tensor(v, "head.bias", (size_t)K), (size_t)K);
    return HR_OK;
}

int export_transformer_check(const model *m, const model_views *v, const char *name)
{
    const size_t T = (size_t)m->n_features;
    int rc = export_check_params(name, model_view_params(v, "params"));
    if (!rc) rc = export_check_finite(name, "input mean", model_view_floats(v, "zscore_mean", T), T);
    if (!rc) rc = export_check_finite(name, "input std", model_view_floats(v, "zscore_std", T), T);
    return rc;
}

int export_transformer_write(const model *m, const model_views *v, FILE *out)
{
    const tv t = tv_read(m, v);
    const int T = t.T, d = t.d;
    /* the runtime's tokens are data_portable_features' values, one per feature */
    if (T != DATA_N_FEATURES)
        return hr_error(HR_EINVAL, "transformer: %d features, the exported runtime computes %d", T, DATA_N_FEATURES);
    int rc = export_weights(&t, v, out);
    if (rc) return rc;
    const int norm_first = (int)model_view_int(v, "norm_first");
    /* the largest live set: e, a, n1 (T, d) and, inside hm_mhsa, qkv (T, 3d), qt and ctxt (d, T), pt (T, T) */
    const long stack_kb = ((long)T * d * 8 + (long)T * T + 2L * T) * (long)sizeof(float) / 1024 + 1;
    fprintf(out,
            "\n/* one transformer block (%s-norm), %d tokens of width %d, %d heads, FFN %d (ReLU), %d kernels;\n"
            " * about %ld KiB of stack per call */\n"
            "#define HM_T %d\n#define HM_D %d\n#define HM_HEADS %d\n#define HM_DH %d\n#define HM_FF %d\n#define HM_K %d\n"
            "#define HM_NORM_FIRST %d\n#define HM_LN_EPS %#.9gf\n\n",
            norm_first ? "pre" : "post", T, d, t.heads, t.ff, t.K, stack_kb, T, d, t.heads, d / t.heads, t.ff, t.K,
            norm_first, model_view_real(v, "ln_eps"));
    static const char runtime[] = "export/runtime/transformer.h";
    export_section(out, runtime, "layernorm");
    export_section(out, runtime, "softmax");
    export_section(out, runtime, "model");
    return HR_OK;
}
