/* Transformer encoder block equal to torch.nn.TransformerEncoderLayer(batch_first=True, activation=relu)
 * with dropout off: post-norm by default (norm_first = 0), pre-norm when norm_first = 1. */
#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"
#include "nn/nn_internal.h"

void nn_transformer_layout(nn_transformer *tb, nn_params *p, const char *name, int d, int heads, int d_ff,
                           int norm_first)
{
    char buf[64], buf2[64];
    tb->d = d;
    tb->heads = heads;
    tb->d_ff = d_ff;
    tb->norm_first = norm_first;
    snprintf(buf, sizeof buf, "%s.self_attn", name);
    nn_mhsa_layout(&tb->attn, p, buf, d, heads);
    snprintf(buf, sizeof buf, "%s.linear1", name);
    snprintf(buf2, sizeof buf2, "%s.linear2", name);
    nn_ffn_layout(&tb->ffn, p, buf, buf2, d, d_ff);
    snprintf(buf, sizeof buf, "%s.norm1", name);
    nn_layernorm_layout(&tb->ln1, p, buf, d);
    snprintf(buf, sizeof buf, "%s.norm2", name);
    nn_layernorm_layout(&tb->ln2, p, buf, d);
}

void nn_transformer_reset(const nn_transformer *tb, nn_params *p, hr_rng *rng)
{
    nn_mhsa_reset(&tb->attn, p, rng);
    nn_ffn_reset(&tb->ffn, p, rng);
    nn_layernorm_reset(&tb->ln1, p);
    nn_layernorm_reset(&tb->ln2, p);
}

int nn_transformer_cache_init(nn_transformer_cache *c, const nn_transformer *tb, int max_b, int t)
{
    size_t n = (size_t)max_b * t, nd = n * tb->d;
    memset(c, 0, sizeof *c);
    c->cap_b = max_b;
    c->cap_t = t;
    int rc = nn_mhsa_cache_init(&c->attn, &tb->attn, max_b, t);
    if (rc == HR_OK) rc = nn_ffn_cache_init(&c->ffn, &tb->ffn, (int)n);
    rc = nn_floats_alloc(&c->s1, nd, rc);
    rc = nn_floats_alloc(&c->n1, nd, rc);
    rc = nn_floats_alloc(&c->s2, nd, rc);
    rc = nn_floats_alloc(&c->n2, nd, rc);
    rc = nn_floats_alloc(&c->mean1, n, rc);
    rc = nn_floats_alloc(&c->rstd1, n, rc);
    rc = nn_floats_alloc(&c->mean2, n, rc);
    rc = nn_floats_alloc(&c->rstd2, n, rc);
    rc = nn_floats_alloc(&c->d1, nd, rc);
    rc = nn_floats_alloc(&c->d2, nd, rc);
    rc = nn_floats_alloc(&c->d3, nd, rc);
    if (rc != HR_OK) nn_transformer_cache_free(c);
    return rc;
}

void nn_transformer_cache_free(nn_transformer_cache *c)
{
    nn_mhsa_cache_free(&c->attn);
    nn_ffn_cache_free(&c->ffn);
    float *bufs[] = {c->s1, c->n1, c->s2, c->n2, c->mean1, c->rstd1, c->mean2, c->rstd2, c->d1, c->d2, c->d3};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    memset(c, 0, sizeof *c);
}

void nn_transformer_forward(const nn_transformer *tb, const nn_params *p, nn_transformer_cache *c,
                            const float *x, float *y, int B, int T)
{
    HR_ASSERT(B <= c->cap_b && T <= c->cap_t && y != x);
    const int N = B * T;
    const size_t nd = (size_t)N * tb->d;
    if (!tb->norm_first) {
        nn_mhsa_forward(&tb->attn, p, &c->attn, x, c->s1, B, T);
        nn_add(c->s1, c->s1, x, nd);                                              /* s1 = x + MHSA(x) */
        nn_layernorm_forward(&tb->ln1, p, c->s1, c->n1, c->mean1, c->rstd1, N);   /* n1 = LN1(s1) */
        nn_ffn_forward(&tb->ffn, p, &c->ffn, c->n1, c->s2, N);
        nn_add(c->s2, c->s2, c->n1, nd);                                          /* s2 = n1 + FFN(n1) */
        nn_layernorm_forward(&tb->ln2, p, c->s2, y, c->mean2, c->rstd2, N);       /* y = LN2(s2) */
    } else {
        nn_layernorm_forward(&tb->ln1, p, x, c->n1, c->mean1, c->rstd1, N);       /* n1 = LN1(x) */
        nn_mhsa_forward(&tb->attn, p, &c->attn, c->n1, c->s1, B, T);
        nn_add(c->s1, c->s1, x, nd);                                              /* s1 = x + MHSA(n1) */
        nn_layernorm_forward(&tb->ln2, p, c->s1, c->n2, c->mean2, c->rstd2, N);   /* n2 = LN2(s1) */
        nn_ffn_forward(&tb->ffn, p, &c->ffn, c->n2, y, N);
        nn_add(y, y, c->s1, nd);                                                  /* y = s1 + FFN(n2) */
    }
}

void nn_transformer_backward(const nn_transformer *tb, nn_params *p, nn_transformer_cache *c, const float *x,
                             const float *dy, float *dx, int B, int T)
{
    HR_ASSERT(B <= c->cap_b && T <= c->cap_t);
    const int N = B * T;
    const size_t nd = (size_t)N * tb->d, bytes = nd * sizeof(float);
    if (!tb->norm_first) {
        memset(c->d1, 0, bytes);
        nn_layernorm_backward(&tb->ln2, p, c->s2, c->mean2, c->rstd2, dy, c->d1, N);   /* d1 = ds2 */
        memcpy(c->d2, c->d1, bytes);
        nn_ffn_backward(&tb->ffn, p, &c->ffn, c->n1, c->d1, c->d2, N);                 /* d2 = dn1 */
        memset(c->d3, 0, bytes);
        nn_layernorm_backward(&tb->ln1, p, c->s1, c->mean1, c->rstd1, c->d2, c->d3, N); /* d3 = ds1 */
        for (size_t i = 0; i < nd; i++) dx[i] += c->d3[i];
        nn_mhsa_backward(&tb->attn, p, &c->attn, x, c->d3, dx, B, T);
    } else {
        memcpy(c->d1, dy, bytes);                                                      /* d1 = ds1 */
        memset(c->d2, 0, bytes);
        nn_ffn_backward(&tb->ffn, p, &c->ffn, c->n2, dy, c->d2, N);                    /* d2 = dn2 */
        nn_layernorm_backward(&tb->ln2, p, c->s1, c->mean2, c->rstd2, c->d2, c->d1, N);
        for (size_t i = 0; i < nd; i++) dx[i] += c->d1[i];
        memset(c->d3, 0, bytes);
        nn_mhsa_backward(&tb->attn, p, &c->attn, c->n1, c->d1, c->d3, B, T);           /* d3 = dn1 */
        nn_layernorm_backward(&tb->ln1, p, x, c->mean1, c->rstd1, c->d3, dx, N);
    }
}
