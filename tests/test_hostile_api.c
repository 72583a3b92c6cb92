/* Hostile calls to the C API (include/heurist.h): a NULL model (what a failed heurist_model_load leaves), NULL
 * arguments and paths that are no model, through libheurist as its users link it. Every function answers with a
 * status or 0/NULL and a message; none dereferences what it was not given. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heurist.h"
#include "helpers/h5_nan.h"
#include "helpers/testutil.h"

#define KEY "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F"

static void says(const char *needle)
{
    cr_assert(strstr(heurist_last_error(), needle), "'%s' lacks '%s'", heurist_last_error(), needle);
}

/* The accessors of a NULL handle (each crashed): 0 or NULL with a message naming the call. */
Test(hostile_api, accessors_of_a_null_model_answer_zero_or_null)
{
    cr_assert_eq(heurist_model_task(NULL), HEURIST_TASK_NONE);
    says("heurist_model_task: model is NULL");
    cr_assert_eq(heurist_model_kernel_count(NULL), 0);
    says("heurist_model_kernel_count: model is NULL");
    cr_assert_null(heurist_model_kernel_name(NULL, 0));
    says("heurist_model_kernel_name: model is NULL");
    cr_assert_eq(heurist_model_param_count(NULL), 0);
    says("heurist_model_param_count: model is NULL");
    cr_assert_null(heurist_model_param_name(NULL, 0));
    says("heurist_model_param_name: model is NULL");
    heurist_model_free(NULL);
}

/* The status calls on a NULL handle and NULL arguments. */
Test(hostile_api, calls_with_null_arguments_return_einval)
{
    int k[4], n = -1, best[2];
    float p[4];
    int32_t v[8];
    const char *keys[2] = {KEY, KEY};
    cr_assert_eq(heurist_rank(NULL, KEY, 4, k, p, &n), HEURIST_EINVAL);
    cr_assert_eq(heurist_rank_batch(NULL, keys, 2, 1, best), HEURIST_EINVAL);
    cr_assert_eq(heurist_tune(NULL, KEY, v), HEURIST_EINVAL);
    cr_assert_eq(heurist_tune_batch(NULL, keys, 2, 1, v), HEURIST_EINVAL);
    says("model is NULL");
    cr_assert_eq(heurist_model_load(NULL, NULL), HEURIST_EINVAL);
    heurist_model *m = (heurist_model *)1;
    cr_assert_eq(heurist_model_load(NULL, &m), HEURIST_EINVAL);
    cr_assert_null(m, "a refused load leaves *out NULL");
    cr_assert_neq(heurist_api_version(), 0);
}

/* Paths that are no model: a missing file, a folder, a text file; *out stays NULL and the accessors then hold. */
Test(hostile_api, loads_of_what_is_no_model_leave_null)
{
    char *dir = test_tmppath("");
    cr_assert_eq(mkdir(dir, 0755), 0);
    char *text = test_tmpfile("notmodel.h5", "not a model\n", 12);
    const char *paths[3] = {"/nonexistent/model.h5", dir, text};
    const char *why[3] = {"/nonexistent/model.h5", "is a folder", text};
    for (int i = 0; i < 3; i++) {
        heurist_model *m = (heurist_model *)1;
        cr_assert_lt(heurist_model_load(paths[i], &m), 0, "%s loaded", paths[i]);
        cr_assert_null(m);
        says(why[i]);
        cr_assert_eq(heurist_model_task(m), HEURIST_TASK_NONE);
        cr_assert_eq(heurist_model_kernel_count(m), 0);
    }
    rmdir(dir);
    unlink(text);
    free(dir);
    free(text);
}

/* A loaded model with NULL or impossible arguments: keys, outputs, counts, and a task it does not do. */
Test(hostile_api, a_model_refuses_null_and_impossible_arguments, .timeout = 120)
{
    char *data = test_fdb_synthetic_write(200, 0), *mpath = test_tmppath(".h5"), *out, args[2048];
    snprintf(args, sizeof args, "train --data %s --task select --model frequent --valid-fraction 0 --out %s --quiet", data,
             mpath);
    cr_assert_eq(test_run_heurist(args, 1, &out), 0, "%s", out);
    free(out);
    heurist_model *m;
    cr_assert_eq(heurist_model_load(mpath, &m), HEURIST_OK, "%s", heurist_last_error());
    int k[4], n, best[3];
    float p[4];
    int32_t v[8];
    cr_assert_eq(heurist_rank(m, NULL, 4, k, p, &n), HEURIST_EINVAL);
    says("problem key is NULL");
    cr_assert_eq(heurist_rank(m, KEY, 4, NULL, p, &n), HEURIST_EINVAL);
    cr_assert_eq(heurist_rank(m, KEY, -1, k, p, &n), HEURIST_EINVAL);
    cr_assert_eq(heurist_rank(m, KEY, 0, NULL, NULL, NULL), HEURIST_OK, "%s", heurist_last_error());
    cr_assert_eq(heurist_rank_batch(m, NULL, 3, 1, best), HEURIST_EINVAL);
    const char *keys[3] = {KEY, NULL, "garbage"};
    cr_assert_eq(heurist_rank_batch(m, keys, 3, 2, NULL), HEURIST_EINVAL);
    cr_assert_eq(heurist_rank_batch(m, keys, 3, 2, best), HEURIST_EINVAL);
    cr_assert_geq(best[0], 0);
    cr_assert_eq(best[1], -1);
    cr_assert_eq(best[2], -1);
    cr_assert_eq(heurist_rank_batch(m, keys, -1, 1, best), HEURIST_EINVAL);
    cr_assert_eq(heurist_tune(m, KEY, v), HEURIST_ESTATE);
    cr_assert_eq(heurist_tune_batch(m, keys, 1, 1, v), HEURIST_ESTATE);
    cr_assert_null(heurist_model_kernel_name(m, -1));
    cr_assert_null(heurist_model_param_name(m, 0));
    heurist_model_free(m);
    unlink(mpath);
    unlink(data);
    free(mpath);
    free(data);
}

/* A model whose scores are all NaN (its numbers edited to NaN, as a diverged run leaves them): heurist_rank
 * answered HEURIST_OK with no kernel ranked, where `heurist predict` fails. Both answer HEURIST_ESTATE with a
 * message, one problem or a batch, and the batch marks every problem -1. */
Test(hostile_api, a_model_with_no_finite_score_is_an_error, .timeout = 120)
{
    char *data = test_fdb_synthetic_write(200, 0), *mpath = test_tmppath(".h5"), *out, args[2048];
    snprintf(args, sizeof args, "train --data %s --task select --model frequent --valid-fraction 0 --out %s --quiet", data,
             mpath);
    cr_assert_eq(test_run_heurist(args, 1, &out), 0, "%s", out);
    free(out);
    cr_assert_gt(test_h5_fill_nan(mpath, "family", NULL), 0, "%s", heurist_last_error());
    heurist_model *m;
    cr_assert_eq(heurist_model_load(mpath, &m), HEURIST_OK, "%s", heurist_last_error());
    int k[4] = {-1, -1, -1, -1}, n = -1, best[2] = {7, 7};
    float p[4];
    cr_assert_eq(heurist_rank(m, KEY, 4, k, p, &n), HEURIST_ESTATE);
    says("heurist_rank: '" KEY "': no kernel gets a finite score");
    cr_assert_eq(n, -1, "*n_ranked is left as it was");
    cr_assert_eq(k[0], -1, "no kernel is written");
    const char *keys[2] = {KEY, KEY};
    cr_assert_eq(heurist_rank_batch(m, keys, 2, 2, best), HEURIST_ESTATE);
    says("heurist_rank_batch: problem 0: no kernel gets a finite score");
    cr_assert_eq(best[0], -1);
    cr_assert_eq(best[1], -1);
    heurist_model_free(m);
    unlink(mpath);
    unlink(data);
    free(mpath);
    free(data);
}

/* A temporary path names nothing yet: a name left behind by an earlier process with this process id (the next name
 * the counter would give) is passed over, so that a test that creates its path (mkdir above) does not fail on it. */
Test(hostile_api, temporary_paths_pass_over_names_left_behind)
{
    char *first = test_tmppath(".stale");
    const char *tail = strrchr(first, '_');
    cr_assert_not_null(tail);
    char left[600];
    snprintf(left, sizeof left, "%.*s_%d.stale", (int)(tail - first), first, atoi(tail + 1) + 1);
    cr_assert_eq(mkdir(left, 0755), 0, "%s", left);
    char *next = test_tmppath(".stale");
    cr_assert_str_neq(next, left);
    cr_assert_neq(access(next, F_OK), 0, "%s exists", next);
    rmdir(left);
    free(first);
    free(next);
}

/* What a test makes at its temporary paths goes when its process exits (a folder with a file in it here), and a
 * forked child's exit leaves the paths of its parent. */
Test(hostile_api, temporary_paths_are_removed_when_their_process_exits)
{
    char *kept = test_tmppath(".d");
    cr_assert_eq(mkdir(kept, 0755), 0, "%s", kept);
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        close(fd[0]);
        char *dir = test_tmppath(".d"), inner[600];
        snprintf(inner, sizeof inner, "%s/f.txt", dir);
        FILE *f = mkdir(dir, 0755) == 0 ? fopen(inner, "w") : NULL;
        int ok = f && fclose(f) == 0 && write(fd[1], dir, strlen(dir) + 1) == (ssize_t)strlen(dir) + 1;
        free(dir);
        exit(ok ? 0 : 1);
    }
    close(fd[1]);
    char made[600] = "";
    ssize_t got = read(fd[0], made, sizeof made - 1);
    close(fd[0]);
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child could not make its folder");
    cr_assert_gt(got, 0);
    cr_assert_neq(access(made, F_OK), 0, "%s was left behind", made);
    cr_assert_eq(access(kept, F_OK), 0, "a forked child's exit removed its parent's %s", kept);
    free(kept);
}
