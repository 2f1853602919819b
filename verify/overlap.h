/* overlap.h - what the overlap sweep (overlap.c) sweeps, shared with its
 * fast path (disjoint.c). */
#ifndef MP_VERIFY_OVERLAP_H
#define MP_VERIFY_OVERLAP_H

#include "verify.h"

/* 40 bytes: an allocation's item has nothing more, and a graph of 10^7
 * allocations holds that many at once (56 bytes each, as they were, made
 * 0.44 GB at the verifier's peak).  The few footprints and escapes keep
 * the rest in a list of extras beside the items (overlap.c). */
typedef struct v_item {
    uint64_t buffer, lo, hi;
    int32_t start, end;
    int32_t family; /* in-place family (>= 0); below 0 a footprint's or an
                     * escape's mark (special_mark): its kind and its extra */
    int32_t alloc;  /* alloc index; a footprint's node; an escape's alloc in its
                     * branch, in this graph (operand), or -1 */
} v_item;

/* An item's end, in the order items retire: by buffer, then end, then
 * index.  The buffer is not kept: the items and their ends are sorted by
 * buffer first alike, so a buffer's ends sit at the same positions as its
 * items (8 bytes an item, not 16: 63 MB at 10^7 allocations). */
typedef struct v_ending {
    int32_t end;
    uint32_t idx;
} v_ending;

/* One buffer's items ranked by (offset, index): rank[q] of item q, and
 * who[r] the item at rank r. */
typedef struct v_ranks {
    uint32_t *rank, *who;
} v_ranks;

/* The ranks of one buffer's items it[0..n), or false (nothing allocated)
 * when the run is too small for the fast path or its offsets too wide. */
bool mp_v_offset_ranks(const v_item *it, uint32_t n, v_ranks *r);
void mp_v_ranks_free(v_ranks *r);

/* True when the sweep of one buffer's items it[0..n) (in start order,
 * ranked by r; their ends by_end[0..n), whose idx count from `base`)
 * would meet no two live items sharing a byte other than twins, so it has
 * nothing to report.  False when they may: then the caller sweeps with
 * the interval tree. */
bool mp_v_sweep_disjoint(const v_item *it, uint32_t n, const v_ending *by_end, uint32_t base,
                         const v_ranks *r);

#endif
