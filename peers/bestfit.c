/* bestfit.c - the planner table's "bestfit": XLA's heap simulator
 * (GlobalDecreasingSizeBestFitHeap).  Buffers are taken by size, largest
 * first; each goes into the smallest free gap that holds it among the
 * already placed buffers whose lifetimes overlap its own (the lowest such
 * gap on a tie), or on top of them when no gap does.  O(n^2). */
#include "peers.h"

uint64_t mp_bestfit_pack(pk_item *items, uint32_t n) {
    uint32_t *order = mp_xmalloc((n + 1) * sizeof *order);
    uint32_t k = mp_pr_order_by_size(items, n, order);
    pr_placed placed;
    mp_pr_placed_init(&placed, items, n);
    for (uint32_t q = 0; q < k; q++) {
        pk_item *it = &items[order[q]];
        uint64_t free_from = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
        for (uint32_t j = 0; j < placed.n; j++) { /* gaps below each overlapping item */
            const pk_item *p = &items[placed.v[j]];
            if (!pr_overlap(it, p)) continue;
            if (p->offset > free_from) {
                uint64_t gap = p->offset - free_from;
                if (gap >= it->size && gap < best_gap) best = free_from, best_gap = gap;
            }
            uint64_t end = mp_sat_add_u64(p->offset, p->size);
            if (end > free_from) free_from = end;
        }
        it->offset = best != UINT64_MAX ? best : free_from; /* else on top */
        mp_pr_placed_insert(&placed, items, order[q]);
    }
    mp_xfree(order);
    mp_xfree(placed.v);
    return mp_pr_peak(items, n);
}

mp_plan *mp_bestfit_plan(const mp_program *prog, const mp_options *o, mp_err *err) {
    return mp_opt_plan_packed(prog, o, mp_bestfit_pack, "bestfit", err);
}
