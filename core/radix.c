/* radix.c - a stable LSD radix sort of (key, position) pairs: the
 * planners' and the verifier's big orders (10^7 items) in a few linear
 * passes, where a comparison sort with a callback costs several times
 * more and, with glibc's merge sort, a copy of the array.  Large arrays
 * are first split by their top digit into buckets that fit the cache, and
 * each bucket is then sorted on its own (bucketed_sort). */
#include "internal.h"

int mp_bit_width(uint64_t x) {
    int w = 0;
    for (; x; x >>= 1) w++;
    return w;
}

/* 11-bit digits, all histograms in one pass. */
#define RADIX_BITS 11
#define RADIX_DIGITS (1u << RADIX_BITS)
/* A bucket's own passes: 8-bit digits, whose histograms cost little to
 * clear for each bucket. */
#define BUCKET_BITS 8
#define BUCKET_DIGITS (1u << BUCKET_BITS)
/* From this many items and two passes, whole-array passes go to memory
 * each time (at 2^20 8-byte words, 8 MB): one pass splits the array into
 * RADIX_DIGITS buckets of a few KB each, sorted in the cache. */
#define BUCKETED_MIN (UINT32_C(1) << 20)
/* A bucket of more items than this is sorted with whole-array passes */
#define BUCKET_MAX (UINT32_C(1) << 16)

typedef uint64_t (*key_fn)(const void *);

/* The LSD passes over a[] (n items of `size` bytes) for the key bits lo ..
 * lo + bits - 1, `digit` bits a pass, with at[] scratch histograms for
 * every pass (cleared here).  Inlined into each caller, so the key and the
 * copies are the caller's own, not calls.  Returns a or b, whichever holds
 * the result: a after an even number of passes. */
static inline void *lsd_passes(void *a, void *b, uint32_t n, size_t size, int lo, int bits, int digit,
                               uint32_t *at, key_fn key) {
    int passes = (bits + digit - 1) / digit;
    uint32_t digits = UINT32_C(1) << digit, mask = digits - 1;
    memset(at, 0, (size_t)passes * digits * sizeof *at);
    for (uint32_t q = 0; q < n; q++)
        for (int p = 0; p < passes; p++) at[p * digits + ((key((char *)a + (size_t)q * size) >> (lo + p * digit)) & mask)]++;
    for (int p = 0; p < passes; p++) {
        uint32_t sum = 0, *h = at + p * digits;
        for (uint32_t d = 0; d < digits; d++) {
            uint32_t c = h[d];
            h[d] = sum;
            sum += c;
        }
        for (uint32_t q = 0; q < n; q++) {
            const char *x = (char *)a + (size_t)q * size;
            memcpy((char *)b + (size_t)h[(key(x) >> (lo + p * digit)) & mask]++ * size, x, size);
        }
        void *t = a;
        a = b;
        b = t;
    }
    return a;
}

/* Whether an array is sorted by its top digit first, then bucket by
 * bucket (bucketed_sort, mp_placed_sort). */
static bool by_top_digit(uint32_t n, int bits) { return n >= BUCKETED_MIN && bits > RADIX_BITS; }

/* Histograms for a bucket's passes over its `below` bits (below >= 1):
 * 8-bit digits, or 11-bit ones for a bucket too big for the cache; room
 * for one pass over the top digit too. */
static uint32_t *bucket_histograms(int below) {
    int passes = (below + BUCKET_BITS - 1) / BUCKET_BITS, wide = (below + RADIX_BITS - 1) / RADIX_BITS;
    size_t narrow_h = (size_t)passes * BUCKET_DIGITS, wide_h = (size_t)wide * RADIX_DIGITS;
    return mp_xmalloc(((narrow_h > wide_h ? narrow_h : wide_h) + 1) * sizeof(uint32_t));
}

/* A bucket of m items sorted on its bits lo .. lo + below - 1 through
 * spare; returns v or spare, whichever holds it. */
static inline void *sort_bucket(void *v, void *spare, uint32_t m, size_t size, int lo, int below, uint32_t *h,
                                key_fn key) {
    return lsd_passes(v, spare, m, size, lo, below, m > BUCKET_MAX ? RADIX_BITS : BUCKET_BITS, h, key);
}

/* The top digit first, into b (stable), then each bucket sorted on the
 * bits below it, between a and b.  A stable sort by the top digit followed
 * by stable sorts by the rest within each bucket is the LSD sort's order
 * exactly: the result does not depend on the path.  Buckets end in the
 * array the 8-bit passes leave them in; one too big for the cache (keys
 * that do not spread over the top digit) takes the wider passes instead
 * and is copied there if it ends in the other. */
static inline void *bucketed_sort(void *a, void *b, uint32_t n, size_t size, int lo, int bits, key_fn key) {
    int top = lo + bits - RADIX_BITS, below = bits - RADIX_BITS;
    int passes = (below + BUCKET_BITS - 1) / BUCKET_BITS; /* a bucket's, when it fits the cache */
    uint32_t *first = mp_xmalloc((RADIX_DIGITS + 1) * sizeof *first), *h = bucket_histograms(below);
    (void)lsd_passes(a, b, n, size, top, RADIX_BITS, RADIX_BITS, h, key); /* a -> b */
    /* after the pass h[d] is the end of bucket d, so its start is h[d - 1] */
    first[0] = 0;
    memcpy(first + 1, h, RADIX_DIGITS * sizeof *first);
    char *into = passes % 2 ? a : b;
    for (uint32_t d = 0; d < RADIX_DIGITS; d++) {
        uint32_t m = first[d + 1] - first[d];
        size_t from = (size_t)first[d] * size;
        char *got = sort_bucket((char *)b + from, (char *)a + from, m, size, lo, below, h, key);
        if (got != into + from) memcpy(into + from, got, (size_t)m * size);
    }
    mp_xfree(h);
    mp_xfree(first);
    return into;
}

/* The sort itself, for items of `size` bytes whose key key(item) has its
 * digits from bit lo on (bits of them). */
static inline void *radix_sort(void *a, void *b, uint32_t n, size_t size, int lo, int bits, key_fn key) {
    if (by_top_digit(n, bits)) return bucketed_sort(a, b, n, size, lo, bits, key);
    int passes = (bits + RADIX_BITS - 1) / RADIX_BITS;
    uint32_t *at = mp_xmalloc(((size_t)passes * RADIX_DIGITS + 1) * sizeof *at);
    void *sorted = lsd_passes(a, b, n, size, lo, bits, RADIX_BITS, at, key);
    mp_xfree(at);
    return sorted;
}

static uint64_t pair_key(const void *p) { return ((const mp_pair *)p)->key; }
static uint64_t word_key(const void *p) { return *(const uint64_t *)p; }

mp_pair *mp_sort_pairs(mp_pair *a, mp_pair *b, uint32_t n, int bits) {
    return radix_sort(a, b, n, sizeof *a, 0, bits, pair_key);
}

uint64_t *mp_sort_words(uint64_t *a, uint64_t *b, uint32_t n, int lo, int bits) {
    return radix_sort(a, b, n, sizeof *a, lo, bits, word_key);
}

/* ------------------------------------------------ words written in place */

bool mp_placed_sort_applies(uint32_t n, int bits) { return by_top_digit(n, bits); }

void mp_placed_sort_begin(mp_placed_sort *s, uint32_t n, int lo, int bits) {
    s->words = mp_xmalloc(((size_t)n + 1) * sizeof *s->words);
    s->lo = lo, s->bits = bits;
    s->shift = lo + bits - RADIX_BITS;
    s->at = mp_xcalloc(2 * RADIX_DIGITS + 1, sizeof *s->at);
}

void mp_placed_sort_counted(mp_placed_sort *s) {
    uint32_t sum = 0, *first = s->at + RADIX_DIGITS;
    for (uint32_t d = 0; d < RADIX_DIGITS; d++) {
        first[d] = sum;
        sum += s->at[d];
        s->at[d] = first[d];
    }
    first[RADIX_DIGITS] = sum; /* == n: the counts and the words agree */
}

/* Each bucket (its words in the order they were placed: stable) sorted on
 * the bits below the top digit, as bucketed_sort sorts its buckets, through
 * scratch of the largest bucket's size. */
uint64_t *mp_placed_sort_finish(mp_placed_sort *s) {
    const uint32_t *first = s->at + RADIX_DIGITS;
    uint32_t largest = 0;
    for (uint32_t d = 0; d < RADIX_DIGITS; d++)
        if (first[d + 1] - first[d] > largest) largest = first[d + 1] - first[d];
    int below = s->bits - RADIX_BITS;
    uint32_t *h = bucket_histograms(below);
    uint64_t *scratch = mp_xmalloc(((size_t)largest + 1) * sizeof *scratch);
    for (uint32_t d = 0; d < RADIX_DIGITS; d++) {
        uint32_t m = first[d + 1] - first[d];
        uint64_t *bucket = s->words + first[d];
        uint64_t *got = sort_bucket(bucket, scratch, m, sizeof *bucket, s->lo, below, h, word_key);
        if (got != bucket) memcpy(bucket, got, (size_t)m * sizeof *bucket);
    }
    mp_xfree(scratch);
    mp_xfree(h);
    mp_xfree(s->at);
    s->at = NULL;
    return s->words;
}
