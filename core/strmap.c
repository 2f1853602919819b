/* strmap.c - string -> int32 hash map with linear probing (a word-at-a-
 * time multiply hash, with a final mix so that every bit of the hash
 * depends on every byte).  An
 * entry is the key's address, its hash and the value, 16 bytes: a probe
 * touches one cache line and compares key bytes only when the hashes
 * agree.  (At 10^7 tensor names, 24-byte entries at half load were 0.8 GB
 * of table for the kernel to zero; these at most 3/4 full, 0.27 GB.)  A
 * key's first slot is its hash scaled to the table (hash * cap / 2^32), so
 * that slots follow hashes in order: keys added in order of their hashes'
 * top bits write the table in one sweep (mp_strmap_put_all).
 * Invariants: cap is a power of two, at most 2^32, and count < cap * 3/4;
 * a key is a NUL-terminated string, never moved while in the map. */
#include "internal.h"

/* Eight bytes at s as a little-endian word: the same value on every
 * machine, and one load on most (the compiler merges the bytes). */
static inline uint64_t le8(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

/* The last r < 8 bytes of s[0..n) as a little-endian word: in one load
 * ending at s + n when there are eight bytes to read back from. */
static inline uint64_t le_tail(const char *s, size_t n, size_t r) {
    if (n >= 8) return r ? le8(s + n - 8) >> (8 * (8 - r)) : 0;
    uint64_t w = 0;
    for (size_t i = 0; i < r; i++) w |= (uint64_t)(unsigned char)s[n - r + i] << (8 * i);
    return w;
}

/* Eight bytes a step, each word folded in by a multiply, then a final
 * mix so that every bit of the hash depends on every byte.  (FNV-1a, a
 * multiply a byte, was 3.5% of a 10^7-tensor verify: names are hashed
 * where they are declared and where they are read.) */
uint32_t mp_strmap_hash(const char *s, size_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        h = (h ^ le8(s + k)) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    h = (h ^ le_tail(s, n, n - k)) * 0x94d049bb133111ebull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(h ^ (h >> 32));
}

void mp_strmap_init(mp_strmap *m) { memset(m, 0, sizeof *m); }

void mp_strmap_free(mp_strmap *m) {
    mp_xfree(m->e);
    memset(m, 0, sizeof *m);
}

static size_t home(const mp_strmap *m, uint32_t h) {
    return (size_t)(((uint64_t)h * m->cap) >> 32); /* cap <= 2^32: no overflow */
}

/* The slot of key s (len bytes, which need not end in a NUL) with hash h:
 * where it is, or the empty slot where it would go. */
static size_t find(const mp_strmap *m, const char *s, size_t len, uint32_t h) {
    for (size_t mask = m->cap - 1, i = home(m, h);; i = (i + 1) & mask) {
        const mp_strmap_entry *e = &m->e[i];
        if (!e->key || (e->hash == h && strnlen(e->key, len + 1) == len && memcmp(e->key, s, len) == 0))
            return i;
    }
}

/* Entry e put unless its key is there: -1, else the value there. */
static int32_t put_entry(mp_strmap *m, const mp_strmap_entry *e) {
    for (size_t mask = m->cap - 1, i = home(m, e->hash);; i = (i + 1) & mask) {
        mp_strmap_entry *at = &m->e[i];
        if (!at->key) {
            *at = *e;
            m->count++;
            return -1;
        }
        if (at->hash == e->hash && strcmp(at->key, e->key) == 0) return at->val;
    }
}

/* Rehash into cap slots (a power of two, over 4/3 of the count). */
static void rehash(mp_strmap *m, size_t cap) {
    mp_strmap old = *m;
    m->cap = cap;
    m->count = 0;
    m->e = mp_xcalloc(m->cap, sizeof *m->e);
    for (size_t i = 0; i < old.cap; i++)
        if (old.e[i].key) put_entry(m, &old.e[i]);
    mp_xfree(old.e);
}

/* Room for one more key: under 3/4 full after it. */
static bool full(size_t count, size_t cap) { return (count + 1) * 4 > cap * 3; }

int32_t mp_strmap_put(mp_strmap *m, const char *key, size_t len, int32_t val) {
    if (full(m->count, m->cap)) rehash(m, m->cap ? m->cap * 2 : 64);
    mp_strmap_entry e = {key, mp_strmap_hash(key, len), val};
    return put_entry(m, &e);
}

/* put_all below this many keys: one by one (the sweep's buckets cost more
 * than they save) */
#define PUT_ALL_MIN 4096
#define PUT_ALL_BITS 11

/* e put, or, when its key is there, counted in *first (the smallest value
 * of such a key) and *prev (the value there) */
static void put_counted(mp_strmap *m, const mp_strmap_entry *e, int32_t *first, int32_t *prev) {
    int32_t there = put_entry(m, e);
    if (there >= 0 && (*first < 0 || e->val < *first)) {
        *first = e->val;
        *prev = there;
    }
}

int32_t mp_strmap_put_all(mp_strmap *m, size_t n, mp_strmap_get_fn get, void *ctx,
                          int32_t *prev) {
    mp_strmap_reserve(m, m->count + n);
    mp_strmap_entry e;
    int32_t first = -1;
    if (n < PUT_ALL_MIN) {
        for (size_t k = 0; k < n; k++) {
            get(ctx, k, &e);
            put_counted(m, &e, &first, prev);
        }
        return first;
    }
    /* a stable counting sort by the hash's top bits: each bucket's keys
     * land in one stretch of the table (1/2048th of it), which stays in
     * the cache while they go in; equal keys share a bucket, in k order,
     * so the first of them goes in */
    size_t *at = mp_xcalloc((1u << PUT_ALL_BITS) + 1, sizeof *at);
    for (size_t k = 0; k < n; k++) {
        get(ctx, k, &e);
        at[(e.hash >> (32 - PUT_ALL_BITS)) + 1]++;
    }
    for (size_t b = 0; b < (1u << PUT_ALL_BITS); b++) at[b + 1] += at[b];
    mp_strmap_entry *sorted = mp_xmalloc(n * sizeof *sorted);
    for (size_t k = 0; k < n; k++) {
        get(ctx, k, &e);
        sorted[at[e.hash >> (32 - PUT_ALL_BITS)]++] = e;
    }
    mp_xfree(at);
    for (size_t q = 0; q < n; q++) put_counted(m, &sorted[q], &first, prev);
    mp_xfree(sorted);
    return first;
}

int32_t mp_strmap_get(const mp_strmap *m, const char *key, size_t len) {
    return mp_strmap_get_hashed(m, key, len, mp_strmap_hash(key, len));
}

int32_t mp_strmap_get_hashed(const mp_strmap *m, const char *key, size_t len, uint32_t hash) {
    if (!m->cap) return -1;
    const mp_strmap_entry *e = &m->e[find(m, key, len, hash)];
    return e->key ? e->val : -1;
}

void mp_strmap_reserve(mp_strmap *m, size_t n) {
    size_t cap = m->cap ? m->cap : 64;
    while (full(n, cap) && cap < ((size_t)1 << 32)) cap *= 2;
    if (cap > m->cap) rehash(m, cap);
}
