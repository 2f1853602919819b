/* problem.h - the planning problem both planners and the verifier
 * share, derived from the graph model: reachability, ExecuTorch's
 * lifetimes and spec filters, the buffer table, pools, in-place roots,
 * free points, size rounding, pins and the memory map. */
#ifndef MP_PROBLEM_H
#define MP_PROBLEM_H

#include "base.h"
#include "model.h"

/* --- the model (graph_model.c, file.c, plan_write.c) */
/* Graphs reachable from the entry, as flags indexed by graph. */
void mp_graph_reachable(const mp_program *prog, bool *reach);
/* The graphs `reach` marks, children first (a sub-graph before every graph
 * that runs it): depth first from each marked graph in index order, a
 * node's sub-graphs in order.  order has room for every marked graph;
 * returns how many it holds.  height (NULL: not wanted, else one per
 * graph, zeroed) gets 1 + the height of a graph's tallest sub-graph. */
uint32_t mp_graphs_children_first(const mp_program *prog, const bool *reach, int32_t *order, uint32_t *height);
/* Does the graph hold a delegate whose backend contains "xnnpack" (any case)? */
bool mp_graph_has_xnnpack(const mp_graphdef *g);
/* Some tensor of g is in place on another (without one, each tensor is its
 * own in-place root: the common case the planners skip the chains for). */
bool mp_graph_has_inplace(const mp_graphdef *g);
/* ------------------------------------------------------------------
 * The problem model both planners share (lifetime.c, table.c, align.c):
 * ExecuTorch's lifetimes and spec filters, the buffer table, pools,
 * in-place roots, free points and size rounding. */

/* Per-graph facts the planners derive from the graph model: ExecuTorch's
 * update_all_tensors_lifetime and collect_specs_from_nodes. */
typedef struct mp_life {
    int32_t *start, *end; /* inclusive node indices, -1 when never named */
    uint8_t *is_input;    /* placeholder-defined and not mutable */
    uint8_t *is_output;   /* named (through views) by the output node */
    uint8_t *is_placeholder; /* defined by a placeholder (mutable included) */
    int32_t *order;       /* storage roots in ExecuTorch's spec order */
    uint32_t n_order;
} mp_life;

void mp_life_compute(const mp_graphdef *g, mp_life *L);
void mp_life_free(mp_life *L);

/* What a cond's results are at run time (escape.c; D14): per tensor, the
 * last node its bytes must survive to (its lifetime's end, or later when a
 * cond result aliases it); per node, for a cond whose results live in its
 * branches' memory after it, the last node they are used at (else -1). */
typedef struct mp_escape {
    int32_t *tensor_end, *node_end;
    bool any; /* some result escapes or some operand is extended */
} mp_escape;

void mp_escape_compute(const mp_program *prog, const mp_graphdef *g, const int32_t *end,
                       mp_escape *E);
void mp_escape_free(mp_escape *E);
/* The branch value behind result i of a cond whose branch is graph b, as a
 * storage root of b; *kind: 1 its bytes are in the branch's memory, 0
 * nowhere that can be overwritten (a weight, a dynamic tensor), -(j + 1)
 * it is b's j-th placeholder (the cond's operand after the predicate). */
int32_t mp_escape_value(const mp_graphdef *b, uint32_t i, int *kind);
/* The first node that runs sub-graphs while an earlier cond's results live
 * in its branches' memory (*cond: that cond), or -1. */
int32_t mp_escape_hazard(const mp_graphdef *g, const mp_escape *E, int32_t *cond);
/* Every reachable non-entry graph is run by exactly one node. */
bool mp_graphs_tree(const mp_program *prog, const bool *reach);
/* MP_EPLAN for a program the repaired planners cannot keep safe from D14:
 * a hazard (above) in a program that is not a tree. */
int mp_escape_check(const mp_program *prog, const bool *reach, mp_err *err);

/* Filters of collect_specs_from_nodes. */
typedef struct mp_alloc_flags {
    bool inputs, outputs, mutables;
} mp_alloc_flags;

bool mp_life_is_planned(const mp_graphdef *g, const mp_life *L, int32_t t,
                        mp_alloc_flags f);
/* The planned tensors, in spec order; returns the count (caller frees). */
uint32_t mp_life_planned(const mp_graphdef *g, const mp_life *L,
                         mp_alloc_flags f, int32_t **out);
/* The same into v, of room for L->n_order + 1 tensors. */
uint32_t mp_life_planned_into(const mp_graphdef *g, const mp_life *L, mp_alloc_flags f, int32_t *v);

/* The program-wide buffer table of the repaired mode (repair D2, D7):
 * every (device, pool) that some reachable graph plans, devices in
 * ExecuTorch's order (CPU:0 first, then by type and index), each device's
 * pools at consecutive indices from 1.  Without --per-device there is one
 * device, cpu:0.  Graph g's context: the entry takes the options' alloc
 * flags; a sub-graph plans its outputs and mutable buffers, and its inputs
 * when some map/scan node runs it (repair D10). */
typedef struct mp_slot {
    mp_device dev;
    uint32_t pools, base; /* global index of pool p: base + p - 1 */
} mp_slot;

typedef struct mp_table {
    mp_slot *slots;
    uint32_t n;
} mp_table;

mp_alloc_flags mp_context_flags(const mp_options *o, uint32_t gi, const uint8_t *map_body);
void mp_table_build(mp_table *t, const mp_program *p, const mp_options *o, const bool *reach,
                    const uint8_t *map_body, const mp_life *const *lives);
int32_t mp_table_find(const mp_table *t, mp_device d); /* slot, or -1 */
/* Global buffer index of a planned tensor, -1 if its device is absent. */
int64_t mp_table_index(const mp_table *t, const mp_options *o, const mp_tensor *x);
/* The end of t's in-place chain (through views): t itself when it is no
 * in-place tensor, -1 when the chain is a cycle.  With per_device, the
 * chain ends at a tensor whose base is on another device (see
 * mp_inplace_cut). */
int32_t mp_inplace_root(const mp_graphdef *g, int32_t t, bool per_device);
/* When a node of g carries span= (more than 1): the time each node starts
 * at, T[0] = 0, T[i + 1] = T[i] + span of node i, n_nodes + 1 of them
 * (caller frees); NULL when no node does. */
uint64_t *mp_graph_times(const mp_graphdef *g);
/* mp_inplace_root of every tensor of g, in linear time (caller frees).
 * The pool a planned tensor lives in is its root's mem_id (1 when none): an
 * in-place tensor lives in its base's, whatever its own mem_id says, as
 * ExecuTorch resolves it; a cycle (refused by the planners) its own. */
int32_t *mp_inplace_roots(const mp_graphdef *g, bool per_device);
/* Where in-place tensor t's bytes start in its base's storage root (its
 * offset= plus where the base, when a view, starts in its root; UINT64_MAX
 * past 64 bits); 0 for a tensor that is not in-place. */
uint64_t mp_inplace_link(const mp_graphdef *g, int32_t t);
/* Where each tensor's bytes start in its in-place family root's (the
 * offset= of each link of its chain, and where a view base starts in its
 * root, summed; UINT64_MAX past 64 bits), 0 for roots, views and cut
 * members (caller frees); NULL when no tensor of g has an offset, so every
 * member sits at its root, as before 2.1.  Each link must fit in its base
 * and keep the alignment: the planners check that before they use it. */
uint64_t *mp_inplace_shifts(const mp_graphdef *g, bool per_device);
/* Whether in-place tensor t (size bytes, aligned) fits in its base's
 * storage (base_size bytes, placed base_at bytes into its object) at its
 * offset: inside it, and at a multiple of the alignment (ExecuTorch's
 * checks since PR #21840); MP_EPLAN with the reason when not.  Without an
 * offset only the size counts (the message D12's repair always gave). */
int mp_inplace_fits(const mp_graphdef *g, int32_t t, uint64_t size, uint64_t base_size, uint64_t base_at,
                    uint32_t alignment, mp_err *err);
/* Each tensor's lifetime stretched over the tensors stored in it (in-place
 * chains through it, transitively; views are no links), as ExecuTorch
 * writes it back since PR #21840 (_extend_storage_base_lifetimes): in
 * ext_start/ext_end (n_tensors each), -1 starts skipped; a cycle keeps its
 * members' own.  Linear in the tensors. */
void mp_storage_lives(const mp_graphdef *g, bool per_device, const int32_t *start, const int32_t *end,
                      int32_t *ext_start, int32_t *ext_end);
/* The program with its own copy of every graph's tensors, to change them
 * (an in-place base, a pool); names, nodes and methods borrowed from prog,
 * which outlives the copy.  Free with mp_program_tensors_copy_free. */
mp_program *mp_program_tensors_copy(const mp_program *prog);
void mp_program_tensors_copy_free(mp_program *q);
/* The end of every element's chain through next[] (next[i] < 0 ends a
 * chain) into end[], -1 for an element that reaches a cycle; each chain is
 * walked once, so n elements cost O(n). */
void mp_chain_ends(const int32_t *next, uint32_t n, int32_t *end);
/* That pool, for planned tensor t given mp_inplace_roots' array. */
uint32_t mp_pool_of(const mp_graphdef *g, const int32_t *roots, int32_t t); /* roots NULL: t's own */
/* Repaired per-device planning: an in-place tensor whose base (through
 * views) is on another device cannot share the base's bytes (they are in
 * another device's buffer); it is planned as an allocation of its own. */
bool mp_inplace_cut(const mp_graphdef *g, int32_t t, bool per_device);
void mp_table_free(mp_table *t);
/* map_body[g]: some reachable map/scan node runs graph g. */
uint8_t *mp_map_bodies(const mp_program *p, const bool *reach);

/* A plan's block for graph gi, as planners write it: its name, n_bufs
 * buffer sizes and devices (copied), room for n_allocs allocs. */
void mp_block_start(mp_graph_plan *gp, const mp_program *prog, uint32_t gi, const uint64_t *bufs,
                    const mp_device *devs, uint32_t n_bufs, uint32_t n_allocs, mp_arena *A);
/* One alloc line of the block: tensor t at offset in pool mem_id, with
 * its lifetime from L. */
void mp_block_add(mp_graph_plan *gp, const mp_graphdef *g, int32_t t, uint64_t mem_id, uint64_t obj,
                  uint64_t offset, uint64_t size, const mp_life *L);

/* Per-device planning refused where pre-assigned pools meet non-CPU
 * tensors among the specs, as ExecuTorch does (MP_EPLAN). */
int mp_check_pools_per_device(const mp_graphdef *g, const int32_t *specs, uint32_t n, mp_err *err);

/* The free lines of one graph's block (repair D8). */
void mp_add_frees(const mp_graphdef *g, const mp_life *L, mp_graph_plan *gp, mp_arena *A);

/* Size rounding.  Exact: the smallest multiple of a not below n.
 * ExecuTorch: math.ceil(n / a) * a, where n / a is a double - which is not
 * exact above 2^53 (repair D9). */
uint64_t mp_ref_align_exact(uint64_t n, uint64_t a);
uint64_t mp_ref_align_et(uint64_t n, uint64_t a);
/* Whether ExecuTorch's float rounding (D9) gives some tensor of the
 * program another size than exact rounding, at alignment 16 (the sort key
 * of a first planning) or at `alignment`. */
bool mp_ref_et_rounding_differs(const mp_program *p, uint32_t alignment);

#endif
