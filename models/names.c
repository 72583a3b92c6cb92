/* The name lists a model keeps (kernels, tuning parameters, features): copies, and where two differ. */
#include <string.h>

#include "core/h5.h"
#include "models/models_internal.h"

char **model_strv_dup(char *const *s, int n)
{
    char **out = hr_calloc((size_t)(n ? n : 1), sizeof *out);
    if (!out) return NULL;
    for (int i = 0; i < n; i++) {
        out[i] = hr_strdup(s[i]);
        if (!out[i]) {
            hr_h5_free_strings(out, (size_t)i);
            return NULL;
        }
    }
    return out;
}

int model_names_differ(char *const *a, char *const *b, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(a[i], b[i]) != 0) return i;
    return -1;
}
