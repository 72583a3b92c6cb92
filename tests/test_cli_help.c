/* The command line's reference: docs/cli.md is what `heurist help --markdown` prints from the commands' and the
 * families' option tables, and the options print with their exact defaults. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/testutil.h"

/* the first line where a and b differ, for the message */
static int first_difference(const char *a, const char *b)
{
    int line = 1;
    for (; *a && *a == *b; a++, b++) line += *a == '\n';
    return line;
}

Test(cli_help, docs_cli_md_is_what_help_markdown_prints)
{
    char *out = NULL;
    cr_assert_eq(test_run_heurist("help --markdown", 0, &out), 0);
    char *doc = test_file_read(HEURIST_SOURCE_DIR "/docs/cli.md", NULL);
    cr_assert_not_null(doc, "docs/cli.md is missing");
    cr_assert(strcmp(out, doc) == 0,
              "docs/cli.md is out of date from line %d: regenerate it with `cmake --build build --target cli_doc`",
              first_difference(out, doc));
    free(doc);
    free(out);
}

/* train --help: the command's own options, then each family's under its name in the order gbdt, reformer, seq2seq,
 * transformer, each option once in its group with its own default in its shortest exact form. */
Test(cli_help, options_print_grouped_by_family_with_exact_defaults)
{
    char *out = NULL;
    cr_assert_eq(test_cli_run("train --help", &out), 0);
    /* a float default in its shortest exact form, not its double expansion */
    cr_assert_null(strstr(out, "0.00300000002607703"), "%s", out);
    const char *common = strstr(out, "\noptions:\n"), *family = strstr(out, "\nfamily options");
    cr_assert(common && family && common < family, "%s", out);
    const char *families[] = {"\ngbdt:\n", "\nreformer:\n", "\nseq2seq:\n", "\ntransformer:\n"};
    const char *lr[] = {NULL, "0.003", "0.003", "0.002"};
    const char *prev = family;
    for (int f = 0; f < 4; f++) {
        const char *at = strstr(out, families[f]);
        cr_assert_not_null(at, "no %s heading: %s", families[f] + 1, out);
        cr_assert_gt(at, prev, "%s is out of order: %s", families[f] + 1, out);
        prev = at;
        const char *next = f < 3 ? strstr(at + 1, families[f + 1]) : at + strlen(at);
        cr_assert_not_null(next);
        /* each option of the group once */
        for (const char *l = strchr(at + 1, '\n'); l && l < next; l = strchr(l + 1, '\n')) {
            char name[64], probe[80];
            if (sscanf(l, "\n  %63s", name) != 1) continue;
            snprintf(probe, sizeof probe, "\n  %s ", name);
            const char *again = strstr(l + 1, probe);
            cr_assert(!again || again >= next, "%s: %s twice", families[f] + 1, name);
        }
        const char *l = strstr(at, "\n  lr ");
        if (!lr[f]) {
            cr_assert(!l || l > next, "gbdt has no lr");
            continue;
        }
        cr_assert(l && l < next, "%s: no lr", families[f] + 1);
        char want[64];
        snprintf(want, sizeof want, "float %-10s", lr[f]);
        cr_assert(strncmp(strstr(l, "float"), want, strlen(want)) == 0, "%s: %.80s", families[f] + 1, l);
    }
    free(out);
}
