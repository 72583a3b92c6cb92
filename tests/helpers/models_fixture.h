/* Shared fixture of the model family tests: a small real subset of gfx90878's find-db with its features and a
 * train / valid / test split, a family trained on it, and checks every select family passes (learning,
 * bit-identical save/load, resume after a kill, single-problem vs batched paths, newer files refused). */
#ifndef HEURIST_TESTS_MODELS_FIXTURE_H
#define HEURIST_TESTS_MODELS_FIXTURE_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "models/model.h"

typedef struct fixture {
    data_select *sel;
    data_codec *codec; /* the find-db's */
    double *V; /* (n, nv) every problem's values */
    int nv;
    float *X;  /* (n, nf) */
    int nf;
    int *train, *valid, *test;
    int n_train, n_valid, n_test;
} fixture;

/* The first ~max_bytes of the decompressed find-db, cut at a line end, parsed and split 0.2 test (seed 7),
 * every tenth remaining row validation. */
fixture fixture_load(size_t max_bytes);
void fixture_free(fixture *f);

/* The family's train data on f's training and validation rows. */
model_train_data fixture_train_data(const fixture *f);
/* The values of row r. */
const double *fixture_values(const fixture *f, int r);

/* model_ctx.threads of train_family (1 unless a test sets it) */
extern int train_threads;
/* The family trained on f's training rows with config (JSON text); asserts success. */
model *train_family(const fixture *f, const char *family, const char *config, uint64_t seed,
                    const char *checkpoint, int resume, const hr_log *log);
/* scores (n, K) of rows through the single-problem path; the caller frees them */
float *scores_of(const model *m, const fixture *f, const int *rows, int n);
/* fraction of rows whose highest score is a measured fastest kernel */
double top1_of(const fixture *f, const float *scores, const int *rows, int n);
/* top-1 of always answering the kernel most often fastest on the training rows */
double baseline_top1(const fixture *f);

/* The training loss falls and the test top-1 beats the majority baseline by 0.1. */
void check_learns(const char *family, const char *config);
/* save -> load gives bit-identical scores, and the loaded model records its provenance. */
void check_round_trip(const char *family, const char *config);
/* A run killed after a checkpoint and resumed equals the uninterrupted run; another config is refused. */
void check_resume(const char *family, const char *config);
/* The single-problem path reproduces the recorded validation top-1 (and loss when check_loss). */
void check_single_vs_batched(const char *family, const char *config, int check_loss);
/* Two threads predicting from one const model at once, a workspace each, get one thread's scores. */
void check_threads_share(const char *family, const char *config);
/* A saved model whose family version attribute is raised is refused with HR_EVERSION. */
void check_newer_refused(const char *family, const char *config, const char *family_attr);

/* Editing a saved model file: an int attribute of group; a dataset of its "family" group read whole (*n its
 * rows; the caller frees it) or overwritten in place (its shape unchanged). */
void set_int_attr(const char *path, const char *group, const char *name, long long v);
void *family_read(const char *path, const char *name, hid_t type, size_t *n);
void family_write(const char *path, const char *name, hid_t type, const void *buf);

#endif
