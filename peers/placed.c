/* placed.c - the peer planners' shared pieces: the size order and the
 * placed items kept sorted by offset. */
#include "peers.h"

uint32_t mp_pr_order_by_size(const pk_item *items, uint32_t n, uint32_t *order) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!items[i].fixed) order[k++] = i;
    /* a bottom-up merge sort: stable, so equal sizes keep index order */
    uint32_t *tmp = mp_xmalloc((k + 1) * sizeof *tmp);
    for (uint32_t w = 1; w < k; w *= 2) {
        for (uint32_t lo = 0; lo < k; lo += 2 * w) {
            uint32_t mid = lo + w < k ? lo + w : k, hi = lo + 2 * w < k ? lo + 2 * w : k;
            uint32_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                tmp[o++] = items[order[b]].size > items[order[a]].size ? order[b++] : order[a++];
            while (a < mid) tmp[o++] = order[a++];
            while (b < hi) tmp[o++] = order[b++];
        }
        memcpy(order, tmp, k * sizeof *order);
    }
    mp_xfree(tmp);
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
