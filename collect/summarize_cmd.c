/* heurist-collect summarize: a verify report's summaries recomputed (verify.h): per model, the single pick's
 * and the shortlists' figures with 95% bootstrap intervals of the geometric-mean speed-ups, the worst ratio,
 * and per-slice rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "verify.h"

int cmd_summarize(int argc, char **argv)
{
    static const char *const known[] = {"--report", "--noise-ratio", "--by", "--bootstrap", "--seed", NULL};
    if (cli_check(argc, argv, known, NULL)) return 2;
    const char *path = cli_opt(argc, argv, "--report"), *by = cli_opt(argc, argv, "--by");
    double noise, resamples, seed;
    if (cli_number(argc, argv, "--noise-ratio", 1.0, 1.0, 1e3, &noise) ||
        cli_number(argc, argv, "--bootstrap", 2000, 0, 1e6, &resamples) ||
        cli_number(argc, argv, "--seed", 0, 0, 9007199254740992.0, &seed))
        return 2;
    if (!path) {
        fprintf(stderr, "heurist-collect summarize: --report is required\n");
        return 2;
    }
    collect_report r;
    if (collect_report_read(path, &r)) {
        fprintf(stderr, "heurist-collect summarize: %s\n", collect_last_error());
        return 1;
    }
    if (!by) by = r.kind == COLLECT_REPORT_CONV ? "source,precision,dir,dtype,dims,groups" : "source,dtype,trans";
    int rc = collect_report_summarize(stdout, &r, noise, (int)resamples, (uint64_t)seed, by);
    if (rc) fprintf(stderr, "heurist-collect summarize: %s\n", collect_last_error());
    collect_report_free(&r);
    return rc ? 1 : 0;
}
