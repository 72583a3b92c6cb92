"""What the table scripts (concat_tables.py, split_table.py) share about a table heurist-collect gemm wrote: gzip or
plain CSV, a header beginning with the shape's six columns (M, N, K, dtype, trans_a, trans_b) and the batch column
(absent from tables without it: every shape a single GEMM), and the schema and capability file beside it
(t.csv.gz -> t.schema.json, t.caps.json).
Python 3 standard library only."""
import gzip
import os
import shutil
import sys

SHAPE_FIELDS = 6
HEADER_START = 'M,N,K,dtype,trans_a,trans_b,'
BATCHED_START = HEADER_START + 'batch,'
SIDECARS = ('.schema.json', '.caps.json')
# a configuration's columns, in the table's order (collect_gemm_kernel_columns)
KERNEL = ('algo_id', 'tile_m', 'tile_n', 'stage_k', 'stages', 'split_k', 'reduction_scheme', 'swizzle',
          'custom_option', 'cluster_m', 'cluster_n', 'inner_shape')


def open_table(table):
    """The table open for reading text, gzip by its .gz ending."""
    return (gzip.open if table.endswith('.gz') else open)(table, 'rt')


def check_header(table, header):
    """Exits naming the table when its header line is not one heurist-collect gemm writes."""
    if not header.startswith(HEADER_START):
        sys.exit('%s:1: not a table heurist-collect gemm wrote' % table)


def shape_key(line, header):
    """A row's shape as collect/gemm.h's collect_gemm_shape_key spells it: its first SHAPE_FIELDS fields, then
    the batch when the header has the column and the row's batch is not 1."""
    if not header.startswith(BATCHED_START):
        return ','.join(line.split(',', SHAPE_FIELDS)[:SHAPE_FIELDS])
    f = line.split(',', SHAPE_FIELDS + 1)[:SHAPE_FIELDS + 1]
    return ','.join(f if f[-1] != '1' else f[:-1])


def shape_classes(path):
    """{(M, N, K, dtype, trans_a, trans_b, batch): class} of a shape list (gemm_real_shapes.py's), by its tags:
    fp8 (dtype fp8e4m3), attention (an `.attn_` layer), moe_batched (`.experts_batched.`), other."""
    out = {}
    with open(path) as f:
        for line in f:
            body, _, tag = line.partition('#')
            v = body.split()
            if not v:
                continue
            out[tuple(v[:6]) + (v[6] if len(v) > 6 else '1',)] = (
                'fp8' if v[3] == 'fp8e4m3' else 'attention' if '.attn_' in tag
                else 'moe_batched' if '.experts_batched.' in tag else 'other')
    return out


def sidecar(table, suffix):
    """The file beside the table with suffix in place of its .csv(.gz) ending."""
    base = table[:-3] if table.endswith('.gz') else table
    base = base[:-4] if base.endswith('.csv') else base
    return base + suffix


def copy_sidecars(src, dst):
    """Copies src's schema and capability file, those that exist, beside the table dst."""
    for suffix in SIDECARS:
        if os.path.exists(sidecar(src, suffix)):
            shutil.copyfile(sidecar(src, suffix), sidecar(dst, suffix))
