/* bound.c - what the packer's constructions and its exact search both
 * need to know of an item list without laying it out: the live-bytes
 * peak (the lower bound no layout can beat) and the number of
 * overlapping pairs. */
#include "pack.h"

typedef struct ev {
    int32_t t;
    uint64_t add, sub;
} ev;

static int cmp_ev(const void *a, const void *b) {
    const ev *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/* Live bytes per node from a difference array: O(n + T) when the node
 * range T is small next to n, as it is for graphs (one node per step). */
static bool live_peak_dense(const pk_item *items, uint32_t n, uint64_t *out, int32_t *at) {
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (uint32_t i = 0; i < n; i++) {
        if (!items[i].size) continue; /* robust even to end < start */
        int32_t a = items[i].start < items[i].end ? items[i].start : items[i].end;
        int32_t b = items[i].start < items[i].end ? items[i].end : items[i].start;
        if (a < lo) lo = a;
        if (b > hi) hi = b;
    }
    if (lo > hi) {
        *out = 0, *at = 0;
        return true;
    }
    uint64_t range = (uint64_t)((int64_t)hi - lo) + 2;
    if (!mp_pk_span_dense(range, n)) return false;
    /* sums wrap alike in both directions, so the running total is exact;
     * a short range (a small sub-graph's) on the stack */
    uint64_t small[64] = {0};
    uint64_t *d = range <= 64 ? small : mp_xcalloc(range, sizeof *d), live = 0, best = 0;
    int32_t best_at = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!items[i].size) continue;
        d[items[i].start - lo] += items[i].size;
        d[items[i].end + 1 - lo] -= items[i].size;
    }
    for (uint64_t t = 0; t < range; t++) {
        live += d[t];
        if (live > best) best = live, best_at = (int32_t)(lo + (int64_t)t);
    }
    if (d != small) mp_xfree(d);
    *out = best, *at = best_at;
    return true;
}

uint64_t mp_pk_live_peak(const pk_item *items, uint32_t n, int32_t *at) {
    uint64_t best = 0;
    int32_t best_at = 0;
    if (!live_peak_dense(items, n, &best, &best_at)) {
        ev *e = mp_xmalloc((2 * (size_t)n + 1) * sizeof *e);
        size_t ne = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (!items[i].size) continue;
            e[ne++] = (ev){items[i].start, items[i].size, 0};
            e[ne++] = (ev){items[i].end + 1, 0, items[i].size};
        }
        qsort(e, ne, sizeof *e, cmp_ev);
        uint64_t live = 0;
        for (size_t i = 0; i < ne;) {
            int32_t t = e[i].t;
            for (; i < ne && e[i].t == t; i++) live = live + e[i].add - e[i].sub;
            if (live > best) best = live, best_at = t;
        }
        mp_xfree(e);
    }
    if (at) *at = best_at;
    return best;
}

uint64_t mp_pk_lower_bound(const pk_item *items, uint32_t n) { return mp_pk_live_peak(items, n, NULL); }

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static uint32_t count_at_most(const int32_t *sorted, uint32_t n, int64_t v) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) { /* first element > v */
        uint32_t mid = (lo + hi) / 2;
        if (sorted[mid] <= v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

uint64_t mp_pk_count_conflicts(const int32_t *s, const int32_t *e, uint32_t n, uint32_t *deg) {
    int32_t *ss = mp_xmalloc((n + 1) * sizeof *ss), *es = mp_xmalloc((n + 1) * sizeof *es);
    memcpy(ss, s, n * sizeof *ss);
    memcpy(es, e, n * sizeof *es);
    qsort(ss, n, sizeof *ss, cmp_i32);
    qsort(es, n, sizeof *es, cmp_i32);
    uint64_t twice = 0;
    for (uint32_t i = 0; i < n; i++) {
        int64_t d = (int64_t)count_at_most(ss, n, e[i]) - count_at_most(es, n, (int64_t)s[i] - 1) - 1;
        if (d < 0) d = 0; /* an improper lifetime (e < s): no count, but no wrap */
        if (deg) deg[i] = (uint32_t)d;
        twice += (uint64_t)d;
    }
    mp_xfree(ss);
    mp_xfree(es);
    return twice / 2;
}
