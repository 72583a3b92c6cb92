/* The seq2seq tuner of a benchmark table as a runtime: the problem it decodes for (its values, and the candidate
 * configurations a deployed tuner enumerated and checked on the GPU), its encoder tokens, the rule the constrained
 * beam keeps to (a prefix of one of the candidates, as models/seq2seq_decode.c's measured space), and which
 * candidate a decoded configuration is.
 *
 * Copied by section into an exported table tune runtime (export/table.c) after export/runtime/seq2seq.h's net
 * and enc_index sections and before its beam section; export/seq2seq.c writes the sizes (HM_TOKENS, HM_LEN,
 * HM_BINS), the encoder's value tables hm_enc_voff, hm_enc_vals and hm_categorical (1 for a categorical problem
 * column), and the vocabularies hm_vocab. tests/test_cli_table_tune.c compiles the exported runtime and checks its
 * decodes against the library's.
 */
#include <math.h>
#include <stdint.h>

/* @section problem */
/* A table problem: its values pv (HM_TOKENS, the problem columns) and n candidate configurations kv (n, HM_LEN),
 * each value as the sequence holds it (a number, a category's index). */
typedef struct hm_tune_problem {
    const double *pv, *kv;
    int n;
} hm_tune_problem;

/* encoder token f: a numeric column's value v as the bin round(HM_BINS log2(1 + |v|)), signed like v, a categorical
 * one's category; then its token (export/runtime/seq2seq.h's hm_enc_index) */
static int hm_token(const hm_tune_problem *p, int f)
{
    double x = p->pv[f];
    int64_t v;
    if (hm_categorical[f]) {
        v = (int64_t)x;
    } else {
        double b = floor(HM_BINS * log2(1.0 + fabs(x)) + 0.5);
        if (!(b < 1e15)) b = 1e15;
        v = x < 0 ? -(int64_t)b : (int64_t)b;
    }
    return hm_enc_index(f, v);
}

/* The index of the candidate equal to v (HM_LEN), or -1 when none is */
static int hm_candidate_of(const hm_tune_problem *p, const int32_t *v)
{
    for (int i = 0; i < p->n; i++) {
        const double *c = p->kv + (size_t)i * HM_LEN;
        int j = 0;
        while (j < HM_LEN && c[j] == (double)v[j]) j++;
        if (j == HM_LEN) return i;
    }
    return -1;
}

/* v (HM_LEN) = the configuration values as a sequence holds them; 0 when one is no int32 (no sequence) */
static int hm_sequence_of(const double *values, int32_t *v)
{
    for (int j = 0; j < HM_LEN; j++) {
        if (!(values[j] >= INT32_MIN && values[j] <= INT32_MAX) || values[j] != (double)(int32_t)values[j]) return 0;
        v[j] = (int32_t)values[j];
    }
    return 1;
}

/* @section valid */
/* 1 when v[0..len) begins one of the candidates; with none, every sequence */
static int hm_valid(const hm_tune_problem *p, const int32_t *v, int len)
{
    if (p->n <= 0) return 1;
    for (int i = 0; i < p->n; i++) {
        const double *c = p->kv + (size_t)i * HM_LEN;
        int j = 0;
        while (j < len && c[j] == (double)v[j]) j++;
        if (j == len) return 1;
    }
    return 0;
}
