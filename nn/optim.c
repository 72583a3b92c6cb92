/* Optimizers (PyTorch's SGD, Adam and AdamW update rules), global-norm gradient clipping and learning-rate
 * schedules. Each update is one pass over the flat parameter block. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "nn/nn.h"

nn_optim_config nn_optim_defaults(nn_optim_kind kind)
{
    nn_optim_config c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.momentum = 0.9f;
    c.beta1 = 0.9f;
    c.beta2 = 0.999f;
    c.eps = 1e-8f;
    c.weight_decay = kind == NN_OPTIM_ADAMW ? 0.01f : 0.0f;
    return c;
}

int nn_optim_init(nn_optim *o, const nn_optim_config *cfg, size_t n)
{
    memset(o, 0, sizeof *o);
    if (cfg->kind != NN_OPTIM_SGD && cfg->kind != NN_OPTIM_ADAM && cfg->kind != NN_OPTIM_ADAMW)
        return hr_error(HR_EINVAL, "unknown optimizer kind %d", (int)cfg->kind);
    if (cfg->weight_decay < 0.0f || cfg->momentum < 0.0f || cfg->beta1 < 0.0f || cfg->beta1 >= 1.0f ||
        cfg->beta2 < 0.0f || cfg->beta2 >= 1.0f || cfg->eps < 0.0f)
        return hr_error(HR_EINVAL, "optimizer: momentum, weight decay, eps must be >= 0 and betas in [0, 1)");
    o->cfg = *cfg;
    o->n = n;
    o->m = hr_calloc(n, sizeof *o->m);
    if (cfg->kind != NN_OPTIM_SGD) o->v = hr_calloc(n, sizeof *o->v);
    if (!o->m || (cfg->kind != NN_OPTIM_SGD && !o->v)) {
        nn_optim_free(o);
        return HR_ENOMEM;
    }
    return HR_OK;
}

void nn_optim_free(nn_optim *o)
{
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
}

static void sgd_step(nn_optim *o, nn_params *p, float lr, size_t lo, size_t hi)
{
    const float mu = o->cfg.momentum, wd = o->cfg.weight_decay;
    float *w = p->w, *m = o->m;
    const float *dw = p->dw;
    /* a zero-initialised buffer makes the first step m = g, as PyTorch's clone on first use */
    for (size_t i = lo; i < hi; i++) {
        float g = dw[i] + wd * w[i];
        m[i] = mu * m[i] + g;
        w[i] -= lr * m[i];
    }
}

static void adam_step(nn_optim *o, nn_params *p, float lr, size_t lo, size_t hi)
{
    const float b1 = o->cfg.beta1, b2 = o->cfg.beta2, eps = o->cfg.eps;
    const int decoupled = o->cfg.kind == NN_OPTIM_ADAMW;
    const float wd = o->cfg.weight_decay;
    const float bc1 = 1.0f - (float)pow(b1, (double)o->step), bc2 = 1.0f - (float)pow(b2, (double)o->step);
    const float step = lr / bc1, inv_sqrt_bc2 = 1.0f / sqrtf(bc2);
    const float shrink = decoupled ? 1.0f - lr * wd : 1.0f;
    float *w = p->w, *m = o->m, *v = o->v;
    const float *dw = p->dw;
    size_t i = lo;
#if defined(__SSE__)
    /* four at a time, with the scalar loop's operations in its order (so the same bits): GCC does not
     * vectorise that loop at -O2, sqrtf being a libm call that may set errno */
    const __m128 vb1 = _mm_set1_ps(b1), vb2 = _mm_set1_ps(b2), va1 = _mm_set1_ps(1.0f - b1),
                 va2 = _mm_set1_ps(1.0f - b2), vwd = _mm_set1_ps(wd), vshrink = _mm_set1_ps(shrink),
                 vstep = _mm_set1_ps(step), vinv = _mm_set1_ps(inv_sqrt_bc2), veps = _mm_set1_ps(eps);
    for (; i + 4 <= hi; i += 4) {
        __m128 wi = _mm_loadu_ps(w + i), g = _mm_loadu_ps(dw + i);
        if (!decoupled) g = _mm_add_ps(g, _mm_mul_ps(vwd, wi));
        wi = _mm_mul_ps(wi, vshrink);
        __m128 mi = _mm_add_ps(_mm_mul_ps(vb1, _mm_loadu_ps(m + i)), _mm_mul_ps(va1, g));
        __m128 vi = _mm_add_ps(_mm_mul_ps(vb2, _mm_loadu_ps(v + i)), _mm_mul_ps(_mm_mul_ps(va2, g), g));
        __m128 den = _mm_add_ps(_mm_mul_ps(_mm_sqrt_ps(vi), vinv), veps);
        wi = _mm_sub_ps(wi, _mm_div_ps(_mm_mul_ps(vstep, mi), den));
        _mm_storeu_ps(w + i, wi);
        _mm_storeu_ps(m + i, mi);
        _mm_storeu_ps(v + i, vi);
    }
#endif
    for (; i < hi; i++) {
        float g = decoupled ? dw[i] : dw[i] + wd * w[i];
        w[i] *= shrink;
        m[i] = b1 * m[i] + (1.0f - b1) * g;
        v[i] = b2 * v[i] + (1.0f - b2) * g * g;
        w[i] -= step * m[i] / (sqrtf(v[i]) * inv_sqrt_bc2 + eps);
    }
}

void nn_optim_step(nn_optim *o, nn_params *p, float lr)
{
    nn_optim_next(o);
    nn_optim_update(o, p, lr, 0, p->n);
}

void nn_optim_next(nn_optim *o)
{
    o->step++;
}

void nn_optim_update(nn_optim *o, nn_params *p, float lr, size_t lo, size_t hi)
{
    HR_ASSERT(o->n == p->n && lo <= hi && hi <= p->n);
    if (o->cfg.kind == NN_OPTIM_SGD)
        sgd_step(o, p, lr, lo, hi);
    else
        adam_step(o, p, lr, lo, hi);
}

float nn_grad_clip(nn_params *p, float max_norm)
{
    double ss = 0.0;
    for (size_t i = 0; i < p->n; i++) ss += (double)p->dw[i] * p->dw[i];
    float norm = (float)sqrt(ss);
    /* torch.nn.utils.clip_grad_norm_: coefficient max / (norm + 1e-6), applied only when below 1 */
    float coef = max_norm / (norm + 1e-6f);
    if (coef < 1.0f)
        for (size_t i = 0; i < p->n; i++) p->dw[i] *= coef;
    return norm;
}

float nn_lr_at(const nn_lr_schedule *s, long step)
{
    if (step < 0) step = 0;
    if (step < s->warmup) return s->lr * (float)(step + 1) / (float)s->warmup;
    long k = step - s->warmup;
    switch (s->decay) {
    case NN_LR_COSINE: {
        long span = s->total - s->warmup;
        double t = span > 0 ? (double)k / (double)span : 1.0;
        if (t > 1.0) t = 1.0;
        return s->lr_min + (s->lr - s->lr_min) * (float)(0.5 * (1.0 + cos(3.14159265358979323846 * t)));
    }
    case NN_LR_STEP:
        HR_ASSERT(s->step_size > 0);
        return s->lr * (float)pow(s->gamma, (double)(k / s->step_size));
    case NN_LR_CONSTANT:
    default:
        return s->lr;
    }
}
