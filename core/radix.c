/* radix.c - a stable LSD radix sort of (key, position) pairs: the
 * planners' and the verifier's big orders (10^7 items) in a few linear
 * passes, where a comparison sort with a callback costs several times
 * more and, with glibc's merge sort, a copy of the array. */
#include "internal.h"

int mp_bit_width(uint64_t x) {
    int w = 0;
    for (; x; x >>= 1) w++;
    return w;
}

/* 11-bit digits, all histograms in one pass. */
#define RADIX_BITS 11
#define RADIX_DIGITS (1u << RADIX_BITS)

/* The sort itself, for items of `size` bytes whose key key(item) has its
 * digits from bit lo on (bits of them).  Inlined into each caller, so the
 * key and the copies are the caller's own, not calls. */
static inline void *radix_sort(void *a, void *b, uint32_t n, size_t size, int lo, int bits,
                               uint64_t (*key)(const void *)) {
    int passes = (bits + RADIX_BITS - 1) / RADIX_BITS;
    uint32_t (*at)[RADIX_DIGITS] = mp_xcalloc((size_t)passes + 1, sizeof *at);
    for (uint32_t q = 0; q < n; q++)
        for (int p = 0; p < passes; p++)
            at[p][(key((char *)a + (size_t)q * size) >> (lo + p * RADIX_BITS)) & (RADIX_DIGITS - 1)]++;
    for (int p = 0; p < passes; p++) {
        uint32_t sum = 0;
        for (uint32_t d = 0; d < RADIX_DIGITS; d++) {
            uint32_t c = at[p][d];
            at[p][d] = sum;
            sum += c;
        }
        for (uint32_t q = 0; q < n; q++) {
            const char *x = (char *)a + (size_t)q * size;
            uint32_t to = at[p][(key(x) >> (lo + p * RADIX_BITS)) & (RADIX_DIGITS - 1)]++;
            memcpy((char *)b + (size_t)to * size, x, size);
        }
        void *t = a;
        a = b;
        b = t;
    }
    mp_xfree(at);
    return a;
}

static uint64_t pair_key(const void *p) { return ((const mp_pair *)p)->key; }
static uint64_t word_key(const void *p) { return *(const uint64_t *)p; }

mp_pair *mp_sort_pairs(mp_pair *a, mp_pair *b, uint32_t n, int bits) {
    return radix_sort(a, b, n, sizeof *a, 0, bits, pair_key);
}

uint64_t *mp_sort_words(uint64_t *a, uint64_t *b, uint32_t n, int lo, int bits) {
    return radix_sort(a, b, n, sizeof *a, lo, bits, word_key);
}
