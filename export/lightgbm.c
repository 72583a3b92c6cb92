/* A gbdt model's one booster in LightGBM's text format (gbdt/lightgbm.c writes it), read through the model's views
 * (models/gbdt_view.c): a model that shows no boosters has no trees to write, and a tune model's one booster per
 * parameter does not fit a format that holds one. */
#include "export/export.h"

#include "gbdt/gbdt.h"
#include "models/view.h"

/* The one booster of m's views, or an HR_EINVAL naming `name` */
static int lightgbm_booster(const model *m, const char *name, model_views **v, const gbdt_booster **b)
{
    *b = NULL;
    int rc = model_views_create(m, v);
    if (rc || !model_view_find(*v, "booster0"))
        return hr_error(HR_EINVAL, "%s: LightGBM's format holds a gbdt model's trees, this model is %s", name,
                        m->family->name);
    const int nb = (int)model_view_int(*v, "boosters");
    if (nb != 1)
        return hr_error(HR_EINVAL, "%s: this gbdt model holds %d boosters (one per parameter); LightGBM's format holds one",
                        name, nb);
    *b = model_view_booster(*v, "booster0");
    return HR_OK;
}

int export_lightgbm_check(const model *m, const char *name)
{
    model_views *v = NULL;
    const gbdt_booster *b;
    int rc = lightgbm_booster(m, name, &v, &b);
    model_views_free(v);
    return rc;
}

int export_lightgbm_write(const model *m, const char *name, const char *path, int *trees)
{
    model_views *v = NULL;
    const gbdt_booster *b;
    int rc = lightgbm_booster(m, name, &v, &b);
    if (!rc) rc = gbdt_lightgbm_save(b, path);
    if (!rc && trees) *trees = gbdt_booster_num_trees(b);
    model_views_free(v);
    return rc;
}
