/* A libFuzzer target: FUZZ_TARGET (a fuzz_target value) is set per executable by fuzz/CMakeLists.txt. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/core.h"
#include "fuzz/fuzz_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int rc = fuzz_load(FUZZ_TARGET, data, size);
    /* an error must come with its message: "no error recorded" is itself a bug */
    if (rc < 0 && strcmp(hr_last_error(), "no error recorded") == 0) __builtin_trap();
    hr_error_clear();
    return 0;
}
