/* The transformer runtime: the inference path of models/transformer_model.c (z-score input, one token per
 * feature e_j = z_j w_j + p_j, nn_transformer's block post- or pre-norm, mean over tokens, linear head) as plain
 * loops over static weights.
 *
 * Copied into exported transformer runtimes by section (export/transformer.c writes before them the sizes as
 * macros, HM_T tokens, HM_D width, HM_HEADS heads of HM_DH, HM_FF feed-forward width, HM_K kernels, HM_NORM_FIRST,
 * HM_LN_EPS, and the weights hm_zmean, hm_zstd, hm_value, hm_pos, hm_in_wt, hm_in_b, hm_out_wt, hm_out_b, hm_ln1_g,
 * hm_ln1_b, hm_ff1_wt, hm_ff1_b, hm_ff2_wt, hm_ff2_b, hm_ln2_g, hm_ln2_b, hm_head_wt, hm_head_b) and compiled as it
 * is by tests/test_export_runtime.c, which checks LayerNorm and the softmax against nn/ (the model's sections
 * need the weights: tests/test_export_c.c checks whole runtimes against the library).
 *
 * Agreement with heurist: nn sums its products with OpenBLAS, the runtime with its own loops, so the
 * pre-activations may differ in the last float bits; everything between the sums (the attention softmax,
 * LayerNorm with its eps, ReLU, residuals, the mean) is the same float expression in the same order. Speed at
 * plain `cc -O2`: the sizes are constants, so every loop has a compile-time trip count once inlined (GCC
 * vectorises those at -O2), and every product is a sequence of axpy loops over contiguous rows,
 * y[o] = (((y[o] + r0[o] a0) + r1[o] a1) + r2[o] a2) + r3[o] a3, which vectorise without reassociating a sum.
 * Weights are stored transposed (in, out) for that; attention scores are kept transposed, (key, query), so the
 * softmax's max and sum over keys run elementwise across queries.
 */
#include <math.h>

/* @section layernorm */
/* y (HM_T, HM_D) = g (x - mean) / sqrt(var + eps) + b per token; y may be x */
static void hm_layernorm(const float *x, const float *g, const float *b, float *y)
{
    for (int t = 0; t < HM_T; t++) {
        const float *xr = x + t * HM_D;
        float *yr = y + t * HM_D;
        float mu = 0.0f;
        for (int j = 0; j < HM_D; j++) mu += xr[j];
        mu /= (float)HM_D;
        float var = 0.0f;
        for (int j = 0; j < HM_D; j++) var += (xr[j] - mu) * (xr[j] - mu);
        const float rs = 1.0f / sqrtf(var / (float)HM_D + HM_LN_EPS);
        for (int j = 0; j < HM_D; j++) yr[j] = g[j] * (xr[j] - mu) * rs + b[j];
    }
}

/* @section softmax */
/* softmax_rows_inplace of nn/attention.c over the keys j of pt (HM_T, HM_T) = (j, i), one query i per column,
 * so that the max and the sum run elementwise across queries */
static void hm_softmax_keys(float *pt)
{
    float mx[HM_T], sum[HM_T];
    for (int i = 0; i < HM_T; i++) mx[i] = pt[i];
    for (int j = 1; j < HM_T; j++)
        for (int i = 0; i < HM_T; i++) mx[i] = pt[j * HM_T + i] > mx[i] ? pt[j * HM_T + i] : mx[i];
    for (int j = 0; j < HM_T * HM_T; j++) pt[j] = expf(pt[j] - mx[j % HM_T]);
    for (int i = 0; i < HM_T; i++) sum[i] = 0.0f;
    for (int j = 0; j < HM_T; j++)
        for (int i = 0; i < HM_T; i++) sum[i] += pt[j * HM_T + i];
    for (int i = 0; i < HM_T; i++) sum[i] = 1.0f / sum[i];
    for (int j = 0; j < HM_T; j++)
        for (int i = 0; i < HM_T; i++) pt[j * HM_T + i] *= sum[i];
}

/* @section model */
#ifdef HM_HEADS
/* y[0, len) += sum_{i < count} a[i as] r_i, rows r_i = r + i rs, summed in order of i, four rows per pass over y
 * (one load and one store of y per four products) */
static inline void hm_axpys(float *restrict y, int len, int count, const float *r, int rs, const float *a, int as)
{
    const int four = count / 4 * 4; /* a constant where count is: the two loops' bounds are known apart */
    for (int i = 0; i < four; i += 4) {
        const float *r0 = r + i * rs, *r1 = r0 + rs, *r2 = r1 + rs, *r3 = r2 + rs;
        const float a0 = a[i * as], a1 = a[(i + 1) * as], a2 = a[(i + 2) * as], a3 = a[(i + 3) * as];
        for (int o = 0; o < len; o++) y[o] = (((y[o] + r0[o] * a0) + r1[o] * a1) + r2[o] * a2) + r3[o] * a3;
    }
    for (int i = four; i < count; i++) {
        const float *ri = r + i * rs, ai = a[i * as];
        for (int o = 0; o < len; o++) y[o] += ri[o] * ai;
    }
}

/* y (n, out) = x (n, in) W^T + b, W stored transposed as wt (in, out), row t of x at x + t xs_tok with stride
 * xs_in between its inputs: y = b first (nn_linear_forward's order), then the products */
static inline void hm_linear(int n, int out, int in, const float *wt, const float *b, const float *x, int xs_tok,
                             int xs_in, float *y)
{
    for (int t = 0; t < n; t++) {
        float *yr = y + t * out;
        const float *xr = x + t * xs_tok;
        for (int o = 0; o < out; o++) yr[o] = b[o];
        hm_axpys(yr, out, in, wt, out, xr, xs_in);
    }
}

/* y (HM_T, HM_D) = MHSA(x): [Q K V] = x Win^T + bin; per head P = softmax(Q K^T / sqrt(HM_DH));
 * y = concat_h(P V) Wout^T + bout. Per head the transposed scores pt (j, i) = q_i . k_j / sqrt(dh) come from the
 * transposed queries qt (d, T), and ctxt (d, T) = V^T P^T. */
static void hm_mhsa(const float *x, float *y)
{
    float qkv[HM_T * 3 * HM_D], qt[HM_D * HM_T], pt[HM_T * HM_T], ctxt[HM_D * HM_T];
    hm_linear(HM_T, 3 * HM_D, HM_D, hm_in_wt, hm_in_b, x, HM_D, 1, qkv);
    for (int i = 0; i < HM_T; i++)
        for (int c = 0; c < HM_D; c++) qt[c * HM_T + i] = qkv[i * 3 * HM_D + c];
    const float scale = 1.0f / sqrtf((float)HM_DH);
    for (int hd = 0; hd < HM_HEADS; hd++) {
        /* pt[j][i] = scale (q_i . k_j) */
        for (int j = 0; j < HM_T; j++) {
            float *row = pt + j * HM_T;
            const float *k = qkv + j * 3 * HM_D + HM_D + hd * HM_DH;
            for (int i = 0; i < HM_T; i++) row[i] = 0.0f;
            hm_axpys(row, HM_T, HM_DH, qt + hd * HM_DH * HM_T, HM_T, k, 1);
            for (int i = 0; i < HM_T; i++) row[i] *= scale;
        }
        hm_softmax_keys(pt);
        /* ctxt[c][i] = sum_j p_ij v_j[c] for the head's columns c */
        for (int c = hd * HM_DH; c < (hd + 1) * HM_DH; c++) {
            float *row = ctxt + c * HM_T;
            for (int i = 0; i < HM_T; i++) row[i] = 0.0f;
            hm_axpys(row, HM_T, HM_T, pt, HM_T, qkv + 2 * HM_D + c, 3 * HM_D);
        }
    }
    hm_linear(HM_T, HM_D, HM_D, hm_out_wt, hm_out_b, ctxt, 1, HM_T, y);
}

/* y (HM_T, HM_D) = W2 ReLU(W1 x + b1) + b2, token by token */
static void hm_ffn(const float *x, float *y)
{
    float a[HM_FF];
    for (int tok = 0; tok < HM_T; tok++) {
        const float *xt = x + tok * HM_D;
        float *yt = y + tok * HM_D;
        hm_linear(1, HM_FF, HM_D, hm_ff1_wt, hm_ff1_b, xt, 0, 1, a);
        for (int o = 0; o < HM_FF; o++) a[o] = a[o] > 0.0f ? a[o] : 0.0f;
        hm_linear(1, HM_D, HM_FF, hm_ff2_wt, hm_ff2_b, a, 0, 1, yt);
    }
}

/* s (HM_K): the kernels' scores of the problem with features x */
static void hm_model_scores(const data_problem *p, const float *x, float *s)
{
    float e[HM_T * HM_D], a[HM_T * HM_D], n1[HM_T * HM_D], pooled[HM_D];
    (void)p;
    /* e_j = z_j w_j + p_j, z_j = (x_j - mean_j) / std_j */
    for (int j = 0; j < HM_T; j++) {
        const float z = (x[j] - hm_zmean[j]) / hm_zstd[j];
        for (int k = 0; k < HM_D; k++) e[j * HM_D + k] = z * hm_value[j * HM_D + k] + hm_pos[j * HM_D + k];
    }
#if HM_NORM_FIRST
    hm_layernorm(e, hm_ln1_g, hm_ln1_b, n1);                    /* n1 = LN1(e) */
    hm_mhsa(n1, a);
    for (int i = 0; i < HM_T * HM_D; i++) a[i] += e[i];          /* s1 = e + MHSA(n1) */
    hm_layernorm(a, hm_ln2_g, hm_ln2_b, n1);                    /* n2 = LN2(s1) */
    hm_ffn(n1, e);
    for (int i = 0; i < HM_T * HM_D; i++) a[i] += e[i];          /* h = s1 + FFN(n2) */
#else
    hm_mhsa(e, a);
    for (int i = 0; i < HM_T * HM_D; i++) a[i] += e[i];          /* s1 = e + MHSA(e) */
    hm_layernorm(a, hm_ln1_g, hm_ln1_b, n1);                    /* n1 = LN1(s1) */
    hm_ffn(n1, a);
    for (int i = 0; i < HM_T * HM_D; i++) a[i] += n1[i];         /* s2 = n1 + FFN(n1) */
    hm_layernorm(a, hm_ln2_g, hm_ln2_b, a);                     /* h = LN2(s2) */
#endif
    /* mean over the tokens, then the head */
    for (int k = 0; k < HM_D; k++) pooled[k] = 0.0f;
    for (int j = 0; j < HM_T; j++)
        for (int k = 0; k < HM_D; k++) pooled[k] += a[j * HM_D + k];
    for (int k = 0; k < HM_D; k++) pooled[k] /= (float)HM_T;
    hm_linear(1, HM_K, HM_D, hm_head_wt, hm_head_b, pooled, 0, 1, s);
}
#endif
