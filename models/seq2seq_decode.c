/* seq2seq inference: the encoder on one problem, then greedy, beam or constrained beam decoding.
 * Everything runs in a workspace the caller creates once for the model (s2s_infer_create), so a prediction
 * allocates nothing and only reads the model: threads with a workspace each can share one model.
 * Beam search keeps k hypotheses ranked by summed log-probability; all have the same length L, so
 * no length normalisation is needed. Constrained search asks the problem's constraint (data_constraint_check) before
 * keeping an extension, so every emitted sequence satisfies the rules (paper's "constrained beam
 * search"); the rules come through data_constraint only, so a new solver needs no change here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/seq2seq_internal.h"

#define S2S_DFS_BUDGET 20000 /* decoder steps the fallback search may take */

struct s2s_infer {
    int cap_k;                     /* beam rows the decoder workspace holds (>= length) */
    int vmax;                      /* largest position vocabulary */
    int *ids;                      /* (S) */
    float *x0, *x1;                /* (S, width) ping-pong encoder activations */
    float *keys;                   /* (cap_k, S, Dk): encoder output replicated per beam row */
    int *gid;                      /* (cap_k) decoder input ids */
    float *logits;                 /* (cap_k, vmax) */
    nn_conv1d_cache conv[S2S_MAX_CONV];
    nn_bilstm_cache bi[S2S_MAX_LSTM];
    nn_lstm_cache uni[S2S_MAX_LSTM];
    nn_decoder_ws dec;             /* prepared (transposed weights) */
    s2s_beam_ws beam;
    long fallbacks;
};

/* ---- beam search core ---- */

int s2s_beam_ws_init(s2s_beam_ws *bw, int k, int L, int vmax)
{
    memset(bw, 0, sizeof *bw);
    bw->k = k;
    bw->L = L;
    bw->vmax = vmax;
    size_t K = (size_t)k;
    bw->score = hr_calloc(K, sizeof(float));
    bw->cand_score = hr_calloc(K, sizeof(float));
    bw->cand_beam = hr_calloc(K, sizeof(int));
    bw->cand_tok = hr_calloc(K, sizeof(int));
    bw->vals = hr_calloc(K * L, sizeof(int32_t));
    bw->vals_new = hr_calloc(K * L, sizeof(int32_t));
    bw->parent = hr_calloc(K, sizeof(int));
    bw->prev = hr_calloc(K, sizeof(int));
    bw->logp = hr_calloc(K * vmax, sizeof(float));
    if (!bw->score || !bw->cand_score || !bw->cand_beam || !bw->cand_tok || !bw->vals || !bw->vals_new ||
        !bw->parent || !bw->prev || !bw->logp) {
        s2s_beam_ws_free(bw);
        return HR_ENOMEM;
    }
    return HR_OK;
}

void s2s_beam_ws_free(s2s_beam_ws *bw)
{
    free(bw->score);
    free(bw->cand_score);
    free(bw->cand_beam);
    free(bw->cand_tok);
    free(bw->vals);
    free(bw->vals_new);
    free(bw->parent);
    free(bw->prev);
    free(bw->logp);
    memset(bw, 0, sizeof *bw);
}

/* Best n_c (<= k) extensions of n_act hypotheses at position j, descending; ties keep the earlier
 * (hypothesis, token), so the search is deterministic. Validity is only asked of extensions that
 * would enter the list. Returns n_c. */
static int beam_select(s2s_beam_ws *bw, int k, int n_act, int j, int V, const int32_t *vocab_j,
                       const data_constraint *con, const data_tune_problem *q)
{
    int n_c = 0;
    const int L = bw->L;
    for (int b = 0; b < n_act; b++) {
        const float *lp = bw->logp + (size_t)b * V;
        int32_t *row = bw->vals + (size_t)b * L;
        for (int v = 0; v < V; v++) {
            float s = bw->score[b] + lp[v];
            if (n_c == k && !(s > bw->cand_score[k - 1])) continue;
            if (con) {
                row[j] = vocab_j[v];
                if (!data_constraint_check(con, q, row, j + 1)) continue;
            }
            int pos = n_c < k ? n_c++ : k - 1;
            while (pos > 0 && s > bw->cand_score[pos - 1]) {
                bw->cand_score[pos] = bw->cand_score[pos - 1];
                bw->cand_beam[pos] = bw->cand_beam[pos - 1];
                bw->cand_tok[pos] = bw->cand_tok[pos - 1];
                pos--;
            }
            bw->cand_score[pos] = s;
            bw->cand_beam[pos] = b;
            bw->cand_tok[pos] = v;
        }
    }
    return n_c;
}

void s2s_beam_search(s2s_beam_ws *bw, int k, int L, const int *vsize, const int32_t *const *vocab,
                     const data_constraint *con, const data_tune_problem *q, s2s_step_fn step, void *ctx,
                     int32_t *out, int *fallback)
{
    HR_ASSERT(k >= 1 && k <= bw->k && L == bw->L);
    int n_act = 1, fell = 0;
    bw->score[0] = 0.0f;
    for (int r = 0; r < k; r++) bw->prev[r] = 0;
    for (int j = 0; j < L; j++) {
        HR_ASSERT(vsize[j] <= bw->vmax);
        step(ctx, j, k, j ? bw->parent : NULL, bw->prev, bw->logp);
        int n_c = beam_select(bw, k, n_act, j, vsize[j], vocab[j], fell ? NULL : con, q);
        if (n_c == 0) { /* no valid extension of any hypothesis: give up on the rules */
            fell = 1;
            n_c = beam_select(bw, k, n_act, j, vsize[j], vocab[j], NULL, q);
        }
        for (int c = 0; c < n_c; c++) {
            int b = bw->cand_beam[c];
            memcpy(bw->vals_new + (size_t)c * L, bw->vals + (size_t)b * L, (size_t)j * sizeof(int32_t));
            bw->vals_new[(size_t)c * L + j] = vocab[j][bw->cand_tok[c]];
            bw->parent[c] = b;
            bw->prev[c] = bw->cand_tok[c];
            bw->score[c] = bw->cand_score[c];
        }
        for (int c = n_c; c < k; c++) { /* idle rows follow the best hypothesis */
            bw->parent[c] = bw->parent[0];
            bw->prev[c] = bw->prev[0];
        }
        int32_t *t = bw->vals;
        bw->vals = bw->vals_new;
        bw->vals_new = t;
        n_act = n_c;
    }
    memcpy(out, bw->vals, (size_t)L * sizeof *out);
    if (fallback) *fallback = fell;
}

/* ---- encoder ---- */

/* keys row 0 (S, Dk) = encoder(q) */
static void infer_encode(const seq2seq *m, s2s_infer *w, const data_tune_problem *q)
{
    const int S = m->n_fields;
    s2s_encode_ids(m, q, w->ids);
    nn_embedding_forward(&m->emb, &m->p, w->ids, w->x0, S);
    float *x = w->x0, *y = w->x1;
    for (int l = 0; l < m->a.conv_layers; l++) {
        nn_conv1d_forward(&m->conv[l], &m->p, &w->conv[l], 1, S, x, y);
        nn_relu_forward(y, y, (size_t)S * m->a.conv_channels);
        float *t = x;
        x = y;
        y = t;
    }
    for (int l = 0; l < m->a.lstm_layers; l++) {
        float *dst = l == m->a.lstm_layers - 1 ? w->keys : y;
        if (m->a.bidir)
            nn_bilstm_forward(&m->bi[l], &m->p, &w->bi[l], 1, S, x, NULL, NULL, dst, NULL, NULL);
        else
            nn_lstm_forward(&m->uni[l], &m->p, &w->uni[l], 1, S, x, NULL, NULL, dst, NULL, NULL);
        float *t = x;
        x = dst;
        y = t;
    }
}

/* ---- decoding ---- */

static void log_softmax_rows(float *z, int rows, int V)
{
    for (int r = 0; r < rows; r++) {
        float *x = z + (size_t)r * V, mx = x[0];
        for (int v = 1; v < V; v++) mx = x[v] > mx ? x[v] : mx;
        float s = 0.0f;
        for (int v = 0; v < V; v++) s += expf(x[v] - mx);
        float lse = mx + logf(s);
        for (int v = 0; v < V; v++) x[v] -= lse;
    }
}

typedef struct step_ctx {
    const seq2seq *m;
    s2s_infer *w;
} step_ctx;

static void model_step(void *vctx, int j, int rows, const int *parent, const int *prev, float *logp)
{
    step_ctx *c = vctx;
    const seq2seq *m = c->m;
    s2s_infer *w = c->w;
    if (parent) nn_decoder_reorder(&m->dec, &w->dec, parent);
    for (int r = 0; r < rows; r++) w->gid[r] = j ? 1 + m->vb[j - 1] + prev[r] : 0;
    nn_decoder_step(&m->dec, &m->p, &w->dec, w->gid, m->vb[j], m->ve[j], logp);
    log_softmax_rows(logp, rows, m->ve[j] - m->vb[j]);
}

/* Depth-first search over positions j.. in descending model probability, skipping values the rules
 * reject; the decoder state after step j-1 stays at index j of the workspace, so backtracking is
 * rewinding ws->steps. Returns 1 with v (L) valid, 0 when the budget of steps runs out first. */
static int dfs_valid(const seq2seq *m, s2s_infer *w, const data_tune_problem *q, const data_constraint *con, int j,
                     int prev, int32_t *v, long *budget)
{
    const int L = m->base.length;
    if (j == L) return 1;
    if (--*budget < 0) return 0;
    const int V = m->ve[j] - m->vb[j];
    float *z = w->logits + (size_t)j * w->vmax; /* one row per depth: deeper calls keep ours */
    w->dec.steps = j;
    w->gid[0] = j ? 1 + m->vb[j - 1] + prev : 0;
    nn_decoder_step(&m->dec, &m->p, &w->dec, w->gid, m->vb[j], m->ve[j], z);
    for (int tried = 0; tried < V; tried++) {
        int best = -1;
        for (int t = 0; t < V; t++)
            if (z[t] != -INFINITY && (best < 0 || z[t] > z[best])) best = t;
        if (best < 0) break;
        z[best] = -INFINITY;
        v[j] = m->base.vocab[j][best];
        if (!data_constraint_check(con, q, v, j + 1)) continue;
        if (dfs_valid(m, w, q, con, j + 1, best, v, budget)) return 1;
        if (*budget < 0) return 0;
    }
    return 0;
}

int s2s_decode(const seq2seq *m, s2s_infer *w, const data_tune_problem *q, s2s_decode_kind kind, int k,
               int32_t *values, int *fallback)
{
    const int S = m->n_fields, L = m->base.length, Dk = m->key;
    if (fallback) *fallback = 0;
    if (kind == S2S_DECODE_GREEDY) k = 1;
    if (k < 1 || k > w->cap_k) return hr_error(HR_EINVAL, "seq2seq: beam width %d outside [1, %d]", k, w->cap_k);
    infer_encode(m, w, q);
    for (int r = 1; r < k; r++) memcpy(w->keys + (size_t)r * S * Dk, w->keys, (size_t)S * Dk * sizeof(float));
    nn_decoder_begin(&m->dec, &m->p, &w->dec, k, S, w->keys, NULL, NULL, NULL);
    if (kind == S2S_DECODE_GREEDY) {
        int tok = 0;
        for (int j = 0; j < L; j++) {
            w->gid[0] = j ? 1 + m->vb[j - 1] + tok : 0;
            nn_decoder_step(&m->dec, &m->p, &w->dec, w->gid, m->vb[j], m->ve[j], w->logits);
            int V = m->ve[j] - m->vb[j];
            tok = 0;
            for (int v = 1; v < V; v++)
                if (w->logits[v] > w->logits[tok]) tok = v;
            values[j] = m->base.vocab[j][tok];
        }
        return HR_OK;
    }
    const data_constraint *con = kind == S2S_DECODE_CONSTRAINED ? m->base.constraint : NULL;
    if (con && con->length != L) con = NULL; /* rules for another parameter list: not applicable */
    /* candidates without rules: a constraint of the model's length that only they make */
    data_constraint only_cand = {"measured", L, NULL, NULL, NULL, NULL};
    if (kind == S2S_DECODE_CONSTRAINED && !con && q->cand) con = &only_cand;
    step_ctx c = {m, w};
    int fell = 0;
    const int32_t *const *vocab = (const int32_t *const *)m->base.vocab;
    s2s_beam_search(&w->beam, k, L, m->base.vocab_size, vocab, con, q, model_step, &c, values, &fell);
    if (fell && con) {
        /* every hypothesis ran into a dead end (a valid prefix with no valid completion): find the
         * first valid sequence in the model's order by depth-first search with backtracking */
        int32_t *v = w->beam.vals_new; /* free between searches */
        long budget = S2S_DFS_BUDGET;
        nn_decoder_begin(&m->dec, &m->p, &w->dec, 1, S, w->keys, NULL, NULL, NULL);
        if (dfs_valid(m, w, q, con, 0, 0, v, &budget)) {
            memcpy(values, v, (size_t)L * sizeof *values);
            fell = 0;
        }
    }
    if (fell) w->fallbacks++;
    if (fallback) *fallback = fell;
    return HR_OK;
}

long s2s_fallback_count(const s2s_infer *w)
{
    return w->fallbacks;
}

/* ---- workspace ---- */

void s2s_infer_free(s2s_infer *w)
{
    if (!w) return;
    free(w->ids);
    free(w->x0);
    free(w->x1);
    free(w->keys);
    free(w->gid);
    free(w->logits);
    for (int l = 0; l < S2S_MAX_CONV; l++) nn_conv1d_cache_free(&w->conv[l]);
    for (int l = 0; l < S2S_MAX_LSTM; l++) {
        nn_bilstm_cache_free(&w->bi[l]);
        nn_lstm_cache_free(&w->uni[l]);
    }
    nn_decoder_ws_free(&w->dec);
    s2s_beam_ws_free(&w->beam);
    free(w);
}

int s2s_infer_create(const seq2seq *m, s2s_infer **out)
{
    *out = NULL;
    s2s_infer *w = hr_calloc(1, sizeof *w);
    if (!w) return HR_ENOMEM;
    const int S = m->n_fields, L = m->base.length;
    int vmax = 1;
    for (int j = 0; j < L; j++) vmax = m->base.vocab_size[j] > vmax ? m->base.vocab_size[j] : vmax;
    w->cap_k = m->a.beam > S2S_MAX_BEAM ? m->a.beam : S2S_MAX_BEAM;
    if (w->cap_k < L) w->cap_k = L; /* w->logits doubles as per-depth rows of the fallback search */
    w->vmax = vmax;
    size_t width = (size_t)s2s_enc_width(m);
    int rc = HR_OK;
    w->ids = hr_calloc((size_t)S, sizeof *w->ids);
    w->x0 = hr_calloc((size_t)S * width, sizeof(float));
    w->x1 = hr_calloc((size_t)S * width, sizeof(float));
    w->keys = hr_calloc((size_t)w->cap_k * S * m->key, sizeof(float));
    w->gid = hr_calloc((size_t)w->cap_k, sizeof(int));
    w->logits = hr_calloc((size_t)w->cap_k * vmax, sizeof(float));
    if (!w->ids || !w->x0 || !w->x1 || !w->keys || !w->gid || !w->logits) rc = HR_ENOMEM;
    for (int l = 0; !rc && l < m->a.conv_layers; l++) rc = nn_conv1d_cache_init(&w->conv[l], &m->conv[l], 1, S);
    for (int l = 0; !rc && l < m->a.lstm_layers; l++)
        rc = m->a.bidir ? nn_bilstm_cache_init(&w->bi[l], 1, S, m->a.hidden)
                        : nn_lstm_cache_init(&w->uni[l], 1, S, m->a.hidden);
    if (!rc) rc = nn_decoder_ws_init(&w->dec, &m->dec, w->cap_k, S, L);
    if (!rc) rc = nn_decoder_ws_prepare(&w->dec, &m->dec, &m->p);
    if (!rc) rc = s2s_beam_ws_init(&w->beam, w->cap_k, L, vmax);
    if (rc) {
        s2s_infer_free(w);
        return rc;
    }
    *out = w;
    return HR_OK;
}

/* ---- the family's prediction ---- */

int s2s_ws_create(const model *mb, void **out)
{
    s2s_infer *w = NULL;
    int rc = s2s_infer_create((const seq2seq *)mb, &w);
    *out = w;
    return rc;
}

void s2s_ws_free(void *ws)
{
    s2s_infer_free(ws);
}

/* Index of value v in position j's vocabulary, -1 when the model never writes v there */
static int token_of(const seq2seq *m, int j, int32_t v)
{
    for (int t = 0; t < m->base.vocab_size[j]; t++)
        if (m->base.vocab[j][t] == v) return t;
    return -1;
}

/* Each sequence's log-probability by teacher forcing, one row at a time: the log-softmax of each value given the
 * ones before it, summed in order as the beam sums its hypotheses' scores. */
int s2s_score(const model *mb, void *ws, const data_tune_problem *q, const float *x, const int32_t *const *seqs, int n,
              float *scores)
{
    (void)x;
    const seq2seq *m = (const seq2seq *)mb;
    s2s_infer *w = ws;
    const int S = m->n_fields, L = m->base.length;
    infer_encode(m, w, q);
    for (int i = 0; i < n; i++) {
        nn_decoder_begin(&m->dec, &m->p, &w->dec, 1, S, w->keys, NULL, NULL, NULL);
        float s = 0.0f;
        for (int j = 0, prev = 0; j < L; j++) {
            int t = token_of(m, j, seqs[i][j]);
            if (t < 0) {
                s = -INFINITY;
                break;
            }
            w->gid[0] = j ? 1 + m->vb[j - 1] + prev : 0;
            nn_decoder_step(&m->dec, &m->p, &w->dec, w->gid, m->vb[j], m->ve[j], w->logits);
            log_softmax_rows(w->logits, 1, m->ve[j] - m->vb[j]);
            s += w->logits[t];
            prev = t;
        }
        scores[i] = s;
    }
    return HR_OK;
}

/* A problem as the decoder takes it: its candidates only when the model decodes in the measured space. */
int s2s_predict(const model *mb, void *ws, const data_tune_problem *q, const float *x, int32_t *values)
{
    (void)x;
    const seq2seq *m = (const seq2seq *)mb;
    data_tune_problem own = *q;
    if (m->a.space != S2S_SPACE_MEASURED) own.cand = NULL, own.n_cand = 0;
    return s2s_decode(m, ws, &own, m->a.decode, m->a.beam, values, NULL);
}
