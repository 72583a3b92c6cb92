/* Options, key lists and reason tallies for the heurist-collect subcommands. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "collect.h"

const char *cli_opt(int argc, char **argv, const char *name)
{
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return NULL;
}

int cli_flag(int argc, char **argv, const char *name)
{
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], name) == 0) return 1;
    return 0;
}

int cli_number(int argc, char **argv, const char *name, double def, double lo, double hi, double *out)
{
    const char *v = cli_opt(argc, argv, name);
    *out = def;
    if (!v) return 0;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno || !(x >= lo && x <= hi)) {
        fprintf(stderr, "heurist-collect %s: %s '%s': expected a number in [%g, %g]\n", argv[1], name, v, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

static int in_list(const char *s, const char *const *list)
{
    for (int i = 0; list && list[i]; i++)
        if (strcmp(s, list[i]) == 0) return 1;
    return 0;
}

int cli_check(int argc, char **argv, const char *const *known, const char *const *flags)
{
    for (int i = 2; i < argc; i++) {
        if (in_list(argv[i], flags)) continue;
        if (!in_list(argv[i], known) || i + 1 >= argc) {
            fprintf(stderr, "heurist-collect %s: unknown option or missing value: %s\n", argv[1], argv[i]);
            return -1;
        }
        i++;
    }
    return 0;
}

int cli_keys_read(const char *path, char ***keys, int *n)
{
    *keys = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) return collect_error(COLLECT_EIO, "%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int cap_keys = 0, rc = COLLECT_OK;
    while ((len = getline(&buf, &cap, f)) >= 0) {
        char *eq = strchr(buf, '=');
        if (eq) len = eq - buf;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ')) len--;
        buf[len] = '\0';
        if (len == 0 || buf[0] == '#') continue;
        if (*n == cap_keys) {
            int nc = cap_keys ? 2 * cap_keys : 1024;
            char **nk = realloc(*keys, (size_t)nc * sizeof *nk);
            if (!nk) {
                rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
                break;
            }
            *keys = nk;
            cap_keys = nc;
        }
        if (!((*keys)[*n] = strdup(buf))) {
            rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
            break;
        }
        (*n)++;
    }
    if (!rc && ferror(f)) rc = collect_error(COLLECT_EIO, "%s: read failed", path);
    free(buf);
    fclose(f);
    if (rc) {
        cli_keys_free(*keys, *n);
        *keys = NULL;
        *n = 0;
    }
    return rc;
}

void cli_keys_free(char **keys, int n)
{
    for (int i = 0; i < n; i++) free(keys[i]);
    free(keys);
}

void cli_tally_add(cli_tally *t, const char *why)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->why[i], why) == 0) {
            t->count[i]++;
            return;
        }
    if (t->n < 32) {
        t->why[t->n] = why;
        t->count[t->n++] = 1;
    }
}

void cli_tally_print(const cli_tally *t, FILE *f, const char *title)
{
    fprintf(f, "%s:%s\n", title, t->n ? "" : " none");
    for (int i = 0; i < t->n; i++) fprintf(f, "  %s: %ld\n", t->why[i], t->count[i]);
}

double cli_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int cli_written_over(const char *cmd, const char *const writes[][2], int nw, const char *const reads[][2], int nr)
{
    for (int w = 0; w < nw; w++)
        for (int r = 0; r < nr; r++)
            if (writes[w][1] && writes[w][1][0] && reads[r][1] && strcmp(writes[w][0], reads[r][0]) &&
                cli_same_file(writes[w][1], reads[r][1])) {
                fprintf(stderr, "%s: %s %s would be written over %s %s: write it elsewhere\n", cmd, writes[w][0],
                        writes[w][1], reads[r][0], reads[r][1]);
                return 1;
            }
    return 0;
}

int cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return strcmp(a, b) == 0;
}
