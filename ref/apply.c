/* apply.c - ExecuTorch's apply_algo: recursive planning of a program.
 *
 * For one graph: plan every sub-graph its control-flow nodes run (all cond
 * branches, then while cond/body, then map bodies, then scan bodies; cond
 * and while bodies without their inputs, map and scan bodies with them),
 * merge their buffer sizes (maximum per buffer), then plan the graph's own
 * specs per device partition with the merged sizes reserved at the start of
 * the CPU buffers.  State lives on per-tensor records exactly as it lives on
 * ExecuTorch's TensorSpec objects, so a sub-graph planned twice behaves as
 * it does there.
 *
 * The default (repaired) mode changes exactly the steps marked
 * "repair Dn"; docs/deviations.md describes each. */
#include "ref_internal.h"

#include <stdio.h>

typedef struct gstate {
    bool life_done;
    mp_life life;
    mp_escape keep; /* repaired mode: how long bytes must survive (D14) */
    int32_t *pos;   /* per tensor, -1: the greedy's scratch (ref_part.pos) */
    uint8_t *realigned, *planned;
    uint64_t *mem_id, *obj, *offset, *size;
    uint64_t *bufs;
    mp_device *devs;
    uint32_t n_bufs;
    /* PR #21494: the graph module's input_mem_buffer_sizes attribute, kept
     * from one planning of the graph to the next as ExecuTorch keeps it */
    uint64_t *ims;
    uint32_t n_ims;
    bool has_ims;
} gstate;

typedef struct run {
    const mp_program *prog;
    const mp_options *o;
    mp_err *err;
    gstate *gs;
    uint8_t *map_body; /* graph is a map/scan body somewhere (repair D10) */
    uint64_t work, work_limit;
    mp_table table;
    bool naive; /* the naive algorithm, else greedy */
    int32_t *entry_mutable; /* D13: the entry's mutable placeholders, -1 ended; lazily */
    const struct u64vec *pre; /* PR #21494: what the next apply() sets its graph's
                               * input_mem_buffer_sizes to; NULL: leave it */
} run;

typedef struct u64vec {
    uint64_t *v;
    uint32_t n;
} u64vec;

static const mp_device CPU0 = {MP_DEV_CPU, 0};

/* D13 (--et-exact only): ExecuTorch passes the top-level graph signature
 * to every sub-graph and looks placeholders up by name, so a sub-graph
 * placeholder named like one of the entry graph's mutable buffers is taken
 * for that buffer: not a graph input (planned even where cond/while leave
 * inputs out) and live to the sub-graph's last node. */
static void et_mutable_by_name(run *R, const mp_graphdef *g, mp_life *L) {
    const mp_graphdef *entry = &R->prog->graphs[0];
    if (!R->entry_mutable) { /* the entry's mutable placeholders, found once (-1 ends) */
        uint32_t n = 0;
        R->entry_mutable = mp_xmalloc((entry->n_tensors + 1) * sizeof *R->entry_mutable);
        for (uint32_t i = 0; i < entry->n_tensors; i++) {
            const mp_tensor *m = &entry->tensors[i];
            if ((m->flags & MP_T_MUTABLE) && m->def_node >= 0 &&
                entry->nodes[m->def_node].kind == MP_NODE_PLACEHOLDER)
                R->entry_mutable[n++] = (int32_t)i;
        }
        R->entry_mutable[n] = -1;
    }
    for (const int32_t *i = R->entry_mutable; *i >= 0; i++) {
        int32_t t = mp_tensor_find(g, entry->tensors[*i].name);
        if (t < 0 || !L->is_placeholder[t] || g->tensors[t].root != t) continue;
        L->is_input[t] = 0;
        L->end[t] = (int32_t)g->n_nodes - 1;
    }
}

/* ExecuTorch since PR #21840 (_extend_storage_base_lifetimes): every spec's
 * lifetime stretched over the specs stored in it, constants and inputs
 * included, before anything reads a lifetime; the plan writes them so. */
static void stretch_lives(const mp_graphdef *g, mp_life *L) {
    size_t n = (size_t)g->n_tensors + 1;
    int32_t *s = mp_xmalloc(2 * n * sizeof *s);
    mp_storage_lives(g, false, L->start, L->end, s, s + n);
    memcpy(L->start, s, g->n_tensors * sizeof *s);
    memcpy(L->end, s + n, g->n_tensors * sizeof *s);
    mp_xfree(s);
}

static gstate *state_of(run *R, int32_t gi) {
    gstate *S = &R->gs[gi];
    if (!S->life_done) {
        const mp_graphdef *g = &R->prog->graphs[gi];
        uint32_t n = g->n_tensors + 1;
        mp_life_compute(g, &S->life);
        if (R->o->et_exact && gi != 0) et_mutable_by_name(R, g, &S->life);
        if (R->o->et_exact && (R->o->et_upstream & MP_UPSTREAM_21840) && mp_graph_has_inplace(g))
            stretch_lives(g, &S->life);
        if (!R->o->et_exact) mp_escape_compute(R->prog, g, S->life.end, &S->keep);
        S->realigned = mp_xcalloc(n, 1);
        S->planned = mp_xcalloc(n, 1);
        S->mem_id = mp_xcalloc(n, sizeof(uint64_t));
        S->obj = mp_xcalloc(n, sizeof(uint64_t));
        S->offset = mp_xcalloc(n, sizeof(uint64_t));
        S->size = mp_xcalloc(n, sizeof(uint64_t));
        S->pos = mp_xmalloc(n * sizeof *S->pos);
        for (uint32_t t = 0; t < n; t++) S->pos[t] = -1;
        S->life_done = true;
    }
    return S;
}

static void merge_into(u64vec *acc, const uint64_t *v, uint32_t n) {
    if (acc->n < n) {
        acc->v = mp_xrealloc(acc->v, n * sizeof *acc->v);
        memset(acc->v + acc->n, 0, (n - acc->n) * sizeof *acc->v);
        acc->n = n;
    }
    for (uint32_t i = 0; i < n; i++)
        if (v[i] > acc->v[i]) acc->v[i] = v[i];
}

static int apply(run *R, int32_t gi, mp_alloc_flags f, int depth, u64vec *ret);

/* Add delta[b] to every offset graph gi and the graphs it runs hold in
 * buffer b, and to the ends of their regions there (repair D14).  The
 * program is a tree (mp_escape_check), so no other node sees the move. */
static int shift_region(run *R, int32_t gi, const u64vec *delta) {
    const mp_graphdef *g = &R->prog->graphs[gi];
    gstate *S = state_of(R, gi);
    for (uint32_t t = 0; t < g->n_tensors; t++) /* a buffer it has no region in keeps empty tensors at 0 */
        if (S->planned[t] && S->mem_id[t] < delta->n && S->mem_id[t] < S->n_bufs && S->bufs[S->mem_id[t]] &&
            !mp_add_u64(S->offset[t], delta->v[S->mem_id[t]], &S->offset[t]))
            return mp_err_limit(R->err, "graph '%s': keeping a cond's results (D14) moves "
                                "offsets past 2^64", g->name);
    for (uint32_t b = 1; b < S->n_bufs && b < delta->n; b++)
        if (S->bufs[b] && !mp_add_u64(S->bufs[b], delta->v[b], &S->bufs[b]))
            return mp_err_limit(R->err, "graph '%s': keeping a cond's results (D14) moves "
                                "a buffer past 2^64", g->name);
    for (uint32_t i = 0; i < g->n_nodes; i++)
        for (int s = 0; s < 2 && g->nodes[i].sub[s] >= 0; s++) {
            if (s == 1 && g->nodes[i].sub[1] == g->nodes[i].sub[0]) break;
            int rc = shift_region(R, g->nodes[i].sub[s], delta);
            if (rc) return rc;
        }
    return MP_OK;
}

/* The regions of earlier conds whose results still live, per buffer: a
 * max-heap of (region end, last node the results are used at), entries
 * leaving lazily once that node is passed.  Nodes are visited in order, so
 * a graph with 10^5 conds costs n log n, not n^2. */
/* One earlier cond in one buffer, in one of two max-heaps per buffer:
 * key is its region's end (where a later sub-graph must start) or the
 * complement of the lowest byte its escaping results live at there
 * (whether one must move); end is the last node they are used at. */
typedef struct esc_entry {
    uint64_t key;
    int32_t end;
} esc_entry;

typedef struct esc_heap {
    esc_entry *v;
    uint32_t n, cap;
} esc_heap;

typedef struct esc_sweep {
    esc_heap *h, *l; /* per buffer: by top, by low */
    uint32_t nh, next; /* next: the next node to consider as an earlier cond */
} esc_sweep;

static void heap_push(esc_heap *h, esc_entry x) {
    MP_VEC_PUSH(h->v, h->n, h->cap, x);
    for (uint32_t i = h->n - 1; i && h->v[(i - 1) / 2].key < h->v[i].key; i = (i - 1) / 2) {
        esc_entry t = h->v[i];
        h->v[i] = h->v[(i - 1) / 2];
        h->v[(i - 1) / 2] = t;
    }
}

static void esc_push(esc_sweep *w, uint32_t b, uint64_t top, uint64_t low, int32_t end) {
    if (b >= w->nh) {
        w->h = mp_xrealloc(w->h, (b + 1) * sizeof *w->h);
        w->l = mp_xrealloc(w->l, (b + 1) * sizeof *w->l);
        memset(w->h + w->nh, 0, (b + 1 - w->nh) * sizeof *w->h);
        memset(w->l + w->nh, 0, (b + 1 - w->nh) * sizeof *w->l);
        w->nh = b + 1;
    }
    heap_push(&w->h[b], (esc_entry){top, end});
    heap_push(&w->l[b], (esc_entry){~low, end});
}

/* The root's key of heap h once the entries no longer needed at node `at`
 * have left it (lazily: only when they reach the root); false: empty. */
static bool heap_root(esc_heap *h, int32_t at, uint64_t *key) {
    while (h->n && h->v[0].end < at) { /* sift the last entry down from the root */
        esc_entry x = h->v[--h->n];
        uint32_t i = 0;
        for (uint32_t c; (c = 2 * i + 1) < h->n; i = c) {
            if (c + 1 < h->n && h->v[c + 1].key > h->v[c].key) c++;
            if (h->v[c].key <= x.key) break;
            h->v[i] = h->v[c];
        }
        if (h->n) h->v[i] = x;
    }
    if (h->n) *key = h->v[0].key;
    return h->n != 0;
}

/* The highest region in buffer b still needed at node `at` (0: none). */
static uint64_t esc_max(esc_sweep *w, uint32_t b, int32_t at) {
    uint64_t top = 0;
    return b < w->nh && heap_root(&w->h[b], at, &top) ? top : 0;
}

/* The lowest byte in buffer b where results still needed at node `at`
 * live (UINT64_MAX: none). */
static uint64_t esc_low(esc_sweep *w, uint32_t b, int32_t at) {
    uint64_t key = 0;
    return b < w->nh && heap_root(&w->l[b], at, &key) ? ~key : UINT64_MAX;
}

/* The lowest byte in buffer b of the values cond node n's escaping
 * results are (their branches' allocations, as planned and moved by now);
 * 0 where one is a nested cond's result, which may be anywhere in its
 * branch's memory; UINT64_MAX where none lies in b. */
static uint64_t escape_low(run *R, const mp_graphdef *g, const mp_escape *E, uint32_t n, uint32_t b) {
    const mp_node *nd = &g->nodes[n];
    uint64_t low = UINT64_MAX;
    for (uint32_t i = 0; i < nd->n_out; i++) {
        int32_t r = nd->out[i];
        if (g->tensors[r].root != r || E->tensor_end[r] <= (int32_t)n) continue; /* not escaping */
        for (int s = 0; s < 2 && !(s == 1 && nd->sub[1] == nd->sub[0]); s++) {
            const mp_graphdef *bg = &R->prog->graphs[nd->sub[s]];
            int kind;
            int32_t v = mp_escape_value(bg, i, &kind);
            if (kind <= 0) continue; /* an operand (kept in the parent) or nothing overwritable */
            if (bg->tensors[v].def_node >= 0 && bg->nodes[bg->tensors[v].def_node].kind == MP_NODE_COND) return 0;
            const gstate *S = state_of(R, nd->sub[s]);
            if (S->planned[v] && S->mem_id[v] == b && S->size[v] && S->offset[v] < low) low = S->offset[v];
        }
    }
    return low;
}

/* The conds before node i whose results escape join the sweep. */
static void esc_catch_up(run *R, esc_sweep *w, const mp_graphdef *g, const mp_escape *E, const u64vec *tops,
                         uint32_t i) {
    for (; w->next < i; w->next++) {
        uint32_t n = w->next;
        if (g->nodes[n].kind != MP_NODE_COND || E->node_end[n] < 0) continue;
        for (uint32_t b = 1; b < tops[n].n; b++)
            if (tops[n].v[b]) esc_push(w, b, tops[n].v[b], escape_low(R, g, E, n, b), E->node_end[n]);
    }
}

static void esc_free(esc_sweep *w) {
    for (uint32_t b = 0; b < w->nh; b++) mp_xfree(w->h[b].v), mp_xfree(w->l[b].v);
    mp_xfree(w->h);
    mp_xfree(w->l);
}

/* Repair D14: node i's sub-graphs (their sizes in *sizes, from offset 0)
 * start above the regions of earlier conds whose results still live
 * there, in each buffer where they would reach those results' bytes; where
 * they end below them (ExecuTorch's layout is safe) nothing moves. */
static int keep_results(run *R, int32_t gi, uint32_t i, esc_sweep *w, u64vec *sizes) {
    u64vec delta = {mp_xcalloc(sizes->n + 1, sizeof(uint64_t)), sizes->n};
    bool any = false;
    for (uint32_t b = 1; b < sizes->n; b++)
        if (sizes->v[b] && (delta.v[b] = esc_max(w, b, (int32_t)i))) {
            if (sizes->v[b] <= esc_low(w, b, (int32_t)i)) delta.v[b] = 0;
            else any = true;
        }
    int rc = MP_OK;
    for (uint32_t b = 1; any && b < delta.n && rc == MP_OK; b++) {
        delta.v[b] = mp_align_up(delta.v[b], R->o->alignment);
        if (sizes->v[b] && !mp_add_u64(sizes->v[b], delta.v[b], &sizes->v[b]))
            rc = mp_err_limit(R->err, "graph '%s': keeping a cond's results (D14) moves a "
                              "buffer past 2^64", R->prog->graphs[gi].name);
    }
    const mp_node *nd = &R->prog->graphs[gi].nodes[i];
    for (int s = 0; any && rc == MP_OK && s < 2 && nd->sub[s] >= 0; s++)
        if (s == 0 || nd->sub[1] != nd->sub[0]) rc = shift_region(R, nd->sub[s], &delta);
    mp_xfree(delta.v);
    return rc;
}

/* Plan node i's sub-graphs, each with reservation `in` (PR #21494's
 * input_mem_buffer_sizes; NULL: none set); *sizes: their merged buffer
 * sizes. */
static int plan_node(run *R, const mp_node *nd, int depth, const u64vec *in, u64vec *sizes) {
    bool map_kind = nd->kind == MP_NODE_MAP || nd->kind == MP_NODE_SCAN;
    for (int s = 0; s < 2 && nd->sub[s] >= 0; s++) {
        bool with_inputs = map_kind;
        if (!R->o->et_exact) with_inputs = R->map_body[nd->sub[s]];
        mp_alloc_flags sf = {with_inputs, true, true};
        u64vec sub = {0};
        R->pre = in;
        int rc = apply(R, nd->sub[s], sf, depth + 1, &sub);
        R->pre = NULL;
        if (rc == MP_OK) merge_into(sizes, sub.v, sub.n);
        mp_xfree(sub.v);
        if (rc) return rc;
    }
    return MP_OK;
}

/* ---------------------------------------------- PR #21818 (D14 fix) */

/* ExecuTorch PR #21818 (open): each control-flow node's sub-graph memory is
 * one region per buffer, live at the node (a cond's until its results'
 * last use, as MoveCall lets them escape), placed first-fit among the
 * regions of earlier nodes it is live with; its sub-graphs' offsets move by
 * the region's.  One region of a buffer: */
typedef struct region {
    int32_t start, end; /* inclusive node range */
    uint64_t offset, size;
} region;

typedef struct regions {
    region *v;
    uint32_t n, cap;
} regions;

static int cmp_region(const void *a, const void *b) {
    const region *x = a, *y = b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return (x->size > y->size) - (x->size < y->size);
}

/* _allocate_submodule_buffer: the lowest offset from 0 up, past the
 * regions live with [start, end] in offset order, where size fits. */
static uint64_t first_fit(regions *rs, int32_t start, int32_t end, uint64_t size) {
    region *live = mp_xmalloc(((size_t)rs->n + 1) * sizeof *live);
    uint32_t n = 0;
    for (uint32_t k = 0; k < rs->n; k++) /* Verifier.has_overlap: inclusive; an empty interval meets none */
        if (start <= end && rs->v[k].start <= rs->v[k].end && start <= rs->v[k].end && rs->v[k].start <= end)
            live[n++] = rs->v[k];
    qsort(live, n, sizeof *live, cmp_region);
    uint64_t at = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (at + size <= live[k].offset) break;
        if (live[k].offset + live[k].size > at) at = live[k].offset + live[k].size;
    }
    mp_xfree(live);
    region r = {start, end, at, size};
    MP_VEC_PUSH(rs->v, rs->n, rs->cap, r);
    return at;
}

/* _shift_submodule_allocations: every planned tensor of graph gi and of
 * each graph it runs (each once per call: seen) moves by delta[mem_id];
 * a spec in a buffer the node's sub-graphs did not size is ExecuTorch's
 * InternalError.  The graph's buffers stay what its planning said
 * (non_const_buffer_sizes), and reach as far as its tensors now do. */
static int shift_once(run *R, int32_t gi, const u64vec *delta, uint8_t *seen) {
    if (seen[gi]) return MP_OK;
    seen[gi] = 1;
    const mp_graphdef *g = &R->prog->graphs[gi];
    gstate *S = state_of(R, gi);
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        if (!S->planned[t]) continue;
        if (S->mem_id[t] >= delta->n)
            return mp_err_set(R->err, MP_EPLAN, "ExecuTorch (PR #21818) fails its assertion \"Missing submodule "
                              "buffer offset for mem_id %llu\" at tensor '%s' of graph '%s'",
                              (unsigned long long)S->mem_id[t], g->tensors[t].name, g->name);
        S->offset[t] += delta->v[S->mem_id[t]];
        if (S->mem_id[t] < S->n_bufs && S->offset[t] + S->size[t] > S->bufs[S->mem_id[t]])
            S->bufs[S->mem_id[t]] = S->offset[t] + S->size[t];
    }
    for (uint32_t i = 0; i < g->n_nodes; i++)
        for (int s = 0; s < 2 && g->nodes[i].sub[s] >= 0; s++) {
            int rc = shift_once(R, g->nodes[i].sub[s], delta, seen);
            if (rc) return rc;
        }
    return MP_OK;
}

/* The last node that uses a result of node i (i itself when none does
 * later): how long a control-flow node's outputs live, as both D14 fixes
 * read it. */
static int32_t outputs_last_use(run *R, int32_t gi, uint32_t i) {
    const mp_graphdef *g = &R->prog->graphs[gi];
    const mp_node *nd = &g->nodes[i];
    const gstate *S = state_of(R, gi);
    int32_t end = (int32_t)i;
    for (uint32_t k = 0; k < nd->n_out; k++)
        if (S->life.end[g->tensors[nd->out[k]].root] > end) end = S->life.end[g->tensors[nd->out[k]].root];
    return end;
}

static int plan_subgraphs_21818(run *R, int32_t gi, int depth, u64vec *merged) {
    const mp_graphdef *g = &R->prog->graphs[gi];
    regions *rs = NULL;
    uint32_t nrs = 0;
    uint8_t *seen = mp_xmalloc((size_t)R->prog->n_graphs + 1);
    int rc = MP_OK;
    for (uint32_t i = 0; i < g->n_nodes && rc == MP_OK; i++) { /* every kind, in node order */
        const mp_node *nd = &g->nodes[i];
        if (nd->sub[0] < 0) continue; /* only control-flow nodes run sub-graphs */
        u64vec sizes = {0};
        rc = plan_node(R, nd, depth, NULL, &sizes);
        if (rc == MP_OK && sizes.n > nrs) {
            rs = mp_xrealloc(rs, sizes.n * sizeof *rs);
            memset(rs + nrs, 0, (sizes.n - nrs) * sizeof *rs);
            nrs = sizes.n;
        }
        u64vec delta = {mp_xcalloc(sizes.n + 1, sizeof(uint64_t)), sizes.n};
        for (uint32_t b = 1; rc == MP_OK && b < sizes.n; b++) {
            if (!sizes.v[b]) continue;
            int32_t end = nd->kind == MP_NODE_COND ? outputs_last_use(R, gi, i) : (int32_t)i; /* a cond's region */
            delta.v[b] = first_fit(&rs[b], (int32_t)i, end, sizes.v[b]);
            uint64_t top;
            if (!mp_add_u64(delta.v[b], sizes.v[b], &top)) {
                rc = mp_err_limit(R->err, "graph '%s': a sub-graph region would end past 2^64", g->name);
                break;
            }
            if (merged->n <= b) { /* bufsizes.extend([0] * ...) */
                merged->v = mp_xrealloc(merged->v, (b + 1) * sizeof *merged->v);
                memset(merged->v + merged->n, 0, (b + 1 - merged->n) * sizeof *merged->v);
                merged->n = b + 1;
            }
            if (top > merged->v[b]) merged->v[b] = top;
        }
        for (int s = 0; rc == MP_OK && s < 2 && nd->sub[s] >= 0; s++) { /* each branch, the same one twice too */
            memset(seen, 0, R->prog->n_graphs);
            rc = shift_once(R, nd->sub[s], &delta, seen);
        }
        mp_xfree(delta.v);
        mp_xfree(sizes.v);
    }
    for (uint32_t b = 0; b < nrs; b++) mp_xfree(rs[b].v);
    mp_xfree(rs);
    mp_xfree(seen);
    return rc;
}

/* ---------------------------------------------- PR #21494 (D14 fix) */

/* ExecuTorch PR #21494 (open, competing with #21818): control-flow nodes
 * in node order; a node's sub-graphs are planned with a reservation (their
 * input_mem_buffer_sizes) of the memory of earlier conds and whiles whose
 * outputs are still live at it, and of the graph's own reservation, so
 * they start above it; branches of one node share.  One earlier node: */
typedef struct hop {
    u64vec eff; /* its memory: the reservation it got and its sub-graphs' */
    int32_t start, end;
} hop;

/* The graph module's input_mem_buffer_sizes attribute becomes v[0, n). */
static void ims_set(gstate *S, const uint64_t *v, uint32_t n) {
    mp_xfree(S->ims);
    S->ims = mp_xmalloc(((size_t)n + 1) * sizeof *S->ims);
    if (n) memcpy(S->ims, v, n * sizeof *S->ims);
    S->n_ims = n;
    S->has_ims = true;
}

static int plan_subgraphs_21494(run *R, int32_t gi, int depth, u64vec *merged) {
    const mp_graphdef *g = &R->prog->graphs[gi];
    const gstate *S = state_of(R, gi);
    /* parent_offset: this graph's attribute, which planning the nodes'
     * sub-graphs (other graphs) leaves as it is */
    u64vec parent = {S->has_ims ? S->ims : NULL, S->has_ims ? S->n_ims : 0};
    hop *hops = NULL;
    uint32_t nh = 0, ch = 0;
    int rc = MP_OK;
    for (uint32_t i = 0; i < g->n_nodes && rc == MP_OK; i++) {
        const mp_node *nd = &g->nodes[i];
        if (nd->sub[0] < 0) continue; /* only control-flow nodes run sub-graphs */
        bool arena = nd->kind == MP_NODE_COND || nd->kind == MP_NODE_WHILE; /* outputs in the sub-graph arena */
        int32_t end = outputs_last_use(R, gi, i); /* _hop_output_last_use */
        u64vec overlap = {0}, sizes = {0}, eff = {0};
        for (uint32_t k = 0; k < nh; k++)
            if ((int32_t)i <= hops[k].end) merge_into(&overlap, hops[k].eff.v, hops[k].eff.n);
        if (parent.n) merge_into(&overlap, parent.v, parent.n);
        rc = plan_node(R, nd, depth, overlap.n ? &overlap : NULL, &sizes);
        merge_into(&eff, overlap.v, overlap.n);
        merge_into(&eff, sizes.v, sizes.n);
        merge_into(merged, eff.v, eff.n);
        if (arena) {
            hop h = {eff, (int32_t)i, end};
            MP_VEC_PUSH(hops, nh, ch, h);
        } else {
            mp_xfree(eff.v);
        }
        mp_xfree(overlap.v);
        mp_xfree(sizes.v);
    }
    for (uint32_t k = 0; k < nh; k++) mp_xfree(hops[k].eff.v);
    mp_xfree(hops);
    return rc;
}

/* _apply_algo_to_submodules; the repaired mode also keeps each cond's
 * results apart from later sub-graphs (repair D14). */
static int plan_subgraphs(run *R, int32_t gi, int depth, u64vec *merged) {
    static const uint32_t kinds[] = {MP_NODE_COND, MP_NODE_WHILE, MP_NODE_MAP,
                                     MP_NODE_SCAN};
    if (R->o->et_exact && (R->o->et_upstream & MP_UPSTREAM_21818)) return plan_subgraphs_21818(R, gi, depth, merged);
    if (R->o->et_exact && (R->o->et_upstream & MP_UPSTREAM_21494)) return plan_subgraphs_21494(R, gi, depth, merged);
    const mp_graphdef *g = &R->prog->graphs[gi];
    const mp_escape *E = &state_of(R, gi)->keep;
    bool keep = !R->o->et_exact && E->any;
    u64vec *tops = keep ? mp_xcalloc(g->n_nodes + 1, sizeof *tops) : NULL;
    int rc = MP_OK;
    for (int k = 0; k < 4 && rc == MP_OK; k++) {
        esc_sweep w = {NULL, NULL, 0, 0}; /* conds first, in node order: each kind sweeps them again */
        for (uint32_t i = 0; i < g->n_nodes && rc == MP_OK; i++) {
            const mp_node *nd = &g->nodes[i];
            if (nd->kind != kinds[k]) continue;
            u64vec sizes = {0};
            rc = plan_node(R, nd, depth, NULL, &sizes);
            if (keep) esc_catch_up(R, &w, g, E, tops, i);
            if (rc == MP_OK && keep) rc = keep_results(R, gi, i, &w, &sizes);
            if (rc == MP_OK) merge_into(merged, sizes.v, sizes.n);
            if (keep) tops[i] = sizes;
            else mp_xfree(sizes.v);
        }
        esc_free(&w);
    }
    for (uint32_t i = 0; keep && i < g->n_nodes; i++) mp_xfree(tops[i].v);
    mp_xfree(tops);
    return rc;
}

/* Run the algorithm on one partition and record the results on the specs:
 * mem_id = local pool - 1 + base (ExecuTorch's remap). */
static int run_partition(run *R, int32_t gi, const int32_t *specs, uint32_t n,
                         const uint64_t *input, uint32_t n_input,
                         uint32_t base, ref_result *res) {
    const mp_graphdef *g = &R->prog->graphs[gi];
    gstate *S = &R->gs[gi];
    bool greedy = !R->naive;
    /* repair D14: an operand a cond result aliases keeps its bytes as long */
    const int32_t *end = R->o->et_exact ? S->life.end : S->keep.tensor_end;
    ref_part p = {g, specs, n, S->life.start, end, input, n_input,
                  greedy && mp_graph_has_xnnpack(g) ? 64 : 0, R->o->alignment,
                  R->o->et_exact, S->realigned, R->o->per_device && !R->o->et_exact,
                  R->o->et_exact ? R->o->et_upstream : 0, S->pos,
                  greedy && R->o->et_exact && (R->o->et_upstream & MP_UPSTREAM_21821) && R->o->banks.n
                      ? &R->o->banks : NULL};
    int rc = greedy ? mp_ref_greedy(&p, res, R->err) : mp_ref_naive(&p, res, R->err);
    if (rc) return rc;
    for (uint32_t i = 0; i < n; i++) {
        int32_t t = specs[i];
        S->planned[t] = 1;
        S->mem_id[t] = (uint64_t)res->pool[i] - 1 + base;
        S->obj[t] = res->obj[i];
        S->offset[t] = res->offset[i];
        S->size[t] = res->size[i];
    }
    return MP_OK;
}

/* One buffer more.  The arrays' capacity is the next power of two: they
 * grow when n reaches one (a table of 1,024 pools is 11 reallocations,
 * not 1,024). */
static void out_append(u64vec *out, mp_device **devs, uint64_t v, mp_device d) {
    if (!(out->n & (out->n - 1))) {
        size_t cap = out->n ? 2 * (size_t)out->n : 1;
        out->v = mp_xrealloc(out->v, cap * sizeof *out->v);
        *devs = mp_xrealloc(*devs, cap * sizeof **devs);
    }
    out->v[out->n] = v;
    (*devs)[out->n] = d;
    out->n++;
}

typedef struct device_pos {
    mp_device dev;
    uint32_t pos;
} device_pos;

static int cmp_device_pos(const void *a, const void *b) {
    const device_pos *x = a, *y = b;
    int c = mp_device_cmp(x->dev, y->dev);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* ExecuTorch's partition loop (and the single CPU partition without
 * --per-device): CPU:0 first with the reservation, then the other devices
 * in order, each appending its buffers. */
static int partitions_et(run *R, int32_t gi, bool per_dev, const int32_t *specs,
                         uint32_t n, const u64vec *merged, u64vec *out,
                         mp_device **devs) {
    const mp_graphdef *g = &R->prog->graphs[gi];
    /* specs sorted by (device in ExecuTorch's order, position): each run is
     * a partition, in spec order (n log n with 10^5 devices) */
    device_pos *by = mp_xmalloc((n + 1) * sizeof *by);
    for (uint32_t i = 0; i < n; i++) by[i] = (device_pos){per_dev ? g->tensors[specs[i]].device : CPU0, i};
    if (n && per_dev) qsort(by, n, sizeof *by, cmp_device_pos);
    int32_t *part = mp_xmalloc((n + 1) * sizeof *part);
    out_append(out, devs, 0, CPU0);
    int rc = MP_OK;
    /* without --per-device the one CPU partition runs even when empty */
    bool once = !per_dev;
    for (uint32_t at = 0; (at < n || once) && rc == MP_OK; once = false) {
        mp_device key = at < n ? by[at].dev : CPU0;
        uint32_t np = 0;
        for (; at < n && mp_device_eq(by[at].dev, key); at++) part[np++] = specs[by[at].pos];
        bool cpu = mp_device_eq(key, CPU0);
        ref_result res;
        rc = run_partition(R, gi, part, np, cpu ? merged->v : NULL,
                           cpu ? merged->n : 0, out->n, &res);
        for (uint32_t b = 1; rc == MP_OK && b < res.n_bufs; b++)
            out_append(out, devs, res.bufs[b], per_dev ? key : CPU0);
        mp_ref_result_free(&res);
    }
    if (rc == MP_OK && out->n < 2) out_append(out, devs, 0, CPU0);
    /* ExecuTorch records buffer devices (non_const_buffer_device) only when
     * some buffer is on a non-CPU device type, so cpu:N buffers read as
     * cpu:0 when every buffer is a CPU one (repair D11 keeps cpu:N). */
    bool non_cpu_type = false;
    for (uint32_t i = 0; rc == MP_OK && i < out->n; i++) non_cpu_type |= (*devs)[i].type != MP_DEV_CPU;
    if (R->o->et_exact && !non_cpu_type)
        for (uint32_t i = 0; rc == MP_OK && i < out->n; i++) (*devs)[i] = CPU0;
    mp_xfree(part);
    mp_xfree(by);
    return rc;
}

/* Each spec's (device, position), sorted: the table's slots are in device
 * order, so each slot's specs are one run, in spec order (the order
 * greedy's ties depend on), n log n with many devices; *len: the buffers
 * the graph needs. */
static device_pos *slot_specs(run *R, const mp_graphdef *g, const int32_t *specs, uint32_t n,
                              uint32_t *len) {
    device_pos *by = mp_xmalloc((n + 1) * sizeof *by);
    int32_t *roots = mp_inplace_roots(g, true);
    for (uint32_t i = 0; i < n; i++) {
        const mp_tensor *t = &g->tensors[specs[i]];
        int32_t k = mp_table_find(&R->table, t->device);
        if (k < 0) { /* mp_table_build registers every planned tensor */
            mp_err_set(R->err, MP_EPLAN, "internal: device of '%s' missing from the buffer table",
                       t->name);
            mp_xfree(roots);
            mp_xfree(by);
            return NULL;
        }
        uint32_t idx = R->table.slots[k].base + mp_pool_of(g, roots, specs[i]) - 1;
        if (idx + 1 > *len) *len = idx + 1;
        by[i] = (device_pos){t->device, i};
    }
    mp_xfree(roots);
    if (n) qsort(by, n, sizeof *by, cmp_device_pos);
    return by;
}

/* Repair D2, D7: with --per-device every graph is planned per device into
 * one program-wide buffer table, so a device's buffer has the same index in
 * every graph and every device partition gets its own reservation. */
static int partitions_table(run *R, int32_t gi, const int32_t *specs, uint32_t n,
                            const u64vec *merged, u64vec *out, mp_device **devs) {
    const mp_graphdef *g = &R->prog->graphs[gi];
    uint32_t len = merged->n > 2 ? merged->n : 2;
    device_pos *by = slot_specs(R, g, specs, n, &len);
    if (!by) return MP_EPLAN;
    for (uint32_t i = 0; i < len; i++) out_append(out, devs, i < merged->n ? merged->v[i] : 0, CPU0);
    out->v[0] = 0;
    int32_t *part = mp_xmalloc((n + 1) * sizeof *part);
    uint64_t *input = NULL;
    int rc = MP_OK;
    for (uint32_t k = 0, at = 0; k < R->table.n && rc == MP_OK; k++) {
        const mp_slot *d = &R->table.slots[k];
        for (uint32_t j = 0; j < d->pools && d->base + j < len; j++)
            (*devs)[d->base + j] = d->dev;
        uint32_t np = 0;
        for (; at < n && mp_device_eq(by[at].dev, d->dev); at++) part[np++] = specs[by[at].pos];
        if (!np) continue; /* its buffers keep the reservation */
        input = mp_xrealloc(input, (d->pools + 1) * sizeof *input);
        input[0] = 0;
        for (uint32_t j = 0; j < d->pools; j++)
            input[j + 1] = d->base + j < merged->n ? merged->v[d->base + j] : 0;
        ref_result res;
        rc = run_partition(R, gi, part, np, input, d->pools + 1, d->base, &res);
        for (uint32_t b = 1; rc == MP_OK && b < res.n_bufs; b++)
            if (d->base + b - 1 < len) out->v[d->base + b - 1] = res.bufs[b];
        mp_ref_result_free(&res);
    }
    mp_xfree(input);
    mp_xfree(part);
    mp_xfree(by);
    return rc;
}

static int apply(run *R, int32_t gi, mp_alloc_flags f, int depth, u64vec *ret) {
    const mp_graphdef *g = &R->prog->graphs[gi];
    if (depth > MP_MAX_DEPTH)
        return mp_err_set(R->err, MP_EPLAN,
                          "control flow nested deeper than %d levels at graph '%s'",
                          MP_MAX_DEPTH, g->name);
    R->work += 1 + g->n_tensors + g->n_nodes;
    if (R->work > R->work_limit)
        return mp_err_limit(R->err, "shared sub-graphs are re-planned too often: "
                          "ExecuTorch's recursion would plan over %llu tensors",
                          (unsigned long long)R->work_limit);
    gstate *S = state_of(R, gi);
    bool pr21494 = R->o->et_exact && (R->o->et_upstream & MP_UPSTREAM_21494);
    if (pr21494 && R->pre) ims_set(S, R->pre->v, R->pre->n); /* _handle_submodule sets the attribute */
    R->pre = NULL;
    int32_t *specs;
    uint32_t n = mp_life_planned(g, &S->life, f, &specs);
    u64vec merged = {0};
    int rc = plan_subgraphs(R, gi, depth, &merged);
    if (rc == MP_OK && pr21494) { /* effective: merged with the attribute, which then becomes it */
        if (S->has_ims && S->n_ims) merge_into(&merged, S->ims, S->n_ims);
        ims_set(S, merged.v, merged.n);
    }
    /* ExecuTorch plans sub-graphs without per-device partitioning (D7) */
    bool per_dev = R->o->per_device && (depth == 0 || !R->o->et_exact);
    /* ExecuTorch refuses pools with per-device partitions; the repaired
     * mode's buffer table gives every device its own pools instead */
    if (rc == MP_OK && per_dev && R->o->et_exact) rc = mp_check_pools_per_device(g, specs, n, R->err);
    u64vec out = {0};
    mp_device *devs = NULL;
    if (rc == MP_OK) {
        if (per_dev && !R->o->et_exact)
            rc = partitions_table(R, gi, specs, n, &merged, &out, &devs);
        else
            rc = partitions_et(R, gi, per_dev, specs, n, &merged, &out, &devs);
    }
    if (rc == MP_OK && pr21494 && R->naive) ims_set(S, out.v, out.n); /* naive grows the attribute's list in place */
    if (rc == MP_OK) {
        mp_xfree(S->bufs);
        mp_xfree(S->devs);
        S->bufs = out.v;
        S->devs = devs;
        S->n_bufs = out.n;
        ret->v = mp_xmalloc(out.n * sizeof *ret->v);
        memcpy(ret->v, out.v, out.n * sizeof *ret->v);
        ret->n = out.n;
    } else {
        mp_xfree(out.v);
        mp_xfree(devs);
    }
    mp_xfree(merged.v);
    mp_xfree(specs);
    return rc;
}

/* ----------------------------------------------------------- the result */

static void fill_block(const run *R, int32_t gi, mp_graph_plan *gp, mp_arena *A) {
    const mp_graphdef *g = &R->prog->graphs[gi];
    const gstate *S = &R->gs[gi];
    uint32_t n = 0;
    for (uint32_t t = 0; t < g->n_tensors; t++) n += S->planned[t];
    mp_block_start(gp, R->prog, (uint32_t)gi, S->bufs, S->devs, S->n_bufs, n, A);
    for (uint32_t t = 0; t < g->n_tensors; t++)
        if (S->planned[t])
            mp_block_add(gp, g, (int32_t)t, S->mem_id[t], S->obj[t], S->offset[t], S->size[t], &S->life);
    if (!R->o->et_exact) mp_add_frees(g, &S->life, gp, A); /* repair D8 */
}

static mp_plan *ref_plan(const mp_program *prog, const mp_options *o, bool naive, mp_err *err) {
    mp_err_clear(err);
    if (mp_check_alignment(o->alignment, err)) return NULL;
    uint32_t ng = prog->n_graphs;
    bool *reach = mp_xcalloc(ng, sizeof *reach);
    mp_graph_reachable(prog, reach);
    run R = {prog, o, err, mp_xcalloc(ng, sizeof(gstate)), mp_map_bodies(prog, reach),
             0, o->replan_limit ? o->replan_limit : 1000000, {NULL, 0}, naive, NULL, NULL};
    for (uint32_t gi = 0; gi < ng; gi++) {
        const mp_graphdef *g = &prog->graphs[gi];
        R.work_limit += 8ull * (1 + g->n_tensors + g->n_nodes);
    }
    if (o->per_device && !o->et_exact) {
        const mp_life **lives = mp_xcalloc(ng, sizeof *lives);
        for (uint32_t gi = 0; gi < ng; gi++)
            if (reach[gi]) lives[gi] = &state_of(&R, (int32_t)gi)->life;
        mp_table_build(&R.table, prog, o, reach, R.map_body, lives);
        mp_xfree(lives);
    }
    mp_alloc_flags f = {o->alloc_inputs, o->alloc_outputs, o->alloc_mutable};
    u64vec top = {0};
    int rc = o->et_exact ? MP_OK : mp_escape_check(prog, reach, err); /* repair D14 */
    if (rc == MP_OK) rc = apply(&R, 0, f, 0, &top);
    mp_xfree(top.v);
    mp_plan *plan = NULL;
    if (rc == MP_OK) {
        plan = mp_plan_new(o, naive ? "naive" : "greedy");
        mp_arena *A = plan->arena;
        uint32_t nb = 0;
        for (uint32_t gi = 0; gi < ng; gi++) nb += reach[gi];
        plan->graphs = mp_arena_alloc(A, (nb + 1) * sizeof *plan->graphs);
        for (uint32_t gi = 0; gi < ng; gi++)
            if (reach[gi]) fill_block(&R, (int32_t)gi, &plan->graphs[plan->n_graphs++], A);
    }
    for (uint32_t gi = 0; gi < ng; gi++) {
        gstate *S = &R.gs[gi];
        if (S->life_done) mp_life_free(&S->life), mp_escape_free(&S->keep);
        mp_xfree(S->realigned);
        mp_xfree(S->planned);
        mp_xfree(S->mem_id);
        mp_xfree(S->obj);
        mp_xfree(S->offset);
        mp_xfree(S->size);
        mp_xfree(S->pos);
        mp_xfree(S->bufs);
        mp_xfree(S->devs);
        mp_xfree(S->ims);
    }
    mp_xfree(R.gs);
    mp_xfree(R.map_body);
    mp_xfree(R.entry_mutable);
    mp_table_free(&R.table);
    mp_xfree(reach);
    return plan;
}

/* ExecuTorch's planners have no pinned offsets: a program with at= is
 * refused as beyond their limits (opt plans it). */
mp_plan *mp_ref_greedy_plan(const mp_program *prog, const mp_options *o, mp_err *err) {
    mp_err_clear(err);
    return mp_pins_refuse(prog, "greedy", err) ? NULL : ref_plan(prog, o, false, err);
}

mp_plan *mp_ref_naive_plan(const mp_program *prog, const mp_options *o, mp_err *err) {
    mp_err_clear(err);
    return mp_pins_refuse(prog, "naive", err) ? NULL : ref_plan(prog, o, true, err);
}
