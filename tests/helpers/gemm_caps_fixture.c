/* The tune-on-a-table fixture (gemm_caps_fixture.h): every configuration it writes obeys its capability file, so
 * the rules must accept them all, and its times follow the problem so that a model has something to learn. */
#include "helpers/gemm_caps_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "helpers/testutil.h"

const char gemm_caps_fixture_caps[] =
    "{\"format\": \"heurist-collect gemm capabilities\", \"version\": 1, \"gpu\": \"fixture\",\n"
    " \"cluster_shapes_tried\": [[0, 0], [1, 1], [2, 1]],\n"
    " \"types\": [\n"
    "  {\"dtype\": \"bf16\", \"algos\": [\n"
    "   {\"algo_id\": 5, \"tiles\": [], \"stages\": [], \"splitk_support\": 1, \"reduction_scheme_mask\": 7,\n"
    "    \"cta_swizzling_support\": 1, \"custom_option_max\": 0, \"epilogue_mask\": 1023},\n"
    "   {\"algo_id\": 11, \"tiles\": [], \"stages\": [], \"splitk_support\": 0, \"reduction_scheme_mask\": 0,\n"
    "    \"cta_swizzling_support\": 0, \"custom_option_max\": 1},\n"
    "   {\"algo_id\": 21, \"tiles\": [[64, 64], [128, 64], [64, 128]], \"stages\": [[32, 3], [32, 4]],\n"
    "    \"splitk_support\": 1, \"reduction_scheme_mask\": 2, \"cta_swizzling_support\": 0, \"custom_option_max\": 1}]},\n"
    "  {\"dtype\": \"fp32\", \"algos\": [\n"
    "   {\"algo_id\": 5, \"tiles\": [], \"stages\": [], \"splitk_support\": 1, \"reduction_scheme_mask\": 7,\n"
    "    \"cta_swizzling_support\": 1, \"custom_option_max\": 0},\n"
    "   {\"algo_id\": 21, \"tiles\": [[64, 64], [128, 64], [64, 128]], \"stages\": [[32, 3], [32, 4]],\n"
    "    \"splitk_support\": 1, \"reduction_scheme_mask\": 2, \"cta_swizzling_support\": 0, \"custom_option_max\": 1}]}]}\n";

static const char schema[] =
    "{\"problem\": [\"M\", \"N\", \"K\", \"dtype\", \"trans_a\", \"trans_b\"],\n"
    " \"kernel\": [\"algo_id\", \"tile_m\", \"tile_n\", \"stage_k\", \"stages\", \"split_k\", \"reduction_scheme\", \"swizzle\",\n"
    "            \"custom_option\", \"cluster_m\", \"cluster_n\", \"inner_shape\"],\n"
    " \"categorical\": [\"dtype\", \"trans_a\", \"trans_b\", \"algo_id\", \"reduction_scheme\", \"inner_shape\"],\n"
    " \"measure\": \"time_us\", \"better\": \"lower\", \"tiles\": {\"tile_m\": \"M\", \"tile_n\": \"N\"},\n"
    " \"reduction\": \"K\", \"split\": \"split_k\", \"cus\": 132, \"vendor\": \"heuristic_rank\", \"duplicates\": \"error\"}\n";

typedef struct cfg {
    int algo, tm, tn, sk, st, split, red, swz, custom, cm, cn, inner;
} cfg;

/* Every configuration the caps allow for a problem of K (fp32: no algo 11), a superset the seed samples from. */
static int enumerate(int fp32, long k, cfg *out)
{
    int n = 0;
    static const int splits[] = {1, 2, 4};
    static const int clusters[3][2] = {{0, 0}, {1, 1}, {2, 1}};
    for (int s = 0; s < 3; s++) {
        if (splits[s] > 1 && k / splits[s] < 32) continue;
        for (int tile = 0; tile < 2; tile++)
            for (int swz = 0; swz < 2; swz++)
                for (int c = 0; c < 3; c++)
                    out[n++] = (cfg){5, tile ? 128 : 0, tile ? 128 : 0, 0, 0, splits[s], splits[s] > 1 ? (c == 2 ? 4 : 2) : 0,
                                     swz, 0, clusters[c][0], clusters[c][1], 0};
    }
    if (!fp32)
        for (int custom = 0; custom < 2; custom++) out[n++] = (cfg){11, 0, 0, 0, 0, 1, 0, 0, custom, 0, 0, 0};
    static const int tiles[3][2] = {{64, 64}, {128, 64}, {64, 128}};
    for (int t = 0; t < 3; t++)
        for (int st = 3; st <= 4; st++)
            for (int s = 0; s < 2; s++) {
                if (s && k / 2 < 32) continue;
                for (int custom = 0; custom < 2; custom++)
                    out[n++] = (cfg){21, tiles[t][0], tiles[t][1], 32, st, s ? 2 : 1, s ? 2 : 0, 0, custom, 1, 1, custom};
            }
    return n;
}

/* An analytic time: tiles that fit the problem, split-K for long K and small M N, algo 21 for large problems. */
static double cost(long m, long n, long k, int fp32, const cfg *c)
{
    double tm = c->tm ? c->tm : 96, tn = c->tn ? c->tn : 96;
    double tiles = ceil(m / tm) * ceil(n / tn) * c->split;
    double waves = ceil(tiles / 132.0);
    double work = waves * tm * tn * ceil((double)k / c->split) * (fp32 ? 8.0 : 1.0) / 2e5;
    double algo = c->algo == 21 ? 0.8 : c->algo == 11 ? 1.2 : 1.0;
    return 3.0 + algo * work + (c->split > 1 ? 1.5 : 0.0) + 0.1 * c->swz + 0.05 * c->custom + 0.02 * (c->cm + c->cn);
}

char *gemm_caps_fixture_write(int problems, unsigned seed)
{
    static const long sizes[] = {16, 64, 128, 256, 512, 1024, 1536, 2048, 4096};
    char *dir = test_tmppath("");
    if (hr_mkdir_p(dir)) return NULL;
    size_t len = strlen(dir) + 32;
    char *csv = malloc(len), *side = malloc(len);
    FILE *f = fopen((snprintf(csv, len, "%s/gemm.csv", dir), csv), "w");
    if (!f) return NULL;
    fprintf(f, "M,N,K,dtype,trans_a,trans_b,algo_id,tile_m,tile_n,stage_k,stages,split_k,reduction_scheme,swizzle,"
               "custom_option,cluster_m,cluster_n,inner_shape,time_us,heuristic_rank\n");
    cfg all[256];
    unsigned h = seed * 2654435761u + 1;
    for (int p = 0; p < problems; p++) {
        long m = sizes[(p * 7 + 3) % 9], n = sizes[(p * 5 + 1) % 9], k = sizes[(p * 3 + p / 9) % 9] * 2;
        if (k < 64) k = 64;
        int fp32 = p % 2;
        int na = enumerate(fp32, k, all), kept = 0;
        for (int c = 0; c < na; c++) {
            h = h * 1103515245u + 12345u;
            /* a seeded third of them, at least the first four */
            if (c >= 4 && (h >> 16) % 3) continue;
            const cfg *x = &all[c];
            const char *rank = kept == 0 ? "1" : kept == 1 ? "0" : "";
            fprintf(f, "%ld,%ld,%ld,%s,N,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.4f,%s\n", m, n, k, fp32 ? "fp32" : "bf16",
                    p % 3 ? "N" : "T", x->algo, x->tm, x->tn, x->sk, x->st, x->split, x->red, x->swz, x->custom, x->cm, x->cn,
                    x->inner, cost(m, n, k, fp32, x), rank);
            kept++;
        }
    }
    int bad = fclose(f) != 0;
    snprintf(side, len, "%s/gemm.schema.json", dir);
    f = fopen(side, "w");
    bad |= !f || fputs(schema, f) < 0 || fclose(f) != 0;
    snprintf(side, len, "%s/gemm.caps.json", dir);
    f = fopen(side, "w");
    bad |= !f || fputs(gemm_caps_fixture_caps, f) < 0 || fclose(f) != 0;
    free(side);
    free(dir);
    if (bad) {
        free(csv);
        return NULL;
    }
    return csv;
}
