#!/usr/bin/env python3
"""Joins a shape list's tags into a benchmark table as a group column, by the problem columns. Each line of a
shape list (datasets/h100/gemm_shapes.txt, gemm_real_shapes.txt) is `M N K DTYPE TRANS_A TRANS_B [BATCH]  # TAG ...`
(BATCH 1 when left out, matched to the table's batch column; a table without one holds single GEMMs);
its tag, the comment's first word (a model family, a generator's shape class), becomes the value of the group
column of every table row of that problem. The table is written with the column last (its values replaced when
it is there already), gzip when its name ends in .gz (no timestamp, so the same input gives the same bytes), and
each schema given (by default the one beside the output table) gains "group": COLUMN, the role that makes every
heurist split hold out whole groups (docs/tables.md). --single drops the table's batch column (an error where a row's
batch is not 1) and `batch` from each schema's problem columns: a table of single GEMMs gets the header of the
pools collected before the collector wrote the column, so that collect/scripts/concat_tables.py joins them.

  python3 collect/scripts/table_groups.py --table datasets/h200/h200_cublaslt_gemm_real.csv.gz \\
      --shapes datasets/h100/gemm_real_shapes.txt --column family
  python3 collect/scripts/table_groups.py --table OUT/h200_cublaslt_gemm_more.csv.gz --single \\
      --shapes datasets/h200/gemm_more_shapes.txt --out datasets/h200/h200_cublaslt_gemm_more.csv.gz

The shape list's field names come from its comment line `# M N K DTYPE TRANS_A TRANS_B ...` (matched to the
table's columns without regard to case); a key listed twice keeps its first tag. A table problem the list lacks
is an error, or takes the tag of --missing. Python 3 standard library only."""
import argparse
import csv
import gzip
import io
import json
import os
import sys

DEFAULT_FIELDS = ['M', 'N', 'K', 'DTYPE', 'TRANS_A', 'TRANS_B']


def canonical(value):
    """A cell as a key part: numbers by value (128 and 128.0 are one), other text as it is."""
    try:
        v = float(value)
    except ValueError:
        return value
    return repr(int(v)) if v == int(v) else repr(v)


def read_shapes(path):
    """(field names, {key tuple: tag}) of a shape list; each key ends with the batch ('1' when the line has no
    BATCH field)."""
    fields, tags = None, {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            text = line.strip()
            if not text:
                continue
            if text.startswith('#'):
                words = text[1:].split('#')[0].split()
                if fields is None and words and all(w.replace('_', '').isalnum() for w in words) and \
                        [w.upper() for w in words[:3]] == ['M', 'N', 'K']:
                    fields = words
                continue
            if '#' not in text:
                sys.exit('%s:%d: no "# TAG" comment' % (path, lineno))
            body, comment = text.split('#', 1)
            values, tag = body.split(), comment.split()
            if not tag:
                sys.exit('%s:%d: an empty "#" comment names no tag' % (path, lineno))
            width = len(fields or DEFAULT_FIELDS)
            if len(values) not in (width, width + 1):
                sys.exit('%s:%d: %d fields, expected %d or %d (with BATCH)' % (path, lineno, len(values), width,
                                                                               width + 1))
            if len(values) == width:
                values.append('1')
            if not values[-1].isdigit() or int(values[-1]) < 1:
                sys.exit('%s:%d: BATCH %s: expected an integer >= 1' % (path, lineno, values[-1]))
            tags.setdefault(tuple(canonical(v) for v in values), tag[0])
    return fields or DEFAULT_FIELDS, tags


def read_text(path):
    if path.endswith('.gz'):
        return gzip.open(path, 'rt', newline='')
    return open(path, newline='')


def write_text(path, text):
    """text into path (gzip without a name or time when it ends in .gz), through a temporary file."""
    data = text.encode()
    if path.endswith('.gz'):
        data = gzip.compress(data, mtime=0)
    tmp = path + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(data)
    os.replace(tmp, path)


def schema_beside(table):
    base = table[:-3] if table.endswith('.gz') else table[:-4] if table.endswith('.bz2') else table
    for ext in ('.csv', '.tsv'):
        if base.endswith(ext):
            base = base[:-4]
    return base + '.schema.json'


def join(table, shapes, column, out, missing, single=False):
    """Writes the joined table to out (without its batch column when single); returns (rows, problems,
    {tag: problems})."""
    fields, tags = read_shapes(shapes)
    with read_text(table) as f:
        rows = list(csv.reader(f))
    if not rows:
        sys.exit('%s: empty table' % table)
    header = rows[0]
    lower = {h.lower(): i for i, h in enumerate(header)}
    cols = []
    for name in fields:
        if name.lower() not in lower:
            sys.exit('%s: no column %s (the shape list %s names it)' % (table, name, shapes))
        cols.append(lower[name.lower()])
    batch = lower.get('batch')
    at = header.index(column) if column in header else len(header)
    if at == len(header):
        header = header + [column]
    problems, counts, unknown = set(), {}, []
    body = []
    for lineno, row in enumerate(rows[1:], 2):
        if not row:
            continue
        if len(row) < len(cols) or max(cols) >= len(row) or (batch is not None and batch >= len(row)):
            sys.exit('%s:%d: %d fields' % (table, lineno, len(row)))
        key = tuple(canonical(row[c]) for c in cols) + (canonical(row[batch]) if batch is not None else '1',)
        if single and key[-1] != '1':
            sys.exit('%s:%d: batch %s: --single takes tables of single GEMMs (batch 1) only' % (table, lineno,
                                                                                              row[batch]))
        tag = tags.get(key, missing)
        if tag is None:
            unknown.append((lineno, key))
            continue
        if key not in problems:
            problems.add(key)
            counts[tag] = counts.get(tag, 0) + 1
        body.append(row[:at] + [tag] + row[at + 1:] if at < len(row) else row + [tag])
    if single and batch is not None:
        header = header[:batch] + header[batch + 1:]
        body = [row[:batch] + row[batch + 1:] for row in body]
    if unknown:
        sys.exit('%s:%d: problem %s is not in %s (%d rows without a tag; --missing TAG names them)'
                 % (table, unknown[0][0], ' '.join(unknown[0][1][:-1] if unknown[0][1][-1] == '1' else unknown[0][1]),
                    shapes, len(unknown)))
    text = io.StringIO()
    w = csv.writer(text, lineterminator='\n')
    w.writerow(header)
    w.writerows(body)
    write_text(out, text.getvalue())
    return len(body), len(problems), counts


def schema_add_group(path, column, single=False):
    with open(path) as f:
        schema = json.load(f)
    schema['group'] = column
    if single:
        schema['problem'] = [c for c in schema.get('problem', []) if c.lower() != 'batch']
    write_text(path, json.dumps(schema, indent=1) + '\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--table', required=True, help='a benchmark table (.csv, .csv.gz)')
    ap.add_argument('--shapes', required=True, help='a shape list whose comments tag each shape')
    ap.add_argument('--column', default='family', help='the group column (default family)')
    ap.add_argument('--out', help='the joined table (default: --table, rewritten)')
    ap.add_argument('--schema', action='append', help='a schema to give the group role (repeatable; default: the '
                    'one beside the output, copied there from beside --table when the output is elsewhere)')
    ap.add_argument('--missing', help='the tag of a problem the shape list lacks (default: an error)')
    ap.add_argument('--single', action='store_true',
                    help='drop the batch column (every row batch 1) and batch from the schemas\' problem columns')
    a = ap.parse_args()
    out = a.out or a.table
    rows, problems, counts = join(a.table, a.shapes, a.column, out, a.missing, a.single)
    schemas = a.schema
    if not schemas:
        src, dst = schema_beside(a.table), schema_beside(out)
        if not os.path.exists(src):
            sys.exit('%s: no schema beside the table (give --schema)' % src)
        if dst != src:
            with open(src) as f:
                write_text(dst, f.read())
        schemas = [dst]
    for s in schemas:
        schema_add_group(s, a.column, a.single)
    print('%s: %d rows, %d problems in %d groups (%s); group role in %s'
          % (out, rows, problems, len(counts), ', '.join('%s %d' % kv for kv in sorted(counts.items())),
             ', '.join(schemas)))


if __name__ == '__main__':
    main()
