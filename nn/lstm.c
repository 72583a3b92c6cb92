/* LSTM (PyTorch gate order i, f, g, o) with full backpropagation through time, its bidirectional
 * wrapper, and a single-step cell for the decoder.
 *
 * Sequences are batch-first, so step t of sequence b is row b*T + t of every (B, T, *) array and a
 * step's (B, *) block is a strided matrix (leading dimension T * width) that cblas reads directly:
 * - the input projection x W_ih^T of all B*T rows is one GEMM before the recurrence;
 * - each step adds h_{t-1} W_hh^T with one (B, H) x (H, 4H) GEMM into its strided gate rows;
 * - backward keeps only dh_{t-1} = dgates_t W_hh inside the time loop; dW_ih, dW_hh and dx are
 *   one GEMM each over all B*T rows afterwards (hprev caches h_{t-1} row-aligned with the gates).
 */
/* Pointwise loops here run over nn_tanh_fast; let GCC vectorise them at -O2 (no FP traps are used). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "vect-cost-model=dynamic")
#endif
#include "nn/seq.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void nn_lstm_layout(nn_lstm *l, nn_params *p, const char *name, int input, int hidden)
{
    HR_ASSERT(input > 0 && hidden > 0);
    char buf[64];
    size_t G = 4 * (size_t)hidden;
    l->input = input;
    l->hidden = hidden;
    snprintf(buf, sizeof buf, "%s.weight_ih", name);
    l->w_ih = nn_params_add(p, buf, G * input);
    snprintf(buf, sizeof buf, "%s.weight_hh", name);
    l->w_hh = nn_params_add(p, buf, G * hidden);
    snprintf(buf, sizeof buf, "%s.bias_ih", name);
    l->b_ih = nn_params_add(p, buf, G);
    snprintf(buf, sizeof buf, "%s.bias_hh", name);
    l->b_hh = nn_params_add(p, buf, G);
}

void nn_lstm_reset(const nn_lstm *l, nn_params *p, hr_rng *rng)
{
    float bound = 1.0f / sqrtf((float)l->hidden);
    size_t G = 4 * (size_t)l->hidden;
    size_t offs[4] = {l->w_ih, l->w_hh, l->b_ih, l->b_hh};
    size_t lens[4] = {G * l->input, G * l->hidden, G, G};
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < lens[k]; i++)
            p->w[offs[k] + i] = bound * (2.0f * hr_rng_uniform(rng) - 1.0f);
}

int nn_lstm_cache_init(nn_lstm_cache *c, int max_batch, int max_time, int hidden)
{
    memset(c, 0, sizeof *c);
    c->max_batch = max_batch;
    c->max_time = max_time;
    c->hidden = hidden;
    size_t bth = (size_t)max_batch * max_time * hidden, bh = (size_t)max_batch * hidden;
    c->gates = hr_malloc(4 * bth * sizeof(float));
    c->dgates = hr_malloc(4 * bth * sizeof(float));
    c->c = hr_malloc(bth * sizeof(float));
    c->tc = hr_malloc(bth * sizeof(float));
    c->hprev = hr_malloc(bth * sizeof(float));
    c->c0 = hr_malloc(bh * sizeof(float));
    c->dh = hr_malloc(bh * sizeof(float));
    c->dc = hr_malloc(bh * sizeof(float));
    if (!c->gates || !c->dgates || !c->c || !c->tc || !c->hprev || !c->c0 || !c->dh || !c->dc) {
        nn_lstm_cache_free(c);
        return hr_error(HR_ENOMEM, "lstm cache for B=%d T=%d H=%d", max_batch, max_time, hidden);
    }
    return HR_OK;
}

void nn_lstm_cache_free(nn_lstm_cache *c)
{
    free(c->gates);
    free(c->dgates);
    free(c->c);
    free(c->tc);
    free(c->hprev);
    free(c->c0);
    free(c->dh);
    free(c->dc);
    memset(c, 0, sizeof *c);
}

/* g (4H): pre-activations in, activated i, f, g, o out; c = f*c_prev + i*g, tc = tanh(c), h = o*tc.
 * One contiguous loop per activation and restrict pointers, so each loop vectorises. */
NN_SEQ_INLINE void lstm_pointwise_forward(int H, float *restrict g, const float *restrict c_prev,
                                          float *restrict c, float *restrict tc, float *restrict h)
{
    for (int j = 0; j < 2 * H; j++) g[j] = nn_sigmoid_fast(g[j]);
    for (int j = 2 * H; j < 3 * H; j++) g[j] = nn_tanh_fast(g[j]);
    for (int j = 3 * H; j < 4 * H; j++) g[j] = nn_sigmoid_fast(g[j]);
    const float *restrict gi = g, *restrict gf = g + H, *restrict gg = g + 2 * H, *restrict go = g + 3 * H;
    for (int j = 0; j < H; j++) {
        c[j] = gf[j] * c_prev[j] + gi[j] * gg[j];
        tc[j] = nn_tanh_fast(c[j]);
        h[j] = go[j] * tc[j];
    }
}

/* dh (H) is dL/dh_t, dc (H) is dL/dc_t from the future in; writes the pre-activation gate
 * gradients dg (4H) and replaces dc by dL/dc_{t-1}. */
NN_SEQ_INLINE void lstm_pointwise_backward(int H, const float *restrict g, const float *restrict c_prev,
                                           const float *restrict tc, const float *restrict dh,
                                           float *restrict dc, float *restrict dg)
{
    const float *restrict gi = g, *restrict gf = g + H, *restrict gg = g + 2 * H, *restrict go = g + 3 * H;
    float *restrict di = dg, *restrict df = dg + H, *restrict dgg = dg + 2 * H, *restrict dgo = dg + 3 * H;
    for (int j = 0; j < H; j++) {
        float i = gi[j], f = gf[j], gv = gg[j], o = go[j], t = tc[j];
        float dct = dc[j] + dh[j] * o * (1.0f - t * t);
        di[j] = dct * gv * i * (1.0f - i);
        df[j] = dct * c_prev[j] * f * (1.0f - f);
        dgg[j] = dct * i * (1.0f - gv * gv);
        dgo[j] = dh[j] * t * o * (1.0f - o);
        dc[j] = dct * f;
    }
}

/* One direction over the whole sequence; y is (B, T, ldy) and this direction writes columns
 * [0, H) of it (the caller offsets y for the backward half of a BiLSTM). */
NN_SEQ_CLONES
static void lstm_dir_forward(const nn_lstm *l, const nn_params *p, nn_lstm_cache *c, int B, int T,
                             const float *x, const float *h0, const float *c0, int reverse, float *y,
                             int ldy, float *hn, float *cn)
{
    int In = l->input, H = l->hidden, G = 4 * H;
    HR_ASSERT(B <= c->max_batch && T <= c->max_time && H == c->hidden && T > 0);
    c->batch = B;
    c->time = T;
    c->reverse = reverse;
    size_t sg = (size_t)T * G, sh = (size_t)T * H, sy = (size_t)T * ldy; /* per-sequence strides */
    const float *bih = p->w + l->b_ih, *bhh = p->w + l->b_hh, *whh = p->w + l->w_hh;

    for (size_t r = 0; r < (size_t)B * T; r++)
        for (int j = 0; j < G; j++) c->gates[r * G + j] = bih[j] + bhh[j];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B * T, G, In, 1.0f, x, In, p->w + l->w_ih, In,
                1.0f, c->gates, G);
    if (c0)
        memcpy(c->c0, c0, (size_t)B * H * sizeof(float));
    else
        memset(c->c0, 0, (size_t)B * H * sizeof(float));

    for (int s = 0; s < T; s++) {
        int t = reverse ? T - 1 - s : s, tp = reverse ? t + 1 : t - 1;
        float *hp = c->hprev + (size_t)t * H; /* (B, H), row stride sh */
        int has_h = s > 0 || h0;
        for (int b = 0; b < B; b++) {
            float *dst = hp + b * sh;
            if (s > 0)
                memcpy(dst, y + b * sy + (size_t)tp * ldy, (size_t)H * sizeof(float));
            else if (h0)
                memcpy(dst, h0 + (size_t)b * H, (size_t)H * sizeof(float));
            else
                memset(dst, 0, (size_t)H * sizeof(float));
        }
        if (has_h)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, G, H, 1.0f, hp, (int)sh, whh, H,
                        1.0f, c->gates + (size_t)t * G, (int)sg);
        for (int b = 0; b < B; b++) {
            const float *cp = s == 0 ? c->c0 + (size_t)b * H : c->c + b * sh + (size_t)tp * H;
            lstm_pointwise_forward(H, c->gates + b * sg + (size_t)t * G, cp, c->c + b * sh + (size_t)t * H,
                                   c->tc + b * sh + (size_t)t * H, y + b * sy + (size_t)t * ldy);
        }
    }
    int tl = reverse ? 0 : T - 1; /* the last step run */
    for (int b = 0; b < B; b++) {
        if (hn) memcpy(hn + (size_t)b * H, y + b * sy + (size_t)tl * ldy, (size_t)H * sizeof(float));
        if (cn) memcpy(cn + (size_t)b * H, c->c + b * sh + (size_t)tl * H, (size_t)H * sizeof(float));
    }
}

/* BPTT for the last lstm_dir_forward; dy is (B, T, ldy) read at columns [0, H), or NULL. */
NN_SEQ_CLONES
static void lstm_dir_backward(const nn_lstm *l, nn_params *p, nn_lstm_cache *c, const float *x,
                              const float *dy, int ldy, const float *dhn, const float *dcn, float *dx,
                              float *dh0, float *dc0)
{
    int B = c->batch, T = c->time, In = l->input, H = l->hidden, G = 4 * H, reverse = c->reverse;
    size_t sg = (size_t)T * G, sh = (size_t)T * H, sy = (size_t)T * ldy, bh = (size_t)B * H;
    const float *whh = p->w + l->w_hh;

    if (dhn)
        memcpy(c->dh, dhn, bh * sizeof(float));
    else
        memset(c->dh, 0, bh * sizeof(float));
    if (dcn)
        memcpy(c->dc, dcn, bh * sizeof(float));
    else
        memset(c->dc, 0, bh * sizeof(float));

    for (int s = T - 1; s >= 0; s--) {
        int t = reverse ? T - 1 - s : s, tp = reverse ? t + 1 : t - 1;
        for (int b = 0; b < B; b++) {
            size_t row = b * sh + (size_t)t * H;
            const float *cp = s == 0 ? c->c0 + (size_t)b * H : c->c + b * sh + (size_t)tp * H;
            float *dh = c->dh + (size_t)b * H; /* rewritten by the GEMM below, so dy can be added in place */
            if (dy) {
                const float *dyt = dy + b * sy + (size_t)t * ldy;
                for (int j = 0; j < H; j++) dh[j] += dyt[j];
            }
            lstm_pointwise_backward(H, c->gates + b * sg + (size_t)t * G, cp, c->tc + row, dh,
                                    c->dc + (size_t)b * H, c->dgates + b * sg + (size_t)t * G);
        }
        /* dh_{t-1} = dgates_t W_hh: (B, 4H) strided x (4H, H) */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, G, 1.0f, c->dgates + (size_t)t * G,
                    (int)sg, whh, H, 0.0f, c->dh, H);
    }
    for (size_t k = 0; k < bh; k++) {
        if (dh0) dh0[k] += c->dh[k];
        if (dc0) dc0[k] += c->dc[k];
    }

    int rows = B * T;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, G, In, rows, 1.0f, c->dgates, G, x, In, 1.0f,
                p->dw + l->w_ih, In);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, G, H, rows, 1.0f, c->dgates, G, c->hprev, H,
                1.0f, p->dw + l->w_hh, H);
    float *dbih = p->dw + l->b_ih, *dbhh = p->dw + l->b_hh;
    for (int r = 0; r < rows; r++) {
        const float *dg = c->dgates + (size_t)r * G;
        for (int j = 0; j < G; j++) {
            dbih[j] += dg[j];
            dbhh[j] += dg[j];
        }
    }
    if (dx)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, In, G, 1.0f, c->dgates, G,
                    p->w + l->w_ih, In, 1.0f, dx, In);
}

void nn_lstm_forward(const nn_lstm *l, const nn_params *p, nn_lstm_cache *c, int B, int T,
                     const float *x, const float *h0, const float *c0, float *y, float *hn, float *cn)
{
    lstm_dir_forward(l, p, c, B, T, x, h0, c0, 0, y, l->hidden, hn, cn);
}

void nn_lstm_backward(const nn_lstm *l, nn_params *p, nn_lstm_cache *c, const float *x,
                      const float *dy, const float *dhn, const float *dcn, float *dx, float *dh0,
                      float *dc0)
{
    lstm_dir_backward(l, p, c, x, dy, l->hidden, dhn, dcn, dx, dh0, dc0);
}

NN_SEQ_CLONES
void nn_lstm_cell_forward(const nn_lstm *l, const nn_params *p, const float *wt_ih, const float *wt_hh,
                          int B, const float *x, int ldx, const float *h_prev, const float *c_prev,
                          float *gates, float *c, float *tc, float *h)
{
    int In = l->input, H = l->hidden, G = 4 * H;
    const float *bih = p->w + l->b_ih, *bhh = p->w + l->b_hh;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < G; j++) gates[(size_t)b * G + j] = bih[j] + bhh[j];
    if (wt_ih)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, G, In, 1.0f, x, ldx, wt_ih, G, 1.0f,
                    gates, G);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, G, In, 1.0f, x, ldx, p->w + l->w_ih, In,
                    1.0f, gates, G);
    if (wt_hh)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, G, H, 1.0f, h_prev, H, wt_hh, G, 1.0f,
                    gates, G);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, G, H, 1.0f, h_prev, H, p->w + l->w_hh, H,
                    1.0f, gates, G);
    for (int b = 0; b < B; b++) {
        size_t o = (size_t)b * H;
        lstm_pointwise_forward(H, gates + (size_t)b * G, c_prev + o, c + o, tc + o, h + o);
    }
}

NN_SEQ_CLONES
void nn_lstm_cell_backward(const nn_lstm *l, nn_params *p, int B, const float *x, int ldx,
                           const float *h_prev, const float *c_prev, const float *gates,
                           const float *tc, const float *dh, float *dc, float *dgates, float *dx,
                           float *dh_prev)
{
    int In = l->input, H = l->hidden, G = 4 * H;
    for (int b = 0; b < B; b++) {
        size_t o = (size_t)b * H;
        lstm_pointwise_backward(H, gates + (size_t)b * G, c_prev + o, tc + o, dh + o, dc + o,
                                dgates + (size_t)b * G);
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, G, In, B, 1.0f, dgates, G, x, ldx, 1.0f,
                p->dw + l->w_ih, In);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, G, H, B, 1.0f, dgates, G, h_prev, H, 1.0f,
                p->dw + l->w_hh, H);
    float *dbih = p->dw + l->b_ih, *dbhh = p->dw + l->b_hh;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < G; j++) {
            dbih[j] += dgates[(size_t)b * G + j];
            dbhh[j] += dgates[(size_t)b * G + j];
        }
    if (dx)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, In, G, 1.0f, dgates, G, p->w + l->w_ih,
                    In, 1.0f, dx, ldx);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, G, 1.0f, dgates, G, p->w + l->w_hh, H,
                0.0f, dh_prev, H);
}

/* ---- bidirectional ---- */

void nn_bilstm_layout(nn_bilstm *l, nn_params *p, const char *name, int input, int hidden)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s.fwd", name);
    nn_lstm_layout(&l->fwd, p, buf, input, hidden);
    snprintf(buf, sizeof buf, "%s.bwd", name);
    nn_lstm_layout(&l->bwd, p, buf, input, hidden);
}

void nn_bilstm_reset(const nn_bilstm *l, nn_params *p, hr_rng *rng)
{
    nn_lstm_reset(&l->fwd, p, rng);
    nn_lstm_reset(&l->bwd, p, rng);
}

int nn_bilstm_cache_init(nn_bilstm_cache *c, int max_batch, int max_time, int hidden)
{
    int rc = nn_lstm_cache_init(&c->fwd, max_batch, max_time, hidden);
    if (rc) return rc;
    rc = nn_lstm_cache_init(&c->bwd, max_batch, max_time, hidden);
    if (rc) nn_lstm_cache_free(&c->fwd);
    return rc;
}

void nn_bilstm_cache_free(nn_bilstm_cache *c)
{
    nn_lstm_cache_free(&c->fwd);
    nn_lstm_cache_free(&c->bwd);
}

void nn_bilstm_forward(const nn_bilstm *l, const nn_params *p, nn_bilstm_cache *c, int B, int T,
                       const float *x, const float *h0, const float *c0, float *y, float *hn,
                       float *cn)
{
    int H = l->fwd.hidden;
    size_t bh = (size_t)B * H;
    lstm_dir_forward(&l->fwd, p, &c->fwd, B, T, x, h0, c0, 0, y, 2 * H, hn, cn);
    lstm_dir_forward(&l->bwd, p, &c->bwd, B, T, x, h0 ? h0 + bh : NULL, c0 ? c0 + bh : NULL, 1, y + H,
                     2 * H, hn ? hn + bh : NULL, cn ? cn + bh : NULL);
}

void nn_bilstm_backward(const nn_bilstm *l, nn_params *p, nn_bilstm_cache *c, const float *x,
                        const float *dy, const float *dhn, const float *dcn, float *dx, float *dh0,
                        float *dc0)
{
    int H = l->fwd.hidden;
    size_t bh = (size_t)c->fwd.batch * H;
    lstm_dir_backward(&l->fwd, p, &c->fwd, x, dy, 2 * H, dhn, dcn, dx, dh0, dc0);
    lstm_dir_backward(&l->bwd, p, &c->bwd, x, dy ? dy + H : NULL, 2 * H, dhn ? dhn + bh : NULL,
                      dcn ? dcn + bh : NULL, dx, dh0 ? dh0 + bh : NULL, dc0 ? dc0 + bh : NULL);
}
