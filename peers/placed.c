/* placed.c - the peer planners' shared pieces: the size order and the
 * placed items kept sorted by offset. */
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

static bool before(const pk_item *items, uint32_t a, uint32_t b) {
    return items[a].offset < items[b].offset || (items[a].offset == items[b].offset && a < b);
}

void mp_pr_placed_insert(pr_placed *p, const pk_item *items, uint32_t i) {
    uint32_t lo = 0, hi = p->n;
    while (lo < hi) { /* first position whose item comes after i */
        uint32_t mid = lo + (hi - lo) / 2;
        if (before(items, p->v[mid], i)) lo = mid + 1;
        else hi = mid;
    }
    memmove(p->v + lo + 1, p->v + lo, (p->n - lo) * sizeof *p->v);
    p->v[lo] = i;
    p->n++;
}

void mp_pr_placed_init(pr_placed *p, const pk_item *items, uint32_t n) {
    p->v = mp_xmalloc((n + 1) * sizeof *p->v);
    p->n = 0;
    for (uint32_t i = 0; i < n; i++)
        if (items[i].fixed) mp_pr_placed_insert(p, items, i);
}

uint64_t mp_pr_peak(const pk_item *items, uint32_t n) {
    uint64_t peak = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t end = mp_sat_add_u64(items[i].offset, items[i].size);
        if (end > peak) peak = end;
    }
    return peak;
}

uint64_t mp_pr_pack(pk_item *items, uint32_t n, pr_choose choose) {
    uint32_t *order = mp_xmalloc((n + 1) * sizeof *order);
    uint32_t k = mp_pr_order_by_size(items, n, order);
    pr_placed placed;
    mp_pr_placed_init(&placed, items, n);
    for (uint32_t q = 0; q < k; q++) {
        items[order[q]].offset = choose(items, &placed, &items[order[q]]);
        mp_pr_placed_insert(&placed, items, order[q]);
    }
    mp_xfree(order);
    mp_xfree(placed.v);
    return mp_pr_peak(items, n);
}
