/* lanes.c - split overlapping intervals into non-overlapping lanes.
 *
 * Trace viewers need the slices of one thread to nest; tensors whose
 * lifetimes overlap do not, so each buffer's tensors are spread over as
 * few tracks ("lanes") as their largest overlap.  Intervals are taken in
 * (start, end, index) order; each gets the lowest-numbered lane that is
 * free at its start.  Two binary heaps: busy lanes by end, free lanes by
 * number. */
#include "viz.h"

typedef struct hent {
    int64_t key;
    uint32_t lane;
} hent;

typedef struct heap {
    hent *v;
    size_t n;
} heap;

static bool less(hent a, hent b) { return a.key < b.key || (a.key == b.key && a.lane < b.lane); }

static void hpush(heap *h, hent x) {
    size_t i = h->n++;
    while (i && less(x, h->v[(i - 1) / 2])) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = x;
}

static hent hpop(heap *h) {
    hent top = h->v[0], x = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && less(h->v[c + 1], h->v[c])) c++;
        if (!less(h->v[c], x)) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n) h->v[i] = x;
    return top;
}

typedef struct ord {
    int64_t s, e;
    size_t i;
} ord;

static int cmp_ord(const void *a, const void *b) {
    const ord *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    if (x->e != y->e) return x->e < y->e ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

uint32_t mp_viz_lanes(const int64_t *s, const int64_t *e, size_t n, uint32_t *lane) {
    ord *o = mp_xmalloc((n + 1) * sizeof *o);
    for (size_t i = 0; i < n; i++) o[i] = (ord){s[i], e[i] < s[i] ? s[i] : e[i], i};
    qsort(o, n, sizeof *o, cmp_ord);
    heap busy = {mp_xmalloc((n + 1) * sizeof(hent)), 0};
    heap idle = {mp_xmalloc((n + 1) * sizeof(hent)), 0};
    uint32_t lanes = 0;
    for (size_t k = 0; k < n; k++) {
        /* a lane whose last interval ended before this start is free */
        while (busy.n && busy.v[0].key < o[k].s) {
            hent h = hpop(&busy);
            hpush(&idle, (hent){h.lane, h.lane});
        }
        uint32_t l = idle.n ? hpop(&idle).lane : lanes++;
        lane[o[k].i] = l;
        hpush(&busy, (hent){o[k].e, l});
    }
    mp_xfree(busy.v);
    mp_xfree(idle.v);
    mp_xfree(o);
    return lanes;
}
