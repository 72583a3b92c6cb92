/* nn: central finite-difference checks of every op's backward, for the loss L = sum(y * R) with a fixed
 * random R. Computed in float with eps 1e-3; a coordinate whose numeric derivative changes between eps and
 * eps/2 sits on a ReLU kink and is skipped (at most a few percent may be), everything else must agree to
 * |analytic - numeric| <= 1e-2 max(|analytic|, |numeric|) + 2e-3. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"
#include "nn/parts.h"

typedef struct op op;
struct op {
    nn_params p, state;
    float *x;   /* (nx): the differentiable input (NULL for embedding) */
    size_t nx, ny;
    int B, T, train;
    uint64_t seed; /* dropout masks are drawn from this seed on every forward, so they stay fixed */
    hr_rng rng;
    float rate;
    float *mask, *prob, *target, *cache_mean, *cache_rstd;
    int *ids;
    nn_linear lin;
    nn_layernorm ln;
    nn_batchnorm bn;
    nn_embedding emb;
    nn_mhsa mh;
    nn_mhsa_cache mhc;
    nn_ffn ffn;
    nn_ffn_cache fc;
    nn_gamma g;
    nn_gamma_cache gc;
    nn_transformer tb;
    nn_transformer_cache tc;
    void (*fwd)(op *o, float *y);
    void (*bwd)(op *o, const float *y, const float *dy, float *dx);
};

static float *randn(hr_rng *r, size_t n, float scale)
{
    float *a = calloc(n ? n : 1, sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = scale * hr_rng_normal(r);
    return a;
}

static double loss_of(op *o, float *y, const float *R)
{
    o->fwd(o, y);
    double L = 0.0;
    for (size_t i = 0; i < o->ny; i++) L += (double)y[i] * R[i];
    return L;
}

static double numeric(op *o, float *v, float eps, float *y, const float *R)
{
    float keep = *v;
    *v = keep + eps;
    double lp = loss_of(o, y, R);
    *v = keep - eps;
    double lm = loss_of(o, y, R);
    *v = keep;
    return (lp - lm) / (2.0 * eps);
}

/* Compares analytic and numeric derivatives for n coordinates v[0..n); returns the number skipped as kinks. */
static int compare(op *o, float *v, const float *analytic, size_t n, float *y, const float *R, const char *what,
                   int *checked)
{
    const float eps = 1e-3f;
    int skipped = 0;
    for (size_t i = 0; i < n; i++) {
        double n1 = numeric(o, &v[i], eps, y, R), n2 = numeric(o, &v[i], eps / 2, y, R);
        double tol = 1e-2 * fmax(fabs(analytic[i]), fabs(n1)) + 2e-3;
        if (fabs(n1 - n2) > tol) {
            skipped++; /* the numeric derivative is not stable: a kink between x - eps and x + eps */
            continue;
        }
        (*checked)++;
        cr_expect(fabs(analytic[i] - n1) <= tol, "%s[%zu]: analytic %.6g numeric %.6g", what, i, analytic[i], n1);
    }
    return skipped;
}

static void grad_check(op *o, const char *what)
{
    hr_rng r;
    hr_rng_seed(&r, 99);
    float *R = randn(&r, o->ny, 1.0f), *y = calloc(o->ny, sizeof *y), *dx = calloc(o->nx ? o->nx : 1, sizeof *dx);
    o->fwd(o, y);
    nn_params_zero_grad(&o->p);
    o->bwd(o, y, R, dx);
    float *dw = calloc(o->p.n ? o->p.n : 1, sizeof *dw);
    if (o->p.n) memcpy(dw, o->p.dw, o->p.n * sizeof *dw);
    int checked = 0, skipped = 0;
    if (o->x) skipped += compare(o, o->x, dx, o->nx, y, R, what, &checked);
    for (int v = 0; v < o->p.n_views; v++) {
        const nn_param_view *pv = &o->p.views[v];
        skipped += compare(o, o->p.w + pv->offset, dw + pv->offset, pv->size, y, R, pv->name, &checked);
    }
    cr_expect_gt(checked, 0, "%s: nothing checked", what);
    cr_expect_leq(skipped * 50, checked + skipped, "%s: %d of %d coordinates skipped as kinks", what, skipped,
                  checked + skipped);
    free(R);
    free(y);
    free(dx);
    free(dw);
}

static void op_params_ready(op *o, uint64_t seed)
{
    cr_assert_eq(nn_params_alloc(&o->p), HR_OK);
    cr_assert_eq(nn_params_alloc(&o->state), HR_OK);
    hr_rng_seed(&o->rng, seed);
}

/* Learnable values not at their (trivial) initial values: norm weights near 1, biases non-zero. */
static void params_randomize(op *o, float scale)
{
    for (size_t i = 0; i < o->p.n; i++) o->p.w[i] = scale * hr_rng_normal(&o->rng);
}

static void op_free(op *o)
{
    nn_params_free(&o->p);
    nn_params_free(&o->state);
    free(o->x);
    free(o->mask);
    free(o->prob);
    free(o->target);
    free(o->cache_mean);
    free(o->cache_rstd);
    free(o->ids);
}

/* ---- linear ---- */
static void linear_fwd(op *o, float *y) { nn_linear_forward(&o->lin, &o->p, o->x, y, o->B); }
static void linear_bwd(op *o, const float *y, const float *dy, float *dx)
{
    nn_linear_backward(&o->lin, &o->p, o->x, dy, dx, o->B);
}

Test(nn_grad, linear)
{
    op o = {0};
    nn_linear_layout(&o.lin, &o.p, "fc", 4, 5);
    op_params_ready(&o, 1);
    nn_linear_reset(&o.lin, &o.p, &o.rng);
    o.B = 3;
    o.nx = 12;
    o.ny = 15;
    o.x = randn(&o.rng, o.nx, 1.0f);
    o.fwd = linear_fwd;
    o.bwd = linear_bwd;
    grad_check(&o, "linear.x");
    op_free(&o);
}

/* ---- activations ---- */
static void relu_fwd(op *o, float *y) { nn_relu_forward(o->x, y, o->nx); }
static void relu_bwd(op *o, const float *y, const float *dy, float *dx) { nn_relu_backward(y, dy, dx, o->nx); }
static void gelu_fwd(op *o, float *y) { nn_gelu_forward(o->x, y, o->nx); }
static void gelu_bwd(op *o, const float *y, const float *dy, float *dx) { nn_gelu_backward(o->x, dy, dx, o->nx); }

Test(nn_grad, relu_and_gelu)
{
    op o = {0};
    op_params_ready(&o, 2);
    o.nx = o.ny = 40;
    o.x = randn(&o.rng, o.nx, 1.0f);
    for (size_t i = 0; i < o.nx; i++) o.x[i] += o.x[i] > 0 ? 0.1f : -0.1f; /* away from the kink */
    o.fwd = relu_fwd;
    o.bwd = relu_bwd;
    grad_check(&o, "relu.x");
    o.fwd = gelu_fwd;
    o.bwd = gelu_bwd;
    grad_check(&o, "gelu.x");
    op_free(&o);
}

/* ---- layernorm, batchnorm ---- */
static void ln_fwd(op *o, float *y)
{
    nn_layernorm_forward(&o->ln, &o->p, o->x, y, o->cache_mean, o->cache_rstd, o->B);
}
static void ln_bwd(op *o, const float *y, const float *dy, float *dx)
{
    nn_layernorm_backward(&o->ln, &o->p, o->x, o->cache_mean, o->cache_rstd, dy, dx, o->B);
}

Test(nn_grad, layernorm)
{
    op o = {0};
    nn_layernorm_layout(&o.ln, &o.p, "ln", 6);
    op_params_ready(&o, 3);
    params_randomize(&o, 0.5f);
    for (int j = 0; j < 6; j++) o.p.w[o.ln.gamma + j] += 1.0f;
    o.B = 4;
    o.nx = o.ny = 24;
    o.x = randn(&o.rng, o.nx, 1.0f);
    o.cache_mean = calloc(4, sizeof(float));
    o.cache_rstd = calloc(4, sizeof(float));
    o.fwd = ln_fwd;
    o.bwd = ln_bwd;
    grad_check(&o, "layernorm.x");
    op_free(&o);
}

static void bn_fwd(op *o, float *y)
{
    nn_batchnorm_forward(&o->bn, &o->p, &o->state, o->x, y, o->cache_mean, o->cache_rstd, o->B, o->train);
}
static void bn_bwd(op *o, const float *y, const float *dy, float *dx)
{
    nn_batchnorm_backward(&o->bn, &o->p, o->x, o->cache_mean, o->cache_rstd, dy, dx, o->B, o->train);
}

static void check_batchnorm(int train)
{
    op o = {0};
    nn_batchnorm_layout(&o.bn, &o.p, &o.state, "bn", 5);
    op_params_ready(&o, 4);
    nn_batchnorm_reset(&o.bn, &o.p, &o.state);
    params_randomize(&o, 0.5f);
    for (int j = 0; j < 5; j++) {
        o.p.w[o.bn.gamma + j] += 1.0f;
        o.state.w[o.bn.run_mean + j] = 0.3f * hr_rng_normal(&o.rng);
        o.state.w[o.bn.run_var + j] = 0.5f + hr_rng_uniform(&o.rng);
    }
    o.B = 6;
    o.train = train;
    o.nx = o.ny = 30;
    o.x = randn(&o.rng, o.nx, 1.0f);
    o.cache_mean = calloc(5, sizeof(float));
    o.cache_rstd = calloc(5, sizeof(float));
    o.fwd = bn_fwd;
    o.bwd = bn_bwd;
    grad_check(&o, train ? "batchnorm_train.x" : "batchnorm_eval.x");
    op_free(&o);
}

Test(nn_grad, batchnorm_train) { check_batchnorm(1); }
Test(nn_grad, batchnorm_eval) { check_batchnorm(0); }

/* ---- dropout ---- */
static void drop_fwd(op *o, float *y)
{
    hr_rng_seed(&o->rng, o->seed);
    nn_dropout_forward(o->x, y, o->mask, o->nx, o->rate, &o->rng);
}
static void drop_bwd(op *o, const float *y, const float *dy, float *dx)
{
    nn_dropout_backward(dy, o->mask, dx, o->nx);
}

Test(nn_grad, dropout)
{
    op o = {0};
    op_params_ready(&o, 5);
    o.nx = o.ny = 50;
    o.x = randn(&o.rng, o.nx, 1.0f);
    o.mask = calloc(o.nx, sizeof(float));
    o.rate = 0.3f;
    o.seed = 17;
    o.fwd = drop_fwd;
    o.bwd = drop_bwd;
    grad_check(&o, "dropout.x");
    int zeros = 0;
    for (size_t i = 0; i < o.nx; i++) zeros += o.mask[i] == 0.0f;
    cr_expect(zeros > 5 && zeros < 30, "dropout kept an implausible fraction: %d of 50 dropped", zeros);
    op_free(&o);
}

/* ---- softmax cross-entropy with soft targets (the loss itself is the output) ---- */
static void xent_fwd(op *o, float *y) { y[0] = nn_xent_forward(o->x, o->target, o->prob, o->B, 7); }
static void xent_bwd(op *o, const float *y, const float *dy, float *dx)
{
    nn_xent_backward(o->prob, o->target, dx, o->B, 7, dy[0]);
}

Test(nn_grad, softmax_xent_soft_targets)
{
    op o = {0};
    op_params_ready(&o, 6);
    o.B = 3;
    o.nx = 21;
    o.ny = 1;
    o.x = randn(&o.rng, o.nx, 2.0f);
    o.prob = calloc(o.nx, sizeof(float));
    o.target = calloc(o.nx, sizeof(float));
    for (int b = 0; b < 3; b++) {
        float s = 0.0f;
        for (int i = 0; i < 7; i++) s += (o.target[b * 7 + i] = i % 3 == b ? 0.0f : hr_rng_uniform(&o.rng));
        for (int i = 0; i < 7; i++) o.target[b * 7 + i] /= s;
    }
    o.fwd = xent_fwd;
    o.bwd = xent_bwd;
    grad_check(&o, "xent.z");
    op_free(&o);
}

/* ---- softmax cross-entropy over segments of variable length (o->ids holds the B + 1 offsets) ---- */
static void xent_seg_fwd(op *o, float *y) { y[0] = nn_xent_seg_forward(o->x, o->target, o->ids, o->B, o->prob); }
static void xent_seg_bwd(op *o, const float *y, const float *dy, float *dx)
{
    nn_xent_seg_backward(o->prob, o->target, o->ids, o->B, dx, dy[0]);
}

Test(nn_grad, segmented_softmax_xent)
{
    op o = {0};
    op_params_ready(&o, 8);
    /* segments of 3, 1, 0 (a problem with no candidates) and 6 entries, with zero targets inside */
    static const int off[] = {0, 3, 4, 4, 10};
    o.B = 4;
    o.nx = 10;
    o.ny = 1;
    o.ids = malloc(sizeof off);
    memcpy(o.ids, off, sizeof off);
    o.x = randn(&o.rng, o.nx, 2.0f);
    o.prob = calloc(o.nx, sizeof(float));
    o.target = calloc(o.nx, sizeof(float));
    for (int s = 0; s < o.B; s++) {
        float sum = 0.0f;
        for (int i = off[s]; i < off[s + 1]; i++) sum += (o.target[i] = i % 4 == 1 ? 0.0f : hr_rng_uniform(&o.rng));
        for (int i = off[s]; i < off[s + 1]; i++) o.target[i] /= sum;
    }
    o.fwd = xent_seg_fwd;
    o.bwd = xent_seg_bwd;
    grad_check(&o, "xent_seg.z");
    /* one segment of all entries is the row softmax cross-entropy */
    float y[10], one_p[10], seg_p[10];
    const int whole[2] = {0, 10};
    float s = 0.0f;
    for (int i = 0; i < 10; i++) s += (y[i] = (float)(i + 1));
    for (int i = 0; i < 10; i++) y[i] /= s;
    float a = nn_xent_forward(o.x, y, one_p, 1, 10), b = nn_xent_seg_forward(o.x, y, whole, 1, seg_p);
    cr_assert_float_eq(a, b, 1e-6f);
    for (int i = 0; i < 10; i++) cr_assert_float_eq(one_p[i], seg_p[i], 1e-7f);
    op_free(&o);
}

/* ---- segment dot products (a two-tower score): x = [u (B, 5) | v (N, 5)], o->ids the B + 1 offsets ---- */
static void seg_dot_fwd(op *o, float *y) { nn_seg_dot_forward(o->x, o->x + o->B * 5, o->ids, o->B, 5, y); }
static void seg_dot_bwd(op *o, const float *y, const float *dy, float *dx)
{
    (void)y;
    nn_seg_dot_backward(o->x, o->x + o->B * 5, o->ids, o->B, 5, dy, dx, dx + o->B * 5);
}

Test(nn_grad, segment_dot)
{
    op o = {0};
    op_params_ready(&o, 9);
    /* segments of 3, 0 (a problem with no candidates), 1 and 4 rows */
    static const int off[] = {0, 3, 3, 4, 8};
    o.B = 4;
    o.ny = 8;
    o.nx = (size_t)(o.B + 8) * 5;
    o.ids = malloc(sizeof off);
    memcpy(o.ids, off, sizeof off);
    o.x = randn(&o.rng, o.nx, 1.0f);
    o.fwd = seg_dot_fwd;
    o.bwd = seg_dot_bwd;
    grad_check(&o, "seg_dot.[u|v]");
    /* the value: row 5 (segment 2's only row) against u_2, in double */
    float y[8];
    seg_dot_fwd(&o, y);
    double d = 0.0;
    for (int j = 0; j < 5; j++) d += (double)o.x[2 * 5 + j] * o.x[(4 + 3) * 5 + j];
    cr_assert_float_eq(y[3], (float)d, 1e-5f);
    op_free(&o);
}

/* ---- per-class binary cross-entropy on logits (the loss itself is the output) ---- */
static void bce_fwd(op *o, float *y) { y[0] = nn_bce_logits_forward(o->x, o->target, o->prob, o->B, 5); }
static void bce_bwd(op *o, const float *y, const float *dy, float *dx)
{
    nn_bce_logits_backward(o->prob, o->target, dx, o->B, 5, dy[0]);
}

Test(nn_grad, bce_with_logits)
{
    op o = {0};
    op_params_ready(&o, 16);
    o.B = 4;
    o.nx = 20;
    o.ny = 1;
    o.x = randn(&o.rng, o.nx, 3.0f);
    o.prob = calloc(o.nx, sizeof(float));
    o.target = calloc(o.nx, sizeof(float));
    /* hard 0/1 targets (the applicability mask) and a few soft ones */
    for (size_t i = 0; i < o.nx; i++) o.target[i] = i % 3 == 0 ? 1.0f : i % 7 == 1 ? 0.3f : 0.0f;
    o.fwd = bce_fwd;
    o.bwd = bce_bwd;
    grad_check(&o, "bce.z");
    /* stable at large |z|: the loss of a confident right answer is ~0, of a wrong one ~|z| */
    float z[2] = {60.0f, -60.0f}, t[2] = {1.0f, 1.0f}, pr[2];
    float l = nn_bce_logits_forward(z, t, pr, 1, 2);
    cr_assert(isfinite(l) && fabsf(l - 60.0f) < 1e-3f, "%g", l);
    cr_assert_float_eq(nn_log_sigmoid(-60.0f), -60.0f, 1e-4);
    cr_assert_float_eq(nn_log_sigmoid(0.0f), -logf(2.0f), 1e-6);
    op_free(&o);
}

/* ---- softmax and BCE values against double precision (their exponential is our own, four lanes at a
 * time, and BCE sums its log1p terms as the log of a product) ---- */
Test(nn_grad, softmax_and_bce_values_match_double_precision)
{
    /* C = 70: vector lanes and a scalar tail; C = 1100: more than one BCE chunk; logits up to |z| = 100 */
    const int Cs[2] = {70, 1100};
    hr_rng rng;
    hr_rng_seed(&rng, 77);
    for (int t = 0; t < 2; t++) {
        const int B = 3, C = Cs[t];
        float *z = calloc((size_t)B * C, sizeof(float)), *y = calloc((size_t)B * C, sizeof(float));
        float *p = calloc((size_t)B * C, sizeof(float));
        for (int i = 0; i < B * C; i++) {
            z[i] = i % 97 == 5 ? 100.0f * (2.0f * hr_rng_uniform(&rng) - 1.0f) : 6.0f * hr_rng_normal(&rng);
            y[i] = i % 5 == 0 ? 1.0f : 0.0f;
        }
        for (int i = 0; i < C; i++) z[2 * C + i] = 0.0f; /* a row of factors 1 + e^0 = 2: the product's worst case */
        double want = 0.0;
        for (int i = 0; i < B * C; i++) {
            double zi = z[i];
            want += (zi > 0 ? zi : 0.0) + log1p(exp(-fabs(zi))) - y[i] * zi;
        }
        want /= B;
        float got = nn_bce_logits_forward(z, y, p, B, C);
        cr_expect(fabs(got - want) <= 1e-5 * fabs(want), "bce C=%d: %.9g vs %.9g", C, (double)got, want);
        for (int i = 0; i < B * C; i++) {
            double s = 1.0 / (1.0 + exp(-(double)z[i]));
            cr_expect(fabs(p[i] - s) <= 4e-7 * s + 1e-37, "sigmoid(%g) = %.9g, want %.9g", (double)z[i],
                      (double)p[i], s);
        }
        nn_softmax_forward(z, p, B, C);
        for (int b = 0; b < B; b++) {
            /* the reference takes the same float argument z - max (whose rounding alone moves e^x by up to
             * |x| 2^-24 relative) */
            const float *zr = z + (size_t)b * C;
            float mx = zr[0];
            double sum = 0.0;
            for (int i = 1; i < C; i++) mx = zr[i] > mx ? zr[i] : mx;
            for (int i = 0; i < C; i++) sum += exp((double)(zr[i] - mx));
            for (int i = 0; i < C; i++) {
                double q = exp((double)(zr[i] - mx)) / sum, e = fabs(p[(size_t)b * C + i] - q);
                cr_expect(e <= 5e-7 * q + 1e-37, "softmax row %d class %d: %.9g vs %.9g", b, i,
                          (double)p[(size_t)b * C + i], q);
            }
        }
        free(z);
        free(y);
        free(p);
    }
}

/* ---- embedding (gradient w.r.t. the table only) ---- */
static void emb_fwd(op *o, float *y) { nn_embedding_forward(&o->emb, &o->p, o->ids, y, o->B); }
static void emb_bwd(op *o, const float *y, const float *dy, float *dx)
{
    nn_embedding_backward(&o->emb, &o->p, o->ids, dy, o->B);
}

Test(nn_grad, embedding)
{
    op o = {0};
    nn_embedding_layout(&o.emb, &o.p, "emb", 5, 3);
    op_params_ready(&o, 7);
    nn_embedding_reset(&o.emb, &o.p, &o.rng);
    o.B = 6;
    o.ny = 18;
    int ids[6] = {0, 2, 2, 4, 1, 2}; /* repeated ids accumulate */
    o.ids = malloc(sizeof ids);
    memcpy(o.ids, ids, sizeof ids);
    o.fwd = emb_fwd;
    o.bwd = emb_bwd;
    grad_check(&o, "embedding");
    op_free(&o);
}

/* ---- attention, ffn ---- */
static void mh_fwd(op *o, float *y) { nn_mhsa_forward(&o->mh, &o->p, &o->mhc, o->x, y, o->B, o->T); }
static void mh_bwd(op *o, const float *y, const float *dy, float *dx)
{
    nn_mhsa_backward(&o->mh, &o->p, &o->mhc, o->x, dy, dx, o->B, o->T);
}

Test(nn_grad, multi_head_self_attention)
{
    op o = {0};
    nn_mhsa_layout(&o.mh, &o.p, "attn", 6, 3);
    op_params_ready(&o, 8);
    params_randomize(&o, 0.5f);
    o.B = 2;
    o.T = 4;
    o.nx = o.ny = 2 * 4 * 6;
    o.x = randn(&o.rng, o.nx, 1.0f);
    cr_assert_eq(nn_mhsa_cache_init(&o.mhc, &o.mh, 2, 4), HR_OK);
    o.fwd = mh_fwd;
    o.bwd = mh_bwd;
    grad_check(&o, "mhsa.x");
    nn_mhsa_cache_free(&o.mhc);
    op_free(&o);
}

static void ffn_fwd(op *o, float *y) { nn_ffn_forward(&o->ffn, &o->p, &o->fc, o->x, y, o->B); }
static void ffn_bwd(op *o, const float *y, const float *dy, float *dx)
{
    nn_ffn_backward(&o->ffn, &o->p, &o->fc, o->x, dy, dx, o->B);
}

Test(nn_grad, feed_forward)
{
    op o = {0};
    nn_ffn_layout(&o.ffn, &o.p, "l1", "l2", 5, 9);
    op_params_ready(&o, 9);
    nn_ffn_reset(&o.ffn, &o.p, &o.rng);
    o.B = 4;
    o.nx = 20;
    o.ny = 20;
    o.x = randn(&o.rng, o.nx, 1.0f);
    cr_assert_eq(nn_ffn_cache_init(&o.fc, &o.ffn, 4), HR_OK);
    o.fwd = ffn_fwd;
    o.bwd = ffn_bwd;
    grad_check(&o, "ffn.x");
    nn_ffn_cache_free(&o.fc);
    op_free(&o);
}

/* ---- Gamma-block ---- */
static void gamma_fwd(op *o, float *y)
{
    hr_rng_seed(&o->rng, o->seed);
    nn_gamma_forward(&o->g, &o->p, &o->state, &o->gc, o->x, y, o->B, o->train, &o->rng);
}
static void gamma_bwd(op *o, const float *y, const float *dy, float *dx)
{
    nn_gamma_backward(&o->g, &o->p, &o->gc, o->x, y, dy, dx, o->B);
}

static void check_gamma(nn_norm_kind norm, int train, float dropout, const char *what)
{
    op o = {0};
    nn_gamma_layout(&o.g, &o.p, &o.state, "g", 5, 8, 6, norm, dropout);
    op_params_ready(&o, 10);
    nn_gamma_reset(&o.g, &o.p, &o.state, &o.rng);
    o.B = 7;
    o.train = train;
    o.seed = 23;
    o.nx = 35;
    o.ny = 42;
    o.x = randn(&o.rng, o.nx, 1.0f);
    cr_assert_eq(nn_gamma_cache_init(&o.gc, &o.g, 7), HR_OK);
    o.fwd = gamma_fwd;
    o.bwd = gamma_bwd;
    grad_check(&o, what);
    nn_gamma_cache_free(&o.gc);
    op_free(&o);
}

Test(nn_grad, gamma_block_batchnorm_train) { check_gamma(NN_NORM_BATCH, 1, 0.0f, "gamma_bn_train.x"); }
Test(nn_grad, gamma_block_batchnorm_eval) { check_gamma(NN_NORM_BATCH, 0, 0.0f, "gamma_bn_eval.x"); }
Test(nn_grad, gamma_block_layernorm) { check_gamma(NN_NORM_LAYER, 1, 0.0f, "gamma_ln.x"); }
Test(nn_grad, gamma_block_layernorm_dropout) { check_gamma(NN_NORM_LAYER, 1, 0.25f, "gamma_ln_drop.x"); }

/* ---- transformer block ---- */
static void tb_fwd(op *o, float *y) { nn_transformer_forward(&o->tb, &o->p, &o->tc, o->x, y, o->B, o->T); }
static void tb_bwd(op *o, const float *y, const float *dy, float *dx)
{
    nn_transformer_backward(&o->tb, &o->p, &o->tc, o->x, dy, dx, o->B, o->T);
}

static void check_transformer(int norm_first, const char *what)
{
    op o = {0};
    nn_transformer_layout(&o.tb, &o.p, "tb", 4, 2, 8, norm_first);
    op_params_ready(&o, 11);
    nn_transformer_reset(&o.tb, &o.p, &o.rng);
    for (size_t i = 0; i < o.p.n; i++) o.p.w[i] += 0.1f * hr_rng_normal(&o.rng); /* non-zero biases */
    o.B = 2;
    o.T = 3;
    o.nx = o.ny = 24;
    o.x = randn(&o.rng, o.nx, 1.0f);
    cr_assert_eq(nn_transformer_cache_init(&o.tc, &o.tb, 2, 3), HR_OK);
    o.fwd = tb_fwd;
    o.bwd = tb_bwd;
    grad_check(&o, what);
    nn_transformer_cache_free(&o.tc);
    op_free(&o);
}

Test(nn_grad, transformer_block_postnorm) { check_transformer(0, "transformer_post.x"); }
Test(nn_grad, transformer_block_prenorm) { check_transformer(1, "transformer_pre.x"); }

/* ---- single-problem inference (B = 1 takes the sgemv path) equals the batched computation ---- */
Test(nn_grad, single_row_inference_matches_batch)
{
    op o = {0};
    nn_linear head;
    nn_gamma_layout(&o.g, &o.p, &o.state, "g", 5, 8, 6, NN_NORM_BATCH, 0.3f);
    nn_linear_layout(&head, &o.p, "head", 6, 4);
    op_params_ready(&o, 12);
    nn_gamma_reset(&o.g, &o.p, &o.state, &o.rng);
    nn_linear_reset(&head, &o.p, &o.rng);
    for (int j = 0; j < 8; j++) o.state.w[o.g.bn.run_var + j] = 0.5f + hr_rng_uniform(&o.rng);
    nn_gamma_cache batch, single;
    cr_assert_eq(nn_gamma_cache_init(&batch, &o.g, 3), HR_OK);
    cr_assert_eq(nn_gamma_cache_init(&single, &o.g, 1), HR_OK);
    float *x = randn(&o.rng, 15, 1.0f), yb[18], zb[12], y1[6], z1[4];
    nn_gamma_forward(&o.g, &o.p, &o.state, &batch, x, yb, 3, 0, NULL); /* eval: no rng needed */
    nn_linear_forward(&head, &o.p, yb, zb, 3);
    for (int b = 0; b < 3; b++) {
        nn_gamma_forward(&o.g, &o.p, &o.state, &single, x + 5 * b, y1, 1, 0, NULL);
        nn_linear_forward(&head, &o.p, y1, z1, 1);
        for (int j = 0; j < 6; j++) cr_expect_float_eq(y1[j], yb[6 * b + j], 1e-5);
        for (int j = 0; j < 4; j++) cr_expect_float_eq(z1[j], zb[4 * b + j], 1e-5);
    }
    free(x);
    nn_gamma_cache_free(&batch);
    nn_gamma_cache_free(&single);
    op_free(&o);
}

/* ---- a batch in parts (nn_gamma_forward_part / _backward_part) equals the whole batch ----
 * 10 rows cut 3 / 3 / 4, the phases run part by part as a team's threads would between barriers:
 * outputs, input gradients, parameter gradients (each part's own block, added in part order) and the
 * running statistics (written by part 0) agree with one pass over the 10 rows to float rounding. */
static void check_gamma_parts(nn_norm_kind norm)
{
    enum { B = 10, NP = 3, DIN = 5, DH = 8, DOUT = 6 };
    op o = {0};
    nn_gamma_layout(&o.g, &o.p, &o.state, "g", DIN, DH, DOUT, norm, 0.0f);
    op_params_ready(&o, 13);
    nn_gamma_reset(&o.g, &o.p, &o.state, &o.rng);
    for (size_t i = 0; i < o.p.n; i++) o.p.w[i] += 0.1f * hr_rng_normal(&o.rng); /* gamma != 1, beta != 0 */
    float *x = randn(&o.rng, B * DIN, 2.0f), *dy = randn(&o.rng, B * DOUT, 1.0f);
    for (int i = 0; i < B * DIN; i++) x[i] += 1.5f; /* a mean far from 0, as after a ReLU */
    const size_t ns = o.state.n;
    float *state0 = malloc(ns * sizeof *state0);
    memcpy(state0, o.state.w, ns * sizeof *state0);

    /* the whole batch */
    nn_gamma_cache whole;
    cr_assert_eq(nn_gamma_cache_init(&whole, &o.g, B), HR_OK);
    float y[B * DOUT], dx[B * DIN] = {0};
    nn_params_zero_grad(&o.p);
    nn_gamma_forward(&o.g, &o.p, &o.state, &whole, x, y, B, 1, NULL);
    nn_gamma_backward(&o.g, &o.p, &whole, x, y, dy, dx, B);
    float *state_whole = malloc(ns * sizeof *state_whole);
    memcpy(state_whole, o.state.w, ns * sizeof *state_whole);

    /* in parts */
    memcpy(o.state.w, state0, ns * sizeof *state0);
    const int start[NP + 1] = {0, 3, 6, 10};
    nn_gamma_cache pc[NP];
    nn_params pp[NP];
    float *pdw = calloc((size_t)NP * o.p.n, sizeof *pdw);
    float fwd_scratch[2 * NP * DH], bwd_scratch[2 * NP * DH];
    float yp[B * DOUT], dxp[B * DIN] = {0};
    for (int q = 0; q < NP; q++) {
        cr_assert_eq(nn_gamma_cache_init(&pc[q], &o.g, start[q + 1] - start[q]), HR_OK);
        pp[q] = o.p;
        pp[q].dw = pdw + (size_t)q * o.p.n;
    }
    for (int phase = 0; phase < 3; phase++)
        for (int q = 0; q < NP; q++) {
            nn_part part = {q, NP, B, fwd_scratch};
            nn_gamma_forward_part(&o.g, &o.p, q ? NULL : &o.state, &pc[q], x + start[q] * DIN, yp + start[q] * DOUT,
                                  start[q + 1] - start[q], 1, NULL, &part, phase);
        }
    for (int phase = 0; phase < 2; phase++)
        for (int q = 0; q < NP; q++) {
            nn_part part = {q, NP, B, bwd_scratch};
            nn_gamma_backward_part(&o.g, &pp[q], &pc[q], x + start[q] * DIN, yp + start[q] * DOUT,
                                   dy + start[q] * DOUT, dxp + start[q] * DIN, start[q + 1] - start[q], &part, phase);
        }
    for (int i = 0; i < B * DOUT; i++) cr_expect_float_eq(yp[i], y[i], 1e-5, "y[%d]", i);
    for (int i = 0; i < B * DIN; i++) cr_expect_float_eq(dxp[i], dx[i], 1e-5, "dx[%d]", i);
    for (size_t i = 0; i < o.p.n; i++) {
        float g = 0.0f;
        for (int q = 0; q < NP; q++) g += pdw[(size_t)q * o.p.n + i];
        cr_expect_float_eq(g, o.p.dw[i], 1e-5 * (1.0f + fabsf(o.p.dw[i])), "dw[%zu]: %g vs %g", i, (double)g,
                           (double)o.p.dw[i]);
    }
    for (size_t i = 0; i < ns; i++) cr_expect_float_eq(o.state.w[i], state_whole[i], 1e-5, "state[%zu]", i);
    if (norm == NN_NORM_BATCH) /* the check can fail: the statistics moved */
        cr_assert(memcmp(o.state.w, state0, ns * sizeof *state0) != 0);
    for (int q = 0; q < NP; q++) nn_gamma_cache_free(&pc[q]);
    nn_gamma_cache_free(&whole);
    free(pdw);
    free(state0);
    free(state_whole);
    free(x);
    free(dy);
    op_free(&o);
}

Test(nn_grad, gamma_block_batchnorm_in_parts_equals_whole_batch) { check_gamma_parts(NN_NORM_BATCH); }
Test(nn_grad, gamma_block_layernorm_in_parts_equals_whole_batch) { check_gamma_parts(NN_NORM_LAYER); }
