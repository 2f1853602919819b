/* gaps.c - the free gaps below and between every placed item, for the
 * peers' scans when every placed item is live with the new one (one node
 * reading all the others: issue 45, B8).  The scans then see the union of
 * the placed items' bytes, split at each empty item's offset (an empty
 * item moves TFLite Micro's scan and starts a new gap in XLA's), and:
 *   - TFLite Micro's lowest fit is the lowest gap that holds the item;
 *   - XLA's best fit is the smallest finite gap that holds it, the lowest
 *     of those on a tie, else the top (the start of the last gap).
 * Gaps are kept twice: by start (with the largest length below each node,
 * for the lowest fit) and by (length, start) (for the best fit), each a
 * treap over one node pool.  The last gap runs to UINT64_MAX and is only
 * in the first. */
#include "gaps.h"

#define NIL UINT32_MAX

typedef struct gnode {
    uint64_t start, len; /* len UINT64_MAX - start for the last gap */
    uint32_t prio;
    uint32_t left[2], right[2]; /* children in the by-start and by-length treaps */
    uint64_t max_len;           /* by start: the largest len in the subtree */
} gnode;


/* tree 0: by start; tree 1: by (len, start) */
static bool less(const gnode *a, const gnode *b, int t) {
    if (t == 0) return a->start < b->start;
    return a->len < b->len || (a->len == b->len && a->start < b->start);
}

static void fix(pr_gaps *g, uint32_t x) {
    gnode *n = &g->v[x];
    n->max_len = n->len;
    if (n->left[0] != NIL && g->v[n->left[0]].max_len > n->max_len) n->max_len = g->v[n->left[0]].max_len;
    if (n->right[0] != NIL && g->v[n->right[0]].max_len > n->max_len) n->max_len = g->v[n->right[0]].max_len;
}

/* Split tree t at node k's key: < into *l, >= into *r. */
static void split(pr_gaps *g, uint32_t x, const gnode *k, int t, uint32_t *l, uint32_t *r) {
    if (x == NIL) {
        *l = *r = NIL;
        return;
    }
    gnode *n = &g->v[x];
    if (less(n, k, t)) {
        split(g, n->right[t], k, t, &n->right[t], r);
        *l = x;
    } else {
        split(g, n->left[t], k, t, l, &n->left[t]);
        *r = x;
    }
    if (t == 0) fix(g, x);
}

static uint32_t merge(pr_gaps *g, uint32_t a, uint32_t b, int t) {
    if (a == NIL) return b;
    if (b == NIL) return a;
    if (g->v[a].prio > g->v[b].prio) {
        g->v[a].right[t] = merge(g, g->v[a].right[t], b, t);
        if (t == 0) fix(g, a);
        return a;
    }
    g->v[b].left[t] = merge(g, a, g->v[b].left[t], t);
    if (t == 0) fix(g, b);
    return b;
}

static void tree_insert(pr_gaps *g, uint32_t x, int t) {
    uint32_t l, r;
    split(g, g->root[t], &g->v[x], t, &l, &r);
    g->root[t] = merge(g, merge(g, l, x, t), r, t);
}

/* Remove node x (its key is unique) from tree t: split off what comes
 * before it, then what comes after its start (every gap has len > 0, so
 * start + 1 does not wrap). */
static void tree_remove(pr_gaps *g, uint32_t x, int t) {
    uint32_t l, m, r;
    gnode after = g->v[x];
    split(g, g->root[t], &g->v[x], t, &l, &m);
    after.start++;
    split(g, m, &after, t, &m, &r); /* m: the node alone */
    g->root[t] = merge(g, l, r, t);
}

static uint32_t add_gap(pr_gaps *g, uint64_t start, uint64_t len) {
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        g->v = mp_xrealloc(g->v, g->cap * sizeof *g->v);
    }
    uint32_t x = g->n++;
    g->v[x] = (gnode){start, len, mp_xorshift32(&g->seed), {NIL, NIL}, {NIL, NIL}, len};
    tree_insert(g, x, 0);
    if (start + len != UINT64_MAX) tree_insert(g, x, 1); /* the last gap is not in the by-length tree */
    return x;
}

/* A gap out of both trees (its slot is not reused: nodes live as long as
 * the packing). */
static void drop_gap(pr_gaps *g, uint32_t x) {
    tree_remove(g, x, 0);
    if (g->v[x].start + g->v[x].len != UINT64_MAX) tree_remove(g, x, 1);
}

void mp_gaps_init(pr_gaps *g) {
    memset(g, 0, sizeof *g);
    g->root[0] = g->root[1] = NIL;
    g->seed = 0x9e3779b9u;
    add_gap(g, 0, UINT64_MAX);
}

void mp_gaps_free(pr_gaps *g) { mp_xfree(g->v); }

/* The gap with the largest start <= at, or NIL. */
static uint32_t gap_at_or_below(const pr_gaps *g, uint64_t at) {
    uint32_t x = g->root[0], best = NIL;
    while (x != NIL) {
        if (g->v[x].start <= at) best = x, x = g->v[x].right[0];
        else x = g->v[x].left[0];
    }
    return best;
}

/* The gap with the smallest start > at, or NIL. */
static uint32_t gap_above(const pr_gaps *g, uint64_t at) {
    uint32_t x = g->root[0], best = NIL;
    while (x != NIL) {
        if (g->v[x].start > at) best = x, x = g->v[x].left[0];
        else x = g->v[x].right[0];
    }
    return best;
}

/* Bytes [a, b) are taken (b > a): every gap they meet loses them. */
static void take(pr_gaps *g, uint64_t a, uint64_t b) {
    uint32_t x = gap_at_or_below(g, a);
    if (x == NIL || g->v[x].start + g->v[x].len <= a) x = gap_above(g, a);
    while (x != NIL && g->v[x].start < b) {
        uint64_t s = g->v[x].start, e = s + g->v[x].len;
        uint32_t next = gap_above(g, s);
        drop_gap(g, x);
        if (s < a) add_gap(g, s, a - s);
        if (b < e) add_gap(g, b, e - b);
        x = next;
    }
}

/* An empty item at o splits the gap o is strictly inside. */
static void split_at(pr_gaps *g, uint64_t o) {
    uint32_t x = gap_at_or_below(g, o);
    if (x == NIL) return;
    uint64_t s = g->v[x].start, e = s + g->v[x].len;
    if (!(s < o && o < e)) return;
    drop_gap(g, x);
    add_gap(g, s, o - s);
    add_gap(g, o, e - o);
}

void mp_gaps_place(pr_gaps *g, uint64_t offset, uint64_t size) {
    uint64_t end = mp_sat_add_u64(offset, size);
    if (end > offset) take(g, offset, end);
    else split_at(g, offset);
}

uint64_t mp_gaps_lowest_fit(const pr_gaps *g, uint64_t size) {
    uint32_t x = g->root[0];
    if (size == 0) return 0; /* TFLite Micro's scan moves an empty item nowhere */
    for (;;) { /* the leftmost node whose len >= size (none: saturated sizes) */
        if (x == NIL) return UINT64_MAX;
        const gnode *n = &g->v[x];
        uint32_t l = n->left[0];
        if (l != NIL && g->v[l].max_len >= size) x = l;
        else if (n->len >= size) return n->start;
        else x = n->right[0];
    }
}

uint64_t mp_gaps_best_fit(const pr_gaps *g, uint64_t size) {
    uint32_t x = g->root[1], best = NIL;
    while (x != NIL) { /* the smallest (len, start) with len >= size */
        if (g->v[x].len >= size) best = x, x = g->v[x].left[1];
        else x = g->v[x].right[1];
    }
    if (best != NIL) return g->v[best].start;
    uint32_t last = g->root[0]; /* else the top: the last gap's start */
    if (last == NIL) return UINT64_MAX;
    while (g->v[last].right[0] != NIL) last = g->v[last].right[0];
    return g->v[last].start;
}
