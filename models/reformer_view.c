/* What a Reformer shows of itself to export/ (models/view.h): its sizes and options, the input transform, the
 * blocks folded for prediction, the parameter block, and for the towers head its configuration inputs'
 * statistics and v of every configuration the model knows, computed here by the model's own path.
 *   mode                      text: "classes", "pairs" or "towers"
 *   depth, hidden, expand     ints; block l maps d_in = (l ? hidden : n_in) to hidden, its T branch of width expand
 *   n_in, n_ple, input_log    ints: model inputs, encoding columns, slog first
 *   zscore_mean, zscore_std   floats (n_in); ple_feature ints (n_ple), ple_lo, ple_hi floats (n_ple)
 *   folded                    int: 1 when the blocks below exist (batch norm)
 *   block<l>.w12, .b12, .a3   floats: [A1; A2'] ((hidden + expand), d_in), [b1 + b3; b2'] (hidden + expand),
 *                             A3 (hidden, expand), BatchNorm folded into A2 (reformer_fold)
 *   params                    the parameter block: "head.weight", "head.bias", "app.*", "config.0.*", ...
 *   classes: app (int: 1 with the applicability head), combine (text: product, mask or head), combine_weight (real)
 *   towers: tower_dim, config_hidden, n_cfg, n_q (ints); config_mean, config_std (n_cfg), interaction_mean,
 *           interaction_std (n_q) floats; known_v floats (n_kernels, tower_dim) */
#include <stdlib.h>

#include "models/reformer_internal.h"
#include "models/view.h"

int reformer_views(const model *mb, model_views *v)
{
    const reformer *r = (const reformer *)mb;
    model_views_array(v, MODEL_VIEW_TEXT, r->mode->name, 1, "mode");
    model_views_int(v, r->depth, "depth");
    model_views_int(v, r->hidden, "hidden");
    model_views_int(v, r->expand, "expand");
    model_views_int(v, r->n_in, "n_in");
    model_views_int(v, r->n_ple, "n_ple");
    model_views_int(v, r->input_log, "input_log");
    model_views_array(v, MODEL_VIEW_FLOATS, r->zmean, (size_t)r->n_in, "zscore_mean");
    model_views_array(v, MODEL_VIEW_FLOATS, r->zstd, (size_t)r->n_in, "zscore_std");
    model_views_array(v, MODEL_VIEW_INTS, r->ple_src, (size_t)r->n_ple, "ple_feature");
    model_views_array(v, MODEL_VIEW_FLOATS, r->ple_lo, (size_t)r->n_ple, "ple_lo");
    model_views_array(v, MODEL_VIEW_FLOATS, r->ple_hi, (size_t)r->n_ple, "ple_hi");
    model_views_int(v, r->fold != NULL, "folded");
    for (int l = 0; r->fold && l < r->depth; l++) {
        const nn_gamma *g = &r->blocks[l];
        const size_t o = (size_t)g->d_out + (size_t)g->d_hidden;
        const float *W12 = r->fold + r->fold_off[l], *b12 = W12 + o * g->d_in, *A3 = b12 + o;
        model_views_array(v, MODEL_VIEW_FLOATS, W12, o * g->d_in, "block%d.w12", l);
        model_views_array(v, MODEL_VIEW_FLOATS, b12, o, "block%d.b12", l);
        model_views_array(v, MODEL_VIEW_FLOATS, A3, (size_t)g->d_out * g->d_hidden, "block%d.a3", l);
    }
    model_views_array(v, MODEL_VIEW_PARAMS, &r->p, 1, "params");
    model_views_int(v, r->app_weight > 0.0f, "app");
    model_views_array(v, MODEL_VIEW_TEXT, reformer_combine_names[r->app_combine], 1, "combine");
    model_views_real(v, r->app_beta, "combine_weight");
    if (r->mode != &reformer_head_towers) return HR_OK;
    model_views_int(v, r->tower_dim, "tower_dim");
    model_views_int(v, r->cfg_hidden, "config_hidden");
    model_views_int(v, r->n_cfg, "n_cfg");
    model_views_int(v, r->n_q, "n_q");
    model_views_array(v, MODEL_VIEW_FLOATS, r->cfg_mean, (size_t)r->n_cfg, "config_mean");
    model_views_array(v, MODEL_VIEW_FLOATS, r->cfg_std, (size_t)r->n_cfg, "config_std");
    model_views_array(v, MODEL_VIEW_FLOATS, r->q_mean, (size_t)r->n_q, "interaction_mean");
    model_views_array(v, MODEL_VIEW_FLOATS, r->q_std, (size_t)r->n_q, "interaction_std");
    const int K = mb->n_kernels, D = r->tower_dim;
    float *known = hr_malloc((size_t)(K ? K : 1) * D * sizeof *known);
    void *ws = NULL;
    int rc = known ? mb->family->ws_create(mb, &ws) : HR_ENOMEM;
    if (!rc) reformer_towers_config(r, ws, mb->kernel_values, K, known);
    if (ws) mb->family->ws_free(ws);
    if (rc) {
        free(known);
        return rc;
    }
    model_views_owned(v, MODEL_VIEW_FLOATS, known, (size_t)K * D, "known_v");
    return HR_OK;
}
