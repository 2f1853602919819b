/* layout.c - the optimized planner's layout of a program: one item list
 * per graph and buffer (an in-place family is one item at its root's
 * offset, live over the hull of its members; a control-flow node's
 * sub-graphs are one item live at that node alone, as large as the largest
 * of them), packed by pack.c; and where the effort goes.  Sub-graphs first
 * get a quick layout, and full effort goes where it can lower the total:
 * most sub-graphs of a large program sit where their size does not decide
 * the peak. */
#include "opt_internal.h"

/* Which part of a node's sub-graph block an item is (split.c). */
enum part { WHOLE, REST, ESCAPES };

/* What a sub-graph's size is read as: as laid out, its bound with its own
 * sub-graphs at theirs (hlb), its true bound (tlb). */
enum need { LAID, HLB, TLB };

/* Bytes the sub-graphs of node `n` need in buffer b for `part` (0 when
 * none), read as `bound` says.  A branch's escaping values take local -
 * split bytes, for its whole life, so they are in its bounds too. */
static uint64_t node_need(const octx *c, const mp_node *nd, uint32_t b, enum need bound, enum part part) {
    uint64_t need = 0;
    for (int s = 0; s < 2; s++) {
        int32_t sg = nd->sub[s];
        if (sg < 0 || b >= c->g[sg].n_buf) continue;
        const ograph *S = &c->g[sg];
        uint64_t esc = S->esc ? S->local[b] - S->split[b] : 0;
        uint64_t v = bound == TLB ? S->tlb[b] : bound == HLB ? S->hlb[b] : S->local[b];
        if (part == REST) v = v > esc ? v - esc : 0;
        if (part == ESCAPES) v = esc;
        v = mp_align_up(v, c->o->alignment);
        if (v > need) need = v;
    }
    return need;
}

/* Node i's part of a block as an item's who (-(i + 1) for the whole block
 * or its rest, below -n_nodes for its escaping values), and back. */
static int32_t block_who(const mp_graphdef *g, uint32_t i, enum part part) {
    return -(int32_t)(part == ESCAPES ? g->n_nodes + i : i) - 1;
}
static uint32_t who_node(const mp_graphdef *g, int32_t who, bool *escapes) {
    uint32_t k = (uint32_t)(-(who + 1));
    *escapes = k >= g->n_nodes;
    return *escapes ? k - g->n_nodes : k;
}

typedef struct itemv {
    pk_item *v;
    size_t n, cap;
    int32_t *who; /* family root tensor, or -(node + 1) for a sub-graph item */
    size_t wcap;
} itemv;

static void push_item(itemv *iv, pk_item it, int32_t who) {
    MP_VEC_PUSH(iv->v, iv->n, iv->cap, it);
    size_t n = iv->n - 1;
    MP_VEC_PUSH(iv->who, n, iv->wcap, who);
}

/* Whether every item of a packed layout ends within 64 bits.  The packer's
 * tops saturate at UINT64_MAX, so a peak of UINT64_MAX is either a layout
 * that ends exactly at 2^64 - 1 (valid) or one past 64 bits; only the items
 * tell them apart: an overflowing top leaves an item whose end overflows. */
static bool layout_fits(const pk_item *items, size_t n) {
    for (size_t k = 0; k < n; k++) {
        uint64_t end;
        if (!mp_add_u64(items[k].offset, items[k].size, &end)) return false;
    }
    return true;
}

/* The live-bytes bounds of a buffer's items: lb with the sub-graph items
 * as laid out, hlb with each at its sub-graph's own bound (no layout of
 * the sub-graphs can do better), tlb with each at its sub-graph's tlb and
 * live at its node alone (nor can splitting cond blocks: a plan at tlb is
 * optimal, opt.c's try_split); `hot` marks the nodes whose sub-graph item
 * is live where lb is reached (shrinking it may lower the bound).
 * Sums past 64 bits give no bound: hlb 0 and every node hot. */
static void buffer_bounds(const octx *c, uint32_t gi, uint32_t b, const itemv *iv, uint64_t pad,
                          uint64_t lower, uint8_t *hot) {
    ograph *G = &c->g[gi];
    const mp_graphdef *g = &c->prog->graphs[gi];
    uint32_t nn = g->n_nodes;
    bool blocks = false;
    for (size_t k = 0; k < iv->n && !blocks; k++) blocks = iv->who[k] < 0 && iv->who[k] != INT32_MIN;
    if (!blocks) { /* no sub-graph item: both bounds are the packer's own */
        uint64_t sum = 0;
        bool wrapped = false;
        for (size_t k = 0; k < iv->n; k++) wrapped |= !mp_add_u64(sum, iv->v[k].size, &sum);
        G->lb[b] = G->hlb[b] = G->tlb[b] = wrapped ? 0 : mp_sat_add_u64(lower, pad);
        if (hot) memset(hot, wrapped, nn);
        return;
    }
    uint64_t small[3 * 18] = {0}; /* a small sub-graph's three difference arrays */
    uint64_t *d = nn <= 16 ? small : mp_xcalloc(3 * ((size_t)nn + 2), sizeof *d), *dh = d + nn + 2, *dt = dh + nn + 2,
             sum = 0;
    bool wrapped = false;
    for (size_t k = 0; k < iv->n; k++) {
        const pk_item *it = &iv->v[k];
        uint64_t sz = it->size, szh = sz, szt = sz;
        bool block = false;
        if (iv->who[k] < 0 && iv->who[k] != INT32_MIN) {
            bool esc;
            uint32_t i = who_node(g, iv->who[k], &esc);
            enum part part = esc ? ESCAPES : mp_opt_node_splits(c, gi, i) ? REST : WHOLE;
            szh = node_need(c, &g->nodes[i], b, HLB, part);
            szt = node_need(c, &g->nodes[i], b, TLB, part);
            block = true;
        }
        wrapped |= !mp_add_u64(sum, sz, &sum);
        d[it->start] += sz, d[it->end + 1] -= sz;
        dh[it->start] += szh, dh[it->end + 1] -= szh;
        dt[it->start] += szt, dt[(block ? it->start : it->end) + 1] -= szt;
    }
    uint64_t live = 0, liveh = 0, livet = 0, lb = 0, hlb = 0, tlb = 0;
    for (uint32_t t = 0; t <= nn; t++) {
        live += d[t], liveh += dh[t], livet += dt[t];
        if (live > lb) lb = live;
        if (liveh > hlb) hlb = liveh;
        if (livet > tlb) tlb = livet;
    }
    live = 0;
    for (uint32_t t = 0; hot && t < nn; t++) {
        live += d[t];
        hot[t] = wrapped || live == lb;
    }
    G->lb[b] = wrapped ? 0 : mp_sat_add_u64(lb, pad);
    G->hlb[b] = wrapped ? 0 : mp_sat_add_u64(hlb, pad);
    G->tlb[b] = wrapped ? 0 : mp_sat_add_u64(tlb, pad);
    if (d != small) mp_xfree(d);
}

/* Graph G's own specs of buffer b are G->buf_specs[*from, *to) (none for a
 * buffer only its sub-graphs use). */
static void buf_range(const ograph *G, uint32_t b, uint32_t *from, uint32_t *to) {
    *from = b < G->n_own_buf ? G->buf_start[b] : 0;
    *to = b < G->n_own_buf ? G->buf_start[b + 1] : 0;
}

/* Buffer b's items of graph gi: one per in-place family (at its root's
 * aligned size, live over the hull of its members) and one per node whose
 * sub-graphs need bytes here (tree), or one reservation at 0 for the
 * graph's whole life (shared sub-graphs).  *own: the graph plans a
 * tensor of its own in b. */
static void collect_items(const octx *c, uint32_t gi, uint32_t b, itemv *iv, bool *own) {
    const ograph *G = &c->g[gi];
    const mp_graphdef *g = &c->prog->graphs[gi];
    int32_t *slot = G->slot; /* -1 everywhere between calls */
    uint32_t from, to;
    buf_range(G, b, &from, &to);
    *own = false;
    for (uint32_t k = from; k < to; k++) { /* one item per family */
        int32_t t = (int32_t)G->buf_specs[k], r = G->family[t];
        *own = true;
        /* an operand a cond result aliases keeps its bytes as long (D14) */
        int32_t s0 = G->life.start[t], e0 = G->keep.tensor_end[t];
        if (slot[r] < 0) {
            slot[r] = (int32_t)iv->n;
            /* a pinned tensor is its family's root (the format allows no at=
             * on an in-place or view tensor), entry graph only */
            const mp_tensor *rt = &g->tensors[r];
            bool pin = gi == 0 && (rt->flags & MP_T_PINNED);
            push_item(iv, (pk_item){G->asize[r], s0, e0, pin, pin ? rt->at : 0}, r);
        }
        pk_item *it = &iv->v[slot[r]];
        if (s0 < it->start) it->start = s0;
        if (e0 > it->end) it->end = e0;
    }
    for (uint32_t k = from; k < to; k++) slot[G->family[G->buf_specs[k]]] = -1;
    uint64_t reserve = 0;
    for (uint32_t j = 0; j < G->n_cf; j++) {
        uint32_t i = G->cf_nodes[j];
        uint64_t need = node_need(c, &g->nodes[i], b, LAID, WHOLE);
        if (!need) continue;
        /* a cond's results live in its branches' memory until their last
         * use: the block, or its escaping part, stays that long (D14) */
        int32_t until = G->keep.node_end[i] > (int32_t)i ? G->keep.node_end[i] : (int32_t)i;
        if (!c->tree) {
            if (need > reserve) reserve = need;
        } else if (mp_opt_node_splits(c, gi, i)) {
            uint64_t esc = node_need(c, &g->nodes[i], b, LAID, ESCAPES);
            push_item(iv, (pk_item){node_need(c, &g->nodes[i], b, LAID, REST), (int32_t)i, (int32_t)i, false, 0},
                      block_who(g, i, REST));
            if (esc) push_item(iv, (pk_item){esc, (int32_t)i, until, false, 0}, block_who(g, i, ESCAPES));
        } else {
            push_item(iv, (pk_item){need, (int32_t)i, until, false, 0}, block_who(g, i, WHOLE));
        }
    }
    if (reserve) /* shared sub-graphs: ExecuTorch's reservation at 0 */
        push_item(iv, (pk_item){reserve, 0, (int32_t)g->n_nodes - 1, true, 0}, INT32_MIN);
}

/* collect_items into arrays sized for them: at most one item per planned
 * tensor of b and one per control-flow node (the caller frees both). */
static itemv gather_items(const octx *c, uint32_t gi, uint32_t b, bool *own) {
    uint32_t from, to;
    buf_range(&c->g[gi], b, &from, &to);
    size_t most = (size_t)(to - from) + c->g[gi].n_cf + 2;
    itemv iv = {mp_xmalloc(most * sizeof *iv.v), 0, most, mp_xmalloc(most * sizeof *iv.who), most};
    collect_items(c, gi, b, &iv, own);
    return iv;
}

/* Node i of a graph whose nodes carry span= covers time units [T(i),
 * T(i+1)) (G->time); an item over nodes s..e covers T(s) .. T(e+1) - 1.
 * The map is increasing, so it keeps every overlap, and it gives lifetimes
 * their real lengths, which the packer's orderings weigh (an imported
 * CSV's nodes are its distinct times: without the gaps between them its
 * widths would be ranks).  Returns the items in time units, or NULL: no
 * times, no items, or an item outside the graph's nodes. */
static pk_item *timed_items(const ograph *G, const mp_graphdef *g, const itemv *iv) {
    const uint64_t *t = G->time;
    bool fits = t && iv->n;
    for (size_t k = 0; k < iv->n && fits; k++)
        fits = iv->v[k].start >= 0 && iv->v[k].start <= iv->v[k].end && iv->v[k].end < (int32_t)g->n_nodes;
    pk_item *v = fits ? mp_xmalloc((iv->n + 1) * sizeof *v) : NULL;
    for (size_t k = 0; v && k < iv->n; k++) {
        v[k] = iv->v[k];
        v[k].start = (int32_t)t[iv->v[k].start];
        v[k].end = (int32_t)(t[iv->v[k].end + 1] - 1);
    }
    return v;
}

/* Pack the items (opt's packer or the peer's); returns the peak. */
static uint64_t pack_items(octx *c, itemv *iv, bool quick, pk_stats *st) {
    if (!iv->n) { /* an empty buffer (a program with 1,024 pools has many): what the packer would say */
        memset(st, 0, sizeof *st);
        st->outcome = c->o->exact && !quick ? PK_X_AT_BOUND : PK_X_NOT_ASKED;
        st->optimal = true;
        return 0;
    }
    if (c->pack) { /* a peer planner: its packer, and the bound for the effort rules */
        memset(st, 0, sizeof *st);
        st->lower_bound = mp_pk_lower_bound(iv->v, (uint32_t)iv->n);
        return c->pack(iv->v, (uint32_t)iv->n);
    }
    uint64_t share = c->total_items ? c->work_total * iv->n / c->total_items : 0;
    /* bottom-up runs cost n sqrt(n) a buffer: all of them in programs of
     * up to 2^17 planned tensors, fewer in larger ones, at least one (mixed
     * graphs of 10^6 tensors hold dozens of dense buffers of 10^4+ items) */
    uint64_t bu = c->total_specs <= (UINT64_C(1) << 17)
                      ? PK_BOTTOM_UP_RUNS
                      : PK_BOTTOM_UP_RUNS * (UINT64_C(1) << 17) / c->total_specs;
    pk_params prm = {share < 4000 ? 4000 : share, c->o->exact,
                     (uint64_t)c->o->exact_ms * PK_EXACT_WORK_PER_MS, bu ? (uint32_t)bu : 1, quick};
    return mp_pk_solve(iv->v, (uint32_t)iv->n, &prm, st);
}

/* The packed offsets back to the graph: each family's root, each node's
 * sub-graph block; members sit at their root, offset= above it. */
static void store_offsets(const octx *c, uint32_t gi, uint32_t b, const itemv *iv) {
    ograph *G = &c->g[gi];
    /* a node whose sub-graphs need nothing here now has no item: its block
     * starts at 0, not where an earlier layout put it (sub-graphs moved to
     * another bank keep their zero-size tensors here) */
    const mp_graphdef *g = &c->prog->graphs[gi];
    for (uint32_t j = 0; j < G->n_cf; j++)
        if (G->block[G->cf_nodes[j]]) G->block[G->cf_nodes[j]][b] = G->block[G->cf_nodes[j]][G->n_buf + 1 + b] = 0;
    for (size_t k = 0; k < iv->n; k++) {
        int32_t who = iv->who[k];
        if (who == INT32_MIN) continue;
        if (who >= 0) {
            G->loff[who] = iv->v[k].offset;
        } else {
            bool esc;
            uint32_t node = who_node(g, who, &esc);
            if (!G->block[node]) G->block[node] = mp_og_alloc(G, 2 * (G->n_buf + 1) * sizeof(uint64_t), true);
            G->block[node][esc ? G->n_buf + 1 + b : b] = iv->v[k].offset;
        }
    }
    uint32_t from, to;
    buf_range(G, b, &from, &to);
    for (uint32_t k = from; k < to; k++) {
        uint32_t t = G->buf_specs[k];
        G->loff[t] = G->loff[G->family[t]] + (G->shift ? G->shift[t] : 0);
    }
}

/* Why the exact search of a buffer ended, for the user. */
static const char *const EXACT_WHY[] = {
    [PK_X_NOT_ASKED] = "not searched",
    [PK_X_AT_BOUND] = "the heuristics reached the lower bound",
    [PK_X_PROVED] = "proved by the search",
    [PK_X_BUDGET] = "stopped at the --exact-ms work limit",
    [PK_X_TOO_LARGE] = "not attempted: the buffer is over the search's size limit",
    [PK_X_WIDE] = "not attempted: its sizes sum past 64 bits",
};

/* One line per buffer the search worked on or could not attempt, and the
 * counts for the closing line. */
static void exact_note(octx *c, const char *graph, uint32_t b, uint64_t peak, const pk_stats *st) {
    c->exact_outcomes[st->outcome]++;
    bool proved = st->outcome == PK_X_AT_BOUND || st->outcome == PK_X_PROVED;
    if (!proved) {
        c->exact_best = mp_sat_add_u64(c->exact_best, peak);
        c->exact_bound = mp_sat_add_u64(c->exact_bound, st->proved_bound);
    }
    if (st->outcome == PK_X_AT_BOUND) return;
    mp_buf_printf(&c->notes, "exact: graph %s buffer %u: %s %llu bytes, lower bound %llu: %s\n", graph, b,
                  proved ? "optimal" : "best", (unsigned long long)peak, (unsigned long long)st->proved_bound,
                  EXACT_WHY[st->outcome]);
}

void mp_opt_exact_status(octx *c) {
    const uint32_t *k = c->exact_outcomes;
    uint32_t proved = k[PK_X_AT_BOUND] + k[PK_X_PROVED], open = k[PK_X_BUDGET] + k[PK_X_TOO_LARGE] + k[PK_X_WIDE];
    if (!open) {
        mp_buf_printf(&c->notes, "exact: proved optimal: %u buffer%s (%u at the lower bound, %u by the search)\n",
                      proved, proved == 1 ? "" : "s", k[PK_X_AT_BOUND], k[PK_X_PROVED]);
        return;
    }
    uint64_t gap = c->exact_best - c->exact_bound;
    mp_buf_printf(&c->notes, "exact: not proved optimal: %u of %u buffers open: best %llu bytes, lower bound %llu, "
                  "gap %llu bytes (%.2f%%); stopped: %u at the --exact-ms limit, %u over the size limit, "
                  "%u past 64 bits\n", open, open + proved, (unsigned long long)c->exact_best,
                  (unsigned long long)c->exact_bound, (unsigned long long)gap,
                  c->exact_bound ? 100.0 * (double)gap / (double)c->exact_bound : 0.0, k[PK_X_BUDGET],
                  k[PK_X_TOO_LARGE], k[PK_X_WIDE]);
}

/* The entry graph's fixed items of buffer b: each pin a multiple of the
 * alignment, and no two fixed regions (pins, the shared sub-graphs'
 * reservation at 0) sharing a byte while both live. */
static int check_pins(const octx *c, const itemv *iv) {
    const mp_program *prog = c->prog;
    mp_rect *r = mp_xmalloc((iv->n + 1) * sizeof *r);
    int32_t *who = mp_xmalloc((iv->n + 1) * sizeof *who);
    uint32_t n = 0, a, z;
    int rc = MP_OK;
    for (size_t k = 0; k < iv->n && rc == MP_OK; k++) {
        const pk_item *it = &iv->v[k];
        if (!it->fixed) continue;
        if (iv->who[k] >= 0 && it->offset % c->o->alignment)
            rc = mp_pin_error(prog, iv->who[k], c->err, "not a multiple of the alignment %u",
                              c->o->alignment);
        who[n] = iv->who[k];
        r[n++] = (mp_rect){it->start, it->end, it->offset, mp_sat_add_u64(it->offset, it->size)};
    }
    if (rc == MP_OK && mp_rects_overlap(r, n, &a, &z)) {
        if (who[a] < 0) a = z, z = 0; /* the reservation comes first: name the pin */
        const mp_tensor *o = who[z] >= 0 ? &prog->graphs[0].tensors[who[z]] : NULL;
        if (o)
            rc = mp_pin_error(prog, who[a], c->err, "bytes [%llu,%llu) overlap tensor '%s' (line %d), "
                              "pinned at [%llu,%llu), while both live (nodes %d..%d and %d..%d)",
                              (unsigned long long)r[a].lo, (unsigned long long)r[a].hi, o->name, o->line,
                              (unsigned long long)r[z].lo, (unsigned long long)r[z].hi, r[a].start,
                              r[a].end, r[z].start, r[z].end);
        else
            rc = mp_pin_error(prog, who[a], c->err, "bytes [%llu,%llu) overlap [0,%llu), which the "
                              "shared sub-graphs reserve for the whole graph",
                              (unsigned long long)r[a].lo, (unsigned long long)r[a].hi,
                              (unsigned long long)r[z].hi);
    }
    mp_xfree(r);
    mp_xfree(who);
    return rc;
}

/* A buffer's layout: its items, packed; the bytes from the graph's base;
 * where a branch's escaping values start (split.c; local when there are
 * none) and the bytes they take; the packer's peak and stats; whether it
 * fits in 64 bits. */
typedef struct form {
    itemv iv;
    uint64_t local, split, stack, peak;
    pk_stats st;
    bool fits;
} form;

/* f's items packed (in time units where the graph has them): f->peak,
 * f->st, f->local (the peak and the padding), f->fits. */
static void pack_form(octx *c, uint32_t gi, form *f, uint64_t pad, bool quick) {
    const ograph *G = &c->g[gi];
    const mp_graphdef *g = &c->prog->graphs[gi];
    pk_item *timed = timed_items(G, g, &f->iv), *node_items = f->iv.v;
    if (timed) f->iv.v = timed;
    f->peak = pack_items(c, &f->iv, quick, &f->st);
    if (timed) { /* the offsets back onto the items in node units */
        for (size_t k = 0; k < f->iv.n; k++) node_items[k].offset = timed[k].offset;
        f->iv.v = node_items;
        mp_xfree(timed);
    }
    f->fits = (f->peak != UINT64_MAX || layout_fits(f->iv.v, f->iv.n)) && mp_add_u64(f->peak, pad, &f->local);
    f->split = f->local;
    f->stack = 0;
}

/* The split form: the rest packed, a branch's escaping values stacked on
 * top of it from an aligned split, live throughout (the whole form, as
 * before, where b holds none of them). */
static void pack_split(octx *c, uint32_t gi, form *f, uint64_t pad, bool quick) {
    size_t n_all = f->iv.n;
    f->iv.n = mp_opt_escapes_last(&c->g[gi], f->iv.v, f->iv.who, n_all);
    pack_form(c, gi, f, pad, quick);
    if (f->fits && n_all > f->iv.n) {
        f->split = mp_align_up(f->local, c->o->alignment);
        f->stack = mp_opt_stack_escapes(f->iv.v, f->iv.n, n_all, f->split,
                                        (int32_t)c->prog->graphs[gi].n_nodes - 1);
        f->fits = f->split >= f->local && mp_add_u64(f->split, f->stack, &f->local);
    }
    f->iv.n = n_all;
}

static int layout_buffer(octx *c, uint32_t gi, uint32_t b, bool quick, uint8_t *hot) {
    ograph *G = &c->g[gi];
    const mp_graphdef *g = &c->prog->graphs[gi];
    bool own;
    itemv iv = gather_items(c, gi, b, &own);
    if (gi == 0 && c->pins) {
        int prc = check_pins(c, &iv);
        if (prc) {
            mp_xfree(iv.v);
            mp_xfree(iv.who);
            return prc;
        }
    }
    uint64_t pad = own && G->xnnpack ? 64 : 0;
    form f = {iv, 0, 0, 0, 0, {0}, false};
    if (G->esc) pack_split(c, gi, &f, pad, quick);
    else pack_form(c, gi, &f, pad, quick);
    iv = f.iv;
    if (c->o->exact) exact_note(c, g->name, b, f.peak, &f.st);
    int rc = MP_OK;
    G->local[b] = f.local;
    G->split[b] = f.split;
    if (!f.fits) rc = mp_err_limit(c->err, "graph '%s': buffer %u would not fit in 64 bits", g->name, b);
    if (c->tree) buffer_bounds(c, gi, b, &iv, pad, mp_sat_add_u64(f.st.lower_bound, f.stack), hot);
    G->full[b] = !quick;
    store_offsets(c, gi, b, &iv);
    mp_xfree(iv.v);
    mp_xfree(iv.who);
    return rc;
}

/* Graph gi's whole-block bounds of buffer b (hlb, tlb) as layout_buffer
 * sets them, without packing: the packer's lower bound is the live peak
 * of the same (timed) items.  Its laid-out size is taken as its hlb, so
 * that a parent bounded after it reads its block as present exactly when
 * a layout would (a layout is empty exactly when its bound is, sums below
 * 2^64: the caller checks).  Whole blocks only (no split marks). */
static void bound_buffer(octx *c, uint32_t gi, uint32_t b) {
    ograph *G = &c->g[gi];
    const mp_graphdef *g = &c->prog->graphs[gi];
    bool own;
    itemv iv = gather_items(c, gi, b, &own);
    pk_item *timed = timed_items(G, g, &iv);
    uint64_t lower = mp_pk_lower_bound(timed ? timed : iv.v, (uint32_t)iv.n);
    mp_xfree(timed);
    buffer_bounds(c, gi, b, &iv, own && G->xnnpack ? 64 : 0, lower, NULL);
    G->local[b] = G->split[b] = G->hlb[b];
    G->full[b] = false;
    mp_xfree(iv.v);
    mp_xfree(iv.who);
}

/* A graph's buffer count (its own and its sub-graphs'), children first. */
static void size_graph(octx *c, uint32_t gi) {
    ograph *G = &c->g[gi];
    const mp_graphdef *g = &c->prog->graphs[gi];
    uint32_t nb = 2;
    for (uint32_t i = 0; i < G->n_specs; i++)
        if ((uint32_t)G->bidx[G->specs[i]] + 1 > nb) nb = (uint32_t)G->bidx[G->specs[i]] + 1;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        for (int s = 0; s < 2; s++)
            if (g->nodes[i].sub[s] >= 0 && c->g[g->nodes[i].sub[s]].n_buf > nb)
                nb = c->g[g->nodes[i].sub[s]].n_buf;
    if (c->o->banks.n + 1 > nb) nb = c->o->banks.n + 1; /* every bank, even empty (sub-graphs move) */
    G->n_buf = nb;
    G->local = mp_og_alloc(G, (nb + 1) * sizeof *G->local, true);
    G->base = mp_og_alloc(G, (nb + 1) * sizeof *G->base, true);
    G->lb = mp_og_alloc(G, (nb + 1) * sizeof *G->lb, true);
    G->hlb = mp_og_alloc(G, (nb + 1) * sizeof *G->hlb, true);
    G->tlb = mp_og_alloc(G, (nb + 1) * sizeof *G->tlb, true);
    G->full = mp_og_alloc(G, nb + 1, true);
    G->split = mp_og_alloc(G, (nb + 1) * sizeof *G->split, true);
    G->ebase = mp_og_alloc(G, (nb + 1) * sizeof *G->ebase, true);
}

/* Rounds of re-layout a graph gets as its sub-graphs shrink. */
#define REFINE_ROUNDS 8

/* Whether node i's sub-graph item, live from i to the last use of a cond's
 * results (D14), is live where the bound is reached. */
static bool item_hot(const ograph *G, const uint8_t *hot, uint32_t i) {
    for (int32_t t = (int32_t)i; t <= G->keep.node_end[i] || t == (int32_t)i; t++)
        if (hot[t]) return true;
    return false;
}

/* Full effort for graph gi's buffer b, and for those of its sub-graphs
 * whose size can still matter: the layout reaches its live-bytes bound
 * (then only a sub-graph live where the bound is reached can lower it),
 * or it does not (then any sub-graph may).  A sub-graph at its own bound
 * has nothing to gain.  Each sub-graph shrunk, the graph is laid out
 * again. */
static int refine(octx *c, uint32_t gi, uint32_t b) {
    ograph *G = &c->g[gi];
    const mp_graphdef *g = &c->prog->graphs[gi];
    uint8_t *hot = mp_xcalloc(g->n_nodes + 1, 1);
    int rc = layout_buffer(c, gi, b, false, hot);
    for (int round = 0; rc == MP_OK && round < REFINE_ROUNDS && G->local[b] > G->hlb[b]; round++) {
        bool tight = G->local[b] == G->lb[b], shrunk = false;
        for (uint32_t j = 0; j < G->n_cf && rc == MP_OK; j++)
            for (int s = 0; s < 2 && rc == MP_OK; s++) {
                uint32_t i = G->cf_nodes[j];
                int32_t sg = g->nodes[i].sub[s];
                if (sg < 0 || (tight && !item_hot(G, hot, i)) || b >= c->g[sg].n_buf) continue;
                ograph *S = &c->g[sg];
                if (S->full[b] || S->local[b] <= S->hlb[b]) continue;
                uint64_t before = S->local[b];
                rc = refine(c, (uint32_t)sg, b);
                shrunk |= S->local[b] < before;
            }
        if (!shrunk) break;
        if (rc == MP_OK) rc = layout_buffer(c, gi, b, false, hot);
    }
    mp_xfree(hot);
    return rc;
}

/* Every graph laid out.  In a tree of graphs (lazy effort), sub-graphs
 * first get a quick layout each, then the entry is refined.  Shared
 * sub-graphs (reserved for the parent's whole life, so their size always
 * counts) and --exact (which proves each buffer on its own) get full effort
 * everywhere.  Buffers are independent: each is a tree problem of its own. */
static int layout_graphs(octx *c, const int32_t *order, uint32_t n, mp_opt_effort effort,
                         const uint8_t *only) {
    int rc = MP_OK;
    if (!c->tree || c->o->exact || effort == MP_OPT_FULL) {
        for (uint32_t k = 0; k < n && rc == MP_OK; k++)
            for (uint32_t b = 1; b < c->g[order[k]].n_buf && rc == MP_OK && (!only || only[order[k]]); b++)
                rc = layout_buffer(c, (uint32_t)order[k], b, false, NULL);
        return rc;
    }
    /* the entry (graph 0, last in children-first order) has every buffer */
    for (uint32_t b = 1; b < c->g[0].n_buf && rc == MP_OK; b++) {
        for (uint32_t k = 0; k + 1 < n && rc == MP_OK; k++)
            if (b < c->g[order[k]].n_buf && (!only || only[order[k]]))
                rc = layout_buffer(c, (uint32_t)order[k], b, true, NULL);
        if (rc != MP_OK) break;
        rc = effort == MP_OPT_QUICK ? layout_buffer(c, 0, b, false, NULL) : refine(c, 0, b);
    }
    return rc;
}

int mp_opt_layout_split(octx *c, const int32_t *order, uint32_t n, mp_opt_effort effort) {
    uint8_t *dirty = mp_opt_split_marks(c, order, n);
    int rc = layout_graphs(c, order, n, effort, dirty);
    mp_xfree(dirty);
    return rc;
}

int mp_opt_bound_graphs(octx *c, const int32_t *order, uint32_t n, const uint8_t *bounded) {
    int rc = MP_OK;
    for (uint32_t b = 1; b < c->g[0].n_buf && rc == MP_OK; b++)
        for (uint32_t k = 0; k < n && rc == MP_OK; k++) {
            uint32_t gi = (uint32_t)order[k];
            if (b >= c->g[gi].n_buf) continue;
            if (bounded[gi]) bound_buffer(c, gi, b);
            else rc = layout_buffer(c, gi, b, true, NULL);
        }
    return rc;
}

int mp_opt_layout_graphs(octx *c, const int32_t *order, uint32_t n, mp_opt_effort effort, const uint8_t *only) {
    return layout_graphs(c, order, n, effort, only);
}

/* Each of the entry's buffers refined (layout_graphs' lazy effort, after
 * its quick layouts): buffers are independent, so quick layouts of all of
 * them first and then the refinements give what layout_graphs gives. */
int mp_opt_refine_entry(octx *c) {
    int rc = MP_OK;
    for (uint32_t b = 1; b < c->g[0].n_buf && rc == MP_OK; b++) rc = refine(c, 0, b);
    return rc;
}

/* Sub-graph regions start at their node's item (tree), or at 0. */
static void place_bases(octx *c, const int32_t *order, uint32_t n) {
    for (uint32_t k = n; k-- > 0;) { /* parents before children */
        int32_t gi = order[k];
        const mp_graphdef *g = &c->prog->graphs[gi];
        const ograph *G = &c->g[gi];
        for (uint32_t i = 0; i < g->n_nodes; i++)
            for (int s = 0; s < 2; s++) {
                int32_t sg = g->nodes[i].sub[s];
                if (sg < 0) continue;
                ograph *S = &c->g[sg];
                bool at = c->tree && G->block[i];
                for (uint32_t b = 1; b < S->n_buf; b++) {
                    S->base[b] = at && b < G->n_buf ? G->base[b] + G->block[i][b] : 0;
                    /* escaping values sit at loff >= split: their region's
                     * start minus split, modulo 2^64 */
                    S->ebase[b] = at && b < G->n_buf && mp_opt_node_splits(c, (uint32_t)gi, i)
                                      ? G->base[b] + G->block[i][G->n_buf + 1 + b] - S->split[b]
                                      : S->base[b];
                }
            }
    }
}

void mp_opt_index_buffers(ograph *G, uint32_t nb) {
    mp_og_free(G, G->buf_start); /* again after a spill: an arena's stays until the plan ends */
    G->n_own_buf = nb;
    G->buf_start = mp_og_alloc(G, (nb + 2) * sizeof *G->buf_start, true);
    for (uint32_t i = 0; i < G->n_specs; i++) G->buf_start[G->bidx[G->specs[i]] + 1]++;
    for (uint32_t b = 0; b < nb; b++) G->buf_start[b + 1] += G->buf_start[b];
    uint32_t small[16]; /* most graphs use a few buffers */
    uint32_t *fill = nb < 16 ? small : mp_xmalloc((nb + 1) * sizeof *fill);
    memcpy(fill, G->buf_start, (nb + 1) * sizeof *fill);
    for (uint32_t i = 0; i < G->n_specs; i++) G->buf_specs[fill[G->bidx[G->specs[i]]]++] = G->specs[i];
    if (fill != small) mp_xfree(fill);
}

int mp_opt_layout_buffer(octx *c, uint32_t gi, uint32_t b) { return layout_buffer(c, gi, b, false, NULL); }

static int cmp_item_size(const void *a, const void *b) {
    const pk_item *x = a, *y = b;
    return (x->size < y->size) - (x->size > y->size);
}

void mp_opt_busiest(const octx *c, uint32_t b, mp_buf *out) {
    const mp_graphdef *g = &c->prog->graphs[0];
    bool own;
    itemv iv = gather_items(c, 0, b, &own);
    int32_t at = -1;
    uint64_t live = mp_pk_live_peak(iv.v, (uint32_t)iv.n, &at);
    size_t n = 0;
    for (size_t k = 0; k < iv.n; k++) /* the items live at `at`, their who in .start */
        if (iv.v[k].size && iv.v[k].start <= at && at <= iv.v[k].end)
            iv.v[n++] = (pk_item){iv.v[k].size, iv.who[k], 0, false, 0};
    qsort(iv.v, n, sizeof *iv.v, cmp_item_size);
    mp_buf_printf(out, "%llu bytes live at node %d", (unsigned long long)live, at);
    if (at >= 0 && at < (int32_t)g->n_nodes && g->nodes[at].op) mp_buf_printf(out, " (%s)", g->nodes[at].op);
    for (size_t k = 0; k < n && k < 4; k++) {
        int32_t who = iv.v[k].start;
        if (who >= 0) mp_buf_printf(out, "%s %s %llu", k ? "," : ":", g->tensors[who].name, (unsigned long long)iv.v[k].size);
        else if (who != INT32_MIN) {
            bool esc;
            uint32_t i = who_node(g, who, &esc);
            mp_buf_printf(out, "%s %s of node %u %llu", k ? "," : ":", esc ? "results kept" : "sub-graphs", i,
                          (unsigned long long)iv.v[k].size);
        }
        else mp_buf_printf(out, "%s shared sub-graphs %llu", k ? "," : ":", (unsigned long long)iv.v[k].size);
    }
    if (n > 4) mp_buf_printf(out, " and %zu more", n - 4);
    mp_xfree(iv.v);
    mp_xfree(iv.who);
}

void mp_opt_prepare_layout(octx *c, const int32_t *order, uint32_t n) {
    for (uint32_t k = 0; k < n; k++) size_graph(c, (uint32_t)order[k]);
    c->splittable = mp_opt_mark_escapes(c, order, n);
}

void mp_opt_place_bases(octx *c, const int32_t *order, uint32_t n) { place_bases(c, order, n); }
