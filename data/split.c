/* Train/test splits: seeded random hold-out of rows or of whole groups, and GroupKFold by group. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

void data_split_free(data_split *s)
{
    free(s->train);
    free(s->test);
    memset(s, 0, sizeof *s);
}

static int split_from_mask(const unsigned char *is_test, int n, data_split *out)
{
    int nt = 0;
    for (int i = 0; i < n; i++) nt += is_test[i];
    out->n_test = nt;
    out->n_train = n - nt;
    out->test = hr_malloc((size_t)(nt ? nt : 1) * sizeof(int));
    out->train = hr_malloc((size_t)(n - nt ? n - nt : 1) * sizeof(int));
    if (!out->test || !out->train) {
        data_split_free(out);
        return HR_ENOMEM;
    }
    int a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        if (is_test[i]) out->test[a++] = i;
        else out->train[b++] = i;
    }
    return HR_OK;
}

int data_split_random(int n, double test_fraction, uint64_t seed, data_split *out)
{
    memset(out, 0, sizeof *out);
    if (!(test_fraction > 0 && test_fraction < 1))
        return hr_error(HR_EINVAL, "split fraction %g: must be between 0 and 1", test_fraction);
    if (n < 2) return hr_error(HR_EINVAL, "cannot split %d rows", n);
    int *perm = hr_malloc((size_t)n * sizeof *perm);
    unsigned char *mask = hr_calloc((size_t)n, 1);
    if (!perm || !mask) {
        free(perm);
        free(mask);
        return HR_ENOMEM;
    }
    for (int i = 0; i < n; i++) perm[i] = i;
    hr_rng rng;
    hr_rng_seed(&rng, seed);
    hr_rng_shuffle_int(&rng, perm, (size_t)n);
    int nt = (int)(test_fraction * n + 0.5);
    if (nt < 1) nt = 1;
    if (nt > n - 1) nt = n - 1;
    for (int i = 0; i < nt; i++) mask[perm[i]] = 1;
    int rc = split_from_mask(mask, n, out);
    free(perm);
    free(mask);
    return rc;
}

int data_split_random_groups(const int *group, int n, int n_groups, double test_fraction, uint64_t seed,
                             data_split *out)
{
    memset(out, 0, sizeof *out);
    if (!(test_fraction > 0 && test_fraction < 1))
        return hr_error(HR_EINVAL, "split fraction %g: must be between 0 and 1", test_fraction);
    if (n_groups < 2) return hr_error(HR_EINVAL, "cannot hold out whole groups of %d group%s", n_groups, n_groups == 1 ? "" : "s");
    int *order = hr_malloc((size_t)n_groups * sizeof *order);
    long *size = hr_calloc((size_t)n_groups, sizeof *size);
    unsigned char *held = hr_calloc((size_t)n_groups, 1), *mask = hr_calloc((size_t)(n > 0 ? n : 1), 1);
    int rc = HR_ENOMEM;
    if (!order || !size || !held || !mask) goto done;
    for (int i = 0; i < n; i++) size[group[i]]++;
    for (int g = 0; g < n_groups; g++) order[g] = g;
    hr_rng rng;
    hr_rng_seed(&rng, seed);
    hr_rng_shuffle_int(&rng, order, (size_t)n_groups);
    double target = test_fraction * n;
    long taken = 0;
    int n_held = 0;
    for (int i = 0; i < n_groups; i++) {
        long s = size[order[i]];
        if (n_held && fabs((double)(taken + s) - target) >= fabs((double)taken - target)) continue;
        held[order[i]] = 1;
        taken += s;
        n_held++;
    }
    if (n_held == n_groups) {
        rc = hr_error(HR_EINVAL, "split fraction %g: holds out all %d groups, none left to train on", test_fraction, n_groups);
        goto done;
    }
    for (int i = 0; i < n; i++) mask[i] = held[group[i]];
    rc = split_from_mask(mask, n, out);
done:
    free(order);
    free(size);
    free(held);
    free(mask);
    return rc;
}

typedef struct group_size {
    int group, size;
    uint64_t tiebreak;
} group_size;

static int cmp_group_size(const void *a, const void *b)
{
    const group_size *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    if (x->tiebreak != y->tiebreak) return x->tiebreak < y->tiebreak ? -1 : 1;
    return x->group - y->group;
}

int data_split_group_kfold(const int *group, int n, int n_groups, int k, uint64_t seed, int fold,
                           data_split *out)
{
    memset(out, 0, sizeof *out);
    if (k < 2) return hr_error(HR_EINVAL, "--folds %d: need at least 2 folds", k);
    if (n_groups < k) return hr_error(HR_EINVAL, "--folds %d: only %d groups to spread over the folds", k, n_groups);
    if (fold < 0 || fold >= k) return hr_error(HR_EINVAL, "fold %d out of range 0..%d", fold, k - 1);
    group_size *gs = hr_calloc((size_t)n_groups, sizeof *gs);
    int *fold_of = hr_malloc((size_t)n_groups * sizeof *fold_of);
    long *load = hr_calloc((size_t)k, sizeof *load);
    unsigned char *mask = hr_calloc((size_t)n, 1);
    int rc = HR_ENOMEM;
    if (!gs || !fold_of || !load || !mask) goto done;
    hr_rng rng;
    hr_rng_seed(&rng, seed);
    for (int g = 0; g < n_groups; g++) {
        gs[g].group = g;
        gs[g].tiebreak = hr_rng_next(&rng);
    }
    for (int i = 0; i < n; i++) gs[group[i]].size++;
    /* scikit-learn's GroupKFold balance rule: biggest groups first, each to the lightest fold */
    qsort(gs, (size_t)n_groups, sizeof *gs, cmp_group_size);
    for (int g = 0; g < n_groups; g++) {
        int best = 0;
        for (int f = 1; f < k; f++)
            if (load[f] < load[best]) best = f;
        fold_of[gs[g].group] = best;
        load[best] += gs[g].size;
    }
    for (int i = 0; i < n; i++) mask[i] = fold_of[group[i]] == fold;
    rc = split_from_mask(mask, n, out);
done:
    free(gs);
    free(fold_of);
    free(load);
    free(mask);
    return rc;
}

typedef struct hashed_row {
    uint64_t h;
    int row;
} hashed_row;

static int cmp_hashed_row(const void *a, const void *b)
{
    const hashed_row *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return x->row - y->row;
}

static int same_geometry(const data_problem *a, const data_problem *b)
{
    return memcmp(a->f, b->f, sizeof a->f) == 0;
}

int data_groups_compute(const data_problem *p, int n, int *group, int *n_groups)
{
    hashed_row *hr = hr_malloc((size_t)(n ? n : 1) * sizeof *hr);
    int *first_of = hr_malloc((size_t)(n ? n : 1) * sizeof *first_of);
    if (!hr || !first_of) {
        free(hr);
        free(first_of);
        return HR_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        hr[i].h = data_problem_geometry_hash(&p[i]);
        hr[i].row = i;
    }
    qsort(hr, (size_t)n, sizeof *hr, cmp_hashed_row);
    /* first_of[i]: the smallest row with the same geometry as row i (exact comparison, not only the hash) */
    for (int a = 0; a < n;) {
        int b = a;
        while (b < n && hr[b].h == hr[a].h) b++;
        for (int i = a; i < b; i++) {
            first_of[hr[i].row] = hr[i].row;
            for (int j = a; j < i; j++) {
                if (same_geometry(&p[hr[i].row], &p[hr[j].row])) {
                    first_of[hr[i].row] = first_of[hr[j].row];
                    break;
                }
            }
        }
        a = b;
    }
    /* dense ids in order of first appearance */
    int ng = 0;
    for (int i = 0; i < n; i++) {
        if (first_of[i] == i) group[i] = ng++;
        else group[i] = group[first_of[i]];
    }
    *n_groups = ng;
    free(hr);
    free(first_of);
    return HR_OK;
}

int data_split_spec_parse(const char *spec, double *fraction, uint64_t *seed, uint64_t default_seed)
{
    *seed = default_seed;
    *fraction = 0;
    if (strcmp(spec, "none") == 0) return HR_OK;
    if (strncmp(spec, "random:", 7) != 0)
        return hr_error(HR_EINVAL, "--split '%s': expected random:F[:seed=S] or none", spec);
    char *end;
    *fraction = strtod(spec + 7, &end);
    if (end == spec + 7 || !(*fraction >= 0 && *fraction < 1))
        return hr_error(HR_EINVAL, "--split '%s': the test fraction must be a number in [0, 1) (0 or none: train on "
                        "every row)", spec);
    if (*end == '\0') return HR_OK;
    if (strncmp(end, ":seed=", 6) != 0)
        return hr_error(HR_EINVAL, "--split '%s': expected random:F[:seed=S]", spec);
    char *e2;
    unsigned long long s = strtoull(end + 6, &e2, 10);
    if (e2 == end + 6 || *e2 != '\0') return hr_error(HR_EINVAL, "--split '%s': seed must be an integer", spec);
    *seed = s;
    return HR_OK;
}
