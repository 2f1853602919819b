/* sweep.c - the packer's fallback for huge conflict graphs: lay items out
 * in time order, as an allocator would run, keeping the free gaps below
 * the top in a treap ordered by offset and augmented with the largest gap
 * in each subtree.  At each node, items that ended are freed (coalescing
 * with their neighbours), then items that start are allocated, largest
 * first, into the lowest gap that fits or on top.  O(n log n). */
#include "pack.h"

typedef struct gnode {
    uint64_t off, len, max_len;
    uint32_t prio;
    int32_t l, r;
} gnode;

typedef struct gaps {
    gnode *v;
    uint32_t n, cap, seed;
    int32_t root, free_list;
} gaps;

static uint32_t prio(gaps *g) {
    g->seed ^= g->seed << 13;
    g->seed ^= g->seed >> 17;
    g->seed ^= g->seed << 5;
    return g->seed;
}

static void pull(gaps *g, int32_t x) {
    gnode *a = &g->v[x];
    a->max_len = a->len;
    if (a->l >= 0 && g->v[a->l].max_len > a->max_len) a->max_len = g->v[a->l].max_len;
    if (a->r >= 0 && g->v[a->r].max_len > a->max_len) a->max_len = g->v[a->r].max_len;
}

static void split(gaps *g, int32_t x, uint64_t off, int32_t *L, int32_t *R) {
    if (x < 0) {
        *L = *R = -1;
        return;
    }
    if (g->v[x].off < off) {
        split(g, g->v[x].r, off, &g->v[x].r, R);
        *L = x;
    } else {
        split(g, g->v[x].l, off, L, &g->v[x].l);
        *R = x;
    }
    pull(g, x);
}

static int32_t merge(gaps *g, int32_t a, int32_t b) {
    if (a < 0) return b;
    if (b < 0) return a;
    if (g->v[a].prio > g->v[b].prio) {
        g->v[a].r = merge(g, g->v[a].r, b);
        pull(g, a);
        return a;
    }
    g->v[b].l = merge(g, a, g->v[b].l);
    pull(g, b);
    return b;
}

static void insert(gaps *g, uint64_t off, uint64_t len) {
    int32_t x;
    if (g->free_list >= 0) {
        x = g->free_list;
        g->free_list = g->v[x].l;
    } else {
        if (g->n == g->cap) {
            g->cap = g->cap ? g->cap * 2 : 64;
            g->v = mp_xrealloc(g->v, g->cap * sizeof *g->v);
        }
        x = (int32_t)g->n++;
    }
    g->v[x] = (gnode){off, len, len, prio(g), -1, -1};
    int32_t L, R;
    split(g, g->root, off, &L, &R);
    g->root = merge(g, merge(g, L, x), R);
}

/* Remove the gap starting exactly at off; returns its length (0: none). */
static uint64_t take(gaps *g, uint64_t off) {
    int32_t L, M, R;
    split(g, g->root, off, &L, &R);
    split(g, R, off + 1, &M, &R);
    uint64_t len = 0;
    if (M >= 0) {
        len = g->v[M].len;
        g->v[M].l = g->free_list;
        g->free_list = M;
    }
    g->root = merge(g, L, R);
    return len;
}

/* Lowest-offset gap of at least `need` bytes: its offset, or UINT64_MAX. */
static uint64_t first_fit(const gaps *g, uint64_t need) {
    int32_t x = g->root;
    while (x >= 0) {
        const gnode *a = &g->v[x];
        if (a->l >= 0 && g->v[a->l].max_len >= need) x = a->l;
        else if (a->len >= need) return a->off;
        else if (a->r >= 0 && g->v[a->r].max_len >= need) x = a->r;
        else return UINT64_MAX;
    }
    return UINT64_MAX;
}

/* Gap ending exactly at `end` (the left neighbour of a freed range). */
static bool find_ending(const gaps *g, uint64_t end, uint64_t *off) {
    int32_t x = g->root;
    const gnode *best = NULL;
    while (x >= 0) { /* predecessor: largest off < end */
        if (g->v[x].off < end) {
            best = &g->v[x];
            x = g->v[x].r;
        } else {
            x = g->v[x].l;
        }
    }
    if (best && best->off + best->len == end) {
        *off = best->off;
        return true;
    }
    return false;
}

typedef struct evt {
    int32_t t;
    uint64_t size;
    uint32_t i;
    bool alloc;
} evt;

static int cmp_evt(const void *a, const void *b) {
    const evt *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->alloc != y->alloc) return x->alloc ? 1 : -1; /* frees first */
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Free [off, off+len): coalesce with the gaps around it, or lower the top. */
static void release(gaps *g, uint64_t *top, uint64_t off, uint64_t len) {
    uint64_t left;
    if (find_ending(g, off, &left)) {
        len += off - left;
        take(g, left);
        off = left;
    }
    uint64_t right = take(g, off + len);
    len += right;
    if (off + len == *top) *top = off;
    else insert(g, off, len);
}

uint64_t pk_sweep(pk_item *items, uint32_t n) {
    evt *ev = mp_xmalloc((2 * (size_t)n + 1) * sizeof *ev);
    size_t ne = 0;
    uint64_t top = 0, peak = 0;
    for (uint32_t i = 0; i < n; i++) { /* fixed items: reserved from the start */
        if (!items[i].fixed || !items[i].size) continue;
        uint64_t end = mp_sat_add_u64(items[i].offset, items[i].size);
        if (end > top) top = end;
    }
    peak = top;
    for (uint32_t i = 0; i < n; i++) {
        if (items[i].fixed || !items[i].size) {
            if (!items[i].fixed) items[i].offset = 0;
            continue;
        }
        ev[ne++] = (evt){items[i].start, items[i].size, i, true};
        ev[ne++] = (evt){items[i].end + 1, items[i].size, i, false};
    }
    qsort(ev, ne, sizeof *ev, cmp_evt);
    gaps g = {NULL, 0, 0, 2463534242u, -1, -1};
    for (size_t k = 0; k < ne; k++) {
        pk_item *it = &items[ev[k].i];
        if (!ev[k].alloc) {
            release(&g, &top, it->offset, it->size);
            continue;
        }
        uint64_t at = first_fit(&g, it->size);

        if (at == UINT64_MAX) {
            it->offset = top;
            top = mp_sat_add_u64(top, it->size);
        } else {
            uint64_t len = take(&g, at);
            it->offset = at;
            if (len > it->size) insert(&g, at + it->size, len - it->size);
        }
        uint64_t end = mp_sat_add_u64(it->offset, it->size);
        if (end > peak) peak = end;
        if (end == UINT64_MAX) break; /* past 64 bits: the worst layout */
    }
    free(g.v);
    free(ev);
    return peak;
}
