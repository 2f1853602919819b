/* strmap.c - string -> int32 hash map with linear probing (FNV-1a, with a
 * final mix so that the low bits, which pick the slot, depend on every
 * byte).  One entry holds key, length, hash and value, so a probe touches
 * one cache line and compares key bytes only when the hashes agree.
 * Invariant: cap is a power of two and count < cap / 2. */
#include "internal.h"

uint32_t mp_strmap_hash(const char *s, size_t n) {
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

/* Rehash into cap slots (a power of two, more than twice the count). */
static void rehash(mp_strmap *m, size_t cap) {
    mp_strmap old = *m;
    m->cap = cap;
    m->e = mp_xcalloc(m->cap, sizeof *m->e);
    for (size_t i = 0; i < old.cap; i++)
        if (old.e[i].key) m->e[slot(m, old.e[i].key, old.e[i].len, old.e[i].hash)] = old.e[i];
    mp_xfree(old.e);
}

int32_t mp_strmap_put(mp_strmap *m, const char *key, size_t len, int32_t val) {
    if ((m->count + 1) * 2 > m->cap) rehash(m, m->cap ? m->cap * 2 : 64);
    uint32_t h = mp_strmap_hash(key, len);
    mp_strmap_entry *e = &m->e[slot(m, key, len, h)];
    if (e->key) return e->val;
    *e = (mp_strmap_entry){key, (uint32_t)len, h, val};
    m->count++;
    return -1;
}

int32_t mp_strmap_get(const mp_strmap *m, const char *key, size_t len) {
    return mp_strmap_get_hashed(m, key, len, mp_strmap_hash(key, len));
}

int32_t mp_strmap_get_hashed(const mp_strmap *m, const char *key, size_t len, uint32_t hash) {
    if (!m->cap) return -1;
    const mp_strmap_entry *e = &m->e[slot(m, key, len, hash)];
    return e->key ? e->val : -1;
}

void mp_strmap_prefetch(const mp_strmap *m, uint32_t hash) {
    if (m->cap) __builtin_prefetch(&m->e[hash & (m->cap - 1)]);
}

void mp_strmap_reserve(mp_strmap *m, size_t n) {
    size_t cap = m->cap ? m->cap : 64;
    while ((n + 1) * 2 > cap && cap <= SIZE_MAX / 4) cap *= 2;
    if (cap > m->cap) rehash(m, cap);
}
