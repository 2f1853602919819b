/* ref.h - internals of the reference planner (ExecuTorch's apply_algo).
 *
 * The reference follows exir/memory_planning.py step by step so that a
 * reader can hold the two side by side.  With et_exact it reproduces
 * ExecuTorch bit for bit, defects included; otherwise each known defect is
 * repaired at the one place it arises, marked "repair Dn" (see
 * docs/deviations.md). */
#ifndef MP_REF_H
#define MP_REF_H

#include "util.h"

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

/* Filters of collect_specs_from_nodes. */
typedef struct mp_alloc_flags {
    bool inputs, outputs, mutables;
} mp_alloc_flags;

bool mp_life_is_planned(const mp_graphdef *g, const mp_life *L, int32_t t,
                        mp_alloc_flags f);
/* The planned tensors, in spec order; returns the count (caller frees). */
uint32_t mp_life_planned(const mp_graphdef *g, const mp_life *L,
                         mp_alloc_flags f, int32_t **out);

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
/* The pool a planned tensor lives in (its mem_id, 1 when none): an
 * in-place tensor lives in its base's, whatever its own mem_id says, as
 * ExecuTorch resolves it; the end of the in-place chain (through views)
 * decides.  A cycle (which the planners refuse) gives the tensor's own. */
uint32_t mp_pool_of(const mp_graphdef *g, int32_t t);
/* The end of t's in-place chain (through views): t itself when it is no
 * in-place tensor, -1 when the chain is a cycle. */
int32_t mp_inplace_root(const mp_graphdef *g, int32_t t);
void mp_table_free(mp_table *t);
/* map_body[g]: some reachable map/scan node runs graph g. */
uint8_t *mp_map_bodies(const mp_program *p, const bool *reach);

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

/* One device partition handed to an algorithm (ExecuTorch's `algo` call). */
typedef struct ref_part {
    const mp_graphdef *g;
    const int32_t *specs; /* tensor indices, spec order */
    uint32_t n;
    const int32_t *life_start, *life_end; /* per tensor */
    const uint64_t *input; /* input_mem_buffer_sizes, local pool index */
    uint32_t n_input;
    uint64_t padding; /* 64 with an XNNPACK delegate (greedy only) */
    uint32_t alignment;
    bool et; /* ExecuTorch's behaviour, defects included */
    uint8_t *realigned; /* per tensor: spec.alignment already set to A */
} ref_part;

typedef struct ref_result {
    uint64_t *bufs; /* local buffer sizes, [0] unused (constants) */
    uint32_t n_bufs;
    /* per spec position: */
    uint32_t *pool; /* local mem_id */
    uint64_t *obj, *offset, *size;
} ref_result;

void ref_result_init(ref_result *r, uint32_t n);
void ref_result_free(ref_result *r);

int mp_ref_greedy(const ref_part *p, ref_result *r, mp_err *err);
int mp_ref_naive(const ref_part *p, ref_result *r, mp_err *err);

/* Round size to the part's alignment, in its mode. */
static inline uint64_t ref_align(const ref_part *p, uint64_t n, uint64_t a) {
    return p->et ? mp_ref_align_et(n, a) : mp_ref_align_exact(n, a);
}

#endif
