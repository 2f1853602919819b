/* ref_internal.h - internals of the reference planner (ExecuTorch's apply_algo).
 *
 * The reference follows exir/memory_planning.py step by step so that a
 * reader can hold the two side by side.  With et_exact it reproduces
 * ExecuTorch bit for bit, defects included; otherwise each known defect is
 * repaired at the one place it arises, marked "repair Dn" (see
 * docs/deviations.md). */
#ifndef MP_REF_INTERNAL_H
#define MP_REF_INTERNAL_H

#include "ref.h"

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
    bool cut; /* repaired --per-device: in-place across devices is its own allocation */
    uint32_t upstream; /* et: MP_UPSTREAM_* fixes applied */
    int32_t *pos;      /* per tensor scratch, -1 on entry and on return: a partition
                        * of a graph with many costs its own size, not the graph's */
    const mp_banks *banks; /* greedy over a memory map (PR #21821, banked.c), else NULL */
} ref_part;

typedef struct ref_result {
    uint64_t *bufs; /* local buffer sizes, [0] unused (constants) */
    uint32_t n_bufs;
    /* per spec position: */
    uint32_t *pool; /* local mem_id */
    uint64_t *obj, *offset, *size;
} ref_result;

void mp_ref_result_init(ref_result *r, uint32_t n);
void mp_ref_result_free(ref_result *r);

int mp_ref_greedy(const ref_part *p, ref_result *r, mp_err *err);
int mp_ref_naive(const ref_part *p, ref_result *r, mp_err *err);

/* Round size to the part's alignment, in its mode. */
static inline uint64_t ref_align(const ref_part *p, uint64_t n, uint64_t a) {
    return p->et ? mp_ref_align_et(n, a) : mp_ref_align_exact(n, a);
}

#endif
