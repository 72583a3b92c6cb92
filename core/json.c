/* core/json: strict JSON reading over cJSON (see json.h). */
#include "json.h"

#include <stdlib.h>
#include <string.h>

#include "core.h"

/* 1-based line of text + at. */
static long line_of(const char *text, size_t at)
{
    long line = 1;
    for (size_t i = 0; i < at; i++) line += text[i] == '\n';
    return line;
}

/* Finds a NUL byte in the text or a \u0000 escape inside a string; its offset, or len when there is none. */
static size_t nul_find(const char *text, size_t len)
{
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\0') return i;
        if (!in_string) {
            in_string = c == '"';
        } else if (c == '"') {
            in_string = 0;
        } else if (c == '\\' && i + 1 < len) {
            if (text[i + 1] == 'u' && i + 5 < len && memcmp(text + i + 2, "0000", 4) == 0) return i;
            i++; /* the escaped character */
        }
    }
    return len;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* *dup = the first key given twice in an object of the tree (depth first), or NULL; *parent = the key of that
 * object (NULL at the top or in an array). HR_OK or HR_ENOMEM. */
static int repeated_key(const cJSON *node, const char **dup, const char **parent)
{
    if (cJSON_IsObject(node) && node->child && node->child->next) {
        int n = 0;
        for (const cJSON *c = node->child; c; c = c->next) n++;
        /* sorted pointers to the members: n log n, whatever the object's width */
        const cJSON **m = hr_malloc((size_t)n * sizeof *m);
        if (!m) return HR_ENOMEM;
        n = 0;
        for (const cJSON *c = node->child; c; c = c->next) m[n++] = c;
        qsort(m, (size_t)n, sizeof *m, cmp_key);
        for (int i = 1; i < n && !*dup; i++)
            if (strcmp(m[i - 1]->string, m[i]->string) == 0) *dup = m[i]->string;
        free(m);
        if (*dup) {
            *parent = node->string;
            return HR_OK;
        }
    }
    for (const cJSON *c = node->child; c && !*dup; c = c->next) {
        int rc = repeated_key(c, dup, parent);
        if (rc) return rc;
    }
    return HR_OK;
}

int hr_json_parse(const char *text, size_t len, const char *name, cJSON **out)
{
    *out = NULL;
    if (!text) return hr_error(HR_EINVAL, "%s: no JSON text", name);
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) text += 3, len -= 3;
    size_t nul = nul_find(text, len);
    if (nul < len)
        return hr_error(HR_EFORMAT, "%s:%ld: a NUL character (raw or \\u0000) in JSON text", name, line_of(text, nul));
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!j) {
        size_t at = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        return hr_error(HR_EFORMAT, "%s:%ld: not valid JSON", name, line_of(text, at));
    }
    size_t at = (size_t)(end - text);
    while (at < len && (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r')) at++;
    if (at < len) {
        cJSON_Delete(j);
        return hr_error(HR_EFORMAT, "%s:%ld: text after the JSON value", name, line_of(text, at));
    }
    const char *parent = NULL, *dup = NULL;
    int rc = repeated_key(j, &dup, &parent);
    if (rc || dup) {
        if (!rc)
            rc = parent ? hr_error(HR_EFORMAT, "%s: key \"%s\" is given twice in \"%s\"", name, dup, parent)
                          : hr_error(HR_EFORMAT, "%s: key \"%s\" is given twice", name, dup);
        cJSON_Delete(j);
        return rc;
    }
    *out = j;
    return HR_OK;
}

int hr_json_parse_str(const char *text, const char *name, cJSON **out)
{
    return hr_json_parse(text, text ? strlen(text) : 0, name, out);
}
