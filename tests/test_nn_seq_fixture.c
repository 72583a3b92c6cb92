/* nn/seq against PyTorch: forward outputs and every gradient of a fixed random linear functional of
 * the outputs, for fixtures written by tests/fixtures/make_seq_fixtures.py (PyTorch in float64).
 * Parameters are matched by nn_params view name ("param:<view>", "grad:<view>"), so a layout that
 * drifts from PyTorch's tensor order fails here. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "nn/seq.h"

#define FX_MAX 96

typedef struct fx_array {
    char name[64];
    size_t n;
    float *v;
} fx_array;

typedef struct fixture {
    int n;
    fx_array a[FX_MAX];
} fixture;

static void fx_load(fixture *f, const char *op)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/nn_seq/%s.txt", HEURIST_SOURCE_DIR, op);
    char *buf;
    size_t len;
    cr_assert_eq(hr_file_read_all(path, &buf, &len), HR_OK, "%s", hr_last_error());
    memset(f, 0, sizeof *f);
    char *s = buf;
    for (;;) {
        while (*s == ' ' || *s == '\n') s++;
        if (!*s) break;
        cr_assert_lt(f->n, FX_MAX);
        fx_array *a = &f->a[f->n++];
        int used = 0;
        cr_assert_eq(sscanf(s, "%63s %zu%n", a->name, &a->n, &used), 2, "%s: bad header", path);
        s += used;
        a->v = calloc(a->n ? a->n : 1, sizeof(float));
        for (size_t i = 0; i < a->n; i++) {
            char *end;
            a->v[i] = strtof(s, &end);
            cr_assert(end != s, "%s: %s truncated at %zu", path, a->name, i);
            s = end;
        }
    }
    free(buf);
}

static void fx_free(fixture *f)
{
    for (int i = 0; i < f->n; i++) free(f->a[i].v);
}

static const fx_array *fx_find(const fixture *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->a[i].name, name) == 0) return &f->a[i];
    return NULL;
}

static const float *fx_get(const fixture *f, const char *name, size_t n)
{
    const fx_array *a = fx_find(f, name);
    cr_assert(a, "fixture has no %s", name);
    cr_assert_eq(a->n, n, "%s: %zu values, expected %zu", name, a->n, n);
    return a->v;
}

static int fx_dim(const fixture *f, int i)
{
    const fx_array *a = fx_find(f, "dims");
    cr_assert(a && (size_t)i < a->n);
    return (int)a->v[i];
}

static void expect_close(const float *got, const float *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        double tol = 1e-4 * fmax(1.0, fabs(want[i]));
        cr_assert(fabs((double)got[i] - want[i]) <= tol, "%s[%zu]: got %.7g, PyTorch %.7g", what, i,
                  (double)got[i], (double)want[i]);
    }
}

/* Every view of p must have a PyTorch value and gradient. */
static void fx_load_params(const fixture *f, nn_params *p)
{
    char key[96];
    for (int i = 0; i < p->n_views; i++) {
        snprintf(key, sizeof key, "param:%s", p->views[i].name);
        memcpy(p->w + p->views[i].offset, fx_get(f, key, p->views[i].size),
               p->views[i].size * sizeof(float));
    }
    nn_params_zero_grad(p);
}

static void fx_check_grads(const fixture *f, const nn_params *p)
{
    char key[96];
    for (int i = 0; i < p->n_views; i++) {
        snprintf(key, sizeof key, "grad:%s", p->views[i].name);
        expect_close(p->dw + p->views[i].offset, fx_get(f, key, p->views[i].size), p->views[i].size, key);
    }
}

static float *zeros(size_t n)
{
    float *z = calloc(n ? n : 1, sizeof(float));
    cr_assert(z);
    return z;
}

static void run_conv1d(const char *op)
{
    fixture f;
    fx_load(&f, op);
    int B = fx_dim(&f, 0), T = fx_dim(&f, 1), Ci = fx_dim(&f, 2), Co = fx_dim(&f, 3);
    nn_params p;
    nn_params_init(&p);
    nn_conv1d conv;
    nn_conv1d_layout(&conv, &p, "conv", Ci, Co, fx_dim(&f, 4), fx_dim(&f, 5), fx_dim(&f, 6));
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    fx_load_params(&f, &p);
    int To = nn_conv1d_out_len(&conv, T);
    nn_conv1d_cache cache;
    cr_assert_eq(nn_conv1d_cache_init(&cache, &conv, B, T), HR_OK);
    size_t ny = (size_t)B * To * Co, nx = (size_t)B * T * Ci;
    float *y = zeros(ny), *dx = zeros(nx);
    nn_conv1d_forward(&conv, &p, &cache, B, T, fx_get(&f, "x", nx), y);
    expect_close(y, fx_get(&f, "y", ny), ny, "y");
    nn_conv1d_backward(&conv, &p, &cache, B, T, fx_get(&f, "r_y", ny), dx);
    expect_close(dx, fx_get(&f, "d_x", nx), nx, "d_x");
    fx_check_grads(&f, &p);
    free(y);
    free(dx);
    nn_conv1d_cache_free(&cache);
    nn_params_free(&p);
    fx_free(&f);
}

Test(nn_seq_fixture, conv1d_stride1_matches_pytorch)
{
    run_conv1d("conv1d_s1");
}

Test(nn_seq_fixture, conv1d_stride2_matches_pytorch)
{
    run_conv1d("conv1d_s2");
}

static void run_lstm(const char *op, int bidirectional)
{
    fixture f;
    fx_load(&f, op);
    int B = fx_dim(&f, 0), T = fx_dim(&f, 1), In = fx_dim(&f, 2), H = fx_dim(&f, 3);
    int D = bidirectional ? 2 : 1;
    nn_params p;
    nn_params_init(&p);
    nn_lstm uni;
    nn_bilstm bi;
    if (bidirectional)
        nn_bilstm_layout(&bi, &p, "bi", In, H);
    else
        nn_lstm_layout(&uni, &p, "lstm", In, H);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    fx_load_params(&f, &p);
    size_t nx = (size_t)B * T * In, ny = (size_t)B * T * D * H, ns = (size_t)D * B * H;
    float *y = zeros(ny), *hn = zeros(ns), *cn = zeros(ns), *dx = zeros(nx), *dh0 = zeros(ns),
          *dc0 = zeros(ns);
    const float *x = fx_get(&f, "x", nx), *h0 = fx_get(&f, "h0", ns), *c0 = fx_get(&f, "c0", ns);
    const float *ry = fx_get(&f, "r_y", ny), *rh = fx_get(&f, "r_hn", ns), *rc = fx_get(&f, "r_cn", ns);
    if (bidirectional) {
        nn_bilstm_cache cache;
        cr_assert_eq(nn_bilstm_cache_init(&cache, B, T, H), HR_OK);
        nn_bilstm_forward(&bi, &p, &cache, B, T, x, h0, c0, y, hn, cn);
        nn_bilstm_backward(&bi, &p, &cache, x, ry, rh, rc, dx, dh0, dc0);
        nn_bilstm_cache_free(&cache);
    } else {
        nn_lstm_cache cache;
        cr_assert_eq(nn_lstm_cache_init(&cache, B, T, H), HR_OK);
        nn_lstm_forward(&uni, &p, &cache, B, T, x, h0, c0, y, hn, cn);
        nn_lstm_backward(&uni, &p, &cache, x, ry, rh, rc, dx, dh0, dc0);
        nn_lstm_cache_free(&cache);
    }
    expect_close(y, fx_get(&f, "y", ny), ny, "y");
    expect_close(hn, fx_get(&f, "hn", ns), ns, "hn");
    expect_close(cn, fx_get(&f, "cn", ns), ns, "cn");
    expect_close(dx, fx_get(&f, "d_x", nx), nx, "d_x");
    expect_close(dh0, fx_get(&f, "d_h0", ns), ns, "d_h0");
    expect_close(dc0, fx_get(&f, "d_c0", ns), ns, "d_c0");
    fx_check_grads(&f, &p);
    free(y);
    free(hn);
    free(cn);
    free(dx);
    free(dh0);
    free(dc0);
    nn_params_free(&p);
    fx_free(&f);
}

Test(nn_seq_fixture, lstm_matches_pytorch)
{
    run_lstm("lstm", 0);
}

Test(nn_seq_fixture, bilstm_matches_pytorch)
{
    run_lstm("bilstm", 1);
}

static unsigned char *mask_from(const float *m, size_t n)
{
    unsigned char *u = malloc(n);
    cr_assert(u);
    for (size_t i = 0; i < n; i++) u[i] = m[i] != 0.0f;
    return u;
}

Test(nn_seq_fixture, additive_attention_matches_pytorch)
{
    fixture f;
    fx_load(&f, "attention");
    int B = fx_dim(&f, 0), S = fx_dim(&f, 1), Dq = fx_dim(&f, 2), Dk = fx_dim(&f, 3), A = fx_dim(&f, 4);
    nn_params p;
    nn_params_init(&p);
    nn_attn_additive att;
    nn_attn_additive_layout(&att, &p, "att", Dq, Dk, A);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    fx_load_params(&f, &p);
    size_t nk = (size_t)B * S * Dk, nkp = (size_t)B * S * A;
    const float *q = fx_get(&f, "q", (size_t)B * Dq), *keys = fx_get(&f, "keys", nk);
    unsigned char *mask = mask_from(fx_get(&f, "mask", (size_t)B * S), (size_t)B * S);
    float *kproj = zeros(nkp), *tanh_e = zeros(nkp), *w = zeros((size_t)B * S), *ctx = zeros((size_t)B * Dk);
    float *dq = zeros((size_t)B * Dq), *dkeys = zeros(nk), *dkproj = zeros(nkp);
    float *scratch = zeros((size_t)B * (A + S));
    nn_attn_additive_keys(&att, &p, B, S, keys, kproj);
    nn_attn_additive_forward(&att, &p, NULL, B, S, q, keys, kproj, mask, tanh_e, w, ctx);
    expect_close(ctx, fx_get(&f, "ctx", (size_t)B * Dk), (size_t)B * Dk, "ctx");
    expect_close(w, fx_get(&f, "a", (size_t)B * S), (size_t)B * S, "a");
    nn_attn_additive_backward(&att, &p, B, S, q, keys, tanh_e, w, fx_get(&f, "r_ctx", (size_t)B * Dk),
                              scratch, dq, dkeys, dkproj);
    nn_attn_additive_keys_backward(&att, &p, B, S, keys, dkproj, dkeys);
    expect_close(dq, fx_get(&f, "d_q", (size_t)B * Dq), (size_t)B * Dq, "d_q");
    expect_close(dkeys, fx_get(&f, "d_keys", nk), nk, "d_keys");
    fx_check_grads(&f, &p);
    free(mask);
    free(kproj);
    free(tanh_e);
    free(w);
    free(ctx);
    free(dq);
    free(dkeys);
    free(dkproj);
    free(scratch);
    nn_params_free(&p);
    fx_free(&f);
}

Test(nn_seq_fixture, decoder_teacher_forcing_matches_pytorch)
{
    fixture f;
    fx_load(&f, "decoder");
    int B = fx_dim(&f, 0), S = fx_dim(&f, 1), Dk = fx_dim(&f, 2), E = fx_dim(&f, 3), H = fx_dim(&f, 4);
    int A = fx_dim(&f, 5), n_in = fx_dim(&f, 6), n_out = fx_dim(&f, 7), T = fx_dim(&f, 8);
    nn_params p;
    nn_params_init(&p);
    nn_decoder dec;
    nn_decoder_layout(&dec, &p, "dec", n_in, n_out, E, Dk, H, A);
    cr_assert_eq(nn_params_alloc(&p), HR_OK);
    fx_load_params(&f, &p);
    nn_decoder_ws ws;
    cr_assert_eq(nn_decoder_ws_init(&ws, &dec, B + 1, S + 2, T + 1), HR_OK); /* larger than needed */
    size_t nk = (size_t)B * S * Dk, bh = (size_t)B * H;
    const float *keys = fx_get(&f, "keys", nk), *rng_ = fx_get(&f, "ranges", 2 * (size_t)T);
    const float *prevf = fx_get(&f, "prev", (size_t)T * B);
    unsigned char *mask = mask_from(fx_get(&f, "mask", (size_t)B * S), (size_t)B * S);
    float *logits[16];
    const float *dlogits[16];
    cr_assert_leq(T, 16);
    int prev[16];
    char key[32];

    for (int pass = 0; pass < 2; pass++) { /* the second pass checks that the workspace is reusable */
        nn_decoder_begin(&dec, &p, &ws, B, S, keys, mask, fx_get(&f, "h0", bh), fx_get(&f, "c0", bh));
        for (int t = 0; t < T; t++) {
            int vb = (int)rng_[2 * t], ve = (int)rng_[2 * t + 1];
            for (int b = 0; b < B; b++) prev[b] = (int)prevf[t * B + b];
            if (pass == 0) logits[t] = zeros((size_t)B * (ve - vb));
            nn_decoder_step(&dec, &p, &ws, prev, vb, ve, logits[t]);
            snprintf(key, sizeof key, "logits%d", t);
            expect_close(logits[t], fx_get(&f, key, (size_t)B * (ve - vb)), (size_t)B * (ve - vb), key);
            snprintf(key, sizeof key, "r_logits%d", t);
            dlogits[t] = fx_get(&f, key, (size_t)B * (ve - vb));
        }
        expect_close(ws.h + T * bh, fx_get(&f, "hn", bh), bh, "hn");
        expect_close(ws.c + T * bh, fx_get(&f, "cn", bh), bh, "cn");
    }
    float *dkeys = zeros(nk), *dh0 = zeros(bh), *dc0 = zeros(bh);
    nn_decoder_backward(&dec, &p, &ws, dlogits, fx_get(&f, "r_hn", bh), fx_get(&f, "r_cn", bh), dkeys,
                        dh0, dc0);
    expect_close(dkeys, fx_get(&f, "d_keys", nk), nk, "d_keys");
    expect_close(dh0, fx_get(&f, "d_h0", bh), bh, "d_h0");
    expect_close(dc0, fx_get(&f, "d_c0", bh), bh, "d_c0");
    fx_check_grads(&f, &p);
    for (int t = 0; t < T; t++) free(logits[t]);
    free(dkeys);
    free(dh0);
    free(dc0);
    free(mask);
    nn_decoder_ws_free(&ws);
    nn_params_free(&p);
    fx_free(&f);
}
