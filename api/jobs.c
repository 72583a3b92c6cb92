/* Training, cross-validation, comparison and evaluation from a program (include/heurist.h): the command line's
 * commands themselves (cli/), run in this process with the options a caller's params name, so a job and its
 * command line are one path. The report the command writes goes to a temporary folder (or where the params' report
 * or out names) and comes back as text. */
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "cli/cli.h"

#define JOB_MAX_ARGS (2 * CLI_MAX_OPTS + 8)

/* A job's command line: argv over a copy of the params. */
typedef struct job_args {
    int argc;
    char *argv[JOB_MAX_ARGS];
    char *text;      /* the params, split in place */
    char *owned[JOB_MAX_ARGS]; /* "--name" strings */
    int n_owned;
} job_args;

static void job_args_free(job_args *j)
{
    for (int i = 0; i < j->n_owned; i++) free(j->owned[i]);
    free(j->text);
}

static int job_push(job_args *j, char *s)
{
    if (j->argc == JOB_MAX_ARGS) return hr_error(HEURIST_EINVAL, "too many options");
    j->argv[j->argc++] = s;
    return HEURIST_OK;
}

static int job_push_opt(job_args *j, const char *name, const char *value)
{
    size_t n = strlen(name) + 3;
    char *opt = malloc(n);
    if (!opt) return hr_error(HEURIST_ENOMEM, "out of memory");
    snprintf(opt, n, "--%s", name);
    j->owned[j->n_owned++] = opt;
    int rc = job_push(j, opt);
    return rc || !value ? rc : job_push(j, (char *)value);
}

static const cli_opt *spec_find(const cli_spec *spec, const char *name)
{
    for (const cli_opt *o = spec->opts; o->name; o++)
        if (strcmp(o->name, name) == 0) return o;
    return NULL;
}

/* A flag's value: 1, true, yes or empty set it; 0, false or no leave it out. */
static int flag_value(const char *v, int *set)
{
    static const char *const on[] = {"", "1", "true", "yes"}, *const off[] = {"0", "false", "no"};
    for (size_t i = 0; i < sizeof on / sizeof *on; i++)
        if (strcmp(v, on[i]) == 0) return *set = 1, HEURIST_OK;
    for (size_t i = 0; i < sizeof off / sizeof *off; i++)
        if (strcmp(v, off[i]) == 0) return *set = 0, HEURIST_OK;
    return HEURIST_EINVAL;
}

/* params "name=value ..." (spaces or newlines between pairs; a value in quotes, or a JSON object, may hold spaces)
 * into options of `spec`, after the job's own (fixed, from the API's arguments); a name the spec lacks, or one of
 * the job's own, is an error. */
static int job_parse(job_args *j, const cli_spec *spec, const char *cmd, const char *params, const char *const *own)
{
    if (!params) return HEURIST_OK;
    if (!(j->text = strdup(params))) return hr_error(HEURIST_ENOMEM, "out of memory");
    char *p = j->text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (!*p) return HEURIST_OK;
        char *name = p, *eq = strchr(p, '=');
        size_t blank = strcspn(p, " \t\r\n");
        if (!eq || (size_t)(eq - p) > blank)
            return hr_error(HEURIST_EINVAL, "heurist %s: params: '%.*s' is no name=value pair", cmd, (int)blank, p);
        *eq = '\0';
        char *value = eq + 1, *end;
        if (*value == '"' || *value == '\'') {
            char q = *value++;
            if (!(end = strchr(value, q))) return hr_error(HEURIST_EINVAL, "heurist %s: params: %s: unclosed quote", cmd, name);
        } else if (*value == '{') {
            int depth = 0;
            for (end = value; *end; end++)
                if (*end == '{') depth++;
                else if (*end == '}' && --depth == 0) break;
            if (!*end) return hr_error(HEURIST_EINVAL, "heurist %s: params: %s: unbalanced braces", cmd, name);
            end++;
        } else {
            end = value + strcspn(value, " \t\r\n");
        }
        p = *end ? end + 1 : end;
        *end = '\0';
        const cli_opt *o = spec_find(spec, name);
        if (!o) return hr_error(HEURIST_EINVAL, "heurist %s: unknown option '%s' (see heurist %s --help)", cmd, name, cmd);
        for (int i = 0; own[i]; i++)
            if (strcmp(own[i], name) == 0)
                return hr_error(HEURIST_EINVAL, "heurist %s: %s is the call's own argument, not a param", cmd, name);
        int set = 1, rc;
        if (!o->value && flag_value(value, &set))
            return hr_error(HEURIST_EINVAL, "heurist %s: %s is a flag: 1, true or yes (or 0, false, no), not '%s'", cmd, name,
                            value);
        if (set && (rc = job_push_opt(j, name, o->value ? value : NULL))) return rc;
    }
}

/* A fresh folder for the command's report, under $TMPDIR or /tmp. */
static char *job_dir(void)
{
    const char *t = getenv("TMPDIR");
    size_t n = strlen(t && *t ? t : "/tmp") + 32;
    char *d = malloc(n);
    if (!d) return NULL;
    snprintf(d, n, "%s/heurist-job-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(d)) {
        hr_error(HEURIST_EIO, "cannot create a folder under %s for the report", t && *t ? t : "/tmp");
        free(d);
        return NULL;
    }
    return d;
}

/* Removes the folder and the files the command wrote into it. */
static void job_dir_remove(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove(path);
    }
    if (d) closedir(d);
    rmdir(dir);
}

typedef int (*job_fn)(int argc, char **argv, const dist_comm *comm);

/* The commands with no result lines on stdout: the report comes back as text. */
static int train_fn(int argc, char **argv, const dist_comm *comm)
{
    return cli_job_train(argc, argv, comm, NULL);
}

static int cv_fn(int argc, char **argv, const dist_comm *comm)
{
    return cli_job_cv(argc, argv, comm, NULL);
}

static int compare_fn(int argc, char **argv, const dist_comm *comm)
{
    return cli_job_compare(argc, argv, comm, NULL);
}

/* Runs command `cmd` (fn, its table spec) with the fixed options first ("--name", value pairs, NULL-ended) then the
 * params; the report (the file at report_opt, or report.json in the folder at out_dir_opt) into *report_json. */
static int job_run(const char *cmd, job_fn fn, const cli_spec *spec, const char *const *fixed, const char *params,
                   const char *report_opt, const char *out_dir_opt, char **report_json)
{
    if (report_json) *report_json = NULL;
    const char *own[8];
    int n_own = 0;
    for (int i = 0; fixed[i]; i += 2) own[n_own++] = fixed[i];
    own[n_own] = NULL;
    job_args j = {0};
    int rc = HEURIST_OK;
    j.argv[j.argc++] = (char *)cmd;
    for (int i = 0; !rc && fixed[i]; i += 2)
        if (!fixed[i + 1]) rc = hr_error(HEURIST_EINVAL, "heurist_%s: the %s argument is required", cmd, fixed[i]);
        else rc = job_push_opt(&j, fixed[i], fixed[i + 1]);
    if (!rc) rc = job_parse(&j, spec, cmd, params, own);
    /* the report: where the params say, else in a folder of ours */
    const char *named = NULL;
    for (int i = 1; i + 1 < j.argc; i++)
        if (!strncmp(j.argv[i], "--", 2) && !strcmp(j.argv[i] + 2, report_opt ? report_opt : out_dir_opt))
            named = j.argv[i + 1];
    char *dir = rc || named ? NULL : job_dir(), *report = NULL;
    if (!rc && !named && !dir) rc = HEURIST_EIO;
    if (!rc) {
        const char *where = named ? named : dir;
        size_t n = strlen(where) + 16;
        if (!(report = malloc(n))) rc = hr_error(HEURIST_ENOMEM, "out of memory");
        else if (report_opt && named) snprintf(report, n, "%s", where);
        else rc = hr_path_join(report, n, where, "report.json"); /* the path compare writes (pipeline/compare.c) */
        if (!rc && !named) rc = job_push_opt(&j, report_opt ? report_opt : out_dir_opt, report_opt ? report : dir);
    }
    if (!rc) {
        hr_error_clear();
        /* the command's arguments start after its name, as main hands them over; no process group (NULL): this
         * process alone, never MPI */
        int status = fn(j.argc - 1, j.argv + 1, NULL);
        if (status) {
            rc = status == 2 ? HEURIST_EINVAL : HEURIST_EIO;
            if (!*hr_last_error()) hr_error(rc, "heurist %s failed (exit status %d; its message is on stderr)", cmd, status);
        } else if (report_json) {
            size_t len;
            rc = hr_file_read_all(report, report_json, &len);
        }
    }
    if (dir) job_dir_remove(dir);
    free(dir);
    free(report);
    job_args_free(&j);
    return rc;
}

int heurist_train(const char *data, const char *params, const char *model_out, char **report_json)
{
    const char *fixed[] = {"data", data, "out", model_out, NULL};
    return job_run("train", train_fn, &cli_train_spec, fixed, params, "report", NULL, report_json);
}

int heurist_cv(const char *data, const char *params, char **report_json)
{
    const char *fixed[] = {"data", data, NULL};
    return job_run("cv", cv_fn, &cli_cv_spec, fixed, params, "report", NULL, report_json);
}

int heurist_compare(const char *data, const char *params, char **report_json)
{
    const char *fixed[] = {"data", data, NULL};
    return job_run("compare", compare_fn, &cli_compare_spec, fixed, params, NULL, "out", report_json);
}

/* eval runs on one process: its command takes no process group */
static int eval_fn(int argc, char **argv, const dist_comm *comm)
{
    (void)comm;
    return cli_job_eval(argc, argv, NULL);
}

int heurist_eval(const char *model_path, const char *data, const char *params, char **report_json)
{
    const char *fixed[] = {"model", model_path, "data", data, NULL};
    return job_run("eval", eval_fn, &cli_eval_spec, fixed, params, "report", NULL, report_json);
}

void heurist_free(void *p)
{
    free(p);
}
