/* peers.h - what the peer planners share: the order they place items in
 * and the placed items sorted by offset (placed.c).  A peer planner is the
 * optimized planner's program driver (opt.h) with a packer of its own. */
#ifndef MP_PEERS_H
#define MP_PEERS_H

#include "opt.h"

/* Item indices by size, largest first; equal sizes in index order (the
 * order a stable sort keeps, as TFLite Micro's and XLA's do).  Fixed
 * items are left out: they are placed before anything else.  Returns the
 * count written to order (n entries allocated by the caller). */
uint32_t mp_pr_order_by_size(const pk_item *items, uint32_t n, uint32_t *order);

/* The placed items, by offset (then index): an insertion-sorted array. */
typedef struct pr_placed {
    uint32_t *v;
    uint32_t n;
} pr_placed;

/* Place the fixed items, start the list; free v with mp_xfree. */
void mp_pr_placed_init(pr_placed *p, const pk_item *items, uint32_t n);
void mp_pr_placed_insert(pr_placed *p, const pk_item *items, uint32_t i);
/* Whether two items are live at once (inclusive lifetimes). */
static inline bool mp_pr_overlap(const pk_item *a, const pk_item *b) {
    return a->start <= b->end && b->start <= a->end;
}
/* The peak of a layout: the largest offset + size (saturating). */
uint64_t mp_pr_peak(const pk_item *items, uint32_t n);

/* Where an item goes, given the placed items by offset. */
typedef uint64_t (*pr_choose)(const pk_item *items, const pr_placed *placed, const pk_item *it);
/* The peers' packing: the fixed items first, then the others by size,
 * largest first, each where `choose` puts it.  Returns the peak. */
uint64_t mp_pr_pack(pk_item *items, uint32_t n, pr_choose choose);

/* The peer planners (the planner table's "tflm" and "bestfit") and their
 * packers (pk_packer), which the tests call on item lists directly. */
uint64_t mp_tflm_pack(pk_item *items, uint32_t n);
uint64_t mp_bestfit_pack(pk_item *items, uint32_t n);
mp_plan *mp_tflm_plan(const mp_program *prog, const mp_options *o, mp_err *err);
mp_plan *mp_bestfit_plan(const mp_program *prog, const mp_options *o, mp_err *err);

#endif
