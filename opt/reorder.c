/* reorder.c - an operator order that lowers the peak of live bytes
 * (issue 50; docs/reorder.md).  The lower bound of every plan is the peak,
 * over the program's order, of the bytes live at a node; the order is a
 * choice.  For each graph this finds a topological order of its nodes
 * with a lower peak and keeps the program's meaning:
 *   - a node that reads a tensor comes after the node that writes it;
 *   - the nodes that name a storage that is written in place (an in-place
 *     family) or a mutable buffer keep their relative order: a write into
 *     shared bytes stays after every reader of what it overwrites;
 *   - placeholders first and the output node last, as they were;
 *   - control-flow nodes and delegates are single nodes, their sub-graphs
 *     reordered inside, each graph on its own (methods too).
 * A storage unit is an in-place family through views (its root's), as big
 * as its largest planned member, aligned, live from the first node that
 * names it to the last (a mutable one to the end).  A control-flow node
 * adds its largest sub-graph's peak while it runs, as the verifier's bound
 * does.
 * Exact by dynamic programming over the sets of nodes done when a graph
 * has at most REORDER_EXACT_NODES movable nodes and one buffer (the order is then proved
 * optimal for this measure, as it is when the peak is one node's own
 * bytes, which every order has); else list scheduling (the ready node that
 * adds the fewest bytes net), then effort-many randomized passes, the best
 * kept: more effort never ends worse (the passes before are the same),
 * and the given order is kept unless one is strictly lower. */
#include "internal.h"
#include "opt.h"

#define REORDER_EXACT_NODES 20
#define READY_SCAN 256

/* Sums of live bytes: each unit is under 2^63 and there are at most 2^32
 * of them, so sums fit 128 bits (gcc and clang on every 64-bit target);
 * what leaves this file is saturated to 64 bits.  (Found by the planners
 * fuzz corpus: sums of tensors near 2^62 wrapped.) */
__extension__ typedef unsigned __int128 rwide;
__extension__ typedef __int128 rsigned;

static uint64_t sat64(rwide x) { return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x; }

typedef struct rgraph {
    uint32_t n, first, last;   /* nodes; the movable ones are [first, last) */
    uint32_t n_units;
    uint64_t *usize;           /* per unit: bytes */
    uint32_t *upool, n_pools;  /* per unit: its buffer (dense; sub-graph peaks count in buffer 0) */
    uint8_t *uend;             /* per unit: lives to the end (mutable) */
    uint32_t *use_off, *uses;  /* per node: the units it names (CSR) */
    uint32_t *pred_off, *preds; /* per node: the nodes before it (CSR) */
    uint64_t *extra;           /* per node: its sub-graphs' largest peak */
} rgraph;

/* The storage unit of every tensor: its in-place family root through
 * views, numbered densely; sizes and the units written in place. */
/* Each unit's buffer, numbered densely in the order of (device when
 * --per-device, pool) of its root: the verifier's bound is the sum of each
 * buffer's own peak. */
static uint32_t pools_of(const mp_graphdef *g, const mp_options *o, const int32_t *root_of, uint32_t n,
                         uint32_t **upool) {
    uint64_t *key = mp_xcalloc((size_t)n + 1, sizeof *key), *sorted = mp_xcalloc((size_t)n + 1, sizeof *sorted);
    for (uint32_t u = 0; u < n; u++) {
        const mp_tensor *x = &g->tensors[root_of[u]];
        uint64_t dev = o->per_device ? (uint64_t)x->device.type << 16 | x->device.index : 0;
        key[u] = sorted[u] = dev << 32 | mp_pool_of(g, NULL, root_of[u]);
    }
    uint64_t *scratch = mp_xcalloc((size_t)n + 1, sizeof *scratch);
    const uint64_t *in_order = mp_sort_words(sorted, scratch, n, 0, 64);
    uint32_t m = 0;
    for (uint32_t u = 0; u < n; u++) /* sorted[m] is never past in_order[u]: one array serves both */
        if (!m || in_order[u] != sorted[m - 1]) sorted[m++] = in_order[u];
    mp_xfree(scratch);
    *upool = mp_xcalloc((size_t)n + 1, sizeof **upool);
    for (uint32_t u = 0; u < n; u++) { /* binary search of key[u] */
        uint32_t lo = 0, hi = m;
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (sorted[mid] <= key[u]) lo = mid;
            else hi = mid;
        }
        (*upool)[u] = lo;
    }
    mp_xfree(key), mp_xfree(sorted);
    return m ? m : 1;
}

static uint32_t units_of(const mp_graphdef *g, const mp_options *o, mp_alloc_flags f, int32_t *unit, rgraph *r,
                         uint64_t **usize, uint8_t **shared_write, uint8_t **uend) {
    /* families as the program writes them, whatever the planning options:
     * an in-place write across devices (planned apart with --per-device)
     * still overwrites its base in the program's meaning */
    int32_t *roots = mp_inplace_roots(g, false);
    int32_t *id = mp_xmalloc(((size_t)g->n_tensors + 1) * sizeof *id);
    for (uint32_t t = 0; t < g->n_tensors; t++) id[t] = -1;
    uint32_t n = 0;
    int32_t *root_of = mp_xmalloc(((size_t)g->n_tensors + 1) * sizeof *root_of);
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        int32_t rt = roots[t] >= 0 ? roots[t] : g->tensors[t].root;
        if (id[rt] < 0) root_of[n] = rt, id[rt] = (int32_t)n++;
        unit[t] = id[rt];
    }
    r->n_pools = pools_of(g, o, root_of, n, &r->upool);
    mp_xfree(root_of);
    *usize = mp_xcalloc(n + 1, sizeof **usize);
    *shared_write = mp_xcalloc(n + 1, 1);
    *uend = mp_xcalloc(n + 1, 1);
    mp_life L;
    mp_life_compute(g, &L);
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        const mp_tensor *x = &g->tensors[t];
        if (x->inplace_base >= 0 || (x->flags & MP_T_MUTABLE)) (*shared_write)[unit[t]] = 1;
        if (x->flags & MP_T_MUTABLE) (*uend)[unit[t]] = 1;
        if (!mp_life_is_planned(g, &L, (int32_t)t, f)) continue;
        uint64_t s = mp_align_up(x->size, o->alignment);
        if (s > (*usize)[unit[t]]) (*usize)[unit[t]] = s;
    }
    mp_life_free(&L);
    mp_xfree(roots);
    mp_xfree(id);
    return n;
}

/* Node v's units, each once, into r->uses (stamp: scratch of n_units). */
static void node_units(const mp_graphdef *g, const mp_node *nd, const int32_t *unit, const int32_t *held,
                       uint32_t *stamp, uint32_t v, mp_buf *out) {
    for (int side = 0; side < 2; side++) {
        const int32_t *ts = side ? nd->out : nd->in;
        uint32_t k = side ? nd->n_out : nd->n_in;
        for (uint32_t i = 0; i < k; i++)
            for (int j = 0; j < 2; j++) { /* its unit, and the branch memory a cond result holds */
                int32_t w = j ? held[g->tensors[ts[i]].root] : unit[ts[i]];
                if (w < 0 || stamp[w] == v + 1) continue;
                uint32_t u = (uint32_t)w;
                stamp[u] = v + 1;
                mp_buf_put(out, (const char *)&u, sizeof u);
            }
    }
}

/* A cond's results may be values its branch returned, whose bytes are in
 * the branch's memory (D14; the verifier's bound holds that memory until
 * the results' last use): the branches' peak is a unit of its own, named
 * by the cond and by every node that names one of its results, in
 * buffer 0 (where sub-graph peaks count), instead of a peak at the cond
 * alone.  held[t]: that unit for a cond's result t, else -1. */
static void cond_units(const mp_graphdef *g, rgraph *r, int32_t *held, uint8_t **shared_write) {
    uint32_t n = 0;
    for (uint32_t v = 0; v < r->n; v++) n += g->nodes[v].kind == MP_NODE_COND && r->extra[v];
    for (uint32_t t = 0; t < g->n_tensors; t++) held[t] = -1;
    if (!n) return;
    size_t m = (size_t)r->n_units + n + 1;
    r->usize = mp_xrealloc(r->usize, m * sizeof *r->usize), r->upool = mp_xrealloc(r->upool, m * sizeof *r->upool);
    r->uend = mp_xrealloc(r->uend, m), *shared_write = mp_xrealloc(*shared_write, m);
    for (uint32_t v = 0; v < r->n; v++) {
        if (g->nodes[v].kind != MP_NODE_COND || !r->extra[v]) continue;
        uint32_t u = r->n_units++;
        r->usize[u] = r->extra[v], r->upool[u] = 0, r->uend[u] = 0, (*shared_write)[u] = 0;
        r->extra[v] = 0;
        for (uint32_t i = 0; i < g->nodes[v].n_out; i++) held[g->tensors[g->nodes[v].out[i]].root] = (int32_t)u;
    }
}

/* Edges (a before b) into e: each read after its write; each unit written
 * in place (or mutable) keeps the order of the nodes that name it. */
static void edges_of(const mp_graphdef *g, const rgraph *r, const uint8_t *shared_write, mp_buf *e) {
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        const mp_node *nd = &g->nodes[v];
        for (uint32_t i = 0; i < nd->n_in; i++) {
            const mp_tensor *x = &g->tensors[nd->in[i]];
            int32_t d = x->def_node >= 0 ? x->def_node : g->tensors[x->root].def_node;
            if (d >= 0 && (uint32_t)d != v) {
                uint32_t ab[2] = {(uint32_t)d, v};
                mp_buf_put(e, (const char *)ab, sizeof ab);
            }
        }
    }
    int32_t *last = mp_xmalloc(((size_t)r->n_units + 1) * sizeof *last);
    for (uint32_t u = 0; u < r->n_units; u++) last[u] = -1;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        for (uint32_t k = r->use_off[v]; k < r->use_off[v + 1]; k++) {
            uint32_t u = r->uses[k];
            if (!shared_write[u]) continue;
            if (last[u] >= 0) {
                uint32_t ab[2] = {(uint32_t)last[u], v};
                mp_buf_put(e, (const char *)ab, sizeof ab);
            }
            last[u] = (int32_t)v;
        }
    mp_xfree(last);
}

/* The predecessors of each node (CSR) from the pairs in e. */
static void preds_csr(rgraph *r, const mp_buf *e) {
    const uint32_t *ab = (const uint32_t *)e->data;
    size_t m = e->len / (2 * sizeof *ab);
    r->pred_off = mp_xcalloc((size_t)r->n + 2, sizeof *r->pred_off);
    r->preds = mp_xcalloc(m + 1, sizeof *r->preds);
    for (size_t k = 0; k < m; k++) r->pred_off[ab[2 * k + 1] + 2]++;
    for (uint32_t v = 0; v < r->n; v++) r->pred_off[v + 2] += r->pred_off[v + 1];
    for (size_t k = 0; k < m; k++) r->preds[r->pred_off[ab[2 * k + 1] + 1]++] = ab[2 * k];
}

/* Graph gi as the reorder sees it; extra: each node's sub-graph peak. */
static void rgraph_build(rgraph *r, const mp_graphdef *g, const mp_options *o, mp_alloc_flags f,
                         const uint64_t *sub_peak) {
    memset(r, 0, sizeof *r);
    r->n = g->n_nodes;
    while (r->first < r->n && g->nodes[r->first].kind == MP_NODE_PLACEHOLDER) r->first++;
    r->last = r->n && g->nodes[r->n - 1].kind == MP_NODE_OUTPUT ? r->n - 1 : r->n;
    int32_t *unit = mp_xmalloc(((size_t)g->n_tensors + 1) * sizeof *unit);
    int32_t *held = mp_xmalloc(((size_t)g->n_tensors + 1) * sizeof *held);
    uint8_t *shared_write;
    r->n_units = units_of(g, o, f, unit, r, &r->usize, &shared_write, &r->uend);
    r->extra = mp_xcalloc((size_t)r->n + 1, sizeof *r->extra);
    for (uint32_t v = 0; v < r->n; v++)
        for (int s = 0; s < 2; s++)
            if (g->nodes[v].sub[s] >= 0 && sub_peak[g->nodes[v].sub[s]] > r->extra[v])
                r->extra[v] = sub_peak[g->nodes[v].sub[s]];
    cond_units(g, r, held, &shared_write);
    uint32_t *stamp = mp_xcalloc((size_t)r->n_units + 1, sizeof *stamp);
    mp_buf uses;
    mp_buf_init(&uses);
    r->use_off = mp_xcalloc((size_t)r->n + 1, sizeof *r->use_off);
    for (uint32_t v = 0; v < r->n; v++) {
        node_units(g, &g->nodes[v], unit, held, stamp, v, &uses);
        r->use_off[v + 1] = (uint32_t)(uses.len / sizeof(uint32_t));
    }
    r->uses = mp_xmalloc(uses.len + sizeof(uint32_t));
    memcpy(r->uses, uses.data, uses.len);
    mp_buf_free(&uses);
    mp_xfree(held);
    mp_buf e;
    mp_buf_init(&e);
    edges_of(g, r, shared_write, &e);
    preds_csr(r, &e);
    mp_buf_free(&e);
    mp_xfree(stamp);
    mp_xfree(shared_write);
    mp_xfree(unit);
}

static void rgraph_free(rgraph *r) {
    mp_xfree(r->usize), mp_xfree(r->upool), mp_xfree(r->uend), mp_xfree(r->use_off), mp_xfree(r->uses);
    mp_xfree(r->pred_off), mp_xfree(r->preds), mp_xfree(r->extra);
}

/* The buffers node v touches, as k runs over [use_off[v], use_off[v + 1]]:
 * the buffer of its k-th unit, then buffer 0 (where sub-graph peaks
 * count); a buffer may come more than once. */
static uint32_t pool_at(const rgraph *r, uint32_t v, uint32_t k) {
    return k < r->use_off[v + 1] ? r->upool[r->uses[k]] : 0;
}

/* The live bytes as an order runs: per unit how many of the nodes that
 * name it are still to come (a unit that lives to the end counts the
 * output node once more: it never dies inside the graph) and whether it
 * is alive; per buffer the bytes alive and their peak so far. */
typedef struct live_state {
    const rgraph *r;
    uint32_t *left;
    uint8_t *on;
    rwide *live, *peak;
} live_state;

static void live_init(live_state *ls, const rgraph *r) {
    ls->r = r;
    ls->left = mp_xcalloc((size_t)r->n_units + 1, sizeof *ls->left);
    ls->on = mp_xcalloc((size_t)r->n_units + 1, 1);
    ls->live = mp_xcalloc(r->n_pools, sizeof *ls->live);
    ls->peak = mp_xcalloc(r->n_pools, sizeof *ls->peak);
    for (uint32_t k = 0; k < r->use_off[r->n]; k++) ls->left[r->uses[k]]++;
    for (uint32_t u = 0; u < r->n_units; u++) ls->left[u] += r->uend[u];
}

static void live_free(live_state *ls) {
    mp_xfree(ls->left), mp_xfree(ls->on), mp_xfree(ls->live), mp_xfree(ls->peak);
}

/* Node v runs: its units come alive, the buffers' peaks take them (and its
 * sub-graphs' peak, in buffer 0), the units it names last die. */
static void live_run(live_state *ls, uint32_t v) {
    const rgraph *r = ls->r;
    for (uint32_t k = r->use_off[v]; k < r->use_off[v + 1]; k++)
        if (!ls->on[r->uses[k]]) ls->on[r->uses[k]] = 1, ls->live[r->upool[r->uses[k]]] += r->usize[r->uses[k]];
    for (uint32_t k = r->use_off[v]; k < r->use_off[v + 1]; k++) {
        uint32_t p = r->upool[r->uses[k]];
        if (ls->live[p] > ls->peak[p]) ls->peak[p] = ls->live[p];
    }
    if (ls->live[0] + r->extra[v] > ls->peak[0]) ls->peak[0] = ls->live[0] + r->extra[v];
    for (uint32_t k = r->use_off[v]; k < r->use_off[v + 1]; k++)
        if (--ls->left[r->uses[k]] == 0) ls->live[r->upool[r->uses[k]]] -= r->usize[r->uses[k]];
}

/* The measure of order ord (all n nodes): each buffer's peak of live
 * bytes, summed (one buffer: the peak). */
static rwide peak_of(const rgraph *r, const uint32_t *ord) {
    live_state ls;
    live_init(&ls, r);
    for (uint32_t i = 0; i < r->n; i++) live_run(&ls, ord[i]);
    rwide sum = 0;
    for (uint32_t p = 0; p < r->n_pools; p++) sum += ls.peak[p];
    live_free(&ls);
    return sum;
}

/* ------------------------------------------------------ list scheduling */

typedef struct sched {
    live_state ls;
    uint32_t *indeg, *succ_off, *succ, *ready;
    uint32_t n_ready;
    rwide *add; /* per buffer: a candidate's, zero between uses */
} sched;

/* Node v runs, and the nodes waiting only for it become ready. */
static void run_node(sched *s, uint32_t v) {
    const rgraph *r = s->ls.r;
    live_run(&s->ls, v);
    for (uint32_t k = s->succ_off[v]; k < s->succ_off[v + 1]; k++) {
        uint32_t w = s->succ[k];
        if (--s->indeg[w] == 0 && w >= r->first && w < r->last) s->ready[s->n_ready++] = w;
    }
}

/* What running v next costs: how much it raises the buffers' peaks (the
 * measure), the bytes it adds net (what it brings alive less what dies
 * after it) and its live bytes while it runs. */
static rsigned net_of(const sched *s, uint32_t v, rwide *raise, rwide *during) {
    const live_state *ls = &s->ls;
    const rgraph *r = ls->r;
    rwide add = 0, gone = 0;
    for (uint32_t k = r->use_off[v]; k < r->use_off[v + 1]; k++) {
        uint32_t u = r->uses[k];
        if (!ls->on[u]) add += r->usize[u], s->add[r->upool[u]] += r->usize[u];
        if (ls->left[u] == 1) gone += r->usize[u];
    }
    s->add[0] += r->extra[v];
    *raise = 0;
    rwide live = 0;
    for (uint32_t k = r->use_off[v]; k <= r->use_off[v + 1]; k++) { /* each buffer it touches once */
        uint32_t p = pool_at(r, v, k);
        rwide now = ls->live[p] + s->add[p];
        if (s->add[p] != ~(rwide)0) {
            if (now > ls->peak[p]) *raise += now - ls->peak[p];
            live += now;
            s->add[p] = ~(rwide)0; /* counted */
        }
    }
    for (uint32_t k = r->use_off[v]; k <= r->use_off[v + 1]; k++) s->add[pool_at(r, v, k)] = 0;
    *during = live;
    return (rsigned)add - (rsigned)gone;
}

static void sched_init(sched *s, const rgraph *r) {
    memset(s, 0, sizeof *s);
    live_init(&s->ls, r);
    s->add = mp_xcalloc(r->n_pools, sizeof *s->add);
    s->indeg = mp_xcalloc((size_t)r->n + 1, sizeof *s->indeg);
    s->succ_off = mp_xcalloc((size_t)r->n + 2, sizeof *s->succ_off);
    s->succ = mp_xcalloc((size_t)r->pred_off[r->n] + 1, sizeof *s->succ);
    s->ready = mp_xcalloc((size_t)r->n + 1, sizeof *s->ready);
    for (uint32_t v = 0; v < r->n; v++) {
        s->indeg[v] = r->pred_off[v + 1] - r->pred_off[v];
        for (uint32_t k = r->pred_off[v]; k < r->pred_off[v + 1]; k++) s->succ_off[r->preds[k] + 2]++;
    }
    for (uint32_t v = 0; v < r->n; v++) s->succ_off[v + 2] += s->succ_off[v + 1];
    for (uint32_t v = 0; v < r->n; v++)
        for (uint32_t k = r->pred_off[v]; k < r->pred_off[v + 1]; k++) s->succ[s->succ_off[r->preds[k] + 1]++] = v;
    for (uint32_t v = r->first; v < r->last; v++)
        if (!s->indeg[v]) s->ready[s->n_ready++] = v;
}

static void sched_free(sched *s) {
    live_free(&s->ls);
    mp_xfree(s->indeg), mp_xfree(s->succ_off), mp_xfree(s->succ), mp_xfree(s->ready), mp_xfree(s->add);
}

/* The ready node to run next: the one that raises the buffers' peaks
 * least, then adds the fewest bytes net, then has the fewest live while it
 * runs, then the earliest; with rng, one time in four the second best (a
 * randomized pass). */
static uint32_t pick(const sched *s, uint32_t *rng) {
    uint32_t best = 0, second = UINT32_MAX;
    rsigned bn = 0;
    rwide br = 0, bd = 0;
    /* at most READY_SCAN candidates a step: a graph whose every node is
     * ready at once (10^5 views of one tensor) stays linear; the ones not
     * looked at come into the window as the ready list turns over */
    uint32_t scan = s->n_ready < READY_SCAN ? s->n_ready : READY_SCAN;
    for (uint32_t i = 0; i < scan; i++) {
        rwide d, up;
        rsigned n = net_of(s, s->ready[i], &up, &d);
        bool better = i == 0 || up < br ||
                      (up == br && (n < bn || (n == bn && (d < bd || (d == bd && s->ready[i] < s->ready[best])))));
        if (better) {
            second = i ? best : UINT32_MAX;
            best = i, br = up, bn = n, bd = d;
        } else if (second == UINT32_MAX) {
            second = i;
        }
    }
    if (rng && second != UINT32_MAX && mp_xorshift32(rng) % 4 == 0) return second;
    return best;
}

/* One list-scheduling pass into ord (all n nodes); false when the
 * constraints leave a node that never gets ready (a cycle: keep the order). */
static bool list_schedule(const rgraph *r, uint32_t *rng, uint32_t *ord) {
    sched s;
    sched_init(&s, r);
    uint32_t k = 0;
    for (uint32_t v = 0; v < r->first; v++) ord[k++] = v, run_node(&s, v);
    while (s.n_ready) {
        uint32_t i = pick(&s, rng), v = s.ready[i];
        s.ready[i] = s.ready[--s.n_ready];
        ord[k++] = v;
        run_node(&s, v);
    }
    for (uint32_t v = r->last; v < r->n; v++) ord[k++] = v;
    sched_free(&s);
    return k == r->n;
}

/* ------------------------------------------------------------ exact */

/* Per unit: the movable nodes that name it (bits), whether a placeholder
 * does (alive from the start) and whether it lives past the movable
 * nodes (the output node or the end names it). */
typedef struct dp_units {
    uint32_t *mask;
    uint8_t *early, *late;
} dp_units;

static void dp_units_of(const rgraph *r, dp_units *d) {
    d->mask = mp_xcalloc((size_t)r->n_units + 1, sizeof *d->mask);
    d->early = mp_xcalloc((size_t)r->n_units + 1, 1);
    d->late = mp_xcalloc((size_t)r->n_units + 1, 1);
    for (uint32_t v = 0; v < r->n; v++)
        for (uint32_t k = r->use_off[v]; k < r->use_off[v + 1]; k++) {
            uint32_t u = r->uses[k];
            if (v < r->first) d->early[u] = 1;
            else if (v >= r->last) d->late[u] = 1;
            else d->mask[u] |= 1u << (v - r->first);
        }
    for (uint32_t u = 0; u < r->n_units; u++) d->late[u] |= r->uend[u];
}

/* Relax every node that can run after the nodes of mask. */
static void dp_step(const rgraph *r, const dp_units *d, const uint32_t *pmask, uint32_t mask, rwide *peak,
                    rwide *live, uint8_t *par) {
    uint32_t m = r->last - r->first;
    for (uint32_t b = 0; b < m; b++) {
        if ((mask >> b & 1) || (pmask[b] & ~mask)) continue;
        uint32_t v = r->first + b, nm = mask | 1u << b;
        rwide add = 0, gone = 0;
        for (uint32_t k = r->use_off[v]; k < r->use_off[v + 1]; k++) {
            uint32_t u = r->uses[k];
            if (!d->early[u] && !(d->mask[u] & mask)) add += r->usize[u];
            if (!d->late[u] && !(d->mask[u] & ~nm)) gone += r->usize[u];
        }
        rwide during = live[mask] + add + r->extra[v];
        rwide np = during > peak[mask] ? during : peak[mask];
        live[nm] = live[mask] + add - gone;
        if (np < peak[nm]) peak[nm] = np, par[nm] = (uint8_t)(b + 1);
    }
}

/* The order of least peak over every order the constraints allow, into
 * ord, by dynamic programming over the sets of movable nodes done (at most
 * REORDER_EXACT_NODES of them); false when none is allowed. */
static bool exact_order(const rgraph *r, uint32_t *ord) {
    uint32_t m = r->last - r->first, full = (uint32_t)((1ull << m) - 1);
    dp_units d;
    dp_units_of(r, &d);
    uint32_t *pmask = mp_xcalloc(m + 1, sizeof *pmask);
    for (uint32_t b = 0; b < m; b++)
        for (uint32_t k = r->pred_off[r->first + b]; k < r->pred_off[r->first + b + 1]; k++) {
            uint32_t p = r->preds[k];
            if (p >= r->first && p < r->last) pmask[b] |= 1u << (p - r->first);
        }
    size_t states = (size_t)full + 1;
    rwide *peak = mp_xmalloc(states * sizeof *peak), *live = mp_xcalloc(states, sizeof *live);
    uint8_t *par = mp_xcalloc(states, 1);
    const rwide none = ~(rwide)0;
    for (size_t i = 0; i < states; i++) peak[i] = none;
    peak[0] = 0;
    for (uint32_t u = 0; u < r->n_units; u++)
        if (d.early[u] && (d.mask[u] || d.late[u])) live[0] += r->usize[u]; /* alive when the movable part starts */
    for (uint32_t mask = 0; mask < full; mask++)
        if (peak[mask] != none) dp_step(r, &d, pmask, mask, peak, live, par);
    bool ok = peak[full] != none;
    for (uint32_t v = 0; v < r->first; v++) ord[v] = v;
    for (uint32_t mask = full, k = r->last; ok && mask; k--) {
        uint32_t b = par[mask] - 1u;
        ord[k - 1] = r->first + b;
        mask &= ~(1u << b);
    }
    for (uint32_t v = r->last; v < r->n; v++) ord[v] = v;
    mp_xfree(peak), mp_xfree(live), mp_xfree(par), mp_xfree(pmask);
    mp_xfree(d.mask), mp_xfree(d.early), mp_xfree(d.late);
    return ok;
}

/* ------------------------------------------------------------ driver */

/* A measure no order can go below: every node needs the units it names
 * live while it runs (and its sub-graphs' peak), so each buffer's peak is
 * at least its largest such sum at one node. */
static rwide node_bound(const rgraph *r) {
    rwide *b = mp_xcalloc(r->n_pools, sizeof *b), *at = mp_xcalloc(r->n_pools, sizeof *at), sum = 0;
    for (uint32_t v = 0; v < r->n; v++) {
        at[0] = r->extra[v];
        for (uint32_t k = r->use_off[v]; k < r->use_off[v + 1]; k++) at[r->upool[r->uses[k]]] += r->usize[r->uses[k]];
        for (uint32_t k = r->use_off[v]; k <= r->use_off[v + 1]; k++) {
            uint32_t p = pool_at(r, v, k);
            if (at[p] > b[p]) b[p] = at[p];
            at[p] = 0;
        }
    }
    for (uint32_t p = 0; p < r->n_pools; p++) sum += b[p];
    mp_xfree(b), mp_xfree(at);
    return sum;
}

/* Graph g's best order into ord (n nodes) and its peak; *proved when the
 * exact search ran or the peak is a node's own bytes (no order is lower).
 * The given order is kept unless one is lower. */
static uint64_t reorder_graph(const rgraph *r, uint32_t effort, uint32_t *ord, bool *proved) {
    uint32_t *cand = mp_xmalloc(((size_t)r->n + 1) * sizeof *cand);
    for (uint32_t v = 0; v < r->n; v++) ord[v] = v;
    rwide best = peak_of(r, ord), floor = node_bound(r); /* the given order's: ord is it */
    *proved = best <= floor; /* the given order is at a bound no order beats: nothing to search */
    if (*proved) {
        mp_xfree(cand);
        return sat64(best);
    }
    if (r->n_pools == 1 && r->last > r->first && r->last - r->first <= REORDER_EXACT_NODES) {
        if (exact_order(r, cand)) {
            *proved = true;
            rwide p = peak_of(r, cand);
            if (p < best) best = p, memcpy(ord, cand, r->n * sizeof *ord);
        }
    } else {
        uint32_t rng = 0x9e3779b9u; /* the same passes on every machine and effort */
        for (uint32_t pass = 0; pass <= effort; pass++) {
            if (!list_schedule(r, pass ? &rng : NULL, cand)) break;
            rwide p = peak_of(r, cand);
            if (p < best) best = p, memcpy(ord, cand, r->n * sizeof *ord);
        }
    }
    mp_xfree(cand);
    if (best <= floor) *proved = true;
    return sat64(best);
}

typedef struct reorder_call {
    const mp_program *prog;
    const mp_options *opts;
    uint32_t effort;
    mp_program *out;
    uint64_t before, after;
    bool optimal;
    mp_err *err;
} reorder_call;

/* The program with each graph's nodes in the order perm gives, written
 * and parsed again: a program of its own, checked like any file. */
static mp_program *permuted(const mp_program *p, uint32_t **perm, mp_err *err) {
    mp_program copy = *p;
    copy.graphs = mp_xcalloc(p->n_graphs + 1, sizeof *copy.graphs);
    for (uint32_t gi = 0; gi < p->n_graphs; gi++) {
        copy.graphs[gi] = p->graphs[gi];
        if (!perm[gi]) continue;
        mp_node *nodes = mp_xcalloc((size_t)p->graphs[gi].n_nodes + 1, sizeof *nodes);
        for (uint32_t k = 0; k < p->graphs[gi].n_nodes; k++) nodes[k] = p->graphs[gi].nodes[perm[gi][k]];
        copy.graphs[gi].nodes = nodes;
    }
    mp_buf b;
    mp_buf_init(&b);
    mp_graph_write(&copy, &b);
    mp_program *q = mp_graph_parse(b.data, b.len, p->filename, err);
    mp_buf_free(&b);
    for (uint32_t gi = 0; gi < p->n_graphs; gi++)
        if (perm[gi]) mp_xfree(copy.graphs[gi].nodes);
    mp_xfree(copy.graphs);
    return q;
}

/* Graph g's peak in its given order with its sub-graphs in theirs (before
 * their reorder): r's own when g runs none (r: g with its sub-graphs
 * reordered), else g built again with the sub-graphs' given peaks. */
static uint64_t given_peak(const mp_graphdef *g, const rgraph *r, const mp_options *o, mp_alloc_flags f,
                           const uint64_t *sub_before) {
    bool runs = false;
    for (uint32_t v = 0; v < g->n_nodes && !runs; v++) runs = g->nodes[v].sub[0] >= 0 || g->nodes[v].sub[1] >= 0;
    rgraph r0;
    if (runs) rgraph_build(&r0, g, o, f, sub_before);
    uint32_t *id = mp_xcalloc((size_t)g->n_nodes + 1, sizeof *id);
    for (uint32_t v = 0; v < g->n_nodes; v++) id[v] = v;
    uint64_t b = sat64(peak_of(runs ? &r0 : r, id));
    mp_xfree(id);
    if (runs) rgraph_free(&r0);
    return b;
}

/* Sub-graphs first, so that a node's sub-graph peak is known when the
 * graph that runs it is reordered; unreachable graphs keep their order. */
static int reorder_work(void *ctx) {
    reorder_call *c = ctx;
    const mp_program *p = c->prog;
    bool *reach = mp_xcalloc(p->n_graphs + 1, sizeof *reach);
    mp_graph_reachable(p, reach);
    int32_t *order = mp_xcalloc(p->n_graphs + 1, sizeof *order);
    uint32_t n = mp_graphs_children_first(p, reach, order, NULL);
    uint8_t *map_body = mp_map_bodies(p, reach);
    uint64_t *peak = mp_xcalloc(p->n_graphs + 1, sizeof *peak), *before = mp_xcalloc(p->n_graphs + 1, sizeof *before);
    uint32_t **perm = mp_xcalloc(p->n_graphs + 1, sizeof *perm);
    c->optimal = true;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t gi = (uint32_t)order[k];
        rgraph r;
        rgraph_build(&r, &p->graphs[gi], c->opts, mp_context_flags(c->opts, gi, map_body), peak);
        perm[gi] = mp_xmalloc(((size_t)r.n + 1) * sizeof **perm);
        bool proved;
        peak[gi] = reorder_graph(&r, c->effort, perm[gi], &proved);
        c->optimal &= proved;
        before[gi] = given_peak(&p->graphs[gi], &r, c->opts, mp_context_flags(c->opts, gi, map_body), before);
        rgraph_free(&r);
    }
    for (uint32_t k = 0; k < (p->n_entries ? p->n_entries : 1); k++) {
        int32_t e = p->n_entries ? p->entries[k] : 0;
        if (before[e] > c->before) c->before = before[e];
        if (peak[e] > c->after) c->after = peak[e];
    }
    c->out = permuted(p, perm, c->err);
    for (uint32_t gi = 0; gi < p->n_graphs; gi++) mp_xfree(perm[gi]);
    mp_xfree(perm), mp_xfree(peak), mp_xfree(before), mp_xfree(map_body), mp_xfree(order), mp_xfree(reach);
    return c->out ? MP_OK : c->err->code;
}

int mp_reorder_run(const mp_program *prog, const mp_options *opts, uint32_t effort, mp_program **out,
                   uint64_t *peak_before, uint64_t *peak_after, int *optimal, mp_err *err) {
    reorder_call c = {prog, opts, effort, NULL, 0, 0, false, err};
    int rc = mp_guard_run(err, reorder_work, &c);
    if (rc != MP_OK) return rc;
    *out = c.out;
    if (peak_before) *peak_before = c.before;
    if (peak_after) *peak_after = c.after;
    if (optimal) *optimal = c.optimal;
    return MP_OK;
}
