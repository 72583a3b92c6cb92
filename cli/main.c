/* heurist: command-line entry point. */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0) {
        printf("usage: heurist <command> [options]\n");
        return argc < 2 ? 2 : 0;
    }
    fprintf(stderr, "heurist: unknown command '%s'\n", argv[1]);
    return 2;
}
