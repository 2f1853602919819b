/* strmap.c - string -> int32 hash map with linear probing (FNV-1a).
 * Invariant: cap is a power of two and count < cap / 2. */
#include "util.h"

static uint64_t hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

void mp_strmap_init(mp_strmap *m) { memset(m, 0, sizeof *m); }

void mp_strmap_free(mp_strmap *m) {
    free(m->keys);
    free(m->lens);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static size_t slot(const mp_strmap *m, const char *key, size_t len) {
    size_t mask = m->cap - 1, i = hash(key, len) & mask;
    while (m->keys[i] &&
           !(m->lens[i] == len && memcmp(m->keys[i], key, len) == 0))
        i = (i + 1) & mask;
    return i;
}

static void grow(mp_strmap *m) {
    mp_strmap old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->keys = mp_xcalloc(m->cap, sizeof *m->keys);
    m->lens = mp_xcalloc(m->cap, sizeof *m->lens);
    m->vals = mp_xcalloc(m->cap, sizeof *m->vals);
    for (size_t i = 0; i < old.cap; i++) {
        if (!old.keys[i]) continue;
        size_t j = slot(m, old.keys[i], old.lens[i]);
        m->keys[j] = old.keys[i];
        m->lens[j] = old.lens[i];
        m->vals[j] = old.vals[i];
    }
    free(old.keys);
    free(old.lens);
    free(old.vals);
}

int32_t mp_strmap_put(mp_strmap *m, const char *key, size_t len, int32_t val) {
    if ((m->count + 1) * 2 > m->cap) grow(m);
    size_t i = slot(m, key, len);
    if (m->keys[i]) return m->vals[i];
    m->keys[i] = key;
    m->lens[i] = (uint32_t)len;
    m->vals[i] = val;
    m->count++;
    return -1;
}

int32_t mp_strmap_get(const mp_strmap *m, const char *key, size_t len) {
    if (!m->cap) return -1;
    size_t i = slot(m, key, len);
    return m->keys[i] ? m->vals[i] : -1;
}
