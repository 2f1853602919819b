/* opt.h - what the optimized planner offers the layers above it: its plan
 * functions (the planner table's "opt"), and its program driver with
 * another packer for the peer planners (peers/), which then plan the same
 * problem model (control flow, devices, pools, in-place families,
 * alignment) and differ only in how one buffer's items are placed. */
#ifndef MP_OPT_H
#define MP_OPT_H

#include "pack.h"

/* How much effort each sub-graph's layout gets. */
typedef enum mp_opt_effort {
    MP_OPT_LAZY,  /* quick layouts, full effort where it can lower the total */
    MP_OPT_FULL,  /* full effort for every buffer of every graph */
    MP_OPT_QUICK, /* quick layouts for every sub-graph (tests: the baseline) */
} mp_opt_effort;

/* The optimized planner (MP_OPT_LAZY): opt's own layout.  It refuses
 * (MP_EPLAN, err->limit) a layout past 64 bits; mp_plan_program's
 * portfolio (api/portfolio.c) then plans with the reference greedy, and
 * below its size threshold keeps greedy's plan where that is smaller. */
mp_plan *mp_opt_plan(const mp_program *prog, const mp_options *o, mp_err *err);
/* The same with a choice of effort. */
mp_plan *mp_opt_plan_effort(const mp_program *prog, const mp_options *o, mp_opt_effort effort,
                            mp_err *err);

/* What opt's lazy layout did before refining whole cond blocks (opt.c's
 * split_first). */
typedef enum mp_opt_first {
    MP_OPT_FIRST_NOT_TRIED, /* no block splits, or not lazy effort, --exact, a memory map, a peer */
    MP_OPT_FIRST_AT_BOUND,  /* the whole blocks' quick layout is at the true bound */
    MP_OPT_FIRST_NO_GAIN,   /* no split layout can go below the whole blocks' bound */
    MP_OPT_FIRST_PLANNED,   /* the split layout, below that bound, planned; whole never refined */
    MP_OPT_FIRST_RESUMED,   /* the split layout tried; the whole blocks' put back and resumed */
    MP_OPT_FIRST_RESTARTED, /* its refinement rose to the bound: planned again, whole first */
} mp_opt_first;

/* opt's own layout at `effort` (as mp_opt_plan) with the split
 * layout tried first where it may rule the whole blocks out
 * (split_first), or not (the whole blocks always first, as before 1.7.3);
 * *first: what happened.  Tests: both orders give the same plan, but for
 * the split one planned first at lazy effort.  Split_first applies at
 * MP_OPT_QUICK here, which opt itself never uses. */
mp_plan *mp_opt_plan_order(const mp_program *prog, const mp_options *o, mp_opt_effort effort, bool split_first,
                           mp_opt_first *first, mp_err *err);

/* Test hook: split_first's bounds of the graphs a split changes, made
 * without their layouts, against the whole blocks' quick layouts' own:
 * the number of (graph, buffer) bounds that differ, or -1 where
 * split_first would not compute them (no split, pins, very many graphs,
 * sums near 64 bits). */
int mp_opt_bounds_check(const mp_program *prog, const mp_options *o, mp_err *err);

/* Place one buffer's items (pk_item: size, inclusive lifetime; fixed ones
 * stay where they are) so that no two live at once overlap; return the
 * peak (largest offset + size), UINT64_MAX past 64 bits. */
typedef uint64_t (*pk_packer)(pk_item *items, uint32_t n);

/* Plan with opt's driver, every buffer laid out by `pack`, and the plan
 * named `algo_name`; no greedy safety net, no fallback: the peer's own
 * layout or its refusal. */
mp_plan *mp_opt_plan_packed(const mp_program *prog, const mp_options *o, pk_packer pack,
                            const char *algo_name, mp_err *err);

/* reorder.c (issue 50): the program with each graph's nodes in an order
 * of lower peak live bytes (see the file); *out a new program.  The
 * entry graphs' largest peak before and after, and whether every graph's
 * order was proved optimal by the exact search (NULL: not wanted). */
int mp_reorder_run(const mp_program *prog, const mp_options *opts, uint32_t effort, mp_program **out,
                   uint64_t *peak_before, uint64_t *peak_after, int *optimal, mp_err *err);

#endif
