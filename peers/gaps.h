/* gaps.h - the free gaps among all placed items (gaps.c), for the peers'
 * scans when every placed item is live with the new one. */
#ifndef MP_GAPS_H
#define MP_GAPS_H

#include "opt.h"

typedef struct pr_gaps {
    struct gnode *v;
    uint32_t n, cap, root[2], seed;
} pr_gaps;

void mp_gaps_init(pr_gaps *g);
void mp_gaps_free(pr_gaps *g);
/* An item placed at offset: its bytes leave the gaps (an empty one splits
 * the gap it is inside). */
void mp_gaps_place(pr_gaps *g, uint64_t offset, uint64_t size);
/* TFLite Micro's lowest fit, XLA's best fit (gaps.c) of a size. */
uint64_t mp_gaps_lowest_fit(const pr_gaps *g, uint64_t size);
uint64_t mp_gaps_best_fit(const pr_gaps *g, uint64_t size);

#endif
