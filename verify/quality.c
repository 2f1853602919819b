/* quality.c - how good a plan is: the bytes it asks for against a lower
 * bound no valid plan can beat.
 *
 * For each graph and buffer, the bound is the largest, over nodes, of the
 * bytes live at that node plus the largest bound of the sub-graphs that node
 * runs, plus what earlier conds' results hold in their branches' memory
 * there beyond the result slots (held.c; since 1.8.0).  Members of one
 * in-place family share storage, so at each node a family counts with its
 * largest live member only.  Sub-graphs are done before their parents.
 * Each buffer is an event sweep over the nodes where something starts or
 * ends: O(n log n); a buffer with held memory is swept node by node. */
#include "verify.h"

#include <math.h>

/* A change of the live bytes at node t.  Sums are taken modulo 2^64: the
 * running total is exact whenever the true total fits in 64 bits, which
 * holds for every plan whose buffers do. */
typedef struct ev {
    int32_t t;
    uint64_t plus, minus;
} ev;

/* A buffer's events: a list to sort, or, when the buffer holds many
 * members for its graph's nodes, their sums per node (delta[t], t up to
 * n_nodes; modulo 2^64 as above): a list of 2 * 10^7 events and the merge
 * sort's copy of it were the verifier's peak memory at 10^7 tensors. */
typedef struct evs {
    ev *v;
    size_t n, cap;
    uint64_t *delta; /* NULL: the list */
    size_t n_t;      /* delta[0..n_t) */
} evs;

static void push(evs *e, int32_t t, uint64_t plus, uint64_t minus) {
    if (e->delta) {
        e->delta[t] += plus - minus;
        return;
    }
    ev x = {t, plus, minus};
    MP_VEC_PUSH(e->v, e->n, e->cap, x);
}

static int cmp_ev(const void *a, const void *b) {
    const ev *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/* An allocation as the bound sees it. */
typedef struct member {
    uint64_t buffer;
    int32_t family, start, end;
    uint64_t size;
    uint64_t off; /* its place in the plan: members at storage offsets (2.2) */
} member;

static int cmp_member(const void *a, const void *b) {
    const member *x = a, *y = b;
    if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
    if (x->family != y->family) return x->family < y->family ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

/* The members in cmp_member's order (buffer, family, start): a stable
 * radix sort of the three packed in one key where they fit 64 bits (a
 * buffer number past 2^64 / the nodes and tensors cannot be planned), else
 * qsort.  At 10^7 tensors the merge sort's copy was 0.25 GB of fresh pages
 * and its comparisons 0.3 s. */
_Static_assert(sizeof(member) <= MP_PERMUTE_MAX, "members are permuted in place");

static void sort_members(member *m, size_t nm) {
    uint64_t mb = 0, mf = 0, ms = 0; /* family and start are indices: >= 0 */
    for (size_t i = 0; i < nm; i++) {
        if (m[i].buffer > mb) mb = m[i].buffer;
        if ((uint64_t)m[i].family > mf) mf = (uint64_t)m[i].family;
        if ((uint64_t)m[i].start > ms) ms = (uint64_t)m[i].start;
    }
    int wf = mp_bit_width(mf), ws = mp_bit_width(ms), w = mp_bit_width(mb) + wf + ws;
    if (nm < 2 || !w) return; /* one key: in order */
    if (w > 64 || nm >= UINT32_MAX) {
        qsort(m, nm, sizeof *m, cmp_member);
        return;
    }
    mp_pair *a = mp_xmalloc((2 * nm + 1) * sizeof *a);
    for (size_t i = 0; i < nm; i++)
        a[i] = (mp_pair){((m[i].buffer << wf | (uint64_t)m[i].family) << ws) | (uint64_t)m[i].start, (uint32_t)i};
    mp_sort_by_pairs(m, sizeof *m, a, (uint32_t)nm, w);
    mp_xfree(a);
}

/* A max-heap of live members by size (lazy: a member whose end has passed
 * leaves when it reaches the top). */
typedef struct mheap {
    const member **v;
    size_t n;
} mheap;

static void heap_push(mheap *h, const member *x) {
    size_t i = h->n++;
    while (i && h->v[(i - 1) / 2]->size < x->size) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = x;
}

static void heap_pop(mheap *h) {
    const member *x = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && h->v[c + 1]->size > h->v[c]->size) c++;
        if (h->v[c]->size <= x->size) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n) h->v[i] = x;
}

static int cmp_cut(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Events of one family in one buffer: the step function "largest live
 * member", as deltas between its breakpoints.  The members come sorted by
 * start (cmp_member); a sweep over the sorted breakpoints with a heap makes
 * it O(m log m), so a family that is one long in-place chain costs no more
 * than a short one per member. */
/* A family whose members sit at different places in its storage (offset=,
 * since 2.1) holds, while they live, the union of their bytes, more than
 * its largest member (a concatenation's pieces side by side): the bytes
 * of the union of the live members' [off, off + size) at cut.  Quadratic:
 * for families of at most SHIFTED_UNION members. */
#define SHIFTED_UNION 512

static int cmp_span(const void *a, const void *b) {
    const uint64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

static uint64_t live_union(const member *m, size_t k, int32_t cut, uint64_t *span) {
    size_t n = 0;
    for (size_t i = 0; i < k; i++)
        if (m[i].start <= cut && cut <= m[i].end) span[2 * n] = m[i].off, span[2 * n + 1] = m[i].off + m[i].size, n++;
    qsort(span, n, 2 * sizeof *span, cmp_span);
    uint64_t sum = 0, lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && span[2 * i] <= hi) {
            if (span[2 * i + 1] > hi) hi = span[2 * i + 1];
            continue;
        }
        sum += hi - lo;
        lo = span[2 * i], hi = span[2 * i + 1];
    }
    return sum + (hi - lo);
}

static bool shifted(const member *m, size_t k) {
    for (size_t i = 1; i < k; i++)
        if (m[i].off != m[0].off) return k <= SHIFTED_UNION;
    return false;
}

static void family_events(const member *m, size_t k, evs *e) {
    if (k == 1) {
        push(e, m[0].start, m[0].size, 0);
        push(e, m[0].end + 1, 0, m[0].size);
        return;
    }
    int32_t *cut = mp_xmalloc((2 * k + 1) * sizeof *cut);
    size_t nc = 0, next = 0;
    for (size_t i = 0; i < k; i++) {
        cut[nc++] = m[i].start;
        cut[nc++] = m[i].end + 1;
    }
    qsort(cut, nc, sizeof *cut, cmp_cut);
    mheap h = {mp_xmalloc((k + 1) * sizeof *h.v), 0};
    uint64_t prev = 0, *span = shifted(m, k) ? mp_xmalloc((2 * k + 1) * sizeof *span) : NULL;
    for (size_t i = 0; i < nc; i++) {
        if (i + 1 < nc && cut[i + 1] == cut[i]) continue;
        for (; next < k && m[next].start <= cut[i]; next++) heap_push(&h, &m[next]);
        while (h.n && h.v[0]->end < cut[i]) heap_pop(&h);
        uint64_t best = span ? live_union(m, k, cut[i], span) : h.n ? h.v[0]->size : 0;
        if (best != prev) push(e, cut[i], best, prev);
        prev = best;
    }
    mp_xfree(h.v);
    mp_xfree(span);
    mp_xfree(cut);
}

typedef v_bound lb;

/* sweep() over sums per node: each node in turn (one without events
 * changes nothing, so the answer is the list's), delta[] zeroed again;
 * boost[t] (NULL: none) added at each node (held.c). */
static uint64_t sweep_dense(uint64_t *delta, size_t n_t, const int32_t *cf, const uint64_t *extra,
                            size_t ncf, const uint64_t *boost, int64_t *at) {
    uint64_t live = 0, best = 0;
    size_t q = 0;
    *at = -1;
    for (size_t t = 0; t < n_t; t++) {
        live += delta[t];
        delta[t] = 0;
        uint64_t here = live, sum;
        if (boost && !mp_add_u64(here, boost[t], &here)) here = UINT64_MAX;
        for (; q < ncf && (size_t)cf[q] == t; q++) {
            if (!mp_add_u64(here, extra[q], &sum)) sum = UINT64_MAX;
            if (sum > here) here = sum;
        }
        if (here > best) best = here, *at = (int64_t)t;
    }
    return best;
}

/* Largest over nodes of live bytes (events) plus extra[node] (plus
 * boost[node], which only a per-node sweep takes); *at: the first node
 * where it is reached (-1 when nothing is live anywhere). */
static uint64_t sweep(evs *e, const int32_t *cf, const uint64_t *extra, size_t ncf, const uint64_t *boost,
                      int64_t *at) {
    if (e->delta) return sweep_dense(e->delta, e->n_t, cf, extra, ncf, boost, at);
    if (e->n) qsort(e->v, e->n, sizeof *e->v, cmp_ev);
    uint64_t live = 0, best = 0;
    size_t i = 0, q = 0;
    *at = -1;
    while (i < e->n || q < ncf) {
        int32_t t = i < e->n ? e->v[i].t : INT32_MAX;
        if (q < ncf && cf[q] < t) t = cf[q];
        for (; i < e->n && e->v[i].t == t; i++) live = live + e->v[i].plus - e->v[i].minus;
        uint64_t here = live, sum;
        while (q < ncf && cf[q] == t) {
            if (!mp_add_u64(here, extra[q], &sum)) sum = UINT64_MAX;
            if (sum > here) here = sum;
            q++;
        }
        if (here > best) best = here, *at = t;
    }
    return best;
}

/* extra[q]: the largest bound in buffer b of the sub-graphs that
 * control-flow node cf[q] runs. */
static void sub_bounds(const mp_graphdef *g, const int32_t *cf, size_t ncf, const lb *sub, uint32_t b,
                       uint64_t *extra) {
    for (size_t q = 0; q < ncf; q++) {
        extra[q] = 0;
        for (int k = 0; k < 2; k++) {
            int32_t s = g->nodes[cf[q]].sub[k];
            if (s >= 0 && b < sub[s].n && sub[s].v[b] > extra[q]) extra[q] = sub[s].v[b];
        }
    }
}

/* Tensors whose in-place family has other members, as a bitmap: their
 * members are grouped by family and sorted; any other member is a family
 * of its own, whose events come straight from its allocation. */
static uint8_t *shared_families(const mp_graphdef *g, const vgraph *vg) {
    uint8_t *shared = mp_xcalloc(g->n_tensors / 8 + 1, 1);
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        uint32_t r = (uint32_t)vg->family[t];
        if (r == t) continue;
        shared[t / 8] |= (uint8_t)(1u << (t % 8));
        shared[r / 8] |= (uint8_t)(1u << (r % 8));
    }
    return shared;
}

/* The allocations that count for the bound (usable, sized, of a used
 * tensor) in buffers 1 .. nb - 1, grouped by buffer in allocation order
 * (*idx_out); returns first[], where buffer b's are idx[first[b] ..
 * first[b + 1]).  4 bytes an allocation: a list of members sorted by
 * buffer, family and start was 64 bytes an allocation with the sort's,
 * 0.5 GB at the verifier's peak at 10^7. */
static uint32_t *allocs_by_buffer(const vctx *c, int32_t gi, uint32_t nb, uint32_t **idx_out) {
    const mp_graph_plan *gp = &c->plan->graphs[c->block_of[gi]];
    const vgraph *vg = &c->vg[gi];
    uint32_t *first = mp_xcalloc((size_t)nb + 2, sizeof *first), *idx = NULL, n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t a = 0; a < gp->n_allocs; a++) {
            const mp_alloc *x = &gp->allocs[a];
            if (!c->usable[gi][a] || vg->first[x->tensor] < 0 || !x->size || !x->mem_id || x->mem_id >= nb) continue;
            if (pass) idx[first[x->mem_id]++] = a; /* first[b]: where b's next goes */
            else first[x->mem_id + 1]++, n++;
        }
        if (pass) break;
        for (uint32_t b = 1; b <= nb; b++) first[b] += first[b - 1];
        idx = mp_xmalloc(((size_t)n + 1) * sizeof *idx);
    }
    memmove(first + 1, first, (size_t)nb * sizeof *first); /* back to where each began */
    first[0] = 0;
    *idx_out = idx;
    return first;
}

/* Buffer b's events (its allocations idx[0 .. k)): a family of one member
 * straight away, the others' members gathered and sorted (buffer, family,
 * start) as family_events needs them. */
static void buffer_events(const vctx *c, int32_t gi, const uint32_t *idx, size_t k, const uint8_t *shared,
                          evs *e) {
    const mp_graph_plan *gp = &c->plan->graphs[c->block_of[gi]];
    const vgraph *vg = &c->vg[gi];
    member *m = NULL;
    size_t nm = 0, cap = 0;
    for (size_t q = 0; q < k; q++) {
        const mp_alloc *x = &gp->allocs[idx[q]];
        int32_t t = x->tensor;
        member one = {x->mem_id, vg->family[t], vg->first[t], vg->last[t], x->size, x->offset};
        if (shared[t / 8] & (1u << (t % 8))) MP_VEC_PUSH(m, nm, cap, one);
        else family_events(&one, 1, e);
    }
    sort_members(m, nm);
    for (size_t i = 0; i < nm;) {
        size_t j = i;
        while (j < nm && m[j].family == m[i].family) j++;
        family_events(m + i, j - i, e);
        i = j;
    }
    mp_xfree(m);
}

/* The bound of each buffer of graph gi: its events swept, with the
 * sub-graphs' bounds at the nodes that run them.  A buffer's events sum
 * the same in any order, so the families may come in any. */
static void graph_bound(vctx *c, int32_t gi, lb *out, const lb *sub) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    const mp_graph_plan *gp = c->block_of[gi] >= 0 ? &c->plan->graphs[c->block_of[gi]] : NULL;
    uint32_t nb = gp ? gp->n_buffers : 0;
    int32_t *cf = mp_xmalloc((g->n_nodes + 1) * sizeof *cf);
    size_t ncf = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        bool any = false;
        for (int k = 0; k < 2; k++) {
            int32_t s = g->nodes[i].sub[k];
            if (s < 0) continue;
            any = true;
            if (sub[s].n > nb) nb = sub[s].n;
        }
        if (any) cf[ncf++] = (int32_t)i;
    }
    out->n = nb;
    out->v = mp_xcalloc(nb + 1, sizeof *out->v);
    out->at = mp_xcalloc(nb + 1, sizeof *out->at);
    uint32_t *idx = NULL, *first = gp ? allocs_by_buffer(c, gi, nb, &idx) : NULL;
    uint8_t *shared = gp ? shared_families(g, &c->vg[gi]) : NULL;
    uint64_t *extra = mp_xcalloc(ncf + 1, sizeof *extra);
    evs e = {.n_t = (size_t)g->n_nodes + 2};
    uint64_t *delta = NULL;
    v_holds H = {0};
    if (gp) mp_v_holds(c, gi, &H);
    for (uint32_t b = 1; b < nb; b++) {
        e.n = 0;
        size_t in_b = first ? first[b + 1] - first[b] : 0;
        /* what cond results hold after their cond: per node, so dense */
        bool held = gp && mp_v_held_boost(c, gi, &H, b, sub, idx + first[b], in_b);
        bool dense = held || 4 * in_b >= g->n_nodes; /* or members on most nodes */
        if (dense && !delta) delta = mp_xcalloc((size_t)g->n_nodes + 2, sizeof *delta);
        e.delta = dense ? delta : NULL;
        if (in_b) buffer_events(c, gi, idx + first[b], in_b, shared, &e);
        sub_bounds(g, cf, ncf, sub, b, extra);
        out->v[b] = sweep(&e, cf, extra, ncf, held ? H.boost : NULL, &out->at[b]);
    }
    mp_v_holds_free(&H);
    mp_xfree(e.v);
    mp_xfree(delta);
    mp_xfree(extra);
    mp_xfree(shared);
    mp_xfree(idx);
    mp_xfree(first);
    mp_xfree(cf);
}

void mp_v_quality(vctx *c) {
    uint32_t n;
    int32_t *order = mp_v_postorder_of(c, &n);
    lb *bounds = mp_xcalloc(c->prog->n_graphs + 1, sizeof *bounds);
    for (uint32_t k = 0; k < n; k++) graph_bound(c, order[k], &bounds[order[k]], bounds);
    mp_verify_report *r = c->r;
    /* totals saturate at UINT64_MAX (buffers may each be near 2^64); the
     * ratio comes from exact-enough double sums, so it stays meaningful */
    double bytes_d = 0, lower_d = 0;
    if (c->entry) {
        uint32_t nb = c->entry->n_buffers;
        if (bounds[0].n > nb) nb = bounds[0].n;
        r->n_buffers = nb;
        r->buf_bytes = mp_xcalloc(nb + 1, sizeof *r->buf_bytes);
        r->buf_lower = mp_xcalloc(nb + 1, sizeof *r->buf_lower);
        r->buf_peak = mp_xcalloc(nb + 1, sizeof *r->buf_peak);
        for (uint32_t b = 0; b < nb; b++) {
            r->buf_bytes[b] = b < c->entry->n_buffers ? c->entry->buffers[b] : 0;
            r->buf_lower[b] = b < bounds[0].n ? bounds[0].v[b] : 0;
            r->buf_peak[b] = b && b < bounds[0].n && r->buf_lower[b] ? bounds[0].at[b] : -1;
            r->total_bytes = mp_sat_add_u64(r->total_bytes, r->buf_bytes[b]);
            r->lower_bound = mp_sat_add_u64(r->lower_bound, r->buf_lower[b]);
            bytes_d += (double)r->buf_bytes[b];
            lower_d += (double)r->buf_lower[b];
        }
    }
    r->ratio = lower_d > 0 ? bytes_d / lower_d : (bytes_d > 0 ? INFINITY : 1.0);
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++) mp_xfree(bounds[gi].v), mp_xfree(bounds[gi].at);
    mp_xfree(bounds);
    mp_xfree(order);
}
