/* parts: what each worker of a collection writes (run.h), and the merge into one output file.
 *
 * Worker w writes OUT.part<w> (and SIDE.part<w>, OUT.failed.part<w>) in the format of OUT: find-db or sidecar
 * lines for conv, gzip members for gemm (the header member, then one member per shape). A part keeps only what
 * is finished: a text line ending in a newline, a gzip member that ends; a worker that resumes its part cuts off
 * an unfinished end. The merge reads the existing output and every part, keeps the first line (member) of each
 * key, writes them in the key list's order (keys the list lacks after them, in the order read) to a temporary
 * file renamed into place, and then removes the parts: the merged file of N workers is the file one worker
 * writes. Functions return 0 or a negative COLLECT_E* code with collect_last_error() set.
 */
#ifndef HEURIST_COLLECT_PARTS_H
#define HEURIST_COLLECT_PARTS_H

#include <stddef.h>
#include <stdio.h>

/* "<base>.part<worker>". 0, or COLLECT_EINVAL when buf is too small. */
int collect_part_path(const char *base, int worker, char *buf, size_t size);
/* The existing parts of base (base.partN for any number N), in the order of N; *paths malloc'd. */
int collect_parts_list(const char *base, char ***paths, int *n);
void collect_parts_free(char **paths, int n);
/* Removes base's parts. */
int collect_parts_remove(const char *base);

/* A temporary file beside path ("<path>.tmp.<pid>", its name into tmp: size bytes), written and then renamed into
 * place by collect_tmp_commit, which closes it (and removes it on a failed write); NULL or the code, the error
 * set. */
FILE *collect_tmp_open(const char *path, char *tmp, size_t size);
int collect_tmp_commit(FILE *f, const char *tmp, const char *path);

/* Drops the later copies of repeated keys (each key is measured once, at its first place) and frees them;
 * kept (room for *n, may be NULL) receives the original positions of the keys kept. */
int collect_keys_unique(char **keys, int *n, int *kept);

/* ---- text lines "key=..." (or "key"), conv's find-db, sidecars and failed lists ---- */
typedef struct collect_line_ref {
    const char *key, *line; /* into a source's text: key without its separator, line with its newline */
    size_t key_len, len;
    int order;              /* the order read */
    int src;                /* the source it was read from */
} collect_line_ref;

typedef struct collect_lines {
    /* set before the first add (zeros: "key=..." lines, one a key) */
    char sep;               /* what ends a key: '=' (0) or '\t' for a table of several lines a key */
    const char *header;     /* a first line (with its newline) the sources may hold and the merge writes */
    int group;              /* a key's lines are all the lines of the first source that has it */
    char **texts;           /* (n_texts) the sources' contents */
    int n_texts;
    collect_line_ref *refs; /* (n), sorted by key then order after collect_lines_index */
    int n, cap;
    int indexed;
} collect_lines;

/* Adds the finished lines of a file (a missing file adds none). */
int collect_lines_add_file(collect_lines *l, const char *path);
/* Sorts the lines by key (after the last add, before a lookup or a merge). */
void collect_lines_index(collect_lines *l);
/* 1 when a line has this key. */
int collect_lines_has(const collect_lines *l, const char *key);
void collect_lines_free(collect_lines *l);
/* Cuts a text file back to its last newline (a missing file is left missing). */
int collect_text_trim(const char *path);
/* Writes path (temporary file, rename): the header, then the first line of each key (every line of the first
 * source that has it when l->group) in the keys' order, then keys the list lacks in the order read; only keys
 * `only` has when only is not NULL. *written: keys written. */
int collect_lines_merge(const char *path, char *const *keys, int n_keys, const collect_lines *l,
                        const collect_lines *only, int *written);

/* ---- the GPU table, OUT.gpu.tsv: which worker and GPU measured each problem, and in how many seconds ---- */
/* "key\tworker\thost\tgpu\tbus\tseconds\n": the worker's index in the job, its host, its GPU's index among the
 * visible ones and PCI bus id, the problem's wall time in the worker (its measuring, not its writing). A
 * table of collect_lines (sep '\t', this header), merged as the other sidecars. */
extern const char collect_gpu_table_header[];
/* Writes "<key>\t<columns>\t<seconds>\n" (columns: "worker\thost\tgpu\tbus", collect_run_gpu_columns) and
 * flushes. 0, or COLLECT_EIO. */
int collect_gpu_table_write(FILE *f, const char *key, const char *columns, double seconds);

/* ---- gzip members, gemm's table ---- */
typedef struct collect_member_ref {
    char *key;              /* the first row's problem columns */
    int src;                /* which source's bytes */
    size_t off, len;
    int order;
} collect_member_ref;

typedef struct collect_members {
    unsigned char **data;   /* (n_data) the sources' bytes */
    size_t *size;
    int n_data;
    int header_src;         /* the source whose first member is the header (-1: none yet) */
    size_t header_len;
    collect_member_ref *refs;
    int n, cap;
    int indexed;
} collect_members;

/* Adds a table's finished members (a missing file adds none); *good_bytes (may be NULL) the length of the file
 * up to its last finished member, 0 when its first member is not a finished header. COLLECT_EFORMAT when a
 * finished first member is not the table's header row. */
int collect_members_add_file(collect_members *m, const char *path, long *good_bytes);
void collect_members_index(collect_members *m);
int collect_members_has(const collect_members *m, const char *key);
void collect_members_free(collect_members *m);
/* Writes the table path (temporary file, rename): the header member, then each key's first member, in the
 * order of collect_lines_merge. *written: members written after the header. */
int collect_members_merge(const char *path, char *const *keys, int n_keys, const collect_members *m, int *written);

#endif
