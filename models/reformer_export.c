/* The reformer family as C source for an exported runtime: the same inference path as reformer_predict
 * (z-score input, Gamma-blocks with eval-mode BatchNorm folded into the first product, softmax head and
 * the applicability head), written as plain loops over static weights. */
#include <stdlib.h>
#include <string.h>

#include "models/models_internal.h"
#include "models/reformer_internal.h"

static const char *const combine_source[] = {
    /* product */
    "    {\n        float mx = s[0], sum = 0.0f;\n        for (int k = 1; k < K; k++) mx = s[k] > mx ? s[k] : mx;\n"
    "        for (int k = 0; k < K; k++) sum += expf(s[k] - mx);\n        const float lse = mx + logf(sum);\n"
    "        for (int k = 0; k < K; k++) s[k] = s[k] - lse + HM_BETA * hm_log_sigmoid(app[k]);\n    }\n",
    /* mask */
    "    {\n        float mx = s[0], sum = 0.0f;\n        for (int k = 1; k < K; k++) mx = s[k] > mx ? s[k] : mx;\n"
    "        for (int k = 0; k < K; k++) sum += expf(s[k] - mx);\n        const float lse = mx + logf(sum);\n"
    "        for (int k = 0; k < K; k++) s[k] = s[k] - lse + (app[k] < 0.0f ? -1000.0f : 0.0f);\n    }\n",
    /* head */
    "    for (int k = 0; k < K; k++) s[k] = hm_log_sigmoid(app[k]);\n",
};

/* Writes W (rows, cols) transposed, so the runtime's product is a sequence of axpy loops over
 * contiguous columns: y[i] += Wt[j][i] x[j]. Each y[i] still sums over j in order, and the inner loop
 * vectorises without reassociation. */
static int export_transposed(FILE *out, const char *name, const float *W, int rows, int cols)
{
    float *t = malloc((size_t)rows * cols * sizeof *t);
    if (!t) return hr_error(HR_ENOMEM, "out of memory exporting %s", name);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) t[(size_t)j * rows + i] = W[(size_t)i * cols + j];
    export_c_floats(out, name, t, (size_t)rows * cols);
    free(t);
    return HR_OK;
}

int reformer_model_export_c(const model *mb, FILE *out)
{
    int rc = HR_OK;
    const reformer *r = (const reformer *)mb;
    if (r->norm != NN_NORM_BATCH || !r->fold)
        return hr_error(HR_EINVAL, "only batch-norm reformers can be exported to C (this one uses layer norm)");
    const int nf = mb->n_features, K = mb->n_kernels, wide = r->hidden + r->expand;
    export_c_floats(out, "hm_zmean", r->zmean, (size_t)nf);
    export_c_floats(out, "hm_zstd", r->zstd, (size_t)nf);
    char name[64];
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const float *W12 = r->fold + r->fold_off[l];
        size_t n12 = (size_t)(g->d_out + g->d_hidden) * g->d_in, nb = (size_t)(g->d_out + g->d_hidden);
        snprintf(name, sizeof name, "hm_w12_%d", l);
        if ((rc = export_transposed(out, name, W12, g->d_out + g->d_hidden, g->d_in))) return rc;
        snprintf(name, sizeof name, "hm_b12_%d", l);
        export_c_floats(out, name, W12 + n12, nb);
        snprintf(name, sizeof name, "hm_a3_%d", l);
        if ((rc = export_transposed(out, name, W12 + n12 + nb, g->d_out, g->d_hidden))) return rc;
    }
    if ((rc = export_transposed(out, "hm_head_w", r->p.w + r->head.w, K, r->hidden))) return rc;
    export_c_floats(out, "hm_head_b", r->p.w + r->head.b, (size_t)K);
    int app = r->app_weight > 0.0f;
    if (app) {
        if ((rc = export_transposed(out, "hm_app_w", r->p.w + r->app.w, K, r->hidden))) return rc;
        export_c_floats(out, "hm_app_b", r->p.w + r->app.b, (size_t)K);
    }
    fprintf(out, "\n#define HM_BETA %#.9gf\n", (double)r->app_beta);
    /* y (rows) += W x with W stored transposed (cols, rows) */
    fputs("static void hm_gemv(int rows, int cols, const float *Wt, const float *x, float *y)\n{\n"
          "    for (int j = 0; j < cols; j++) {\n        const float *w = Wt + (size_t)j * rows;\n        const float xj = x[j];\n"
          "        for (int i = 0; i < rows; i++) y[i] += w[i] * xj;\n    }\n}\n\n",
          out);
    fputs("static float hm_log_sigmoid(float z)\n{\n    float t = -z;\n"
          "    return -((t > 0.0f ? t : 0.0f) + log1pf(expf(-fabsf(t))));\n}\n\n",
          out);
    fprintf(out, "static void hm_model_scores(const data_problem *p, const float *x, float *s)\n{\n"
                 "    enum { K = %d };\n    float in[%d], a[%d], b[%d];\n    (void)p;\n",
            K, nf, wide, wide);
    if (r->input_log)
        fprintf(out, "    for (int j = 0; j < %d; j++) {\n        float v = x[j];\n"
                     "        v = v >= 0.0f ? log2f(1.0f + v) : -log2f(1.0f - v);\n"
                     "        in[j] = (v - hm_zmean[j]) / hm_zstd[j];\n    }\n", nf);
    else
        fprintf(out, "    for (int j = 0; j < %d; j++) in[j] = (x[j] - hm_zmean[j]) / hm_zstd[j];\n", nf);
    fputs("    const float *cur = in;\n", out);
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const int din = g->d_in, dh = g->d_hidden, dout = g->d_out;
        fprintf(out,
                "    {\n        float *z = %s;\n        memcpy(z, hm_b12_%d, sizeof hm_b12_%d);\n"
                "        hm_gemv(%d, %d, hm_w12_%d, cur, z);\n"
                "        for (int j = %d; j < %d; j++) z[j] = z[j] > 0.0f ? z[j] : 0.0f;\n"
                "        hm_gemv(%d, %d, hm_a3_%d, z + %d, z);\n"
                "        for (int j = 0; j < %d; j++) z[j] = z[j] > 0.0f ? z[j] : 0.0f;\n        cur = z;\n    }\n",
                l % 2 ? "b" : "a", l, l, dout + dh, din, l, dout, dout + dh, dout, dh, l, dout, dout);
    }
    fprintf(out, "    memcpy(s, hm_head_b, sizeof hm_head_b);\n    hm_gemv(K, %d, hm_head_w, cur, s);\n", r->hidden);
    if (app) {
        fprintf(out, "    float app[K];\n    memcpy(app, hm_app_b, sizeof hm_app_b);\n    hm_gemv(K, %d, hm_app_w, cur, app);\n%s",
                r->hidden, combine_source[r->app_combine]);
    }
    fputs("}\n", out);
    return HR_OK;
}
