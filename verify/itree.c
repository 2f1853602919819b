/* itree.c - a treap of byte intervals [lo, hi) keyed by (lo, id), each
 * node carrying the largest hi below it, for overlap queries. */
#include "verify.h"

typedef struct inode {
    uint64_t lo, hi, max_hi;
    uint32_t id, prio;
    int32_t l, r;
} inode;

struct v_itree {
    inode *n;
    uint32_t count, cap, seed;
    int32_t root, free_list;
};

v_itree *mp_v_itree_new(void) {
    v_itree *t = mp_xcalloc(1, sizeof *t);
    t->root = t->free_list = -1;
    t->seed = 2463534242u;
    return t;
}

void mp_v_itree_free(v_itree *t) {
    if (!t) return;
    mp_xfree(t->n);
    mp_xfree(t);
}

static uint32_t next_prio(v_itree *t) {
    t->seed ^= t->seed << 13;
    t->seed ^= t->seed >> 17;
    t->seed ^= t->seed << 5;
    return t->seed;
}

static void pull(v_itree *t, int32_t x) {
    inode *a = &t->n[x];
    a->max_hi = a->hi;
    if (a->l >= 0 && t->n[a->l].max_hi > a->max_hi) a->max_hi = t->n[a->l].max_hi;
    if (a->r >= 0 && t->n[a->r].max_hi > a->max_hi) a->max_hi = t->n[a->r].max_hi;
}

static bool less(const inode *a, uint64_t lo, uint32_t id) {
    return a->lo < lo || (a->lo == lo && a->id < id);
}

/* split by key (lo, id): left < key <= right */
static void split(v_itree *t, int32_t x, uint64_t lo, uint32_t id, int32_t *L, int32_t *R) {
    if (x < 0) {
        *L = *R = -1;
        return;
    }
    if (less(&t->n[x], lo, id)) {
        split(t, t->n[x].r, lo, id, &t->n[x].r, R);
        *L = x;
    } else {
        split(t, t->n[x].l, lo, id, L, &t->n[x].l);
        *R = x;
    }
    pull(t, x);
}

static int32_t merge(v_itree *t, int32_t a, int32_t b) {
    if (a < 0) return b;
    if (b < 0) return a;
    if (t->n[a].prio > t->n[b].prio) {
        t->n[a].r = merge(t, t->n[a].r, b);
        pull(t, a);
        return a;
    }
    t->n[b].l = merge(t, a, t->n[b].l);
    pull(t, b);
    return b;
}

/* Node nx into the subtree at x (the treap for those keys and priorities
 * is unique, so this is the tree split-and-merge would build): down the
 * search path to where nx's priority puts it, then the subtree there split
 * under it.  One pass down instead of a split and two merges. */
static int32_t insert_at(v_itree *t, int32_t x, int32_t nx) {
    inode *a = &t->n[nx];
    if (x < 0) return nx;
    if (a->prio > t->n[x].prio) {
        split(t, x, a->lo, a->id, &a->l, &a->r);
        pull(t, nx);
        return nx;
    }
    if (less(&t->n[x], a->lo, a->id)) t->n[x].r = insert_at(t, t->n[x].r, nx);
    else t->n[x].l = insert_at(t, t->n[x].l, nx);
    if (a->hi > t->n[x].max_hi) t->n[x].max_hi = a->hi;
    return x;
}

void mp_v_itree_insert(v_itree *t, uint64_t lo, uint64_t hi, uint32_t id) {
    int32_t x;
    if (t->free_list >= 0) {
        x = t->free_list;
        t->free_list = t->n[x].l;
    } else {
        if (t->count == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 64;
            t->n = mp_xrealloc(t->n, t->cap * sizeof *t->n);
        }
        x = (int32_t)t->count++;
    }
    t->n[x] = (inode){lo, hi, hi, id, next_prio(t), -1, -1};
    t->root = insert_at(t, t->root, x);
}

/* The subtree at x without the node keyed (lo, id), if there is one: its
 * children merged in its place, the largest hi mended on the way up. */
static int32_t remove_at(v_itree *t, int32_t x, uint64_t lo, uint32_t id) {
    if (x < 0) return -1;
    inode *a = &t->n[x];
    if (a->lo == lo && a->id == id) {
        int32_t rest = merge(t, a->l, a->r);
        a->l = t->free_list;
        t->free_list = x;
        return rest;
    }
    if (less(a, lo, id)) a->r = remove_at(t, a->r, lo, id);
    else a->l = remove_at(t, a->l, lo, id);
    pull(t, x);
    return x;
}

void mp_v_itree_remove(v_itree *t, uint64_t lo, uint32_t id) { t->root = remove_at(t, t->root, lo, id); }

static void query(const v_itree *t, int32_t x, uint64_t lo, uint64_t hi, uint32_t *ids,
                  uint32_t max, uint32_t *k) {
    while (x >= 0 && *k < max) {
        const inode *a = &t->n[x];
        if (a->max_hi <= lo) return; /* nothing below reaches lo */
        query(t, a->l, lo, hi, ids, max, k);
        if (a->lo >= hi || *k >= max) return; /* this and everything right start at or after hi */
        if (a->hi > lo) ids[(*k)++] = a->id;
        x = a->r;
    }
}

uint32_t mp_v_itree_query(const v_itree *t, uint64_t lo, uint64_t hi, uint32_t *ids,
                       uint32_t max) {
    uint32_t k = 0;
    query(t, t->root, lo, hi, ids, max, &k);
    return k;
}
