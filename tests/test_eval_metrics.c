/* Selection and tuning metrics against hand-computed values. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "data/portable.h"
#include "eval/eval.h"

Test(eval, select_metrics_hand_computed)
{
    const float I = INFINITY;
    /* 4 problems, 3 kernels */
    float rt[12] = {1, 2, I,    /* fastest 0 */
                    4, 2, 1,    /* fastest 2 */
                    I, 3, 6,    /* fastest 1 */
                    5, I, 10};  /* fastest 0 */
    float sc[12] = {0.9f, 0.1f, 0.0f,  /* picks 0: right, eff 1 */
                    0.2f, 0.7f, 0.1f,  /* picks 1: eff 1/2, fastest ranked 3rd */
                    0.8f, 0.1f, 0.1f,  /* picks 0: unmeasured, eff 0 */
                    0.1f, 0.2f, 0.7f}; /* picks 2: eff 5/10 */
    eval_select_metrics m;
    double eff[4];
    cr_assert_eq(eval_select_compute(rt, sc, 4, 3, &m, eff), HR_OK);
    cr_assert_float_eq(eff[0], 1.0, 1e-12);
    cr_assert_float_eq(eff[1], 0.5, 1e-12);
    cr_assert_float_eq(eff[2], 0.0, 1e-12);
    cr_assert_float_eq(eff[3], 0.5, 1e-12);
    cr_assert_float_eq(m.top1, 0.25, 1e-12);
    cr_assert_float_eq(m.top5, 1.0, 1e-12); /* only 3 kernels: always within 5 */
    cr_assert_float_eq(m.efficiency_mean, 0.5, 1e-12);
    cr_assert_float_eq(m.efficiency_median, 0.5, 1e-12);
    cr_assert_float_eq(m.efficiency_min, 0.0, 1e-12);
    /* p10 of sorted (0, .5, .5, 1): position 0.3 -> 0 + 0.3 * 0.5 */
    cr_assert_float_eq(m.efficiency_p10, 0.15, 1e-12);
    cr_assert_float_eq(m.unmeasured_rate, 0.25, 1e-12);
}

Test(eval, topk_respects_rank_and_ties)
{
    float rt[6] = {9, 8, 7, 6, 5, 1};
    float sc[6] = {6, 5, 4, 3, 2, 1}; /* fastest kernel 5 ranked last */
    cr_assert_not(eval_select_in_topk(rt, sc, 6, 5));
    cr_assert(eval_select_in_topk(rt, sc, 6, 6));
    float tie[3] = {1, 1, 1};
    float rt2[3] = {3, 1, 2};
    cr_assert_eq(eval_select_argmax(tie, 3), 0);
    cr_assert_not(eval_select_in_topk(rt2, tie, 3, 1)); /* the tie goes to kernel 0 */
    cr_assert(eval_select_in_topk(rt2, tie, 3, 2));
}

Test(eval, runtime_ties_make_every_tied_kernel_fastest)
{
    const float I = INFINITY;
    float rt[4] = {2, 1, I, 1}; /* kernels 1 and 3 both measured fastest */
    float pick3[4] = {0.1f, 0.2f, 0.0f, 0.7f}, pick0[4] = {0.7f, 0.1f, 0.0f, 0.2f}, pick2[4] = {0.1f, 0.2f, 0.6f, 0.1f};
    cr_assert(eval_select_in_topk(rt, pick3, 4, 1)); /* the higher index of the two counts */
    cr_assert_not(eval_select_in_topk(rt, pick0, 4, 1));
    cr_assert(eval_select_in_topk(rt, pick0, 4, 2)); /* kernel 3 ranked second */
    cr_assert_not(eval_select_in_topk(rt, pick2, 4, 1));
    cr_assert(eval_select_in_topk(rt, pick2, 4, 2)); /* kernel 1 ranked second, kernel 3 third */
    /* a near tie is not a tie */
    float rt2[2] = {1.0f, nextafterf(1.0f, 2.0f)}, pick1[2] = {0.0f, 1.0f};
    cr_assert_not(eval_select_in_topk(rt2, pick1, 2, 1));
    /* the aggregate: one problem won through the tie, one lost, efficiency 1 for both tied picks */
    float rts[8] = {2, 1, I, 1, 3, 1, 1, 5}, scs[8] = {0, 0, 0, 1, 0, 0, 1, 0};
    eval_select_metrics m;
    cr_assert_eq(eval_select_compute(rts, scs, 2, 4, &m, NULL), HR_OK);
    cr_assert_float_eq(m.top1, 1.0, 1e-12);
    cr_assert_float_eq(m.efficiency_mean, 1.0, 1e-12);
    float scs2[8] = {1, 0, 0, 0, 0, 0, 1, 0};
    cr_assert_eq(eval_select_compute(rts, scs2, 2, 4, &m, NULL), HR_OK);
    cr_assert_float_eq(m.top1, 0.5, 1e-12);
    cr_assert_float_eq(m.efficiency_mean, 0.75, 1e-12);
}

Test(eval, list_hit_applies_the_rule_to_a_problems_candidates)
{
    const float I = INFINITY;
    float rt[5] = {4, 1, I, 1, 2}; /* kernels 1 and 3 tied fastest, 2 unmeasured */
    int kern[3] = {4, 3, 0};       /* a candidate list in its own order */
    float sc[3] = {0.5f, 0.5f, 0.1f};
    cr_assert_not(eval_select_list_hit(rt, 5, kern, sc, 3)); /* a score tie goes to the first candidate, kernel 4 */
    sc[1] = 0.6f;
    cr_assert(eval_select_list_hit(rt, 5, kern, sc, 3)); /* kernel 3, tied fastest */
    cr_assert_not(eval_select_list_hit(rt, 5, kern, sc, 0)); /* an empty list has no pick */
    int unmeasured[1] = {2};
    float one[1] = {1.0f};
    cr_assert_not(eval_select_list_hit(rt, 5, unmeasured, one, 1));
    /* the list's pick is eval_select_hit's */
    for (int a = 0; a < 3; a++) {
        float s3[3] = {0, 0, 0};
        s3[a] = 1.0f;
        cr_assert_eq(eval_select_list_hit(rt, 5, kern, s3, 3), eval_select_hit(rt, 5, kern[a]));
    }
}

Test(eval, hit_is_the_one_top1_rule)
{
    const float I = INFINITY;
    float rt[4] = {2, 1, I, 1}; /* kernels 1 and 3 tied fastest */
    cr_assert(eval_select_hit(rt, 4, 1));
    cr_assert(eval_select_hit(rt, 4, 3));
    cr_assert_not(eval_select_hit(rt, 4, 0));
    cr_assert_not(eval_select_hit(rt, 4, 2)); /* unmeasured */
    float none[2] = {I, I};
    cr_assert_not(eval_select_hit(none, 2, 0)); /* no measurement: no fastest kernel */
    /* hits over rows of a runtime table agree with in_topk(k = 1) and with eval_select_compute's top1 */
    float table[12] = {9, 9, 9,  /* row 0, not used */
                       3, 1, 1,  /* row 1: 1 and 2 tied fastest */
                       1, 2, 3,  /* row 2 */
                       2, I, 1}; /* row 3 */
    int rows[3] = {3, 1, 2};
    float sc[9] = {0.5f, 0.9f, 0.1f,  /* row 3 picks 1: unmeasured */
                   0.0f, 0.3f, 0.3f,  /* row 1: score tie between 1 and 2 goes to 1, a fastest */
                   0.8f, 0.1f, 0.1f}; /* row 2 picks 0, the fastest */
    cr_assert_eq(eval_select_hits(table, 3, rows, sc, 3), 2);
    long topk = 0;
    float gathered[9];
    for (int i = 0; i < 3; i++) {
        topk += eval_select_in_topk(table + rows[i] * 3, sc + i * 3, 3, 1);
        for (int k = 0; k < 3; k++) gathered[i * 3 + k] = table[rows[i] * 3 + k];
    }
    cr_assert_eq(topk, 2);
    eval_select_metrics m;
    cr_assert_eq(eval_select_compute(gathered, sc, 3, 3, &m, NULL), HR_OK);
    cr_assert_float_eq(m.top1, 2.0 / 3.0, 1e-12);
}

Test(eval, tune_metrics_hand_computed)
{
    int32_t truth[6] = {1, 2, 3, 4, 5, 6};
    int32_t pred[6] = {1, 2, 3, 4, 0, 6};
    unsigned char valid[2] = {1, 0};
    eval_tune_metrics m;
    eval_tune_compute(pred, truth, valid, 2, 3, &m);
    cr_assert_float_eq(m.param_accuracy, 5.0 / 6.0, 1e-12);
    cr_assert_float_eq(m.exact, 0.5, 1e-12);
    cr_assert_float_eq(m.valid, 0.5, 1e-12);
}

/* NDCG@1 with graded relevance rel = efficiency and gain 2^rel - 1 (eval.h) on three problems: a pick at half the
 * best speed, a pick tied with the best, an unmeasured pick. */
Test(eval, ndcg1_hand_computed_on_three_problems)
{
    const float I = INFINITY;
    float rt[9] = {2, 1, 4,   /* picks 0: eff 1/2, NDCG@1 2^0.5 - 1 */
                   3, I, 3,   /* picks 2: tied with the best, eff 1, NDCG@1 1 */
                   I, 5, 4};  /* picks 0: unmeasured, eff 0, NDCG@1 0 */
    float sc[9] = {3, 2, 1, 0, 0, 1, 9, 1, 2};
    eval_select_metrics m;
    cr_assert_eq(eval_select_compute(rt, sc, 3, 3, &m, NULL), HR_OK);
    cr_assert_float_eq(m.ndcg1, (0.41421356237309503 + 1.0 + 0.0) / 3, 1e-12);
    cr_assert_float_eq(eval_select_ndcg1(0.5), 0.41421356237309503, 1e-15);
    cr_assert_float_eq(eval_select_ndcg1(1.0), 1.0, 1e-15);
    cr_assert_float_eq(eval_select_ndcg1(0.0), 0.0, 1e-15);
}

/* R^2 = 1 - SS_res / SS_tot: truth (1, 2, 3, 4) has SS_tot 5; predictions (1, 2, 3, 5) leave SS_res 1. */
Test(eval, r2_hand_computed)
{
    const double truth[4] = {1, 2, 3, 4}, pred[4] = {1, 2, 3, 5}, mean[4] = {2.5, 2.5, 2.5, 2.5};
    cr_assert_float_eq(eval_r2(pred, truth, 4), 0.8, 1e-12);
    cr_assert_float_eq(eval_r2(truth, truth, 4), 1.0, 1e-12);
    cr_assert_float_eq(eval_r2(mean, truth, 4), 0.0, 1e-12);
    /* worse than the mean: negative */
    const double bad[4] = {4, 3, 2, 1};
    cr_assert_float_eq(eval_r2(bad, truth, 4), 1.0 - 20.0 / 5.0, 1e-12);
    /* undefined: one value, or a constant target */
    cr_assert(isnan(eval_r2(pred, truth, 1)));
    cr_assert(isnan(eval_r2(pred, mean, 4)));
}

/* Speed-up over the vendor's first pick, by hand: t_vendor / t_pick, 0 for a pick not measured, NaN (left out)
 * where the vendor's pick was not measured; the noise ratio decides slower and faster. */
Test(eval, speedup_over_the_vendors_pick_hand_computed)
{
    const float I = INFINITY;
    float rt[4] = {10, 8, I, 12};
    cr_assert_float_eq(eval_select_speedup(rt, 1, 0), 1.25, 1e-12);
    cr_assert_float_eq(eval_select_speedup(rt, 3, 0), 10.0 / 12, 1e-12);
    cr_assert_float_eq(eval_select_speedup(rt, 2, 0), 0.0, 0);
    cr_assert(isnan(eval_select_speedup(rt, 0, 2)), "the vendor's pick not measured");
    cr_assert(isnan(eval_select_speedup(rt, 0, -1)), "no vendor pick");
    /* 1.25, 1/1.25, 1.01 (a tie within x1.02), 0 (not measured), NaN (left out) */
    double s[5] = {1.25, 0.8, 1.01, 0.0, NAN};
    eval_speedup_metrics m;
    eval_speedup_compute(s, 5, &m);
    cr_assert_eq(m.n, 4);
    cr_assert_float_eq(m.geomean, cbrt(1.25 * 0.8 * 1.01), 1e-12, "the geomean of the measured picks");
    cr_assert_float_eq(m.slower, 0.5, 1e-12, "0.8 and the unmeasured pick");
    cr_assert_float_eq(m.faster, 0.25, 1e-12);
    cr_assert_float_eq(m.worst, 0.0, 0);
    eval_speedup_compute(s + 4, 1, &m);
    cr_assert_eq(m.n, 0);
    cr_assert(isnan(m.geomean) && isnan(m.worst));
}

/* Shortlists by hand: the model's k best plus the vendor's pick, the vendor's first k and its whole list. */
Test(eval, shortlists_hand_computed)
{
    const float I = INFINITY;
    /* fastest is kernel 4 (t 5); the vendor ranks 2 (t 10) first, then 0 (t 8), then 4; kernel 5 unmeasured */
    float rt[6] = {8, 20, 10, 6, 5, I};
    float sc[6] = {0.1f, 0.9f, 0.2f, 0.9f, 0.0f, 1.0f}; /* order 5, 1, 3 (tie: lower index first), 2, 0, 4 */
    int16_t vr[6] = {1, -1, 0, -1, 2, -1};
    double mk[EVAL_SHORTLIST_MAX], vk[EVAL_SHORTLIST_MAX], vl;
    eval_select_shortlist(rt, sc, vr, 6, mk, vk, &vl);
    /* model: k=1 {5 (inf), vendor 2 (10)} -> 0.5; k=2 + 1 (20) -> 0.5; k=3 + 3 (6) -> 5/6; ... k=6 + 4 -> 1 */
    double want_m[6] = {0.5, 0.5, 5.0 / 6, 5.0 / 6, 5.0 / 6, 1.0};
    for (int k = 0; k < 6; k++) cr_assert_float_eq(mk[k], want_m[k], 1e-6, "model k=%d", k + 1);
    cr_assert_float_eq(mk[7], 1.0, 1e-6, "k beyond the candidates keeps the last");
    double want_v[3] = {0.5, 5.0 / 8, 1.0};
    for (int k = 0; k < 3; k++) cr_assert_float_eq(vk[k], want_v[k], 1e-6, "vendor k=%d", k + 1);
    cr_assert_float_eq(vk[7], 1.0, 1e-6);
    cr_assert_float_eq(vl, 1.0, 1e-6);
    /* without a vendor: the model's own k best only, and the vendor's figures 0 */
    eval_select_shortlist(rt, sc, NULL, 6, mk, vk, &vl);
    cr_assert_float_eq(mk[0], 0.0, 0, "kernel 5 alone was never measured");
    cr_assert_float_eq(mk[2], 5.0 / 6, 1e-6);
    cr_assert_float_eq(vk[0], 0.0, 0);
    cr_assert_float_eq(vl, 0.0, 0);
}

/* The vendor guard (data_portable_guard) by hand: the vendor ranks kernel 2 first, then 0, then 4. */
Test(eval, vendor_guard_rule_hand_computed)
{
    int16_t vr[5] = {1, -1, 0, -1, 2};
    float sc[5];
    const float base[5] = {0.5f, 3.0f, 1.0f, 2.0f, 1.8f};
    /* no guard: the highest score, kernel 1, scores untouched */
    memcpy(sc, base, sizeof sc);
    cr_assert_eq(data_portable_guard(sc, 5, vr, 0, 0), 1);
    cr_assert_eq(memcmp(sc, base, sizeof sc), 0);
    /* margin 2: 3.0 beats the vendor pick's 1.0 by 2, the model's pick stays */
    cr_assert_eq(data_portable_guard(sc, 5, vr, 0, 2.0f), 1);
    /* margin 2.5: it does not, the vendor's pick is raised just above the best and ranks first */
    memcpy(sc, base, sizeof sc);
    cr_assert_eq(data_portable_guard(sc, 5, vr, 0, 2.5f), 2);
    cr_assert(sc[2] > 3.0f && sc[2] == nextafterf(3.0f, INFINITY), "%g", sc[2]);
    cr_assert_eq(sc[1], 3.0f, "the other scores are kept");
    /* top 3: only the vendor's first three (2, 0, 4) keep a score; 4 (1.8) wins, beating 1.0 by 0.8 */
    memcpy(sc, base, sizeof sc);
    cr_assert_eq(data_portable_guard(sc, 5, vr, 3, 0), 4);
    cr_assert(isinf(sc[1]) && sc[1] < 0 && isinf(sc[3]) && sc[3] < 0);
    cr_assert_eq(sc[0], 0.5f);
    memcpy(sc, base, sizeof sc);
    cr_assert_eq(data_portable_guard(sc, 5, vr, 3, 1.0f), 2, "0.8 is below the margin 1");
    /* a problem the vendor does not rank keeps its scores whatever the guard */
    int16_t none[5] = {-1, -1, -1, -1, -1};
    memcpy(sc, base, sizeof sc);
    cr_assert_eq(data_portable_guard(sc, 5, none, 2, 5.0f), 1);
    cr_assert_eq(memcmp(sc, base, sizeof sc), 0);
    cr_assert_eq(data_portable_guard(sc, 5, NULL, 2, 5.0f), 1);
    /* a vendor pick without a finite score: no margin rule */
    float inf_v[5] = {0.5f, 3.0f, -INFINITY, 2.0f, 1.8f};
    cr_assert_eq(data_portable_guard(inf_v, 5, vr, 0, 10.0f), 1);
    cr_assert_float_eq(eval_select_margin(base, 1, 2), 2.0, 1e-6);
    cr_assert(isnan(eval_select_margin(inf_v, 1, 2)) && isnan(eval_select_margin(base, 1, -1)));
}

/* The guard's curve by hand: four problems with margins 0 (the vendor's own pick), 1, 2 and none (NaN). */
Test(eval, vendor_guard_curve_hand_computed)
{
    double margin[5] = {0, 1, 2, NAN, 3}, speedup[5] = {1, 0.5, 2, 0.25, NAN};
    eval_guard_point g[EVAL_GUARD_POINTS + 1];
    int n = eval_guard_curve(margin, speedup, 5, g);
    /* the positive margins of problems with a speedup: 1 and 2, so M = 1, 2, inf */
    cr_assert_eq(n, 3);
    cr_assert_float_eq(g[0].margin, 1.0, 0);
    cr_assert_float_eq(g[0].override, 3.0 / 5, 1e-12, "margins 1, 2 and 3 replace the vendor's pick");
    cr_assert_float_eq(g[0].vs.geomean, pow(1 * 0.5 * 2 * 0.25, 0.25), 1e-12);
    cr_assert_float_eq(g[1].margin, 2.0, 0);
    cr_assert_float_eq(g[1].vs.geomean, pow(1 * 1 * 2 * 0.25, 0.25), 1e-12, "the margin-1 pick falls back: 1");
    cr_assert_float_eq(g[1].vs.worst, 0.25, 0, "no margin: the guard cannot apply");
    cr_assert(isinf(g[2].margin));
    cr_assert_float_eq(g[2].override, 0.0, 0);
    cr_assert_float_eq(g[2].vs.slower, 0.25, 1e-12, "only the problem without a margin is slower");
}
