/* The seq2seq family's options (s2s_cfg, models/seq2seq_internal.h): one table that reads --config, writes and
 * reads the options a model file records (models/seq2seq.c), and prints the option reference. */
#include <stddef.h>
#include <string.h>

#include "models/seq2seq_internal.h"

const char *const s2s_decode_names[] = {"greedy", "beam", "constrained", NULL};
const char *const s2s_space_names[] = {"caps", "measured", NULL};

_Static_assert(sizeof(s2s_decode_kind) == sizeof(int), "decode is stored through an int");
static const char *const encoder_names[] = {"bilstm", "lstm", NULL};
static const int encoder_bidir[] = {1, 0};

/* The rows in the order a model file records them: S2S_FILE_MODEL, then on a table S2S_FILE_TABLE. */
#define A(field) offsetof(s2s_cfg, a.field)
static const hr_config_option s2s_options[] = {
    {.name = "embed", .type = HR_CONFIG_INT, .offset = A(embed), .def = 32, .min = 1, .max = 4096,
     .doc = "width of the token and value embeddings", .file = S2S_FILE_MODEL},
    {.name = "conv_layers", .type = HR_CONFIG_INT, .offset = A(conv_layers), .def = 1, .min = 0, .max = S2S_MAX_CONV,
     .doc = "Conv1D layers (kernel 3, ReLU) over the embedded tokens", .file = S2S_FILE_MODEL},
    {.name = "conv_channels", .type = HR_CONFIG_INT, .offset = A(conv_channels), .def = 64, .min = 1, .max = 4096,
     .doc = "channels of each Conv1D", .file = S2S_FILE_MODEL},
    {.name = "lstm_layers", .type = HR_CONFIG_INT, .offset = A(lstm_layers), .def = 1, .min = 1, .max = S2S_MAX_LSTM,
     .doc = "encoder LSTM layers", .file = S2S_FILE_MODEL},
    {.name = "encoder", .type = HR_CONFIG_ENUM, .offset = A(bidir), .def_name = "bilstm", .names = encoder_names,
     .values = encoder_bidir, .doc = "bidirectional or forward-only LSTM encoder", .file = S2S_FILE_MODEL},
    {.name = "hidden", .type = HR_CONFIG_INT, .offset = A(hidden), .def = 64, .min = 1, .max = 4096,
     .doc = "LSTM width (per direction) and decoder width", .file = S2S_FILE_MODEL},
    {.name = "attn", .type = HR_CONFIG_INT, .offset = A(attn), .def = 64, .min = 1, .max = 4096,
     .doc = "width of the Bahdanau attention", .file = S2S_FILE_MODEL},
    {.name = "decode", .type = HR_CONFIG_ENUM, .offset = A(decode), .def_name = "constrained",
     .names = s2s_decode_names, .doc = "greedy, beam search, or beam search within the solver's rules", .file = S2S_FILE_MODEL},
    {.name = "beam", .type = HR_CONFIG_INT, .offset = A(beam), .def = 4, .min = 1, .max = S2S_MAX_BEAM,
     .doc = "beam width", .file = S2S_FILE_MODEL},
    {.name = "space", .type = HR_CONFIG_ENUM, .offset = A(space), .def_name = "measured", .names = s2s_space_names,
     .doc = "on a table, what constrained decoding keeps to: caps (the capability rules) or measured (the problem's "
            "measured configurations, the rules where none are given)",
     .file = S2S_FILE_TABLE},
    {.name = "bins", .type = HR_CONFIG_INT, .offset = A(bins), .def = 2, .min = 1, .max = 1024,
     .doc = "on a table, encoder bins an octave of a numeric problem column", .file = S2S_FILE_TABLE},
};
#undef A

/* Defaults: E 32, one Conv1D of 64 channels, one BiLSTM of 64 per direction, decoder 64, attention 64,
 * 15 epochs of Adam 3e-3 with warm-up and cosine decay, batch 64, constrained beam of width 4. */
size_t s2s_config_options(hr_config_option *rows)
{
    train_opts loop = train_opts_defaults();
    loop.epochs = 15;
    loop.batch_size = 64;
    loop.lr = 3e-3f;
    loop.lr_min = 1e-5f;
    loop.clip = 5.0f;
    loop.patience = 0;
    loop.monitor = TRAIN_MONITOR_METRIC;
    size_t n = sizeof s2s_options / sizeof *s2s_options;
    memcpy(rows, s2s_options, sizeof s2s_options);
    return n + train_config_options(&loop, offsetof(s2s_cfg, train), rows + n);
}
