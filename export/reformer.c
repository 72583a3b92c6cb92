/* The reformer family as C source for an exported runtime: the same inference path as reformer_predict
 * (z-score input, Gamma-blocks with eval-mode BatchNorm folded into the first product, softmax head and
 * the applicability head), written as loops over static weights; the kernels are export/runtime/reformer.h.
 *
 * Speed: the products (~87k multiply-adds, 350 KB of weights when dense) bound the time, mostly by the
 * bytes read. Every matrix is stored transposed, column j of W contiguous, its rows padded to a multiple
 * of QUANTUM; y = b + W x runs over the nonzero inputs only (about half of a ReLU's outputs and of the
 * centred features are zero, and their columns are not read), a block of up to 12 vectors of rows at a
 * time held in registers. The choice alone skips the log-softmax and most log-sigmoids (hm_choose). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "models/models_internal.h"
#include "models/reformer_internal.h"

enum { QUANTUM = 32 }; /* rows of every exported matrix are padded to a multiple of this (HM_Q) */

_Static_assert(QUANTUM == 32, "hm_relu_nonzero packs HM_Q signs into a uint32_t");

static int row_pad(int n)
{
    return (n + QUANTUM - 1) / QUANTUM * QUANTUM;
}

/* Copies src (rows, cols) row-major into dst at row `at` */
static void put_rows(float *dst, int at, const float *src, int rows, int cols)
{
    memcpy(dst + (size_t)at * cols, src, (size_t)rows * cols * sizeof *dst);
}

/* The first product's inputs are centred at a round number near the mean where there is one, c_j =
 * round(zmean_j) if |c_j - zmean_j| <= zstd_j, instead of at the mean itself: a feature at its usual value
 * (a one-hot code or flag at 0, a stride or depth at 1) then is a zero input, which the runtime skips.
 * The bias absorbs the shift, b += W12 (c - zmean) / zstd (in double); centring farther from the mean
 * would lose accuracy to cancellation. */
static float input_centre(const reformer *r, int j)
{
    const float c = roundf(r->zmean[j]);
    return fabsf(c - r->zmean[j]) <= r->zstd[j] ? c : r->zmean[j];
}

/* b12 (padded: the output part at 0, the hidden part at po) of block 0, with W12 ((dout + dh), n_in) */
static void shift_bias(const reformer *r, float *b12, int po, int dout, const float *W12, int dh)
{
    const int nf = r->n_in;
    for (int i = 0; i < dout + dh; i++) {
        double acc = i < dout ? b12[i] : b12[po + i - dout];
        for (int j = 0; j < nf; j++)
            acc += (double)W12[(size_t)i * nf + j] * ((double)input_centre(r, j) - r->zmean[j]) / r->zstd[j];
        if (i < dout) b12[i] = (float)acc;
        else b12[po + i - dout] = (float)acc;
    }
}

/* The weights: per block W12 and b12 with the output part and the hidden part each padded to whole
 * quanta, A3 padded likewise; the two heads stacked into one matrix [head; app]. */
static int export_weights(const reformer *r, FILE *out)
{
    const int K = r->base.n_kernels, app = r->app_weight > 0.0f, nh = app ? 2 * K : K;
    size_t most = (size_t)row_pad(nh) * r->hidden;
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        size_t n = (size_t)(row_pad(g->d_out) + row_pad(g->d_hidden)) * g->d_in;
        most = n > most ? n : most;
    }
    float *M = malloc(most * sizeof *M);
    if (!M) return hr_error(HR_ENOMEM, "out of memory exporting the reformer");
    int rc = HR_OK;
    char name[64];
    for (int l = 0; !rc && l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const int din = g->d_in, dh = g->d_hidden, dout = g->d_out, po = row_pad(dout), ph = row_pad(dh);
        const float *W12 = r->fold + r->fold_off[l], *b12 = W12 + (size_t)(dout + dh) * din;
        const float *A3 = b12 + dout + dh;
        memset(M, 0, (size_t)(po + ph) * din * sizeof *M);
        put_rows(M, 0, W12, dout, din);
        put_rows(M, po, W12 + (size_t)dout * din, dh, din);
        snprintf(name, sizeof name, "hm_w12_%d", l);
        if ((rc = export_c_floats_transposed(out, name, M, po + ph, din, 64))) break;
        memset(M, 0, (size_t)(po + ph) * sizeof *M);
        memcpy(M, b12, (size_t)dout * sizeof *M);
        memcpy(M + po, b12 + dout, (size_t)dh * sizeof *M);
        if (l == 0) shift_bias(r, M, po, dout, W12, dh);
        snprintf(name, sizeof name, "hm_b12_%d", l);
        export_c_floats_aligned(out, name, M, (size_t)(po + ph), 64);
        memset(M, 0, (size_t)po * dh * sizeof *M);
        put_rows(M, 0, A3, dout, dh);
        snprintf(name, sizeof name, "hm_a3_%d", l);
        rc = export_c_floats_transposed(out, name, M, po, dh, 64);
    }
    const int hp = row_pad(nh);
    if (!rc) {
        memset(M, 0, (size_t)hp * r->hidden * sizeof *M);
        put_rows(M, 0, r->p.w + r->head.w, K, r->hidden);
        if (app) put_rows(M, K, r->p.w + r->app.w, K, r->hidden);
        rc = export_c_floats_transposed(out, "hm_head_w", M, hp, r->hidden, 64);
    }
    if (!rc) {
        memset(M, 0, (size_t)hp * sizeof *M);
        memcpy(M, r->p.w + r->head.b, (size_t)K * sizeof *M);
        if (app) memcpy(M + K, r->p.w + r->app.b, (size_t)K * sizeof *M);
        export_c_floats_aligned(out, "hm_head_b", M, (size_t)hp, 64);
    }
    free(M);
    return rc;
}

/* hm_model_heads: features -> h = [z (K) | a (K)], the two heads' logits (rows padded to HM_Q) */
static void export_forward(const reformer *r, FILE *out)
{
    const int nf = r->base.n_features, ni = r->n_in, K = r->base.n_kernels, app = r->app_weight > 0.0f;
    int zmax = 0, ymax = 0, vmax = ni;
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const int po = row_pad(g->d_out), ph = row_pad(g->d_hidden);
        zmax = po + ph > zmax ? po + ph : zmax;
        ymax = po > ymax ? po : ymax;
        vmax = ph > vmax ? ph : vmax;
        vmax = po > vmax ? po : vmax;
    }
    fprintf(out, "#define HM_HEADS %d /* rows of h: z (HM_K), a (HM_K) when the model has it, padding */\n\n",
            row_pad(app ? 2 * K : K));
    fprintf(out, "static void hm_model_heads(const float *x, float *h)\n{\n"
                 "    _Alignas(64) float in[%d], z[%d], y[%d];\n"
                 "    int nz[%d], n = 0; /* the next product's nonzero inputs */\n",
            ni, zmax, ymax, vmax);
    if (r->n_ple) {
        fprintf(out, "    for (int j = 0; j < %d; j++) in[j] = hm_slog(x[j]);\n", nf);
        fprintf(out, "    for (int c = 0; c < %d; c++) { /* the piecewise-linear encoding of the slog features */\n"
                     "        const float v = hm_ple(in[hm_ple_feature[c]], hm_ple_lo[c], hm_ple_hi[c]);\n"
                     "        in[%d + c] = (v - hm_centre[%d + c]) / hm_zstd[%d + c];\n    }\n",
                r->n_ple, nf, nf, nf);
        fprintf(out, "    for (int j = 0; j < %d; j++) in[j] = (in[j] - hm_centre[j]) / hm_zstd[j];\n", nf);
    } else if (r->input_log) {
        fprintf(out, "    for (int j = 0; j < %d; j++) in[j] = (hm_slog(x[j]) - hm_centre[j]) / hm_zstd[j];\n", nf);
    } else {
        fprintf(out, "    for (int j = 0; j < %d; j++) in[j] = (x[j] - hm_centre[j]) / hm_zstd[j];\n", nf);
    }
    fprintf(out, "    for (int j = 0; j < %d; j++) {\n        nz[n] = j;\n        n += in[j] != 0.0f;\n    }\n", ni);
    for (int l = 0; l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const int po = row_pad(g->d_out), ph = row_pad(g->d_hidden);
        fprintf(out,
                "    /* block %d: z = [W1; A2'] x + b (%d + %d), y = relu(z_out + A3 relu(z_hidden)) (%d) */\n"
                "    hm_matvec(%d, n, nz, %s, hm_w12_%d, hm_b12_%d, z);\n"
                "    n = hm_relu_nonzero(%d, z + %d, nz);\n"
                "    hm_matvec(%d, n, nz, z + %d, hm_a3_%d, z, y);\n"
                "    n = hm_relu_nonzero(%d, y, nz);\n",
                l, po, ph, po, po + ph, l ? "y" : "in", l, l, ph, po, po, po, l, po);
    }
    fprintf(out, "    hm_matvec(%d, n, nz, y, hm_head_w, hm_head_b, h);\n}\n\n", row_pad(app ? 2 * K : K));
}

int export_reformer_check(const model *mb, const char *name)
{
    const reformer *r = (const reformer *)mb;
    if (r->mode != &reformer_head_classes)
        return hr_error(HR_EINVAL, "%s: a %s-mode reformer cannot be exported to C yet", name, r->mode->name);
    int rc = export_check_params(name, &r->p);
    if (!rc) rc = export_check_finite(name, "input mean", r->zmean, (size_t)r->n_in);
    if (!rc) rc = export_check_finite(name, "input std", r->zstd, (size_t)r->n_in);
    if (!rc && r->n_ple) rc = export_check_finite(name, "ple bin low", r->ple_lo, (size_t)r->n_ple);
    if (!rc && r->n_ple) rc = export_check_finite(name, "ple bin high", r->ple_hi, (size_t)r->n_ple);
    char tensor[64];
    for (int l = 0; !rc && r->fold && l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const size_t n = (size_t)(g->d_out + g->d_hidden) * (g->d_in + 1) + (size_t)g->d_out * g->d_hidden;
        snprintf(tensor, sizeof tensor, "block %d folded with its batch norm", l);
        rc = export_check_finite(name, tensor, r->fold + r->fold_off[l], n);
    }
    return rc;
}

int export_reformer_write(const model *mb, FILE *out)
{
    const reformer *r = (const reformer *)mb;
    if (r->norm != NN_NORM_BATCH || !r->fold)
        return hr_error(HR_EINVAL, "only batch-norm reformers can be exported to C (this one uses layer norm)");
    const int ni = r->n_in, K = mb->n_kernels, app = r->app_weight > 0.0f;
    fprintf(out, "/* Weight matrices are stored transposed, rows padded to a multiple of HM_Q (see hm_matvec). */\n"
                 "#define HM_Q %d\n#define HM_K %d\n#define HM_BETA %#.9gf\n#define HM_LOG_K %.17g\n\n",
            QUANTUM, K, (double)r->app_beta, log((double)K));
    float *mean = malloc((size_t)ni * sizeof *mean);
    if (!mean) return hr_error(HR_ENOMEM, "out of memory exporting the reformer");
    for (int j = 0; j < ni; j++) mean[j] = input_centre(r, j);
    export_c_floats_aligned(out, "hm_centre", mean, (size_t)ni, 64);
    free(mean);
    export_c_floats_aligned(out, "hm_zstd", r->zstd, (size_t)ni, 64);
    if (r->n_ple) {
        export_c_ints(out, "int", "hm_ple_feature", r->ple_src, (size_t)r->n_ple);
        export_c_floats(out, "hm_ple_lo", r->ple_lo, (size_t)r->n_ple);
        export_c_floats(out, "hm_ple_hi", r->ple_hi, (size_t)r->n_ple);
    }
    int rc = export_weights(r, out);
    if (rc) return rc;
    static const char runtime[] = "export/runtime/reformer.h";
    export_section(out, runtime, "matvec");
    if (r->input_log) export_section(out, runtime, "slog");
    if (r->n_ple) export_section(out, runtime, "ple");
    if (app && r->app_combine != REFORMER_COMBINE_MASK) export_section(out, runtime, "log_sigmoid");
    export_forward(r, out);
    /* by reformer_combine */
    static const char *const combine[] = {"combine_product", "combine_mask", "combine_head"};
    static const char *const choose[] = {"choose_product", "choose_mask", NULL}; /* head: no shortcut */
    const int shortcut = app && choose[r->app_combine];
    if (app) export_section(out, runtime, combine[r->app_combine]);
    if (shortcut) {
        export_section(out, runtime, "choose_common");
        export_section(out, runtime, choose[r->app_combine]);
    }
    fputs("/* The chosen kernel (the first of the highest scores) and, when asked, every score */\n"
          "#define HM_MODEL_SELECT 1\n"
          "static int hm_model_select(const data_problem *p, const float *x, float *scores)\n{\n"
          "    _Alignas(64) float h[HM_HEADS];\n    (void)p;\n    hm_model_heads(x, h);\n",
          out);
    if (shortcut)
        fprintf(out, "    if (!scores) {\n        const int k = hm_%s(h);\n        if (k >= 0) return k;\n    }\n",
                choose[r->app_combine]);
    if (app) fprintf(out, "    float s[HM_K];\n    hm_%s(h, s);\n", combine[r->app_combine]);
    else fputs("    const float *s = h; /* no applicability head: the scores are the logits */\n", out);
    fputs("    int best = 0;\n    for (int k = 1; k < HM_K; k++)\n        if (s[k] > s[best]) best = k;\n"
          "    if (scores) memcpy(scores, s, HM_K * sizeof *s);\n    return best;\n}\n",
          out);
    return HR_OK;
}
