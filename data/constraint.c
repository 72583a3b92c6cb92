/* Validity rules of tuning-parameter sequences, per solver, checked prefix by prefix.
 * A new solver adds a rule function and a row in `registry`; decoders only see data_constraint. */
#include <string.h>

#include "data/data.h"

static const char *const asm1x1u_names[8] = {"read_size", "k_mult", "chunks_per_wave", "chunk_size",
                                             "n_mult", "c_mult", "waves_c_in_group", "waves_k_in_group"};

static int is_pow2_upto(int64_t v, int64_t max)
{
    return v >= 1 && v <= max && (v & (v - 1)) == 0;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

static int asm1x1u_value_ok(int pos, int64_t v)
{
    switch (pos) {
    case 0: return v >= 1 && v <= 4;
    case 1: return v == 1 || (v >= 4 && v <= 32 && v % 4 == 0);
    case 2: return v >= 1 && v <= 16;
    case 3: return is_pow2_upto(v, 64);
    case 4: return v >= 1 && v <= 8;
    case 5: return is_pow2_upto(v, 32);
    case 6: return v >= 1 && v <= 8;
    case 7: return v == 1 || v == 2 || v == 4 || v == 8;
    }
    return 0;
}

/* ConvAsm1x1U (MIOpen's IsValidValue/IsValid rules as described in the data README). */
static int asm1x1u_valid_prefix(const data_problem *p, const int32_t *v, int len)
{
    if (len > 8) return 0;
    for (int i = 0; i < len; i++)
        if (!asm1x1u_value_ok(i, v[i])) return 0;
    int bytes = (p->dtype == DATA_DTYPE_FP16 || p->dtype == DATA_DTYPE_BF16) ? 2 : 4;
    int64_t e = 4 / bytes;
    int64_t C = p->f[DATA_FIELD_IN_C], K = p->f[DATA_FIELD_OUT_C], N = p->f[DATA_FIELD_BATCH];
    int64_t hw = p->f[DATA_FIELD_OUT_H] * p->f[DATA_FIELD_OUT_W];
    if (len < 2) return 1;
    int64_t read_size = v[0], k_mult = v[1];
    if (k_mult % e) return 0;
    if (p->direction == DATA_DIR_B && K % k_mult) return 0;
    if (len < 3) return 1;
    int64_t cpw = v[2];
    if (read_size * e > cpw || cpw % e) return 0;
    if (len < 4) return 1;
    int64_t chunk = v[3];
    if (cpw > ceil_div(hw, chunk)) return 0;
    if (len < 5) return 1;
    int64_t n_mult = v[4];
    if (n_mult > ceil_div(N, 64 / chunk)) return 0;
    if (len < 6) return 1;
    int64_t c_mult = v[5];
    if (c_mult % e) return 0;
    int64_t vgprs = 4 + 2 * ceil_div(cpw * n_mult * c_mult, e) + cpw * n_mult * k_mult + (hw % e ? 1 : 0) + 1;
    if (vgprs >= 256) return 0;
    if (25 + 2 * k_mult * c_mult >= 102) return 0;
    if (len < 7) return 1;
    int64_t waves_c = v[6];
    if (waves_c > C) return 0;
    int64_t c_per_wave = ceil_div(C, waves_c);
    int64_t last = C - c_per_wave * (waves_c - 1);
    if (c_per_wave % c_mult || last % c_mult) return 0;
    if (len < 8) return 1;
    int64_t waves_k = v[7];
    if (k_mult * waves_k > K) return 0;
    if (waves_c * waves_k > 16) return 0;
    if ((256 / vgprs) * 4 < waves_c * waves_k) return 0;
    return 1;
}

static const data_constraint registry[] = {
    {"ConvAsm1x1U", 8, asm1x1u_names, asm1x1u_valid_prefix},
};

const data_constraint *data_constraint_find(const char *solver)
{
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        if (strcmp(registry[i].solver, solver) == 0) return &registry[i];
    return NULL;
}
