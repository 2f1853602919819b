/* sort.h - the packer's radix sorts (sort.c). */
#ifndef MP_SORT_H
#define MP_SORT_H

#include "internal.h"

/* An index with two sort keys. */
typedef struct pk_keyed {
    uint64_t k1, k2;
    uint32_t i;
} pk_keyed;

/* Sorts by k1 descending, then k2 descending, then i ascending, as a
 * comparison sort would, when v[] arrives in ascending i.  O(n) a pass. */
void mp_pk_sort_desc(pk_keyed *v, uint32_t n);
/* A key and what it belongs to. */
typedef struct pk_pair {
    uint64_t key;
    uint32_t at;
} pk_pair;

/* A stable LSD radix sort of a[] by key ascending, where every key is
 * below 2^bits; b[] is scratch of n pairs.  Returns a or b, whichever
 * holds the sorted pairs. */
pk_pair *mp_pk_sort_pairs(pk_pair *a, pk_pair *b, uint32_t n, int bits);
/* Bits needed to write x (0 for 0). */
int mp_pk_bit_width(uint64_t x);

#endif
