/* The transformer family as C source for an exported runtime: the same inference path as tfm_predict
 * (z-score input, one token per feature e_j = z_j w_j + p_j, nn_transformer's block post- or pre-norm,
 * mean over tokens, linear head), written as plain loops over static weights; LayerNorm and the attention
 * softmax come from export/runtime/transformer.h.
 *
 * Agreement with heurist: nn sums its products with OpenBLAS, the runtime with its own loops, so the
 * pre-activations may differ in the last float bits; everything between the sums (the attention
 * softmax, LayerNorm with its eps, ReLU, residuals, the mean) is the same float expression in the same
 * order. Speed at plain `cc -O2`: sizes are enum constants, so every loop has a compile-time trip count
 * (GCC vectorises those at -O2), and every product is a sequence of axpy loops over contiguous rows,
 * y[o] = (((y[o] + r0[o] a0) + r1[o] a1) + r2[o] a2) + r3[o] a3, which vectorise without reassociating
 * a sum. Weights are written transposed (in, out) for that; attention scores are kept transposed,
 * (key, query), so the softmax's max and sum over keys run elementwise across queries. */
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "models/models_internal.h"
#include "models/transformer_internal.h"

/* Emits y[0, len) += sum_{i < count} a_i r_i with rows r_i = rbase + i rstride and scalars
 * a_i = sbase[i sstride], summed in order of i, four rows per pass over y (one load and one store of y
 * per four products). len, strides and bases are C expressions; count_name spells count. */
static void emit_axpys(FILE *out, const char *ind, const char *len, int count, const char *count_name, const char *y,
                       const char *rbase, const char *rstride, const char *sbase, const char *sstride)
{
    const int four = count / 4 * 4;
    if (four) {
        if (four == count) fprintf(out, "%sfor (int i = 0; i < %s; i += 4) {\n", ind, count_name);
        else fprintf(out, "%sfor (int i = 0; i < %d; i += 4) {\n", ind, four);
        fprintf(out, "%s    const float *r0 = %s + i * (%s), *r1 = r0 + (%s), *r2 = r1 + (%s), *r3 = r2 + (%s);\n", ind, rbase,
                rstride, rstride, rstride, rstride);
        fprintf(out, "%s    const float a0 = %s[i * (%s)], a1 = %s[(i + 1) * (%s)], a2 = %s[(i + 2) * (%s)], "
                     "a3 = %s[(i + 3) * (%s)];\n",
                ind, sbase, sstride, sbase, sstride, sbase, sstride, sbase, sstride);
        fprintf(out, "%s    for (int o = 0; o < %s; o++) %s[o] = (((%s[o] + r0[o] * a0) + r1[o] * a1) + r2[o] * a2) + r3[o] * a3;\n",
                ind, len, y, y);
        fprintf(out, "%s}\n", ind);
    }
    if (four < count) {
        fprintf(out, "%sfor (int i = %d; i < %s; i++) {\n", ind, four, count_name);
        fprintf(out, "%s    const float *r = %s + i * (%s), a = %s[i * (%s)];\n", ind, rbase, rstride, sbase, sstride);
        fprintf(out, "%s    for (int o = 0; o < %s; o++) %s[o] += r[o] * a;\n%s}\n", ind, len, y, ind);
    }
}

/* Emits y (n, o) = x (n, in) W^T + b, W written transposed as wt (in, o), row t of x at x + t xs_tok
 * with stride xs_in between its inputs: y = b first (nn_linear_forward's order), then the products.
 * n NULL: one row. */
static void emit_linear(FILE *out, const char *ind, const char *n, const char *o, int in, const char *in_name,
                        const char *wt, const char *b, const char *x, const char *xs_tok, const char *xs_in, const char *y)
{
    char ind2[32];
    snprintf(ind2, sizeof ind2, "%s    ", ind);
    if (n) {
        fprintf(out, "%sfor (int t = 0; t < %s; t++) {\n", ind, n);
        fprintf(out, "%s    float *yr = %s + t * (%s);\n%s    const float *xr = %s + t * (%s);\n", ind, y, o, ind, x, xs_tok);
    } else {
        fprintf(out, "%s{\n%s    float *yr = %s;\n%s    const float *xr = %s;\n", ind, ind, y, ind, x);
    }
    fprintf(out, "%s    for (int o = 0; o < %s; o++) yr[o] = %s[o];\n", ind, o, b);
    emit_axpys(out, ind2, o, in, in_name, "yr", wt, o, "xr", xs_in);
    fprintf(out, "%s}\n", ind);
}

static int export_weights(const tfm *m, FILE *out)
{
    const int T = m->base.n_features, d = m->d, ff = m->d_ff, K = m->base.n_kernels;
    const nn_transformer *b = &m->block;
    const float *w = m->p.w;
    int rc;
    export_c_floats(out, "hm_zmean", m->zmean, (size_t)T);
    export_c_floats(out, "hm_zstd", m->zstd, (size_t)T);
    export_c_floats(out, "hm_value", w + m->value, (size_t)T * d);
    export_c_floats(out, "hm_pos", w + m->pos, (size_t)T * d);
    if ((rc = export_c_floats_transposed(out, "hm_in_wt", w + b->attn.in_proj.w, 3 * d, d, 0))) return rc;
    export_c_floats(out, "hm_in_b", w + b->attn.in_proj.b, (size_t)3 * d);
    if ((rc = export_c_floats_transposed(out, "hm_out_wt", w + b->attn.out_proj.w, d, d, 0))) return rc;
    export_c_floats(out, "hm_out_b", w + b->attn.out_proj.b, (size_t)d);
    export_c_floats(out, "hm_ln1_g", w + b->ln1.gamma, (size_t)d);
    export_c_floats(out, "hm_ln1_b", w + b->ln1.beta, (size_t)d);
    if ((rc = export_c_floats_transposed(out, "hm_ff1_wt", w + b->ffn.l1.w, ff, d, 0))) return rc;
    export_c_floats(out, "hm_ff1_b", w + b->ffn.l1.b, (size_t)ff);
    if ((rc = export_c_floats_transposed(out, "hm_ff2_wt", w + b->ffn.l2.w, d, ff, 0))) return rc;
    export_c_floats(out, "hm_ff2_b", w + b->ffn.l2.b, (size_t)d);
    export_c_floats(out, "hm_ln2_g", w + b->ln2.gamma, (size_t)d);
    export_c_floats(out, "hm_ln2_b", w + b->ln2.beta, (size_t)d);
    if ((rc = export_c_floats_transposed(out, "hm_head_wt", w + m->head.w, K, d, 0))) return rc;
    export_c_floats(out, "hm_head_b", w + m->head.b, (size_t)K);
    return HR_OK;
}

/* hm_mhsa: in-projection, per head the transposed scores pt (j, i) = q_i . k_j / sqrt(dh) built from
 * the transposed queries qt (d, T), their softmax, ctxt (d, T) = V^T P^T, and the out-projection. */
static void emit_mhsa(FILE *out, const tfm *m)
{
    const int T = m->base.n_features, d = m->d, dh = m->d / m->heads;
    fputs("/* y (HM_T, HM_D) = MHSA(x): [Q K V] = x Win^T + bin; per head P = softmax(Q K^T / sqrt(HM_DH));\n"
          " * y = concat_h(P V) Wout^T + bout */\n"
          "static void hm_mhsa(const float *x, float *y)\n{\n"
          "    float qkv[HM_T * 3 * HM_D], qt[HM_D * HM_T], pt[HM_T * HM_T], ctxt[HM_D * HM_T];\n",
          out);
    emit_linear(out, "    ", "HM_T", "3 * HM_D", d, "HM_D", "hm_in_wt", "hm_in_b", "x", "HM_D", "1", "qkv");
    fputs("    for (int i = 0; i < HM_T; i++)\n"
          "        for (int c = 0; c < HM_D; c++) qt[c * HM_T + i] = qkv[i * 3 * HM_D + c];\n"
          "    const float scale = 1.0f / sqrtf((float)HM_DH);\n"
          "    for (int hd = 0; hd < HM_HEADS; hd++) {\n"
          "        /* pt[j][i] = scale (q_i . k_j) */\n"
          "        for (int j = 0; j < HM_T; j++) {\n"
          "            float *row = pt + j * HM_T;\n"
          "            const float *k = qkv + j * 3 * HM_D + HM_D + hd * HM_DH;\n"
          "            for (int i = 0; i < HM_T; i++) row[i] = 0.0f;\n",
          out);
    emit_axpys(out, "            ", "HM_T", dh, "HM_DH", "row", "qt + hd * HM_DH * HM_T", "HM_T", "k", "1");
    fputs("            for (int i = 0; i < HM_T; i++) row[i] *= scale;\n        }\n", out);
    fputs("        hm_softmax_keys(pt);\n", out);
    fputs("        /* ctxt[c][i] = sum_j p_ij v_j[c] for the head's columns c */\n"
          "        for (int c = hd * HM_DH; c < (hd + 1) * HM_DH; c++) {\n"
          "            float *row = ctxt + c * HM_T;\n"
          "            for (int i = 0; i < HM_T; i++) row[i] = 0.0f;\n",
          out);
    emit_axpys(out, "            ", "HM_T", T, "HM_T", "row", "pt", "HM_T", "(qkv + 2 * HM_D + c)", "3 * HM_D");
    fputs("        }\n    }\n", out);
    emit_linear(out, "    ", "HM_T", "HM_D", d, "HM_D", "hm_out_wt", "hm_out_b", "ctxt", "1", "HM_T", "y");
    fputs("}\n\n", out);
}

int export_transformer_check(const model *mb, const char *name)
{
    const tfm *m = (const tfm *)mb;
    int rc = export_check_params(name, &m->p);
    if (!rc) rc = export_check_finite(name, "input mean", m->zmean, (size_t)mb->n_features);
    if (!rc) rc = export_check_finite(name, "input std", m->zstd, (size_t)mb->n_features);
    return rc;
}

int export_transformer_write(const model *mb, FILE *out)
{
    const tfm *m = (const tfm *)mb;
    const int T = mb->n_features, d = m->d;
    /* the runtime's tokens are data_portable_features' values, one per feature */
    if (T != DATA_N_FEATURES)
        return hr_error(HR_EINVAL, "transformer: %d features, the exported runtime computes %d", T, DATA_N_FEATURES);
    HR_ASSERT(m->block.ln1.eps == m->block.ln2.eps);
    int rc = export_weights(m, out);
    if (rc) return rc;
    /* the largest live set: e, a, n1 (T, d) and, inside hm_mhsa, qkv (T, 3d), qt and ctxt (d, T), pt (T, T) */
    const long stack_kb = ((long)T * d * 8 + (long)T * T + 2L * T) * (long)sizeof(float) / 1024 + 1;
    fprintf(out,
            "\n/* one transformer block (%s-norm), %d tokens of width %d, %d heads, FFN %d (ReLU), %d kernels;\n"
            " * about %ld KiB of stack per call */\n"
            "enum { HM_T = %d, HM_D = %d, HM_HEADS = %d, HM_DH = %d, HM_FF = %d, HM_K = %d };\n"
            "#define HM_LN_EPS %#.9gf\n\n",
            m->norm_first ? "pre" : "post", T, d, m->heads, m->d_ff, mb->n_kernels, stack_kb, T, d, m->heads,
            d / m->heads, m->d_ff, mb->n_kernels, (double)m->block.ln1.eps);
    export_section(out, "export/runtime/transformer.h", "layernorm");
    export_section(out, "export/runtime/transformer.h", "softmax");
    emit_mhsa(out, m);

    fputs("/* y (HM_T, HM_D) = W2 ReLU(W1 x + b1) + b2, token by token */\n"
          "static void hm_ffn(const float *x, float *y)\n{\n    float a[HM_FF];\n"
          "    for (int tok = 0; tok < HM_T; tok++) {\n        const float *xt = x + tok * HM_D;\n"
          "        float *yt = y + tok * HM_D;\n",
          out);
    emit_linear(out, "        ", NULL, "HM_FF", d, "HM_D", "hm_ff1_wt", "hm_ff1_b", "xt", NULL, "1", "a");
    fputs("        for (int o = 0; o < HM_FF; o++) a[o] = a[o] > 0.0f ? a[o] : 0.0f;\n", out);
    emit_linear(out, "        ", NULL, "HM_D", m->d_ff, "HM_FF", "hm_ff2_wt", "hm_ff2_b", "a", NULL, "1", "yt");
    fputs("    }\n}\n\n", out);

    fputs("static void hm_model_scores(const data_problem *p, const float *x, float *s)\n{\n"
          "    float e[HM_T * HM_D], a[HM_T * HM_D], n1[HM_T * HM_D], pooled[HM_D];\n    (void)p;\n"
          "    /* e_j = z_j w_j + p_j, z_j = (x_j - mean_j) / std_j */\n"
          "    for (int j = 0; j < HM_T; j++) {\n        const float z = (x[j] - hm_zmean[j]) / hm_zstd[j];\n"
          "        for (int k = 0; k < HM_D; k++) e[j * HM_D + k] = z * hm_value[j * HM_D + k] + hm_pos[j * HM_D + k];\n"
          "    }\n",
          out);
    if (!m->norm_first)
        fputs("    hm_mhsa(e, a);\n"
              "    for (int i = 0; i < HM_T * HM_D; i++) a[i] += e[i];          /* s1 = e + MHSA(e) */\n"
              "    hm_layernorm(a, hm_ln1_g, hm_ln1_b, n1);                    /* n1 = LN1(s1) */\n"
              "    hm_ffn(n1, a);\n"
              "    for (int i = 0; i < HM_T * HM_D; i++) a[i] += n1[i];         /* s2 = n1 + FFN(n1) */\n"
              "    hm_layernorm(a, hm_ln2_g, hm_ln2_b, a);                     /* h = LN2(s2) */\n",
              out);
    else
        fputs("    hm_layernorm(e, hm_ln1_g, hm_ln1_b, n1);                    /* n1 = LN1(e) */\n"
              "    hm_mhsa(n1, a);\n"
              "    for (int i = 0; i < HM_T * HM_D; i++) a[i] += e[i];          /* s1 = e + MHSA(n1) */\n"
              "    hm_layernorm(a, hm_ln2_g, hm_ln2_b, n1);                    /* n2 = LN2(s1) */\n"
              "    hm_ffn(n1, e);\n"
              "    for (int i = 0; i < HM_T * HM_D; i++) a[i] += e[i];          /* h = s1 + FFN(n2) */\n",
              out);
    fputs("    /* mean over the tokens, then the head */\n"
          "    for (int k = 0; k < HM_D; k++) pooled[k] = 0.0f;\n"
          "    for (int j = 0; j < HM_T; j++)\n        for (int k = 0; k < HM_D; k++) pooled[k] += a[j * HM_D + k];\n"
          "    for (int k = 0; k < HM_D; k++) pooled[k] /= (float)HM_T;\n",
          out);
    emit_linear(out, "    ", NULL, "HM_K", d, "HM_D", "hm_head_wt", "hm_head_b", "pooled", NULL, "1", "s");
    fputs("}\n", out);
    return HR_OK;
}
