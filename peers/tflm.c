/* tflm.c - the planner table's "tflm": TensorFlow Lite Micro's
 * greedy-by-size memory planner (GreedyMemoryPlanner).  Buffers are taken
 * by size, largest first; each goes at the lowest offset where it fits
 * between the already placed buffers whose lifetimes overlap its own,
 * scanned in offset order.  O(n^2) per buffer list in TFLite Micro; here
 * the scan meets only the buffers live with the new one (placed.c). */
#include "peers.h"

/* The lowest offset below every overlapping placed item it would touch
 * (meet: those items, by offset). */
static uint64_t lowest_fit(const pk_item *items, const uint32_t *meet, uint32_t n, const pk_item *it) {
    uint64_t at = 0;
    for (uint32_t j = 0; j < n; j++) {
        const pk_item *p = &items[meet[j]];
        uint64_t p_end = mp_sat_add_u64(p->offset, p->size);
        if (mp_sat_add_u64(at, it->size) > p->offset && p_end > at) at = p_end; /* no room below p */
    }
    return at;
}

uint64_t mp_tflm_pack(pk_item *items, uint32_t n) { return mp_pr_pack(items, n, lowest_fit, mp_gaps_lowest_fit); }

mp_plan *mp_tflm_plan(const mp_program *prog, const mp_options *o, mp_err *err) {
    return mp_opt_plan_packed(prog, o, mp_tflm_pack, "tflm", err);
}
