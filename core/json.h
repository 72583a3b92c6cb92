/* core/json: the one strict JSON reader for every document heurist reads (--config, table schemas, capability
 * files, the JSON kept inside model and cache files).
 *
 * On top of cJSON it refuses what cJSON lets through and would be read in two ways: a key given twice in one
 * object (cJSON's lookups would keep the first, a loop over the members the last), any text after the value,
 * and a NUL byte, raw or escaped as \u0000, which would cut a name short once it is a C string. A leading UTF-8
 * byte-order mark is skipped. Each refusal is one line naming the document and the line or key:
 *     t.schema.json: key "measure" is given twice
 *     --config:1: text after the JSON value
 */
#ifndef HEURIST_CORE_JSON_H
#define HEURIST_CORE_JSON_H

#include <cJSON.h>
#include <stddef.h>

/* Parses text[0..len) into *out (free with cJSON_Delete); `name` names the document in errors. HR_EFORMAT with
 * the message above when the text is not one strict JSON value; *out is then NULL. */
int hr_json_parse(const char *text, size_t len, const char *name, cJSON **out);
/* The same for a NUL-terminated text. */
int hr_json_parse_str(const char *text, const char *name, cJSON **out);

#endif
