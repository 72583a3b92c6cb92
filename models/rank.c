/* Ranking scores best first, of the kernels that can run a problem (model_applicable): model_rank with every
 * kernel's softmax probability, and without allocating the ranking a predictor hands out (heurist.h), of the
 * kernels a model knows or of any candidate configurations, which sorts only the k entries a caller asked for. */
#include <math.h>
#include <stdlib.h>

#include "models/models_internal.h"

/* higher score first, then the lower index */
static int cmp_ranked(const void *a, const void *b)
{
    const model_ranked *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return (x->kernel > y->kernel) - (x->kernel < y->kernel);
}

/* Quickselect (Hoare's partition around the middle element) until the k-th best sits at k - 1, so every entry
 * before it is better; then the first k are sorted. */
void model_ranked_top(model_ranked *r, int n, int k)
{
    if (k > n) k = n;
    if (k <= 0) return;
    int lo = 0, hi = n - 1;
    while (k < n && lo < hi) {
        model_ranked pivot = r[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (cmp_ranked(&r[i], &pivot) < 0) i++;
            while (cmp_ranked(&r[j], &pivot) > 0) j--;
            if (i <= j) {
                model_ranked t = r[i];
                r[i++] = r[j];
                r[j--] = t;
            }
        }
        if (k - 1 <= j) hi = j;
        else if (k - 1 >= i) lo = i;
        else break;
    }
    qsort(r, (size_t)k, sizeof *r, cmp_ranked);
}

/* The kernels that can run the problem (model_applicable) with a finite score, the k best sorted. */
int model_rank_within(const model *m, const double *pv, const float *scores, unsigned char *ok, int k,
                      model_ranked *out, model_applies *rule)
{
    model_applies r = model_applicable(m, pv, ok);
    if (rule) *rule = r;
    int n = 0, allowed = 0;
    for (int i = 0; i < m->n_kernels; i++) {
        allowed += ok[i];
        if (ok[i] && isfinite(scores[i])) out[n++] = (model_ranked){i, scores[i], 0};
    }
    /* an empty ranking is no answer: every kernel refused by the problem's precision class, or the allowed ones
     * scored NaN or infinite by a diverged or damaged model */
    if (n == 0 && !allowed)
        return hr_error(HR_ESTATE, "no kernel of this model is allowed for the problem's precision class");
    if (n == 0)
        return hr_error(HR_ESTATE, "no %s gets a finite score (the model's scores are NaN or infinite)",
                        m->kernel_values ? "configuration" : "kernel");
    model_ranked_top(out, n, k);
    return n;
}

int model_rank(const model *m, const double *pv, const float *scores, model_ranked *out, model_applies *rule)
{
    unsigned char *ok = hr_malloc((size_t)(m->n_kernels > 0 ? m->n_kernels : 1));
    if (!ok) return HR_ENOMEM;
    int n = model_rank_within(m, pv, scores, ok, m->n_kernels, out, rule);
    free(ok);
    /* softmax over the ranked kernels, in double, shifted by the largest score (the first) */
    double z = 0;
    for (int i = 0; i < n; i++) z += exp((double)out[i].score - out[0].score);
    for (int i = 0; i < n; i++) out[i].prob = (float)(exp((double)out[i].score - out[0].score) / z);
    return n;
}

int model_rank_problem(const model *m, model_ws *ws, const double *pv, int k, model_ranked *out, model_applies *rule)
{
    float *scores = model_ws_scores(ws);
    unsigned char *ok = model_ws_mask(ws);
    /* the kernels that can run the problem are scored (model_rank_within tells them again, and the errors) */
    model_applicable(m, pv, ok);
    int rc = model_predict_within(m, ws, pv, ok, scores);
    return rc ? rc : model_rank_within(m, pv, scores, ok, k, out, rule);
}

int model_rank_candidates(const model *m, model_ws *ws, const double *pv, const double *kv, int n, int k, float *scores,
                          model_ranked *out)
{
    float *x = model_ws_features(ws);
    data_codec_features(m->codec, pv, x);
    int rc = model_predict_candidates(m, ws, x, kv, n, scores), ranked = 0;
    if (rc) return rc;
    for (int i = 0; i < n; i++)
        if (isfinite(scores[i])) out[ranked++] = (model_ranked){i, scores[i], 0};
    if (!ranked)
        return hr_error(HR_ESTATE, "none of the %d candidate configurations gets a finite score (a configuration a model "
                        "knows by name only must be one it knows)", n);
    model_ranked_top(out, ranked, k);
    return ranked;
}
