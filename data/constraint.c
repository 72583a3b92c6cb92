/* Validity rules of tuning-parameter sequences, per solver, checked prefix by prefix.
 * A new solver adds a rule function and a row in `registry`; decoders only see data_constraint.
 * A benchmark table's rules come from its capability file (data/table_caps.c) through the same struct. */
#include <string.h>

#include "data/codec_internal.h"

static const char *const asm1x1u_names[8] = {"read_size", "k_mult", "chunks_per_wave", "chunk_size",
                                             "n_mult", "c_mult", "waves_c_in_group", "waves_k_in_group"};

static const data_constraint registry[] = {
    {"ConvAsm1x1U", 8, asm1x1u_names, data_portable_asm1x1u_valid, NULL, NULL},
};

const data_constraint *data_constraint_find(const char *solver)
{
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        if (strcmp(registry[i].solver, solver) == 0) return &registry[i];
    return NULL;
}

int data_constraint_check(const data_constraint *c, const data_tune_problem *q, const int32_t *values, int len)
{
    if (q->cand) {
        size_t L = (size_t)q->length;
        for (int i = 0; i < q->n_cand; i++)
            if (!memcmp(q->cand + (size_t)i * L, values, (size_t)len * sizeof *values)) return 1;
        return 0;
    }
    if (!c) return 1;
    if (!q->pv) return 1;
    /* a solver's rules read a convolution, a table's its values */
    if (c->valid_prefix) {
        data_problem p;
        data_conv_problem(q->pv, &p);
        return c->valid_prefix(&p, values, len);
    }
    return c->valid_prefix_pv ? c->valid_prefix_pv(c->rules, q->pv, values, len) : 1;
}

data_tune_problem data_tune_problem_of(const data_tune *dt, const double *V, int i, int measured)
{
    const data_table *t = dt->sel ? dt->sel->table : NULL;
    int width = t ? t->spec.n_problem + t->spec.n_hardware : DATA_PROBLEM_VALUES;
    data_tune_problem q = {V + (size_t)i * (size_t)width, NULL, 0, dt->length, NULL};
    if (t && measured) {
        q.cand = dt->cand + (size_t)dt->cand_off[i] * (size_t)dt->length;
        q.n_cand = dt->cand_off[i + 1] - dt->cand_off[i];
    }
    const data_select *s = dt->sel;
    if (t && s->vendor_rank)
        for (int c = dt->cand_off[i]; c < dt->cand_off[i + 1] && !q.vendor; c++)
            if (s->vendor_rank[(size_t)i * s->n_kernels + dt->cand_kernel[c]] == 0)
                q.vendor = dt->cand + (size_t)c * (size_t)dt->length;
    return q;
}

const data_constraint *data_tune_constraint(const data_tune *dt)
{
    return dt->sel ? dt->constraint : data_constraint_find(dt->solver);
}
