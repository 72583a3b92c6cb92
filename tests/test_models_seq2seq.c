/* The seq2seq family on a 2,000-row subset of gfx906's ConvAsm1x1U perf-db: learning, beam/greedy
 * agreement, constrained decoding validity, save/load, determinism, ablations, config checks; and
 * the beam-search core on a hand-set scorer against brute force under a rule that forbids the
 * greedy choice. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/h5.h"
#include "helpers/models_config.h"
#include "helpers/testutil.h"
#include "models/model.h"
#include "models/seq2seq_internal.h"

typedef struct fixture {
    data_tune *t;
    int *train, *valid, *test;
    int n_train, n_valid, n_test;
    float *X;
    int nf;
    data_codec *codec; /* the perf-db's */
    double *V;         /* (n, nv) every problem's values */
    int nv;
} fixture;

/* The perf-db's ConvAsm1x1U rows, cut to n seeded random rows, vocabularies rebuilt. */
static fixture fixture_load(int n)
{
    fixture f;
    memset(&f, 0, sizeof f);
    hr_h5_quiet();
    data_load_opts o = {0};
    cr_assert_eq(data_perfdb_load(test_miopen("gfx906_60.db.bz2"), "ConvAsm1x1U", &o, &f.t), HR_OK, "%s",
                 hr_last_error());
    data_tune *t = f.t;
    const int L = t->length;
    cr_assert(t->n >= n);
    int *perm = malloc((size_t)t->n * sizeof *perm);
    for (int i = 0; i < t->n; i++) perm[i] = i;
    hr_rng rng;
    hr_rng_seed(&rng, 11);
    hr_rng_shuffle_int(&rng, perm, (size_t)t->n);
    data_problem *pr = malloc((size_t)n * sizeof *pr);
    int32_t *val = malloc((size_t)n * L * sizeof *val);
    for (int i = 0; i < n; i++) {
        pr[i] = t->problems[perm[i]];
        memcpy(val + (size_t)i * L, t->values + (size_t)perm[i] * L, (size_t)L * sizeof *val);
    }
    free(perm);
    free(t->problems);
    free(t->values);
    free(t->tokens);
    for (int j = 0; j < L; j++) free(t->vocab[j]);
    free(t->vocab);
    free(t->vocab_size);
    t->problems = pr;
    t->values = val;
    t->n = n;
    cr_assert_eq(data_tune_build_vocab(t, L), HR_OK);
    f.nf = data_features_count();
    f.X = malloc((size_t)n * f.nf * sizeof *f.X);
    data_features_compute_all(t->problems, n, f.X);
    cr_assert_eq(data_codec_of_tune(t, &f.codec), HR_OK);
    f.nv = data_codec_value_count(f.codec);
    f.V = malloc((size_t)n * f.nv * sizeof *f.V);
    data_tune_values(t, f.V);
    f.train = malloc((size_t)n * sizeof(int));
    f.valid = malloc((size_t)n * sizeof(int));
    f.test = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        if (i % 10 == 0) f.test[f.n_test++] = i;
        else if (i % 10 == 1) f.valid[f.n_valid++] = i;
        else f.train[f.n_train++] = i;
    }
    return f;
}

static void fixture_free(fixture *f)
{
    data_tune_free(f->t);
    data_codec_free(f->codec);
    free(f->V);
    free(f->X);
    free(f->train);
    free(f->valid);
    free(f->test);
}

/* Row r as the decoder takes it. */
static data_tune_problem q_of(const fixture *f, int r)
{
    return data_tune_problem_of(f->t, f->V, r, 0);
}

#define TINY "\"embed\": 16, \"conv_layers\": 1, \"conv_channels\": 32, \"hidden\": 32, \"attn\": 32, \"batch_size\": 32"

static model *train_s2s(const fixture *f, const char *config, uint64_t seed)
{
    cJSON *cfg = cJSON_Parse(config);
    cr_assert(cfg, "bad test config %s", config);
    hr_log log = hr_log_silent();
    model_train_data d = {.task = MODEL_TASK_TUNE, .tune = f->t, .codec = f->codec, .V = f->V, .X = f->X,
                          .n_features = f->nf, .train = f->train, .n_train = f->n_train, .valid = f->valid,
                          .n_valid = f->n_valid};
    model_ctx ctx = {seed, 1, &log, cfg, NULL, 0, NULL, NULL, NULL, NULL};
    model *m = NULL;
    int rc = model_train(&model_family_seq2seq, &d, &ctx, &m);
    cJSON_Delete(cfg);
    cr_assert_eq(rc, HR_OK, "%s", hr_last_error());
    return m;
}

typedef struct decode_stats {
    double acc;    /* per-position accuracy */
    double exact;
    double valid;
} decode_stats;

static decode_stats decode_all(const fixture *f, const model *mb, s2s_infer *w, s2s_decode_kind kind, int k,
                               int32_t *out)
{
    const seq2seq *m = (const seq2seq *)mb;
    const data_tune *t = f->t;
    const int L = t->length;
    const data_constraint *con = data_constraint_find(t->solver);
    decode_stats s = {0, 0, 0};
    for (int i = 0; i < f->n_test; i++) {
        int r = f->test[i];
        int32_t *v = out + (size_t)i * L;
        data_tune_problem q = q_of(f, r);
        cr_assert_eq(s2s_decode(m, w, &q, kind, k, v, NULL), HR_OK);
        int hit = 0;
        for (int j = 0; j < L; j++) hit += v[j] == t->values[(size_t)r * L + j];
        s.acc += (double)hit / L;
        s.exact += hit == L;
        s.valid += con->valid_prefix(&t->problems[r], v, L);
    }
    s.acc /= f->n_test;
    s.exact /= f->n_test;
    s.valid /= f->n_test;
    return s;
}

/* Accuracy of predicting each position's most frequent training value. */
static double majority_baseline(const fixture *f)
{
    const data_tune *t = f->t;
    const int L = t->length;
    double acc = 0;
    for (int j = 0; j < L; j++) {
        int *cnt = calloc((size_t)t->vocab_size[j], sizeof *cnt), best = 0;
        for (int i = 0; i < f->n_train; i++) cnt[t->tokens[(size_t)f->train[i] * L + j]]++;
        for (int v = 1; v < t->vocab_size[j]; v++)
            if (cnt[v] > cnt[best]) best = v;
        int hit = 0;
        for (int i = 0; i < f->n_test; i++) hit += t->tokens[(size_t)f->test[i] * L + j] == best;
        acc += (double)hit / f->n_test;
        free(cnt);
    }
    return acc / L;
}

Test(seq2seq, learns_and_decodes_validly)
{
    fixture f = fixture_load(2000);
    model *m = train_s2s(&f, "{" TINY ", \"epochs\": 6}", 1);
    cr_assert_gt(m->n_curve, 1);
    cr_assert_lt(m->curve[m->n_curve - 1].train_loss, 0.8f * m->curve[0].train_loss, "loss %g -> %g",
                 m->curve[0].train_loss, m->curve[m->n_curve - 1].train_loss);
    const int L = f.t->length;
    int32_t *g = malloc((size_t)f.n_test * L * sizeof *g), *b1 = malloc((size_t)f.n_test * L * sizeof *b1);
    int32_t *bu = malloc((size_t)f.n_test * L * sizeof *bu), *bc = malloc((size_t)f.n_test * L * sizeof *bc);
    s2s_infer *w = NULL;
    cr_assert_eq(s2s_infer_create((const seq2seq *)m, &w), HR_OK);
    decode_stats sg = decode_all(&f, m, w, S2S_DECODE_GREEDY, 1, g);
    decode_stats s1 = decode_all(&f, m, w, S2S_DECODE_BEAM, 1, b1);
    decode_stats su = decode_all(&f, m, w, S2S_DECODE_BEAM, 10, bu);
    decode_stats sc = decode_all(&f, m, w, S2S_DECODE_CONSTRAINED, 10, bc);
    double base = majority_baseline(&f);
    cr_log_info("majority %.3f greedy %.3f/%.3f/%.3f beam %.3f/%.3f/%.3f constrained %.3f/%.3f/%.3f", base, sg.acc,
                sg.exact, sg.valid, su.acc, su.exact, su.valid, sc.acc, sc.exact, sc.valid);
    /* beam of width 1 is greedy */
    cr_assert_eq(memcmp(g, b1, (size_t)f.n_test * L * sizeof *g), 0);
    cr_assert_eq(sg.acc, s1.acc);
    cr_assert_gt(sg.acc, base + 0.03, "greedy %.3f vs majority %.3f", sg.acc, base);
    cr_assert_gt(sc.acc, base + 0.03, "constrained %.3f vs majority %.3f", sc.acc, base);
    cr_assert_eq(sc.valid, 1.0, "constrained beam produced an invalid sequence (valid %.4f)", sc.valid);
    cr_assert_geq(sc.valid, su.valid);
    cr_assert_eq(s2s_fallback_count(w), 0);
    s2s_infer_free(w);
    free(g);
    free(b1);
    free(bu);
    free(bc);
    model_free(m);
    fixture_free(&f);
}

/* A rule that only judges the first value once two are known, so a beam that dropped it meets a dead
 * end at position 1 and the decoder must backtrack. */
static int32_t forced_first;
static int forced_rule(const data_problem *p, const int32_t *v, int len)
{
    (void)p;
    return len < 2 || v[0] == forced_first;
}

Test(seq2seq, dead_ends_are_backtracked)
{
    fixture f = fixture_load(2000);
    model *mb = train_s2s(&f, "{" TINY ", \"epochs\": 1}", 4);
    seq2seq *m = (seq2seq *)mb;
    const int L = f.t->length;
    static const char *const names[16] = {0};
    data_constraint rule = {"forced", L, names, forced_rule, NULL, NULL};
    const data_constraint *saved = m->base.constraint;
    m->base.constraint = &rule;
    s2s_infer *w = NULL;
    cr_assert_eq(s2s_infer_create(m, &w), HR_OK);
    for (int i = 0; i < 20; i++) {
        const data_problem *p = &f.t->problems[f.test[i]];
        data_tune_problem q = q_of(&f, f.test[i]);
        int32_t g[16], v[16];
        int fell = -1;
        cr_assert_eq(s2s_decode(m, w, &q, S2S_DECODE_GREEDY, 1, g, NULL), HR_OK);
        /* force a first value greedy did not pick */
        forced_first = m->base.vocab[0][0] == g[0] ? m->base.vocab[0][1] : m->base.vocab[0][0];
        cr_assert_eq(s2s_decode(m, w, &q, S2S_DECODE_CONSTRAINED, 1, v, &fell), HR_OK);
        cr_assert_eq(fell, 0);
        cr_assert(forced_rule(p, v, L), "row %d: first value %d, forced %d", i, v[0], forced_first);
    }
    cr_assert_eq(s2s_fallback_count(w), 0);
    s2s_infer_free(w);
    m->base.constraint = saved;
    model_free(mb);
    fixture_free(&f);
}

Test(seq2seq, save_load_round_trip)
{
    fixture f = fixture_load(2000);
    model *m = train_s2s(&f, "{" TINY ", \"epochs\": 2, \"beam\": 6}", 3);
    char *path = test_tmppath(".h5");
    cr_assert_eq(model_save(m, path), HR_OK, "%s", hr_last_error());
    model *r = NULL;
    cr_assert_eq(model_load(path, &r), HR_OK, "%s", hr_last_error());
    cr_assert_eq(r->family, &model_family_seq2seq);
    cr_assert_eq(model_n_params(r), model_n_params(m));
    const seq2seq *a = (const seq2seq *)m, *b = (const seq2seq *)r;
    cr_assert_eq(memcmp(a->p.w, b->p.w, a->p.n * sizeof(float)), 0);
    cr_assert_eq(b->a.beam, 6);
    cr_assert_eq(b->a.decode, S2S_DECODE_CONSTRAINED);
    for (int fld = 0; fld < S2S_N_FIELDS; fld++) {
        cr_assert_eq(a->n_vals[fld], b->n_vals[fld]);
        cr_assert_eq(memcmp(a->vals[fld], b->vals[fld], (size_t)a->n_vals[fld] * sizeof(int64_t)), 0);
    }
    const int L = f.t->length;
    model_ws *wm = NULL, *wr = NULL;
    cr_assert_eq(model_ws_create(m, &wm), HR_OK);
    cr_assert_eq(model_ws_create(r, &wr), HR_OK);
    for (int i = 0; i < f.n_test; i++) {
        int32_t x[16], y[16];
        data_tune_problem q = q_of(&f, f.test[i]);
        cr_assert_eq(model_predict_tune(m, wm, &q, x), HR_OK);
        cr_assert_eq(model_predict_tune(r, wr, &q, y), HR_OK);
        cr_assert_eq(memcmp(x, y, (size_t)L * sizeof *x), 0, "row %d differs after reload", i);
    }
    /* an unseen value of every field maps to UNK and still decodes */
    double odd[DATA_CODEC_MAX_VALUES];
    memcpy(odd, f.V + (size_t)f.test[0] * f.nv, (size_t)f.nv * sizeof *odd);
    odd[DATA_FIELD_IN_C] = 123457;
    odd[DATA_FIELD_BATCH] = 999;
    data_tune_problem oq = {odd, NULL, 0, L, NULL};
    int32_t v[16];
    cr_assert_eq(model_predict_tune(r, wr, &oq, v), HR_OK);
    model_ws_free(wm);
    model_ws_free(wr);
    unlink(path);
    free(path);
    model_free(r);
    model_free(m);
    fixture_free(&f);
}

Test(seq2seq, same_seed_same_parameters)
{
    fixture f = fixture_load(2000);
    model *a = train_s2s(&f, "{" TINY ", \"epochs\": 2}", 5);
    model *b = train_s2s(&f, "{" TINY ", \"epochs\": 2}", 5);
    model *c = train_s2s(&f, "{" TINY ", \"epochs\": 2}", 6);
    const seq2seq *sa = (const seq2seq *)a, *sb = (const seq2seq *)b, *sc = (const seq2seq *)c;
    cr_assert_eq(sa->p.n, sb->p.n);
    cr_assert_eq(memcmp(sa->p.w, sb->p.w, sa->p.n * sizeof(float)), 0);
    cr_assert_neq(memcmp(sa->p.w, sc->p.w, sa->p.n * sizeof(float)), 0);
    model_free(a);
    model_free(b);
    model_free(c);
    fixture_free(&f);
}

Test(seq2seq, ablations_train_and_decode)
{
    fixture f = fixture_load(600);
    const char *configs[] = {
        "{\"embed\": 8, \"conv_layers\": 0, \"hidden\": 16, \"attn\": 8, \"epochs\": 1}",
        "{\"embed\": 8, \"conv_layers\": 2, \"conv_channels\": 8, \"lstm_layers\": 2, \"encoder\": \"lstm\", "
        "\"hidden\": 16, \"attn\": 8, \"epochs\": 1}",
    };
    for (size_t c = 0; c < sizeof configs / sizeof *configs; c++) {
        model *m = train_s2s(&f, configs[c], 2);
        const seq2seq *s = (const seq2seq *)m;
        cr_assert_eq(s->key, s->a.bidir ? 2 * s->a.hidden : s->a.hidden);
        int32_t *out = malloc((size_t)f.n_test * f.t->length * sizeof *out);
        s2s_infer *w = NULL;
        cr_assert_eq(s2s_infer_create(s, &w), HR_OK);
        decode_stats st = decode_all(&f, m, w, S2S_DECODE_CONSTRAINED, 4, out);
        cr_assert_eq(st.valid, 1.0);
        s2s_infer_free(w);
        free(out);
        model_free(m);
    }
    fixture_free(&f);
}

Test(seq2seq, config_is_checked)
{
    /* the config is parsed before the data is touched */
    const char *bad[] = {"{\"hiden\": 8}", "{\"decode\": \"viterbi\"}", "{\"encoder\": \"gru\"}", "{\"beam\": 0}",
                         "{\"conv_layers\": 9}", "{\"hidden\": 2.5}", "[1]"};
    hr_log log = hr_log_silent();
    int row = 0;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cJSON *cfg = cJSON_Parse(bad[i]);
        model_train_data d = {.task = MODEL_TASK_TUNE, .train = &row, .n_train = 1};
        model_ctx ctx = {1, 1, &log, cfg, NULL, 0, NULL, NULL, NULL, NULL};
        model *m = NULL;
        cr_assert_eq(model_train(&model_family_seq2seq, &d, &ctx, &m), HR_EINVAL, "accepted %s", bad[i]);
        cr_assert_null(m);
        cJSON_Delete(cfg);
    }
    check_loop_config_refused(&model_family_seq2seq, MODEL_TASK_TUNE);
    check_config_refused(&model_family_seq2seq, MODEL_TASK_TUNE, "{\"encoder\": \"gru\"}",
                         "seq2seq config: \"encoder\" must be one of bilstm or lstm, got \"gru\"");
    check_config_refused(&model_family_seq2seq, MODEL_TASK_TUNE, "{\"beam\": 2.5}",
                         "seq2seq config: \"beam\" must be an integer in [1, 32], got 2.5");
}

/* ---- the beam-search core on a hand-set scorer ---- */

/* L = 3 positions of V = 3 values; log-probabilities depend on the position and the previous token,
 * so the greedy path is not the best sequence and beams matter. */
enum { FL = 3, FV = 3 };
static const float fixture_logp[FL][FV][FV] = {
    /* position 0 (no previous token: row 0 used) */
    {{-0.2f, -1.9f, -2.5f}, {0}, {0}},
    /* position 1, by previous token */
    {{-1.2f, -1.2f, -0.7f}, {-3.0f, -0.05f, -4.0f}, {-0.1f, -3.0f, -3.0f}},
    /* position 2, by previous token */
    {{-0.3f, -1.5f, -2.0f}, {-0.02f, -4.5f, -5.0f}, {-2.2f, -1.9f, -2.0f}},
};

typedef struct fx_ctx {
    int rows;
    int state[S2S_MAX_BEAM]; /* previous token of each row, to check that parents are honoured */
} fx_ctx;

static void fixture_step(void *vctx, int j, int rows, const int *parent, const int *prev, float *logp)
{
    fx_ctx *c = vctx;
    int st[S2S_MAX_BEAM];
    for (int r = 0; r < rows; r++) {
        /* the beam must feed each row the token its hypothesis ended with */
        if (j) cr_assert_geq(parent[r], 0);
        st[r] = j ? prev[r] : 0;
        memcpy(logp + (size_t)r * FV, fixture_logp[j][st[r]], FV * sizeof(float));
    }
    memcpy(c->state, st, sizeof st);
}

/* A rule: value 0 is forbidden at position 0 (the greedy choice), and 1 after 2. */
static int fixture_rule(const data_problem *p, const int32_t *v, int len)
{
    (void)p;
    if (len >= 1 && v[0] == 10) return 0;
    for (int j = 1; j < len; j++)
        if (v[j - 1] == 12 && v[j] == 11) return 0;
    return 1;
}

static int reject_all(const data_problem *p, const int32_t *v, int len)
{
    (void)p;
    (void)v;
    return len < 2; /* every prefix of length 2 is a dead end */
}

/* Best sequence by brute force, under a rule or not. */
static float brute_best(int (*rule)(const data_problem *, const int32_t *, int), int32_t *best)
{
    float top = -INFINITY;
    for (int a = 0; a < FV; a++)
        for (int b = 0; b < FV; b++)
            for (int c = 0; c < FV; c++) {
                int32_t v[FL] = {10 + a, 10 + b, 10 + c};
                if (rule && !rule(NULL, v, FL)) continue;
                float s = fixture_logp[0][0][a] + fixture_logp[1][a][b] + fixture_logp[2][b][c];
                if (s > top) {
                    top = s;
                    memcpy(best, v, sizeof v);
                }
            }
    return top;
}

Test(seq2seq_beam, constrained_beam_finds_best_valid_sequence)
{
    static const int32_t voc[FV] = {10, 11, 12};
    const int32_t *vocab[FL] = {voc, voc, voc};
    const int vsize[FL] = {FV, FV, FV};
    static const char *const names[FL] = {"a", "b", "c"};
    data_constraint rule = {"fixture", FL, names, fixture_rule, NULL, NULL};
    double pv[DATA_CODEC_MAX_VALUES] = {0};
    data_tune_problem p = {pv, NULL, 0, FL, NULL};
    s2s_beam_ws bw;
    cr_assert_eq(s2s_beam_ws_init(&bw, 9, FL, FV), HR_OK);
    fx_ctx c = {0};
    int32_t out[FL], want[FL];
    int fell = -1;

    /* greedy (k = 1, no rule) follows the locally best tokens: 10, then 12, then 11 */
    s2s_beam_search(&bw, 1, FL, vsize, vocab, NULL, &p, fixture_step, &c, out, &fell);
    cr_assert(out[0] == 10 && out[1] == 12 && out[2] == 11, "greedy %d %d %d", out[0], out[1], out[2]);
    cr_assert_eq(fell, 0);
    /* a full-width beam (9 = V^(L-1) hypotheses) is exhaustive: it returns the global best */
    brute_best(NULL, want);
    s2s_beam_search(&bw, 9, FL, vsize, vocab, NULL, &p, fixture_step, &c, out, &fell);
    cr_assert_eq(memcmp(out, want, sizeof out), 0, "beam %d %d %d, best %d %d %d", out[0], out[1], out[2], want[0],
                 want[1], want[2]);
    cr_assert(!(want[0] == 10 && want[1] == 12 && want[2] == 11), "fixture must separate greedy from best");
    /* with the rule (greedy's first value forbidden), the exhaustive beam returns the best valid one */
    brute_best(fixture_rule, want);
    s2s_beam_search(&bw, 9, FL, vsize, vocab, &rule, &p, fixture_step, &c, out, &fell);
    cr_assert_eq(memcmp(out, want, sizeof out), 0, "constrained %d %d %d, best valid %d %d %d", out[0], out[1],
                 out[2], want[0], want[1], want[2]);
    cr_assert_eq(fell, 0);
    /* every width emits a valid sequence */
    for (int k = 1; k <= 9; k++) {
        s2s_beam_search(&bw, k, FL, vsize, vocab, &rule, &p, fixture_step, &c, out, &fell);
        cr_assert(fixture_rule(NULL, out, FL), "k=%d emitted an invalid sequence", k);
        cr_assert_eq(fell, 0);
    }
    /* no valid continuation at all: fall back to the unconstrained search and say so */
    data_constraint dead = {"dead", FL, names, reject_all, NULL, NULL};
    int32_t free_out[FL];
    s2s_beam_search(&bw, 3, FL, vsize, vocab, NULL, &p, fixture_step, &c, free_out, &fell);
    s2s_beam_search(&bw, 3, FL, vsize, vocab, &dead, &p, fixture_step, &c, out, &fell);
    cr_assert_eq(fell, 1);
    cr_assert_eq(memcmp(out, free_out, sizeof out), 0);
    s2s_beam_ws_free(&bw);
}
