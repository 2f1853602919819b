/* opt_internal.h - the optimized planner's internals, shared by opt.c
 * (checks, graph shape, plan output, driver) and layout.c (items per
 * buffer, where effort goes). */
#ifndef MP_OPT_INTERNAL_H
#define MP_OPT_INTERNAL_H

#include "opt.h"

/* One graph of the program as opt lays it out. */
typedef struct ograph {
    mp_life life;
    bool have_life; /* life computed (every reachable graph) */
    mp_escape keep;  /* how long bytes must survive, cond results (D14) */
    bool done;
    int32_t *specs;
    uint32_t n_specs;
    uint8_t *planned;
    int32_t *family;  /* per tensor: its in-place family's root */
    uint64_t *shift;  /* per tensor: where it starts in its family root's bytes
                       * (mp_inplace_shifts), NULL when every member is at 0 */
    uint64_t *asize;  /* per tensor: aligned size */
    uint32_t *bidx;   /* per tensor: global buffer index (every count of buffers
                       * is a uint32_t; 4 bytes, not 8: 40 MB at 10^7) */
    uint64_t *loff;   /* per tensor: offset relative to the graph's base */
    uint64_t *local;  /* per buffer: bytes the graph needs from its base */
    uint64_t *base;   /* per buffer: where the graph's region starts */
    uint64_t *lb;     /* per buffer: live-bytes bound of the last layout */
    uint64_t *hlb;    /* per buffer: the bound with every sub-graph at its own */
    uint64_t *tlb;    /* per buffer: that with each cond block live at its node alone */
    uint8_t *full;    /* per buffer: laid out with full effort */
    uint32_t n_buf;
    bool xnnpack;     /* a delegate to XNNPACK: its buffers get 64 bytes of padding */
    /* per node: per buffer offset of its sub-graph item, b in [0, n_buf];
     * of a split block (split.c) the rest's, then the escaping values' at
     * [n_buf + 1 + b] */
    uint64_t **block;
    /* a branch of a split block (split.c), else NULL: per tensor, 1 for an
     * in-place family root whose bytes a cond result keeps after the cond,
     * laid out from split[b] up, apart from the rest, at ebase[b] + loff */
    uint8_t *esc;
    uint64_t *split;  /* per buffer: where those values start (local if none) */
    uint64_t *ebase;  /* per buffer: their region's base, as base is the rest's */
    /* specs by buffer (buf_specs[buf_start[b] .. buf_start[b + 1]), b below
     * n_own_buf) and the nodes that run sub-graphs: a buffer's layout then
     * costs what it holds, not the graph's size (10^5 devices) */
    uint32_t *buf_start, *buf_specs, n_own_buf;
    uint32_t *cf_nodes, n_cf;
    int32_t *slot;    /* scratch per tensor, -1 between uses */
    /* per node, the time it starts at when its nodes carry span= and the
     * total fits the packer's int32 coordinates (mp_graph_times), or NULL:
     * once per graph, not per buffer (1,024 pools of a 10^6-node graph) */
    uint64_t *time;
    /* where the arrays above come from: a small graph's from the context's
     * arena, all freed at once (a 10^6-tensor graph of 285,000 small
     * conditionals had 7 million heap blocks, and freeing them was a
     * fifth of its plan); NULL: the heap, each array its own block */
    mp_arena *arena;
} ograph;

/* Graph G's array of n bytes (zeroed from the arena; from the heap only
 * when `zero`), and its release (nothing for an arena's). */
static inline void *mp_og_alloc(const ograph *G, size_t n, bool zero) {
    if (G->arena) return mp_arena_alloc_aligned(G->arena, n, sizeof(uint64_t)); /* the widest element */
    return zero ? mp_xcalloc(1, n) : mp_xmalloc(n);
}
static inline void mp_og_free(const ograph *G, void *p) {
    if (!G->arena) mp_xfree(p);
}

/* The whole program being planned. */
typedef struct octx {
    const mp_program *prog;
    const mp_options *o;
    mp_err *err;
    bool *reach;
    uint8_t *map_body;
    mp_table table;
    ograph *g;
    bool tree;
    uint64_t total_items, work_total;
    uint64_t total_specs; /* tensors planned in the whole program */
    mp_buf notes;
    /* --exact: buffers per pk_exact_outcome, and over the buffers not
     * proved optimal, their best peaks and proved bounds summed */
    uint32_t exact_outcomes[PK_X_WIDE + 1];
    uint64_t exact_best, exact_bound;
    const char *algo_name;  /* "opt", or the peer's name */
    pk_packer pack;         /* a peer's packer for every buffer; NULL: opt's */
    bool pins;              /* the entry graph pins a tensor (at=) */
    mp_arena *small;        /* the arrays of small graphs (ograph.arena) */
    bool split;             /* cond blocks split where they can (split.c) */
    bool splittable;        /* some cond block could split */
} octx;

/* Each reachable graph's buffer count and arrays (children first in
 * `order`); c->splittable. */
void mp_opt_prepare_layout(octx *c, const int32_t *order, uint32_t n);
/* Lay out every buffer of the reachable graphs, or only of those `only`
 * marks (NULL: all): MP_OPT_QUICK lays out sub-graphs quickly and the
 * entry with full effort, MP_OPT_LAZY then refines (mp_opt_refine_entry). */
int mp_opt_layout_graphs(octx *c, const int32_t *order, uint32_t n, mp_opt_effort effort, const uint8_t *only);
/* Split-first's start (opt.c): every graph outside `bounded` laid out
 * quickly as mp_opt_layout_graphs does it (children first; the entry is
 * bounded), every graph in it given only its whole-block bounds. */
int mp_opt_bound_graphs(octx *c, const int32_t *order, uint32_t n, const uint8_t *bounded);
/* The lazy effort's refinement of the entry's buffers, on quick layouts. */
int mp_opt_refine_entry(octx *c);
/* Cond blocks split where they can (split.c): c->split set, the escaping
 * values marked; the graphs that changes (per graph 1; NULL with --exact:
 * all of them), to free. */
uint8_t *mp_opt_split_marks(octx *c, const int32_t *order, uint32_t n);
/* The graphs a split changes, as mp_opt_split_marks gives them, without
 * marking anything (to free). */
uint8_t *mp_opt_split_changes(octx *c, const int32_t *order, uint32_t n);
/* Then, where some cond block can split, again with split blocks: the
 * graphs that changes laid out again, the rest kept. */
int mp_opt_layout_split(octx *c, const int32_t *order, uint32_t n, mp_opt_effort effort);
/* Some graphs' layouts saved and put back (snapshot.c): the split layout
 * tried first, the whole blocks' resumed where it does not win. */
typedef struct mp_opt_snapshot mp_opt_snapshot;
mp_opt_snapshot *mp_opt_snapshot_take(const octx *c, const uint8_t *which);
/* The saved layouts put back, the split marks dropped (mp_opt_unsplit),
 * the snapshot freed. */
void mp_opt_snapshot_restore(octx *c, mp_opt_snapshot *s);
/* No block split: c->split false, no branch's escaping values marked. */
void mp_opt_unsplit(octx *c);
void mp_opt_snapshot_free(mp_opt_snapshot *s);
/* Then place the sub-graph regions (after any spill between banks). */
void mp_opt_place_bases(octx *c, const int32_t *order, uint32_t n);
/* G's specs by buffer (buf_start, buf_specs: a counting sort, spec order
 * kept within a buffer) for buffers below nb, again after tensors moved. */
void mp_opt_index_buffers(ograph *G, uint32_t nb);
/* One buffer of graph gi laid out again with full effort (layout.c). */
int mp_opt_layout_buffer(octx *c, uint32_t gi, uint32_t b);
/* What is live at the busiest node of the entry graph's buffer b, largest
 * first, as text for a message (layout.c). */
void mp_opt_busiest(const octx *c, uint32_t b, mp_buf *out);
/* The memory map (banks.c): the entry graph's tensors without a pool of
 * their own spilled from each full bank to the next; after the layout. */
int mp_opt_spill(octx *c);
/* split.c: whether some cond's block can split; with c->split, the
 * branches whose blocks split are marked (before any layout). */
bool mp_opt_mark_escapes(octx *c, const int32_t *order, uint32_t n);
/* Whether control-flow node i of graph gi has a split block (its
 * branches were marked). */
bool mp_opt_node_splits(const octx *c, uint32_t gi, uint32_t i);
/* The escaping values' items of a branch moved after the rest (order kept
 * in each part, who along); returns how many items are the rest. */
size_t mp_opt_escapes_last(const ograph *G, pk_item *v, int32_t *who, size_t n);
/* Items v[from, n) stacked from `at` up, live over nodes 0..last; returns
 * the bytes they take (saturating). */
uint64_t mp_opt_stack_escapes(pk_item *v, size_t from, size_t n, uint64_t at, int32_t last);
/* --exact's closing status line, appended to the notes. */
void mp_opt_exact_status(octx *c);

#endif
