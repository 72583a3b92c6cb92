/* The command line's reference, docs/cli.md, printed from the tables --help prints: each command's cli_spec and
 * each family's config table (core/config.h), so that the page and the program cannot drift apart;
 * tests/test_cli_help.c checks that the page in the tree is what this prints. */
#include <string.h>

#include "cli/cli.h"

/* text with the characters a Markdown table cell cannot hold escaped, line breaks as spaces */
static void cell(FILE *f, const char *text)
{
    for (const char *c = text; *c; c++) {
        if (*c == '|') fputs("\\|", f);
        else if (*c == '\n') fputc(' ', f);
        else fputc(*c, f);
    }
}

static void command_markdown(FILE *f, const cli_spec *spec)
{
    const char *name = spec->usage + strlen("heurist ");
    const size_t len = strcspn(name, " \n");
    fprintf(f, "## heurist %.*s\n\n```\n%s\n```\n\n%s\n\n", (int)len, name, spec->usage, spec->about);
    fprintf(f, "| option | meaning |\n|---|---|\n");
    for (const cli_opt *o = spec->opts; o->name; o++) {
        fprintf(f, "| `--%s%s", o->name, o->value ? " " : "");
        if (o->value) cell(f, o->value);
        fputs("` | ", f);
        cell(f, o->help);
        fputs(" |\n", f);
    }
    fputs("| `--help` | this text |\n", f);
    if (spec->notes) fprintf(f, "\n%s\n", spec->notes);
    fputc('\n', f);
}

void cli_help_markdown(FILE *f, const cli_spec *const *specs, int n)
{
    fputs("# The heurist command line\n\n"
          "Every command, its options and their defaults, then every model family's options (`--config`), as\n"
          "`heurist CMD --help` prints them. This page is generated from the same tables by `heurist help --markdown`\n"
          "(`cmake --build build --target cli_doc` writes it here); tests/test_cli_help.c fails when it is out of\n"
          "date.\n\n",
          f);
    for (int i = 0; i < n; i++) command_markdown(f, specs[i]);
    fputs("## Family options (`--config`)\n\n"
          "`train`, `cv` and `compare` read a family's options from `--config` (a JSON object, inline or a file;\n"
          "`compare` keys it by family: `{\"gbdt\": {...}, \"reformer\": {...}}`). Numbers print in their shortest\n"
          "exact form; an option outside its range, of the wrong type or unknown to the family is refused with one\n"
          "line naming it.\n\n",
          f);
    const model_family *fams[CLI_MAX_FAMILIES];
    int nf = cli_families_with_options(fams);
    for (int i = 0; i < nf; i++) {
        const model_family *fam = fams[i];
        hr_config_option rows[HR_CONFIG_MAX_OPTIONS];
        hr_config_table t = {fam->name, rows, fam->config_options(rows)};
        fprintf(f, "### %s\n\n", fam->name);
        hr_config_markdown(&t, f);
        fputc('\n', f);
    }
}
