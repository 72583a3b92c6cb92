/* Quantile binning: each numeric feature is cut into at most max_bin value bins holding about equal
 * numbers of rows (distinct values never share a cut), plus one bin for NaN; each categorical feature gets
 * one bin per category (the max_bin most frequent) plus an "other" bin that always goes right. Training
 * then works on small integers, stored twice: column-major (a split partitions a leaf's rows by one
 * feature), and packed row-major for histograms, where features whose bins occur in few values share a
 * column as one mixed-radix number (bin_pack), so that a pass over a leaf's scattered rows reads one cache
 * line per row and makes one histogram update per column rather than per feature. */
#include "gbdt/gbdt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* rows looked at to choose the cuts; beyond this an evenly strided subset is used */
#define BIN_SAMPLE_ROWS 200000

/* category of a value, or -1 if it cannot be one (NaN, negative, too large) */
static int bin_category_of(float v)
{
    if (isnan(v) || v < 0 || !(v < (float)GBDT_MAX_CATEGORY)) return -1;
    return (int)v;
}

int gbdt_bin_value(const gbdt_bin_mapper *m, float v)
{
    if (m->is_categorical) {
        int c = bin_category_of(v);
        for (int b = 0; b < m->num_bins - 1; b++)
            if (m->category[b] == c) return b;
        return m->num_bins - 1;
    }
    if (isnan(v)) return m->num_bins - 1;
    /* first b with v <= upper[b] (the last value bin's upper is +inf), by a binary search whose steps are
     * conditional moves: a branch per step would be mispredicted half the time */
    const double *base = m->upper;
    double x = v;
    for (int len = m->num_bins - 1; len > 1;) {
        int half = len / 2;
        base = base[half - 1] < x ? base + half : base;
        len -= half;
    }
    return (int)(base - m->upper);
}

/* Cuts for sorted values vals[0..m): greedy equal-count bins, cut midway between distinct values. */
static int bin_numeric_cuts(const float *vals, size_t m, int max_bin, gbdt_bin_mapper *out)
{
    size_t ndistinct = 0;
    for (size_t i = 0; i < m; i++)
        if (i == 0 || vals[i] != vals[i - 1]) ndistinct++;
    size_t cap = ndistinct < (size_t)max_bin ? ndistinct : (size_t)max_bin;
    if (cap < 1) cap = 1;
    out->upper = hr_malloc(cap * sizeof(double));
    if (!out->upper) return HR_ENOMEM;
    int nb = 0;
    double remaining = (double)m, acc = 0;
    double target = remaining / (double)cap;
    for (size_t i = 0; i < m;) {
        size_t j = i;
        while (j < m && vals[j] == vals[i]) j++; /* [i, j): one distinct value */
        acc += (double)(j - i);
        int last = j == m;
        if (!last && nb < (int)cap - 1 && (ndistinct <= (size_t)max_bin || acc >= target)) {
            out->upper[nb++] = (double)vals[i] + ((double)vals[j] - (double)vals[i]) / 2.0;
            remaining -= acc;
            acc = 0;
            target = remaining / (double)(cap - (size_t)nb);
        }
        i = j;
    }
    out->upper[nb++] = INFINITY;
    out->num_bins = nb + 1;
    return HR_OK;
}

typedef struct cat_count {
    int category;
    size_t count;
} cat_count;

static int cat_count_cmp(const void *a, const void *b)
{
    const cat_count *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return (x->category > y->category) - (x->category < y->category);
}

static void bin_store(gbdt_binned *bd, size_t i, int j, int b)
{
    size_t c = (size_t)j * bd->n + i;
    if (bd->bin_bytes == 1)
        ((uint8_t *)bd->cols)[c] = (uint8_t)b;
    else
        ((uint16_t *)bd->cols)[c] = (uint16_t)b;
}

typedef struct bin_job {
    const gbdt_data *data;
    size_t begin;     /* the rows kept: [begin, begin + bd->n) of data */
    int max_bin;
    size_t sample_n;
    float **scratch;  /* per thread (2 * sample_n) */
    const float *sample; /* (d, sample_n) the sampled rows' values, column-major */
    gbdt_binned *bd;
    int *status;      /* (d) */
    int *minb, *maxb; /* (d) the smallest and largest bin of each feature over all of data's rows */
} bin_job;

static int bin_feature_categorical(const bin_job *job, int j)
{
    const gbdt_data *data = job->data;
    gbdt_bin_mapper *m = &job->bd->mappers[j];
    int maxc = -1;
    for (size_t i = 0; i < data->n; i++) {
        int c = bin_category_of(data->x[i * (size_t)data->d + (size_t)j]);
        if (c > maxc) maxc = c;
    }
    size_t nc = (size_t)maxc + 1;
    cat_count *counts = hr_calloc(nc + 1, sizeof *counts);
    int *lookup = hr_malloc((nc + 1) * sizeof *lookup);
    if (!counts || !lookup) {
        free(counts);
        free(lookup);
        return HR_ENOMEM;
    }
    for (size_t c = 0; c < nc; c++) counts[c].category = (int)c;
    for (size_t i = 0; i < data->n; i++) {
        int c = bin_category_of(data->x[i * (size_t)data->d + (size_t)j]);
        if (c >= 0) counts[c].count++;
    }
    qsort(counts, nc, sizeof *counts, cat_count_cmp);
    size_t used = 0;
    while (used < nc && used < (size_t)job->max_bin && counts[used].count > 0) used++;
    m->is_categorical = 1;
    m->num_bins = (int)used + 1;
    m->category = hr_malloc((used + 1) * sizeof(int));
    if (!m->category) {
        free(counts);
        free(lookup);
        return HR_ENOMEM;
    }
    for (size_t c = 0; c < nc; c++) lookup[c] = (int)used; /* "other" bin */
    for (size_t b = 0; b < used; b++) {
        m->category[b] = counts[b].category;
        lookup[counts[b].category] = (int)b;
    }
    int lo = (int)used, hi = 0;
    for (size_t i = 0; i < data->n; i++) {
        int c = bin_category_of(data->x[i * (size_t)data->d + (size_t)j]), b = c >= 0 ? lookup[c] : (int)used;
        lo = b < lo ? b : lo;
        hi = b > hi ? b : hi;
        if (i >= job->begin && i - job->begin < job->bd->n) bin_store(job->bd, i - job->begin, j, b);
    }
    job->minb[j] = lo, job->maxb[j] = hi;
    free(counts);
    free(lookup);
    return HR_OK;
}

static int bin_feature_numeric(const bin_job *job, int j, int tid)
{
    const gbdt_data *data = job->data;
    gbdt_bin_mapper *m = &job->bd->mappers[j];
    float *vals = job->scratch[tid];
    const float *col = job->sample + (size_t)j * job->sample_n;
    size_t nv = 0;
    for (size_t s = 0; s < job->sample_n; s++)
        if (!isnan(col[s])) vals[nv++] = col[s];
    hr_sort_floats(vals, vals + job->sample_n, nv);
    (void)data;
    return bin_numeric_cuts(vals, nv, job->max_bin, m); /* bins are assigned row by row (assign_range) */
}

/* the sampled rows (evenly strided), transposed so that each feature's values are contiguous */
static void sample_range(void *ctx, size_t begin, size_t end, int tid)
{
    const bin_job *job = ctx;
    const gbdt_data *data = job->data;
    float *out = (float *)job->sample;
    for (size_t s = begin; s < end; s++) {
        size_t i = job->sample_n == data->n ? s : s * data->n / job->sample_n;
        for (int j = 0; j < data->d; j++) out[(size_t)j * job->sample_n + s] = data->x[i * (size_t)data->d + (size_t)j];
    }
}

/* numeric bins of kept rows [begin, end), a row at a time: the row-major values are read once, in order */
static void assign_range(void *ctx, size_t begin, size_t end, int tid)
{
    const bin_job *job = ctx;
    const gbdt_data *data = job->data;
    for (size_t i = begin; i < end; i++) {
        const float *x = data->x + (job->begin + i) * (size_t)data->d;
        for (int j = 0; j < data->d; j++)
            if (!job->bd->mappers[j].is_categorical) bin_store(job->bd, i, j, gbdt_bin_value(&job->bd->mappers[j], x[j]));
    }
}

/* minb, maxb of numeric features [begin, end): from the stored bins when every row is kept, else from all
 * of data's rows (the bins of rows kept elsewhere decide the histogram layout too) */
static void range_range(void *ctx, size_t begin, size_t end, int tid)
{
    const bin_job *job = ctx;
    const gbdt_data *data = job->data;
    const gbdt_binned *bd = job->bd;
    for (size_t j = begin; j < end; j++) {
        if (bd->mappers[j].is_categorical) continue;
        int lo = INT32_MAX, hi = 0, all = bd->n == data->n;
        for (size_t i = 0; i < data->n; i++) {
            int b = all ? gbdt_binned_get(bd, (int)j, i) : gbdt_bin_value(&bd->mappers[j], data->x[i * (size_t)data->d + j]);
            lo = b < lo ? b : lo;
            hi = b > hi ? b : hi;
        }
        job->minb[j] = lo, job->maxb[j] = hi;
    }
}

static void bin_range(void *ctx, size_t begin, size_t end, int tid)
{
    bin_job *job = ctx;
    for (size_t j = begin; j < end; j++) {
        int cat = job->data->is_categorical && job->data->is_categorical[j];
        job->status[j] = cat ? bin_feature_categorical(job, (int)j) : bin_feature_numeric(job, (int)j, tid);
    }
}

/* a feature and its radix (largest bin that occurs + 1), for choosing bundles */
typedef struct bin_radix {
    int feature, radix;
} bin_radix;

static int bin_radix_cmp(const void *a, const void *b)
{
    const bin_radix *x = a, *y = b;
    if (x->radix != y->radix) return x->radix < y->radix ? -1 : 1;
    return (x->feature > y->feature) - (x->feature < y->feature);
}

typedef struct pack_job {
    gbdt_binned *bd;
    const int *col_feature; /* (ncols) the feature of a single-feature column, -1 for a bundle */
    const int *col_bundle;  /* (ncols) the bundle of a bundle column */
} pack_job;

static void pack_range(void *ctx, size_t begin, size_t end, int tid)
{
    const pack_job *job = ctx;
    gbdt_binned *bd = job->bd;
    size_t nc = (size_t)bd->ncols;
    for (size_t i = begin; i < end; i++)
        for (size_t c = 0; c < nc; c++) {
            int v = 0;
            if (job->col_feature[c] >= 0) {
                v = gbdt_binned_get(bd, job->col_feature[c], i);
            } else {
                const gbdt_bundle *bu = &bd->bundles[job->col_bundle[c]];
                for (int f = 0; f < bu->nfeatures; f++) v += gbdt_binned_get(bd, bu->feature[f], i) * bu->stride[f];
            }
            if (bd->pack_bytes == 1)
                ((uint8_t *)bd->packed)[i * nc + c] = (uint8_t)v;
            else
                ((uint16_t *)bd->packed)[i * nc + c] = (uint16_t)v;
        }
}

/* Chooses the columns: features sorted by radix are bundled greedily while the product of radices stays
 * within GBDT_BUNDLE_MAX_BINS; a feature left alone is a column of its own. Then writes the packed matrix. */
static int bin_pack(gbdt_binned *bd, const int *maxb, int nthreads)
{
    int d = bd->d, nr = 0, rc = HR_OK;
    bin_radix *rad = hr_calloc((size_t)d + 1, sizeof *rad);
    int *col_feature = hr_calloc((size_t)d + 1, sizeof(int)), *col_bundle = hr_calloc((size_t)d + 1, sizeof(int));
    bd->bundles = hr_calloc((size_t)d + 1, sizeof *bd->bundles);
    bd->col_offset = hr_calloc((size_t)d + 1, sizeof *bd->col_offset);
    bd->col_nbins = hr_calloc((size_t)d + 1, sizeof *bd->col_nbins);
    if (!rad || !col_feature || !col_bundle || !bd->bundles || !bd->col_offset || !bd->col_nbins) rc = HR_ENOMEM;
    for (int j = 0; j < d && rc == HR_OK; j++) {
        if (bd->mappers[j].trivial) continue;
        rad[nr].feature = j;
        rad[nr++].radix = maxb[j] + 1;
    }
    if (rc == HR_OK) qsort(rad, (size_t)nr, sizeof *rad, bin_radix_cmp);
    size_t next = bd->hist_offset[d];
    int maxv = 0;
    for (int i = 0; i < nr && rc == HR_OK;) {
        /* the longest run from i whose product of radices fits a bundle */
        int k = i, prod = 1;
        while (k < nr && k - i < GBDT_BUNDLE_MAX_FEATURES && prod * rad[k].radix <= GBDT_BUNDLE_MAX_BINS)
            prod *= rad[k++].radix;
        int c = bd->ncols++;
        if (k - i >= 2) {
            gbdt_bundle *bu = &bd->bundles[bd->nbundles];
            bu->offset = next;
            bu->nbins = prod;
            int stride = 1;
            for (int f = i; f < k; f++) {
                bu->feature[bu->nfeatures] = rad[f].feature;
                bu->radix[bu->nfeatures] = rad[f].radix;
                bu->stride[bu->nfeatures++] = stride;
                stride *= rad[f].radix;
            }
            next += (size_t)prod;
            col_feature[c] = -1;
            col_bundle[c] = bd->nbundles++;
            bd->col_offset[c] = bu->offset;
            bd->col_nbins[c] = prod;
            if (prod - 1 > maxv) maxv = prod - 1;
            i = k;
        } else {
            col_feature[c] = rad[i].feature;
            bd->col_offset[c] = bd->hist_offset[rad[i].feature];
            bd->col_nbins[c] = bd->mappers[rad[i].feature].num_bins;
            if (rad[i].radix - 1 > maxv) maxv = rad[i].radix - 1;
            i++;
        }
    }
    bd->hist_total = next;
    bd->pack_bytes = maxv < 256 ? 1 : 2;
    if (rc == HR_OK && !(bd->packed = hr_malloc(bd->n * (size_t)bd->ncols * (size_t)bd->pack_bytes + 1))) rc = HR_ENOMEM;
    if (rc == HR_OK) {
        pack_job job = {bd, col_feature, col_bundle};
        rc = hr_parallel_for(nthreads, bd->n, pack_range, &job);
    }
    free(rad);
    free(col_feature);
    free(col_bundle);
    return rc;
}

int gbdt_binned_build(const gbdt_data *data, int max_bin, int nthreads, gbdt_binned *out)
{
    return gbdt_binned_build_shard(data, max_bin, nthreads, 0, data->n, out);
}

int gbdt_binned_build_shard(const gbdt_data *data, int max_bin, int nthreads, size_t begin, size_t end,
                            gbdt_binned *out)
{
    memset(out, 0, sizeof *out);
    if (max_bin < 2 || max_bin > 65535) return hr_error(HR_EINVAL, "gbdt: max_bin %d outside 2..65535", max_bin);
    if (begin > end || end > data->n)
        return hr_error(HR_EINVAL, "gbdt: rows [%zu, %zu) of %zu to bin", begin, end, data->n);
    nthreads = hr_threads_resolve(nthreads);
    out->n = end - begin;
    out->d = data->d;
    out->bin_bytes = max_bin + 1 <= 256 ? 1 : 2;
    size_t sample_n = data->n < BIN_SAMPLE_ROWS ? data->n : BIN_SAMPLE_ROWS;
    out->cols = hr_malloc(out->n * (size_t)data->d * (size_t)out->bin_bytes + 1);
    out->mappers = hr_calloc((size_t)data->d, sizeof *out->mappers);
    out->hist_offset = hr_calloc((size_t)data->d + 1, sizeof *out->hist_offset);
    int *status = hr_calloc((size_t)data->d, sizeof *status);
    int *minb = hr_calloc((size_t)data->d + 1, sizeof *minb), *maxb = hr_calloc((size_t)data->d + 1, sizeof *maxb);
    float **scratch = hr_calloc((size_t)nthreads, sizeof *scratch);
    float *sample = hr_malloc(sample_n * (size_t)data->d * sizeof *sample + 1);
    int rc = (!out->cols || !out->mappers || !out->hist_offset || !status || !scratch || !sample || !minb || !maxb)
                 ? HR_ENOMEM
                 : HR_OK;
    for (int t = 0; t < nthreads && rc == HR_OK; t++)
        if (!(scratch[t] = hr_malloc((2 * sample_n + 1) * sizeof(float)))) rc = HR_ENOMEM;
    if (rc == HR_OK) {
        bin_job job = {data, begin, max_bin, sample_n, scratch, sample, out, status, minb, maxb};
        rc = hr_parallel_for(nthreads, sample_n, sample_range, &job);
        if (rc == HR_OK) rc = hr_parallel_for(nthreads, (size_t)data->d, bin_range, &job);
        for (int j = 0; j < data->d && rc == HR_OK; j++) rc = status[j];
        if (rc == HR_OK) rc = hr_parallel_for(nthreads, out->n, assign_range, &job);
        if (rc == HR_OK) rc = hr_parallel_for(nthreads, (size_t)data->d, range_range, &job);
    }
    free(sample);
    for (int j = 0; j < data->d && rc == HR_OK; j++) {
        out->hist_offset[j + 1] = out->hist_offset[j] + (size_t)out->mappers[j].num_bins;
        out->mappers[j].trivial = minb[j] == maxb[j];
    }
    if (rc == HR_OK) rc = bin_pack(out, maxb, nthreads);
    free(minb);
    free(maxb);
    if (scratch)
        for (int t = 0; t < nthreads; t++) free(scratch[t]);
    free(scratch);
    free(status);
    if (rc) {
        gbdt_binned_free(out);
        return hr_error_wrap(rc, "gbdt: binning %zu rows x %d features", data->n, data->d);
    }
    return HR_OK;
}

void gbdt_binned_free(gbdt_binned *bd)
{
    if (bd->mappers)
        for (int j = 0; j < bd->d; j++) {
            free(bd->mappers[j].upper);
            free(bd->mappers[j].category);
        }
    free(bd->mappers);
    free(bd->cols);
    free(bd->packed);
    free(bd->col_offset);
    free(bd->col_nbins);
    free(bd->bundles);
    free(bd->hist_offset);
    memset(bd, 0, sizeof *bd);
}
