/* table_features: the feature formulas of benchmark tables in plain C11 with libm only.
 *
 * The single source of these computations: data/table.c calls them through a data_table_shape built from the
 * schema, and an exported runtime copies this file and defines its shape as constant arrays, so a table
 * model computes exactly the features it was trained on. Everything here is static inline; nothing allocates.
 *
 * A problem's values pv hold its problem columns then its hardware columns; a configuration's values kv its
 * kernel columns. A categorical value is the index of its string in the column's sorted vocabulary.
 *
 * Problem features, per problem/hardware column in order:
 *   numeric:     v, log2(1 + |v|)
 *   categorical: one-hot over its vocabulary (an index outside it sets none)
 * Pair features, after the kernel columns (numeric: v, log2(1 + |v|); categorical: one-hot), per kernel column
 * tiling a problem dimension d with tile t (in kernel-column order):
 *   tiles_D = ceil(d / t), waste_D = (ceil(d/t) t - d) / (ceil(d/t) t), ratio_D = log2(d / t)
 * then, when some output (non-reduction) dimension is tiled:
 *   output_tiles = product of ceil(d / t) over the tiled output dimensions
 *   waves        = output_tiles * split / CUs              (only when the schema knows the CUs; split = 1 without one)
 * then, when exactly two output dimensions (M, N) and the reduction (K) are tiled:
 *   intensity    = 2 M N K / (M K + K N + M N)
 * A non-positive d or t (or CU count) gives 0 for the features it enters. A runtime may ask for only the pair
 * features its model reads (the _needed variants): the log2 of the others is skipped and they read 0.
 */
#ifndef HEURIST_DATA_TABLE_FEATURES_H
#define HEURIST_DATA_TABLE_FEATURES_H

#include <math.h>
#include <stddef.h>

/* The schema as the formulas need it: column counts and roles, no names. */
typedef struct data_table_shape {
    int n_problem, n_hardware, n_kernel;
    const int *problem_vocab; /* (n_problem + n_hardware) vocabulary size of a categorical column, 0 if numeric */
    const int *kernel_vocab;  /* (n_kernel) the same for kernel columns */
    const int *tile_of;       /* (n_kernel) problem column the kernel column tiles, or -1 */
    int reduction;            /* problem column of the reduction dimension, or -1 */
    int split;                /* kernel column of the reduction split, or -1 */
    int cus_column;           /* problem (hardware) column holding the CU count, or -1 */
    double cus;               /* fixed CU count when cus_column is -1; 0: unknown */
} data_table_shape;

static inline int data_table_shape_width(int vocab)
{
    return vocab > 0 ? vocab : 2;
}

static inline int data_table_shape_problem_count(const data_table_shape *sh)
{
    int n = 0;
    for (int j = 0; j < sh->n_problem + sh->n_hardware; j++) n += data_table_shape_width(sh->problem_vocab[j]);
    return n;
}

/* Tiled output dimensions and tiled reductions (0 or 1: a dimension is tiled by one column at most). */
static inline void data_table_shape_tiled(const data_table_shape *sh, int *n_out, int *n_red)
{
    *n_out = *n_red = 0;
    for (int k = 0; k < sh->n_kernel; k++) {
        if (sh->tile_of[k] < 0) continue;
        if (sh->tile_of[k] == sh->reduction) ++*n_red;
        else ++*n_out;
    }
}

static inline int data_table_shape_has_cus(const data_table_shape *sh)
{
    return sh->cus_column >= 0 || sh->cus > 0;
}

static inline int data_table_shape_pair_count(const data_table_shape *sh)
{
    int n = 0, n_out, n_red;
    for (int k = 0; k < sh->n_kernel; k++) n += data_table_shape_width(sh->kernel_vocab[k]) + (sh->tile_of[k] >= 0 ? 3 : 0);
    data_table_shape_tiled(sh, &n_out, &n_red);
    if (n_out > 0) n += 1 + data_table_shape_has_cus(sh);
    if (n_out == 2 && n_red == 1) n += 1;
    return n;
}

/* log2(1 + |v|), a numeric column's second feature. An exported runtime defines DATA_TABLE_LOG2P1 before this file
 * to read the values of small whole numbers from a table that its exporter computed with this function. */
static inline float data_table_shape_log2p1(double v)
{
    return (float)log2(1.0 + fabs(v));
}
#ifndef DATA_TABLE_LOG2P1
#define DATA_TABLE_LOG2P1 data_table_shape_log2p1
#endif

/* Whether feature i is asked for: need is NULL (all are) or a flag per feature (a runtime's: the features its
 * model's splits read). The log2 of a feature not asked for, most of the features' cost, is not taken. */
static inline int data_table_shape_needed(const unsigned char *need, int i)
{
    return !need || need[i];
}

/* Writes a column's encoding at out: numeric value and log2(1 + |v|), or the one-hot; returns its width. need, from
 * the encoding's first feature: data_table_shape_needed. */
static inline int data_table_shape_encode_needed(int vocab, double v, const unsigned char *need, float *out)
{
    if (vocab <= 0) {
        out[0] = (float)v;
        out[1] = data_table_shape_needed(need, 1) ? DATA_TABLE_LOG2P1(v) : 0.0f;
        return 2;
    }
    for (int i = 0; i < vocab; i++) out[i] = 0.0f;
    if (v >= 0 && v < vocab) out[(int)v] = 1.0f;
    return vocab;
}

static inline int data_table_shape_encode(int vocab, double v, float *out)
{
    return data_table_shape_encode_needed(vocab, v, NULL, out);
}

static inline void data_table_shape_problem_features(const data_table_shape *sh, const double *pv, float *x)
{
    int o = 0;
    for (int j = 0; j < sh->n_problem + sh->n_hardware; j++) o += data_table_shape_encode(sh->problem_vocab[j], pv[j], x + o);
}

/* The inverse for the problem values: a numeric column's raw value slot, a categorical's one-hot argmax. */
static inline void data_table_shape_problem_values(const data_table_shape *sh, const float *x, double *pv)
{
    int o = 0;
    for (int j = 0; j < sh->n_problem + sh->n_hardware; j++) {
        int v = sh->problem_vocab[j];
        if (v <= 0) {
            pv[j] = x[o];
        } else {
            int best = 0;
            for (int i = 1; i < v; i++)
                if (x[o + i] > x[o + best]) best = i;
            pv[j] = best;
        }
        o += data_table_shape_width(v);
    }
}

/* The pair features after the kernel columns' encodings (tiles, waste, ratio per tiled column, output tiles, waves,
 * intensity): the ones that involve the problem. */
static inline void data_table_shape_interaction_features_needed(const data_table_shape *sh, const double *pv,
                                                                const double *kv, const unsigned char *need, float *out)
{
    int o = 0, n_out, n_red;
    double tiles = 1.0, dim_out[2] = {0, 0}, dim_red = 0;
    int i_out = 0;
    for (int k = 0; k < sh->n_kernel; k++) {
        int p = sh->tile_of[k];
        if (p < 0) continue;
        double d = pv[p], t = kv[k];
        if (d > 0 && t > 0) {
            double c = ceil(d / t);
            out[o] = (float)c;
            out[o + 1] = (float)((c * t - d) / (c * t));
            out[o + 2] = data_table_shape_needed(need, o + 2) ? (float)log2(d / t) : 0.0f;
        } else {
            out[o] = out[o + 1] = out[o + 2] = 0.0f;
        }
        o += 3;
        if (p == sh->reduction) {
            dim_red = d;
        } else {
            tiles *= d > 0 && t > 0 ? ceil(d / t) : 0.0;
            if (i_out < 2) dim_out[i_out] = d;
            i_out++;
        }
    }
    data_table_shape_tiled(sh, &n_out, &n_red);
    if (n_out > 0) {
        out[o++] = (float)tiles;
        if (data_table_shape_has_cus(sh)) {
            double cus = sh->cus_column >= 0 ? pv[sh->cus_column] : sh->cus;
            double split = sh->split >= 0 ? kv[sh->split] : 1.0;
            out[o++] = cus > 0 ? (float)(tiles * split / cus) : 0.0f;
        }
    }
    if (n_out == 2 && n_red == 1) {
        double m = dim_out[0], n = dim_out[1], kk = dim_red, den = m * kk + kk * n + m * n;
        out[o++] = m > 0 && n > 0 && kk > 0 && den > 0 ? (float)(2.0 * m * n * kk / den) : 0.0f;
    }
}

static inline void data_table_shape_interaction_features(const data_table_shape *sh, const double *pv, const double *kv,
                                                         float *out)
{
    data_table_shape_interaction_features_needed(sh, pv, kv, NULL, out);
}

/* The pair features, those need flags (data_table_shape_needed, per pair feature) or all when need is NULL. */
static inline void data_table_shape_pair_features_needed(const data_table_shape *sh, const double *pv, const double *kv,
                                                         const unsigned char *need, float *out)
{
    int o = 0;
    for (int k = 0; k < sh->n_kernel; k++)
        o += data_table_shape_encode_needed(sh->kernel_vocab[k], kv[k], need ? need + o : NULL, out + o);
    data_table_shape_interaction_features_needed(sh, pv, kv, need ? need + o : NULL, out + o);
}

static inline void data_table_shape_pair_features(const data_table_shape *sh, const double *pv, const double *kv, float *out)
{
    data_table_shape_pair_features_needed(sh, pv, kv, NULL, out);
}

#endif
