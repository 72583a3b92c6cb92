/* GEMM problems, configurations and their table fields, and the seeded configuration draws (gemm.h). */
#include "gemm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dtype_names[COLLECT_GEMM_DTYPE_COUNT] = {"bf16", "fp16", "fp32", "tf32", "fp8e4m3"};

const char *collect_gemm_dtype_name(collect_gemm_dtype t)
{
    return (unsigned)t < COLLECT_GEMM_DTYPE_COUNT ? dtype_names[t] : "?";
}

int collect_gemm_dtype_bytes(collect_gemm_dtype t)
{
    return t == COLLECT_GEMM_FP8E4M3 ? 1 : t == COLLECT_GEMM_BF16 || t == COLLECT_GEMM_FP16 ? 2 : 4;
}

int collect_gemm_dtype_out_bytes(collect_gemm_dtype t)
{
    return t == COLLECT_GEMM_FP8E4M3 ? 2 : collect_gemm_dtype_bytes(t);
}

/* ---- shapes ---- */

/* A size written as the table writes it: decimal digits, no sign and no leading zero, so that a hand-written
 * "+2" or "02" is refused rather than read as a shape whose key the scripts spell differently. */
static int parse_dim(const char *tok, long *v, long max)
{
    if (tok[0] < '1' || tok[0] > '9' || tok[strspn(tok, "0123456789")] != '\0') return -1;
    char *end;
    errno = 0;
    long x = strtol(tok, &end, 10);
    if (end == tok || *end || errno || x < 1 || x > max) return -1;
    *v = x;
    return 0;
}

int collect_gemm_shape_parse(const char *line, collect_gemm_shape *s)
{
    char buf[512];
    size_t len = strcspn(line, "#\n\r");
    if (len >= sizeof buf) return collect_error(COLLECT_EFORMAT, "line longer than %zu characters", sizeof buf - 1);
    memcpy(buf, line, len);
    buf[len] = '\0';
    char *tok[7], *save = NULL;
    int nt = 0;
    for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (nt == 7) return collect_error(COLLECT_EFORMAT, "more than 7 fields (M N K DTYPE TRANS_A TRANS_B [BATCH])");
        tok[nt++] = t;
    }
    if (nt == 0) return 1;
    if (nt < 6)
        return collect_error(COLLECT_EFORMAT, "%d fields, expected 6 or 7 (M N K DTYPE TRANS_A TRANS_B [BATCH])", nt);
    static const char *const dims[3] = {"M", "N", "K"};
    long *v[3] = {&s->m, &s->n, &s->k};
    for (int i = 0; i < 3; i++)
        if (parse_dim(tok[i], v[i], COLLECT_GEMM_MAX_DIM))
            return collect_error(COLLECT_EFORMAT, "%s '%s': expected an integer in [1, %ld]", dims[i], tok[i],
                                 COLLECT_GEMM_MAX_DIM);
    int t = 0;
    while (t < COLLECT_GEMM_DTYPE_COUNT && strcmp(tok[3], dtype_names[t]) != 0) t++;
    if (t == COLLECT_GEMM_DTYPE_COUNT)
        return collect_error(COLLECT_EFORMAT, "data type '%s': expected bf16, fp16, fp32, tf32 or fp8e4m3", tok[3]);
    s->dtype = (collect_gemm_dtype)t;
    for (int i = 4; i < 6; i++)
        if (strcmp(tok[i], "N") != 0 && strcmp(tok[i], "T") != 0)
            return collect_error(COLLECT_EFORMAT, "%s '%s': expected N or T", i == 4 ? "TRANS_A" : "TRANS_B", tok[i]);
    s->trans_a = tok[4][0];
    s->trans_b = tok[5][0];
    s->batch = 1;
    if (nt == 7 && parse_dim(tok[6], &s->batch, COLLECT_GEMM_MAX_BATCH))
        return collect_error(COLLECT_EFORMAT, "BATCH '%s': expected an integer in [1, %ld]", tok[6],
                             COLLECT_GEMM_MAX_BATCH);
    return 0;
}

int collect_gemm_shapes_read(const char *path, collect_gemm_shape **shapes, int *n)
{
    *shapes = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) return collect_error(COLLECT_EIO, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    int cap_s = 0, lineno = 0, rc = COLLECT_OK;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        collect_gemm_shape s;
        int pr = collect_gemm_shape_parse(line, &s);
        if (pr == 1) continue;
        if (pr < 0) {
            char why[256];
            snprintf(why, sizeof why, "%s", collect_last_error());
            rc = collect_error(COLLECT_EFORMAT, "%s:%d: %s", path, lineno, why);
            break;
        }
        if (*n == cap_s) {
            int nc = cap_s ? 2 * cap_s : 256;
            collect_gemm_shape *ns = realloc(*shapes, (size_t)nc * sizeof *ns);
            if (!ns) {
                rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
                break;
            }
            *shapes = ns;
            cap_s = nc;
        }
        (*shapes)[(*n)++] = s;
    }
    if (!rc && ferror(f)) rc = collect_error(COLLECT_EIO, "%s: read failed", path);
    free(line);
    fclose(f);
    if (!rc && *n == 0) rc = collect_error(COLLECT_EFORMAT, "%s: no shape", path);
    if (rc) {
        free(*shapes);
        *shapes = NULL;
        *n = 0;
    }
    return rc;
}

int collect_gemm_shape_key(const collect_gemm_shape *s, char *buf, size_t size)
{
    char batch[32] = "";
    if (s->batch > 1) snprintf(batch, sizeof batch, ",%ld", s->batch);
    int len = snprintf(buf, size, "%ld,%ld,%ld,%s,%c,%c%s", s->m, s->n, s->k, collect_gemm_dtype_name(s->dtype),
                       s->trans_a, s->trans_b, batch);
    if (len < 0 || (size_t)len >= size) return collect_error(COLLECT_EINVAL, "shape key longer than %zu", size);
    return COLLECT_OK;
}

int collect_gemm_row_key(const char *row, char *buf, size_t size)
{
    const char *f[8] = {row};
    int nf = 1;
    for (const char *c = row; *c && *c != '\n' && nf < 8; c++)
        if (*c == ',') f[nf++] = c + 1;
    if (nf < 8) return collect_error(COLLECT_EFORMAT, "a row with fewer than 8 fields");
    /* the six columns before batch, then ",BATCH" unless the batch is "1" */
    size_t head = (size_t)(f[6] - 1 - row), tail = (size_t)(f[7] - 1 - f[6]);
    int single = tail == 1 && f[6][0] == '1';
    size_t len = head + (single ? 0 : 1 + tail);
    if (len >= size) return collect_error(COLLECT_EINVAL, "shape key longer than %zu", size);
    memcpy(buf, row, head);
    if (!single) memcpy(buf + head, f[6] - 1, 1 + tail);
    buf[len] = '\0';
    return COLLECT_OK;
}

void collect_gemm_shape_bytes(const collect_gemm_shape *s, size_t *a, size_t *b, size_t *d)
{
    size_t e = (size_t)collect_gemm_dtype_bytes(s->dtype) * (size_t)s->batch;
    *a = (size_t)s->m * (size_t)s->k * e;
    *b = (size_t)s->k * (size_t)s->n * e;
    *d = (size_t)s->m * (size_t)s->n * (size_t)collect_gemm_dtype_out_bytes(s->dtype) * (size_t)s->batch;
}

double collect_gemm_shape_flops(const collect_gemm_shape *s)
{
    return 2.0 * (double)s->m * (double)s->n * (double)s->k * (double)s->batch;
}

/* log(seconds) = coef . (1, ln flops, ln bytes, fp16, fp32, tf32, A transposed, B transposed) for the default
 * 64 sampled candidates and a heuristic list of 32 (bf16 the base): least squares over the shapes whose
 * measured seconds the H100 collection logged (datasets/h100/logs/gemm_run1.log, one shape in 25;
 * scripts/fit_cost.py gemm prints these numbers; fp8e4m3, absent from that collection, counts as the base). Other
 * candidate counts scale it by the configurations timed, the heuristic's list counted as its usual 8 and the
 * shape's fixed part as one more. */
static const double gemm_cost_coef[8] = {-4.9298, 0.2103, -0.1071, 0.1896, -0.3774, -0.5196, -0.2352, 0.0734};

double collect_gemm_shape_cost_s(const collect_gemm_shape *s, int n_enum, int n_heur)
{
    size_t a, b, d;
    collect_gemm_shape_bytes(s, &a, &b, &d);
    double x[8] = {1.0, log(fmax(collect_gemm_shape_flops(s), 1.0)), log(fmax((double)(a + b + d), 1.0)),
                   s->dtype == COLLECT_GEMM_FP16, s->dtype == COLLECT_GEMM_FP32, s->dtype == COLLECT_GEMM_TF32,
                   s->trans_a == 'T', s->trans_b == 'T'};
    double z = 0;
    for (int i = 0; i < 8; i++) z += gemm_cost_coef[i] * x[i];
    double timed = (n_heur < 8 ? n_heur : 8) + n_enum, usual = 8 + 64;
    return exp(z) * (timed + 1.0) / (usual + 1.0);
}

/* ---- configurations ---- */

const char *const collect_gemm_kernel_columns[COLLECT_GEMM_N_FIELDS] = {
    "algo_id", "tile_m", "tile_n", "stage_k", "stages", "split_k", "reduction_scheme", "swizzle", "custom_option",
    "cluster_m", "cluster_n", "inner_shape"};

const char *const collect_gemm_categorical_columns[COLLECT_GEMM_N_CATEGORICAL] = {
    "dtype", "trans_a", "trans_b", "algo_id", "reduction_scheme", "inner_shape"};

int collect_gemm_enum_sizes(const collect_gemm_enum *tab, int n, int id, int *a, int *b)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (tab[mid].id == id) {
            *a = tab[mid].a;
            *b = tab[mid].b;
            return COLLECT_OK;
        }
        if (tab[mid].id < id) lo = mid + 1;
        else hi = mid - 1;
    }
    return COLLECT_EINVAL;
}

int collect_gemm_enum_id(const collect_gemm_enum *tab, int n, int a, int b, int *id)
{
    for (int i = 0; i < n; i++)
        if (tab[i].a == a && tab[i].b == b) {
            *id = tab[i].id;
            return COLLECT_OK;
        }
    return COLLECT_EINVAL;
}

int collect_gemm_config_fields(const collect_gemm_config *c, int f[COLLECT_GEMM_N_FIELDS])
{
    f[0] = c->algo_id;
    if (collect_gemm_enum_sizes(collect_gemm_tiles, collect_gemm_n_tiles, c->tile_id, &f[1], &f[2]))
        return collect_error(COLLECT_EINVAL, "tile id %d is not in the tile table (gemm_enums.c)", c->tile_id);
    if (collect_gemm_enum_sizes(collect_gemm_stages, collect_gemm_n_stages, c->stages_id, &f[3], &f[4]))
        return collect_error(COLLECT_EINVAL, "stages id %d is not in the stages table (gemm_enums.c)", c->stages_id);
    f[5] = c->split_k;
    f[6] = c->reduction_scheme;
    f[7] = c->swizzle;
    f[8] = c->custom_option;
    if (collect_gemm_enum_sizes(collect_gemm_clusters, collect_gemm_n_clusters, c->cluster_id, &f[9], &f[10]))
        return collect_error(COLLECT_EINVAL, "cluster shape id %d is not in the cluster table (gemm_enums.c)",
                             c->cluster_id);
    f[11] = c->inner_shape_id;
    return COLLECT_OK;
}

int collect_gemm_config_from_fields(const int f[COLLECT_GEMM_N_FIELDS], collect_gemm_config *c)
{
    memset(c, 0, sizeof *c);
    c->algo_id = f[0];
    if (collect_gemm_enum_id(collect_gemm_tiles, collect_gemm_n_tiles, f[1], f[2], &c->tile_id))
        return collect_error(COLLECT_EINVAL, "no cuBLASLt tile is %d x %d", f[1], f[2]);
    if (collect_gemm_enum_id(collect_gemm_stages, collect_gemm_n_stages, f[3], f[4], &c->stages_id))
        return collect_error(COLLECT_EINVAL, "no cuBLASLt stages id is %d x %d", f[3], f[4]);
    c->split_k = f[5];
    c->reduction_scheme = f[6];
    c->swizzle = f[7];
    c->custom_option = f[8];
    if (collect_gemm_enum_id(collect_gemm_clusters, collect_gemm_n_clusters, f[9], f[10], &c->cluster_id))
        return collect_error(COLLECT_EINVAL, "no cuBLASLt cluster shape is %d x %d", f[9], f[10]);
    c->inner_shape_id = f[11];
    return COLLECT_OK;
}

int collect_gemm_config_name(const collect_gemm_config *c, char *buf, size_t size)
{
    int f[COLLECT_GEMM_N_FIELDS];
    int rc = collect_gemm_config_fields(c, f);
    if (rc) return rc;
    size_t at = 0;
    for (int i = 0; i < COLLECT_GEMM_N_FIELDS; i++) {
        int len = snprintf(buf + at, size - at, "%s%s=%d", i ? "," : "", collect_gemm_kernel_columns[i], f[i]);
        if (len < 0 || (size_t)len >= size - at)
            return collect_error(COLLECT_EINVAL, "configuration name longer than %zu", size);
        at += (size_t)len;
    }
    return COLLECT_OK;
}

int collect_gemm_config_parse(const char *name, collect_gemm_config *c)
{
    int f[COLLECT_GEMM_N_FIELDS];
    const char *p = name;
    for (int i = 0; i < COLLECT_GEMM_N_FIELDS; i++) {
        size_t len = strlen(collect_gemm_kernel_columns[i]);
        if (i && *p++ != ',') return collect_error(COLLECT_EFORMAT, "'%s': expected ',' before %s", name,
                                                   collect_gemm_kernel_columns[i]);
        if (strncmp(p, collect_gemm_kernel_columns[i], len) != 0 || p[len] != '=')
            return collect_error(COLLECT_EFORMAT, "'%s': expected %s= at column %d", name,
                                 collect_gemm_kernel_columns[i], (int)(p - name) + 1);
        p += len + 1;
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < -1000000 || v > 1000000)
            return collect_error(COLLECT_EFORMAT, "'%s': %s is not an integer", name, collect_gemm_kernel_columns[i]);
        f[i] = (int)v;
        p = end;
    }
    if (*p) return collect_error(COLLECT_EFORMAT, "'%s': text after the last field", name);
    int rc = collect_gemm_config_from_fields(f, c);
    if (rc) {
        char why[256];
        snprintf(why, sizeof why, "%s", collect_last_error());
        return collect_error(COLLECT_EFORMAT, "'%s': %s", name, why);
    }
    return COLLECT_OK;
}

int collect_gemm_config_equal(const collect_gemm_config *a, const collect_gemm_config *b)
{
    return a->algo_id == b->algo_id && a->tile_id == b->tile_id && a->stages_id == b->stages_id &&
           a->split_k == b->split_k && a->reduction_scheme == b->reduction_scheme && a->swizzle == b->swizzle &&
           a->custom_option == b->custom_option && a->cluster_id == b->cluster_id &&
           a->inner_shape_id == b->inner_shape_id;
}

void collect_gemm_capset_free(collect_gemm_capset *cs)
{
    for (int i = 0; i < cs->n_algos; i++) {
        free(cs->algos[i].tiles);
        free(cs->algos[i].stages);
    }
    free(cs->algos);
    cs->algos = NULL;
    cs->n_algos = 0;
}

/* ---- seeded draws ---- */

void collect_gemm_rng_seed(collect_gemm_rng *r, uint64_t seed, const char *key)
{
    /* FNV-1a of the key, mixed with the seed: the same problem gets the same draws in any run */
    uint64_t h = 1469598103934665603ull;
    for (const char *p = key; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    r->s = h ^ (seed * 0x9E3779B97F4A7C15ull);
}

uint64_t collect_gemm_rng_next(collect_gemm_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int collect_gemm_rng_below(collect_gemm_rng *r, int n)
{
    return n > 0 ? (int)(collect_gemm_rng_next(r) % (uint64_t)n) : 0;
}

/* automatic, then the shapes Hopper kernels use along M, N and both */
const int collect_gemm_cluster_tries[] = {0, 2, 3, 5, 6, 4, 8, 7, 9};
const int collect_gemm_n_cluster_tries = (int)(sizeof collect_gemm_cluster_tries / sizeof collect_gemm_cluster_tries[0]);

static const int split_choices[] = {2, 3, 4, 8, 16};

static void draw_split(const collect_gemm_caps *cap, long k, collect_gemm_rng *r, collect_gemm_config *c)
{
    c->split_k = 1;
    c->reduction_scheme = 0;
    int schemes[3], ns = 0;
    for (int b = 1; b <= 4; b <<= 1)
        if (cap->reduction_mask & (uint32_t)b) schemes[ns++] = b;
    if (!cap->splitk_support || ns == 0) return;
    int opts[5], no = 0;
    for (int i = 0; i < 5; i++)
        if (k / split_choices[i] >= 32) opts[no++] = split_choices[i];
    if (no == 0) return;
    c->split_k = opts[collect_gemm_rng_below(r, no)];
    c->reduction_scheme = schemes[collect_gemm_rng_below(r, ns)];
}

void collect_gemm_config_draw(const collect_gemm_caps *cap, long k, collect_gemm_rng *r, collect_gemm_config *c)
{
    memset(c, 0, sizeof *c);
    c->algo_id = cap->algo_id;
    c->tile_id = cap->n_tiles ? cap->tiles[collect_gemm_rng_below(r, cap->n_tiles)] : 0;
    c->stages_id = cap->n_stages ? cap->stages[collect_gemm_rng_below(r, cap->n_stages)] : 0;
    if (collect_gemm_rng_below(r, 2)) draw_split(cap, k, r, c);
    else c->split_k = 1;
    c->swizzle = cap->swizzle_support ? collect_gemm_rng_below(r, 2) : 0;
    c->custom_option = cap->custom_option_max > 0 ? collect_gemm_rng_below(r, cap->custom_option_max + 1) : 0;
    c->cluster_id = collect_gemm_cluster_tries[collect_gemm_rng_below(r, collect_gemm_n_cluster_tries)];
    c->inner_shape_id = collect_gemm_rng_below(r, 4) ? 0 : 1 + collect_gemm_rng_below(r, 4);
}

void collect_gemm_draw_exclude(const collect_gemm_capset *cs, const collect_gemm_shape *s, int *fails, int mark,
                               int *alive)
{
    int n = cs->n_algos < 1024 ? cs->n_algos : 1024, any = 0;
    if (s->batch <= 1) return;
    for (int a = 0; a < n; a++) any |= cs->algos[a].strided_batch != 0;
    for (int a = 0; any && a < n; a++)
        if (!cs->algos[a].strided_batch && fails[a] < mark) {
            fails[a] = mark;
            (*alive)--;
        }
}

void collect_gemm_sample_plan(int kept, int n_enum, int max, int *bases, int *near_end, int *target)
{
    *target = kept + n_enum < max ? kept + n_enum : max;
    *near_end = kept > 0 ? kept + n_enum / 2 : kept;
    if (*near_end > *target) *near_end = *target;
    *bases = kept < 4 ? kept : 4;
}

void collect_gemm_config_neighbour(const collect_gemm_caps *cap, long k, const collect_gemm_config *base,
                                   collect_gemm_rng *r, collect_gemm_config *c)
{
    *c = *base;
    switch (collect_gemm_rng_below(r, 6)) {
    case 0: if (cap->n_tiles) c->tile_id = cap->tiles[collect_gemm_rng_below(r, cap->n_tiles)]; break;
    case 1: if (cap->n_stages) c->stages_id = cap->stages[collect_gemm_rng_below(r, cap->n_stages)]; break;
    case 2:
        if (base->split_k > 1) {
            c->split_k = 1;
            c->reduction_scheme = 0;
        } else {
            draw_split(cap, k, r, c);
        }
        break;
    case 3: c->swizzle = cap->swizzle_support ? !base->swizzle : 0; break;
    case 4: c->custom_option = cap->custom_option_max > 0 ? collect_gemm_rng_below(r, cap->custom_option_max + 1) : 0; break;
    default: c->cluster_id = collect_gemm_cluster_tries[collect_gemm_rng_below(r, collect_gemm_n_cluster_tries)]; break;
    }
}
