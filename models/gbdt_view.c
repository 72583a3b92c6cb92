/* What a gbdt model shows of itself to export/ (models/view.h):
 *   objective                 text: "softmax" (select over the kernel vocabulary), "rank" or "tune"
 *   boosters                  int; booster<i> the boosters (1 for select, one per parameter for tune)
 *   rank on a find-db: rank_signatures (int), rank_signature (text: the C expression of a data_problem *p's
 *                             signature, which selects its candidates), rank_candidates bytes (signatures,
 *                             n_kernels): 1 where training measured the kernel for the signature
 *   rank on a table: rank_loss (text: "l2" or "lambdarank"), rank_target (text: relative, absolute or log1p),
 *                             the booster reading a pair row: the problem's features, then the pair's (data/table.h) */
#include "models/models_internal.h"
#include "models/view.h"

int gbdt_model_views(const model *m, model_views *v)
{
    const gbdt_model *g = (const gbdt_model *)m;
    model_views_array(v, MODEL_VIEW_TEXT, gbdt_mode_names[g->mode], 1, "objective");
    model_views_int(v, g->n_boosters, "boosters");
    for (int i = 0; i < g->n_boosters; i++) model_views_array(v, MODEL_VIEW_BOOSTER, g->boosters[i], 1, "booster%d", i);
    if (g->mode != GBDT_MODE_RANK) return HR_OK;
    if (m->kernel_values) { /* configurations of values: the booster scores their pair features */
        model_views_array(v, MODEL_VIEW_TEXT, gbdt_table_loss_names[g->loss], 1, "rank_loss");
        if (g->target > 0)
            model_views_array(v, MODEL_VIEW_TEXT, gbdt_table_target_names[g->target - 1], 1, "rank_target");
        return HR_OK;
    }
    model_views_int(v, GBDT_RANK_SIGNATURES, "rank_signatures");
    model_views_array(v, MODEL_VIEW_TEXT, GBDT_RANK_SIGNATURE_EXPR, 1, "rank_signature");
    model_views_array(v, MODEL_VIEW_BYTES, g->rank_cand, (size_t)GBDT_RANK_SIGNATURES * m->n_kernels,
                      "rank_candidates");
    return HR_OK;
}
