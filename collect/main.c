/* heurist-collect: cuDNN convolution and cuBLASLt GEMM data for heurist (see collect.h, gemm.h). conv and gemm
 * measure with a GPU in a build with CUDA, cuDNN and cuBLASLt (HEURIST_COLLECT_CUDA), or anywhere with the fake
 * timer (timer.h); verify needs the GPU; noise and summarize work anywhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "collect.h"

static const char usage[] =
    "usage:\n"
    "  heurist-collect conv --problems KEYS --out FILE.fdb.txt [--heuristic SIDE.txt] [--time-limit SEC]\n"
    "                       [--repeats R] [--min-repeat-ms MS] [--workspace-mib MIB] [--resume]\n"
    "                       [--gpus all|N] [--chunk C]\n"
    "  heurist-collect verify --problems KEYS --out REPORT.tsv [--repeats R] [--rounds N] [--noise-ratio X]\n"
    "                       [--time-limit SEC] [--no-find]\n"
    "  heurist-collect verify --table HELDOUT.csv.gz --out REPORT.tsv [--rounds N] [--repeats R] [--noise-ratio X]\n"
    "                       [--time-limit SEC] [--limit N] [--heuristic-count N]   (built with a GEMM table model)\n"
    "  heurist-collect gemm --shapes FILE --out TABLE.csv.gz [--time-limit SEC] [--resume] [--limit N] [--verbose]\n"
    "                       [--candidates N] [--heuristic-count N] [--repeats R] [--min-batch-us US] [--max-batch B]\n"
    "                       [--workspace-mib MIB] [--slow-factor X] [--seed S] [--gpus all|N] [--chunk C]\n"
    "  heurist-collect gemm --describe   (GPU, driver, runtime and cuBLASLt versions)\n"
    "  mpirun -np N heurist-collect conv|gemm ...   (one worker per rank, each on the GPU of its local rank)\n"
    "  heurist-collect noise --a FIRST.fdb.txt --b SECOND.fdb.txt\n"
    "  heurist-collect summarize --report REPORT.tsv [--noise-ratio X]\n";

int cmd_noise(int argc, char **argv)
{
    static const char *const known[] = {"--a", "--b", NULL};
    if (cli_check(argc, argv, known, NULL)) return 2;
    const char *pa = cli_opt(argc, argv, "--a"), *pb = cli_opt(argc, argv, "--b");
    if (!pa || !pb) {
        fprintf(stderr, "heurist-collect noise: --a and --b are required\n");
        return 2;
    }
    collect_file a, b;
    if (collect_file_read(pa, &a)) goto fail;
    if (collect_file_read(pb, &b)) {
        collect_file_free(&a);
        goto fail;
    }
    collect_noise nz;
    int rc = collect_noise_compute(&a, &b, &nz);
    collect_file_free(&a);
    collect_file_free(&b);
    if (rc) goto fail;
    printf("problems in both: %d\nsame fastest kernel: %.4f\nbest-time ratio second/first: p10 %.4f, median %.4f, "
           "p90 %.4f\nnoise ratio (p90 of max(r, 1/r)): %.4f\n",
           nz.n, nz.agree, nz.ratio_p10, nz.ratio_p50, nz.ratio_p90, nz.noise_ratio);
    return 0;
fail:
    fprintf(stderr, "heurist-collect noise: %s\n", collect_last_error());
    return 1;
}

/* Reads the rows of a verify report (tab-separated, '#' lines skipped). */
static int report_read(const char *path, collect_verify_row **rows, int *n)
{
    *rows = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) return collect_error(COLLECT_EIO, "%s: cannot open", path);
    char line[4096];
    int cap = 0, lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n' || strncmp(line, "key\t", 4) == 0) continue;
        collect_verify_row r;
        double speedup, eff, heur_us;
        if (sscanf(line, "%*s %*s %*s %*s %lf %lf %lf %lf %lf %lf %lf %lf", &r.t_model, &r.t_heur, &r.t_best, &speedup,
                   &eff, &r.decide_us, &heur_us, &r.find_ms) != 8) {
            rc = collect_error(COLLECT_EFORMAT, "%s:%d: expected 12 tab-separated columns", path, lineno);
            break;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            collect_verify_row *nr = realloc(*rows, (size_t)cap * sizeof *nr);
            if (!nr) {
                rc = collect_error(COLLECT_ENOMEM, "%s: out of memory", path);
                break;
            }
            *rows = nr;
        }
        (*rows)[(*n)++] = r;
    }
    fclose(f);
    if (rc) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return rc;
}

int cmd_summarize(int argc, char **argv)
{
    static const char *const known[] = {"--report", "--noise-ratio", NULL};
    if (cli_check(argc, argv, known, NULL)) return 2;
    const char *path = cli_opt(argc, argv, "--report");
    double noise;
    if (cli_number(argc, argv, "--noise-ratio", 1.0, 1.0, 1e3, &noise)) return 2;
    if (!path) {
        fprintf(stderr, "heurist-collect summarize: --report is required\n");
        return 2;
    }
    collect_verify_row *rows;
    int n;
    collect_verify_summary s;
    if (report_read(path, &rows, &n) || collect_verify_summarize(rows, n, noise, &s)) {
        fprintf(stderr, "heurist-collect summarize: %s\n", collect_last_error());
        return 1;
    }
    free(rows);
    printf("problems: %d\nspeed-up over cuDNN's heuristic: geometric mean %.4f (p10 %.4f, median %.4f, p90 %.4f)\n"
           "efficiency against the fresh best: model %.4f, heuristic %.4f\n"
           "slower than the heuristic by more than x%.4f: %.4f; faster by more: %.4f\n"
           "decision time: model %.2f us per problem; cudnnFind %.2f ms per problem\n",
           s.n, s.speedup_geomean, s.speedup_p10, s.speedup_p50, s.speedup_p90, s.efficiency_mean,
           s.heur_efficiency_mean, noise, s.share_slower, s.share_faster, s.decide_us_mean, s.find_ms_mean);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    if (strcmp(argv[1], "noise") == 0) return cmd_noise(argc, argv);
    if (strcmp(argv[1], "summarize") == 0) return cmd_summarize(argc, argv);
    if (strcmp(argv[1], "conv") == 0) return cmd_conv(argc, argv);
    if (strcmp(argv[1], "gemm") == 0) return cmd_gemm(argc, argv);
#ifdef HEURIST_COLLECT_CUDA
#if defined(HEURIST_COLLECT_MODEL_TABLE)
    if (strcmp(argv[1], "verify") == 0) return cmd_verify_gemm(argc, argv);
#elif defined(HEURIST_COLLECT_MODEL)
    if (strcmp(argv[1], "verify") == 0) return cmd_verify(argc, argv);
#else
    if (strcmp(argv[1], "verify") == 0) {
        fprintf(stderr, "heurist-collect verify: this build has no model (configure with "
                        "-DHEURIST_COLLECT_MODEL_DIR=DIR, DIR holding an exported heurist_model.c)\n");
        return 2;
    }
#endif
#else
    if (strcmp(argv[1], "verify") == 0) {
        fprintf(stderr, "heurist-collect %s: this build has no CUDA/cuDNN (configure with -DHEURIST_CUDA=ON)\n", argv[1]);
        return 2;
    }
#endif
    fputs(usage, stderr);
    return 2;
}
