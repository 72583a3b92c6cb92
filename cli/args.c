/* Option parsing shared by the commands. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cli_args_parse(int argc, char **argv, const char *const *spec, cli_args *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0) {
            fprintf(stderr, "heurist: unexpected argument '%s' (options are --name value)\n", arg);
            return 1;
        }
        const char *name = arg + 2;
        int known = 0, flag = 0;
        for (int s = 0; spec[s]; s++) {
            size_t n = strlen(spec[s]);
            int is_flag = spec[s][n - 1] == '!';
            if (is_flag) n--;
            if (strlen(name) == n && strncmp(name, spec[s], n) == 0) {
                known = 1;
                flag = is_flag;
                break;
            }
        }
        if (!known) {
            fprintf(stderr, "heurist: unknown option '%s'\n", arg);
            return 1;
        }
        if (out->n == CLI_MAX_OPTS) {
            fprintf(stderr, "heurist: too many options\n");
            return 1;
        }
        out->name[out->n] = name;
        if (!flag) {
            if (i + 1 >= argc) {
                fprintf(stderr, "heurist: option '%s' needs a value\n", arg);
                return 1;
            }
            out->value[out->n] = argv[++i];
        }
        out->n++;
    }
    return 0;
}

const char *cli_get(const cli_args *a, const char *name)
{
    const char *v = NULL;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->name[i], name) == 0) v = a->value[i] ? a->value[i] : "";
    return v;
}

int cli_has(const cli_args *a, const char *name)
{
    return cli_get(a, name) != NULL;
}

const char *cli_need(const cli_args *a, const char *cmd, const char *name)
{
    const char *v = cli_get(a, name);
    if (!v) fprintf(stderr, "heurist %s: --%s is required\n", cmd, name);
    return v;
}

int cli_get_int(const cli_args *a, const char *name, long long def, long long *out)
{
    const char *v = cli_get(a, name);
    *out = def;
    if (!v) return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || errno) {
        fprintf(stderr, "heurist: --%s '%s': expected an integer\n", name, v);
        return 1;
    }
    *out = x;
    return 0;
}

int cli_get_valid_fraction(const cli_args *a, double *out)
{
    const char *v = cli_get(a, "valid-fraction");
    *out = 0;
    if (!v) return 0;
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x >= 0 && x < 1)) {
        fprintf(stderr, "heurist: --valid-fraction '%s': expected a number in [0, 1)\n", v);
        return 1;
    }
    *out = x > 0 ? x : -1;
    return 0;
}

int cli_fail(const char *context)
{
    if (context) fprintf(stderr, "heurist %s: %s\n", context, hr_last_error());
    else fprintf(stderr, "heurist: %s\n", hr_last_error());
    return 1;
}
