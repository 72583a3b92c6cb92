/* Benchmark: loading the MI100 find-db into a dataset, and reading its HDF5 cache.
 * usage: bench_data_load FIND_DB [CACHE.h5]   (prints seconds and peak memory; run each mode in its own
 * process for a clean peak: `bench_data_load X` then `bench_data_load X cache.h5 --cache-only`) */
#include <stdio.h>
#include <string.h>

#include "core/h5.h"
#include "data/data.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_data_load FIND_DB [CACHE.h5 [--cache-only]]\n");
        return 2;
    }
    hr_h5_quiet();
    int cache_only = argc > 3 && strcmp(argv[3], "--cache-only") == 0;
    data_select *ds = NULL, *back;
    data_tune *tb;
    if (!cache_only) {
        double t0 = hr_now();
        if (data_fdb_load(argv[1], NULL, &ds)) {
            fprintf(stderr, "bench_data_load: %s\n", hr_last_error());
            return 1;
        }
        printf("find-db load: %.3f s, %d problems, %d kernels, peak RSS %.0f MB\n", hr_now() - t0, ds->n,
               ds->n_kernels, hr_peak_rss() / 1e6);
        if (argc > 2 && data_cache_write_select(argv[2], ds)) {
            fprintf(stderr, "bench_data_load: %s\n", hr_last_error());
            return 1;
        }
        data_select_free(ds);
    }
    if (argc > 2) {
        double t0 = hr_now();
        if (data_cache_read(argv[2], &back, &tb)) {
            fprintf(stderr, "bench_data_load: %s\n", hr_last_error());
            return 1;
        }
        printf("cache read:   %.3f s, %d problems, peak RSS %.0f MB\n", hr_now() - t0, back->n, hr_peak_rss() / 1e6);
        data_select_free(back);
    }
    return 0;
}
