/* exact.c - exact search for one buffer's layout (`--exact`).
 *
 * The ideas are those of MiniMalloc (Moffitt, ASPLOS 2023), implemented
 * afresh.  A layout can always be pushed down until every item rests on
 * an item it overlaps, or on 0; listing such a layout's items by (offset,
 * rank) gives a sequence in which each item sits at the highest top of
 * the items before it that it overlaps - its minimum offset.  So a
 * depth-first search only chooses which item goes next, places it at its
 * minimum offset, and may skip:
 *   - canonical order: (offset, rank) never decreases along a branch;
 *   - dominance: an item whose minimum offset is at or above the lowest
 *     top any unplaced item could reach (that item would stay movable);
 *   - section inference: a section is the set of items live at one end
 *     time (they all overlap, so they stack); its unplaced items need
 *     max(floor, last offset) + their total size <= capacity, where the
 *     floor is the top of the section's last placed item, or the least
 *     minimum offset of its unplaced items when that is higher;
 *   - a failed item none of whose unplaced neighbours remains ("hatless")
 *     ends the node: its place can no longer change.
 * When no unplaced item spans a section boundary any more, the rest splits
 * into independent parts, each searched on its own with a fresh order.
 * The search for one capacity runs three static rank orders in turn with
 * doubling node limits; the capacity is minimised from the lower bound
 * up by bisection below the best layout known.  Effort is counted in work
 * units, so the result never depends on the machine's speed. */
#include "pack.h"

typedef struct xitem {
    uint64_t size, off; /* off: where the search last placed it */
    int32_t s, e;
    uint32_t a, b; /* section range, inclusive */
    uint64_t width, area;
} xitem;

typedef struct undo {
    uint32_t idx;
    uint64_t old;
} undo;

typedef struct xs {
    xitem *it;
    uint64_t *mo;     /* minimum offset of each unplaced item */
    uint8_t *placed;
    uint32_t *rank;
    uint32_t n;
    uint32_t *adj_at, *adj;
    uint32_t *sec_at, *sec_items; /* the items live in each section */
    uint8_t *touched;
    uint32_t *touched_list;
    uint64_t *floor, *total;
    uint32_t *cuts; /* unplaced items spanning boundary k | k+1 */
    uint32_t n_sec;
    undo *log;
    size_t n_log, cap_log;
    uint32_t *stack; /* candidates and part member lists, frame by frame */
    size_t n_stack, cap_stack;
    const char *order; /* the rank letters of this attempt */
    uint64_t cap;
    uint64_t nodes_left, work, nodes_total;
    uint64_t work_cap; /* the attempt's budget ends here: abort past it */
} xs;

enum { X_FOUND, X_NONE, X_ABORT };

static void log_push(xs *x, uint32_t idx, uint64_t old) {
    undo u = {idx, old};
    MP_VEC_PUSH(x->log, x->n_log, x->cap_log, u);
}

static void stack_push(xs *x, uint32_t v) { MP_VEC_PUSH(x->stack, x->n_stack, x->cap_stack, v); }

static bool cand_less(const xs *x, uint32_t i, uint32_t j) {
    return x->mo[i] != x->mo[j] ? x->mo[i] < x->mo[j] : x->rank[i] < x->rank[j];
}

static bool sections_fit(const xs *x, uint32_t lo, uint32_t hi, uint64_t off) {

    for (uint32_t k = lo; k < hi; k++) {
        uint64_t f = x->floor[k] > off ? x->floor[k] : off;
        if (x->total[k] && f + x->total[k] > x->cap) return false;
    }
    return true;
}

/* A part: members (indices into x->stack) and its section range. */
typedef struct part {
    size_t at;
    uint32_t n, lo, hi;
} part;

static int solve_part(xs *x, part p);

/* Rank a part's members by the attempt's letters (descending keys: W width,
 * A area, T the busiest of its sections now), ties by index. */
typedef struct rk {
    uint64_t k[3];
    uint32_t i;
} rk;

static int cmp_rk(const void *p, const void *q) {
    const rk *a = p, *b = q;
    for (int j = 0; j < 3; j++)
        if (a->k[j] != b->k[j]) return a->k[j] > b->k[j] ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static void rank_part(xs *x, part p) {
    rk *v = mp_xmalloc((p.n + 1) * sizeof *v);
    for (uint32_t q = 0; q < p.n; q++) {
        uint32_t i = x->stack[p.at + q];
        const xitem *a = &x->it[i];
        uint64_t busiest = 0;
        for (uint32_t k = a->a; k <= a->b; k++)
            if (x->total[k] > busiest) busiest = x->total[k];
        v[q].i = i;
        for (int j = 0; j < 3; j++)
            v[q].k[j] = x->order[j] == 'W' ? a->width : x->order[j] == 'A' ? a->area : busiest;
    }
    qsort(v, p.n, sizeof *v, cmp_rk);
    for (uint32_t r = 0; r < p.n; r++) x->rank[v[r].i] = r;
    x->work += p.n;
    mp_xfree(v);
}

/* After placing `placed_item`, split p where the boundaries it closed
 * have no unplaced item across; solve the pieces in turn. */
static int solve_pieces(xs *x, part p, const uint32_t *zero, uint32_t n_zero) {
    int st = X_FOUND;
    uint32_t lo = p.lo;
    for (uint32_t z = 0; z <= n_zero && st == X_FOUND; z++) {
        uint32_t hi = z < n_zero ? zero[z] + 1 : p.hi;
        part piece = {x->n_stack, 0, lo, hi};
        for (uint32_t q = 0; q < p.n; q++) {
            uint32_t i = x->stack[p.at + q];
            if (!x->placed[i] && x->it[i].a >= lo && x->it[i].a < hi) stack_push(x, i), piece.n++;
        }
        if (piece.n) st = solve_part(x, piece);
        x->n_stack = piece.at;
        lo = hi;
    }
    return st;
}

/* The unplaced items of part p that may go next, on the stack from its
 * current top, sorted by (minimum offset, rank): those that could start
 * below every other's top, in the canonical order after the last one
 * placed (last_off, last_rank).  Returns how many. */
static size_t gather_candidates(xs *x, part p, uint64_t last_off, uint32_t last_rank) {
    uint64_t min_h = UINT64_MAX; /* the lowest top any unplaced item could reach */
    for (uint32_t q = 0; q < p.n; q++) {
        uint32_t i = x->stack[p.at + q];
        if (!x->placed[i] && x->mo[i] + x->it[i].size < min_h) min_h = x->mo[i] + x->it[i].size;
    }
    size_t base = x->n_stack;
    for (uint32_t q = 0; q < p.n; q++) {
        uint32_t i = x->stack[p.at + q];
        if (x->placed[i] || x->mo[i] >= min_h) continue;
        if (x->mo[i] < last_off || (x->mo[i] == last_off && x->rank[i] < last_rank)) continue;
        stack_push(x, i);
    }
    size_t nc = x->n_stack - base;
    for (size_t c = 1; c < nc; c++) { /* insertion sort by (mo, rank) */
        uint32_t v = x->stack[base + c];
        size_t j = c;
        while (j && cand_less(x, v, x->stack[base + j - 1])) {
            x->stack[base + j] = x->stack[base + j - 1];
            j--;
        }
        x->stack[base + j] = v;
    }
    return nc;
}

/* Undo log positions of one placement: a's section floors, then its
 * neighbours' minimum offsets, then the floors raised by inference. */
typedef struct marks {
    size_t floors, offsets, inferred;
} marks;

/* Item i placed at its minimum offset: its sections' floors rise to its
 * top, its unplaced neighbours' minimum offsets too; *hatless when no
 * neighbour is unplaced.  Returns how many sections were touched (listed
 * in x->touched_list). */
static uint32_t place_item(xs *x, uint32_t i, marks *m, bool *hatless) {
    xitem *a = &x->it[i];
    uint64_t top = x->mo[i] + a->size;
    x->placed[i] = 1;
    a->off = x->mo[i];
    m->floors = x->n_log;
    for (uint32_t k = a->a; k <= a->b; k++) {
        log_push(x, k, x->floor[k]);
        x->floor[k] = top;
        x->total[k] -= a->size;
    }
    *hatless = true;
    uint32_t n_touched = 0;
    m->offsets = x->n_log;
    for (uint32_t q = x->adj_at[i]; q < x->adj_at[i + 1]; q++) {
        uint32_t j = x->adj[q];
        if (x->placed[j]) continue;
        *hatless = false;
        if (x->mo[j] >= top) continue;
        log_push(x, j, x->mo[j]);
        x->mo[j] = top;
        /* only a section whose floor is below `top` can see its least
         * minimum offset rise above the floor */
        const xitem *b = &x->it[j];
        for (uint32_t k = b->a; k <= b->b; k++)
            if (!x->touched[k] && x->floor[k] < top) x->touched[k] = 1, x->touched_list[n_touched++] = k;
    }
    return n_touched;
}

/* A touched section's floor rises to the least minimum offset of its
 * unplaced items when that is above it (stop at the first unplaced
 * member at or below the floor). */
static void infer_floors(xs *x, uint32_t n_touched) {
    for (uint32_t t = 0; t < n_touched; t++) {
        uint32_t k = x->touched_list[t];
        x->touched[k] = 0;
        uint64_t least = UINT64_MAX, fl = x->floor[k];
        uint32_t q = x->sec_at[k], end = x->sec_at[k + 1];
        for (; q < end; q++) {
            uint32_t m = x->sec_items[q];
            if (x->placed[m]) continue;
            if (x->mo[m] <= fl) break;
            if (x->mo[m] < least) least = x->mo[m];
        }
        x->work += q - x->sec_at[k] + 1;
        if (q == end && least != UINT64_MAX && least > fl) {
            log_push(x, k, fl);
            x->floor[k] = least;
        }
    }
}

static int search(xs *x, part p, uint64_t last_off, uint32_t last_rank, uint32_t left);

/* The rest of part p after item i went at off: split into independent
 * pieces where a boundary inside i's range lost its last item across it,
 * else one search further. */
static int search_rest(xs *x, part p, uint32_t i, uint64_t off, uint32_t left) {
    const xitem *a = &x->it[i];
    uint32_t zero_buf[64], n_zero = 0;
    bool many = false;
    for (uint32_t k = a->a; k < a->b; k++)
        if (--x->cuts[k] == 0 && k >= p.lo && k + 1 < p.hi) {
            if (n_zero < 64) zero_buf[n_zero++] = k;
            else many = true;
        }
    int result = n_zero && !many ? solve_pieces(x, p, zero_buf, n_zero)
                                 : search(x, p, off, x->rank[i], left - 1);
    for (uint32_t k = a->a; k < a->b; k++) x->cuts[k]++;
    return result;
}

/* Take item i back out: sections' totals, then the log back to m. */
static void unplace_item(xs *x, uint32_t i, const marks *m) {
    const xitem *a = &x->it[i];
    for (uint32_t k = a->a; k <= a->b; k++) x->total[k] += a->size;
    while (x->n_log > m->inferred) { /* floors raised by inference */
        undo u = x->log[--x->n_log];
        x->floor[u.idx] = u.old;
    }
    while (x->n_log > m->offsets) { /* minimum offsets */
        undo u = x->log[--x->n_log];
        x->mo[u.idx] = u.old;
    }
    while (x->n_log > m->floors) { /* floors of a's sections */
        undo u = x->log[--x->n_log];
        x->floor[u.idx] = u.old;
    }
    x->placed[i] = 0;
}

static int search(xs *x, part p, uint64_t last_off, uint32_t last_rank, uint32_t left) {
    if (!left) return X_FOUND;
    if (!x->nodes_left || x->work >= x->work_cap) return X_ABORT;
    x->nodes_left--;
    x->nodes_total++;
    x->work += 2u * p.n + (p.hi - p.lo);
    size_t base = x->n_stack, nc = gather_candidates(x, p, last_off, last_rank);
    int result = X_NONE;
    for (size_t c = 0; c < nc && result == X_NONE; c++) {
        uint32_t i = x->stack[base + c];
        const xitem *a = &x->it[i];
        uint64_t off = x->mo[i];
        if (off + a->size > x->cap) continue;
        marks m;
        bool hatless;
        uint32_t n_touched = place_item(x, i, &m, &hatless);
        m.inferred = x->n_log;
        infer_floors(x, n_touched);
        x->work += x->adj_at[i + 1] - x->adj_at[i] + 2u * (a->b - a->a + 1);
        if (sections_fit(x, p.lo, p.hi, off)) result = search_rest(x, p, i, off, left);
        unplace_item(x, i, &m);
        if (result == X_NONE && hatless) break;
    }
    x->n_stack = base;
    return result;
}

/* A part searched on its own: fresh ranks and canonical bound.  The ranks
 * of its members are restored afterwards, since the enclosing search
 * still compares them. */
static int solve_part(xs *x, part p) {
    uint32_t *saved = mp_xmalloc((p.n + 1) * sizeof *saved);
    for (uint32_t q = 0; q < p.n; q++) saved[q] = x->rank[x->stack[p.at + q]];
    rank_part(x, p);
    int st = sections_fit(x, p.lo, p.hi, 0) ? search(x, p, 0, 0, p.n) : X_NONE;
    for (uint32_t q = 0; q < p.n; q++) x->rank[x->stack[p.at + q]] = saved[q];
    mp_xfree(saved);
    return st;
}

/* ------------------------------------------------------------- set up */

static int cmp_i32(const void *p, const void *q) {
    int32_t a = *(const int32_t *)p, b = *(const int32_t *)q;
    return (a > b) - (a < b);
}

static void reset(xs *x, const uint64_t *fixed_floor) {
    memset(x->placed, 0, x->n);
    memset(x->mo, 0, x->n * sizeof *x->mo);
    memset(x->cuts, 0, (x->n_sec + 1) * sizeof *x->cuts);
    for (uint32_t k = 0; k < x->n_sec; k++) {
        x->floor[k] = fixed_floor[k];
        x->total[k] = 0;
    }
    for (uint32_t i = 0; i < x->n; i++) {
        const xitem *a = &x->it[i];
        for (uint32_t k = a->a; k <= a->b; k++) {
            x->total[k] += a->size;
            if (fixed_floor[k] > x->mo[i]) x->mo[i] = fixed_floor[k];
        }
        for (uint32_t k = a->a; k < a->b; k++) x->cuts[k]++;
    }
    x->n_log = x->n_stack = 0;
}

/* Try capacity `cap`: FOUND (offsets in it[].off), NONE (proved
 * infeasible) or ABORT (budget spent). */
static int try_capacity(xs *x, uint64_t cap, const uint64_t *fixed_floor, uint64_t budget) {
    static const char *const orders[] = {"WAT", "TAW", "TWA"};
    x->cap = cap;
    uint64_t start = x->work;
    x->work_cap = mp_sat_add_u64(start, budget);
    for (uint64_t limit = 2 * (uint64_t)x->n + 16;; limit *= 2) {
        for (int h = 0; h < 3; h++) {
            x->order = orders[h];
            reset(x, fixed_floor);
            x->nodes_left = limit;
            /* the whole problem as one part, split where nothing spans */
            part all = {0, 0, 0, x->n_sec};
            for (uint32_t i = 0; i < x->n; i++) stack_push(x, i), all.n++;
            uint32_t *zero = mp_xmalloc((x->n_sec + 1) * sizeof *zero), nz = 0;
            for (uint32_t k = 0; k + 1 < x->n_sec; k++)
                if (!x->cuts[k]) zero[nz++] = k;
            int st = X_FOUND;
            uint32_t lo = 0;
            for (uint32_t z = 0; z <= nz && st == X_FOUND; z++) {
                uint32_t hi = z < nz ? zero[z] + 1 : x->n_sec;
                part piece = {x->n_stack, 0, lo, hi};
                for (uint32_t i = 0; i < x->n; i++)
                    if (x->it[i].a >= lo && x->it[i].a < hi) stack_push(x, i), piece.n++;
                if (piece.n) st = solve_part(x, piece);
                x->n_stack = piece.at;
                lo = hi;
            }
            mp_xfree(zero);
            x->n_stack = 0;
            if (st != X_ABORT) return st;
            if (x->work - start >= budget) return X_ABORT;
        }
    }
}

/* Table entries past which the exact search is not tried (4 bytes each). */
#define EXACT_MAX_ENTRIES (UINT64_C(1) << 24)

/* Overlapping pairs of the search's items (pack.c counts them). */
static uint64_t count_conflicts(const xs *x) {
    int32_t *s = mp_xmalloc((x->n + 1) * sizeof *s), *e = mp_xmalloc((x->n + 1) * sizeof *e);
    for (uint32_t i = 0; i < x->n; i++) s[i] = x->it[i].s, e[i] = x->it[i].e;
    uint64_t pairs = mp_pk_count_conflicts(s, e, x->n, NULL);
    mp_xfree(s);
    mp_xfree(e);
    return pairs;
}

/* The search's items: the non-empty, movable ones (map: their index in
 * items[]). */
static void load_items(xs *x, const pk_item *items, uint32_t n, uint32_t *map) {
    x->it = mp_xcalloc(n + 1, sizeof *x->it);
    for (uint32_t i = 0; i < n; i++) {
        if (!items[i].size || items[i].fixed) continue;
        map[x->n] = i;
        xitem *a = &x->it[x->n++];
        a->size = items[i].size;
        a->s = items[i].start;
        a->e = items[i].end;
        a->width = (uint64_t)(a->e - a->s + 1);
        if (!mp_mul_u64(a->size, a->width, &a->area)) a->area = UINT64_MAX;
    }
}

/* The search adds sizes without overflow checks: it runs only where the
 * sizes and the fixed items' tops sum below 2^64. */
static bool sums_fit(const pk_item *items, uint32_t n) {
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) sum = mp_sat_add_u64(sum, items[i].size);
    for (uint32_t i = 0; i < n; i++)
        if (items[i].fixed) sum = mp_sat_add_u64(sum, items[i].offset);
    return sum != UINT64_MAX;
}

/* First of the ns sorted ends at or after t. */
static uint32_t first_end_from(const int32_t *ends, uint32_t ns, int32_t t) {
    uint32_t lo = 0, hi = ns;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (ends[mid] < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Sections: one per distinct end time of the movable items and of the
 * fixed ones; each movable item's range of them.  Two intervals overlap
 * iff the earlier of their ends lies in both, so a movable item meets a
 * fixed one exactly in the sections of both (without the fixed items' ends
 * a fixed item ending inside a movable one would be missed).  Returns the
 * sorted distinct ends (x->n_sec of them). */
static int32_t *make_sections(xs *x, const pk_item *items, uint32_t n) {
    int32_t *ends = mp_xmalloc(((size_t)x->n + n + 1) * sizeof *ends);
    uint32_t m = 0;
    int32_t last = INT32_MIN;
    for (uint32_t i = 0; i < x->n; i++) {
        ends[m++] = x->it[i].e;
        if (x->it[i].e > last) last = x->it[i].e;
    }
    /* a fixed end at or past the last movable one is never the earlier end
     * (the shared sub-graphs' reservation: its sections stay as they were) */
    for (uint32_t i = 0; i < n; i++)
        if (items[i].fixed && items[i].size && items[i].end < last) ends[m++] = items[i].end;
    qsort(ends, m, sizeof *ends, cmp_i32);
    uint32_t ns = 0;
    for (uint32_t i = 0; i < m; i++)
        if (!ns || ends[ns - 1] != ends[i]) ends[ns++] = ends[i];
    x->n_sec = ns;
    for (uint32_t i = 0; i < x->n; i++) {
        x->it[i].a = first_end_from(ends, ns, x->it[i].s);
        x->it[i].b = first_end_from(ends, ns, x->it[i].e);
    }
    return ends;
}

/* The search's tables (every conflict pair, every item in each section
 * it spans) and the quadratic scan that builds them fit the budget and
 * memory; past that the search is not tried at all. */
static bool tables_fit(const xs *x, uint64_t budget) {
    uint64_t spans = 0;
    for (uint32_t i = 0; i < x->n; i++) spans += (uint64_t)(x->it[i].b - x->it[i].a) + 1;
    uint64_t entries = 2 * count_conflicts(x) + spans;
    return entries <= EXACT_MAX_ENTRIES && entries + (uint64_t)x->n * x->n / 2 <= budget;
}

/* Per section, the top of the fixed items live there: the floor no
 * movable item goes below. */
static uint64_t *fixed_floors(const pk_item *items, uint32_t n, const int32_t *ends, uint32_t ns) {
    uint64_t *floor = mp_xcalloc(ns + 1, sizeof *floor);
    for (uint32_t i = 0; i < n; i++) {
        if (!items[i].fixed || !items[i].size) continue;
        uint64_t top = items[i].offset + items[i].size;
        for (uint32_t k = 0; k < ns; k++)
            if (ends[k] >= items[i].start && ends[k] <= items[i].end && top > floor[k]) floor[k] = top;
    }
    return floor;
}

/* Conflict lists (small n: a plain scan), section lists, and the
 * search's per-item and per-section state. */
static void build_tables(xs *x) {
    uint32_t ns = x->n_sec;
    x->adj_at = mp_xcalloc(x->n + 2, sizeof *x->adj_at);
    size_t cap_adj = 0, na = 0;
    for (uint32_t i = 0; i < x->n; i++) {
        x->adj_at[i] = (uint32_t)na;
        for (uint32_t j = 0; j < x->n; j++)
            if (j != i && x->it[i].s <= x->it[j].e && x->it[j].s <= x->it[i].e)
                MP_VEC_PUSH(x->adj, na, cap_adj, j);
    }
    x->adj_at[x->n] = (uint32_t)na;
    x->sec_at = mp_xcalloc(ns + 2, sizeof *x->sec_at);
    for (uint32_t i = 0; i < x->n; i++)
        for (uint32_t k = x->it[i].a; k <= x->it[i].b; k++) x->sec_at[k + 1]++;
    for (uint32_t k = 0; k < ns; k++) x->sec_at[k + 1] += x->sec_at[k];
    x->sec_items = mp_xmalloc((x->sec_at[ns] + 1) * sizeof *x->sec_items);
    uint32_t *at = mp_xmalloc((ns + 1) * sizeof *at);
    memcpy(at, x->sec_at, (ns + 1) * sizeof *at);
    for (uint32_t i = 0; i < x->n; i++)
        for (uint32_t k = x->it[i].a; k <= x->it[i].b; k++) x->sec_items[at[k]++] = i;
    mp_xfree(at);
    x->touched = mp_xcalloc(ns + 1, 1);
    x->touched_list = mp_xmalloc((ns + 1) * sizeof *x->touched_list);
    x->mo = mp_xcalloc(x->n + 1, sizeof *x->mo);
    x->placed = mp_xcalloc(x->n + 1, 1);
    x->rank = mp_xcalloc(x->n + 1, sizeof *x->rank);
    x->floor = mp_xcalloc(ns + 1, sizeof *x->floor);
    x->total = mp_xcalloc(ns + 1, sizeof *x->total);
    x->cuts = mp_xcalloc(ns + 1, sizeof *x->cuts);
}

static void free_search(xs *x) {
    void *v[] = {x->it, x->adj_at, x->adj, x->sec_at, x->sec_items, x->touched, x->touched_list,
                 x->mo, x->placed, x->rank, x->floor, x->total, x->cuts, x->log, x->stack};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) mp_xfree(v[i]);
}

/* The peak of the layout the search found (its items and the fixed ones). */
static uint64_t found_peak(const xs *x, const pk_item *items, uint32_t n) {
    uint64_t peak = 0;
    for (uint32_t i = 0; i < x->n; i++)
        if (x->it[i].off + x->it[i].size > peak) peak = x->it[i].off + x->it[i].size;
    for (uint32_t i = 0; i < n; i++)
        if (items[i].fixed && items[i].offset + items[i].size > peak) peak = items[i].offset + items[i].size;
    return peak;
}

/* The layout the search found, written back into items[]. */
static void write_back(const xs *x, pk_item *items, const uint32_t *map) {
    for (uint32_t i = 0; i < x->n; i++) items[map[i]].offset = x->it[i].off;
}

/* What the capacity search knows.  `best` is the lowest capacity of a
 * layout the search itself found (it starts at the budget-independent
 * peak improvement started from, so the capacities tried never depend on
 * --budget-ms); `out` is the peak of the layout in items[] (the
 * heuristic's or a better one found); below `lo` every capacity is proved
 * infeasible (a layout that fits a capacity fits every larger one, so a
 * proof at c rules out all c' <= c). */
typedef struct bisect {
    uint64_t best, out, lo;
} bisect;

/* Passes of exact search: pass j has nominal work EXACT_PASS_WORK * 2^j,
 * shared out among its attempts as if it ran whole.  The schedule does not
 * depend on --exact-ms, which only cuts it short: a run with more work
 * does what a run with less did, then more, so its result is never worse.
 * The first pass is the default --exact-ms (10,000 ms of work). */
#define EXACT_PASS_WORK ((uint64_t)10000 * PK_EXACT_WORK_PER_MS)

/* The attempts of a pass that ran out of work.  The next pass tries them
 * again first, in their order, each with twice the work: a capacity that
 * needed a little more than its share is not left behind by a bisection
 * that moved on (MiniMalloc's J: 1,036,800 needed 1.14 times its share in
 * the first pass, and the second pass's bisection never came back to it). */
#define EXACT_RETRIES 64
typedef struct retries {
    uint64_t cap[EXACT_RETRIES], share[EXACT_RETRIES];
    uint32_t n;
} retries;

/* One attempt at cap with `share` of work (cut by what is left); its
 * outcome into bs; an abort noted in next.  Returns the work it used. */
static uint64_t attempt(xs *x, pk_item *items, uint32_t n, const uint32_t *map, const uint64_t *floor,
                        uint64_t cap, uint64_t share, uint64_t *cut, bisect *bs, retries *next, uint64_t *lo) {
    uint64_t before = x->work;
    int st = try_capacity(x, cap, floor, share < *cut ? share : *cut);
    uint64_t used = x->work - before;
    *cut = used >= *cut ? 0 : *cut - used;
    if (st == X_FOUND) {
        bs->best = found_peak(x, items, n);
        if (bs->best < bs->out) {
            write_back(x, items, map);
            bs->out = bs->best;
        }
        return used;
    }
    if (st == X_NONE && cap + 1 > bs->lo) bs->lo = cap + 1;
    if (st == X_ABORT && next->n < EXACT_RETRIES) next->cap[next->n] = cap, next->share[next->n++] = share;
    if (cap + 1 > *lo) *lo = cap + 1;
    return used;
}

/* One pass: the previous pass's aborted attempts again with twice their
 * work, then the lowest open capacity (unless that was one of them) and
 * bisection below the best found; an attempt that runs out of work proves
 * nothing but moves this pass past it.  `cut`: the work left in the whole
 * search. */
static void bisect_pass(xs *x, pk_item *items, uint32_t n, const uint32_t *map, const uint64_t *floor,
                        uint64_t nominal, uint64_t *cut, bisect *bs, const retries *prev, retries *next) {
    uint64_t left = nominal, lo = bs->lo;
    bool first = true;
    next->n = 0;
    for (uint32_t i = 0; i < prev->n && left && *cut && bs->lo < bs->out; i++) {
        if (prev->cap[i] >= bs->best || prev->cap[i] < bs->lo) continue;
        uint64_t share = prev->share[i] > left / 2 ? left : 2 * prev->share[i];
        uint64_t used = attempt(x, items, n, map, floor, prev->cap[i], share, cut, bs, next, &lo);
        left = used >= left ? 0 : left - used;
        first = false;
    }
    lo = bs->lo;
    while (lo < bs->best && bs->lo < bs->out && left && *cut) {
        uint64_t cap = first ? lo : lo + (bs->best - 1 - lo) / 2;
        uint64_t share = first ? left / 3 : left / 3 + 1;
        first = false;
        uint64_t used = attempt(x, items, n, map, floor, cap, share, cut, bs, next, &lo);
        left = used >= left ? 0 : left - used;
    }
}

/* Passes of growing work until the layout is proved optimal, the search
 * has nothing left below its best, or the work limit. */
static void minimise(xs *x, pk_item *items, uint32_t n, const uint32_t *map, const uint64_t *floor,
                     uint64_t budget, bisect *bs) {
    uint64_t cut = budget, nominal = EXACT_PASS_WORK;
    retries *r = mp_xcalloc(2, sizeof *r);
    for (int k = 0; cut && bs->lo < bs->out && bs->lo < bs->best; k ^= 1) {
        bisect_pass(x, items, n, map, floor, nominal, &cut, bs, &r[k], &r[k ^ 1]);
        nominal = nominal > UINT64_MAX / 2 ? UINT64_MAX : nominal * 2;
    }
    mp_xfree(r);
}

uint64_t mp_pk_exact(pk_item *items, uint32_t n, uint64_t best, uint64_t start, uint64_t lower,
                     uint64_t budget, bool *proved, uint64_t *proved_bound, uint64_t *work,
                     pk_exact_outcome *outcome) {
    *proved = best <= lower;
    *proved_bound = lower;
    *outcome = *proved ? PK_X_AT_BOUND : PK_X_WIDE;
    xs x = {0};
    uint32_t *map = mp_xmalloc((n + 1) * sizeof *map);
    load_items(&x, items, n, map);
    if (!*proved && !x.n) { /* every item fixed: the one layout there is */
        *proved = true;
        *proved_bound = best;
        *outcome = PK_X_PROVED;
    }
    if (*proved || !x.n || !sums_fit(items, n)) {
        mp_xfree(map);
        mp_xfree(x.it);
        return best;
    }
    int32_t *ends = make_sections(&x, items, n);
    if (!tables_fit(&x, budget)) {
        *outcome = PK_X_TOO_LARGE;
        mp_xfree(ends);
        mp_xfree(map);
        mp_xfree(x.it);
        *work += (uint64_t)x.n;
        return best;
    }
    uint64_t *floor = fixed_floors(items, n, ends, x.n_sec);
    build_tables(&x);
    bisect bs = {start > best ? start : best, best, lower};
    minimise(&x, items, n, map, floor, budget, &bs);
    *proved = bs.lo >= bs.out;
    *proved_bound = *proved ? bs.out : bs.lo;
    *outcome = *proved ? PK_X_PROVED : PK_X_BUDGET;
    *work += x.work;
    mp_xfree(ends);
    mp_xfree(floor);
    mp_xfree(map);
    free_search(&x);
    return bs.out;
}
