/* core: a string -> int hash map (open addressing, FNV-1a hashes, linear probing), so that building a table
 * of names (a header, a vocabulary, a kernel list) is linear in its size. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

static uint64_t strmap_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

/* Doubles the slot table (at least 64 slots), re-placing every key by its kept hash: the keys are not read,
 * so a caller may have taken some of them. */
static int strmap_grow(hr_strmap *m)
{
    if (m->cap > INT32_MAX / 2) return hr_error(HR_ENOMEM, "string map: more than %d keys", INT32_MAX / 4);
    int cap = m->cap ? m->cap * 2 : 64;
    int *slots = hr_calloc((size_t)cap, sizeof *slots);
    uint64_t *hashes = hr_calloc((size_t)cap, sizeof *hashes);
    if (!slots || !hashes) {
        free(slots);
        free(hashes);
        return HR_ENOMEM;
    }
    for (int i = 0; i < m->cap; i++) {
        if (!m->slots[i]) continue;
        size_t j = m->hashes[i] & (size_t)(cap - 1);
        while (slots[j]) j = (j + 1) & (size_t)(cap - 1);
        slots[j] = m->slots[i];
        hashes[j] = m->hashes[i];
    }
    free(m->slots);
    free(m->hashes);
    m->slots = slots;
    m->hashes = hashes;
    m->cap = cap;
    return HR_OK;
}

/* The slot of key[0..len) (its index + 1 there) or the empty slot where it would go. */
static size_t strmap_slot(const hr_strmap *m, const char *key, size_t len, uint64_t h)
{
    size_t mask = (size_t)(m->cap - 1), j = h & mask;
    for (; m->slots[j]; j = (j + 1) & mask) {
        const char *k = m->keys[m->slots[j] - 1];
        if (m->hashes[j] == h && memcmp(k, key, len) == 0 && k[len] == '\0') break;
    }
    return j;
}

int hr_strmap_find(const hr_strmap *m, const char *key, size_t len)
{
    if (!m || !m->cap || (!key && len)) return -1;
    size_t j = strmap_slot(m, key ? key : "", len, strmap_hash(key, len));
    return m->slots[j] - 1;
}

int hr_strmap_get(const hr_strmap *m, const char *key, int fallback)
{
    int i = key ? hr_strmap_find(m, key, strlen(key)) : -1;
    return i < 0 ? fallback : m->values[i];
}

int hr_strmap_add(hr_strmap *m, const char *key, size_t len, int value, int *index)
{
    HR_ASSERT(m && (key || !len));
    if (!key) key = "";
    if ((size_t)(m->n + 1) * 2 > (size_t)m->cap && strmap_grow(m)) return HR_ENOMEM;
    uint64_t h = strmap_hash(key, len);
    size_t j = strmap_slot(m, key, len, h);
    if (m->slots[j]) {
        if (index) *index = m->slots[j] - 1;
        return 0;
    }
    if (m->n == m->cap_keys) {
        int cap = m->cap_keys ? m->cap_keys * 2 : 64;
        char **keys = realloc(m->keys, (size_t)cap * sizeof *keys);
        if (!keys) return hr_error(HR_ENOMEM, "out of memory growing a string map to %d keys", cap);
        m->keys = keys;
        int *values = realloc(m->values, (size_t)cap * sizeof *values);
        if (!values) return hr_error(HR_ENOMEM, "out of memory growing a string map to %d keys", cap);
        m->values = values;
        m->cap_keys = cap;
    }
    char *copy = hr_malloc(len + 1);
    if (!copy) return HR_ENOMEM;
    memcpy(copy, key, len);
    copy[len] = '\0';
    m->keys[m->n] = copy;
    m->values[m->n] = value;
    m->slots[j] = m->n + 1;
    m->hashes[j] = h;
    if (index) *index = m->n;
    m->n++;
    return 1;
}

void hr_strmap_free(hr_strmap *m)
{
    if (!m) return;
    for (int i = 0; i < m->n; i++) free(m->keys[i]);
    free(m->keys);
    free(m->values);
    free(m->slots);
    free(m->hashes);
    memset(m, 0, sizeof *m);
}
