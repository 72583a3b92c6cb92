/* seq2seq family internals shared by models/seq2seq.c (layout, files), models/seq2seq_options.c,
 * models/seq2seq_train.c (training, the family's table) and models/seq2seq_decode.c (single-problem inference:
 * greedy, beam and constrained beam search).
 *
 * Encoder: the problem as S tokens, one per field of its codec (data_codec_token_value: a convolution's
 * S2S_N_FIELDS descriptor fields; a benchmark table's problem and hardware columns, a numeric column's value v
 * read as the bin round(b * log2(1 + |v|)) (b bins an octave, signed like v) so that unseen sizes fall among seen
 * ones, a categorical column's category), each from its field's vocabulary (token 0 = UNK, token i + 1 = the
 * i-th distinct training value); one embedding table with per-field offsets; Conv1D (kernel 3, pad 1, ReLU) layers; LSTM or BiLSTM layers -> keys
 * (S, Dk). Decoder: nn_decoder over the keys; input vocabulary BOS (id 0) then every output token
 * (id 1 + vb_j + v); output position j owns logits rows [vb_j, ve_j) = its value vocabulary.
 */
#ifndef HEURIST_MODELS_SEQ2SEQ_INTERNAL_H
#define HEURIST_MODELS_SEQ2SEQ_INTERNAL_H

#include <stdint.h>

#include "models/model.h"
#include "nn/nn.h"
#include "train/train.h"

#define SEQ2SEQ_VERSION 1
#define S2S_MAX_CONV 4
#define S2S_MAX_LSTM 4
#define S2S_MAX_BEAM 32
#define S2S_N_FIELDS 19 /* a convolution's tokens: 16 numeric descriptor fields + direction, dtype, layout */
#define S2S_MAX_FIELDS 64 /* a table problem's tokens: one per problem and hardware column (DATA_TABLE_MAX_COLUMNS) */

typedef enum s2s_decode_kind {
    S2S_DECODE_GREEDY = 0,
    S2S_DECODE_BEAM = 1,        /* beam search, no rules */
    S2S_DECODE_CONSTRAINED = 2, /* beam search skipping extensions the solver's rules reject */
} s2s_decode_kind;

typedef struct s2s_arch {
    int embed;          /* E: encoder token embedding width (also the decoder's input embedding) */
    int conv_layers;    /* 0 = no Conv1D (ablation) */
    int conv_channels;
    int lstm_layers;
    int bidir;          /* 1: BiLSTM encoder; 0: forward LSTM (ablation) */
    int hidden;         /* H: encoder LSTM width per direction and decoder width */
    int attn;           /* A: additive attention width */
    s2s_decode_kind decode;
    int beam;           /* k */
    int space;          /* constrained decoding on valued configurations: S2S_SPACE_CAPS or S2S_SPACE_MEASURED */
    int bins;           /* b: bins an octave of a table's numeric columns (data_codec_token_value) */
} s2s_arch;

/* The family's options (models/seq2seq_train.c's config table fills it); a model file records the architecture
 * (S2S_FILE_MODEL) and on a table the decoding space and the bins (S2S_FILE_TABLE). */
typedef struct s2s_cfg {
    train_opts train;
    s2s_arch a;
} s2s_cfg;
enum { S2S_FILE_MODEL = 1, S2S_FILE_TABLE = 2 };

/* What constrained decoding on a table keeps to: the capability rules, or the configurations measured for the
 * problem (its candidate set, what a deployed tuner enumerates and checks on the GPU before deciding; without
 * one, as for a problem given on the command line, the rules). */
enum { S2S_SPACE_CAPS = 0, S2S_SPACE_MEASURED = 1 };
extern const char *const s2s_space_names[];

/* Beam-search scratch for up to k hypotheses of L positions (no allocation while decoding). */
typedef struct s2s_beam_ws {
    int k, L, vmax;
    float *score;       /* (k) log-probability of each live hypothesis */
    float *cand_score;  /* (k) best extensions so far, descending */
    int *cand_beam, *cand_tok; /* (k) */
    int32_t *vals, *vals_new;  /* (k, L) parameter values of each hypothesis */
    int *parent, *prev; /* (k) row each new hypothesis continues; its last token (index in vocab_j) */
    float *logp;        /* (k, vmax) step log-probabilities */
} s2s_beam_ws;

/* One decoding step for the beam: j = position, rows = k; parent (k) the rows the new hypotheses
 * continue (NULL at j = 0), prev (k) their last tokens (index into position j-1's vocabulary) ->
 * logp (k, vsize[j]) log-probabilities of position j's values. */
typedef void (*s2s_step_fn)(void *ctx, int j, int rows, const int *parent, const int *prev, float *logp);

int s2s_beam_ws_init(s2s_beam_ws *bw, int k, int L, int vmax);
void s2s_beam_ws_free(s2s_beam_ws *bw);
/* Beam search of width k over L positions of vsize[j] values (vocab[j] maps a token to its value).
 * With con, an extension is kept only if data_constraint_check(con, q, prefix + value, j + 1) holds (q: the
 * problem's values, and its candidate sequences when known); if at some position no live hypothesis has a valid
 * extension, that position and the rest are decoded without the rules and *fallback is set. out (L) = values of
 * the highest-scoring hypothesis. */
void s2s_beam_search(s2s_beam_ws *bw, int k, int L, const int *vsize, const int32_t *const *vocab,
                     const data_constraint *con, const data_tune_problem *q, s2s_step_fn step, void *ctx,
                     int32_t *out, int *fallback);

typedef struct s2s_infer s2s_infer;

typedef struct seq2seq {
    model base;
    s2s_arch a;
    /* encoder vocabularies: field f has n_vals[f] distinct values vals[f] (sorted); token 0 = UNK */
    int n_fields;              /* S: the codec's encoder fields (data_codec_token_count) */
    int n_vals[S2S_MAX_FIELDS];
    int64_t *vals[S2S_MAX_FIELDS];
    int emb_off[S2S_MAX_FIELDS]; /* first embedding row of field f */
    int n_emb;                 /* rows of the encoder embedding: sum (n_vals[f] + 1) */
    int *vb, *ve;              /* (length) output-vocabulary slice of each position */
    int n_out, key;            /* decoder output vocabulary, key width Dk */
    nn_params p;
    nn_embedding emb;          /* "enc.embedding" (n_emb, E) */
    nn_conv1d conv[S2S_MAX_CONV];  /* "enc.conv<l>" */
    nn_bilstm bi[S2S_MAX_LSTM];    /* "enc.lstm<l>" (bidir) */
    nn_lstm uni[S2S_MAX_LSTM];     /* "enc.lstm<l>" (forward only) */
    nn_decoder dec;            /* "dec" */
} seq2seq;

/* A convolution's encoder fields, names and raw values (numeric field, or the categorical's enum value), as
 * export/seq2seq.c writes them into runtimes. */
extern const char *const s2s_field_names[S2S_N_FIELDS];
int64_t s2s_field_value(const data_problem *p, int f);
/* Raw value of field f of a problem's values pv through the model's codec (a value, a bin, a category's index). */
int64_t s2s_token_value(const seq2seq *m, const double *pv, int f);
/* ids (S) = embedding rows of q's tokens. */
void s2s_encode_ids(const seq2seq *m, const data_tune_problem *q, int *ids);
/* Widest encoder activation per token (embedding, conv or LSTM output). */
int s2s_enc_width(const seq2seq *m);
/* Decoding names by s2s_decode_kind, NULL-terminated. */
extern const char *const s2s_decode_names[];
/* Lays out every tensor from the architecture and vocabularies, allocates the parameters. */
int s2s_build(seq2seq *m);
void s2s_free(model *m);
/* models/seq2seq_view.c: the family's views (model_family.views, models/view.h). */
struct model_views;
int s2s_views(const model *mb, struct model_views *v);
long s2s_n_params(const model *mb);
int s2s_save(const model *mb, hid_t g);
int s2s_load(hid_t g, model *base, model **out);
/* models/seq2seq_options.c: the option rows (architecture, decoding, then the training loop's). */
size_t s2s_config_options(hr_config_option *rows);

/* Inference workspace for m (after its weights are final; it holds the decoder's transposed copies of
 * them): one per thread, the family's model_ws scratch. NULL is fine for free. */
int s2s_infer_create(const seq2seq *m, s2s_infer **out);
void s2s_infer_free(s2s_infer *w);
/* Decodes q (its values, and with q->cand the sequences it may take: constrained decoding keeps to them) with
 * `kind` and beam width k (1 <= k <= S2S_MAX_BEAM; ignored for greedy) in w; *fallback (may be NULL) is set when
 * constrained decoding had to drop the rules. Allocates nothing. */
int s2s_decode(const seq2seq *m, s2s_infer *w, const data_tune_problem *q, s2s_decode_kind kind, int k,
               int32_t *values, int *fallback);
/* Number of constrained decodes in w so far that fell back to unconstrained output. */
long s2s_fallback_count(const s2s_infer *w);
/* The family's prediction (models/seq2seq_decode.c): a workspace per thread, and a problem decoded as the model
 * was configured to (its candidates only in the measured space). The family's table is models/seq2seq_train.c's. */
int s2s_ws_create(const model *mb, void **out);
void s2s_ws_free(void *ws);
int s2s_predict(const model *mb, void *ws, const data_tune_problem *q, const float *x, int32_t *values);
/* scores (n): the log-probability log p(seqs[i] | q) = sum_j log softmax(z_j)[seqs[i][j]] of each sequence by
 * teacher forcing, -INFINITY where a value is outside its position's vocabulary (model_tune_ops.score). */
int s2s_score(const model *mb, void *ws, const data_tune_problem *q, const float *x, const int32_t *const *seqs, int n,
              float *scores);

#endif
