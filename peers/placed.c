/* placed.c - the peer planners' shared pieces: the size order, and the
 * placed items indexed by time, so that a new item meets only the placed
 * items live with it.
 *
 * TFLite Micro's and XLA's planners scan every placed buffer for each new
 * one, skipping those whose lifetimes do not meet its own: O(n^2) where
 * few are live at once (a 10^5-tensor chain took 8 s; issue 45, B8).  The
 * peers here ask the index for exactly the placed items whose lifetimes
 * meet the new one's, in the order the scan saw them (offset, then index),
 * and run the same scan over those: the same offsets, in time
 * proportional to the items met, not to all placed.
 *
 * The index: a segment tree over time whose nodes list the placed items
 * that cover them (each item in O(log T) nodes: the items live at a point
 * are those on its leaf's path to the root), and per time the items that
 * start there, with a bitmap of the times where any does.  An item meets
 * [s, e] when it is live at s, or starts in (s, e]: the two parts are
 * disjoint.  When every placed item meets the new one (counted in two
 * Fenwick trees over time: those that ended before s, those that start
 * after e), the scan's answer comes from the free gaps instead (gaps.c):
 * one node reading every other tensor would otherwise meet all of them,
 * each time. */
#include "peers.h"

typedef struct by_size {
    uint64_t size;
    uint32_t i;
} by_size;

/* Larger first, then index order: a total order, so qsort gives what a
 * stable sort by size would. */
static int cmp_by_size(const void *a, const void *b) {
    const by_size *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

uint32_t mp_pr_order_by_size(const pk_item *items, uint32_t n, uint32_t *order) {
    by_size *v = mp_xmalloc((n + 1) * sizeof *v);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!items[i].fixed) v[k++] = (by_size){items[i].size, i};
    qsort(v, k, sizeof *v, cmp_by_size);
    for (uint32_t q = 0; q < k; q++) order[q] = v[q].i;
    mp_xfree(v);
    return k;
}

/* ------------------------------------------------------------ the index */

/* Below this many items the plain scan is faster than the index. */
#define INDEX_FROM 64
/* The index keeps the plain scan's ordered list too while it holds this
 * many placed items at most (an insertion moves at most 32 KB), and scans
 * it when an item meets more than an eighth of them: sorting those costs
 * more than filtering the list. */
#define SORTED_UPTO 8192

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static uint32_t rank_of(const int32_t *t, uint32_t n, int32_t v) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Times as ranks among the items' own starts and ends (the order, so
 * every comparison, is kept): the index is as large as the buffer's
 * items, not as the program's time.  Returns how many ranks. */
static uint32_t rank_times(pr_placed *p, const pk_item *items, uint32_t n) {
    int32_t *t = mp_xmalloc((2 * (size_t)n + 1) * sizeof *t);
    for (uint32_t i = 0; i < n; i++) t[2 * i] = items[i].start, t[2 * i + 1] = items[i].end;
    qsort(t, 2 * (size_t)n, sizeof *t, cmp_i32);
    uint32_t m = 0;
    for (uint32_t i = 0; i < 2 * n; i++)
        if (!m || t[m - 1] != t[i]) t[m++] = t[i];
    p->rs = mp_xmalloc((n + 1) * sizeof *p->rs);
    p->re = mp_xmalloc((n + 1) * sizeof *p->re);
    for (uint32_t i = 0; i < n; i++) p->rs[i] = rank_of(t, m, items[i].start), p->re[i] = rank_of(t, m, items[i].end);
    mp_xfree(t);
    return m ? m : 1;
}

static void index_init(pr_placed *p, const pk_item *items, uint32_t n) {
    memset(p, 0, sizeof *p);
    p->items = items;
    p->all = mp_xmalloc((n + 1) * sizeof *p->all);
    p->out = mp_xmalloc((n + 1) * sizeof *p->out);
    p->plain = n < INDEX_FROM;
    for (uint32_t i = 0; i < n; i++) p->plain |= items[i].start > items[i].end; /* no interval: the plain scan */
    if (p->plain) return;
    uint32_t T = rank_times(p, items, n);
    p->leaves = 1;
    while (p->leaves < T) p->leaves *= 2;
    p->node_head = mp_xcalloc(2 * p->leaves, sizeof *p->node_head);
    p->start_head = mp_xcalloc(p->leaves, sizeof *p->start_head);
    p->start_bits = mp_xcalloc(p->leaves / 64 + 1, sizeof *p->start_bits);
    p->next_start = mp_xmalloc((n + 1) * sizeof *p->next_start);
    p->pairs = mp_xmalloc((2 * (size_t)n + 1) * sizeof *p->pairs);
    p->fen_start = mp_xcalloc(p->leaves + 1, sizeof *p->fen_start);
    p->fen_end = mp_xcalloc(p->leaves + 1, sizeof *p->fen_end);
    mp_gaps_init(&p->gaps);
}

static void fen_add(uint32_t *f, uint32_t leaves, uint32_t t) {
    for (uint32_t i = t + 1; i <= leaves; i += i & -i) f[i]++;
}

/* How many were added at times <= t. */
static uint32_t fen_upto(const uint32_t *f, uint32_t t) {
    uint32_t c = 0;
    for (uint32_t i = t + 1; i; i -= i & -i) c += f[i];
    return c;
}

/* How many placed items meet it: those started by its end, less those
 * ended before its start (an item that ended has started). */
static uint32_t meeting_count(const pr_placed *p, const pk_item *it) {
    uint32_t s = p->rs[it - p->items], e = p->re[it - p->items];
    return fen_upto(p->fen_start, e) - (s ? fen_upto(p->fen_end, s - 1) : 0);
}

static void node_add(pr_placed *p, uint32_t node, uint32_t i) {
    if (p->n_ent == p->cap_ent) {
        p->cap_ent = p->cap_ent ? p->cap_ent * 2 : 1024;
        p->ent_item = mp_xrealloc(p->ent_item, p->cap_ent * sizeof *p->ent_item);
        p->ent_next = mp_xrealloc(p->ent_next, p->cap_ent * sizeof *p->ent_next);
    }
    p->ent_item[p->n_ent] = i;
    p->ent_next[p->n_ent] = p->node_head[node];
    p->node_head[node] = ++p->n_ent; /* entry + 1: 0 ends a list */
}

static bool before(const pk_item *items, uint32_t a, uint32_t b) {
    return items[a].offset < items[b].offset || (items[a].offset == items[b].offset && a < b);
}

/* The plain scan's list: every placed item, kept by offset then index. */
static void plain_insert(pr_placed *p, uint32_t i) {
    uint32_t lo = 0, hi = p->n;
    while (lo < hi) { /* first position whose item comes after i */
        uint32_t mid = lo + (hi - lo) / 2;
        if (before(p->items, p->all[mid], i)) lo = mid + 1;
        else hi = mid;
    }
    memmove(p->all + lo + 1, p->all + lo, (p->n - lo) * sizeof *p->all);
    p->all[lo] = i;
    p->n++;
}

void mp_pr_placed_insert(pr_placed *p, uint32_t i) {
    if (p->plain) {
        plain_insert(p, i);
        return;
    }
    if (p->n < SORTED_UPTO) plain_insert(p, i); /* also in order while that costs little */
    else p->n++;
    uint32_t s = p->rs[i], e = p->re[i];
    fen_add(p->fen_start, p->leaves, s);
    fen_add(p->fen_end, p->leaves, e);
    mp_gaps_place(&p->gaps, p->items[i].offset, p->items[i].size);
    /* the canonical nodes of [s, e], bottom up */
    for (uint32_t l = s + p->leaves, r = e + p->leaves + 1; l < r; l >>= 1, r >>= 1) {
        if (l & 1) node_add(p, l++, i);
        if (r & 1) node_add(p, --r, i);
    }
    p->next_start[i] = p->start_head[s];
    p->start_head[s] = i + 1;
    p->start_bits[s / 64] |= 1ull << (s % 64);
}

void mp_pr_placed_init(pr_placed *p, const pk_item *items, uint32_t n) {
    index_init(p, items, n);
    for (uint32_t i = 0; i < n; i++)
        if (items[i].fixed) mp_pr_placed_insert(p, i);
}

void mp_pr_placed_free(pr_placed *p) {
    mp_xfree(p->node_head);
    mp_xfree(p->start_head);
    mp_xfree(p->start_bits);
    mp_xfree(p->next_start);
    mp_xfree(p->ent_item);
    mp_xfree(p->ent_next);
    mp_xfree(p->out);
    mp_xfree(p->all);
    mp_xfree(p->fen_start);
    mp_xfree(p->fen_end);
    mp_xfree(p->rs);
    mp_xfree(p->re);
    mp_xfree(p->pairs);
    if (!p->plain) mp_gaps_free(&p->gaps);
}

/* out[0..k) by (offset, index): the order the peers' scans take. */
static void insertion_sort(const pk_item *items, uint32_t *v, uint32_t k) {
    for (uint32_t i = 1; i < k; i++) {
        uint32_t x = v[i], j = i;
        for (; j && before(items, x, v[j - 1]); j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Many: a radix sort by offset (core/radix.c), then each run of equal
 * offsets by index (runs of two or more are rare: items live at once
 * share no byte, so only empty ones share an offset). */
static void sort_by_offset(pr_placed *p, uint32_t k) {
    if (k < 32) {
        insertion_sort(p->items, p->out, k);
        return;
    }
    mp_pair *a = p->pairs, *b = p->pairs + k;
    uint64_t top = 0;
    for (uint32_t i = 0; i < k; i++) {
        a[i] = (mp_pair){p->items[p->out[i]].offset, p->out[i]};
        if (a[i].key > top) top = a[i].key;
    }
    mp_pair *r = mp_sort_pairs(a, b, k, mp_bit_width(top));
    for (uint32_t i = 0; i < k; i++) p->out[i] = r[i].at;
    for (uint32_t i = 0, j; i < k; i = j) {
        for (j = i + 1; j < k && r[j].key == r[i].key; j++) continue;
        if (j - i > 1) insertion_sort(p->items, p->out + i, j - i);
    }
}

/* The placed items live at time s (relative), onto out. */
static uint32_t live_at(const pr_placed *p, uint32_t s, uint32_t k) {
    for (uint32_t node = s + p->leaves; node; node >>= 1)
        for (uint32_t e = p->node_head[node]; e; e = p->ent_next[e - 1]) p->out[k++] = p->ent_item[e - 1];
    return k;
}

/* The placed items that start in (s, e] (relative), onto out. */
static uint32_t starting_in(const pr_placed *p, uint32_t s, uint32_t e, uint32_t k) {
    for (uint32_t t = s + 1; t <= e;) {
        uint64_t word = p->start_bits[t / 64] >> (t % 64);
        if (!word) {
            t = (t / 64 + 1) * 64;
            continue;
        }
        t += (uint32_t)__builtin_ctzll(word);
        if (t > e) break;
        for (uint32_t i = p->start_head[t]; i; i = p->next_start[i - 1]) p->out[k++] = i - 1;
        t++;
    }
    return k;
}

/* The placed items whose lifetimes meet it's (`count` of them, without
 * the plain scan), by offset then index: into out.  The plain scan's
 * ordered list, filtered, where there is no index, and where it is kept
 * and the item meets more than an eighth of it (sorting those costs more). */
static uint32_t meeting(pr_placed *p, const pk_item *it, uint32_t count) {
    uint32_t k = 0;
    if (p->plain || (p->n <= SORTED_UPTO && count > p->n / 8)) {
        for (uint32_t j = 0; j < p->n; j++)
            if (mp_pr_overlap(it, &p->items[p->all[j]])) p->out[k++] = p->all[j];
        return k;
    }
    uint32_t s = p->rs[it - p->items], e = p->re[it - p->items];
    k = starting_in(p, s, e, live_at(p, s, 0));
    sort_by_offset(p, k);
    return k;
}

uint64_t mp_pr_peak(const pk_item *items, uint32_t n) {
    uint64_t peak = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t end = mp_sat_add_u64(items[i].offset, items[i].size);
        if (end > peak) peak = end;
    }
    return peak;
}

uint64_t mp_pr_pack(pk_item *items, uint32_t n, pr_choose choose, pr_choose_all choose_all) {
    uint32_t *order = mp_xmalloc((n + 1) * sizeof *order);
    uint32_t k = mp_pr_order_by_size(items, n, order);
    pr_placed placed;
    mp_pr_placed_init(&placed, items, n);
    for (uint32_t q = 0; q < k; q++) {
        pk_item *it = &items[order[q]];
        uint32_t m = placed.plain ? 0 : meeting_count(&placed, it);
        if (!placed.plain && placed.n && m == placed.n) { /* every placed item is live with it */
            it->offset = choose_all(&placed.gaps, it->size);
        } else {
            m = meeting(&placed, it, m);
            it->offset = choose(items, placed.out, m, it);
        }
        mp_pr_placed_insert(&placed, order[q]);
    }
    mp_xfree(order);
    mp_pr_placed_free(&placed);
    return mp_pr_peak(items, n);
}
