/* conv_margins: how sure an exported convolution selection runtime is of its pick, on the problems of a verify
 * run, ranked exactly as `heurist-collect verify --fdb` ranks them (collect/verify_cmd.c): the runtime's scores
 * for the plain key, the find-db line's entries that the problem's precision class allows as the candidates,
 * highest score first, the shortlist one kernel per algorithm. For experiments/conv_adaptive.py, which joins the
 * margins with a verify report's timings to price an adaptive shortlist (time only where the model is unsure).
 *
 * Build against one runtime (prefix P, the folder of `heurist export --format c --prefix P`) and the collector's
 * CPU library:
 *     cc -O2 -std=c11 -Icollect -I. -DRT=P -include DIR/P.h experiments/conv_margins.c DIR/P.c \
 *        build/collect/libheurist_collect.a -lz -lm -o conv_margins
 *     ./conv_margins LIST FDB > margins.tsv
 * LIST is a verify problem list (KEY [SOURCE [PRECISION]] lines or a table with a key column), FDB the find-db the
 * run was given. Output, one row per problem the runtime and the find-db both know, tab-separated with a header:
 * key, precision ("-" for FP16 and BF16), n_algos (distinct algorithms among the candidates), top1..top3 (the
 * shortlist's algorithms' best kernels in order, top1 the pick; "-" past the ranking's end), s1..s3 (their
 * scores), margin (s1 - s2, INFINITY with one algorithm) and p1 (the softmax probability of the pick's
 * algorithm: the softmax over every candidate kernel, summed over that algorithm's kernels). Problems skipped
 * are counted on stderr with the reason. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/portable.h"
#include "verify.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define RT_FN(name) CAT(RT, CAT(_, name))

#define MAX_RES (8 * COLLECT_MATH_COUNT)

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: conv_margins LIST FDB\n");
        return 2;
    }
    collect_problem *list = NULL;
    collect_file fdb = {0};
    int n_list = 0, rc = 1;
    int nk = RT_FN(n_kernels)();
    float *scores = malloc((size_t)nk * sizeof *scores);
    collect_dir *kdir = malloc((size_t)nk * sizeof *kdir);
    int *kalgo = malloc((size_t)nk * sizeof *kalgo), *kmath = malloc((size_t)nk * sizeof *kmath);
    char *allowed = malloc((size_t)nk);
    if (!scores || !kdir || !kalgo || !kmath || !allowed) {
        fprintf(stderr, "conv_margins: out of memory\n");
        goto done;
    }
    for (int k = 0; k < nk; k++) {
        const char *name = RT_FN(kernel_name)(k);
        if (collect_kernel_parse(name, strlen(name), &kdir[k], &kalgo[k], &kmath[k])) kdir[k] = (collect_dir)-1;
    }
    if (collect_problems_read(argv[1], "-", &list, &n_list) || collect_file_read(argv[2], &fdb)) {
        fprintf(stderr, "conv_margins: %s\n", collect_last_error());
        goto done;
    }
    int no_key = 0, no_line = 0, no_cand = 0, out = 0;
    printf("key\tprecision\tn_algos\ttop1\ttop2\ttop3\ts1\ts2\ts3\tmargin\tp1\n");
    for (int i = 0; i < n_list; i++) {
        const char *key = list[i].key;
        collect_conv cv;
        int li = collect_file_find(&fdb, key);
        if (collect_conv_from_key(key, strlen(key), &cv) || RT_FN(select_key)(key, scores) < 0) {
            no_key++;
            continue;
        }
        if (li < 0) {
            no_line++;
            continue;
        }
        int cls = list[i].precision >= 0 ? list[i].precision : DATA_PRECISION_TF32;
        collect_result res[MAX_RES];
        int n_res = 0;
        if (collect_fdb_candidates(&fdb.lines[li], cv.dir, cv.dtype, cls, res, MAX_RES, &n_res)) {
            fprintf(stderr, "conv_margins: %s\n", collect_last_error());
            goto done;
        }
        /* each candidate's score: the runtime's for that kernel when it is of the direction and the class allows
         * it (verify's model_vocab.allowed), else none */
        float s[MAX_RES];
        int group[MAX_RES], order[MAX_RES], sl[MAX_RES + 1];
        for (int k = 0; k < nk; k++)
            allowed[k] = kdir[k] == cv.dir && collect_kernel_allowed(cls, cv.dtype, cv.dir, kalgo[k], kmath[k]);
        collect_candidate_scores(res, n_res, kalgo, kmath, allowed, scores, nk, s);
        for (int r = 0; r < n_res; r++) group[r] = res[r].algo;
        int n_order = collect_rank_scores(s, n_res, order);
        if (n_order == 0) {
            no_cand++;
            continue;
        }
        int n_sl = collect_shortlist(order, n_order, group, MAX_RES, -1, sl);
        /* the softmax over the candidate kernels, summed over the pick's algorithm: its math-type variants score
         * alike, so a single kernel's probability would halve where two variants tie */
        double z = 0, z_pick = 0;
        for (int j = 0; j < n_order; j++) {
            double e = exp((double)s[order[j]] - (double)s[order[0]]);
            z += e;
            if (group[order[j]] == group[order[0]]) z_pick += e;
        }
        char names[3][64];
        for (int j = 0; j < 3; j++) {
            if (j < n_sl) collect_kernel_name(cv.dir, res[sl[j]].algo, res[sl[j]].math, names[j], sizeof names[j]);
            else snprintf(names[j], sizeof names[j], "-");
        }
        const char *cls_name = cv.dtype == COLLECT_DTYPE_FP32 ? data_portable_precision_name(cls) : "-";
        printf("%s\t%s\t%d\t%s\t%s\t%s", key, cls_name, n_sl, names[0], names[1], names[2]);
        for (int j = 0; j < 3; j++) printf("\t%.6g", j < n_sl ? (double)s[sl[j]] : -INFINITY);
        printf("\t%.6g\t%.6g\n", n_sl > 1 ? (double)(s[sl[0]] - s[sl[1]]) : INFINITY, z_pick / z);
        out++;
    }
    fprintf(stderr, "conv_margins: %d problems written; skipped: %d keys the runtime or the collector does not parse, "
                    "%d not in the find-db, %d without a candidate the runtime scores\n",
            out, no_key, no_line, no_cand);
    rc = 0;
done:
    collect_problems_free(list, n_list);
    collect_file_free(&fdb);
    free(scores);
    free(kdir);
    free(kalgo);
    free(kmath);
    free(allowed);
    return rc;
}
