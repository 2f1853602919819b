/* pack.c - best-fit / first-fit offset assignment over several orderings,
 * then iterated-greedy improvement, for one buffer.
 *
 * The conflict graph (which items overlap in time) is built once by a
 * sweep over start times and stored compactly (CSR).  A placement visits
 * only the item's placed neighbours and scans their byte ranges in offset
 * order for a gap, so a whole layout costs O(P log d) for P overlapping
 * pairs and neighbourhoods of size d.  When P is too large to store
 * (thousands of items live at once), the packer lays out in time order
 * with an ordered structure of free gaps instead (sweep.c), O(n log n).
 *
 * Orderings tried: size, lifetime length, area (size x length), conflicts
 * (bytes of the neighbours), each with first fit, and size with best fit.
 * The best then seeds an iterated greedy: an item that reaches the peak
 * moves earlier in the order, the layout is redone, and the move is kept
 * when the peak does not grow. */
#include "pack.h"

#define PK_MAX_PAIRS (UINT64_C(100) << 20) /* conflict pairs stored, both ways */

/* ----------------------------------------------------------- lower bound */

typedef struct ev {
    int32_t t;
    uint64_t add, sub;
} ev;

static int cmp_ev(const void *a, const void *b) {
    const ev *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

uint64_t pk_lower_bound(const pk_item *items, uint32_t n) {
    ev *e = mp_xmalloc((2 * (size_t)n + 1) * sizeof *e);
    size_t ne = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!items[i].size) continue;
        e[ne++] = (ev){items[i].start, items[i].size, 0};
        e[ne++] = (ev){items[i].end + 1, 0, items[i].size};
    }
    qsort(e, ne, sizeof *e, cmp_ev);
    uint64_t live = 0, best = 0;
    for (size_t i = 0; i < ne;) {
        int32_t t = e[i].t;
        for (; i < ne && e[i].t == t; i++) live = live + e[i].add - e[i].sub;
        if (live > best) best = live;
    }
    free(e);
    return best;
}

/* ------------------------------------------------------- conflict graph */

typedef struct span {
    uint64_t lo, hi;
} span;

typedef struct pk {
    pk_item *it;   /* the caller's items */
    uint32_t n;    /* packed items (size > 0) */
    uint32_t *id;  /* packed index -> caller's index */
    uint64_t *size;
    int32_t *s, *e;
    uint32_t *adj_at, *adj;
    uint64_t *off;
    uint8_t *placed;
    span *busy;
    uint64_t work;
} pk;

typedef struct keyed {
    uint64_t k1, k2;
    uint32_t i;
} keyed;

static int cmp_keyed_asc(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int cmp_keyed_desc(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->k1 != y->k1) return x->k1 > y->k1 ? -1 : 1;
    if (x->k2 != y->k2) return x->k2 > y->k2 ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Items in start order (ties by end), as indices. */
static uint32_t *by_start(const pk *k) {
    keyed *v = mp_xmalloc((k->n + 1) * sizeof *v);
    for (uint32_t i = 0; i < k->n; i++) v[i] = (keyed){(uint64_t)k->s[i], (uint64_t)k->e[i], i};
    qsort(v, k->n, sizeof *v, cmp_keyed_asc);
    uint32_t *o = mp_xmalloc((k->n + 1) * sizeof *o);
    for (uint32_t i = 0; i < k->n; i++) o[i] = v[i].i;
    free(v);
    return o;
}

/* Overlapping pairs, counted with a heap of end times: O(n log n). */
static uint64_t count_pairs(const pk *k, const uint32_t *order) {
    int32_t *heap = mp_xmalloc((k->n + 1) * sizeof *heap);
    size_t hn = 0;
    uint64_t pairs = 0;
    for (uint32_t q = 0; q < k->n; q++) {
        uint32_t i = order[q];
        while (hn && heap[0] < k->s[i]) { /* pop ended */
            int32_t last = heap[--hn];
            size_t j = 0;
            for (;;) {
                size_t c = 2 * j + 1;
                if (c >= hn) break;
                if (c + 1 < hn && heap[c + 1] < heap[c]) c++;
                if (heap[c] >= last) break;
                heap[j] = heap[c];
                j = c;
            }
            if (hn) heap[j] = last;
        }
        pairs += hn;
        size_t j = hn++; /* push */
        while (j && heap[(j - 1) / 2] > k->e[i]) {
            heap[j] = heap[(j - 1) / 2];
            j = (j - 1) / 2;
        }
        heap[j] = k->e[i];
    }
    free(heap);
    return pairs;
}

static void build_conflicts(pk *k, const uint32_t *order, uint64_t pairs) {
    uint32_t n = k->n;
    uint32_t *deg = mp_xcalloc(n + 1, sizeof *deg);
    uint32_t *active = mp_xmalloc((n + 1) * sizeof *active);
    k->adj_at = mp_xmalloc((n + 2) * sizeof *k->adj_at);
    k->adj = mp_xmalloc((2 * pairs + 1) * sizeof *k->adj);
    for (int pass = 0; pass < 2; pass++) {
        size_t na = 0;
        for (uint32_t q = 0; q < n; q++) {
            uint32_t i = order[q];
            size_t w = 0;
            for (size_t a = 0; a < na; a++) {
                uint32_t j = active[a];
                if (k->e[j] < k->s[i]) continue; /* ended: drop */
                active[w++] = j;
                if (pass == 0) {
                    deg[i]++;
                    deg[j]++;
                } else {
                    k->adj[k->adj_at[i] + deg[i]++] = j;
                    k->adj[k->adj_at[j] + deg[j]++] = i;
                }
            }
            na = w;
            active[na++] = i;
        }
        if (pass == 0) {
            k->adj_at[0] = 0;
            for (uint32_t i = 0; i < n; i++) k->adj_at[i + 1] = k->adj_at[i] + deg[i];
            memset(deg, 0, (n + 1) * sizeof *deg);
        }
    }
    free(deg);
    free(active);
}

/* ------------------------------------------------------------- placement */

static void sort_spans(span *v, uint32_t n) {
    for (uint32_t i = 1; i < n; i++) {
        span x = v[i];
        uint32_t j = i;
        while (j && v[j - 1].lo > x.lo) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

static int cmp_span(const void *a, const void *b) {
    const span *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Lowest offset (first fit) or tightest gap (best fit) for item i. */
static uint64_t place(pk *k, uint32_t i, bool best_fit) {
    uint32_t nb = 0;
    for (uint32_t a = k->adj_at[i]; a < k->adj_at[i + 1]; a++) {
        uint32_t j = k->adj[a];
        if (k->placed[j]) k->busy[nb++] = (span){k->off[j], k->off[j] + k->size[j]};
    }
    k->work += 1 + (k->adj_at[i + 1] - k->adj_at[i]);
    if (nb < 24) sort_spans(k->busy, nb);
    else qsort(k->busy, nb, sizeof *k->busy, cmp_span);
    uint64_t need = k->size[i], cur = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
    for (uint32_t b = 0; b < nb; b++) {
        if (k->busy[b].lo > cur) {
            uint64_t gap = k->busy[b].lo - cur;
            if (gap >= need) {
                if (!best_fit) return cur;
                if (gap < best_gap) best_gap = gap, best = cur;
            }
        }
        if (k->busy[b].hi > cur) cur = k->busy[b].hi;
    }
    return best != UINT64_MAX ? best : cur;
}

/* Lay out in `order` (fixed items first); returns the peak. */
static uint64_t layout(pk *k, const uint32_t *order, bool best_fit) {
    memset(k->placed, 0, k->n);
    uint64_t peak = 0;
    for (uint32_t i = 0; i < k->n; i++)
        if (k->it[k->id[i]].fixed) {
            k->off[i] = k->it[k->id[i]].offset;
            k->placed[i] = 1;
            if (k->off[i] + k->size[i] > peak) peak = k->off[i] + k->size[i];
        }
    for (uint32_t q = 0; q < k->n; q++) {
        uint32_t i = order[q];
        if (k->placed[i]) continue;
        k->off[i] = place(k, i, best_fit);
        k->placed[i] = 1;
        if (k->off[i] + k->size[i] > peak) peak = k->off[i] + k->size[i];
    }
    return peak;
}

enum { ORD_SIZE, ORD_LENGTH, ORD_AREA, ORD_CONFLICT, N_ORD };

static void make_order(const pk *k, int kind, uint32_t *order) {
    keyed *v = mp_xmalloc((k->n + 1) * sizeof *v);
    for (uint32_t i = 0; i < k->n; i++) {
        uint64_t len = (uint64_t)(k->e[i] - k->s[i] + 1), k1 = k->size[i], k2 = len;
        if (kind == ORD_LENGTH) k1 = len, k2 = k->size[i];
        else if (kind == ORD_AREA) {
            if (!mp_mul_u64(k->size[i], len, &k1)) k1 = UINT64_MAX;
        } else if (kind == ORD_CONFLICT) {
            uint64_t c = 0;
            for (uint32_t a = k->adj_at[i]; a < k->adj_at[i + 1]; a++)
                if (!mp_add_u64(c, k->size[k->adj[a]], &c)) c = UINT64_MAX;
            k1 = c;
            k2 = k->size[i];
        }
        v[i] = (keyed){k1, k2, i};
    }
    qsort(v, k->n, sizeof *v, cmp_keyed_desc);
    for (uint32_t i = 0; i < k->n; i++) order[i] = v[i].i;
    free(v);
}

/* ----------------------------------------------------- iterated greedy */

static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Move an item that touches the peak earlier in the order; keep the move
 * when the peak does not grow.  Stops at the lower bound or the budget. */
static uint64_t improve(pk *k, uint32_t *order, bool best_fit, uint64_t peak, uint64_t lower,
                        uint64_t budget, uint64_t *best_off) {
    uint32_t n = k->n;
    uint32_t *cand = mp_xmalloc((n + 1) * sizeof *cand);
    uint32_t *pos = mp_xmalloc((n + 1) * sizeof *pos);
    uint32_t *crit = mp_xmalloc((n + 1) * sizeof *crit);
    uint64_t seed = 0x6d656d706c616eull ^ n, start = k->work;
    while (peak > lower && k->work - start < budget) {
        uint32_t nc = 0;
        for (uint32_t i = 0; i < n; i++)
            if (best_off[i] + k->size[i] == peak && !k->it[k->id[i]].fixed) crit[nc++] = i;
        if (!nc) break;
        for (uint32_t q = 0; q < n; q++) pos[order[q]] = q;
        uint32_t c = crit[rnd(&seed) % nc], p = pos[c];
        if (p == 0) { /* already first: shuffle a neighbour pair instead */
            if (n < 2) break;
            p = 1 + (uint32_t)(rnd(&seed) % (n - 1));
            c = order[p];
        }
        uint32_t to = rnd(&seed) % 4 == 0 ? 0 : (uint32_t)(rnd(&seed) % p);
        memcpy(cand, order, n * sizeof *cand);
        memmove(cand + to + 1, cand + to, (p - to) * sizeof *cand);
        cand[to] = c;
        uint64_t got = layout(k, cand, best_fit);
        if (got <= peak) {
            peak = got;
            memcpy(order, cand, n * sizeof *order);
            memcpy(best_off, k->off, n * sizeof *best_off);
        }
    }
    free(cand);
    free(pos);
    free(crit);
    return peak;
}

/* ---------------------------------------------------------------- solve */

uint64_t pk_solve(pk_item *items, uint32_t n, const pk_params *prm, pk_stats *st) {
    memset(st, 0, sizeof *st);
    pk k = {0};
    k.it = items;
    k.id = mp_xmalloc((n + 1) * sizeof *k.id);
    for (uint32_t i = 0; i < n; i++) {
        if (!items[i].fixed) items[i].offset = 0;
        if (items[i].size) k.id[k.n++] = i;
    }
    st->lower_bound = pk_lower_bound(items, n);
    k.size = mp_xmalloc((k.n + 1) * sizeof *k.size);
    k.s = mp_xmalloc((k.n + 1) * sizeof *k.s);
    k.e = mp_xmalloc((k.n + 1) * sizeof *k.e);
    for (uint32_t i = 0; i < k.n; i++) {
        k.size[i] = items[k.id[i]].size;
        k.s[i] = items[k.id[i]].start;
        k.e[i] = items[k.id[i]].end;
    }
    uint32_t *order = by_start(&k);
    uint64_t pairs = count_pairs(&k, order);
    uint64_t peak;
    if (pairs > PK_MAX_PAIRS) {
        free(order);
        peak = pk_sweep(items, n);
        st->heuristic = 100;
    } else {
        build_conflicts(&k, order, pairs);
        k.off = mp_xmalloc((k.n + 1) * sizeof *k.off);
        k.placed = mp_xmalloc(k.n + 1);
        k.busy = mp_xmalloc((k.n + 1) * sizeof *k.busy);
        uint64_t *best_off = mp_xmalloc((k.n + 1) * sizeof *best_off);
        uint32_t *best_order = mp_xmalloc((k.n + 1) * sizeof *best_order);
        peak = UINT64_MAX;
        bool best_fit = false;
        for (int kind = 0; kind < N_ORD && peak > st->lower_bound; kind++) {
            make_order(&k, kind, order);
            for (int fit = 0; fit < (kind == ORD_SIZE ? 2 : 1); fit++) {
                uint64_t got = layout(&k, order, fit == 1);
                if (got < peak) {
                    peak = got;
                    best_fit = fit == 1;
                    st->heuristic = (uint32_t)(kind * 2 + fit);
                    memcpy(best_off, k.off, k.n * sizeof *best_off);
                    memcpy(best_order, order, k.n * sizeof *best_order);
                }
            }
        }
        if (k.n) peak = improve(&k, best_order, best_fit, peak, st->lower_bound, prm->work, best_off);
        else peak = 0;
        for (uint32_t i = 0; i < n; i++)
            if (items[i].fixed && items[i].offset + items[i].size > peak)
                peak = items[i].offset + items[i].size;
        for (uint32_t i = 0; i < k.n; i++) items[k.id[i]].offset = best_off[i];
        if (prm->exact && peak > st->lower_bound) {
            st->exact_ran = true;
            peak = pk_exact(items, n, peak, st->lower_bound, prm->exact_work, &st->optimal,
                            &st->proved_bound, &k.work);
        }
        free(order);
        free(best_off);
        free(best_order);
        free(k.adj_at);
        free(k.adj);
        free(k.off);
        free(k.placed);
        free(k.busy);
    }
    st->peak = peak;
    if (peak == st->lower_bound) {
        st->optimal = true;
        st->proved_bound = peak;
    } else if (!st->exact_ran) {
        st->proved_bound = st->lower_bound;
    }
    st->work_used = k.work;
    free(k.id);
    free(k.size);
    free(k.s);
    free(k.e);
    return peak;
}
