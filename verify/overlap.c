/* overlap.c - rules 4 (no overlap) and 5 (control flow), one sweep.
 *
 * Per graph and buffer, allocations are swept in order of the node where
 * they start; an interval treap holds the byte ranges of those still live,
 * so each new allocation is checked against exactly the live ranges it
 * touches: O(n log n) plus the violations found.
 *
 * Rule 5 rides on the same sweep: at each control-flow node, the memory of
 * every sub-graph it runs (all of that sub-graph's allocations and, through
 * it, its own sub-graphs', whatever their lifetimes) is an extra item live
 * at that node alone.  Such an item conflicts with any parent allocation
 * it touches, and with nothing else.
 *
 * Rule 5 also covers what a cond's results are (core/escape.c, D14): a
 * result used after the cond is the value its branch returned, so those
 * bytes are an "escape" item from the node after the cond to the result's
 * last use.  It conflicts with a parent allocation (other than the one it
 * aliases, and than cond results' own slots, which nothing writes) and
 * with the sub-graph memory of a later control-flow node. */
#include "overlap.h"

#include <stdio.h>

#define MAX_HITS 256 /* overlaps examined per inserted item */
#define MAX_REPORT 8 /* violations reported per inserted item */

typedef struct seg {
    uint64_t buffer, lo, hi;
} seg;

/* Footprint of a graph: its own allocations and its sub-graphs'
 * footprints, merged into disjoint segments per buffer. */
typedef struct fprint {
    seg *s;
    uint32_t n;
} fprint;

/* What a footprint or an escape item has beyond an allocation's: the
 * sub-graph (an escape's branch, -1 for an operand); an escape's cond
 * result tensor and the family it aliases. */
typedef struct extra {
    int32_t sub;
    int32_t result;
    int32_t aliased;
} extra;

typedef v_item item;

/* The items of one graph and the extras of its footprints and escapes. */
typedef struct items {
    item *v;
    uint32_t n;
    size_t cap;
    extra *x;
    uint32_t nx;
    size_t xcap;
} items;

static int32_t special_mark(bool escape, uint32_t x) { return -1 - (int32_t)(2 * x + escape); }
static bool is_escape(const item *x) { return x->family < 0 && ((-1 - x->family) & 1); }
static bool is_footprint(const item *x) { return x->family < 0 && !((-1 - x->family) & 1); }
static const extra *extra_of(const extra *ex, const item *x) { return &ex[(-1 - x->family) >> 1]; }

/* A footprint or escape item with its extra. */
static void push_special(items *L, item x, bool escape, extra more) {
    x.family = special_mark(escape, L->nx);
    MP_VEC_PUSH(L->x, L->nx, L->xcap, more);
    MP_VEC_PUSH(L->v, L->n, L->cap, x);
}

static int cmp_seg(const void *a, const void *b) {
    const seg *x = a, *y = b;
    if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return (x->hi > y->hi) - (x->hi < y->hi);
}

static void merge_segs(fprint *f) {
    if (!f->n) return;
    qsort(f->s, f->n, sizeof *f->s, cmp_seg);
    uint32_t k = 0;
    for (uint32_t i = 1; i < f->n; i++) {
        seg *last = &f->s[k];
        if (f->s[i].buffer == last->buffer && f->s[i].lo <= last->hi) {
            if (f->s[i].hi > last->hi) last->hi = f->s[i].hi;
        } else {
            f->s[++k] = f->s[i];
        }
    }
    f->n = k + 1;
}

/* added[s] == gi + 1: sub-graph s is in gi's footprint already (one array
 * of stamps for every graph, never cleared: one array per graph was
 * quadratic, 17% of `verify` at deep-10^6, 333,000 graphs). */
static void build_footprint(vctx *c, int32_t gi, fprint *fp, uint32_t *added) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    fprint *f = &fp[gi];
    size_t cap = 16;
    f->s = mp_xmalloc(cap * sizeof *f->s);
    f->n = 0;
    if (c->block_of[gi] >= 0) {
        const mp_graph_plan *gp = &c->plan->graphs[c->block_of[gi]];
        for (uint32_t a = 0; a < gp->n_allocs; a++) {
            const mp_alloc *x = &gp->allocs[a];
            uint64_t end;
            if (!c->usable[gi][a] || !x->size || !mp_add_u64(x->offset, x->size, &end)) continue;
            seg s = {x->mem_id, x->offset, end};
            MP_VEC_PUSH(f->s, f->n, cap, s);
        }
    }
    for (uint32_t i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < 2; k++) {
            int32_t s = g->nodes[i].sub[k];
            if (s < 0 || added[s] == (uint32_t)gi + 1) continue;
            added[s] = (uint32_t)gi + 1;
            for (uint32_t j = 0; j < fp[s].n; j++) MP_VEC_PUSH(f->s, f->n, cap, fp[s].s[j]);
        }
    merge_segs(f);
}

static int cmp_start(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->alloc > y->alloc) - (x->alloc < y->alloc);
}

typedef v_ending ending;

/* The same with the buffer, for the comparison sort (wide keys). */
typedef struct ending_key {
    uint64_t buffer;
    int32_t end;
    uint32_t idx;
} ending_key;

static int cmp_end(const void *a, const void *b) {
    const ending_key *x = a, *y = b;
    if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Counting sorts for the sweep: at 10^7 allocations the C library's
 * merge sort of 56-byte items was a sixth of a verify.  The keys are node
 * numbers in a few buffers, so a count per (buffer, node) orders them in
 * two linear passes and 4 bytes an item.  The sorts are stable: ties keep
 * the order the items were collected in, as that merge sort kept them.
 * When a count table would be much larger than the items (a few items
 * over many nodes, or large buffer numbers), the caller sorts with qsort,
 * in the same order. */

/* Slots of the count table for keys buffer * (max_node + 1) + node, or 0
 * when it would be much larger than the items. */
static size_t count_slots(uint64_t max_buffer, uint64_t max_node, uint32_t n) {
    uint64_t limit = 4 * (uint64_t)n + 65536;
    if (max_node >= limit || max_buffer >= limit / (max_node + 1)) return 0;
    return (size_t)((max_buffer + 1) * (max_node + 1));
}

/* What the items are counted by: buffer then first node, buffer then
 * last node, or alloc (less `base`, the smallest). */
typedef enum { BY_START, BY_END, BY_ALLOC } key_kind;

typedef struct key_spec {
    key_kind kind;
    uint64_t nodes; /* BY_START, BY_END: one more than the largest node */
    int64_t base;   /* BY_ALLOC */
} key_spec;

static uint64_t item_key(const item *x, const key_spec *k) {
    if (k->kind == BY_ALLOC) return (uint64_t)((int64_t)x->alloc - k->base);
    return x->buffer * k->nodes + (uint64_t)(k->kind == BY_END ? x->end : x->start);
}

/* from[] ordering the items' keys stably (each key below slots). */
static uint32_t *count_sort(const item *it, uint32_t n, size_t slots, const key_spec *k) {
    uint32_t *count = mp_xcalloc(slots + 1, sizeof *count), *from = mp_xmalloc(((size_t)n + 1) * sizeof *from);
    for (uint32_t q = 0; q < n; q++) count[item_key(&it[q], k) + 1]++;
    for (size_t j = 1; j <= slots; j++) count[j] += count[j - 1];
    for (uint32_t q = 0; q < n; q++) from[count[item_key(&it[q], k)]++] = q;
    mp_xfree(count);
    return from;
}

_Static_assert(sizeof(item) <= MP_PERMUTE_MAX, "items are permuted in place");

/* The items sorted by the key k (slots of them), stably and in place. */
static void count_permute(item *it, uint32_t n, size_t slots, const key_spec *k) {
    uint32_t *from = count_sort(it, n, slots, k);
    mp_permute_in_place(it, sizeof *it, from, n);
    mp_xfree(from);
}

/* The items into cmp_start's order (buffer, start, alloc) by counting
 * sorts: by alloc unless they were collected in that order (a graph with
 * control flow adds its footprints after), then by buffer and start.
 * False (nothing moved) when the keys are too wide for a count table. */
static bool sort_by_start(item *it, uint32_t n) {
    uint64_t max_buffer = 0, max_start = 0;
    int32_t min_alloc = 0, max_alloc = 0;
    bool in_alloc_order = true;
    for (uint32_t q = 0; q < n; q++) {
        if (it[q].start < 0) return false;
        in_alloc_order = in_alloc_order && (q == 0 || it[q].alloc >= it[q - 1].alloc);
        max_buffer = it[q].buffer > max_buffer ? it[q].buffer : max_buffer;
        max_start = (uint64_t)it[q].start > max_start ? (uint64_t)it[q].start : max_start;
        min_alloc = it[q].alloc < min_alloc ? it[q].alloc : min_alloc;
        max_alloc = it[q].alloc > max_alloc ? it[q].alloc : max_alloc;
    }
    size_t slots = count_slots(max_buffer, max_start, n);
    size_t alloc_slots = count_slots(0, (uint64_t)((int64_t)max_alloc - min_alloc), n);
    if (!slots || (!in_alloc_order && !alloc_slots)) return false;
    if (!in_alloc_order) count_permute(it, n, alloc_slots, &(key_spec){BY_ALLOC, 0, min_alloc});
    count_permute(it, n, slots, &(key_spec){BY_START, max_start + 1, 0});
    return true;
}

/* The items' ends in cmp_end's order (buffer, end, index). */
static ending *items_by_end(const item *it, uint32_t n) {
    ending *by_end = mp_xmalloc(((size_t)n + 1) * sizeof *by_end);
    uint64_t max_buffer = 0, max_end = 0;
    bool fits = true;
    for (uint32_t q = 0; q < n; q++) {
        fits = fits && it[q].end >= 0;
        max_buffer = it[q].buffer > max_buffer ? it[q].buffer : max_buffer;
        max_end = it[q].end > 0 && (uint64_t)it[q].end > max_end ? (uint64_t)it[q].end : max_end;
    }
    size_t slots = fits ? count_slots(max_buffer, max_end, n) : 0;
    if (slots) { /* stable: the index breaks ties */
        uint32_t *from = count_sort(it, n, slots, &(key_spec){BY_END, max_end + 1, 0});
        for (uint32_t q = 0; q < n; q++) by_end[q] = (ending){it[from[q]].end, from[q]};
        mp_xfree(from);
        return by_end;
    }
    ending_key *k = mp_xmalloc(((size_t)n + 1) * sizeof *k);
    for (uint32_t q = 0; q < n; q++) k[q] = (ending_key){it[q].buffer, it[q].end, q};
    qsort(k, n, sizeof *k, cmp_end);
    for (uint32_t q = 0; q < n; q++) by_end[q] = (ending){k[q].end, k[q].idx};
    mp_xfree(k);
    return by_end;
}

static void report_pair(vctx *c, int32_t gi, const extra *ex, const item *x, const item *y) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    const mp_graph_plan *gp = &c->plan->graphs[c->block_of[gi]];
    int32_t s = x->start > y->start ? x->start : y->start;
    int32_t e = x->end < y->end ? x->end : y->end;
    if (x->family < 0 || y->family < 0) {
        const item *f = x->family < 0 ? x : y, *t = x->family < 0 ? y : x;
        const char *name = gp->allocs[t->alloc].name;
        char who[MP_V_TENSOR_BUF];
        vdetail d = {name, NULL, (int64_t)t->buffer, {t->lo, t->hi}, {f->lo, f->hi}, 2,
                     f->start, f->start};
        mp_v_violation(c, g->name, MP_RULE_CONTROL_FLOW, "control-flow", &d,
                    "control-flow: node %d (%s) runs sub-graph %s, whose memory "
                    "[%llu,%llu) in buffer %llu overlaps %s [%llu,%llu), live at node %d",
                    f->start, mp_node_kind_name(g->nodes[f->start].kind),
                    c->prog->graphs[extra_of(ex, f)->sub].name, (unsigned long long)f->lo,
                    (unsigned long long)f->hi, (unsigned long long)f->buffer,
                    mp_v_tensor(g, &gp->allocs[t->alloc], who, sizeof who),
                    (unsigned long long)t->lo, (unsigned long long)t->hi, f->start);
        return;
    }
    const mp_alloc *a = &gp->allocs[x->alloc], *b = &gp->allocs[y->alloc];
    vdetail d = {a->name, b->name, (int64_t)x->buffer, {x->lo, x->hi}, {y->lo, y->hi}, 2, s, e};
    char ra[48], rb[48], wa[MP_V_TENSOR_BUF], wb[MP_V_TENSOR_BUF];
    mp_v_range(ra, sizeof ra, a->offset, a->size);
    mp_v_range(rb, sizeof rb, b->offset, b->size);
    mp_v_violation(c, g->name, MP_RULE_OVERLAP, "overlap", &d,
                   "overlap: %s %s and %s %s in buffer %llu, both live at nodes %d..%d",
                   mp_v_tensor(g, a, wa, sizeof wa), ra, mp_v_tensor(g, b, wb, sizeof wb), rb,
                   (unsigned long long)x->buffer, s, e);
}

/* The usable alloc of tensor t in graph gi's block, or -1 (a duplicate
 * alloc is never usable: verify.c maps each tensor to its first). */
static int32_t alloc_of(const vctx *c, int32_t gi, int32_t t) {
    if (c->block_of[gi] < 0) return -1;
    int32_t a = c->alloc_of[gi][t];
    return a >= 0 && c->usable[gi][a] ? a : -1;
}

/* Result r of cond node n, live to e, is value v of branch b: its bytes. */
static void escape_value(vctx *c, int32_t gi, const fprint *fp, items *L, uint32_t n,
                         int32_t r, int32_t e, int32_t b, int32_t v) {
    const mp_graphdef *bg = &c->prog->graphs[b];
    const mp_tensor *t = &bg->tensors[v];
    item x = {0, 0, 0, (int32_t)n + 1, e, 0, -1}; /* the cond: start - 1 */
    extra more = {b, r, -1};
    if (t->def_node >= 0 && bg->nodes[t->def_node].kind == MP_NODE_PLACEHOLDER) {
        const mp_node *nd = &c->prog->graphs[gi].nodes[n];
        int32_t a = c->prog->graphs[gi].tensors[nd->in[1 + t->def_node]].root;
        int32_t k = alloc_of(c, gi, a);
        const mp_alloc *al = k >= 0 ? &c->plan->graphs[c->block_of[gi]].allocs[k] : NULL;
        if (!al || !al->size) return; /* not planned here: the caller's, live throughout */
        x.buffer = al->mem_id, x.lo = al->offset, x.alloc = k;
        more.sub = -1, more.aliased = c->vg[gi].family[a];
        if (!mp_add_u64(al->offset, al->size, &x.hi)) x.hi = UINT64_MAX;
        push_special(L, x, true, more);
        return;
    }
    if (t->flags & (MP_T_CONST | MP_T_DYNAMIC)) return;
    if (t->def_node >= 0 && bg->nodes[t->def_node].kind == MP_NODE_COND) {
        /* a nested cond's result: somewhere in the branch's memory */
        for (uint32_t j = 0; j < fp[b].n; j++) {
            x.buffer = fp[b].s[j].buffer, x.lo = fp[b].s[j].lo, x.hi = fp[b].s[j].hi;
            push_special(L, x, true, more);
        }
        return;
    }
    int32_t k = alloc_of(c, b, v);
    if (k < 0 || !c->plan->graphs[c->block_of[b]].allocs[k].size) return; /* completeness says */
    const mp_alloc *al = &c->plan->graphs[c->block_of[b]].allocs[k];
    x.buffer = al->mem_id, x.lo = al->offset, x.alloc = k;
    if (!mp_add_u64(al->offset, al->size, &x.hi)) x.hi = UINT64_MAX;
    push_special(L, x, true, more);
}

/* Escape items of graph gi's conds (core/escape.c says when a result lives
 * in its branch's memory). */
typedef struct escape_ctx {
    vctx *c;
    int32_t gi;
    const fprint *fp;
    items *L;
} escape_ctx;

static void add_escape(void *ctx, uint32_t k, uint32_t i, int32_t r, int32_t e, int32_t branch, int32_t v) {
    escape_ctx *x = ctx;
    (void)i;
    escape_value(x->c, x->gi, x->fp, x->L, k, r, e, branch, v);
}

static void escape_items(vctx *c, int32_t gi, const fprint *fp, items *L) {
    escape_ctx x = {c, gi, fp, L};
    mp_v_escapes(c, gi, add_escape, &x);
}

/* Alloc a's item in graph gi (a usable, sized root that some node names),
 * or false when it has none. */
static bool alloc_item(const vctx *c, int32_t gi, uint32_t a, item *out) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    const mp_alloc *x = &c->plan->graphs[c->block_of[gi]].allocs[a];
    const vgraph *vg = &c->vg[gi];
    uint64_t end;
    if (!c->usable[gi][a] || !x->size) return false;
    int32_t t = x->tensor;
    if (g->tensors[t].root != t || vg->first[t] < 0) return false;
    if (!mp_add_u64(x->offset, x->size, &end)) end = UINT64_MAX;
    *out = (item){x->mem_id, x->offset, end, vg->first[t], vg->last[t], vg->family[t], (int32_t)a};
    return true;
}

static void collect_items(vctx *c, int32_t gi, const fprint *fp, items *L) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    const mp_graph_plan *gp = &c->plan->graphs[c->block_of[gi]];
    L->cap = gp->n_allocs + 16;
    L->v = mp_xmalloc(L->cap * sizeof *L->v);
    for (uint32_t a = 0; a < gp->n_allocs; a++) {
        item i;
        if (alloc_item(c, gi, a, &i)) MP_VEC_PUSH(L->v, L->n, L->cap, i);
    }
    for (uint32_t i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < 2; k++) {
            int32_t s = g->nodes[i].sub[k];
            if (s < 0 || (k == 1 && s == g->nodes[i].sub[0])) continue; /* one graph, both branches */
            for (uint32_t j = 0; j < fp[s].n; j++) {
                item f = {fp[s].s[j].buffer, fp[s].s[j].lo, fp[s].s[j].hi, (int32_t)i, (int32_t)i, 0, (int32_t)i};
                push_special(L, f, false, (extra){s, -1, -1});
            }
        }
    escape_items(c, gi, fp, L);
}

static bool runs_sub_graphs(const mp_graphdef *g) {
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].sub[0] >= 0 || g->nodes[i].sub[1] >= 0) return true;
    return false;
}

#define NO_KEY UINT64_MAX

/* Per alloc, its item's key buffer * (max_start + 1) + start, or NO_KEY;
 * the number of items.  False when the keys are too wide to count. */
static bool start_keys(const vctx *c, int32_t gi, uint64_t *key, uint32_t n_allocs, uint32_t *n,
                       size_t *slots) {
    uint64_t max_buffer = 0, max_start = 0;
    *n = 0;
    for (uint32_t a = 0; a < n_allocs; a++) {
        item x;
        if (!alloc_item(c, gi, a, &x)) {
            key[a] = NO_KEY;
            continue;
        }
        (*n)++;
        key[a] = x.buffer; /* the start is added once max_start is known */
        max_buffer = x.buffer > max_buffer ? x.buffer : max_buffer;
        max_start = (uint64_t)x.start > max_start ? (uint64_t)x.start : max_start;
    }
    *slots = count_slots(max_buffer, max_start, *n);
    if (!*slots) return false;
    const mp_alloc *al = c->plan->graphs[c->block_of[gi]].allocs;
    for (uint32_t a = 0; a < n_allocs; a++)
        if (key[a] != NO_KEY) key[a] = key[a] * (max_start + 1) + (uint64_t)c->vg[gi].first[al[a].tensor];
    return true;
}

/* A graph without control flow has only its allocs' items: they are
 * built straight into cmp_start's order (buffer, start, alloc) by a
 * counting sort of their keys.  Sorting 56-byte items after collecting
 * them moved each along a chain of cache misses, at 10^7 allocations a
 * tenth of a verify; here the items are read in any order, independently.
 * False (nothing built) when the graph runs sub-graphs or the keys are too
 * wide for a count table. */
static bool collect_in_order(vctx *c, int32_t gi, item **out, uint32_t *n_out) {
    if (runs_sub_graphs(&c->prog->graphs[gi])) return false;
    uint32_t n_allocs = c->plan->graphs[c->block_of[gi]].n_allocs, n;
    uint64_t *key = mp_xmalloc(((size_t)n_allocs + 1) * sizeof *key);
    size_t slots;
    if (!start_keys(c, gi, key, n_allocs, &n, &slots)) {
        mp_xfree(key);
        return false;
    }
    uint32_t *count = mp_xcalloc(slots + 1, sizeof *count);
    for (uint32_t a = 0; a < n_allocs; a++)
        if (key[a] != NO_KEY) count[key[a] + 1]++;
    for (size_t j = 1; j <= slots; j++) count[j] += count[j - 1];
    /* each item read in alloc order and written to its place (ascending a:
     * ties stay in alloc order): reading them in sorted order instead went
     * to the alloc, its tensor and three per-tensor arrays at random, at
     * 10^7 allocations the costliest part of a verify */
    item *it = mp_xmalloc(((size_t)n + 1) * sizeof *it);
    for (uint32_t a = 0; a < n_allocs; a++)
        if (key[a] != NO_KEY) (void)alloc_item(c, gi, a, &it[count[key[a]]++]);
    mp_xfree(count);
    mp_xfree(key);
    *out = it;
    *n_out = n;
    return true;
}

/* Whether items x and y, live at a common node and sharing bytes, clash. */
static bool clash(const vctx *c, int32_t gi, const extra *ex, const item *x, const item *y) {
    if (is_escape(x) && is_escape(y)) return false; /* both only read */
    if (is_footprint(x) && is_footprint(y)) return false; /* never live together */
    if (is_escape(x) || is_escape(y)) {
        const item *e = is_escape(x) ? x : y, *o = is_escape(x) ? y : x;
        if (is_footprint(o)) return true;
        if (o->family == extra_of(ex, e)->aliased) return false; /* the operand it is */
        const mp_graphdef *g = &c->prog->graphs[gi];
        const mp_tensor *t = &g->tensors[c->plan->graphs[c->block_of[gi]].allocs[o->alloc].tensor];
        return t->def_node < 0 || g->nodes[t->def_node].kind != MP_NODE_COND; /* dead slots */
    }
    return x->family < 0 || y->family < 0 || x->family != y->family;
}

/* An escape item e met by item o: a cond's result overwritten. */
static void report_escape(vctx *c, int32_t gi, const extra *ex, const item *e, const item *o) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    const mp_graph_plan *gp = &c->plan->graphs[c->block_of[gi]];
    int32_t n = e->start - 1, sub = extra_of(ex, e)->sub;
    const char *res = g->tensors[extra_of(ex, e)->result].name;
    char what[MP_V_TENSOR_BUF + 96], who[MP_V_TENSOR_BUF + 96];
    if (sub < 0)
        snprintf(what, sizeof what, "is its operand %s, whose bytes", gp->allocs[e->alloc].name);
    else if (e->alloc >= 0)
        snprintf(what, sizeof what, "is %s of branch %s, whose bytes",
                 c->plan->graphs[c->block_of[sub]].allocs[e->alloc].name, c->prog->graphs[sub].name);
    else
        snprintf(what, sizeof what, "lives in the memory of branch %s, whose bytes", c->prog->graphs[sub].name);
    vdetail d = {res, NULL, (int64_t)e->buffer, {e->lo, e->hi}, {o->lo, o->hi}, 2, o->start, e->end};
    if (is_footprint(o))
        snprintf(who, sizeof who, "node %d (%s) runs sub-graph %s over them", o->start,
                 mp_node_kind_name(g->nodes[o->start].kind), c->prog->graphs[extra_of(ex, o)->sub].name);
    else {
        char t[MP_V_TENSOR_BUF], r[48];
        mp_v_range(r, sizeof r, gp->allocs[o->alloc].offset, gp->allocs[o->alloc].size);
        snprintf(who, sizeof who, "%s %s, live at nodes %d..%d,",
                 mp_v_tensor(g, &gp->allocs[o->alloc], t, sizeof t), r, o->start, o->end);
    }
    mp_v_violation(c, g->name, MP_RULE_CONTROL_FLOW, "control-flow", &d,
                   "control-flow: the result %s of cond node %d %s [%llu,%llu) in buffer %llu "
                   "must stay as they are until node %d (ExecuTorch moves the branch's value "
                   "into the result), but %s%s", res, n, what, (unsigned long long)e->lo,
                   (unsigned long long)e->hi, (unsigned long long)e->buffer, e->end,
                   who, is_footprint(o) ? "" : " overlaps them");
}

/* The tree's sweep of one buffer's items it[b..run_end) (and their ends
 * at the same positions of by_end): each item checked against the live
 * ones it touches, then added. */
static void sweep_run(vctx *c, int32_t gi, const items *L, const ending *by_end, uint32_t b,
                      uint32_t run_end, uint32_t *hits) {
    const item *it = L->v;
    v_itree *tree = mp_v_itree_new();
    for (uint32_t i = b, e = b; i < run_end; i++) {
        const item *x = &it[i];
        /* retire what ended before this start (all inserted already) */
        while (e < run_end && by_end[e].end < x->start) {
            mp_v_itree_remove(tree, it[by_end[e].idx].lo, by_end[e].idx);
            e++;
        }
        uint32_t k = mp_v_itree_query(tree, x->lo, x->hi, hits, MAX_HITS), reported = 0;
        for (uint32_t h = 0; h < k && reported < MAX_REPORT; h++) {
            const item *y = &it[hits[h]];
            if (!clash(c, gi, L->x, x, y)) continue;
            if (is_escape(x) || is_escape(y))
                report_escape(c, gi, L->x, is_escape(x) ? x : y, is_escape(x) ? y : x);
            else
                report_pair(c, gi, L->x, y, x);
            reported++;
        }
        mp_v_itree_insert(tree, x->lo, x->hi, i);
    }
    mp_v_itree_free(tree);
}

/* Buffer run it[b..end) checked: by the fast path when it takes the run,
 * else (or when two items meet) by the tree. */
static void check_run(vctx *c, int32_t gi, const items *L, const ending *by_end, uint32_t b,
                      uint32_t end, uint32_t *hits) {
    v_ranks r; /* ranked after the ends are listed: their count sort and this
                * one's are not held at once (at 10^7 the verifier's peak) */
    bool clean = mp_v_offset_ranks(L->v + b, end - b, &r) &&
                 mp_v_sweep_disjoint(L->v + b, end - b, by_end + b, b, &r);
    mp_v_ranks_free(&r);
    if (!clean) sweep_run(c, gi, L, by_end, b, end, hits);
}

static void sweep_graph(vctx *c, int32_t gi, const fprint *fp) {
    items L = {0};
    if (!collect_in_order(c, gi, &L.v, &L.n)) {
        collect_items(c, gi, fp, &L);
        if (!sort_by_start(L.v, L.n)) qsort(L.v, L.n, sizeof *L.v, cmp_start);
    }
    ending *by_end = items_by_end(L.v, L.n);
    uint32_t *hits = mp_xmalloc(MAX_HITS * sizeof *hits);
    for (uint32_t b = 0, end; b < L.n; b = end) { /* a run of items per buffer */
        for (end = b + 1; end < L.n && L.v[end].buffer == L.v[b].buffer;) end++;
        check_run(c, gi, &L, by_end, b, end, hits);
    }
    mp_xfree(hits);
    mp_xfree(by_end);
    mp_xfree(L.v);
    mp_xfree(L.x);
}

/* Per graph, 1 when some node runs it: only those footprints are read
 * (the entry graph's would be every allocation of the plan, merged). */
static uint8_t *sub_graphs(const mp_program *prog) {
    uint8_t *is_sub = mp_xcalloc(prog->n_graphs + 1, 1);
    for (uint32_t gi = 0; gi < prog->n_graphs; gi++)
        for (uint32_t i = 0; i < prog->graphs[gi].n_nodes; i++)
            for (int k = 0; k < 2; k++)
                if (prog->graphs[gi].nodes[i].sub[k] >= 0) is_sub[prog->graphs[gi].nodes[i].sub[k]] = 1;
    return is_sub;
}

void mp_v_rules_overlap(vctx *c) {
    uint32_t n;
    int32_t *order = mp_v_postorder_of(c, &n);
    fprint *fp = mp_xcalloc(c->prog->n_graphs + 1, sizeof *fp);
    uint8_t *is_sub = sub_graphs(c->prog);
    uint32_t *added = mp_xcalloc(c->prog->n_graphs + 1, sizeof *added);
    for (uint32_t k = 0; k < n; k++)
        if (is_sub[order[k]]) build_footprint(c, order[k], fp, added);
    mp_xfree(is_sub);
    mp_xfree(added);
    for (uint32_t k = 0; k < n; k++)
        if (c->block_of[order[k]] >= 0) sweep_graph(c, order[k], fp);
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++) mp_xfree(fp[gi].s);
    mp_xfree(fp);
    mp_xfree(order);
}
