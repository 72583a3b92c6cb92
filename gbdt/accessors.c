/* Read access to booster internals that exporters need. */
#include "gbdt/gbdt_internal.h"

const double *gbdt_booster_base_score(const gbdt_booster *b)
{
    return b->base_score;
}
