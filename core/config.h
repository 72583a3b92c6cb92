/* core/config: a family's options described by a table, read from a JSON object with type and range checks.
 *
 * Each option is one row: its key, its type, where its value goes (a byte offset into the struct the reader
 * fills), its default, its allowed range or choices, and one doc line. The reader writes every default, then
 * every key given, and refuses a key the table does not name, a value of the wrong type, a number outside the
 * range, a non-integral number for an integer and a string that is not one of an enum's names, each with one
 * line naming the family, the key, the value given and what is allowed:
 *     gbdt config: "rounds" must be an integer in [1, 1000000], got "x"
 * The same rows write and read the options a model file records (hr_config_write_h5, hr_config_read_h5) and
 * print as the families' option reference, in --help (hr_config_print) and in docs/cli.md (hr_config_markdown).
 */
#ifndef HEURIST_CORE_CONFIG_H
#define HEURIST_CORE_CONFIG_H

#include <cJSON.h>
#include <hdf5.h>
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
    /* model files: the sets the option is recorded in (bits of the family's choosing; 0: not recorded), the content
     * version of the family that first recorded it (older files lack it), and whether later files may lack it too;
     * a file that lacks it holds the default */
    unsigned file;
    int file_since;
    int file_optional;
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
/* One line per option: name, type, default, range or choices, doc. Numbers print in their shortest form that
 * reads back to the same value at the field's precision (a float 0.003, not 0.00300000002607703). */
void hr_config_print(const hr_config_table *t, FILE *out);
/* Every option's value in effect (cfg's where it gives one, else the default), one "name=value\n" line each in the
 * table's order, each value in one canonical text for its type (so 1e-3 and 0.001 read alike): what a run was
 * configured with, to record and compare by name. cfg must have passed hr_config_read. malloc'd; NULL on ENOMEM. */
char *hr_config_effective(const hr_config_table *t, const cJSON *cfg);
/* The same as a Markdown table (docs/cli.md). */
void hr_config_markdown(const hr_config_table *t, FILE *out);
/* The shortest text of a number that reads back to v at the precision of type t (float: as a float). */
void hr_config_number(hr_config_type t, double v, char *buf, size_t cap);

/* Writes the options of the sets in mask (file & mask) from in into attributes of the group g, named as the
 * options, in table order: an integer (int, bool), a double (float, double) or the enum's name. */
int hr_config_write_h5(const hr_config_table *t, const void *in, unsigned mask, hid_t g);
/* Writes every default into out, then reads the options of the sets in mask from g's attributes: a value out of
 * range or not among an enum's names is HR_EFORMAT naming the family and the attribute; an attribute g lacks keeps
 * its default when version (the file's content version) is older than its file_since or it is file_optional, and
 * is HR_EFORMAT otherwise. */
int hr_config_read_h5(const hr_config_table *t, hid_t g, unsigned mask, int version, void *out);

#endif
