/* strmap.c - string -> int32 hash map with linear probing (FNV-1a, with a
 * final mix so that the low bits, which pick the slot, depend on every
 * byte).  One entry holds key, length, hash and value, so a probe touches
 * one cache line and compares key bytes only when the hashes agree.
 * Invariant: cap is a power of two and count < cap / 2. */
#include "internal.h"

static uint32_t hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(h ^ (h >> 32));
}

void mp_strmap_init(mp_strmap *m) { memset(m, 0, sizeof *m); }

void mp_strmap_free(mp_strmap *m) {
    mp_xfree(m->e);
    memset(m, 0, sizeof *m);
}

static size_t slot(const mp_strmap *m, const char *key, size_t len, uint32_t h) {
    size_t mask = m->cap - 1, i = h & mask;
    for (;;) {
        const mp_strmap_entry *e = &m->e[i];
        if (!e->key || (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0)) return i;
        i = (i + 1) & mask;
    }
}

static void grow(mp_strmap *m) {
    mp_strmap old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->e = mp_xcalloc(m->cap, sizeof *m->e);
    for (size_t i = 0; i < old.cap; i++)
        if (old.e[i].key) m->e[slot(m, old.e[i].key, old.e[i].len, old.e[i].hash)] = old.e[i];
    mp_xfree(old.e);
}

int32_t mp_strmap_put(mp_strmap *m, const char *key, size_t len, int32_t val) {
    if ((m->count + 1) * 2 > m->cap) grow(m);
    uint32_t h = hash(key, len);
    mp_strmap_entry *e = &m->e[slot(m, key, len, h)];
    if (e->key) return e->val;
    *e = (mp_strmap_entry){key, (uint32_t)len, h, val};
    m->count++;
    return -1;
}

int32_t mp_strmap_get(const mp_strmap *m, const char *key, size_t len) {
    if (!m->cap) return -1;
    const mp_strmap_entry *e = &m->e[slot(m, key, len, hash(key, len))];
    return e->key ? e->val : -1;
}
