/* greedy_index.h - what greedy's pick_shared_obj asks of its objects,
 * answered without reading every allocation of every object (issue 45,
 * B8: a 10^5-tensor chain took 6.8 s).  greedy_index.c. */
#ifndef MP_GREEDY_INDEX_H
#define MP_GREEDY_INDEX_H

#include "ref_internal.h"

/* Per position: its node in its object's interval treap (a position is in
 * one object at most). */
typedef struct gx_node {
    int32_t ls, le;          /* its lifetime (inclusive), the treap's key with pos */
    int32_t max_le;          /* the latest end below it */
    uint32_t left, right, prio;
    uint64_t val, max_val;   /* offset in the object + size + 1, the largest below */
} gx_node;

/* Per pool, for one node reading the pool's every allocation: its
 * objects' room above everything they hold (a max tree by creation). */
typedef struct gx_pool {
    int32_t max_ls, min_le; /* over its allocations */
    uint32_t n;             /* allocations */
    int64_t *room;          /* a max segment tree: leaves at cap + object */
    uint32_t cap;
} gx_pool;

typedef struct gx_index {
    gx_node *v;       /* per position, [0] unused: positions are 1-based here */
    uint32_t *root;   /* per object */
    uint64_t *height; /* per object: the largest offset + size in it */
    uint32_t n_obj, cap_obj;
    gx_pool *pools;
    uint32_t n_pools, seed;
} gx_index;

void mp_gx_init(gx_index *x, uint32_t n_positions, uint32_t max_pool);
void mp_gx_free(gx_index *x);
/* Allocation `pos` (lifetime ls..le, at off in object obj of size
 * obj_size, the idx-th object of its pool) joins the object. */
void mp_gx_add(gx_index *x, uint32_t obj, uint32_t pool, uint32_t idx, uint64_t obj_size, uint32_t pos, int32_t ls,
               int32_t le, uint64_t off, uint64_t size);
/* Whether any allocation of obj is live at some time of ls..le. */
bool mp_gx_meets(const gx_index *x, uint32_t obj, int32_t ls, int32_t le);
/* The largest offset + size among obj's allocations live then; 0: none. */
uint64_t mp_gx_top(const gx_index *x, uint32_t obj, int32_t ls, int32_t le);
/* Whether every allocation of the pool is live at some time of ls..le
 * (and it has one). */
bool mp_gx_all_meet(const gx_index *x, uint32_t pool, int32_t ls, int32_t le);
/* Then: the first object of the pool (in creation order) holding
 * something, with room for size above everything it holds; -1: none. */
int64_t mp_gx_first_room(const gx_index *x, uint32_t pool, uint64_t size);

#endif
