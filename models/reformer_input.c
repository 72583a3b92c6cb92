/* The Reformer's input (models/reformer.c): slog of the features, their z-score and, with input "ple", the
 * piecewise-linear encoding over quantile bins of the training rows; the bins' fit, the training rows' inputs
 * prepared once, and the single-problem path's first product with the encoding folded into it. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "data/data.h"

#include "models/reformer_internal.h"

/* in (n_in) = z-score of u, through slog when the model uses it, then (input "ple") the z-scored
 * piecewise-linear encoding columns of the slog inputs */
void reformer_input(const reformer *r, const float *x, float *in)
{
    const int nf = r->n_raw;
    if (!r->input_log) {
        for (int j = 0; j < nf; j++) in[j] = (x[j] - r->zmean[j]) / r->zstd[j];
        return;
    }
    for (int j = 0; j < nf; j++) in[j] = reformer_slog(x[j]);
    for (int c = 0; c < r->n_ple; c++) {
        const float v = reformer_ple(in[r->ple_src[c]], r->ple_lo[c], r->ple_hi[c]);
        in[nf + c] = (v - r->zmean[nf + c]) / r->zstd[nf + c];
    }
    for (int j = 0; j < nf; j++) in[j] = (in[j] - r->zmean[j]) / r->zstd[j];
}

/* The first block's product over an encoded input (input "ple", batch norm), folded. The encoding columns of
 * one feature read 1 for every bin below its value, t for the bin that holds it and 0 above (each bin starts
 * where the one before ends, hi_c <= lo_(c+1)), so their share of the product, sum_c W_c e_c, is C_k + t W_k:
 * k the bin holding the value, C_k the sum of the columns of the feature's bins before k. With the z-score
 * folded into the weights as well (W'_j = W_j / std_j, b' = b - sum_j W'_j mean_j), a feature costs two
 * columns instead of input_bins, and the z-scored encoding is never formed. Files whose bins do not follow
 * each other keep the plain product (ple_fast 0). */
void reformer_fold_input(reformer *r)
{
    r->ple_fast = 0;
    if (!r->in_fold) return;
    const nn_gamma *g = &r->blocks[0];
    const int nf = r->base.n_features, din = g->d_in, o = g->d_out + g->d_hidden;
    const float *W12 = r->fold + r->fold_off[0], *b12 = W12 + (size_t)o * din;
    float *b = r->in_fold, *Wx = b + o, *We = Wx + (size_t)nf * o, *Ce = We + (size_t)r->n_ple * o;
    int ng = 0;
    for (int c = 0; c < r->n_ple; c++) {
        if (c && r->ple_src[c] == r->ple_src[c - 1]) {
            if (r->ple_hi[c - 1] > r->ple_lo[c]) return;
            continue;
        }
        for (int h = 0; h < ng; h++)
            if (r->ple_src[r->ple_group[h]] == r->ple_src[c]) return; /* a feature's bins apart */
        r->ple_group[ng++] = c;
    }
    r->ple_group[ng] = r->n_ple;
    r->n_ple_groups = ng;
    for (int i = 0; i < o; i++) {
        const float *w = W12 + (size_t)i * din;
        double acc = b12[i];
        for (int j = 0; j < din; j++) {
            const float wj = w[j] / r->zstd[j];
            acc -= (double)wj * r->zmean[j];
            if (j < nf) Wx[(size_t)j * o + i] = wj;
            else We[(size_t)(j - nf) * o + i] = wj;
        }
        b[i] = (float)acc;
        for (int h = 0; h < ng; h++) {
            double cum = 0.0;
            for (int c = r->ple_group[h]; c < r->ple_group[h + 1]; c++) {
                Ce[(size_t)c * o + i] = (float)cum;
                cum += We[(size_t)c * o + i];
            }
        }
    }
    r->ple_fast = 1;
}

/* z (d_out + d_hidden) = the first block's stacked product [A1; A2'] in + [b1 + b3; b2'] of the problem with
 * features x, through the folded encoding (reformer_fold_input); v (n_features) is scratch. */
void reformer_first_product(const reformer *r, const float *x, float *v, float *z)
{
    const nn_gamma *g = &r->blocks[0];
    const int nf = r->base.n_features, o = g->d_out + g->d_hidden;
    const float *Wx = r->in_fold + o, *We = Wx + (size_t)nf * o, *Ce = We + (size_t)r->n_ple * o;
    memcpy(z, r->in_fold, (size_t)o * sizeof *z);
    for (int j = 0; j < nf; j++) {
        v[j] = reformer_slog(x[j]);
        if (v[j] != 0.0f) cblas_saxpy(o, v[j], Wx + (size_t)j * o, 1, z, 1);
    }
    for (int h = 0; h < r->n_ple_groups; h++) {
        const int c0 = r->ple_group[h], c1 = r->ple_group[h + 1];
        const float u = v[r->ple_src[c0]];
        int k = c1 - 1;
        float t = 1.0f;
        for (int c = c0; c < c1; c++) {
            const float e = reformer_ple(u, r->ple_lo[c], r->ple_hi[c]);
            if (e < 1.0f) {
                k = c;
                t = e;
                break;
            }
        }
        cblas_saxpy(o, 1.0f, Ce + (size_t)k * o, 1, z, 1);
        if (t != 0.0f) cblas_saxpy(o, t, We + (size_t)k * o, 1, z, 1);
    }
}

/* Columns of raw training inputs, each of its own length: in classes mode every column holds the training
 * rows; in pairs mode the problem features' columns hold the training rows and the pair features' columns
 * the training pairs. Column j is cols[off[j] .. off[j] + len[j]). */
typedef struct input_cols {
    float *cols;
    size_t *off;
    int *len;
} input_cols;

/* The piecewise-linear encoding's bins (input "ple"), from the columns of slog training values: per raw
 * input, the distinct values among the order statistics v_(floor(i (n - 1) / B)), i = 0..B, of its sorted
 * column are the bin edges, so each bin holds about 1/B of the rows (fewer bins where values repeat). A
 * column with fewer than three distinct edges (a constant, a 0/1 flag or a one-hot code) gets no bins: its
 * own input already says everything. Input j's bins are stored in order, ple_src = j. */
static int reformer_ple_fit(reformer *r, const input_cols *c, int bins)
{
    const int nf = r->n_raw;
    const size_t most = (size_t)nf * bins;
    int longest = 1;
    for (int j = 0; j < nf; j++) longest = c->len[j] > longest ? c->len[j] : longest;
    /* v: one column, then as much scratch for the sort */
    float *v = hr_malloc(2 * (size_t)longest * sizeof *v), *e = hr_malloc((size_t)(bins + 1) * sizeof *e);
    r->ple_src = hr_malloc(most * sizeof *r->ple_src);
    r->ple_lo = hr_malloc(most * sizeof *r->ple_lo);
    r->ple_hi = hr_malloc(most * sizeof *r->ple_hi);
    if (!v || !e || !r->ple_src || !r->ple_lo || !r->ple_hi) {
        free(v);
        free(e);
        return HR_ENOMEM;
    }
    r->n_ple = 0;
    for (int j = 0; j < nf; j++) {
        const int n = c->len[j];
        if (n <= 0) continue;
        memcpy(v, c->cols + c->off[j], (size_t)n * sizeof *v);
        hr_sort_floats(v, v + n, (size_t)n);
        int ne = 0;
        for (int i = 0; i <= bins; i++) {
            const float q = v[(size_t)i * (size_t)(n - 1) / (size_t)bins];
            if (!ne || q > e[ne - 1]) e[ne++] = q;
        }
        if (ne < 3) continue;
        for (int t = 0; t + 1 < ne; t++, r->n_ple++) {
            r->ple_src[r->n_ple] = j;
            r->ple_lo[r->n_ple] = e[t];
            r->ple_hi[r->n_ple] = e[t + 1];
        }
    }
    free(v);
    free(e);
    return HR_OK;
}

/* The bins (bins > 0) and the z-score of every model input from the columns; sets n_ple, ple_*, n_in,
 * zmean, zstd. */
static int reformer_input_stats(reformer *r, const input_cols *c, int bins)
{
    const int nf = r->n_raw;
    int longest = 1;
    for (int j = 0; j < nf; j++) longest = c->len[j] > longest ? c->len[j] : longest;
    int rc = bins > 0 ? reformer_ple_fit(r, c, bins) : HR_OK;
    r->n_in = nf + r->n_ple;
    const int ni = r->n_in;
    float *enc = hr_malloc((size_t)longest * sizeof *enc); /* one encoding column */
    int *idx = hr_malloc((size_t)longest * sizeof *idx);
    if (!rc && (!enc || !idx || !(r->zmean = hr_malloc((size_t)ni * sizeof *r->zmean)) ||
                !(r->zstd = hr_malloc((size_t)ni * sizeof *r->zstd))))
        rc = HR_ENOMEM;
    for (int i = 0; !rc && i < longest; i++) idx[i] = i;
    for (int j = 0; !rc && j < nf; j++)
        data_zscore_fit(c->cols + c->off[j], 1, idx, c->len[j], &r->zmean[j], &r->zstd[j]);
    for (int k = 0; !rc && k < r->n_ple; k++) {
        const int src = r->ple_src[k], n = c->len[src];
        const float *col = c->cols + c->off[src];
        for (int i = 0; i < n; i++) enc[i] = reformer_ple(col[i], r->ple_lo[k], r->ple_hi[k]);
        data_zscore_fit(enc, 1, idx, n, &r->zmean[nf + k], &r->zstd[nf + k]);
    }
    free(enc);
    free(idx);
    return rc;
}

static int input_cols_alloc(input_cols *c, int nf, const int *len)
{
    size_t total = 0;
    c->off = hr_malloc((size_t)nf * sizeof *c->off);
    c->len = hr_malloc((size_t)nf * sizeof *c->len);
    if (!c->off || !c->len) return HR_ENOMEM;
    for (int j = 0; j < nf; j++) {
        c->off[j] = total;
        c->len[j] = len[j];
        total += (size_t)len[j];
    }
    return (c->cols = hr_malloc((total ? total : 1) * sizeof *c->cols)) ? HR_OK : HR_ENOMEM;
}

static void input_cols_free(input_cols *c)
{
    free(c->cols);
    free(c->off);
    free(c->len);
}

#define REFORMER_FIT_ROWS 64 /* rows of inputs written at a time in reformer_input_fit */

/* Fits the input transform on the training rows' features (slog with input "log" or "ple", the encoding's
 * bins with "ple", then the z-score of every model input) and returns the inputs of those rows,
 * (n_train, n_in), in *in. The features are gathered column by column into one buffer so that
 * data_zscore_fit reads each column contiguously (the row-major matrix costs it a cache miss a value). */
int reformer_input_fit(reformer *r, const model_train_data *d, int bins, float **in)
{
    const int nf = r->base.n_features, n = d->n_train;
    const size_t nn = (size_t)(n ? n : 1);
    input_cols c = {0};
    int *len = hr_malloc((size_t)nf * sizeof *len);
    int rc = len ? HR_OK : HR_ENOMEM;
    for (int j = 0; !rc && j < nf; j++) len[j] = n;
    if (!rc) rc = input_cols_alloc(&c, nf, len);
    free(len);
    *in = NULL;
    float *cols = c.cols; /* (n_features, n_train) */
    for (int i = 0; !rc && i < n; i++) {
        const float *x = d->X + (size_t)d->train[i] * nf;
        for (int j = 0; j < nf; j++) cols[(size_t)j * n + i] = r->input_log ? reformer_slog(x[j]) : x[j];
    }
    if (!rc) rc = reformer_input_stats(r, &c, bins);
    const int ni = r->n_in;
    if (!rc && !(*in = hr_malloc(nn * ni * sizeof **in))) rc = HR_ENOMEM;
    /* then the rows, a block of REFORMER_FIT_ROWS at a time so that the block's rows stay in cache while each
     * column is written into them (row by row over all of n, a 647-input row is a cache miss per value); the
     * same float expressions as reformer_input, so training and prediction see identical inputs */
    for (int i0 = 0; !rc && i0 < n; i0 += REFORMER_FIT_ROWS) {
        const int i1 = i0 + REFORMER_FIT_ROWS < n ? i0 + REFORMER_FIT_ROWS : n;
        for (int j = 0; j < nf; j++) {
            const float *col = cols + (size_t)j * n;
            for (int i = i0; i < i1; i++) (*in)[(size_t)i * ni + j] = (col[i] - r->zmean[j]) / r->zstd[j];
        }
        for (int k = 0; k < r->n_ple; k++) {
            const float *col = cols + (size_t)r->ple_src[k] * n;
            const float lo = r->ple_lo[k], hi = r->ple_hi[k], m = r->zmean[nf + k], sd = r->zstd[nf + k];
            for (int i = i0; i < i1; i++) (*in)[(size_t)i * ni + nf + k] = (reformer_ple(col[i], lo, hi) - m) / sd;
        }
    }
    input_cols_free(&c);
    if (rc) {
        free(*in);
        *in = NULL;
    }
    return rc;
}

void reformer_pair_raw(const reformer *r, const float *x, const double *pv, const double *kv, float *u)
{
    const int nf = r->base.n_features;
    memcpy(u, x, (size_t)nf * sizeof *u);
    data_codec_pair_features(r->base.codec, pv, kv, u + nf);
}

int reformer_input_fit_pairs(reformer *r, const model_train_data *d, int bins)
{
    const data_select *sel = d->sel;
    const data_codec *codec = r->base.codec;
    const int nf = r->base.n_features, np = r->n_pair, K = sel->n_kernels, nk = data_codec_config_width(codec);
    long total = 0;
    for (int i = 0; i < d->n_train; i++) {
        const float *t = sel->runtime + (size_t)d->train[i] * K;
        for (int k = 0; k < K; k++) total += isfinite(t[k]) != 0;
    }
    /* every stride-th pair, so that the fit's cost stays bounded on large tables */
    const long stride = total > REFORMER_FIT_PAIRS ? (total + REFORMER_FIT_PAIRS - 1) / REFORMER_FIT_PAIRS : 1;
    const int m = (int)((total + stride - 1) / stride);
    input_cols c = {0};
    int *len = hr_malloc((size_t)r->n_raw * sizeof *len);
    double *pv = hr_malloc((size_t)(data_codec_value_count(codec) + 1) * sizeof *pv);
    float *pf = hr_malloc((size_t)(np ? np : 1) * sizeof *pf);
    int rc = len && pv && pf ? HR_OK : HR_ENOMEM;
    for (int j = 0; !rc && j < r->n_raw; j++) len[j] = j < nf ? d->n_train : m;
    if (!rc) rc = input_cols_alloc(&c, r->n_raw, len);
    for (int i = 0; !rc && i < d->n_train; i++) {
        const float *x = d->X + (size_t)d->train[i] * nf;
        for (int j = 0; j < nf; j++) c.cols[c.off[j] + i] = r->input_log ? reformer_slog(x[j]) : x[j];
    }
    long seen = 0;
    int e = 0;
    for (int i = 0; !rc && i < d->n_train; i++) {
        const int row = d->train[i];
        const float *t = sel->runtime + (size_t)row * K;
        data_codec_values_of_features(codec, d->X + (size_t)row * nf, pv);
        for (int k = 0; k < K; k++) {
            if (!isfinite(t[k])) continue;
            if (seen++ % stride) continue;
            data_codec_pair_features(codec, pv, data_select_config_values(sel) + (size_t)k * nk, pf);
            for (int j = 0; j < np; j++) c.cols[c.off[nf + j] + e] = r->input_log ? reformer_slog(pf[j]) : pf[j];
            e++;
        }
    }
    if (!rc) rc = reformer_input_stats(r, &c, bins);
    input_cols_free(&c);
    free(len);
    free(pv);
    free(pf);
    return rc;
}
