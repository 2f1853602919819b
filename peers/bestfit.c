/* bestfit.c - the planner table's "bestfit": XLA's heap simulator
 * (GlobalDecreasingSizeBestFitHeap).  Buffers are taken by size, largest
 * first; each goes into the smallest free gap that holds it among the
 * already placed buffers whose lifetimes overlap its own (the lowest such
 * gap on a tie), or on top of them when no gap does.  O(n^2) in XLA;
 * here the scan meets only the buffers live with the new one (placed.c). */
#include "peers.h"

/* The smallest gap that holds it, else the top of what it overlaps. */
static uint64_t best_fit(const pk_item *items, const uint32_t *meet, uint32_t n, const pk_item *it) {
    uint64_t free_from = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
    for (uint32_t j = 0; j < n; j++) { /* gaps below each overlapping item */
        const pk_item *p = &items[meet[j]];
        if (p->offset > free_from) {
            uint64_t gap = p->offset - free_from;
            if (gap >= it->size && gap < best_gap) best = free_from, best_gap = gap;
        }
        uint64_t end = mp_sat_add_u64(p->offset, p->size);
        if (end > free_from) free_from = end;
    }
    return best != UINT64_MAX ? best : free_from;
}

uint64_t mp_bestfit_pack(pk_item *items, uint32_t n) { return mp_pr_pack(items, n, best_fit, mp_gaps_best_fit); }

mp_plan *mp_bestfit_plan(const mp_program *prog, const mp_options *o, mp_err *err) {
    return mp_opt_plan_packed(prog, o, mp_bestfit_pack, "bestfit", err);
}
