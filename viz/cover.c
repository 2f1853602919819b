/* cover.c - how many bytes a set of boxes covers, at every x.
 *
 * The live-bytes curves of the pictures and the trace counters are the
 * measure of the union of the byte ranges live at each point of time, so
 * bytes shared by two allocations (in-place reuse, or an overlap the
 * verifier reports) count once.  A sweep over x keeps, in a segment tree
 * over the distinct byte ends, how often each elementary byte interval is
 * covered and how many bytes of each subtree are covered at least once. */
#include "viz.h"

typedef struct cev {
    double x;
    int32_t delta;   /* +1 a box starts, -1 it ends */
    uint32_t lo, hi; /* compressed byte ends: elementary intervals [lo, hi) */
} cev;

static int cmp_cev(const void *a, const void *b) {
    const cev *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    if (p->delta != q->delta) return p->delta < q->delta ? -1 : 1;
    if (p->lo != q->lo) return p->lo < q->lo ? -1 : 1;
    return (p->hi > q->hi) - (p->hi < q->hi);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Invariant: cov[k] is the covered length of node k's byte range given
 * the counts in its subtree only; a node with cnt[k] > 0 is fully covered. */
typedef struct stree {
    const uint64_t *ys;
    uint32_t *cnt;
    uint64_t *cov;
} stree;

static void update(stree *t, size_t k, uint32_t l, uint32_t r, uint32_t ql, uint32_t qr,
                   int32_t d) {
    if (qr <= l || r <= ql) return;
    if (ql <= l && r <= qr) {
        t->cnt[k] = (uint32_t)((int64_t)t->cnt[k] + d);
    } else {
        uint32_t m = l + (r - l) / 2;
        update(t, 2 * k, l, m, ql, qr, d);
        update(t, 2 * k + 1, m, r, ql, qr, d);
    }
    if (t->cnt[k]) t->cov[k] = t->ys[r] - t->ys[l];
    else if (r - l == 1) t->cov[k] = 0;
    else t->cov[k] = t->cov[2 * k] + t->cov[2 * k + 1];
}

static uint32_t find(const uint64_t *ys, uint32_t m, uint64_t v) {
    uint32_t lo = 0, hi = m;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ys[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void push_step(viz_steps *s, size_t *cap, double x, uint64_t v) {
    if (s->n && s->v[s->n - 1] == v) return; /* steps stay maximal */
    if (s->n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        s->x = mp_xrealloc(s->x, *cap * sizeof *s->x);
        s->v = mp_xrealloc(s->v, *cap * sizeof *s->v);
    }
    s->x[s->n] = x;
    s->v[s->n++] = v;
}

void mp_viz_cover(const viz_box *b, size_t n, viz_steps *out) {
    memset(out, 0, sizeof *out);
    uint64_t *ys = mp_xmalloc((2 * n + 1) * sizeof *ys);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].lo < b[i].hi && b[i].x0 < b[i].x1) {
            ys[m++] = b[i].lo;
            ys[m++] = b[i].hi;
        }
    if (m == 0) {
        mp_xfree(ys);
        return;
    }
    qsort(ys, m, sizeof *ys, cmp_u64);
    size_t u = 1;
    for (size_t i = 1; i < m; i++)
        if (ys[i] != ys[u - 1]) ys[u++] = ys[i];
    cev *ev = mp_xmalloc(m * sizeof *ev);
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(b[i].lo < b[i].hi && b[i].x0 < b[i].x1)) continue;
        uint32_t lo = find(ys, (uint32_t)u, b[i].lo), hi = find(ys, (uint32_t)u, b[i].hi);
        ev[ne++] = (cev){b[i].x0, 1, lo, hi};
        ev[ne++] = (cev){b[i].x1, -1, lo, hi};
    }
    qsort(ev, ne, sizeof *ev, cmp_cev);
    stree t = {ys, mp_xcalloc(4 * u + 4, sizeof *t.cnt), mp_xcalloc(4 * u + 4, sizeof *t.cov)};
    size_t cap = 0;
    for (size_t i = 0; i < ne;) {
        double x = ev[i].x;
        for (; i < ne && ev[i].x == x; i++)
            if (u > 1) update(&t, 1, 0, (uint32_t)(u - 1), ev[i].lo, ev[i].hi, ev[i].delta);
        push_step(out, &cap, x, t.cov[1]);
    }
    mp_xfree(t.cnt);
    mp_xfree(t.cov);
    mp_xfree(ev);
    mp_xfree(ys);
}

void mp_viz_steps_free(viz_steps *s) {
    mp_xfree(s->x);
    mp_xfree(s->v);
    memset(s, 0, sizeof *s);
}
