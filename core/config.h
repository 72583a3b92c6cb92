/* core/config: a family's options described by a table, read from a JSON object with type and range checks.
 *
 * Each option is one row: its key, its type, where its value goes (a byte offset into the struct the reader
 * fills), its default, its allowed range or choices, and one doc line. The reader writes every default, then
 * every key given, and refuses a key the table does not name, a value of the wrong type, a number outside the
 * range, a non-integral number for an integer and a string that is not one of an enum's names, each with one
 * line naming the family, the key, the value given and what is allowed:
 *     gbdt config: "rounds" must be an integer in [1, 1000000], got "x"
 * The same tables print as the families' option reference (hr_config_print).
 */
#ifndef HEURIST_CORE_CONFIG_H
#define HEURIST_CORE_CONFIG_H

#include <cJSON.h>
#include <stddef.h>
#include <stdio.h>

typedef enum hr_config_type {
    HR_CONFIG_INT,    /* int field: a JSON number with an integral value in [min, max] */
    HR_CONFIG_FLOAT,  /* float field: a JSON number in [min, max] */
    HR_CONFIG_DOUBLE, /* double field: the same check (printed as float) */
    HR_CONFIG_BOOL,   /* int field set to 0 or 1: JSON true or false */
    HR_CONFIG_ENUM,   /* int-sized field: a JSON string among names, stored as values[i] (i when values is NULL) */
} hr_config_type;

typedef struct hr_config_option {
    const char *name;
    hr_config_type type;
    size_t offset;             /* of the option's field in the struct the reader fills */
    double def;                /* default of a number or bool */
    const char *def_name;      /* default of an enum: one of names */
    double min, max;           /* numbers: the allowed range, both ends included */
    const char *const *names;  /* enum: the choices, NULL-terminated */
    const int *values;         /* enum: the value stored for each name (NULL: its index) */
    const char *doc;           /* one line for the option reference */
} hr_config_option;

/* The largest table a family builds (its own options and the training loop's). */
#define HR_CONFIG_MAX_OPTIONS 64

typedef struct hr_config_table {
    const char *family;             /* names the config in messages ("gbdt") */
    const hr_config_option *options;
    size_t n;
} hr_config_table;

/* Writes every option's default into out. */
void hr_config_defaults(const hr_config_table *t, void *out);
/* Writes the defaults, then the values cfg gives (cfg NULL: defaults only). HR_EINVAL, with the one-line
 * message above, when cfg is not an object or a key or value is refused; out may then be partly written. */
int hr_config_read(const hr_config_table *t, const cJSON *cfg, void *out);
/* Whether cfg gives key (for defaults that depend on other options). */
int hr_config_has(const cJSON *cfg, const char *key);
/* One line per option: name, type, default, range or choices, doc. */
void hr_config_print(const hr_config_table *t, FILE *out);
/* Every option's value in effect (cfg's where it gives one, else the default), one "name=value\n" line each in the
 * table's order, each value in one canonical text for its type (so 1e-3 and 0.001 read alike): what a run was
 * configured with, to record and compare by name. cfg must have passed hr_config_read. malloc'd; NULL on ENOMEM. */
char *hr_config_effective(const hr_config_table *t, const cJSON *cfg);

#endif
