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
    "                       [--gpus all|N] [--chunk C] [--no-bind]\n"
    "  heurist-collect verify --problems LIST --out REPORT.tsv [--repeats R] [--rounds N] [--noise-ratio X]\n"
    "                       [--time-limit SEC] [--limit N] [--resume] [--top-k K] [--shortlist-by algo|kernel]\n"
    "                       [--shortlist-timing careful|once|batch] [--precision strict|tf32|conversion] [--source TAG]\n"
    "                       [--shortlist-warmup | --shortlist-retime-within F]   (with batch)\n"
    "                       [--find-cost]\n"
    "                       [--fdb COLLECTED.fdb.txt [--fdb-top N]]   (built with find-db selection models)\n"
    "  heurist-collect verify --table HELDOUT.csv.gz --out REPORT.tsv [--rounds N] [--repeats R] [--noise-ratio X]\n"
    "                       [--time-limit SEC] [--limit N] [--resume] [--heuristic-count N] [--top-k K]\n"
    "                       [--shortlist-fill] [--shapes SHAPES.txt] [--source TAG] [--no-list] [--table-top N]\n"
    "                       [--shortlist-timing careful|interleaved [--shortlist-rounds R]]\n"
    "                       [--tune-candidates rows|list|list:N] (built with GEMM table models: P_rank, or tune models, P_tune[_vendor])\n"
    "  heurist-collect gemm --shapes FILE --out TABLE.csv.gz [--time-limit SEC] [--resume] [--limit N] [--verbose]\n"
    "                       [--candidates N] [--heuristic-count N] [--repeats R] [--min-batch-us US] [--max-batch B]\n"
    "                       [--workspace-mib MIB] [--slow-factor X] [--seed S] [--gpus all|N] [--chunk C]\n"
    "                       [--no-bind]\n"
    "  heurist-collect gemm --describe   (GPU, driver, runtime and cuBLASLt versions)\n"
    "  mpirun -np N heurist-collect conv|gemm ...   (one worker per rank, each on the GPU of its local rank)\n"
    "  heurist-collect noise --a FIRST.fdb.txt --b SECOND.fdb.txt\n"
    "  heurist-collect summarize --report REPORT.tsv[.gz] [--noise-ratio X] [--by FIELD[+FIELD],...] [--bootstrap N]\n"
    "                       [--seed S]\n";

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
#if defined(HEURIST_COLLECT_MODEL)
    /* --table: a GEMM table's held-out shapes for the table models; else convolution keys for the others */
    if (strcmp(argv[1], "verify") == 0)
        return cli_opt(argc, argv, "--table") ? cmd_verify_gemm(argc, argv) : cmd_verify(argc, argv);
#else
    if (strcmp(argv[1], "verify") == 0) {
        fprintf(stderr, "heurist-collect verify: this build has no model (configure with "
                        "-DHEURIST_COLLECT_MODEL_DIR=DIR[;DIR...], each DIR holding one exported runtime)\n");
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
