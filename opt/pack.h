/* pack.h - the optimized planner's core: lay out one buffer.
 *
 * Items have a size and an inclusive lifetime [start, end] in node indices;
 * two items whose lifetimes overlap must not share a byte.  The packer
 * chooses offsets that keep the peak (largest offset + size) low.  Sizes
 * are multiples of the alignment and every offset is 0 or the end of
 * another item, so offsets stay aligned.
 *
 * Effort is counted in work units (neighbour visits), never in wall-clock
 * time, so that a result never depends on the machine's speed. */
#ifndef MP_PACK_H
#define MP_PACK_H

#include "internal.h"

typedef struct pk_item {
    uint64_t size;
    int32_t start, end; /* inclusive */
    bool fixed;         /* pre-placed at `offset` */
    uint64_t offset;    /* result (or the fixed position) */
} pk_item;

typedef struct pk_params {
    uint64_t work;       /* improvement budget, work units */
    bool exact;          /* search for the optimum */
    uint64_t exact_work; /* exact search budget, work units */
    /* bottom-up constructions allowed (0: PK_BOTTOM_UP_RUNS); the caller
     * lowers it in large programs, where they dominate the time */
    uint32_t bottom_up_runs;
    /* a first layout only, O(n log n): the time-ordered sweep, no other
     * construction, no improvement, no exact search; for buffers whose
     * size may turn out not to matter (sub-graphs, opt.c) */
    bool quick;
} pk_params;

#define PK_BOTTOM_UP_RUNS 4

/* What became of the exact search of one buffer (--exact). */
typedef enum pk_exact_outcome {
    PK_X_NOT_ASKED,  /* no --exact, or a quick layout */
    PK_X_AT_BOUND,   /* the heuristics reached the lower bound: nothing to search */
    PK_X_PROVED,     /* the search proved its layout optimal */
    PK_X_BUDGET,     /* the search stopped at its work limit (--exact-ms) */
    PK_X_TOO_LARGE,  /* not attempted: the search's tables would exceed their size limit */
    PK_X_WIDE,       /* not attempted: the sizes sum past 64 bits */
} pk_exact_outcome;

typedef struct pk_stats {
    uint64_t peak, lower_bound;
    bool optimal;        /* peak == lower bound, or proved by the search */
    bool exact_ran;
    pk_exact_outcome outcome;
    uint64_t proved_bound; /* best bound the exact search proved */
    uint32_t heuristic;  /* which ordering won */
    uint64_t work_used;
} pk_stats;

/* Work units per millisecond of --budget-ms: a fixed calibration (measured
 * once on a 2-core x86-64 machine), so budgets mean the same work anywhere. */
#define PK_WORK_PER_MS 40000u
/* The exact search's units are cheaper (array scans): its own rate. */
#define PK_EXACT_WORK_PER_MS 250000u

/* Lay out the items (offsets written back); returns the peak. */
uint64_t mp_pk_solve(pk_item *items, uint32_t n, const pk_params *p, pk_stats *st);
/* The largest total size live at one node: no layout can beat it. */
uint64_t mp_pk_lower_bound(const pk_item *items, uint32_t n);
/* The same, and (at, when not NULL) the first node where it is reached. */
uint64_t mp_pk_live_peak(const pk_item *items, uint32_t n, int32_t *at);
/* Overlapping pairs of n lifetimes [s, e] (intervals, s <= e) and,
 * when deg is not NULL, each one's conflicts, without listing them: of
 * the others, all but those that start after it ends and those that end
 * before it starts.  O(n log n) where the conflict graph is O(n + P). */
uint64_t mp_pk_count_conflicts(const int32_t *s, const int32_t *e, uint32_t n, uint32_t *deg);

/* Time-ordered first-fit over free gaps (sweep.c): the fallback when the
 * conflict graph is too large to store.  Returns the peak. */
uint64_t mp_pk_sweep(pk_item *items, uint32_t n);
/* How the anchored sweep stacks the items live at the busiest node: by
 * size (largest lowest), or in a V split where an item lived before the
 * node less than 1, 4 or 1/4 times as long as from it on (sweep.c). */
typedef enum mp_pk_stack {
    MP_PK_STACK_SIZE,
    MP_PK_STACK_VEE_1,
    MP_PK_STACK_VEE_4,
    MP_PK_STACK_VEE_QUARTER,
    MP_PK_STACKS
} mp_pk_stack;
/* The same run forward and backward from a stack of the items live at the
 * busiest node (sweep.c).  Returns the peak, UINT64_MAX (no layout) when
 * an item is fixed. */
uint64_t mp_pk_sweep_anchored(pk_item *items, uint32_t n, mp_pk_stack rule);

/* Exact search (exact.c); improves `items` in place when it finds a layout
 * below `best` (their peak), returns the best peak found.  The capacities
 * it tries start below `start` (>= best), a peak that does not depend on
 * the improvement budget, so that more budget never gives a worse result. */
uint64_t mp_pk_exact(pk_item *items, uint32_t n, uint64_t best, uint64_t start, uint64_t lower,
                     uint64_t budget, bool *proved, uint64_t *proved_bound, uint64_t *work,
                     pk_exact_outcome *outcome);

/* A time span short enough to index an array by time (counting sorts,
 * prefix sums over it): at most 4 slots per item, plus 1 KiB of slack for
 * small buffers; longer spans (sparse times) take the sorting paths. */
static inline bool mp_pk_span_dense(uint64_t span, uint64_t n) { return span <= 4 * n + 1024; }

#endif
