/* greedy_index.c - greedy's objects indexed for pick_shared_obj (greedy.c).
 *
 * ExecuTorch's pick_shared_obj reads, for each new spec, every allocation
 * of every object of its pool: O(n^2) in all where few tensors are live
 * at once.  Its two questions, per object, are "does any allocation live
 * with the spec?" (the first pass) and "how high do those reach?" (the
 * second).  Each object keeps its allocations in an interval treap keyed
 * by start, with the latest end and the highest reach below each node: the
 * first is a descent, the second visits only the allocations live with
 * the spec.  When one node reads all the others, every allocation of the
 * pool is live with every spec and every object meets it: the first pass
 * finds none, and the second's answer is the first object, in creation
 * order, whose room above all it holds fits the spec (a max tree over the
 * pool's objects).  The answers, and so the plans, are the scan's. */
#include "greedy_index.h"

#define NIL 0u

void mp_gx_init(gx_index *x, uint32_t n_positions, uint32_t max_pool) {
    memset(x, 0, sizeof *x);
    x->v = mp_xcalloc(n_positions + 1, sizeof *x->v);
    x->n_pools = max_pool + 1;
    x->pools = mp_xcalloc(x->n_pools, sizeof *x->pools);
    for (uint32_t p = 0; p < x->n_pools; p++) x->pools[p] = (gx_pool){INT32_MIN, INT32_MAX, 0, NULL, 0};
    x->seed = 0x2545f491u;
}

void mp_gx_free(gx_index *x) {
    for (uint32_t p = 0; p < x->n_pools; p++) mp_xfree(x->pools[p].room);
    mp_xfree(x->pools);
    mp_xfree(x->v);
    mp_xfree(x->root);
    mp_xfree(x->height);
}

/* ------------------------------------------------------ the interval treap */

static void pull(gx_node *v, uint32_t a) {
    gx_node *n = &v[a];
    n->max_le = n->le;
    n->max_val = n->val;
    for (int s = 0; s < 2; s++) {
        uint32_t c = s ? n->right : n->left;
        if (c == NIL) continue;
        if (v[c].max_le > n->max_le) n->max_le = v[c].max_le;
        if (v[c].max_val > n->max_val) n->max_val = v[c].max_val;
    }
}

static bool key_less(const gx_node *v, uint32_t a, uint32_t b) {
    return v[a].ls < v[b].ls || (v[a].ls == v[b].ls && a < b);
}

/* The treap t split at a's key: smaller into *l, the rest into *r. */
static void split(gx_node *v, uint32_t t, uint32_t a, uint32_t *l, uint32_t *r) {
    if (t == NIL) {
        *l = *r = NIL;
        return;
    }
    if (key_less(v, t, a)) {
        split(v, v[t].right, a, &v[t].right, r);
        *l = t;
    } else {
        split(v, v[t].left, a, l, &v[t].left);
        *r = t;
    }
    pull(v, t);
}

/* Insert node a under t; returns the new root. */
static uint32_t insert(gx_node *v, uint32_t t, uint32_t a) {
    if (t == NIL) return a;
    if (v[a].prio > v[t].prio) {
        split(v, t, a, &v[a].left, &v[a].right);
        pull(v, a);
        return a;
    }
    if (key_less(v, a, t)) v[t].left = insert(v, v[t].left, a);
    else v[t].right = insert(v, v[t].right, a);
    pull(v, t);
    return t;
}

static bool live_with(const gx_node *n, int32_t ls, int32_t le) { return !(n->le < ls || n->ls > le); }

bool mp_gx_meets(const gx_index *x, uint32_t obj, int32_t ls, int32_t le) {
    const gx_node *v = x->v;
    uint32_t t = x->root[obj];
    while (t != NIL && !live_with(&v[t], ls, le)) /* the classic interval-tree descent */
        t = v[t].left != NIL && v[v[t].left].max_le >= ls ? v[t].left : v[t].right;
    return t != NIL;
}

static void top_of(const gx_node *v, uint32_t t, int32_t ls, int32_t le, uint64_t *best) {
    while (t != NIL) {
        const gx_node *n = &v[t];
        if (n->max_le < ls || n->max_val <= *best) return;
        if (live_with(n, ls, le) && n->val > *best) *best = n->val;
        top_of(v, n->left, ls, le, best);
        if (n->ls > le) return; /* every start to the right is later still */
        t = n->right;
    }
}

uint64_t mp_gx_top(const gx_index *x, uint32_t obj, int32_t ls, int32_t le) {
    uint64_t best = 0;
    top_of(x->v, x->root[obj], ls, le, &best);
    return best ? best - 1 : 0;
}

/* ------------------------------------------------------- the pools' rooms */

static void room_set(gx_pool *p, uint32_t k, int64_t room) {
    if (k >= p->cap) { /* grow: leaves copied, the tree rebuilt */
        uint32_t cap = p->cap ? p->cap : 16;
        while (cap <= k) cap *= 2;
        int64_t *t = mp_xmalloc(2 * (size_t)cap * sizeof *t);
        for (uint32_t i = 0; i < cap; i++) t[cap + i] = i < p->cap ? p->room[p->cap + i] : -1;
        for (uint32_t i = cap - 1; i >= 1; i--) t[i] = t[2 * i] > t[2 * i + 1] ? t[2 * i] : t[2 * i + 1];
        mp_xfree(p->room);
        p->room = t;
        p->cap = cap;
    }
    uint32_t i = p->cap + k;
    p->room[i] = room;
    for (i /= 2; i >= 1; i /= 2) p->room[i] = p->room[2 * i] > p->room[2 * i + 1] ? p->room[2 * i] : p->room[2 * i + 1];
}

int64_t mp_gx_first_room(const gx_index *x, uint32_t pool, uint64_t size) {
    const gx_pool *p = &x->pools[pool];
    if (!p->cap || p->room[1] < (int64_t)size) return -1;
    uint32_t i = 1;
    while (i < p->cap) i = p->room[2 * i] >= (int64_t)size ? 2 * i : 2 * i + 1;
    return (int64_t)(i - p->cap);
}

bool mp_gx_all_meet(const gx_index *x, uint32_t pool, int32_t ls, int32_t le) {
    const gx_pool *p = &x->pools[pool];
    return p->n && p->min_le >= ls && p->max_ls <= le;
}

/* ------------------------------------------------------------- additions */

static void grow_objects(gx_index *x, uint32_t obj) {
    if (obj < x->cap_obj) return;
    uint32_t cap = x->cap_obj ? x->cap_obj : 16;
    while (cap <= obj) cap *= 2;
    x->root = mp_xrealloc(x->root, cap * sizeof *x->root);
    x->height = mp_xrealloc(x->height, cap * sizeof *x->height);
    for (uint32_t k = x->cap_obj; k < cap; k++) x->root[k] = NIL, x->height[k] = 0;
    x->cap_obj = cap;
}

void mp_gx_add(gx_index *x, uint32_t obj, uint32_t pool, uint32_t idx, uint64_t obj_size, uint32_t pos, int32_t ls,
               int32_t le, uint64_t off, uint64_t size) {
    grow_objects(x, obj);
    uint32_t a = pos + 1;
    uint64_t reach = mp_sat_add_u64(off, size);
    x->v[a] = (gx_node){ls, le, le, NIL, NIL, mp_xorshift32(&x->seed), mp_sat_add_u64(reach, 1), 0};
    x->v[a].max_val = x->v[a].val;
    x->root[obj] = insert(x->v, x->root[obj], a);
    if (reach > x->height[obj]) x->height[obj] = reach;
    gx_pool *p = &x->pools[pool];
    p->n++;
    if (ls > p->max_ls) p->max_ls = ls;
    if (le < p->min_le) p->min_le = le;
    uint64_t h = x->height[obj];
    room_set(p, idx, h > 0 && h <= obj_size ? (int64_t)(obj_size - h) : -1);
}
