/* pack.c - lay out one buffer: several greedy constructions, the best
 * kept, then iterated-greedy improvement.
 *
 * Constructions:
 *   - time-ordered first fit over an ordered structure of free gaps
 *     (sweep.c): O(n log n), the baseline for any size;
 *   - bottom-up: each step the item that can sit lowest, ties by a static
 *     rank (seven ranks: width, area, busiest-node bytes, size, conflict
 *     count in MiniMalloc's letter notation); exact keys in a 2-d tree
 *     (kd.c);
 *   - when the conflict graph is small enough to store (P overlapping
 *     pairs, CSR): first fit / best fit in decreasing size, lifetime, area,
 *     conflict, size-then-start, start, size-then-end and busiest-node
 *     orders, each placement scanning only the item's placed neighbours
 *     in offset order, O(P) per layout; then a compaction pass lets every
 *     item fall to the lowest place it fits.
 * The best layout seeds an iterated greedy: an item under the peak moves
 * earlier in the order, the layout is redone, the move kept when the peak
 * does not grow, until the lower bound or the work budget is reached. */
#include "pack.h"

#include <math.h>
#include <stdio.h>

#include "kd.h"
#include "sort.h"

#define PK_MAX_PAIRS (UINT64_C(4) << 20) /* conflict pairs worth a conflict graph */
/* The V stacks of the anchored sweep run in buffers up to this size, as
 * the bottom-up runs do: above it each is a tenth of a second a million
 * items, and none lowered a generated buffer that large (wide-10^6's,
 * transformer-10^7's) */
#define PK_VEE_MAX_ITEMS 65536

/* ------------------------------------------------------- conflict graph */

/* The larger of peak and the top of an item at off (saturating). */
static inline uint64_t top_max(uint64_t peak, uint64_t off, uint64_t size) {
    uint64_t top = mp_sat_add_u64(off, size);
    return top > peak ? top : peak;
}

typedef struct span {
    uint64_t lo, hi;
} span;

typedef struct pk {
    pk_item *it;   /* the caller's items */
    uint32_t n;    /* packed items (size > 0) */
    uint32_t n_items; /* the caller's items (it[0..n_items)) */
    uint32_t *id;  /* packed index -> caller's index */
    uint64_t *size;
    int32_t *s, *e;
    uint32_t *adj_at;
    uint32_t *adj;   /* neighbours (CSR rows at adj_at), when n > 2^16 */
    uint16_t *adj16; /* the same, when every index fits 16 bits: half the
                      * pages, and a dense buffer's graph is megabytes of
                      * fresh pages the kernel must zero and map */
    uint64_t *off;
    span *at; /* per item: its bytes when placed; hi 0 when not */
    span *busy, *busy2;
    uint32_t *bucket; /* counting-sort scratch */
    uint64_t work;
    uint64_t pairs;    /* overlapping pairs (count_pairs) */
    uint64_t lower;    /* the lower bound */
    uint32_t *by_s;    /* items in start order (by_start) */
    uint32_t *deg;     /* conflict counts, on first use */
} pk;

typedef pk_keyed keyed;

static int cmp_keyed_asc(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Stable counting sort of `in` by key[] - lo (keys within [lo, lo+range)). */
static void counting_pass(const uint32_t *in, uint32_t *out, uint32_t n, const int32_t *key, int32_t lo,
                          uint32_t range) {
    uint32_t *at = mp_xcalloc((size_t)range + 1, sizeof *at);
    for (uint32_t q = 0; q < n; q++) at[key[in[q]] - lo + 1]++;
    for (uint32_t r = 0; r < range; r++) at[r + 1] += at[r];
    for (uint32_t q = 0; q < n; q++) out[at[key[in[q]] - lo]++] = in[q];
    mp_xfree(at);
}

/* Items in start order (ties by end, then index), as indices: two stable
 * counting passes when the node range is small, else a comparison sort. */
static uint32_t *by_start(const pk *k) {
    uint32_t *o = mp_xmalloc((k->n + 1) * sizeof *o);
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (uint32_t i = 0; i < k->n; i++) { /* robust even to e < s */
        int32_t a = k->s[i] < k->e[i] ? k->s[i] : k->e[i], b = k->s[i] < k->e[i] ? k->e[i] : k->s[i];
        if (a < lo) lo = a;
        if (b > hi) hi = b;
    }
    uint64_t range = k->n ? (uint64_t)((int64_t)hi - lo) + 1 : 0;
    if (range && mp_pk_span_dense(range, k->n)) {
        uint32_t *tmp = mp_xmalloc((k->n + 1) * sizeof *tmp);
        for (uint32_t i = 0; i < k->n; i++) o[i] = i;
        counting_pass(o, tmp, k->n, k->e, lo, (uint32_t)range);
        counting_pass(tmp, o, k->n, k->s, lo, (uint32_t)range);
        mp_xfree(tmp);
        return o;
    }
    keyed *v = mp_xmalloc((k->n + 1) * sizeof *v);
    for (uint32_t i = 0; i < k->n; i++) v[i] = (keyed){(uint64_t)k->s[i], (uint64_t)k->e[i], i};
    qsort(v, k->n, sizeof *v, cmp_keyed_asc);
    for (uint32_t i = 0; i < k->n; i++) o[i] = v[i].i;
    mp_xfree(v);
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
    mp_xfree(heap);
    return pairs;
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Whether every lifetime is an interval (start <= end), as graphs give
 * them; the counting below relies on it. */
static bool proper_lifetimes(const pk *k) {
    for (uint32_t i = 0; i < k->n; i++)
        if (k->e[i] < k->s[i]) return false;
    return true;
}


/* Conflict counts (the 'O' rank): from the conflict graph when it is
 * built, else counted, else (improper lifetimes) the graph is built. */
static void ensure_conflicts(pk *k);

static const uint32_t *degrees(pk *k) {
    if (k->deg) return k->deg;
    k->deg = mp_xmalloc((k->n + 1) * sizeof *k->deg);
    if (k->adj_at) {
        for (uint32_t i = 0; i < k->n; i++) k->deg[i] = k->adj_at[i + 1] - k->adj_at[i];
    } else if (proper_lifetimes(k)) {
        mp_pk_count_conflicts(k->s, k->e, k->n, k->deg);
    } else {
        ensure_conflicts(k);
        for (uint32_t i = 0; i < k->n; i++) k->deg[i] = k->adj_at[i + 1] - k->adj_at[i];
    }
    return k->deg;
}

/* Neighbour a of the conflict graph's rows. */
static inline uint32_t neighbour(const pk *k, uint32_t a) { return k->adj16 ? k->adj16[a] : k->adj[a]; }

/* Every overlapping pair by one sweep in start order, O(n + P): each
 * item's count raised (deg), or, when `write`, the pair listed in both
 * rows at the next free place of each (deg counts the places used). */
static void sweep_pairs(pk *k, uint32_t *deg, uint32_t *active, bool write) {
    size_t na = 0;
    for (uint32_t q = 0; q < k->n; q++) {
        uint32_t i = k->by_s[q];
        size_t w = 0;
        for (size_t a = 0; a < na; a++) {
            uint32_t j = active[a];
            if (k->e[j] < k->s[i]) continue; /* ended: drop */
            active[w++] = j;
            uint32_t ai = deg[i]++, aj = deg[j]++;
            if (!write) continue;
            ai += k->adj_at[i], aj += k->adj_at[j];
            if (k->adj16) k->adj16[ai] = (uint16_t)j, k->adj16[aj] = (uint16_t)i;
            else k->adj[ai] = j, k->adj[aj] = i;
        }
        na = w;
        active[na++] = i;
    }
}

/* 1 + the number of halvings that take n to 1: the log n of the cost
 * model and of the dense-buffer test. */
static uint32_t levels(uint32_t n) {
    uint32_t lg = 1;
    for (uint32_t m = n; m > 1; m >>= 1) lg++;
    return lg;
}

/* The effort model, in work units (about one item or pair visited each),
 * fitted on the bench's profiles (docs/notes/optimized.md): what one
 * first-fit construction and one bottom-up run are expected to cost, and
 * the budget the constructions of one buffer share. */
#define PK_FF_PER_VISIT 12.0     /* first fit: per pair end and per item */
#define PK_FF_PER_LEVEL 2.0      /* first fit's order: per item and log n */
#define PK_BU_PER_ITEM 25.0      /* bottom up: per item, per (sqrt n + log n) */
#define PK_BUDGET_BASE 5e6       /* every buffer's share, however small */
#define PK_BUDGET_PER_LEVEL 20.0 /* and per item and log n */
#define PK_BU_MAX_ITEMS 65536    /* buffers this small afford bottom-up runs too */

/* The conflict graph (CSR) from a sweep in start order: every pair is
 * listed once by the later item, O(n + P).  The row sizes come first: in
 * a dense buffer (P above 4 n log n) counted in O(n log n), which spares
 * a second O(P) sweep, where lifetimes are intervals (as graphs give
 * them); else by the same sweep. */
static void build_conflicts(pk *k) {
    uint32_t n = k->n, lg = levels(n);
    uint32_t *deg = mp_xcalloc(n + 1, sizeof *deg);
    uint32_t *active = mp_xmalloc((n + 1) * sizeof *active);
    k->adj_at = mp_xmalloc((n + 2) * sizeof *k->adj_at);
    k->adj_at[0] = 0;
    if (k->pairs > 4 * (uint64_t)n * lg && proper_lifetimes(k)) mp_pk_count_conflicts(k->s, k->e, n, deg);
    else sweep_pairs(k, deg, active, false);
    for (uint32_t i = 0; i < n; i++) k->adj_at[i + 1] = k->adj_at[i] + deg[i];
    memset(deg, 0, (n + 1) * sizeof *deg);
    if (n <= UINT32_C(1) << 16) k->adj16 = mp_xmalloc(((size_t)k->adj_at[n] + 1) * sizeof *k->adj16);
    else k->adj = mp_xmalloc(((size_t)k->adj_at[n] + 1) * sizeof *k->adj);
    sweep_pairs(k, deg, active, true);
    mp_xfree(deg);
    mp_xfree(active);
}

/* The conflict graph and the placement scratch, built on first use: a
 * dense buffer whose constructions are all bottom-up never pays O(P) for
 * it.  Callers use it only where P fits (PK_MAX_PAIRS). */
static void ensure_conflicts(pk *k) {
    if (k->adj_at) return;
    build_conflicts(k);
    uint32_t max_deg = 0;
    for (uint32_t i = 0; i < k->n; i++)
        if (k->adj_at[i + 1] - k->adj_at[i] > max_deg) max_deg = k->adj_at[i + 1] - k->adj_at[i];
    k->busy = mp_xmalloc((max_deg + 1) * sizeof *k->busy);
    k->busy2 = mp_xmalloc((max_deg + 1) * sizeof *k->busy2);
    k->bucket = mp_xmalloc((max_deg + 2) * sizeof *k->bucket);
}

/* ------------------------------------------------------------- placement */

static void insertion_sort(span *v, uint32_t n) {
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

/* Spans v[0..m) sorted by start, least significant byte first over the
 * bytes in which their starts differ; tmp holds m spans of scratch.  A
 * crowded bucket took qsort 8.5% of opt's time on the mixed profile at
 * 10^5 tensors. */
static void radix_spans(span *v, span *tmp, uint32_t m) {
    uint64_t all = UINT64_MAX, any = 0;
    for (uint32_t i = 0; i < m; i++) all &= v[i].lo, any |= v[i].lo;
    uint64_t vary = all ^ any;
    span *src = v, *dst = tmp;
    for (int sh = 0; sh < 64; sh += 8) {
        if (!((vary >> sh) & 0xff)) continue;
        uint32_t at[257] = {0};
        for (uint32_t i = 0; i < m; i++) at[((src[i].lo >> sh) & 0xff) + 1]++;
        for (int c = 0; c < 256; c++) at[c + 1] += at[c];
        for (uint32_t i = 0; i < m; i++) dst[at[(src[i].lo >> sh) & 0xff]++] = src[i];
        span *t = src;
        src = dst, dst = t;
    }
    if (src != v) memcpy(v, src, m * sizeof *v);
}

/* Spans busy[0..n) distributed into n buckets by start / (max_lo + 1),
 * in bucket order in busy2 (bucket b ends at bucket[b]), each bucket still
 * unsorted; busy[] is then free for scratch.  O(n) for even offsets. */
static void distribute_spans(pk *k, uint32_t n, uint64_t max_lo) {
    double scale = (double)n / ((double)max_lo + 1.0);
    memset(k->bucket, 0, (n + 1) * sizeof *k->bucket);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t b = (uint32_t)((double)k->busy[i].lo * scale);
        k->bucket[(b < n ? b : n - 1) + 1]++;
    }
    for (uint32_t b = 0; b < n; b++) k->bucket[b + 1] += k->bucket[b];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t b = (uint32_t)((double)k->busy[i].lo * scale);
        k->busy2[k->bucket[b < n ? b : n - 1]++] = k->busy[i];
    }
}

/* Scan spans v[0..m) in start order from *cur: the first gap of `need`
 * bytes (first fit: its offset, else UINT64_MAX), or each gap offered to
 * *best (best fit: the tightest).  *cur ends at the highest end seen. */
static uint64_t scan_spans(const span *v, uint32_t m, uint64_t need, bool best_fit, uint64_t *cur,
                           uint64_t *best, uint64_t *best_gap) {
    for (uint32_t b = 0; b < m; b++) {
        if (v[b].lo > *cur) {
            uint64_t gap = v[b].lo - *cur;
            if (gap >= need) {
                if (!best_fit) return *cur;
                if (gap < *best_gap) *best_gap = gap, *best = *cur;
            }
        }
        if (v[b].hi > *cur) *cur = v[b].hi;
    }
    return UINT64_MAX;
}

/* Item i's placed neighbours' byte ranges into k->busy (their count), the
 * largest start into *max_lo; counts the work.  The packer's hot loop. */
static inline uint32_t gather_spans(pk *k, uint32_t i, uint64_t *max_lo) {
    uint32_t nb = 0, from = k->adj_at[i], to = k->adj_at[i + 1];
    uint64_t lo = 0;
    /* one read a neighbour, once per index width */
#define GATHER(ADJ)                                                                                          \
    for (uint32_t a = from; a < to; a++) {                                                                  \
        span x = k->at[(ADJ)[a]];                                                                           \
        if (!x.hi) continue;                                                                                \
        k->busy[nb++] = x;                                                                                  \
        if (x.lo > lo) lo = x.lo;                                                                           \
    }
    if (k->adj16) GATHER(k->adj16) else GATHER(k->adj)
#undef GATHER
    k->work += 1 + (to - from);
    *max_lo = lo;
    return nb;
}

/* Lowest offset (first fit) or tightest gap (best fit) for item i: its
 * placed neighbours' byte ranges scanned in start order.  Many spans go
 * into buckets by start, each sorted only when the scan reaches it (by
 * insertion when short, by a radix sort when offsets crowd it: a few huge
 * items above many small ones put most offsets in the lowest buckets), so
 * a first fit low down sorts little.  This is the packer's hot loop.
 * Spans of equal start may come in any order: a gap is found between
 * starts, so the layout does not depend on it. */
static uint64_t place(pk *k, uint32_t i, bool best_fit) {
    uint64_t max_lo;
    uint32_t nb = gather_spans(k, i, &max_lo);
    uint64_t need = k->size[i], cur = 0, best = UINT64_MAX, best_gap = UINT64_MAX, at;
    if (nb < 32) {
        insertion_sort(k->busy, nb);
        at = scan_spans(k->busy, nb, need, best_fit, &cur, &best, &best_gap);
        return at != UINT64_MAX ? at : best != UINT64_MAX ? best : cur;
    }
    distribute_spans(k, nb, max_lo);
    for (uint32_t b = 0, from_b = 0; b < nb; from_b = k->bucket[b++]) {
        uint32_t m = k->bucket[b] - from_b;
        span *v = k->busy2 + from_b;
        if (m <= 16) insertion_sort(v, m);
        else radix_spans(v, k->busy + from_b, m);
        if ((at = scan_spans(v, m, need, best_fit, &cur, &best, &best_gap)) != UINT64_MAX) return at;
    }
    return best != UINT64_MAX ? best : cur;
}

/* Lay out in `order` (fixed items first); returns the peak. */
static void set_at(pk *k, uint32_t i, uint64_t off) {
    k->off[i] = off;
    k->at[i] = (span){off, mp_sat_add_u64(off, k->size[i])};
}

/* k->at, allocated on first use: a buffer laid out by the sweeps alone
 * (no conflict graph, as at 10^7 tensors) never needs it, and it was
 * 0.11 GB at the plan's peak there.  Its contents are set before read. */
static void need_at(pk *k) {
    if (!k->at) k->at = mp_xmalloc((k->n + 1) * sizeof *k->at);
}

/* A layout begun: nothing placed but the fixed items; their peak. */
static uint64_t place_fixed(pk *k) {
    need_at(k);
    memset(k->at, 0, k->n * sizeof *k->at);
    uint64_t peak = 0;
    for (uint32_t i = 0; i < k->n; i++)
        if (k->it[k->id[i]].fixed) {
            set_at(k, i, k->it[k->id[i]].offset);
            peak = top_max(peak, k->off[i], k->size[i]);
        }
    return peak;
}

static uint64_t layout(pk *k, const uint32_t *order, bool best_fit) {
    uint64_t peak = place_fixed(k);
    for (uint32_t q = 0; q < k->n; q++) {
        uint32_t i = order[q];
        if (k->at[i].hi) continue;
        set_at(k, i, place(k, i, best_fit));
        peak = top_max(peak, k->off[i], k->size[i]);
    }
    return peak;
}

/* ------------------------------------------------------ two-sided fit */

/* The highest offset where item i fits under `cap` between its placed
 * neighbours, or UINT64_MAX: their byte ranges sorted by start, the last
 * gap (below cap) that holds it. */
static uint64_t place_top(pk *k, uint32_t i, uint64_t cap) {
    uint64_t max_lo;
    uint32_t nb = gather_spans(k, i, &max_lo);
    if (nb <= 16) insertion_sort(k->busy, nb);
    else radix_spans(k->busy, k->busy2, nb);
    uint64_t need = k->size[i], cur = 0, at = UINT64_MAX;
    for (uint32_t b = 0; b <= nb && cur < cap; b++) {
        uint64_t end = b < nb && k->busy[b].lo < cap ? k->busy[b].lo : cap;
        if (end > cur && end - cur >= need) at = end - need; /* gaps come in rising order */
        if (b < nb && k->busy[b].hi > cur) cur = k->busy[b].hi;
    }
    return at;
}

/* The side of item i (0 the floor, 1 the lower bound's ceiling): the
 * other side from its largest placed neighbour's, the floor when none. */
static uint8_t side_of(const pk *k, uint32_t i, const uint8_t *side) {
    uint64_t most = 0;
    uint8_t s = 1;
    for (uint32_t a = k->adj_at[i]; a < k->adj_at[i + 1]; a++) {
        uint32_t j = neighbour(k, a);
        if (k->at[j].hi && k->size[j] > most) most = k->size[j], s = side[j];
    }
    return (uint8_t)!s;
}

/* Large item i placed on its side (side[i] set): rising from the floor,
 * or hanging from `cap` as a ceiling; where its side has no room under
 * cap, the other side, else the lowest fit. */
static uint64_t place_sided(pk *k, uint32_t i, uint64_t cap, uint8_t *side) {
    uint8_t s = side_of(k, i, side);
    uint64_t off = s ? place_top(k, i, cap) : place(k, i, false);
    if (s ? off == UINT64_MAX : mp_sat_add_u64(off, k->size[i]) > cap) {
        uint64_t other = s ? place(k, i, false) : place_top(k, i, cap);
        if (s || other != UINT64_MAX) off = other, s = !s;
    }
    side[i] = s;
    return off;
}

/* Items of at least 1/PK_SIDED_SHARE of the bound take sides; the rest
 * fill in after them by first fit. */
#define PK_SIDED_SHARE 16

/* First fit from both ends, in `order` (start order): first the large
 * items, each on the other side from its largest placed neighbour, rising
 * from the floor or hanging from the lower bound as a ceiling; then the
 * small ones, lowest fit, in the room between.  A chain of blocks each
 * meeting the next only (a cond's memory held while the next cond runs,
 * ping-pong buffers) packs at its largest neighbouring pair this way:
 * every layout that builds from the floor alone stacks three of them
 * where sizes alternate unevenly (the `deep` profile: 1.44 times its
 * bound), and small items placed among the large ones (a cond's result
 * beside its block) leave no pair room to meet under the ceiling. */
static uint64_t layout_two_sided(pk *k, const uint32_t *order) {
    uint64_t peak = place_fixed(k), cap = k->lower;
    uint8_t *side = mp_xcalloc(k->n + 1, 1);
    for (uint32_t q = 0; q < 2 * k->n; q++) { /* the large items, then the small ones */
        uint32_t i = order[q % k->n];
        bool large = k->size[i] >= cap / PK_SIDED_SHARE;
        if (k->at[i].hi || large != (q < k->n)) continue;
        set_at(k, i, large ? place_sided(k, i, cap, side) : place(k, i, false));
        peak = top_max(peak, k->off[i], k->size[i]);
    }
    mp_xfree(side);
    return peak;
}

enum { ORD_SIZE, ORD_LENGTH, ORD_AREA, ORD_CONFLICT, ORD_SIZE_START, ORD_START, ORD_SIZE_END,
       ORD_BREADTH, N_ORD };

static uint32_t find_point(const int32_t *pts, uint32_t n, int32_t t) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) { /* last point <= t */
        uint32_t mid = (lo + hi) / 2;
        if (pts[mid] <= t) lo = mid + 1;
        else hi = mid;
    }
    return lo - 1;
}

/* Per item: the most bytes live at any one node of its lifetime (the
 * "breadth" of its busiest node).  Live bytes only change at starts and
 * ends, so the sweep runs over those points alone, and a sparse table
 * answers each item's range maximum: O(n log n) whatever the node count. */
/* The sparse table of live bytes over `m` consecutive slots (slot t: live
 * bytes on it), each item's maximum over slots a(i) .. b(i) into out. */
static void range_max(uint64_t *live, uint32_t m, uint32_t n, const uint32_t *a, const uint32_t *b,
                      uint64_t *out) {
    uint32_t levels = 1;
    while ((1u << levels) <= m) levels++;
    uint64_t **tab = mp_xmalloc(levels * sizeof *tab);
    tab[0] = live;
    for (uint32_t l = 1; l < levels; l++) {
        tab[l] = mp_xmalloc(((size_t)m + 1) * sizeof **tab);
        for (uint32_t t = 0; t + (1u << l) <= m; t++) {
            uint64_t x = tab[l - 1][t], y = tab[l - 1][t + (1u << (l - 1))];
            tab[l][t] = x > y ? x : y;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t l = 0;
        while ((2u << l) <= b[i] - a[i] + 1) l++;
        uint64_t x = tab[l][a[i]], y = tab[l][b[i] + 1 - (1u << l)];
        out[i] = x > y ? x : y;
    }
    for (uint32_t l = 1; l < levels; l++) mp_xfree(tab[l]);
    mp_xfree(tab);
}

/* item_breadth where the items' times span few nodes (as a graph's do:
 * one node a step): live bytes per node from a difference array, no sort
 * and no search.  False when the span is too wide. */
static bool item_breadth_dense(const pk *k, uint64_t *out) {
    uint32_t n = k->n;
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (uint32_t i = 0; i < n; i++) {
        if (k->s[i] < lo) lo = k->s[i];
        if (k->e[i] > hi) hi = k->e[i];
    }
    if (!n || lo > hi || !mp_pk_span_dense((uint64_t)((int64_t)hi - lo) + 1, n)) return false;
    uint32_t m = (uint32_t)((int64_t)hi - lo) + 1;
    uint64_t *live = mp_xcalloc((size_t)m + 2, sizeof *live);
    uint32_t *a = mp_xmalloc((2 * (size_t)n + 1) * sizeof *a), *b = a + n;
    for (uint32_t i = 0; i < n; i++) { /* sums wrap alike both ways: the running total is exact */
        a[i] = (uint32_t)(k->s[i] - lo), b[i] = (uint32_t)(k->e[i] - lo);
        live[a[i]] += k->size[i];
        live[b[i] + 1] -= k->size[i];
    }
    for (uint32_t t = 1; t < m; t++) live[t] += live[t - 1];
    range_max(live, m, n, a, b, out);
    mp_xfree(live);
    mp_xfree(a);
    return true;
}

static uint64_t *item_breadth(const pk *k) {
    uint64_t *out = mp_xmalloc(((size_t)k->n + 1) * sizeof *out);
    if (item_breadth_dense(k, out)) return out;
    uint32_t n = k->n, np = 0;
    int32_t *pts = mp_xmalloc((2 * (size_t)n + 1) * sizeof *pts);
    for (uint32_t i = 0; i < n; i++) pts[np++] = k->s[i], pts[np++] = k->e[i] + 1;
    qsort(pts, np, sizeof *pts, cmp_i32);
    uint32_t m = 0;
    for (uint32_t i = 0; i < np; i++)
        if (!m || pts[m - 1] != pts[i]) pts[m++] = pts[i];
    uint64_t *add = mp_xcalloc(m + 1, sizeof *add), *sub = mp_xcalloc(m + 1, sizeof *sub);
    for (uint32_t i = 0; i < n; i++) {
        add[find_point(pts, m, k->s[i])] += k->size[i];
        sub[find_point(pts, m, k->e[i] + 1)] += k->size[i];
    }
    uint64_t *live = mp_xmalloc(((size_t)m + 1) * sizeof *live), run = 0;
    for (uint32_t t = 0; t < m; t++) { /* live bytes on [pts[t], pts[t+1]) */
        run = run + add[t] - sub[t];
        live[t] = run;
    }
    uint32_t *a = mp_xmalloc((2 * (size_t)n + 1) * sizeof *a), *b = a + n;
    for (uint32_t i = 0; i < n; i++) a[i] = find_point(pts, m, k->s[i]), b[i] = find_point(pts, m, k->e[i]);
    range_max(live, m, n, a, b, out);
    mp_xfree(live);
    mp_xfree(a);
    mp_xfree(pts);
    mp_xfree(add);
    mp_xfree(sub);
    return out;
}

static void make_order(pk *k, int kind, uint32_t *order) {
    if (kind == ORD_CONFLICT) ensure_conflicts(k);
    keyed *v = mp_xmalloc((k->n + 1) * sizeof *v);
    uint64_t *breadth = kind == ORD_BREADTH ? item_breadth(k) : NULL;
    for (uint32_t i = 0; i < k->n; i++) {
        uint64_t len = (uint64_t)(k->e[i] - k->s[i] + 1), k1 = k->size[i], k2 = len;
        if (kind == ORD_LENGTH) k1 = len, k2 = k->size[i];
        else if (kind == ORD_AREA) {
            if (!mp_mul_u64(k->size[i], len, &k1)) k1 = UINT64_MAX;
        } else if (kind == ORD_BREADTH) {
            k1 = breadth[i];
        } else if (kind == ORD_SIZE_START) {
            k2 = UINT64_MAX - (uint64_t)k->s[i];
        } else if (kind == ORD_START) {
            k1 = UINT64_MAX - (uint64_t)k->s[i];
            k2 = k->size[i];
        } else if (kind == ORD_SIZE_END) {
            k2 = (uint64_t)k->e[i];
        } else if (kind == ORD_CONFLICT) {
            uint64_t c = 0;
            for (uint32_t a = k->adj_at[i]; a < k->adj_at[i + 1]; a++)
                if (!mp_add_u64(c, k->size[neighbour(k, a)], &c)) c = UINT64_MAX;
            k1 = c;
            k2 = k->size[i];
        }
        v[i] = (keyed){k1, k2, i};
    }
    mp_pk_sort_desc(v, k->n);
    for (uint32_t i = 0; i < k->n; i++) order[i] = v[i].i;
    mp_xfree(v);
    mp_xfree(breadth);
}

/* Order by up to three keys named by letters, each descending, ties by
 * index: A area, W width (lifetime length), Z size, T the busiest node's
 * live bytes, O conflict count, L start, U end. */
typedef struct keyed3 {
    uint64_t k[3];
    uint32_t i;
} keyed3;

static void letter_order(pk *k, const char *keys, uint32_t *order) {
    keyed3 *v = mp_xmalloc((k->n + 1) * sizeof *v);
    const uint32_t *deg = strchr(keys, 'O') ? degrees(k) : NULL;
    uint64_t *breadth = strchr(keys, 'T') ? item_breadth(k) : NULL;
    for (uint32_t i = 0; i < k->n; i++) {
        v[i].i = i;
        uint64_t w = (uint64_t)(k->e[i] - k->s[i] + 1);
        for (int j = 0; j < 3; j++) {
            uint64_t x = 0;
            switch (keys[j]) {
            case 'A':
                if (!mp_mul_u64(k->size[i], w, &x)) x = UINT64_MAX;
                break;
            case 'W': x = w; break;
            case 'Z': x = k->size[i]; break;
            case 'T': x = breadth[i]; break;
            case 'O': x = deg[i]; break;
            case 'L': x = (uint64_t)k->s[i]; break;
            case 'U': x = (uint64_t)k->e[i]; break;
            case 'l': x = UINT64_MAX - (uint64_t)k->s[i]; break;
            case 'u': x = UINT64_MAX - (uint64_t)k->e[i]; break;
            default: break;
            }
            v[i].k[j] = x;
        }
    }
    /* each key descending, ties by index, in two stable radix passes: the
     * second and third keys (ties by index), then the first (ties keep
     * that order) */
    pk_keyed *r = mp_xmalloc((k->n + 1) * sizeof *r);
    for (uint32_t i = 0; i < k->n; i++) r[i] = (pk_keyed){v[i].k[1], v[i].k[2], i};
    mp_pk_sort_desc(r, k->n);
    for (uint32_t q = 0; q < k->n; q++) r[q] = (pk_keyed){v[r[q].i].k[0], 0, r[q].i};
    mp_pk_sort_desc(r, k->n);
    for (uint32_t i = 0; i < k->n; i++) order[i] = r[i].i;
    mp_xfree(r);
    mp_xfree(v);
    mp_xfree(breadth);
}

/* ------------------------------------------------- bottom-up greedy */

/* Place items bottom-up: each step the unplaced item whose lowest
 * possible offset (the highest top of the placed items it overlaps) is
 * least, ties by `rank`.  Offsets never decrease, so no hole is left
 * below.  The keys live in a 2-d tree (kd.c) that raises every
 * overlapping item's key when an item is placed: exact, and near
 * O(n sqrt n) in the worst case. */
static uint64_t bottom_up(pk *k, const uint32_t *rank, uint64_t *off, uint32_t *support) {
    uint32_t n = k->n;
    kd *t = mp_kd_new(k->s, k->e, rank, n);
    uint64_t peak = 0;
    /* fixed items: out of the tree, they only raise the others */
    for (uint32_t i = 0; i < n; i++) {
        if (!k->it[k->id[i]].fixed) continue;
        off[i] = k->it[k->id[i]].offset;
        support[i] = UINT32_MAX;
        mp_kd_remove(t, i);
        uint64_t top = mp_sat_add_u64(off[i], k->size[i]);
        mp_kd_raise(t, k->s[i], k->e[i], top, i);
        if (top > peak) peak = top;
    }
    uint32_t i;
    uint64_t mo;
    while (mp_kd_min(t, &i, &mo)) {
        uint32_t below = mp_kd_remove(t, i);
        off[i] = mo;
        support[i] = mo ? below : UINT32_MAX;
        uint64_t top = mp_sat_add_u64(mo, k->size[i]);
        mp_kd_raise(t, k->s[i], k->e[i], top, i);
        if (top > peak) peak = top;
    }
    k->work += mp_kd_work(t);
    mp_kd_free(t);
    return peak;
}

/* --------------------------------------------------------- compaction */

static int cmp_by_offset(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Let every item fall to the lowest place it fits with all others where
 * they are, lowest items first, until nothing moves.  A move never goes
 * up (the current place fits), so the peak never grows. */
static uint64_t compact(pk *k, uint64_t *off, uint32_t max_passes) {
    keyed *v = mp_xmalloc((k->n + 1) * sizeof *v);
    need_at(k);
    for (uint32_t i = 0; i < k->n; i++) set_at(k, i, off[i]);
    bool moved = true;
    for (uint32_t pass = 0; pass < max_passes && moved; pass++) {
        moved = false;
        for (uint32_t i = 0; i < k->n; i++) v[i] = (keyed){k->off[i], 0, i};
        qsort(v, k->n, sizeof *v, cmp_by_offset);
        for (uint32_t q = 0; q < k->n; q++) {
            uint32_t i = v[q].i;
            if (k->it[k->id[i]].fixed || k->off[i] == 0) continue;
            k->at[i].hi = 0;
            uint64_t at = place(k, i, false);
            if (at < k->off[i]) moved = true;
            set_at(k, i, at < k->off[i] ? at : k->off[i]);
        }
    }
    uint64_t peak = 0;
    for (uint32_t i = 0; i < k->n; i++)
        peak = top_max(peak, k->off[i], k->size[i]);
    memcpy(off, k->off, k->n * sizeof *off);
    mp_xfree(v);
    return peak;
}

/* ----------------------------------------------------- iterated greedy */

static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The items a top item rests on, down to the floor (bottom-up layouts). */
static uint32_t chain(const pk *k, const uint64_t *off, const uint32_t *support, uint64_t peak,
                      uint32_t *out, uint64_t *seed) {
    uint32_t nc = 0, n = k->n, top = UINT32_MAX, seen = 0;
    for (uint32_t i = 0; i < n; i++) /* a random one of the items at the peak */
        if (mp_sat_add_u64(off[i], k->size[i]) == peak && !k->it[k->id[i]].fixed && rnd(seed) % ++seen == 0) top = i;
    for (uint32_t i = top; i != UINT32_MAX && nc < n; i = support[i]) out[nc++] = i;
    return nc;
}

/* The best compacted layout improvement has seen.  Compaction runs on the
 * starting layout and on each strictly lower one the moves find, never on
 * the layout the budget happens to stop at, and outside the work count, so
 * what improvement returns after W units of work is the best of a prefix of
 * one sequence of layouts that does not depend on the budget: a larger
 * --budget-ms never gives a higher peak (docs/notes/optimized.md, "Effort"). */
typedef struct squeeze {
    bool on;       /* compaction wanted: a conflict graph and budget for it */
    uint64_t peak; /* the lowest compacted peak, UINT64_MAX before any */
    uint64_t *off, *tmp;
} squeeze;

static void squeeze_take(pk *k, squeeze *z, const uint64_t *off) {
    if (!z->on) return;
    uint64_t work = k->work;
    memcpy(z->tmp, off, k->n * sizeof *z->tmp);
    uint64_t got = compact(k, z->tmp, 2);
    k->work = work;
    if (got < z->peak) {
        uint64_t *t = z->off;
        z->peak = got, z->off = z->tmp, z->tmp = t;
    }
}

/* Iterated greedy: move an item of the chain under the peak earlier in the
 * order, lay out again, keep the move when the peak does not grow.  Stops
 * at the lower bound or when the budget is spent. */
static uint64_t improve(pk *k, bool bottom, bool best_fit, uint32_t *order, uint64_t peak, uint64_t lower,
                        uint64_t budget, uint64_t cost, uint64_t *best_off, uint32_t *support, squeeze *z) {
    uint32_t n = k->n;
    if (n < 2) return peak;
    uint32_t *cand = mp_xmalloc((n + 1) * sizeof *cand), *pos = mp_xmalloc((n + 1) * sizeof *pos);
    uint32_t *crit = mp_xmalloc((n + 1) * sizeof *crit), *rank = mp_xmalloc((n + 1) * sizeof *rank);
    uint32_t *sup2 = mp_xmalloc((n + 1) * sizeof *sup2);
    uint64_t seed = 0x6d656d706c616eull ^ n, start = k->work;
    /* a first-fit relayout visits every conflict pair, a bottom-up one
     * costs what the construction's run did: when one does not fit in the
     * budget, none is tried (dense buffers in big programs) */
    if (bottom ? cost > budget : 2 * k->pairs + n > budget) budget = 0;
    while (peak > lower && k->work - start < budget) {
        uint32_t nc;
        if (bottom) {
            nc = chain(k, best_off, support, peak, crit, &seed);
        } else {
            nc = 0;
            for (uint32_t i = 0; i < n; i++)
                if (mp_sat_add_u64(best_off[i], k->size[i]) == peak && !k->it[k->id[i]].fixed) crit[nc++] = i;
        }
        if (!nc) break;
        for (uint32_t q = 0; q < n; q++) pos[order[q]] = q;
        uint32_t c = crit[rnd(&seed) % nc], p = pos[c];
        if (p == 0) { /* already first: move some other item instead */
            p = 1 + (uint32_t)(rnd(&seed) % (n - 1));
            c = order[p];
        }
        uint32_t to = rnd(&seed) % 4 == 0 ? 0 : (uint32_t)(rnd(&seed) % p);
        memcpy(cand, order, n * sizeof *cand);
        memmove(cand + to + 1, cand + to, (p - to) * sizeof *cand);
        cand[to] = c;
        uint64_t got;
        if (bottom) {
            for (uint32_t q = 0; q < n; q++) rank[cand[q]] = q;
            got = bottom_up(k, rank, k->off, sup2);
        } else {
            got = layout(k, cand, best_fit);
        }
        if (got <= peak) {
            bool lower_now = got < peak;
            peak = got;
            memcpy(order, cand, n * sizeof *order);
            memcpy(best_off, k->off, n * sizeof *best_off);
            if (bottom) memcpy(support, sup2, n * sizeof *support);
            if (lower_now) squeeze_take(k, z, best_off);
        }
    }
    mp_xfree(cand);
    mp_xfree(pos);
    mp_xfree(crit);
    mp_xfree(rank);
    mp_xfree(sup2);
    return peak;
}

/* ---------------------------------------------------------------- solve */

/* Constructions in the order they are tried: first fit in decreasing
 * size then start (the best single one on real models), bottom-up by area
 * then width then busiest node (MiniMalloc's letters), ... */
typedef struct construction {
    bool bottom_up;
    const char *keys; /* bottom-up rank letters */
    int ff_order;     /* first-fit ordering */
    bool best_fit;
    bool two_sided; /* layout_two_sided in ff_order */
} construction;

static const construction CONSTRUCTIONS[] = {
    {false, NULL, ORD_SIZE_START, false, false}, {true, "AWT", 0, false, false},
    {false, NULL, ORD_SIZE_END, false, false},   {true, "OAW", 0, false, false},
    {true, "TWA", 0, false, false},              {true, "TAW", 0, false, false},
    {true, "WAT", 0, false, false},              {false, NULL, ORD_SIZE, false, false},
    {false, NULL, ORD_SIZE, true, false},        {true, "ZWT", 0, false, false},
    {true, "TZW", 0, false, false},              {false, NULL, ORD_LENGTH, false, false},
    {false, NULL, ORD_CONFLICT, false, false},   {false, NULL, ORD_AREA, false, false},
    {false, NULL, ORD_BREADTH, false, false},    {false, NULL, ORD_START, false, false},
    {false, NULL, ORD_START, false, true},
};
#define N_CONSTRUCTIONS (int)(sizeof CONSTRUCTIONS / sizeof *CONSTRUCTIONS)

typedef struct best {
    uint64_t peak;
    uint64_t first; /* the peak improvement started from (refine_best) */
    bool kept; /* a layout is in off (every one may peak at UINT64_MAX) */
    bool bottom, best_fit;
    uint32_t heuristic;
    uint64_t cost; /* the work of the bottom-up run that made it */
    uint64_t *off;
    uint32_t *order, *support;
} best;

/* True when a layout of peak `got` is the best so far: then b takes what
 * made it, its offsets left to the caller.  The order is kept where
 * improvement may read it (NULL: it never will), the support of a
 * bottom-up layout alone (improvement reads no other's). */
static bool better(const pk *k, best *b, uint64_t got, bool bottom, bool best_fit, uint32_t h,
                   const uint32_t *order, const uint32_t *support) {
    if (b->kept && got >= b->peak) return false;
    b->kept = true;
    b->peak = got;
    b->bottom = bottom;
    b->best_fit = best_fit;
    b->heuristic = h;
    if (order) memcpy(b->order, order, k->n * sizeof *b->order);
    if (support) memcpy(b->support, support, k->n * sizeof *b->support);
    return true;
}

/* True when the layout in k->off is the best so far (then kept in b). */
static bool keep(pk *k, best *b, uint64_t got, bool bottom, bool best_fit, uint32_t h,
                 const uint32_t *order, const uint32_t *support) {
    if (!better(k, b, got, bottom, best_fit, h, order, support)) return false;
    memcpy(b->off, k->off, k->n * sizeof *b->off);
    return true;
}

/* ------------------------------------------------------- universal items */

/* An item whose lifetime meets every other item's (it starts no later than
 * any item ends and ends no earlier than any item starts) overlaps all of
 * them, so in every valid layout its bytes are its own at all times:
 * stacking such items at the bottom loses nothing.  Peeling them off also
 * removes their conflicts with everything else, which otherwise make the
 * conflict graph too large to store (a transformer's KV caches: thousands
 * of items live for the whole graph).  Peeling can make more items
 * universal; a few rounds reach nearly all of them.  Marks the universal
 * items in `uni` and returns their total size; 0 when there are fixed items
 * (their positions are not ours to move). */
static uint64_t peel_universal(const pk_item *items, uint32_t n, bool *uni, uint32_t *n_uni) {
    *n_uni = 0;
    for (uint32_t i = 0; i < n; i++)
        if (items[i].fixed) return 0;
    uint64_t base = 0;
    for (int round = 0; round < 16; round++) {
        int32_t min_end = INT32_MAX, max_start = INT32_MIN;
        for (uint32_t i = 0; i < n; i++) {
            if (uni[i] || !items[i].size) continue;
            if (items[i].end < min_end) min_end = items[i].end;
            if (items[i].start > max_start) max_start = items[i].start;
        }
        uint32_t found = 0;
        for (uint32_t i = 0; i < n; i++)
            if (!uni[i] && items[i].size && items[i].start <= min_end && items[i].end >= max_start) {
                uni[i] = true;
                base = mp_sat_add_u64(base, items[i].size);
                found++;
            }
        *n_uni += found;
        if (!found) break;
    }
    return base;
}

static uint64_t solve_rest(pk_item *items, uint32_t n, const pk_params *prm, pk_stats *st);

/* solve_rest's answer for no items, without its allocations: a program of
 * many small sub-graphs (the `deep` profile: 333,000 graphs of 3 tensors)
 * solves hundreds of thousands of buffers whose items are all universal.
 * Its stats are what the constructions would leave: the first one (the
 * sweep in a quick layout) at the bound 0. */
static uint64_t solve_none(const pk_params *prm, pk_stats *st) {
    memset(st, 0, sizeof *st);
    st->heuristic = prm->quick ? 99 : 0;
    st->outcome = prm->exact && !prm->quick ? PK_X_AT_BOUND : PK_X_NOT_ASKED;
    st->optimal = true;
    return 0;
}

/* Items few enough for the marks and the saved universal items to live on
 * the stack: most buffers of a program of many small sub-graphs. */
#define PK_SMALL 16

uint64_t mp_pk_solve(pk_item *items, uint32_t n, const pk_params *prm, pk_stats *st) {
    bool small_uni[PK_SMALL + 1] = {false};
    bool *uni = n <= PK_SMALL ? small_uni : mp_xcalloc(n + 1, 1);
    uint32_t n_uni;
    uint64_t base = peel_universal(items, n, uni, &n_uni);
    if (!n_uni) {
        if (uni != small_uni) mp_xfree(uni);
        return solve_rest(items, n, prm, st);
    }
    /* the universal items stacked at the bottom in input order, the rest
     * laid out above them.  The rest are moved to the front in place (the
     * universal ones saved aside), then put back: a copy of the rest was
     * 0.25 GB at the plan's peak at 10^7 tensors. */
    pk_item small_saved[PK_SMALL + 1];
    pk_item *saved = n_uni <= PK_SMALL ? small_saved : mp_xmalloc((n_uni + 1) * sizeof *saved);
    uint32_t m = 0, u = 0;
    uint64_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (uni[i]) {
            items[i].offset = at;
            at = mp_sat_add_u64(at, items[i].size);
            saved[u++] = items[i];
        } else {
            items[m++] = items[i]; /* m <= i: forward, nothing overwritten unread */
        }
    }
    uint64_t peak = m ? solve_rest(items, m, prm, st) : solve_none(prm, st);
    for (uint32_t i = n; i-- > 0;) { /* backward: the rest's slot m - 1 <= i */
        if (uni[i]) {
            items[i] = saved[--u];
        } else {
            items[i] = items[--m];
            items[i].offset = items[i].size ? mp_sat_add_u64(items[i].offset, base) : 0;
        }
    }
    /* the rest's optimum plus the stack is the whole optimum */
    st->peak = peak = mp_sat_add_u64(peak, base);
    st->proved_bound = mp_sat_add_u64(st->proved_bound, base);
    st->lower_bound = mp_pk_lower_bound(items, n);
    if (peak == st->lower_bound) st->optimal = true;
    if (saved != small_saved) mp_xfree(saved);
    if (uni != small_uni) mp_xfree(uni);
    return peak;
}

/* The O(n log n) layouts of sweep.c, each while the best misses the
 * bound: the time-ordered one, then those anchored at the busiest node,
 * its stack by size, then, in buffers of up to PK_VEE_MAX_ITEMS items, in
 * a V (three splits: idealloc's S_1 reaches its bound with the 4 split
 * alone; MiniMalloc's F, G and H drop 0.1-6% with one of the three).  A
 * quick layout is the first alone.  A better one goes from the items
 * straight to b: with the sweeps alone (no conflict graph, as at 10^7
 * tensors) k->off, the order (NULL: nothing will improve the layout) and
 * the supports are never touched, 0.17 GB of fresh pages there. */
static void sweep_baseline(pk *k, best *b, const uint32_t *order, bool quick) {
    int runs = quick ? 1 : k->n <= PK_VEE_MAX_ITEMS ? 1 + MP_PK_STACKS : 2;
    for (int r = 0; r < runs && (!b->kept || b->peak > k->lower); r++) {
        uint64_t got = r ? mp_pk_sweep_anchored(k->it, k->n_items, (mp_pk_stack)(r - 1)) : mp_pk_sweep(k->it, k->n_items);
        if (got == UINT64_MAX && r) continue; /* no layout (fixed items) */
        if (better(k, b, got, false, false, (uint32_t)(99 - r), order, NULL))
            for (uint32_t i = 0; i < k->n; i++) b->off[i] = k->it[k->id[i]].offset;
    }
}

/* The packer's view of the non-empty items (movable ones start at 0). */
static void load(pk *k, pk_item *items, uint32_t n) {
    k->it = items;
    k->n_items = n;
    k->id = mp_xmalloc((n + 1) * sizeof *k->id);
    for (uint32_t i = 0; i < n; i++) {
        if (!items[i].fixed) items[i].offset = 0;
        if (items[i].size) k->id[k->n++] = i;
    }
    k->lower = mp_pk_lower_bound(items, n);
    k->size = mp_xmalloc((k->n + 1) * sizeof *k->size);
    k->s = mp_xmalloc((k->n + 1) * sizeof *k->s);
    k->e = mp_xmalloc((k->n + 1) * sizeof *k->e);
    for (uint32_t i = 0; i < k->n; i++) {
        k->size[i] = items[k->id[i]].size;
        k->s[i] = items[k->id[i]].start;
        k->e[i] = items[k->id[i]].end;
    }
    k->off = mp_xmalloc((k->n + 1) * sizeof *k->off);
    k->by_s = by_start(k);
}

/* The scratch of one solve: orders and ranks of the constructions, the
 * conflict graph's size and whether it fits, and the estimated costs
 * (nanoseconds, measured once on a 2-core x86-64 machine: the estimate
 * depends on n and the pair count alone, so choices are the same on every
 * machine). */
typedef struct solve {
    uint32_t *order, *rank, *support;
    uint64_t pairs;
    bool adj; /* the conflict graph fits in memory (built on first use) */
    double ff_cost, bu_cost, budget;
    uint32_t bu_runs;
} solve;

static void solve_init(solve *v, pk *k, const pk_params *prm) {
    v->rank = NULL; /* on first use */
    v->order = mp_xmalloc((k->n + 1) * sizeof *v->order);
    v->support = mp_xmalloc((k->n + 1) * sizeof *v->support);
    /* a quick layout is the sweep alone: no pair count, no conflict graph */
    v->pairs = k->pairs = prm->quick ? 0 : count_pairs(k, k->by_s);
    v->adj = !prm->quick && v->pairs <= PK_MAX_PAIRS;
    /* the start order, for a sweep after the constructions (with a conflict
     * graph); every construction writes its own order over it */
    if (v->adj) memcpy(v->order, k->by_s, k->n * sizeof *v->order);
    double lg = levels(k->n);
    v->ff_cost = PK_FF_PER_VISIT * (2.0 * (double)v->pairs + k->n) + PK_FF_PER_LEVEL * k->n * lg;
    v->bu_cost = PK_BU_PER_ITEM * k->n * (sqrt((double)k->n) + lg);
    /* small buffers also afford a few bottom-up runs, whose cost grows as
     * n sqrt(n) */
    v->bu_runs = prm->bottom_up_runs ? prm->bottom_up_runs : PK_BOTTOM_UP_RUNS;
    v->budget = PK_BUDGET_BASE + PK_BUDGET_PER_LEVEL * k->n * lg +
                (k->n <= PK_BU_MAX_ITEMS ? v->bu_runs * v->bu_cost : 0);
}

/* Construction c, its layout kept in b when it is the best so far. */
static void run_construction(pk *k, best *b, solve *v, int c) {
    const construction *x = &CONSTRUCTIONS[c];
    if (x->bottom_up) {
        letter_order(k, x->keys, v->order);
        if (!v->rank) v->rank = mp_xmalloc((k->n + 1) * sizeof *v->rank); /* bottom-up runs alone use it */
        for (uint32_t q = 0; q < k->n; q++) v->rank[v->order[q]] = q;
        uint64_t work = k->work, got = bottom_up(k, v->rank, k->off, v->support);
        if (keep(k, b, got, true, false, (uint32_t)c, v->order, v->support)) b->cost = k->work - work;
    } else {
        ensure_conflicts(k);
        make_order(k, x->ff_order, v->order);
        uint64_t got = x->two_sided ? layout_two_sided(k, v->order) : layout(k, v->order, x->best_fit);
        /* improvement relays a two-sided layout's order out by first fit,
         * keeping only what is no higher */
        keep(k, b, got, false, x->best_fit, (uint32_t)c, v->order, NULL);
    }
}

/* The constructions, most useful first, while their estimated cost fits
 * the construction budget (it grows as n log n, so large buffers get the
 * cheap ones only), and the time-ordered baseline (O(n log n), any size),
 * which always runs unless a construction reaches the lower bound: first
 * when there is no conflict graph, else after the first construction,
 * which usually does better. */
static void construct(pk *k, best *b, solve *v, const pk_params *prm) {
    bool swept = false;
    /* without a conflict graph, or in a quick layout, nothing improves a
     * sweep's layout: its order is not kept */
    if (!v->adj || prm->quick) sweep_baseline(k, b, NULL, prm->quick), swept = true;
    uint32_t bu_done = 0;
    for (int c = 0; c < N_CONSTRUCTIONS && b->peak > k->lower && !prm->quick; c++) {
        const construction *x = &CONSTRUCTIONS[c];
        double cost = x->bottom_up ? v->bu_cost : v->ff_cost;
        if ((!x->bottom_up || strchr(x->keys, 'O')) && !v->adj) continue;
        if (cost > v->budget || (x->bottom_up && bu_done == v->bu_runs)) continue;
        /* with few runs and no conflict graph (dense buffers), rank by the
         * busiest node first: TWA and TAW won 21 of the 26 such buffers of
         * a 10^6-tensor mixed graph, AWT 3 */
        if (x->bottom_up && !v->adj && v->bu_runs < PK_BOTTOM_UP_RUNS && x->keys[0] != 'T') continue;
        v->budget -= cost;
        bu_done += x->bottom_up;
        run_construction(k, b, v, c);
        if (!swept && b->peak > k->lower) sweep_baseline(k, b, v->order, prm->quick);
        swept = true;
    }
    if (!swept) sweep_baseline(k, b, v->order, prm->quick);
}

/* The best layout improved (moves, compacting each new low) while above
 * the bound and within the work budget.  Sets b->first, the peak before
 * any move (it does not depend on the budget).  Returns the peak. */
static uint64_t refine_best(pk *k, best *b, solve *v, const pk_params *prm) {
    uint64_t peak = k->n ? b->peak : 0;
    bool more = k->n && peak > k->lower && !prm->quick;
    squeeze z = {more && v->adj && 2 * v->ff_cost <= v->budget, UINT64_MAX, NULL, NULL};
    if (z.on) {
        ensure_conflicts(k);
        z.off = mp_xmalloc((k->n + 1) * sizeof *z.off);
        z.tmp = mp_xmalloc((k->n + 1) * sizeof *z.tmp);
        squeeze_take(k, &z, b->off);
    } else if (more && v->adj && !b->bottom && 2 * v->pairs + k->n <= prm->work) {
        ensure_conflicts(k);
    }
    b->first = z.peak < peak ? z.peak : peak;
    if (more && (v->adj || b->bottom) && z.peak > k->lower)
        peak = improve(k, b->bottom, b->best_fit, b->order, peak, k->lower, prm->work, b->cost, b->off,
                       b->support, &z);
    if (z.peak < peak) {
        peak = z.peak;
        memcpy(b->off, z.off, k->n * sizeof *b->off);
    }
    mp_xfree(z.off);
    mp_xfree(z.tmp);
    return peak;
}

/* The layout written back, the exact search run when asked, the stats. */
static uint64_t finish(pk *k, best *b, pk_item *items, uint32_t n, uint64_t peak, const pk_params *prm,
                       pk_stats *st) {
    st->heuristic = b->heuristic;
    for (uint32_t i = 0; i < n; i++)
        if (items[i].fixed) peak = top_max(peak, items[i].offset, items[i].size);
    for (uint32_t i = 0; i < k->n; i++) items[k->id[i]].offset = b->off[i];
    st->outcome = prm->exact && !prm->quick ? PK_X_AT_BOUND : PK_X_NOT_ASKED;
    if (prm->exact && !prm->quick && peak > st->lower_bound) {
        st->exact_ran = true;
        peak = mp_pk_exact(items, n, peak, b->first, st->lower_bound, prm->exact_work, &st->optimal,
                           &st->proved_bound, &k->work, &st->outcome);
    }
    st->peak = peak;
    if (peak == st->lower_bound) {
        st->optimal = true;
        st->proved_bound = peak;
    } else if (!st->exact_ran) {
        st->proved_bound = st->lower_bound;
    }
    st->work_used = k->work;
    return peak;
}

static void free_solve(pk *k, best *b, solve *v) {
    void *p[] = {v->order, v->rank, v->support, b->off, b->order, b->support, k->adj_at, k->adj, k->adj16,
                 k->by_s, k->deg, k->off, k->at, k->busy, k->busy2, k->bucket, k->id, k->size,
                 k->s, k->e};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) mp_xfree(p[i]);
}

static uint64_t solve_rest(pk_item *items, uint32_t n, const pk_params *prm, pk_stats *st) {
    memset(st, 0, sizeof *st);
    pk k = {0};
    load(&k, items, n);
    st->lower_bound = k.lower;
    best b = {.peak = UINT64_MAX, .first = UINT64_MAX, .off = mp_xmalloc((k.n + 1) * sizeof(uint64_t)),
              .order = mp_xmalloc((k.n + 1) * sizeof(uint32_t)), .support = mp_xmalloc((k.n + 1) * sizeof(uint32_t))};
    solve v;
    solve_init(&v, &k, prm);
    construct(&k, &b, &v, prm);
    uint64_t peak = refine_best(&k, &b, &v, prm);
    peak = finish(&k, &b, items, n, peak, prm, st);
    free_solve(&k, &b, &v);
    return peak;
}
