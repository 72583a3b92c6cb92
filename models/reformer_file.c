/* The Reformer's model files (models/reformer_internal.h): the trunk's sizes and options, the input transform, the
 * head's own part and the parameter block, under the model file's group "family". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/h5.h"
#include "models/reformer_internal.h"

int reformer_save(const model *mb, hid_t g)
{
    const reformer *r = (const reformer *)mb;
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t;
    reformer_config_table(&t, rows);
    reformer_cfg cfg;
    reformer_options_of(r, &cfg);
    const unsigned towers = r->mode == &reformer_head_towers ? REFORMER_FILE_TOWERS : 0;
    int rc = hr_h5_attr_write_int(g, "reformer_version", REFORMER_VERSION);
    if (!rc) rc = hr_config_write_h5(&t, &cfg, REFORMER_FILE_TRUNK | towers, g);
    if (!rc && r->mode->save) rc = r->mode->save(r, g);
    if (!rc) rc = hr_config_write_h5(&t, &cfg, REFORMER_FILE_HEADS, g);
    if (!rc) rc = hr_h5_write(g, "zscore_mean", H5T_NATIVE_FLOAT, (size_t)r->n_in, 0, r->zmean);
    if (!rc) rc = hr_h5_write(g, "zscore_std", H5T_NATIVE_FLOAT, (size_t)r->n_in, 0, r->zstd);
    if (!rc && r->n_ple) rc = hr_h5_write(g, "ple_feature", H5T_NATIVE_INT, (size_t)r->n_ple, 0, r->ple_src);
    if (!rc && r->n_ple) rc = hr_h5_write(g, "ple_lo", H5T_NATIVE_FLOAT, (size_t)r->n_ple, 0, r->ple_lo);
    if (!rc && r->n_ple) rc = hr_h5_write(g, "ple_hi", H5T_NATIVE_FLOAT, (size_t)r->n_ple, 0, r->ple_hi);
    if (!rc) rc = nn_checkpoint_write(g, "params", &r->p, NULL);
    if (!rc && r->state.n_views) rc = nn_checkpoint_write(g, "state", &r->state, NULL);
    return rc;
}

/* The encoding's bins of a "ple" file, checked: every column names a feature, its bin has lo < hi */
static int reformer_ple_load(hid_t g, reformer *r)
{
    size_t n = 0, cols = 0;
    int rc = hr_h5_shape(g, "ple_feature", &n, &cols);
    if (!rc && (n < 1 || n > (size_t)r->n_raw * 4096 || cols != 0))
        rc = hr_error(HR_EFORMAT, "reformer: ple_feature: %zu entries", n);
    if (!rc && (!(r->ple_src = hr_malloc(n * sizeof *r->ple_src)) || !(r->ple_lo = hr_malloc(n * sizeof *r->ple_lo)) ||
                !(r->ple_hi = hr_malloc(n * sizeof *r->ple_hi))))
        rc = HR_ENOMEM;
    if (!rc) rc = hr_h5_read(g, "ple_feature", H5T_NATIVE_INT, n, 0, r->ple_src);
    if (!rc) rc = hr_h5_read(g, "ple_lo", H5T_NATIVE_FLOAT, n, 0, r->ple_lo);
    if (!rc) rc = hr_h5_read(g, "ple_hi", H5T_NATIVE_FLOAT, n, 0, r->ple_hi);
    for (size_t c = 0; !rc && c < n; c++) {
        if (r->ple_src[c] < 0 || r->ple_src[c] >= r->n_raw)
            rc = hr_error(HR_EFORMAT, "reformer: ple_feature[%zu] = %d: not a feature", c, r->ple_src[c]);
        else if (!(r->ple_lo[c] < r->ple_hi[c]) || !isfinite(r->ple_lo[c]) || !isfinite(r->ple_hi[c]))
            rc = hr_error(HR_EFORMAT, "reformer: ple bin %zu: [%g, %g] is not an interval", c, r->ple_lo[c],
                          r->ple_hi[c]);
    }
    if (!rc) r->n_ple = (int)n;
    return rc;
}

/* The options a file records: the trunk's and the mode (files before version 4 hold classes-mode models), the
 * towers' widths, the classes head's (files of version 1 predate the applicability head) */
static int reformer_options_load(hid_t g, int version, reformer_cfg *cfg)
{
    hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
    hr_config_table t;
    reformer_config_table(&t, rows);
    int rc = hr_config_read_h5(&t, g, REFORMER_FILE_TRUNK, version, cfg);
    if (!rc && version < 4) cfg->mode = REFORMER_MODE_CLASSES;
    if (!rc && cfg->mode == REFORMER_MODE_AUTO) rc = hr_error(HR_EFORMAT, "reformer: unknown mode 'auto'");
    reformer_cfg more;
    if (!rc && cfg->mode == REFORMER_MODE_TOWERS) rc = hr_config_read_h5(&t, g, REFORMER_FILE_TOWERS, version, &more);
    if (!rc && cfg->mode == REFORMER_MODE_TOWERS) {
        cfg->tower_dim = more.tower_dim;
        cfg->config_hidden = more.config_hidden;
    }
    if (!rc) rc = hr_config_read_h5(&t, g, REFORMER_FILE_HEADS, version, &more);
    if (!rc && version >= 2) {
        cfg->app_weight = more.app_weight;
        cfg->app_combine = more.app_combine;
        cfg->app_eff = more.app_eff;
        cfg->app_beta = more.app_beta;
    }
    if (!rc && version < 2) cfg->app_weight = 0.0f;
    return rc;
}

int reformer_load(hid_t g, model *base, model **out)
{
    *out = NULL;
    reformer *r = hr_calloc(1, sizeof *r);
    if (!r) return HR_ENOMEM;
    r->base = *base;
    int version = 0, rc = hr_h5_attr_read_int_in(g, "reformer", "reformer_version", 0, 1 << 30, &version);
    if (!rc && version > REFORMER_VERSION)
        rc = hr_error(HR_EVERSION, "reformer content version %d is newer than this heurist's %d", version,
                      REFORMER_VERSION);
    reformer_cfg cfg;
    if (!rc) rc = reformer_options_load(g, version, &cfg);
    if (!rc) reformer_options_apply(r, &cfg);
    const int ple = !rc && cfg.input == REFORMER_INPUT_PLE;
    if (!rc && r->mode->valued && !data_codec_config_width(r->base.codec))
        rc = hr_error(HR_EFORMAT, "reformer: a %s-mode model without its table's schema", r->mode->name);
    if (!rc && r->mode->valued && !r->base.kernel_values)
        rc = hr_error(HR_EFORMAT, "reformer: a %s-mode model without its configurations' values", r->mode->name);
    if (!rc && r->mode->load) rc = r->mode->load(g, r);
    r->n_raw = r->base.n_features + r->n_pair;
    if (!rc && ple) rc = reformer_ple_load(g, r);
    r->n_in = r->n_raw + r->n_ple;
    const size_t ni = (size_t)r->n_in;
    if (!rc && (!(r->zmean = hr_malloc(ni * sizeof *r->zmean)) || !(r->zstd = hr_malloc(ni * sizeof *r->zstd))))
        rc = HR_ENOMEM;
    if (!rc) rc = hr_h5_read(g, "zscore_mean", H5T_NATIVE_FLOAT, ni, 0, r->zmean);
    if (!rc) rc = hr_h5_read(g, "zscore_std", H5T_NATIVE_FLOAT, ni, 0, r->zstd);
    if (!rc) rc = reformer_build(r);
    if (!rc) rc = nn_checkpoint_read(g, "params", &r->p, NULL);
    if (!rc && r->state.n_views) rc = nn_checkpoint_read(g, "state", &r->state, NULL);
    if (rc) {
        memset(&r->base, 0, sizeof r->base); /* still owned by the caller */
        reformer_free(&r->base);
        return rc;
    }
    reformer_fold(r);
    *out = &r->base;
    return HR_OK;
}

