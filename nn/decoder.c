/* Attention LSTM decoder run one step per call (Bahdanau et al. 2015, as used by the seq2seq tuner):
 *   ctx_t = attn(h_{t-1}, K),  x_t = [E[y_{t-1}], ctx_t],  (h_t, c_t) = cell(x_t, h_{t-1}, c_{t-1}),
 *   logits_t = W_out[vb:ve] [h_t, ctx_t] + b_out[vb:ve].
 * The query depends on the previous state, so steps cannot be batched over time; each step keeps
 * its caches at index t of the workspace, which serves teacher forcing (forward all steps, then
 * nn_decoder_backward) and greedy/beam inference (steps with nn_decoder_reorder in between) alike.
 * Only rows [vb, ve) of the output projection are computed: a tuning parameter's position has its
 * own value range inside the shared output vocabulary. */
#include "nn/seq.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void nn_decoder_layout(nn_decoder *d, nn_params *p, const char *name, int n_in, int n_out, int embed,
                       int key, int hidden, int attn)
{
    HR_ASSERT(n_in > 0 && n_out > 0 && embed > 0 && key > 0 && hidden > 0 && attn > 0);
    char buf[64];
    d->n_in = n_in;
    d->n_out = n_out;
    d->embed = embed;
    d->key = key;
    d->hidden = hidden;
    d->attn = attn;
    snprintf(buf, sizeof buf, "%s.embedding", name);
    d->emb = nn_params_add(p, buf, (size_t)n_in * embed);
    snprintf(buf, sizeof buf, "%s.attn", name);
    nn_attn_additive_layout(&d->att, p, buf, hidden, key, attn);
    snprintf(buf, sizeof buf, "%s.cell", name);
    nn_lstm_layout(&d->cell, p, buf, embed + key, hidden);
    snprintf(buf, sizeof buf, "%s.out.weight", name);
    d->w_out = nn_params_add(p, buf, (size_t)n_out * (hidden + key));
    snprintf(buf, sizeof buf, "%s.out.bias", name);
    d->b_out = nn_params_add(p, buf, (size_t)n_out);
}

void nn_decoder_reset(const nn_decoder *d, nn_params *p, hr_rng *rng)
{
    for (size_t i = 0; i < (size_t)d->n_in * d->embed; i++) p->w[d->emb + i] = hr_rng_normal(rng);
    nn_attn_additive_reset(&d->att, p, rng);
    nn_lstm_reset(&d->cell, p, rng);
    float bound = 1.0f / sqrtf((float)(d->hidden + d->key));
    for (size_t i = 0; i < (size_t)d->n_out * (d->hidden + d->key); i++)
        p->w[d->w_out + i] = bound * (2.0f * hr_rng_uniform(rng) - 1.0f);
    for (int i = 0; i < d->n_out; i++) p->w[d->b_out + i] = bound * (2.0f * hr_rng_uniform(rng) - 1.0f);
}

int nn_decoder_ws_init(nn_decoder_ws *ws, const nn_decoder *d, int max_batch, int max_len,
                       int max_steps)
{
    HR_ASSERT(max_batch > 0 && max_len > 0 && max_steps > 0);
    memset(ws, 0, sizeof *ws);
    ws->max_batch = max_batch;
    ws->max_len = max_len;
    ws->max_steps = max_steps;
    size_t B = (size_t)max_batch, S = (size_t)max_len, T = (size_t)max_steps;
    size_t H = (size_t)d->hidden, A = (size_t)d->attn, Dk = (size_t)d->key;
    size_t In = (size_t)d->embed + Dk;
    /* one float block carved into the named arrays, in this order */
    size_t sizes[] = {B * S * A, (T + 1) * B * H, (T + 1) * B * H, T * B * In, T * B * 4 * H, T * B * H,
                      T * B * S * A, T * B * S, B * H, B * H, B * H, B * 4 * H, B * In, B * Dk,
                      B * S * A, B * (A + S), B * Dk};
    float **dst[] = {&ws->kproj, &ws->h, &ws->c, &ws->xcat, &ws->gates, &ws->tc, &ws->tanh_e, &ws->attw,
                     &ws->dh, &ws->dc, &ws->dh_prev, &ws->dgates, &ws->dxcat, &ws->dctx, &ws->dkproj,
                     &ws->scratch, &ws->ctx};
    size_t n = sizeof sizes / sizeof sizes[0], total = 0;
    for (size_t k = 0; k < n; k++) total += sizes[k];
    float *block = hr_malloc(total * sizeof(float));
    ws->tokens = hr_malloc((T * B + 2 * T) * sizeof(int));
    if (!block || !ws->tokens) {
        free(block);
        free(ws->tokens);
        ws->tokens = NULL;
        return hr_error(HR_ENOMEM, "decoder workspace: %zu floats", total);
    }
    for (size_t k = 0, off = 0; k < n; k++) {
        *dst[k] = block + off;
        off += sizes[k];
    }
    ws->vb = ws->tokens + T * B;
    ws->ve = ws->vb + T;
    return HR_OK;
}

void nn_decoder_ws_free(nn_decoder_ws *ws)
{
    free(ws->kproj); /* start of the float block */
    free(ws->tokens);
    free(ws->wt_q); /* start of the transposed-weight block */
    memset(ws, 0, sizeof *ws);
}

/* dst (cols, rows) = src (rows, cols)^T with src rows ld apart */
static void transpose(float *dst, const float *src, int rows, int cols, int ld)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) dst[(size_t)c * rows + r] = src[(size_t)r * ld + c];
}

int nn_decoder_ws_prepare(nn_decoder_ws *ws, const nn_decoder *d, const nn_params *p)
{
    size_t H = (size_t)d->hidden, A = (size_t)d->attn, In = (size_t)d->embed + d->key;
    size_t L = H + (size_t)d->key, n = H * A + In * 4 * H + H * 4 * H + L * d->n_out;
    if (!ws->wt_q) {
        ws->wt_q = hr_malloc(n * sizeof(float));
        if (!ws->wt_q) return hr_error(HR_ENOMEM, "decoder inference weights: %zu floats", n);
        ws->wt_ih = ws->wt_q + H * A;
        ws->wt_hh = ws->wt_ih + In * 4 * H;
        ws->wt_out = ws->wt_hh + H * 4 * H;
    }
    transpose(ws->wt_q, p->w + d->att.w_q, (int)A, (int)H, (int)H);
    transpose(ws->wt_ih, p->w + d->cell.w_ih, (int)(4 * H), (int)In, (int)In);
    transpose(ws->wt_hh, p->w + d->cell.w_hh, (int)(4 * H), (int)H, (int)H);
    transpose(ws->wt_out, p->w + d->w_out, d->n_out, (int)L, (int)L);
    return HR_OK;
}

void nn_decoder_begin(const nn_decoder *d, const nn_params *p, nn_decoder_ws *ws, int B, int S,
                      const float *keys, const unsigned char *mask, const float *h0,
                      const float *c0)
{
    HR_ASSERT(B > 0 && B <= ws->max_batch && S > 0 && S <= ws->max_len);
    size_t bh = (size_t)B * d->hidden * sizeof(float);
    ws->batch = B;
    ws->len = S;
    ws->steps = 0;
    ws->keys = keys;
    ws->mask = mask;
    nn_attn_additive_keys(&d->att, p, B, S, keys, ws->kproj);
    if (h0)
        memcpy(ws->h, h0, bh);
    else
        memset(ws->h, 0, bh);
    if (c0)
        memcpy(ws->c, c0, bh);
    else
        memset(ws->c, 0, bh);
}

void nn_decoder_step(const nn_decoder *d, const nn_params *p, nn_decoder_ws *ws, const int *prev,
                     int vb, int ve, float *logits)
{
    int t = ws->steps, B = ws->batch, S = ws->len;
    int E = d->embed, Dk = d->key, H = d->hidden, A = d->attn, In = E + Dk, L = H + Dk, Vs = ve - vb;
    HR_ASSERT(t < ws->max_steps && 0 <= vb && vb < ve && ve <= d->n_out);
    size_t bh = (size_t)B * H;
    const float *hp = ws->h + t * bh, *cp = ws->c + t * bh;
    float *hn = ws->h + (t + 1) * bh, *cn = ws->c + (t + 1) * bh;
    float *xc = ws->xcat + (size_t)t * B * In; /* (B, E + Dk) */
    const float *emb = p->w + d->emb;

    for (int b = 0; b < B; b++) {
        HR_ASSERT(prev[b] >= 0 && prev[b] < d->n_in);
        ws->tokens[(size_t)t * B + b] = prev[b];
        memcpy(xc + (size_t)b * In, emb + (size_t)prev[b] * E, (size_t)E * sizeof(float));
    }
    nn_attn_additive_forward(&d->att, p, ws->wt_q, B, S, hp, ws->keys, ws->kproj, ws->mask,
                             ws->tanh_e + (size_t)t * B * S * A, ws->attw + (size_t)t * B * S, ws->ctx);
    for (int b = 0; b < B; b++)
        memcpy(xc + (size_t)b * In + E, ws->ctx + (size_t)b * Dk, (size_t)Dk * sizeof(float));
    nn_lstm_cell_forward(&d->cell, p, ws->wt_ih, ws->wt_hh, B, xc, In, hp, cp,
                         ws->gates + (size_t)t * B * 4 * H, cn, ws->tc + t * bh, hn);

    const float *wo = p->w + d->w_out + (size_t)vb * L, *bo = p->w + d->b_out + vb;
    for (int b = 0; b < B; b++) memcpy(logits + (size_t)b * Vs, bo, (size_t)Vs * sizeof(float));
    if (ws->wt_out) {
        const float *wt = ws->wt_out + vb; /* (H + Dk, n_out), columns [vb, ve) */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, Vs, H, 1.0f, hn, H, wt, d->n_out, 1.0f,
                    logits, Vs);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, Vs, Dk, 1.0f, xc + E, In,
                    wt + (size_t)H * d->n_out, d->n_out, 1.0f, logits, Vs);
    } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, Vs, H, 1.0f, hn, H, wo, L, 1.0f, logits,
                    Vs);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, Vs, Dk, 1.0f, xc + E, In, wo + H, L, 1.0f,
                    logits, Vs);
    }
    ws->vb[t] = vb;
    ws->ve[t] = ve;
    ws->steps = t + 1;
}

void nn_decoder_reorder(const nn_decoder *d, nn_decoder_ws *ws, const int *parent)
{
    int B = ws->batch, H = d->hidden;
    size_t bh = (size_t)B * H, row = (size_t)H * sizeof(float);
    float *h = ws->h + ws->steps * bh, *c = ws->c + ws->steps * bh;
    for (int r = 0; r < B; r++) {
        HR_ASSERT(parent[r] >= 0 && parent[r] < B);
        memcpy(ws->dh + (size_t)r * H, h + (size_t)parent[r] * H, row);
        memcpy(ws->dc + (size_t)r * H, c + (size_t)parent[r] * H, row);
    }
    memcpy(h, ws->dh, bh * sizeof(float));
    memcpy(c, ws->dc, bh * sizeof(float));
}

void nn_decoder_backward(const nn_decoder *d, nn_params *p, nn_decoder_ws *ws,
                         const float *const *dlogits, const float *dhn, const float *dcn,
                         float *dkeys, float *dh0, float *dc0)
{
    int B = ws->batch, S = ws->len, T = ws->steps;
    int E = d->embed, Dk = d->key, H = d->hidden, A = d->attn, In = E + Dk, L = H + Dk;
    size_t bh = (size_t)B * H;
    float *dh = ws->dh, *dh_prev = ws->dh_prev, *dc = ws->dc;
    float *demb = p->dw + d->emb, *dbo = p->dw + d->b_out;
    HR_ASSERT(ws->wt_q == NULL); /* a prepared (inference) workspace may hold stale weights */

    if (dhn)
        memcpy(dh, dhn, bh * sizeof(float));
    else
        memset(dh, 0, bh * sizeof(float));
    if (dcn)
        memcpy(dc, dcn, bh * sizeof(float));
    else
        memset(dc, 0, bh * sizeof(float));
    memset(ws->dkproj, 0, (size_t)B * S * A * sizeof(float));

    for (int t = T - 1; t >= 0; t--) {
        const float *hp = ws->h + t * bh, *cp = ws->c + t * bh, *hn = ws->h + (t + 1) * bh;
        const float *xc = ws->xcat + (size_t)t * B * In;
        const float *dl = dlogits ? dlogits[t] : NULL; /* (B, Vs) */
        int vb = ws->vb[t], Vs = ws->ve[t] - vb;
        if (dl) {
            const float *wo = p->w + d->w_out + (size_t)vb * L;
            float *dwo = p->dw + d->w_out + (size_t)vb * L;
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Vs, H, B, 1.0f, dl, Vs, hn, H, 1.0f, dwo,
                        L);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Vs, Dk, B, 1.0f, dl, Vs, xc + E, In, 1.0f,
                        dwo + H, L);
            for (int b = 0; b < B; b++)
                for (int j = 0; j < Vs; j++) dbo[vb + j] += dl[(size_t)b * Vs + j];
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, Vs, 1.0f, dl, Vs, wo, L, 1.0f, dh,
                        H);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, Dk, Vs, 1.0f, dl, Vs, wo + H, L, 0.0f,
                        ws->dctx, Dk);
        } else {
            memset(ws->dctx, 0, (size_t)B * Dk * sizeof(float));
        }
        memset(ws->dxcat, 0, (size_t)B * In * sizeof(float));
        nn_lstm_cell_backward(&d->cell, p, B, xc, In, hp, cp, ws->gates + (size_t)t * B * 4 * H,
                              ws->tc + t * bh, dh, dc, ws->dgates, ws->dxcat, dh_prev);
        for (int b = 0; b < B; b++) {
            const float *dx = ws->dxcat + (size_t)b * In;
            float *de = demb + (size_t)ws->tokens[(size_t)t * B + b] * E;
            for (int j = 0; j < E; j++) de[j] += dx[j];
            float *dcx = ws->dctx + (size_t)b * Dk;
            for (int j = 0; j < Dk; j++) dcx[j] += dx[E + j];
        }
        /* the query was h_{t-1}: its gradient joins dh_prev */
        nn_attn_additive_backward(&d->att, p, B, S, hp, ws->keys, ws->tanh_e + (size_t)t * B * S * A,
                                  ws->attw + (size_t)t * B * S, ws->dctx, ws->scratch, dh_prev, dkeys,
                                  ws->dkproj);
        float *tmp = dh;
        dh = dh_prev;
        dh_prev = tmp;
    }
    nn_attn_additive_keys_backward(&d->att, p, B, S, ws->keys, ws->dkproj, dkeys);
    for (size_t k = 0; k < bh; k++) {
        if (dh0) dh0[k] += dh[k];
        if (dc0) dc0[k] += dc[k];
    }
}
