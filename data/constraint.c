/* Validity rules of tuning-parameter sequences, per solver, checked prefix by prefix.
 * A new solver adds a rule function and a row in `registry`; decoders only see data_constraint. */
#include <string.h>

#include "data/data.h"

static const char *const asm1x1u_names[8] = {"read_size", "k_mult", "chunks_per_wave", "chunk_size",
                                             "n_mult", "c_mult", "waves_c_in_group", "waves_k_in_group"};

static const data_constraint registry[] = {
    {"ConvAsm1x1U", 8, asm1x1u_names, data_portable_asm1x1u_valid},
};

const data_constraint *data_constraint_find(const char *solver)
{
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        if (strcmp(registry[i].solver, solver) == 0) return &registry[i];
    return NULL;
}
