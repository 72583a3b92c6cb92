/* gen_gemm_table: a synthetic GEMM benchmark table from an analytic cost model, for tests and examples.
 *
 *   gen_gemm_table --problems N --seed S --out FILE.csv[.gz] [--noise F] [--hardware]
 * writes FILE.csv (gzip when the name ends in .gz) and FILE.schema.json beside it: one row per (problem,
 * configuration) with columns M,N,K,dtype[,sms],tile_m,tile_n,tile_k,stages,split_k,time_us.
 *
 * Problems: 70% LLM layers (M in 1..8192, powers of two or not, times (N, K) from common hidden sizes), 30% odd
 * sizes (M, N, K log-uniform in [16, 16384]); dtype fp16, bf16 or fp32; all distinct, each with a valid
 * configuration.
 * Configurations: a fixed subset (one in six by a hash) of tile_m, tile_n in {16..256}, tile_k in {32,64,128},
 * stages in {2,3,4}, split_k in {1,2,4,8}, valid for the problem: split_k * tile_k <= K, tiles no larger than
 * max(64, 4 x the dimension), and the stages' shared memory (tile_m + tile_n) tile_k bytes stages <= 228 KiB.
 * Cost model (microseconds), on a GPU of SMS = 132 streaming multiprocessors:
 *   ctas      = ceil(M/tile_m) ceil(N/tile_n) split_k;   waves = ceil(ctas / SMS)
 *   k_iters   = ceil(ceil(K / split_k) / tile_k)
 *   eff       = a/(a + 24) * tile_k/(tile_k + 16) * (1 - 0.5^stages),   a = tile_m tile_n / (tile_m + tile_n)
 *   compute   = waves * 2 tile_m tile_n k_iters tile_k / (peak / SMS * eff)     (peak: 990 TFLOP/s fp16/bf16, 60 fp32)
 *   memory    = bytes (M K ceil(N/tile_n) + K N ceil(M/tile_m) + M N) / 3.35 TB/s
 *   reduction = split_k > 1: (2 split_k M N 4 bytes) / 3.35 TB/s + 2 us
 *   time      = (3 + compute + memory + reduction + 0.2 stages) * exp(noise * z)
 * with z a standard normal drawn from (seed, problem, configuration), so the table does not depend on the order
 * of its rows. Same arguments, same bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/core.h"

#define SMS 132
enum { DT_FP16, DT_BF16, DT_FP32 };
static const char *const dtype_names[3] = {"fp16", "bf16", "fp32"};

typedef struct gemm_problem {
    long m, n, k;
    int dtype;
} gemm_problem;

typedef struct gemm_config {
    int tm, tn, tk, stages, split;
} gemm_config;

typedef struct gemm_buf {
    char *s;
    size_t n, cap;
} gemm_buf;

static int gemm_buf_printf(gemm_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#include <stdarg.h>
static int gemm_buf_printf(gemm_buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (w < 0) return HR_EINVAL;
        if ((size_t)w < b->cap - b->n) {
            b->n += (size_t)w;
            return HR_OK;
        }
        size_t cap = b->cap * 2 + (size_t)w + 1;
        char *s = realloc(b->s, cap);
        if (!s) return HR_ENOMEM;
        b->s = s;
        b->cap = cap;
    }
}

static double gemm_time_us(const gemm_problem *p, const gemm_config *c)
{
    double bytes = p->dtype == DT_FP32 ? 4 : 2, peak = (p->dtype == DT_FP32 ? 60e12 : 990e12), bw = 3.35e12;
    double tiles_m = ceil((double)p->m / c->tm), tiles_n = ceil((double)p->n / c->tn);
    double ctas = tiles_m * tiles_n * c->split, waves = ceil(ctas / SMS);
    double k_iters = ceil(ceil((double)p->k / c->split) / c->tk);
    double a = (double)c->tm * c->tn / (c->tm + c->tn);
    double eff = a / (a + 24) * c->tk / (c->tk + 16.0) * (1 - pow(0.5, c->stages));
    double compute = waves * 2.0 * c->tm * c->tn * k_iters * c->tk / (peak / SMS * eff);
    double memory = bytes * ((double)p->m * p->k * tiles_n + (double)p->k * p->n * tiles_m + (double)p->m * p->n) / bw;
    double reduction = c->split > 1 ? 2.0 * c->split * p->m * p->n * 4 / bw + 2e-6 : 0;
    return 3.0 + (compute + memory + reduction) * 1e6 + 0.2 * c->stages;
}

static int gemm_config_valid(const gemm_problem *p, const gemm_config *c)
{
    double bytes = p->dtype == DT_FP32 ? 4 : 2;
    if ((long)c->split * c->tk > p->k) return 0;
    if (c->tm > (p->m * 4 > 64 ? p->m * 4 : 64) || c->tn > (p->n * 4 > 64 ? p->n * 4 : 64)) return 0;
    return (c->tm + c->tn) * c->tk * bytes * c->stages <= 228 * 1024;
}

/* The fixed subset of the grid: one configuration in six, chosen by a hash of its fields. */
static int gemm_configs_list(gemm_config *out)
{
    static const int tiles[5] = {16, 32, 64, 128, 256}, tks[3] = {32, 64, 128}, stages[3] = {2, 3, 4}, splits[4] = {1, 2, 4, 8};
    int n = 0;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            for (int t = 0; t < 3; t++)
                for (int s = 0; s < 3; s++)
                    for (int k = 0; k < 4; k++) {
                        uint32_t h = (uint32_t)(((a * 5 + b) * 3 + t) * 3 + s) * 4 + (uint32_t)k;
                        h = (h ^ 61u) ^ (h >> 16);
                        h *= 9u;
                        h ^= h >> 4;
                        h *= 0x27d4eb2du;
                        h ^= h >> 15;
                        if (h % 6) continue;
                        out[n++] = (gemm_config){tiles[a], tiles[b], tks[t], stages[s], splits[k]};
                    }
    return n;
}

static void gemm_problem_draw(hr_rng *rng, gemm_problem *p)
{
    static const long hidden[][2] = {{4096, 4096}, {11008, 4096}, {14336, 4096}, {4096, 11008}, {4096, 14336},
                                     {5120, 5120}, {13824, 5120}, {8192, 8192}, {28672, 8192}, {1024, 4096}};
    if (hr_rng_uniform_d(rng) < 0.7) {
        int h = (int)hr_rng_below(rng, sizeof hidden / sizeof hidden[0]);
        p->n = hidden[h][0], p->k = hidden[h][1];
        p->m = hr_rng_uniform_d(rng) < 0.5 ? 1L << hr_rng_below(rng, 14) : 1 + (long)hr_rng_below(rng, 8192);
    } else {
        long *d[3] = {&p->m, &p->n, &p->k};
        for (int i = 0; i < 3; i++) *d[i] = (long)floor(exp(log(16.0) + hr_rng_uniform_d(rng) * (log(16384.0) - log(16.0))));
    }
    p->dtype = (int)hr_rng_below(rng, 3);
}

static int gemm_gzip(const gemm_buf *in, gemm_buf *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    /* windowBits 15 + 16: a gzip wrapper with no name and mtime 0, so the bytes depend on the content only */
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return HR_ENOMEM;
    out->cap = deflateBound(&z, (uLong)in->n) + 64;
    if (!(out->s = malloc(out->cap))) {
        deflateEnd(&z);
        return HR_ENOMEM;
    }
    z.next_in = (unsigned char *)in->s;
    z.avail_in = (uInt)in->n;
    z.next_out = (unsigned char *)out->s;
    z.avail_out = (uInt)out->cap;
    int zr = deflate(&z, Z_FINISH);
    out->n = out->cap - z.avail_out;
    deflateEnd(&z);
    return zr == Z_STREAM_END ? HR_OK : HR_EIO;
}

static int gemm_table_write(const char *out, long n_problems, uint64_t seed, double noise, int hardware)
{
    gemm_config configs[900];
    int n_configs = gemm_configs_list(configs);
    gemm_buf b = {malloc(1 << 16), 0, 1 << 16};
    gemm_problem *probs = calloc((size_t)n_problems, sizeof *probs);
    if (!b.s || !probs) return HR_ENOMEM;
    int rc = gemm_buf_printf(&b, "M,N,K,dtype,%stile_m,tile_n,tile_k,stages,split_k,time_us\n", hardware ? "sms," : "");
    hr_rng rng;
    hr_rng_seed(&rng, seed);
    for (long i = 0; !rc && i < n_problems; i++) {
        gemm_problem *p = &probs[i];
        for (int again = 1; again;) {
            gemm_problem_draw(&rng, p);
            again = 1;
            for (int c = 0; c < n_configs && again; c++) again = !gemm_config_valid(p, &configs[c]);
            for (long j = 0; j < i && !again; j++)
                again = probs[j].m == p->m && probs[j].n == p->n && probs[j].k == p->k && probs[j].dtype == p->dtype;
        }
        for (int c = 0; !rc && c < n_configs; c++) {
            if (!gemm_config_valid(p, &configs[c])) continue;
            double t = gemm_time_us(p, &configs[c]);
            if (noise > 0) {
                hr_rng r;
                hr_rng_derive(&r, seed ^ 0x9e3779b97f4a7c15ULL, (uint64_t)i * 1024 + (uint64_t)c);
                t *= exp(noise * hr_rng_normal(&r));
            }
            const gemm_config *g = &configs[c];
            rc = gemm_buf_printf(&b, "%ld,%ld,%ld,%s,", p->m, p->n, p->k, dtype_names[p->dtype]);
            if (!rc && hardware) rc = gemm_buf_printf(&b, "%d,", SMS);
            if (!rc) rc = gemm_buf_printf(&b, "%d,%d,%d,%d,%d,%.6g\n", g->tm, g->tn, g->tk, g->stages, g->split, t);
        }
    }
    free(probs);
    size_t len = strlen(out);
    int gz = len > 3 && strcmp(out + len - 3, ".gz") == 0;
    if (!rc && gz) {
        gemm_buf z = {0};
        rc = gemm_gzip(&b, &z);
        free(b.s);
        b = z;
    }
    if (!rc) rc = hr_file_write_atomic(out, b.s, b.n);
    free(b.s);
    if (rc) return rc;
    /* FILE.schema.json: the name without .gz and .csv */
    size_t base = len - (gz ? 3 : 0);
    if (base >= 4 && strncmp(out + base - 4, ".csv", 4) == 0) base -= 4;
    char *schema_path = malloc(base + sizeof ".schema.json");
    if (!schema_path) return HR_ENOMEM;
    memcpy(schema_path, out, base);
    strcpy(schema_path + base, ".schema.json");
    char schema[1024];
    int w = snprintf(schema, sizeof schema,
                     "{\"problem\": [\"M\", \"N\", \"K\", \"dtype\"], \"hardware\": [%s],\n"
                     " \"kernel\": [\"tile_m\", \"tile_n\", \"tile_k\", \"stages\", \"split_k\"],\n"
                     " \"categorical\": [\"dtype\"], \"measure\": \"time_us\", \"better\": \"lower\",\n"
                     " \"tiles\": {\"tile_m\": \"M\", \"tile_n\": \"N\", \"tile_k\": \"K\"},\n"
                     " \"reduction\": \"K\", \"split\": \"split_k\", \"cus\": %s}\n",
                     hardware ? "\"sms\"" : "", hardware ? "\"sms\"" : "132");
    rc = hr_file_write_atomic(schema_path, schema, (size_t)w);
    free(schema_path);
    return rc;
}

int main(int argc, char **argv)
{
    long n = 0;
    unsigned long long seed = 0;
    double noise = 0;
    int hardware = 0;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (strcmp(a, "--hardware") == 0) {
            hardware = 1;
            continue;
        }
        if (!v) break;
        if (strcmp(a, "--problems") == 0) n = strtol(v, &end, 10);
        else if (strcmp(a, "--seed") == 0) seed = strtoull(v, &end, 10);
        else if (strcmp(a, "--noise") == 0) noise = strtod(v, &end);
        else if (strcmp(a, "--out") == 0) out = v, end = (char *)v + strlen(v);
        else break;
        if (!end || *end) {
            fprintf(stderr, "gen_gemm_table: %s '%s': not a number\n", a, v);
            return 2;
        }
        i++;
    }
    if (!out || n <= 0 || n > 1000000 || noise < 0) {
        fprintf(stderr, "usage: gen_gemm_table --problems N --seed S --out FILE.csv[.gz] [--noise F] [--hardware]\n");
        return 2;
    }
    if (gemm_table_write(out, n, seed, noise, hardware)) {
        fprintf(stderr, "gen_gemm_table: %s: %s\n", out, hr_last_error());
        return 1;
    }
    return 0;
}
