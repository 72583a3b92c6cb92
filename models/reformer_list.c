/* The listwise training of the Reformer's pairs and towers heads (models/reformer_internal.h): per problem of a
 * benchmark table, the softmax of its measured candidates' scores against the runtime-ratio labels restricted to
 * them (data_labels_fill_ties: softmax over -t/(tau t_min), soft ratio or one-hot, a candidate within tie_ratio of
 * the fastest counted as the fastest), a mini-batch of problems flattened
 * into their candidates with per-problem offsets (nn_xent_seg_*). The head gathers the inputs and scores them
 * from the trunk's output; this file holds the candidate sets, the batch's loss and gradient through the head and
 * the trunk, the validation chunks and the loop. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "models/reformer_internal.h"

void reformer_cands_free(reformer_cands *c)
{
    free(c->pos);
    free(c->off);
    free(c->kern);
    free(c->y);
    memset(c, 0, sizeof *c);
}

int reformer_cands_init(reformer_cands *c, const reformer *r, const data_select *sel, const int *rows, int n)
{
    memset(c, 0, sizeof *c);
    c->rows = rows;
    c->n = n;
    const int K = sel->n_kernels;
    long nnz = 0;
    for (int i = 0; i < n; i++) {
        const float *t = sel->runtime + (size_t)rows[i] * K;
        int m = 0;
        for (int k = 0; k < K; k++) m += isfinite(t[k]) != 0;
        nnz += m;
        c->most = m > c->most ? m : c->most;
    }
    float *yrow = hr_malloc((size_t)K * sizeof *yrow);
    c->pos = hr_malloc((size_t)(n ? n : 1) * sizeof *c->pos);
    c->off = hr_malloc((size_t)(n + 1) * sizeof *c->off);
    c->kern = hr_malloc((size_t)(nnz ? nnz : 1) * sizeof *c->kern);
    c->y = hr_malloc((size_t)(nnz ? nnz : 1) * sizeof *c->y);
    if (!yrow || !c->pos || !c->off || !c->kern || !c->y) {
        free(yrow);
        reformer_cands_free(c);
        return HR_ENOMEM;
    }
    int e = 0;
    c->off[0] = 0;
    for (int i = 0; i < n; i++) {
        const int row = rows[i];
        const float *t = sel->runtime + (size_t)row * K;
        c->pos[i] = i;
        /* the labels are 0 off the measured configurations, so restricting them to those keeps their sum */
        data_labels_fill_ties(sel, &row, 1, r->label, r->tau, r->tie, yrow);
        for (int k = 0; k < K; k++)
            if (isfinite(t[k])) {
                c->kern[e] = k;
                c->y[e++] = yrow[k];
            }
        c->off[i + 1] = e;
    }
    free(yrow);
    return HR_OK;
}

static void list_free(reformer_list *f)
{
    if (f->own) f->h->free(f);
    reformer_cands_free(&f->set[0]);
    reformer_cands_free(&f->set[1]);
    free(f->off);
    reformer_trunk_bufs_free(&f->t, f->r);
    free(f->logit);
    free(f->prob);
    free(f->y);
    free(f->dlogit);
}

/* The candidate sets, the batch buffers, then the head's (which takes train_in over) */
static int list_init(reformer_list *f, reformer *r, const reformer_list_head *h, const model_train_data *d,
                     int batch, float *train_in)
{
    memset(f, 0, sizeof *f);
    f->r = r;
    f->d = d;
    f->h = h;
    int rc = reformer_cands_init(&f->set[0], r, d->sel, d->train, d->n_train);
    if (!rc) rc = reformer_cands_init(&f->set[1], r, d->sel, d->valid, d->n_valid);
    /* a batch's candidates are at most batch times the most of one problem; evaluation fills chunks up to
     * that as well, and one problem alone always fits */
    long cap = (long)batch * f->set[0].most;
    cap = cap > f->set[1].most ? cap : f->set[1].most;
    cap = cap > REFORMER_PAIR_CHUNK ? cap : REFORMER_PAIR_CHUNK;
    if (!rc && cap > (1L << 30)) rc = hr_error(HR_EINVAL, "reformer %s: %ld candidates in a batch", r->mode->name, cap);
    if (!rc) {
        f->cap = (int)cap;
        /* per problem, a chunk of the trunk's rows holds at most cap problems of one candidate each; per
         * candidate, the offsets of a chunk of the validation set */
        f->cap_prob = h->per_problem ? (batch > f->cap ? batch : f->cap) : (batch > f->set[1].n ? batch : f->set[1].n);
        const size_t c = (size_t)cap;
        if (!(f->off = hr_malloc(((size_t)f->cap_prob + 1) * sizeof *f->off))) rc = HR_ENOMEM;
        if (!rc) rc = reformer_trunk_bufs_init(&f->t, r, h->per_problem ? f->cap_prob : f->cap);
        if (!rc && (!(f->logit = hr_calloc(c, sizeof(float))) || !(f->prob = hr_calloc(c, sizeof(float))) ||
                    !(f->y = hr_calloc(c, sizeof(float))) || !(f->dlogit = hr_calloc(c, sizeof(float)))))
            rc = HR_ENOMEM;
    }
    if (rc) free(train_in);
    else rc = h->init(f, train_in);
    if (rc) list_free(f);
    return rc;
}

/* the trunk over the batch's rows (its n problems or N candidates), the head's scores, the listwise loss */
static float list_forward(reformer_list *f, int n, int N, int train, hr_rng *rng)
{
    reformer_trunk_forward(f->r, f->t.cache, f->t.act, 0, f->h->per_problem ? n : N, train, rng);
    f->h->forward(f, n, N);
    return nn_xent_seg_forward(f->logit, f->y, f->off, n, f->prob);
}

static int list_batch(void *ctx, const int *pos, int n, hr_rng *rng, float *loss)
{
    reformer_list *f = ctx;
    const int N = f->h->gather(f, 0, pos, n), rows = f->h->per_problem ? n : N;
    if (rows < 2 || N < 2) { /* BatchNorm needs two rows; a batch without two measurements teaches nothing */
        *loss = 0.0f;
        return HR_OK;
    }
    *loss = list_forward(f, n, N, 1, rng);
    memset(f->dlogit, 0, (size_t)N * sizeof *f->dlogit);
    nn_xent_seg_backward(f->prob, f->y, f->off, n, f->dlogit, 1.0f);
    f->h->backward(f, n, N);
    reformer_trunk_backward(f->r, &f->r->p, f->t.cache, f->t.act, f->t.dact, rows);
    return HR_OK;
}

/* Validation: chunks of whole problems up to cap candidates and cap_prob problems; loss per problem, top-1 by
 * eval/'s rule over each problem's candidates. */
static int list_evaluate(void *ctx, const int *pos, int n, float *loss, float *metric)
{
    reformer_list *f = ctx;
    const reformer_cands *s = &f->set[1];
    const data_select *sel = f->d->sel;
    const int K = sel->n_kernels;
    double sum = 0.0;
    long hits = 0;
    for (int i = 0; i < n;) {
        int m = 0, N = 0;
        while (i + m < n && m < f->cap_prob && N + s->off[pos[i + m] + 1] - s->off[pos[i + m]] <= f->cap) {
            N += s->off[pos[i + m] + 1] - s->off[pos[i + m]];
            m++;
        }
        N = f->h->gather(f, 1, pos + i, m);
        sum += (double)list_forward(f, m, N, 0, NULL) * m;
        for (int q = 0; q < m; q++) {
            const int p = pos[i + q];
            hits += eval_select_list_hit(sel->runtime + (size_t)s->rows[p] * K, K, s->kern + s->off[p],
                                         f->logit + f->off[q], f->off[q + 1] - f->off[q]);
        }
        i += m;
    }
    *loss = n ? (float)(sum / n) : 0.0f;
    *metric = n ? (float)hits / (float)n : 0.0f;
    return HR_OK;
}

int reformer_list_fit(reformer *r, const reformer_list_head *h, const model_train_data *d, const train_opts *o,
                      float *train_in)
{
    reformer_list fit;
    int rc = list_init(&fit, r, h, d, o->batch_size, train_in);
    if (rc) return rc;
    train_ops ops = {list_batch, list_evaluate};
    train_result res;
    rc = train_run(&ops, &fit, &r->p, &r->state, fit.set[0].pos, d->n_train, fit.set[1].pos, d->n_valid, o, &res);
    list_free(&fit);
    if (!rc) rc = model_loop_curve(&r->base, &res);
    train_result_free(&res);
    return rc;
}
