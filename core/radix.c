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

mp_pair *mp_sort_pairs(mp_pair *a, mp_pair *b, uint32_t n, int bits) {
    int passes = (bits + RADIX_BITS - 1) / RADIX_BITS;
    uint32_t (*at)[RADIX_DIGITS] = mp_xcalloc((size_t)passes + 1, sizeof *at);
    for (uint32_t q = 0; q < n; q++)
        for (int p = 0; p < passes; p++) at[p][(a[q].key >> (p * RADIX_BITS)) & (RADIX_DIGITS - 1)]++;
    for (int p = 0; p < passes; p++) {
        uint32_t sum = 0;
        for (uint32_t d = 0; d < RADIX_DIGITS; d++) {
            uint32_t c = at[p][d];
            at[p][d] = sum;
            sum += c;
        }
        for (uint32_t q = 0; q < n; q++) b[at[p][(a[q].key >> (p * RADIX_BITS)) & (RADIX_DIGITS - 1)]++] = a[q];
        mp_pair *t = a;
        a = b;
        b = t;
    }
    mp_xfree(at);
    return a;
}
