/* peers.h - what the peer planners share: the order they place items in
 * and the placed items sorted by offset (placed.c).  A peer planner is the
 * optimized planner's program driver (opt.h) with a packer of its own. */
#ifndef MP_PEERS_H
#define MP_PEERS_H

#include "gaps.h"
#include "opt.h"

/* Item indices by size, largest first; equal sizes in index order (the
 * order a stable sort keeps, as TFLite Micro's and XLA's do).  Fixed
 * items are left out: they are placed before anything else.  Returns the
 * count written to order (n entries allocated by the caller). */
uint32_t mp_pr_order_by_size(const pk_item *items, uint32_t n, uint32_t *order);

/* The placed items, indexed by time (placed.c): a segment tree over time
 * whose nodes list the items covering them, and the items by start. */
typedef struct pr_placed {
    const pk_item *items;
    uint32_t *rs, *re;                /* per item: its start's and end's rank among the times */
    uint32_t leaves;                  /* a power of two past the last time */
    uint32_t *node_head;              /* per tree node: its first entry + 1 */
    uint32_t *ent_item, *ent_next;    /* entries: an item, the next entry + 1 */
    uint32_t n_ent, cap_ent;
    uint32_t *start_head, *next_start; /* per time, per item: items by start (+ 1) */
    uint64_t *start_bits;             /* the times where an item starts */
    uint32_t *out, *all;              /* a query's answer; every placed item */
    struct mp_pair *pairs;            /* 2n: the radix sort's of the answer */
    uint32_t n;                       /* placed so far */
    uint32_t *fen_start, *fen_end;    /* Fenwick trees: placed items by start, by end */
    pr_gaps gaps;                     /* the free gaps among all placed items */
    bool plain;                       /* an item without an interval: scan all */
} pr_placed;

/* Place the fixed items, start the index; mp_pr_placed_free frees it. */
void mp_pr_placed_init(pr_placed *p, const pk_item *items, uint32_t n);
void mp_pr_placed_insert(pr_placed *p, uint32_t i);
void mp_pr_placed_free(pr_placed *p);
/* Whether two items are live at once (inclusive lifetimes). */
static inline bool mp_pr_overlap(const pk_item *a, const pk_item *b) {
    return a->start <= b->end && b->start <= a->end;
}
/* The peak of a layout: the largest offset + size (saturating). */
uint64_t mp_pr_peak(const pk_item *items, uint32_t n);

/* Where an item goes, given the placed items live with it, by offset. */
typedef uint64_t (*pr_choose)(const pk_item *items, const uint32_t *meet, uint32_t n, const pk_item *it);
/* The same answer when every placed item is live with it, from the gaps. */
typedef uint64_t (*pr_choose_all)(const pr_gaps *gaps, uint64_t size);
/* The peers' packing: the fixed items first, then the others by size,
 * largest first, each where `choose` puts it.  Returns the peak. */
uint64_t mp_pr_pack(pk_item *items, uint32_t n, pr_choose choose, pr_choose_all choose_all);

/* The peer planners (the planner table's "tflm" and "bestfit") and their
 * packers (pk_packer), which the tests call on item lists directly. */
uint64_t mp_tflm_pack(pk_item *items, uint32_t n);
uint64_t mp_bestfit_pack(pk_item *items, uint32_t n);
mp_plan *mp_tflm_plan(const mp_program *prog, const mp_options *o, mp_err *err);
mp_plan *mp_bestfit_plan(const mp_program *prog, const mp_options *o, mp_err *err);

#endif
