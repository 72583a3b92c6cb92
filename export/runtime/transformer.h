/* The transformer runtime's fixed parts: LayerNorm and the attention softmax over keys.
 *
 * Copied into exported transformer runtimes by section (export/transformer.c writes the products, whose
 * loops it unrolls to the model's sizes, and these constants: HM_T tokens, HM_D width, HM_LN_EPS) and
 * compiled as it is by tests/test_export_runtime.c, which checks it against nn/'s LayerNorm and softmax.
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
