/* sort.h - the packer's two-key radix sort (sort.c); the pair sort it
 * builds on is core's (mp_sort_pairs). */
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

#endif
