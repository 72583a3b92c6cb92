/* Table-driven options (see core/config.h): a family's JSON config read, its model files' options written and read,
 * its option reference printed. */
#include "core/config.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/h5.h"

static const char *type_name(hr_config_type t)
{
    switch (t) {
    case HR_CONFIG_INT: return "int";
    case HR_CONFIG_FLOAT:
    case HR_CONFIG_DOUBLE: return "float";
    case HR_CONFIG_BOOL: return "bool";
    case HR_CONFIG_ENUM: return "enum";
    }
    return "?";
}

static int enum_index(const hr_config_option *o, const char *s)
{
    for (int i = 0; o->names[i]; i++)
        if (strcmp(o->names[i], s) == 0) return i;
    return -1;
}

/* "a, b or c" into buf. */
static void enum_choices(const hr_config_option *o, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int i = 0; o->names[i]; i++) {
        const char *sep = i == 0 ? "" : o->names[i + 1] ? ", " : " or ";
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s", sep, o->names[i]);
    }
}

/* Stores a number, bool (0/1) or enum index i into the option's field. */
static void store(const hr_config_option *o, void *out, double v)
{
    char *field = (char *)out + o->offset;
    switch (o->type) {
    case HR_CONFIG_INT:
    case HR_CONFIG_BOOL: *(int *)field = (int)v; break;
    case HR_CONFIG_FLOAT: *(float *)field = (float)v; break;
    case HR_CONFIG_DOUBLE: *(double *)field = v; break;
    case HR_CONFIG_ENUM: *(int *)field = o->values ? o->values[(int)v] : (int)v; break;
    }
}

void hr_config_defaults(const hr_config_table *t, void *out)
{
    for (size_t i = 0; i < t->n; i++) {
        const hr_config_option *o = &t->options[i];
        if (o->type == HR_CONFIG_ENUM) {
            int k = enum_index(o, o->def_name);
            HR_ASSERT(k >= 0);
            store(o, out, k);
        } else {
            store(o, out, o->def);
        }
    }
}

int hr_config_has(const cJSON *cfg, const char *key)
{
    return cfg && cJSON_GetObjectItemCaseSensitive(cfg, key) != NULL;
}

/* The value as the user wrote it, for messages: JSON text, cut to a line's worth. */
static void given(const cJSON *v, char *buf, size_t cap)
{
    char *s = cJSON_PrintUnformatted(v);
    snprintf(buf, cap, "%s", s ? s : "?");
    if (s && strlen(s) >= cap && cap > 4) strcpy(buf + cap - 4, "...");
    free(s);
}

static int read_one(const hr_config_table *t, const hr_config_option *o, const cJSON *v, void *out)
{
    char got[64], allowed[512];
    given(v, got, sizeof got);
    switch (o->type) {
    case HR_CONFIG_INT:
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= o->min && v->valuedouble <= o->max) ||
            v->valuedouble != floor(v->valuedouble))
            return hr_error(HR_EINVAL, "%s config: \"%s\" must be an integer in [%.15g, %.15g], got %s", t->family,
                            o->name, o->min, o->max, got);
        break;
    case HR_CONFIG_FLOAT:
    case HR_CONFIG_DOUBLE:
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= o->min && v->valuedouble <= o->max))
            return hr_error(HR_EINVAL, "%s config: \"%s\" must be a number in [%.15g, %.15g], got %s", t->family,
                            o->name, o->min, o->max, got);
        break;
    case HR_CONFIG_BOOL:
        if (!cJSON_IsBool(v))
            return hr_error(HR_EINVAL, "%s config: \"%s\" must be true or false, got %s", t->family, o->name, got);
        store(o, out, cJSON_IsTrue(v));
        return HR_OK;
    case HR_CONFIG_ENUM: {
        int k = cJSON_IsString(v) ? enum_index(o, v->valuestring) : -1;
        if (k < 0) {
            enum_choices(o, allowed, sizeof allowed);
            return hr_error(HR_EINVAL, "%s config: \"%s\" must be one of %s, got %s", t->family, o->name, allowed,
                            got);
        }
        store(o, out, k);
        return HR_OK;
    }
    }
    store(o, out, v->valuedouble);
    return HR_OK;
}

int hr_config_read(const hr_config_table *t, const cJSON *cfg, void *out)
{
    hr_config_defaults(t, out);
    if (!cfg) return HR_OK;
    if (!cJSON_IsObject(cfg)) {
        char got[64];
        given(cfg, got, sizeof got);
        return hr_error(HR_EINVAL, "%s config: must be a JSON object, got %s", t->family, got);
    }
    const cJSON *v;
    cJSON_ArrayForEach(v, cfg)
    {
        const hr_config_option *o = NULL;
        for (size_t i = 0; i < t->n && !o; i++)
            if (strcmp(t->options[i].name, v->string) == 0) o = &t->options[i];
        if (!o) {
            char known[1024] = "";
            for (size_t i = 0; i < t->n; i++) {
                size_t len = strlen(known);
                snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", t->options[i].name);
            }
            return hr_error(HR_EINVAL, "%s config: unknown option \"%s\" (known: %s)", t->family, v->string, known);
        }
        int rc = read_one(t, o, v, out);
        if (rc) return rc;
    }
    return HR_OK;
}

void hr_config_number(hr_config_type t, double v, char *buf, size_t cap)
{
    /* a whole number in full (1000000, not 1e+06); else the fewest significant digits whose text reads back to
     * v: at most 9 for a float, 17 for a double */
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, cap, "%.0f", v);
        return;
    }
    const int single = t == HR_CONFIG_FLOAT, most = single ? 9 : 17;
    for (int p = 1; p <= most; p++) {
        snprintf(buf, cap, "%.*g", p, v);
        if (single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) return;
    }
    snprintf(buf, cap, "%.*g", most, v);
}

/* An option's default and what it allows, as text */
static void describe(const hr_config_option *o, char *def, size_t dcap, char *allowed, size_t acap)
{
    char lo[32], hi[32];
    switch (o->type) {
    case HR_CONFIG_ENUM:
        snprintf(def, dcap, "%s", o->def_name);
        enum_choices(o, allowed, acap);
        break;
    case HR_CONFIG_BOOL:
        snprintf(def, dcap, "%s", o->def ? "true" : "false");
        snprintf(allowed, acap, "true or false");
        break;
    default:
        hr_config_number(o->type, o->def, def, dcap);
        hr_config_number(o->type == HR_CONFIG_INT ? HR_CONFIG_DOUBLE : o->type, o->min, lo, sizeof lo);
        hr_config_number(o->type == HR_CONFIG_INT ? HR_CONFIG_DOUBLE : o->type, o->max, hi, sizeof hi);
        snprintf(allowed, acap, "[%s, %s]", lo, hi);
    }
}

void hr_config_print(const hr_config_table *t, FILE *out)
{
    for (size_t i = 0; i < t->n; i++) {
        const hr_config_option *o = &t->options[i];
        char def[64], allowed[512];
        describe(o, def, sizeof def, allowed, sizeof allowed);
        fprintf(out, "  %-24s %-5s %-10s %-26s %s\n", o->name, type_name(o->type), def, allowed, o->doc);
    }
}

/* The canonical text of option o's value v (a number, 0/1 for a bool, an enum index). */
static void value_text(const hr_config_option *o, double v, char *buf, size_t cap)
{
    switch (o->type) {
    case HR_CONFIG_INT: snprintf(buf, cap, "%lld", (long long)v); break;
    case HR_CONFIG_FLOAT: snprintf(buf, cap, "%.9g", (double)(float)v); break;
    case HR_CONFIG_DOUBLE: snprintf(buf, cap, "%.17g", v); break;
    case HR_CONFIG_BOOL: snprintf(buf, cap, "%s", v != 0 ? "true" : "false"); break;
    case HR_CONFIG_ENUM: {
        /* an alias reads as the first name of its value */
        int i = (int)v, first = i;
        for (int k = 0; o->values && k < i; k++)
            if (o->values[k] == o->values[i]) {
                first = k;
                break;
            }
        snprintf(buf, cap, "%s", o->names[first]);
        break;
    }
    }
}

char *hr_config_effective(const hr_config_table *t, const cJSON *cfg)
{
    size_t cap = 256, len = 0;
    char *text = hr_malloc(cap);
    if (!text) return NULL;
    text[0] = '\0';
    for (size_t i = 0; i < t->n; i++) {
        const hr_config_option *o = &t->options[i];
        const cJSON *v = cfg ? cJSON_GetObjectItemCaseSensitive(cfg, o->name) : NULL;
        double x = o->type == HR_CONFIG_ENUM ? enum_index(o, o->def_name) : o->def;
        if (v && cJSON_IsNumber(v)) x = v->valuedouble;
        else if (v && cJSON_IsBool(v)) x = cJSON_IsTrue(v);
        else if (v && cJSON_IsString(v) && o->type == HR_CONFIG_ENUM && enum_index(o, v->valuestring) >= 0)
            x = enum_index(o, v->valuestring);
        char val[64];
        value_text(o, x, val, sizeof val);
        size_t need = len + strlen(o->name) + strlen(val) + 3;
        if (need > cap) {
            while (cap < need) cap *= 2;
            char *nt = realloc(text, cap);
            if (!nt) {
                free(text);
                hr_error(HR_ENOMEM, "out of memory");
                return NULL;
            }
            text = nt;
        }
        len += (size_t)snprintf(text + len, cap - len, "%s=%s\n", o->name, val);
    }
    return text;
}

void hr_config_markdown(const hr_config_table *t, FILE *out)
{
    fprintf(out, "| option | type | default | allowed | meaning |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < t->n; i++) {
        const hr_config_option *o = &t->options[i];
        char def[64], allowed[512];
        describe(o, def, sizeof def, allowed, sizeof allowed);
        fprintf(out, "| `%s` | %s | `%s` | %s | ", o->name, type_name(o->type), def, allowed);
        for (const char *c = o->doc; *c; c++) fputs(*c == '|' ? "\\|" : (char[2]){*c, 0}, out);
        fputs(" |\n", out);
    }
}

/* ---- model files ---- */

/* The value in an option's field: a number, a bool (0/1) or an enum's stored value */
static double load(const hr_config_option *o, const void *in)
{
    const char *field = (const char *)in + o->offset;
    switch (o->type) {
    case HR_CONFIG_FLOAT: return *(const float *)field;
    case HR_CONFIG_DOUBLE: return *(const double *)field;
    default: return *(const int *)field;
    }
}

/* The name of an enum's stored value v: the first name stored as v */
static const char *enum_name(const hr_config_option *o, int v)
{
    for (int i = 0; o->names[i]; i++)
        if ((o->values ? o->values[i] : i) == v) return o->names[i];
    return NULL;
}

int hr_config_write_h5(const hr_config_table *t, const void *in, unsigned mask, hid_t g)
{
    int rc = HR_OK;
    for (size_t i = 0; !rc && i < t->n; i++) {
        const hr_config_option *o = &t->options[i];
        if (!(o->file & mask)) continue;
        const double v = load(o, in);
        switch (o->type) {
        case HR_CONFIG_INT:
        case HR_CONFIG_BOOL: rc = hr_h5_attr_write_int(g, o->name, (long long)v); break;
        case HR_CONFIG_FLOAT:
        case HR_CONFIG_DOUBLE: rc = hr_h5_attr_write_double(g, o->name, v); break;
        case HR_CONFIG_ENUM: {
            const char *name = enum_name(o, (int)v);
            HR_ASSERT(name);
            rc = hr_h5_attr_write_str(g, o->name, name);
            break;
        }
        }
    }
    return rc;
}

/* One option from g's attribute of its name into out */
static int read_h5_one(const hr_config_table *t, const hr_config_option *o, hid_t g, void *out)
{
    char allowed[512];
    switch (o->type) {
    case HR_CONFIG_INT:
    case HR_CONFIG_BOOL: {
        const double lo = o->type == HR_CONFIG_BOOL ? 0 : o->min, hi = o->type == HR_CONFIG_BOOL ? 1 : o->max;
        int v = 0;
        int rc = hr_h5_attr_read_int_in(g, t->family, o->name, lo < INT_MIN ? INT_MIN : (int)lo,
                                        hi > INT_MAX ? INT_MAX : (int)hi, &v);
        if (!rc) store(o, out, v);
        return rc;
    }
    case HR_CONFIG_FLOAT:
    case HR_CONFIG_DOUBLE: {
        double v = 0;
        int rc = hr_h5_attr_read_double(g, o->name, &v);
        if (rc) return rc;
        if (!(v >= o->min && v <= o->max))
            return hr_error(HR_EFORMAT, "%s: %s = %g out of range [%g, %g]", t->family, o->name, v, o->min, o->max);
        store(o, out, v);
        return HR_OK;
    }
    case HR_CONFIG_ENUM: {
        char *s = NULL;
        int rc = hr_h5_attr_read_str(g, o->name, &s);
        const int k = rc ? -1 : enum_index(o, s);
        if (!rc && k < 0) {
            enum_choices(o, allowed, sizeof allowed);
            rc = hr_error(HR_EFORMAT, "%s: %s '%s' is not one of %s", t->family, o->name, s, allowed);
        }
        if (!rc) store(o, out, k);
        free(s);
        return rc;
    }
    }
    return HR_OK;
}

int hr_config_read_h5(const hr_config_table *t, hid_t g, unsigned mask, int version, void *out)
{
    hr_config_defaults(t, out);
    for (size_t i = 0; i < t->n; i++) {
        const hr_config_option *o = &t->options[i];
        if (!(o->file & mask)) continue;
        if (hr_h5_attr_exists(g, o->name) <= 0) {
            if (version < o->file_since || o->file_optional) continue;
            return hr_error(HR_EFORMAT, "%s: the file records no %s", t->family, o->name);
        }
        int rc = read_h5_one(t, o, g, out);
        if (rc) return rc;
    }
    return HR_OK;
}
