/* sort.c - the packer's two-key orders, as stable LSD radix sorts over
 * core/radix.c's pair sort: orders of 10^5 items are sorted many times a
 * layout, and a comparison sort with a callback costs several times more. */
#include "sort.h"

_Static_assert(sizeof(pk_keyed) <= MP_PERMUTE_MAX, "keyed items are permuted in place");

static void sort_packed(pk_keyed *v, uint32_t n, int w1, int w2) {
    uint64_t m1 = w1 == 64 ? UINT64_MAX : (UINT64_C(1) << w1) - 1;
    uint64_t m2 = w2 == 64 ? UINT64_MAX : (UINT64_C(1) << w2) - 1;
    int w = w1 + w2;
    uint64_t all = w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
    mp_pair *a = mp_xmalloc((2 * (size_t)n + 1) * sizeof *a);
    for (uint32_t q = 0; q < n; q++) {
        uint64_t k = (w1 ? (v[q].k1 & m1) << w2 : 0) | (v[q].k2 & m2);
        a[q] = (mp_pair){~k & all, q}; /* complemented: ascending is the wanted order */
    }
    /* in place: at 10^7 items a third array was a third of the sort's 0.8 GB */
    mp_sort_by_pairs(v, sizeof *v, a, n, w);
    mp_xfree(a);
}

/* Sorts by k1 descending, then k2 descending, then i ascending, as
 * a comparison sort would, when v[] arrives in ascending i: a stable LSD radix
 * sort.  Only the bits on which keys differ matter (sizes and lengths are
 * small numbers): when those of k1 and k2 fit one word together, one
 * packed sort; else one byte at a time, skipping bytes every key shares. */
void mp_pk_sort_desc(pk_keyed *v, uint32_t n) {
    if (n < 2) return;
    uint64_t and1 = UINT64_MAX, or1 = 0, and2 = UINT64_MAX, or2 = 0;
    for (uint32_t q = 0; q < n; q++) {
        and1 &= v[q].k1, or1 |= v[q].k1;
        and2 &= v[q].k2, or2 |= v[q].k2;
    }
    uint64_t vary1 = and1 ^ or1, vary2 = and2 ^ or2;
    int w1 = mp_bit_width(vary1), w2 = mp_bit_width(vary2);
    if (w1 + w2 <= 64) {
        if (w1 + w2) sort_packed(v, n, w1, w2);
        return;
    }
    pk_keyed *tmp = mp_xmalloc((n + 1) * sizeof *tmp), *src = v, *dst = tmp;
    for (int pass = 0; pass < 16; pass++) {
        int shift = (pass & 7) * 8;
        bool hi = pass >= 8;
        if (!(((hi ? vary1 : vary2) >> shift) & 255)) continue;
        uint32_t at[257] = {0};
        for (uint32_t q = 0; q < n; q++) at[256 - (((hi ? src[q].k1 : src[q].k2) >> shift) & 255)]++;
        for (int d = 0; d < 256; d++) at[d + 1] += at[d];
        for (uint32_t q = 0; q < n; q++) dst[at[255 - (((hi ? src[q].k1 : src[q].k2) >> shift) & 255)]++] = src[q];
        pk_keyed *t = src;
        src = dst;
        dst = t;
    }
    if (src != v) memcpy(v, src, n * sizeof *v);
    mp_xfree(tmp);
}
