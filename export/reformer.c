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
#include "models/view.h"
#include "nn/nn.h"

enum { QUANTUM = 32 }; /* rows of every exported matrix are padded to a multiple of this (HM_Q) */

/* What the writer reads of the model (models/reformer_view.c's views) */
typedef struct rv {
    const model_views *v;
    int nf, ni, K, depth, hidden, expand, n_ple, input_log, app;
    float beta;
    const float *zmean, *zstd;
} rv;

static rv rv_read(const model *m, const model_views *v)
{
    rv r = {v, m->n_features, (int)model_view_int(v, "n_in"), m->n_kernels, (int)model_view_int(v, "depth"),
            (int)model_view_int(v, "hidden"), (int)model_view_int(v, "expand"), (int)model_view_int(v, "n_ple"),
            (int)model_view_int(v, "input_log"), (int)model_view_int(v, "app"),
            (float)model_view_real(v, "combine_weight"), NULL, NULL};
    r.zmean = model_view_floats(v, "zscore_mean", (size_t)r.ni);
    r.zstd = model_view_floats(v, "zscore_std", (size_t)r.ni);
    return r;
}

/* block l's input width (the hidden part of its products is expand wide, its output hidden) */
static int block_in(const rv *r, int l)
{
    return l ? r->hidden : r->ni;
}

static const float *block_view(const rv *r, int l, const char *what, size_t n)
{
    char name[MODEL_VIEW_NAME];
    snprintf(name, sizeof name, "block%d.%s", l, what);
    return model_view_floats(r->v, name, n);
}

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
static float input_centre(const rv *r, int j)
{
    const float c = roundf(r->zmean[j]);
    return fabsf(c - r->zmean[j]) <= r->zstd[j] ? c : r->zmean[j];
}

/* b12 (padded: the output part at 0, the hidden part at po) of block 0, with W12 ((dout + dh), n_in) */
static void shift_bias(const rv *r, float *b12, int po, int dout, const float *W12, int dh)
{
    const int nf = r->ni;
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
static int export_weights(const rv *r, FILE *out)
{
    const int K = r->K, app = r->app, nh = app ? 2 * K : K;
    size_t most = (size_t)row_pad(nh) * r->hidden;
    for (int l = 0; l < r->depth; l++) {
        size_t n = (size_t)(row_pad(r->hidden) + row_pad(r->expand)) * block_in(r, l);
        most = n > most ? n : most;
    }
    float *M = malloc(most * sizeof *M);
    if (!M) return hr_error(HR_ENOMEM, "out of memory exporting the reformer");
    int rc = HR_OK;
    char name[64];
    for (int l = 0; !rc && l < r->depth; l++) {
        const int din = block_in(r, l), dh = r->expand, dout = r->hidden, po = row_pad(dout), ph = row_pad(dh);
        const float *W12 = block_view(r, l, "w12", (size_t)(dout + dh) * din);
        const float *b12 = block_view(r, l, "b12", (size_t)(dout + dh));
        const float *A3 = block_view(r, l, "a3", (size_t)dout * dh);
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
        const size_t kh = (size_t)K * r->hidden;
        put_rows(M, 0, model_view_tensor(r->v, "params", "head.weight", kh), K, r->hidden);
        if (app) put_rows(M, K, model_view_tensor(r->v, "params", "app.weight", kh), K, r->hidden);
        rc = export_c_floats_transposed(out, "hm_head_w", M, hp, r->hidden, 64);
    }
    if (!rc) {
        memset(M, 0, (size_t)hp * sizeof *M);
        memcpy(M, model_view_tensor(r->v, "params", "head.bias", (size_t)K), (size_t)K * sizeof *M);
        if (app) memcpy(M + K, model_view_tensor(r->v, "params", "app.bias", (size_t)K), (size_t)K * sizeof *M);
        export_c_floats_aligned(out, "hm_head_b", M, (size_t)hp, 64);
    }
    free(M);
    return rc;
}

/* hm_model_heads: features -> h = [z (K) | a (K)], the two heads' logits (rows padded to HM_Q) */
static void export_forward(const rv *r, FILE *out)
{
    const int nf = r->nf, ni = r->ni, K = r->K, app = r->app;
    int zmax = 0, ymax = 0, vmax = ni;
    for (int l = 0; l < r->depth; l++) {
        const int po = row_pad(r->hidden), ph = row_pad(r->expand);
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
        const int po = row_pad(r->hidden), ph = row_pad(r->expand);
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

int export_reformer_check(const model *m, const model_views *v, const char *name)
{
    const char *mode = model_view_text(v, "mode");
    if (strcmp(mode, "classes"))
        return hr_error(HR_EINVAL, "%s: a %s-mode reformer cannot be exported to C yet", name, mode);
    const rv r = rv_read(m, v);
    int rc = export_check_params(name, model_view_params(v, "params"));
    if (!rc) rc = export_check_finite(name, "input mean", r.zmean, (size_t)r.ni);
    if (!rc) rc = export_check_finite(name, "input std", r.zstd, (size_t)r.ni);
    const size_t np = (size_t)r.n_ple;
    if (!rc && np) rc = export_check_finite(name, "ple bin low", model_view_floats(v, "ple_lo", np), np);
    if (!rc && np) rc = export_check_finite(name, "ple bin high", model_view_floats(v, "ple_hi", np), np);
    char tensor[64];
    static const char *const parts[] = {"w12", "b12", "a3"};
    for (int l = 0; !rc && model_view_int(v, "folded") && l < r.depth; l++) {
        const size_t o = (size_t)r.hidden + (size_t)r.expand;
        const size_t n[3] = {o * block_in(&r, l), o, (size_t)r.hidden * r.expand};
        snprintf(tensor, sizeof tensor, "block %d folded with its batch norm", l);
        for (int t = 0; !rc && t < 3; t++) rc = export_check_finite(name, tensor, block_view(&r, l, parts[t], n[t]), n[t]);
    }
    return rc;
}

int export_reformer_write(const model *m, const model_views *v, FILE *out)
{
    if (!model_view_int(v, "folded"))
        return hr_error(HR_EINVAL, "only batch-norm reformers can be exported to C (this one uses layer norm)");
    const rv rr = rv_read(m, v), *r = &rr;
    const int ni = r->ni, K = r->K, app = r->app;
    fprintf(out, "/* Weight matrices are stored transposed, rows padded to a multiple of HM_Q (see hm_matvec). */\n"
                 "#define HM_Q %d\n#define HM_K %d\n#define HM_BETA %#.9gf\n#define HM_LOG_K %.17g\n\n",
            QUANTUM, K, (double)r->beta, log((double)K));
    float *mean = malloc((size_t)ni * sizeof *mean);
    if (!mean) return hr_error(HR_ENOMEM, "out of memory exporting the reformer");
    for (int j = 0; j < ni; j++) mean[j] = input_centre(r, j);
    export_c_floats_aligned(out, "hm_centre", mean, (size_t)ni, 64);
    free(mean);
    export_c_floats_aligned(out, "hm_zstd", r->zstd, (size_t)ni, 64);
    if (r->n_ple) {
        const size_t np = (size_t)r->n_ple;
        export_c_ints(out, "int", "hm_ple_feature", model_view_ints(v, "ple_feature", np), np);
        export_c_floats(out, "hm_ple_lo", model_view_floats(v, "ple_lo", np), np);
        export_c_floats(out, "hm_ple_hi", model_view_floats(v, "ple_hi", np), np);
    }
    int rc = export_weights(r, out);
    if (rc) return rc;
    static const char runtime[] = "export/runtime/reformer.h";
    /* the runtime's sections of each way to combine the heads (models/reformer_classes.c); head: no shortcut */
    static const struct {
        const char *name, *combine, *choose;
    } ways[] = {{"product", "combine_product", "choose_product"},
                {"mask", "combine_mask", "choose_mask"},
                {"head", "combine_head", NULL}};
    const char *how = model_view_text(v, "combine");
    int w = 0;
    while (w < 2 && strcmp(how, ways[w].name)) w++;
    HR_ASSERT(!strcmp(how, ways[w].name));
    export_section(out, runtime, "matvec");
    if (r->input_log) export_section(out, runtime, "slog");
    if (r->n_ple) export_section(out, runtime, "ple");
    if (app && strcmp(how, "mask")) export_section(out, runtime, "log_sigmoid");
    export_forward(r, out);
    const int shortcut = app && ways[w].choose;
    if (app) export_section(out, runtime, ways[w].combine);
    if (shortcut) {
        export_section(out, runtime, "choose_common");
        export_section(out, runtime, ways[w].choose);
    }
    fputs("/* The chosen kernel (the first of the highest scores) and, when asked, every score */\n"
          "#define HM_MODEL_SELECT 1\n"
          "static int hm_model_select(const data_problem *p, const float *x, float *scores)\n{\n"
          "    _Alignas(64) float h[HM_HEADS];\n    (void)p;\n    hm_model_heads(x, h);\n",
          out);
    if (shortcut)
        fprintf(out, "    if (!scores) {\n        const int k = hm_%s(h);\n        if (k >= 0) return k;\n    }\n",
                ways[w].choose);
    if (app) fprintf(out, "    float s[HM_K];\n    hm_%s(h, s);\n", ways[w].combine);
    else fputs("    const float *s = h; /* no applicability head: the scores are the logits */\n", out);
    fputs("    int best = 0;\n    for (int k = 1; k < HM_K; k++)\n        if (s[k] > s[best]) best = k;\n"
          "    if (scores) memcpy(scores, s, HM_K * sizeof *s);\n    return best;\n}\n",
          out);
    return HR_OK;
}
