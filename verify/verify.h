/* verify.h - internals of the verifier.
 *
 * The verifier shares nothing with the planners beyond the graph model and
 * the parsers: it derives lifetimes, inputs, outputs and in-place families
 * itself (live.c), so a planner bug cannot hide in shared code. */
#ifndef MP_VERIFY_H
#define MP_VERIFY_H

#include "internal.h"

/* What the verifier knows of one graph, from the graph alone. */
typedef struct vgraph {
    int32_t *first, *last;  /* inclusive node range a root is named in */
    uint8_t *placeholder;   /* defined by a placeholder */
    uint8_t *returned;      /* named by the output node */
    int32_t *family;        /* in-place family id (union-find root) */
    bool map_body;          /* body of a map/scan node somewhere */
    /* lazily, at the first lifetime that differs from first/last: each
     * tensor's range stretched over the tensors stored in it
     * (mp_storage_lives), n_tensors starts then n_tensors ends; NULL before */
    int32_t *stretched;
} vgraph;

void mp_v_graph_facts(const mp_graphdef *g, bool per_device, vgraph *vg);
void mp_v_graph_free(vgraph *vg);

/* Live byte intervals of one buffer, with "which intervals overlap
 * [lo, hi)?" queries: a treap ordered by lo, augmented with the largest hi
 * in each subtree.  O(log n) expected per operation plus the answers. */
typedef struct v_itree v_itree;
v_itree *mp_v_itree_new(void);
void mp_v_itree_free(v_itree *t);
void mp_v_itree_insert(v_itree *t, uint64_t lo, uint64_t hi, uint32_t id);
void mp_v_itree_remove(v_itree *t, uint64_t lo, uint32_t id);
/* Up to `max` ids of stored intervals overlapping [lo, hi); returns count. */
uint32_t mp_v_itree_query(const v_itree *t, uint64_t lo, uint64_t hi, uint32_t *ids,
                       uint32_t max);

/* A set of ranks 0 .. n-1 (rankset.c): add, remove, and the nearest
 * member on either side, in O(log64 n) word operations. */
#define V_RANKSET_LEVELS 6 /* 64^6 bits: any uint32_t rank */
typedef struct v_rankset v_rankset;
v_rankset *mp_v_rankset_new(uint32_t n);
void mp_v_rankset_free(v_rankset *s);
void mp_v_rankset_add(v_rankset *s, uint32_t r);
void mp_v_rankset_remove(v_rankset *s, uint32_t r);
int64_t mp_v_rankset_below(const v_rankset *s, uint32_t r); /* largest member < r, or -1 */
int64_t mp_v_rankset_above(const v_rankset *s, uint32_t r); /* smallest member > r, or -1 */

typedef struct vctx {
    const mp_program *prog;
    const mp_plan *plan;
    mp_verify_report *r;
    mp_arena *A;
    bool *reach;
    vgraph *vg;            /* per graph (reachable ones filled) */
    int32_t *block_of;     /* graph -> plan block, -1 */
    const mp_graph_plan *entry;
    uint32_t alignment;    /* 0 when the options line has none usable */
    bool flags[4];         /* alloc_inputs, alloc_outputs, alloc_mutable, per_device */
    /* per graph: alloc index per tensor after dropping duplicates, -1 */
    int32_t **alloc_of;
    /* per graph: alloc usable for geometry (known tensor, buffer exists) */
    uint8_t **usable;
    /* capacity of r->v and r->w: they grow in the arena on demand, so a
     * valid plan's check zeroes no detail slots (it did 2 x 1000) */
    uint32_t v_cap, w_cap;
} vctx;

/* One violation: rule, kind, optional details, printf message. */
typedef struct vdetail {
    const char *t0, *t1;
    int64_t buffer;
    uint64_t r0[2], r1[2];
    uint32_t n_ranges;
    int64_t n0, n1;
} vdetail;

/* "[offset,end)" into buf (at least 48 bytes), the end exact past 2^64. */
void mp_v_range(char *buf, size_t n, uint64_t offset, uint64_t size);
/* The allocation's tensor with its node and operator when known (buf:
 * 2 * MP_MAX_NAME + 48 bytes). */
#define MP_V_TENSOR_BUF (2 * MP_MAX_NAME + 48)
const char *mp_v_tensor(const mp_graphdef *g, const mp_alloc *a, char *buf, size_t n);

/* A wasteful (not unsafe) finding: `wasted` bytes reserved for nothing. */
void mp_v_warning(vctx *c, const char *graph, uint32_t rule, const char *kind, const vdetail *d,
                  uint64_t wasted, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

void mp_v_violation(vctx *c, const char *graph, uint32_t rule, const char *kind,
                 const vdetail *d, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Reachable graphs, children before parents. */
int32_t *mp_v_postorder_of(const vctx *c, uint32_t *n);

void mp_v_rules_structure(vctx *c);  /* rules 1, 2, 3, 6, 7, 8 */
void mp_v_rules_overlap(vctx *c);    /* rules 4 and 5 */
void mp_v_quality(vctx *c);          /* total, lower bound, ratio */

/* A graph's lower bound per buffer (quality.c): v[b], reached first at
 * node at[b]. */
typedef struct v_bound {
    uint64_t *v;
    uint32_t n;
    int64_t *at;
} v_bound;

/* held.c: what cond results hold after their cond, for the bound.  A
 * result of cond `cond`, live to `end`, as the value of one branch: held
 * in the branch's memory (alloc < 0: a nested cond's result, all of
 * `branch`'s memory) or in one allocation of the branch's block. */
typedef struct v_hold {
    int32_t cond, end, branch, alloc;
} v_hold;
typedef struct v_holds {
    v_hold *v; /* by cond, latest end first; NULL: none */
    uint32_t n;
    uint8_t *slot_family;     /* families that hold a cond result's slot */
    uint64_t *boost, *scratch; /* per node, n_nodes + 2 */
} v_holds;
/* Each result r of cond node k of graph gi that is used after the cond,
 * to node e, as value v (a storage root) of each distinct branch: f(ctx,
 * k, i (r's index among the cond's results), r, e, branch, v).  Rule 5's
 * escapes (overlap.c) and the bound's holds (held.c) both walk these. */
typedef void (*mp_v_escape_fn)(void *ctx, uint32_t k, uint32_t i, int32_t r, int32_t e, int32_t branch,
                               int32_t v);
void mp_v_escapes(const vctx *c, int32_t gi, mp_v_escape_fn f, void *ctx);
void mp_v_holds(const vctx *c, int32_t gi, v_holds *out);
void mp_v_holds_free(v_holds *h);
/* H->boost[t]: what node t of buffer b needs beyond the plain bound (the
 * allocations idx[0 .. k) are the graph's in buffer b; sub: the bounds of
 * every graph, the branches' done).  False when nothing (boost all 0). */
bool mp_v_held_boost(const vctx *c, int32_t gi, v_holds *H, uint32_t b, const v_bound *sub, const uint32_t *idx,
                     size_t k);

/* One program, one method (verify.c): the whole check. */
int mp_v_verify_one(const mp_program *prog, const mp_plan *plan, mp_verify_report *r, mp_err *err);
/* Several methods (methods.c): each method's blocks checked as its own
 * program, one report of them all, and the shared state at one place. */
int mp_v_verify_methods(const mp_program *prog, const mp_plan *plan, mp_verify_report *r, mp_err *err);
/* A violation or warning of another report recorded into c's. */
void mp_v_copy(vctx *c, const mp_violation *v, bool warning);

#endif
