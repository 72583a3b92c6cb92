/* The transformer family's mini-batch step (models/transformer_internal.h) through the shared loop of train/:
 * soft-target cross-entropy of the head's logits, the token embedding, the block, the pooling and the head's
 * gradients, and validation with eval/'s top-1. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "models/model.h"
#include "models/transformer_internal.h"
#include "nn/nn.h"
#include "train/train.h"

typedef struct tfm_fit {
    tfm *m;
    const data_select *sel;
    const float *X;
    int cap;
    nn_transformer_cache cache;
    float *z;                          /* (cap, T) */
    float *e, *h, *de, *dh;            /* (cap, T, d) */
    float *pooled, *dpooled;           /* (cap, d) */
    float *logits, *prob, *y, *dlogits; /* (cap, K) */
} tfm_fit;

static void fit_free(tfm_fit *f)
{
    nn_transformer_cache_free(&f->cache);
    float *bufs[] = {f->z, f->e, f->h, f->de, f->dh, f->pooled, f->dpooled, f->logits, f->prob, f->y, f->dlogits};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]);
}

static int fit_init(tfm_fit *f, tfm *m, const model_train_data *d, int cap)
{
    memset(f, 0, sizeof *f);
    f->m = m;
    f->sel = d->sel;
    f->X = d->X;
    f->cap = cap;
    const size_t c = (size_t)cap, T = (size_t)m->base.n_features, D = (size_t)m->d, K = (size_t)m->base.n_kernels;
    int rc = nn_transformer_cache_init(&f->cache, &m->block, cap, (int)T);
    float **bufs[] = {&f->z, &f->e, &f->h, &f->de, &f->dh, &f->pooled, &f->dpooled, &f->logits, &f->prob, &f->y,
                      &f->dlogits};
    size_t sizes[] = {c * T, c * T * D, c * T * D, c * T * D, c * T * D, c * D, c * D, c * K, c * K, c * K, c * K};
    for (size_t i = 0; !rc && i < sizeof sizes / sizeof *sizes; i++)
        if (!(*bufs[i] = hr_calloc(sizes[i], sizeof(float)))) rc = HR_ENOMEM;
    if (rc) fit_free(f);
    return rc;
}

static void fit_forward(tfm_fit *f, const int *rows, int n)
{
    tfm *m = f->m;
    const int T = m->base.n_features;
    HR_ASSERT(n <= f->cap);
    train_gather_zscore(f->X, T, rows, n, m->zmean, m->zstd, f->z);
    transformer_embed(m, f->z, f->e, n);
    nn_transformer_forward(&m->block, &m->p, &f->cache, f->e, f->h, n, T);
    transformer_pool(f->h, f->pooled, n, T, m->d);
    nn_linear_forward(&m->head, &m->p, f->pooled, f->logits, n);
    data_labels_fill(f->sel, rows, n, m->label, m->tau, f->y);
}

static int fit_batch(void *ctx, const int *rows, int n, hr_rng *rng, float *loss)
{
    tfm_fit *f = ctx;
    tfm *m = f->m;
    const int T = m->base.n_features, d = m->d, K = m->base.n_kernels;
    fit_forward(f, rows, n);
    *loss = nn_xent_forward(f->logits, f->y, f->prob, n, K);
    memset(f->dlogits, 0, (size_t)n * K * sizeof *f->dlogits);
    nn_xent_backward(f->prob, f->y, f->dlogits, n, K, 1.0f);
    memset(f->dpooled, 0, (size_t)n * d * sizeof *f->dpooled);
    nn_linear_backward(&m->head, &m->p, f->pooled, f->dlogits, f->dpooled, n);
    /* mean-pool backward: every token receives dpooled / T */
    for (int b = 0; b < n; b++)
        for (int j = 0; j < T; j++)
            for (int k = 0; k < d; k++) f->dh[((size_t)b * T + j) * d + k] = f->dpooled[(size_t)b * d + k] / (float)T;
    memset(f->de, 0, (size_t)n * T * d * sizeof *f->de);
    nn_transformer_backward(&m->block, &m->p, &f->cache, f->e, f->dh, f->de, n, T);
    /* dw_j += sum_b de_bj z_bj; dp_j += sum_b de_bj */
    float *dw = m->p.dw + m->value, *dp = m->p.dw + m->pos;
    for (int b = 0; b < n; b++)
        for (int j = 0; j < T; j++) {
            const float *der = f->de + ((size_t)b * T + j) * d;
            float zj = f->z[(size_t)b * T + j];
            for (int k = 0; k < d; k++) {
                dw[(size_t)j * d + k] += der[k] * zj;
                dp[(size_t)j * d + k] += der[k];
            }
        }
    (void)rng;
    return HR_OK;
}

static int fit_evaluate(void *ctx, const int *rows, int n, float *loss, float *metric)
{
    tfm_fit *f = ctx;
    double sum = 0.0;
    long hits = 0;
    for (int i = 0; i < n; i += f->cap) {
        int b = n - i < f->cap ? n - i : f->cap;
        fit_forward(f, rows + i, b);
        sum += (double)nn_xent_forward(f->logits, f->y, f->prob, b, f->m->base.n_kernels) * b;
        hits += eval_select_hits(f->sel->runtime, f->m->base.n_kernels, rows + i, f->logits, b);
    }
    *loss = (float)(sum / n);
    *metric = (float)hits / (float)n;
    return HR_OK;
}

int transformer_fit(tfm *m, const model_train_data *d, const train_opts *o, int cap)
{
    tfm_fit fit;
    int rc = fit_init(&fit, m, d, cap);
    if (rc) return rc;
    train_ops ops = {fit_batch, fit_evaluate};
    train_result res;
    rc = train_run(&ops, &fit, &m->p, NULL, d->train, d->n_train, d->valid, d->n_valid, o, &res);
    fit_free(&fit);
    if (!rc) rc = model_loop_curve(&m->base, &res);
    train_result_free(&res);
    return rc;
}
