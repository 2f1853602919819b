/* sweep.c - O(n log n) layouts that need no conflict graph: lay items
 * out in time order, as an allocator would run, keeping the free gaps
 * below the top in a treap ordered by offset and augmented with the
 * largest gap in each subtree.  At each node, items that ended are freed
 * (coalescing with their neighbours), then items that start are
 * allocated, largest first, into the lowest gap that fits or on top.
 *
 * The anchored variant first stacks the items live at the busiest node:
 * a layout that reaches the lower bound must pack exactly those without a
 * gap there.  From that node the allocator then runs forward over the
 * items that start later and backward (in reversed time) over those that
 * end earlier; the two sides never meet.  Stacked largest at the bottom,
 * it packs idealloc's pangu_2.6B at its lower bound, where every
 * construction that places items one by one from the floor up leaves 40
 * MiB.  Stacked in a V (mp_pk_stack), the stack frees its bytes in one
 * piece on either side: the lower part, the items that lived a short time
 * before the node against how long they live from it on, ordered so that
 * going back in time the lowest is freed first (latest start at the
 * bottom); the upper part, the others, ordered so that going forward the
 * highest is freed first (latest end lowest).  The freed bytes are then
 * one gap, at the floor before the node and under the top after it, which
 * the allocator fills as it would an empty buffer.  It packs idealloc's
 * S_1 at its lower bound (1.0018 stacked by size). */
#include "pack.h"
#include "sort.h"

typedef struct gnode {
    uint64_t off, len, max_len;
    uint32_t prio;
    int32_t l, r;
} gnode;

/* The free gaps below the top: a treap by offset, each node knowing the
 * largest gap in its subtree.  Gaps never touch (freeing coalesces). */
typedef struct gaps {
    gnode *v;
    uint32_t n, cap, seed;
    int32_t root, free_list;
    int32_t *path; /* the nodes from a root down to the last one found */
    uint32_t np, path_cap;
} gaps;

static uint32_t prio(gaps *g) { return mp_xorshift32(&g->seed); }

static void pull(gaps *g, int32_t x) {
    gnode *a = &g->v[x];
    a->max_len = a->len;
    if (a->l >= 0 && g->v[a->l].max_len > a->max_len) a->max_len = g->v[a->l].max_len;
    if (a->r >= 0 && g->v[a->r].max_len > a->max_len) a->max_len = g->v[a->r].max_len;
}

static void split(gaps *g, int32_t x, uint64_t off, int32_t *L, int32_t *R) {
    if (x < 0) {
        *L = *R = -1;
        return;
    }
    if (g->v[x].off < off) {
        split(g, g->v[x].r, off, &g->v[x].r, R);
        *L = x;
    } else {
        split(g, g->v[x].l, off, L, &g->v[x].l);
        *R = x;
    }
    pull(g, x);
}

static int32_t merge(gaps *g, int32_t a, int32_t b) {
    if (a < 0) return b;
    if (b < 0) return a;
    if (g->v[a].prio > g->v[b].prio) {
        g->v[a].r = merge(g, g->v[a].r, b);
        pull(g, a);
        return a;
    }
    g->v[b].l = merge(g, a, g->v[b].l);
    pull(g, b);
    return b;
}

static int32_t new_node(gaps *g, uint64_t off, uint64_t len) {
    int32_t x;
    if (g->free_list >= 0) {
        x = g->free_list;
        g->free_list = g->v[x].l;
    } else {
        if (g->n == g->cap) {
            g->cap = g->cap ? g->cap * 2 : 64;
            g->v = mp_xrealloc(g->v, g->cap * sizeof *g->v);
        }
        x = (int32_t)g->n++;
    }
    g->v[x] = (gnode){off, len, len, prio(g), -1, -1};
    return x;
}

static void path_push(gaps *g, int32_t x) { MP_VEC_PUSH(g->path, g->np, g->path_cap, x); }

/* The subtree max_len along the path, from the node at depth d (the only
 * one whose gap or children changed) up.  A node's max_len depends on its
 * own gap and its children's max_len alone, so once one comes out as it
 * was, the nodes above it are right already: most changes stop within a
 * level or two instead of climbing to the root. */
static void repull_path(gaps *g, uint32_t d) {
    for (uint32_t k = d + 1; k-- > 0;) {
        uint64_t was = g->v[g->path[k]].max_len;
        pull(g, g->path[k]);
        if (g->v[g->path[k]].max_len == was) return;
    }
}

/* Unlink the last node of the path (its subtree's root is *root): its
 * children take its place; the node goes back to the free list. */
static void remove_last(gaps *g, int32_t *root) {
    int32_t x = g->path[--g->np];
    int32_t y = merge(g, g->v[x].l, g->v[x].r);
    if (!g->np) {
        *root = y;
    } else {
        gnode *p = &g->v[g->path[g->np - 1]];
        if (p->l == x) p->l = y;
        else p->r = y;
    }
    g->v[x].l = g->free_list;
    g->free_list = x;
    if (g->np) repull_path(g, g->np - 1);
}

/* Take `need` bytes from the lowest-offset gap that has them: its offset,
 * or UINT64_MAX when none does.  The gap shrinks from below in place (it
 * keeps its order among the others) or goes. */
static uint64_t take_first_fit(gaps *g, uint64_t need) {
    int32_t x = g->root;
    if (x < 0 || g->v[x].max_len < need) return UINT64_MAX;
    g->np = 0;
    for (;;) { /* the max_len invariant keeps a fitting gap below x */
        path_push(g, x);
        const gnode *a = &g->v[x];
        if (a->l >= 0 && g->v[a->l].max_len >= need) x = a->l;
        else if (a->len >= need) break;
        else x = a->r;
    }
    uint64_t at = g->v[x].off;
    if (g->v[x].len > need) {
        g->v[x].off += need;
        g->v[x].len -= need;
        repull_path(g, g->np - 1);
    } else {
        remove_last(g, &g->root);
    }
    return at;
}

/* Unlink node x, the path's entry at depth d (the path from the root down
 * through it): its children take its place; the path above is re-pulled. */
static void remove_at(gaps *g, uint32_t d) {
    g->np = d + 1;
    remove_last(g, &g->root);
}

/* A new gap [off, off+len) whose offset is on no node (the search path for
 * it is recorded): it goes where its priority puts it, the subtree it
 * displaces split around it. */
static void insert_gap(gaps *g, uint64_t off, uint64_t len) {
    int32_t x = new_node(g, off, len);
    uint32_t d = 0;
    while (d < g->np && g->v[g->path[d]].prio > g->v[x].prio) d++;
    int32_t below = d < g->np ? g->path[d] : -1;
    if (below >= 0) split(g, below, off, &g->v[x].l, &g->v[x].r);
    pull(g, x);
    if (!d) {
        g->root = x;
    } else {
        gnode *p = &g->v[g->path[d - 1]];
        if (off < p->off) p->l = x;
        else p->r = x;
    }
    g->np = d;
    if (d) repull_path(g, d - 1);
}

/* Free [off, off+len): coalesce with the gaps around it, or lower the top.
 * The gaps just below and above are on the search path for off (the last
 * nodes it leaves to the right and to the left), so one descent finds
 * both, and a coalesced gap changes in place: its order among the others
 * stays (gaps never touch).  The gap above never reaches the top. */
static void release(gaps *g, uint64_t *top, uint64_t off, uint64_t len) {
    g->np = 0;
    uint32_t below = UINT32_MAX, above = UINT32_MAX; /* their depths on the path */
    for (int32_t x = g->root; x >= 0;) {
        path_push(g, x);
        if (g->v[x].off < off) below = g->np - 1, x = g->v[x].r;
        else above = g->np - 1, x = g->v[x].l;
    }
    int32_t b = below != UINT32_MAX ? g->path[below] : -1, a = above != UINT32_MAX ? g->path[above] : -1;
    bool join_b = b >= 0 && g->v[b].off + g->v[b].len == off, join_a = a >= 0 && g->v[a].off == off + len;
    if (join_b && join_a) { /* one gap from below's start to above's end */
        g->v[b].len += len + g->v[a].len;
        repull_path(g, below); /* the path stays: remove_at cuts it at `above` */
        remove_at(g, above);
    } else if (join_b && off + len == *top) { /* the gap below joins the top */
        *top = g->v[b].off;
        remove_at(g, below);
    } else if (join_b) {
        g->v[b].len += len;
        repull_path(g, below);
    } else if (join_a) {
        g->v[a].off = off;
        g->v[a].len += len;
        repull_path(g, above);
    } else if (off + len == *top) {
        *top = off;
    } else {
        insert_gap(g, off, len);
    }
}

/* The allocations of one run of the simulated allocator, each an item:
 * jobs 0 .. n_moving - 1 are allocated at their start and freed at their
 * stop; the rest are held from the beginning (placed below `top` by the
 * caller) and only freed.  A run goes forward in time (allocated at the
 * item's start, freed after its end) or backward (allocated at its end,
 * freed before its start, in reversed time).  The jobs are item indices
 * alone, the times read from the items: at 10^7 items a job with its own
 * times and size was 0.2 GB at the plan's peak. */
typedef struct jobs {
    const pk_item *items;
    const uint32_t *item;
    uint32_t n, n_moving;
    bool backward;
} jobs;

static bool job_held(const jobs *J, uint32_t j) { return j >= J->n_moving; }
static uint64_t job_size(const jobs *J, uint32_t j) { return J->items[J->item[j]].size; }
static int64_t job_start(const jobs *J, uint32_t j) {
    const pk_item *it = &J->items[J->item[j]];
    return J->backward ? -(int64_t)it->end : it->start;
}
static int64_t job_stop(const jobs *J, uint32_t j) {
    const pk_item *it = &J->items[J->item[j]];
    return J->backward ? -(int64_t)it->start + 1 : (int64_t)it->end + 1;
}

/* Sizes by rank, largest first, when the jobs have at most RANK_MAX
 * distinct sizes (a model has a few dozen): an open-addressing table of
 * twice as many slots as there can be sizes (min(jobs, RANK_MAX)), so a
 * sub-graph's sweep of ten jobs clears 32 slots, not 2,048 (a million-
 * tensor graph of many small conditionals sweeps tens of thousands of
 * them).  A rank orders as its size does, in a few bits. */
#define RANK_MAX 1024u

#define RANK_SLOT_BYTES (sizeof(uint64_t) + sizeof(uint16_t) + sizeof(bool))
#define RANK_SMALL 256u /* slots kept on the stack: no allocation at all */

typedef struct size_ranks {
    uint64_t *size; /* the slots' arrays, in one block */
    uint16_t *rank;
    bool *used;
    uint32_t n, bits; /* the table has 2^bits slots */
    void *block;      /* the block when allocated, else NULL */
    _Alignas(uint64_t) unsigned char small[RANK_SMALL * RANK_SLOT_BYTES];
} size_ranks;

static uint32_t rank_slot(const size_ranks *r, uint64_t size) {
    uint32_t mask = (UINT32_C(1) << r->bits) - 1;
    uint32_t i = (uint32_t)((size * 0x9e3779b97f4a7c15ull) >> (64 - r->bits));
    while (r->used[i] && r->size[i] != size) i = (i + 1) & mask;
    return i;
}

static int cmp_desc_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x < y) - (x > y);
}

static void free_ranks(size_ranks *r) { mp_xfree(r->block); }

/* False when there are more than RANK_MAX distinct sizes (r is then
 * freed already). */
static bool rank_sizes(const jobs *J, size_ranks *r) {
    uint32_t nj = J->n;
    uint32_t most = nj < RANK_MAX ? nj : RANK_MAX;
    r->bits = 4;
    while ((UINT32_C(1) << r->bits) < 2 * most) r->bits++;
    uint32_t slots = UINT32_C(1) << r->bits;
    unsigned char *at = r->block = slots > RANK_SMALL ? mp_xmalloc(slots * RANK_SLOT_BYTES) : NULL;
    if (!at) at = r->small;
    r->size = (uint64_t *)(void *)at;
    r->rank = (uint16_t *)(void *)(at + slots * sizeof *r->size);
    r->used = (bool *)(at + slots * (sizeof *r->size + sizeof *r->rank));
    memset(r->used, 0, slots * sizeof *r->used);
    r->n = 0;
    for (uint32_t j = 0; j < nj; j++) {
        uint32_t i = rank_slot(r, job_size(J, j));
        if (r->used[i]) continue;
        if (r->n == RANK_MAX) {
            free_ranks(r);
            return false;
        }
        r->used[i] = true, r->size[i] = job_size(J, j), r->n++;
    }
    uint64_t sorted[RANK_MAX];
    uint32_t k = 0;
    for (uint32_t i = 0; i < slots; i++)
        if (r->used[i]) sorted[k++] = r->size[i];
    qsort(sorted, k, sizeof *sorted, cmp_desc_u64);
    for (uint32_t q = 0; q < k; q++) r->rank[rank_slot(r, sorted[q])] = (uint16_t)q;
    return true;
}

/* How packed_event_order packs an event: the size ranks, the earliest
 * time, and the widths of the rank and the event fields. */
typedef struct packing {
    const size_ranks *r;
    int64_t first;
    int wr, we;
} packing;

/* Job j's events as words (its allocation first, none when held); returns
 * how many. */
static int job_words(const jobs *J, const packing *p, uint32_t j, uint64_t w[2]) {
    uint64_t rank = p->r->rank[rank_slot(p->r, job_size(J, j))];
    int k = 0;
    if (!job_held(J, j))
        w[k++] = ((((uint64_t)(job_start(J, j) - p->first) << 1 | 1) << p->wr | rank) << p->we) | (2 * j + 1);
    w[k++] = ((((uint64_t)(job_stop(J, j) - p->first) << 1) << p->wr | rank) << p->we) | (2 * j);
    return k;
}

/* The events' words sorted by time and rank, ties in job order (the words
 * made in ascending j).  A large sort makes each word twice, counted then
 * placed, in one array: with a copy to sort into, the words were 0.24 GB
 * at the plan's peak at 10^7 tensors. */
static uint64_t *sorted_words(const jobs *J, const packing *p, size_t ne, int bits, uint64_t **block) {
    uint64_t w[2];
    if (!mp_placed_sort_applies((uint32_t)ne, bits)) {
        uint64_t *a = *block = mp_xmalloc((2 * ne + 1) * sizeof *a);
        size_t q = 0;
        for (uint32_t j = 0; j < J->n; j++)
            for (int k = 0, m = job_words(J, p, j, w); k < m; k++) a[q++] = w[k];
        return mp_sort_words(a, a + ne, (uint32_t)ne, p->we, bits);
    }
    mp_placed_sort s;
    mp_placed_sort_begin(&s, (uint32_t)ne, p->we, bits);
    *block = s.words;
    for (uint32_t j = 0; j < J->n; j++)
        for (int k = 0, m = job_words(J, p, j, w); k < m; k++) mp_placed_sort_count(&s, w[k]);
    mp_placed_sort_counted(&s);
    for (uint32_t j = 0; j < J->n; j++)
        for (int k = 0, m = job_words(J, p, j, w); k < m; k++) mp_placed_sort_place(&s, w[k]);
    return mp_placed_sort_finish(&s);
}

/* event_order with each event packed in one word, time, size rank and the
 * event from the top bits down, sorted by time and rank alone (ties stay
 * in job order): half the memory of (key, event) pairs and, with a few
 * bits of rank instead of the sizes' own, fewer passes.  NULL when the
 * three do not fit 64 bits. */
static uint32_t *packed_event_order(const jobs *J, size_t ne, int64_t first, int wt) {
    size_ranks rs, *r = &rs;
    if (!rank_sizes(J, r)) return NULL;
    packing p = {r, first, mp_bit_width(r->n ? r->n - 1 : 0), mp_bit_width(2 * (uint64_t)J->n)};
    if (wt + p.wr + p.we > 64) {
        free_ranks(r);
        return NULL;
    }
    uint64_t *block, *sorted = sorted_words(J, &p, ne, wt + p.wr, &block);
    free_ranks(r);
    /* the order written over the words' own block, from its start: entry q
     * goes to bytes 4q.., at or before where sorted[q] was read (sorted is
     * the block or its second half) */
    uint32_t *order = (uint32_t *)(void *)block;
    uint64_t event = (UINT64_C(1) << p.we) - 1;
    for (size_t q = 0; q < ne; q++) order[q] = (uint32_t)(sorted[q] & event);
    return mp_xrealloc(block, (ne + 1) * sizeof *order);
}

/* The events of the jobs in the order the allocator meets them: by time,
 * frees before allocations, then by size descending, then by job.  An
 * event is 2j + 1 for job j's allocation (none for a held job), 2j for its
 * free; n_events gets the count.  The caller frees the result.
 *
 * Where time and size fit one 64-bit key together (nearly always) the
 * events are sorted as (key, event) pairs straight away; else through
 * pk_keyed and mp_pk_sort_desc, which needs 24 bytes an event more: at
 * 10^7 items, 0.35 GB at the plan's peak. */
static uint32_t *event_order(const jobs *J, size_t *n_events) {
    uint32_t nj = J->n;
    int64_t first = INT64_MAX, last = INT64_MIN;
    uint64_t and_size = UINT64_MAX, or_size = 0;
    size_t ne = 0;
    for (uint32_t j = 0; j < nj; j++) {
        int64_t stop = job_stop(J, j), a = job_held(J, j) ? stop : job_start(J, j);
        uint64_t size = job_size(J, j);
        if (a < first) first = a;
        if (stop > last) last = stop;
        and_size &= size, or_size |= size;
        ne += job_held(J, j) ? 1 : 2;
    }
    *n_events = ne;
    /* time t as (t - first) << 1, + 1 for an allocation: frees first */
    uint64_t span = nj ? ((uint64_t)(last - first) << 1) | 1 : 0;
    int wt = mp_bit_width(span), ws = mp_bit_width(and_size ^ or_size);
    uint32_t *packed = packed_event_order(J, ne, first, wt);
    if (packed) return packed;
    if (wt + ws <= 64) {
        uint64_t ms = ws == 64 ? UINT64_MAX : (UINT64_C(1) << ws) - 1;
        mp_pair *a = mp_xmalloc((2 * ne + 1) * sizeof *a), *b = a + ne;
        size_t q = 0;
        for (uint32_t j = 0; j < nj; j++) { /* ascending j: ties stay by job */
            uint64_t big_first = ~job_size(J, j) & ms;
            if (!job_held(J, j))
                a[q++] = (mp_pair){(((uint64_t)(job_start(J, j) - first) << 1 | 1) << ws) | big_first, 2 * j + 1};
            a[q++] = (mp_pair){(((uint64_t)(job_stop(J, j) - first) << 1) << ws) | big_first, 2 * j};
        }
        mp_pair *sorted = mp_sort_pairs(a, b, (uint32_t)ne, wt + ws);
        /* the order written over the pairs' own block, from its start: entry
         * q goes to bytes 4q.., at or before where sorted[q] was read */
        uint32_t *order = (uint32_t *)(void *)a;
        for (q = 0; q < ne; q++) order[q] = sorted[q].at;
        return mp_xrealloc(a, (ne + 1) * sizeof *order);
    }
    uint32_t *order = mp_xmalloc((ne + 1) * sizeof *order);
    pk_keyed *ev = mp_xmalloc((ne + 1) * sizeof *ev);
    size_t q = 0;
    /* ascending j: a job's two events never tie (their times differ in
     * the last bit), so equal keys come from different jobs, in job order */
    for (uint32_t j = 0; j < nj; j++) {
        if (!job_held(J, j))
            ev[q++] = (pk_keyed){span - (((uint64_t)(job_start(J, j) - first) << 1) | 1), job_size(J, j), 2 * j + 1};
        ev[q++] = (pk_keyed){span - ((uint64_t)(job_stop(J, j) - first) << 1), job_size(J, j), 2 * j};
    }
    mp_pk_sort_desc(ev, (uint32_t)ne);
    for (q = 0; q < ne; q++) order[q] = ev[q].i;
    mp_xfree(ev);
    return order;
}

/* Run the allocator over the jobs in time order: held jobs occupy their
 * item's offset from the start (below `top`, leaving no gap), the others
 * go into the lowest gap that fits, or on top.  At one time, frees come
 * first, then allocations, largest first.  Returns the peak. */
static uint64_t simulate(pk_item *items, const jobs *J, uint64_t top) {
    size_t ne;
    uint32_t *order = event_order(J, &ne);
    gaps g = {NULL, 0, 0, 2463534242u, -1, -1, NULL, 0, 0};
    uint64_t peak = top;
    for (size_t k = 0; k < ne; k++) {
        pk_item *it = &items[J->item[order[k] >> 1]];
        if (!(order[k] & 1)) { /* a free */
            release(&g, &top, it->offset, it->size);
            continue;
        }
        uint64_t at = take_first_fit(&g, it->size);
        if (at == UINT64_MAX) {
            it->offset = top;
            top = mp_sat_add_u64(top, it->size);
        } else {
            it->offset = at;
        }
        uint64_t end;
        bool fits = mp_add_u64(it->offset, it->size, &end);
        if (!fits || end > peak) peak = fits ? end : UINT64_MAX;
        /* Past 64 bits: the worst layout, and the item that overflows
         * tells the caller so (layout.c's layout_fits).  A layout ending
         * exactly at 2^64 - 1 is valid and goes on: the items after it
         * must be placed, not left at 0. */
        if (!fits) break;
    }
    mp_xfree(g.v);
    mp_xfree(g.path);
    mp_xfree(order);
    return peak;
}

uint64_t mp_pk_sweep(pk_item *items, uint32_t n) {
    uint32_t *item = mp_xmalloc((n + 1) * sizeof *item), nj = 0;
    uint64_t top = 0;
    for (uint32_t i = 0; i < n; i++) { /* fixed items: reserved from the start */
        if (!items[i].fixed || !items[i].size) continue;
        uint64_t end = mp_sat_add_u64(items[i].offset, items[i].size);
        if (end > top) top = end;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (items[i].fixed || !items[i].size) {
            if (!items[i].fixed) items[i].offset = 0;
            continue;
        }
        item[nj++] = i;
    }
    uint64_t peak = simulate(items, &(jobs){items, item, nj, nj, false}, top);
    mp_xfree(item);
    return peak;
}

/* ------------------------------------------------------------ anchored */

/* An item live at the anchor, with the keys it is stacked by: part (the
 * V's lower or upper part), then key descending, then size descending,
 * then index. */
typedef struct held_item {
    uint64_t size;
    int64_t key;
    uint32_t part, item;
} held_item;

static int cmp_held(const void *a, const void *b) {
    const held_item *x = a, *y = b;
    if (x->part != y->part) return x->part < y->part ? -1 : 1;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return (x->item > y->item) - (x->item < y->item);
}

/* Item it, live at node t, as stack rule `rule` stacks it: by size alone,
 * or in a V whose lower part takes the items that live before t less than
 * num/den times as long as from t on (latest start lowest), the upper part
 * the others (latest end lowest). */
static held_item held_as(const pk_item *it, uint32_t i, int32_t t, mp_pk_stack rule) {
    static const int64_t num[] = {0, 1, 4, 1}, den[] = {0, 1, 1, 4};
    held_item h = {it->size, 0, 0, i};
    if (rule == MP_PK_STACK_SIZE) return h;
    int64_t before = (int64_t)t - it->start, after = (int64_t)it->end - t + 1;
    h.part = before * den[rule] < after * num[rule] ? 0 : 1;
    h.key = h.part == 0 ? it->start : it->end;
    return h;
}

/* Where an item lies against the anchor node t. */
enum side { HELD, AFTER, BEFORE };
static enum side side_of(const pk_item *it, int32_t t) {
    return it->start <= t && t <= it->end ? HELD : it->start > t ? AFTER : BEFORE;
}

/* The items of each side (after or before the anchor) in index order,
 * then the held ones in stack order: one run of the allocator each. */
static uint64_t run_sides(pk_item *items, uint32_t n, int32_t t, const held_item *held, uint32_t nh,
                          const uint32_t count[3], uint64_t top) {
    uint32_t *fwd = mp_xmalloc((count[AFTER] + nh + 1) * sizeof *fwd),
             *bwd = mp_xmalloc((count[BEFORE] + nh + 1) * sizeof *bwd);
    uint32_t nf = 0, nb = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!items[i].size) continue;
        enum side side = side_of(&items[i], t);
        if (side == AFTER) fwd[nf++] = i;
        else if (side == BEFORE) bwd[nb++] = i;
    }
    /* after the node, each held block is freed where it ends; before it,
     * in reversed time, where it starts */
    for (uint32_t h = 0; h < nh; h++) fwd[nf + h] = bwd[nb + h] = held[h].item;
    uint64_t a = simulate(items, &(jobs){items, fwd, nf + nh, nf, false}, top);
    mp_xfree(fwd);
    uint64_t b = simulate(items, &(jobs){items, bwd, nb + nh, nb, true}, top);
    mp_xfree(bwd);
    return a > b ? a : b;
}

uint64_t mp_pk_sweep_anchored(pk_item *items, uint32_t n, mp_pk_stack rule) {
    for (uint32_t i = 0; i < n; i++)
        if (items[i].fixed) return UINT64_MAX; /* the stack would have to avoid them */
    int32_t t;
    mp_pk_live_peak(items, n, &t);
    /* counted first, so that each array is its size: at 10^7 items the
     * arrays sized n, n and n (held, after, before) were 0.7 GB */
    uint32_t count[3] = {0, 0, 0};
    for (uint32_t i = 0; i < n; i++)
        if (items[i].size) count[side_of(&items[i], t)]++;
    held_item *held = mp_xmalloc((count[HELD] + 1) * sizeof *held);
    uint32_t nh = 0;
    for (uint32_t i = 0; i < n; i++) {
        items[i].offset = 0;
        if (items[i].size && side_of(&items[i], t) == HELD) held[nh++] = held_as(&items[i], i, t, rule);
    }
    qsort(held, nh, sizeof *held, cmp_held);
    uint64_t top = 0;
    bool fits = true;
    for (uint32_t h = 0; h < nh && fits; h++) {
        items[held[h].item].offset = top;
        fits = mp_add_u64(top, held[h].size, &top);
    }
    /* else the held item that overflows says so (layout_fits) */
    uint64_t peak = fits ? run_sides(items, n, t, held, nh, count, top) : UINT64_MAX;
    mp_xfree(held);
    return peak;
}
