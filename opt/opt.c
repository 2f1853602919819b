/* opt.c - the optimized planner (`--algo opt`): the semantics of the
 * repaired reference mode (same planned tensors, same buffer table, same
 * refusals, same file format) with a better layout.
 *
 * This file checks the graphs as the reference does, finds their shape
 * (children-first order, whether every sub-graph is run by one node) and
 * writes the plan; layout.c lays the buffers out (pack.c packs each).
 * A control-flow node's sub-graphs sit in one block live at that node
 * alone, so parent tensors dead there reuse its bytes.  That needs every
 * sub-graph to be run by one node only (a tree of graphs); when a graph is
 * shared, every sub-graph is reserved at offset 0 for its parent's whole
 * life instead, as ExecuTorch does.  Where a cond block can split
 * (split.c), the program is laid out with whole blocks and with split
 * ones and the smaller plan kept; the split layout goes first where it
 * can rule the whole blocks out before their refinement (split_first).
 * On small programs the planner also runs the reference greedy and keeps
 * whichever plan needs fewer bytes, so it never does worse. */
#include "opt_internal.h"

#include <stdio.h>

#define OPT_SMALL_GRAPH 1024 /* tensors + nodes of a graph whose arrays come from the arena */


/* ------------------------------------------------------------- checks */

/* The reference's in-place rules: the base (through views) is planned in
 * the same partition, the chain is no cycle, the tensor is no larger.  A
 * base on another device (--per-device) starts a family of its own
 * (mp_inplace_cut). */
static int check_inplace(octx *c, uint32_t gi) {
    ograph *G = &c->g[gi];
    const mp_graphdef *g = &c->prog->graphs[gi];
    for (uint32_t t = 0; t < g->n_tensors; t++) G->family[t] = (int32_t)t;
    if (!mp_graph_has_inplace(g)) return MP_OK; /* each its own family (most small graphs) */
    for (uint32_t i = 0; i < G->n_specs; i++) {
        int32_t t = G->specs[i];
        const mp_tensor *x = &g->tensors[t];
        if (x->inplace_base < 0 || mp_inplace_cut(g, t, c->o->per_device)) continue;
        int32_t b = g->tensors[x->inplace_base].root;
        if (!G->planned[b])
            return mp_err_set(c->err, MP_EPLAN,
                              "in-place tensor '%s': its base '%s' is not planned here, or "
                              "the in-place chain is a cycle", x->name,
                              g->tensors[x->inplace_base].name);
        if (mp_inplace_fits(g, t, G->asize[t], G->asize[b], 0, c->o->alignment, c->err)) return c->err->code;
    }
    int32_t *roots = mp_inplace_roots(g, c->o->per_device); /* chains to their roots */
    for (uint32_t i = 0; i < G->n_specs; i++) {
        int32_t t = G->specs[i], r = roots[t];
        if (r < 0) {
            mp_xfree(roots);
            return mp_err_set(c->err, MP_EPLAN,
                              "in-place tensor '%s': its base '%s' is not planned here, "
                              "or the in-place chain is a cycle", g->tensors[t].name,
                              g->tensors[g->tensors[t].inplace_base].name);
        }
        G->family[t] = r;
    }
    mp_xfree(roots);
    uint64_t *shift = mp_inplace_shifts(g, c->o->per_device); /* members above their root (offset=) */
    if (shift) {
        G->shift = mp_og_alloc(G, g->n_tensors * sizeof *G->shift, false);
        memcpy(G->shift, shift, g->n_tensors * sizeof *G->shift);
        mp_xfree(shift);
    }
    return MP_OK;
}

/* The specs of each buffer (a counting sort, spec order kept within a
 * buffer) and the nodes that run sub-graphs. */
static void index_graph(ograph *G, const mp_graphdef *g) {
    uint32_t nb = 0;
    for (uint32_t i = 0; i < G->n_specs; i++)
        if ((uint32_t)G->bidx[G->specs[i]] + 1 > nb) nb = (uint32_t)G->bidx[G->specs[i]] + 1;
    G->buf_specs = mp_og_alloc(G, (G->n_specs + 1) * sizeof *G->buf_specs, false);
    mp_opt_index_buffers(G, nb);
    G->cf_nodes = mp_og_alloc(G, (g->n_nodes + 1) * sizeof *G->cf_nodes, false);
    G->n_cf = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].sub[0] >= 0) G->cf_nodes[G->n_cf++] = i;
    G->slot = mp_og_alloc(G, (g->n_tensors + 1) * sizeof *G->slot, false);
    for (uint32_t t = 0; t < g->n_tensors; t++) G->slot[t] = -1;
    G->time = mp_graph_times(g);
    if (G->time && G->time[g->n_nodes] > (UINT64_C(1) << 30)) {
        mp_xfree(G->time);
        G->time = NULL;
    }
}

static int prepare(octx *c, uint32_t gi) {
    ograph *G = &c->g[gi];
    const mp_graphdef *g = &c->prog->graphs[gi];
    uint32_t n = g->n_tensors + 1;
    if (!G->have_life) mp_life_compute(g, &G->life);
    G->have_life = G->done = true;
    G->arena = (uint64_t)g->n_tensors + g->n_nodes <= OPT_SMALL_GRAPH ? c->small : NULL;
    G->specs = mp_og_alloc(G, (G->life.n_order + 1) * sizeof *G->specs, false);
    G->n_specs = mp_life_planned_into(g, &G->life, mp_context_flags(c->o, gi, c->map_body), G->specs);
    G->planned = mp_og_alloc(G, n, true);
    G->family = mp_og_alloc(G, n * sizeof *G->family, false);
    G->asize = mp_og_alloc(G, n * sizeof *G->asize, true);
    G->bidx = mp_og_alloc(G, n * sizeof *G->bidx, true);
    G->loff = mp_og_alloc(G, n * sizeof *G->loff, true);
    G->block = mp_og_alloc(G, (g->n_nodes + 1) * sizeof *G->block, true);
    G->xnnpack = mp_graph_has_xnnpack(g);
    for (uint32_t i = 0; i < G->n_specs; i++) {
        int32_t t = G->specs[i];
        G->planned[t] = 1;
        G->asize[t] = mp_ref_align_exact(g->tensors[t].size, c->o->alignment);
        G->bidx[t] = (uint32_t)mp_table_index(&c->table, c->o, &g->tensors[t]);
    }
    int rc = check_inplace(c, gi); /* pools per device: the table gives each device its own */
    for (uint32_t i = 0; rc == MP_OK && i < G->n_specs; i++) {
        int32_t t = G->specs[i];
        G->bidx[t] = G->bidx[G->family[t]]; /* an in-place tensor lives in its base's pool */
    }
    if (rc == MP_OK) index_graph(G, g);
    return rc;
}

/* -------------------------------------------------------- graph shape */

/* Reachable graphs, children first; also the deepest nesting. */
static int32_t *postorder(const octx *c, uint32_t *count, uint32_t *depth) {
    uint32_t ng = c->prog->n_graphs;
    int32_t *order = mp_xmalloc((ng + 1) * sizeof *order);
    uint32_t *height = mp_xcalloc(ng + 1, sizeof *height);
    *count = mp_graphs_children_first(c->prog, c->reach, order, height);
    *depth = height[0] ? height[0] - 1 : 0;
    mp_xfree(height);
    return order;
}

/* -------------------------------------------------------------- output */

/* The device of global buffer b: the slot whose pools hold it (slots'
 * bases increase, so a binary search). */
static mp_device device_of(const octx *c, uint32_t b) {
    uint32_t lo = 0, hi = c->table.n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const mp_slot *s = &c->table.slots[mid];
        if (b < s->base) hi = mid;
        else if (b >= s->base + s->pools) lo = mid + 1;
        else return s->dev;
    }
    return (mp_device){MP_DEV_CPU, 0};
}

/* Graph gi's buffer ends (bufs) and devices as its plan block lists them;
 * has: zeroed scratch of n_buf + 1 bytes. */
static void graph_bufs(const octx *c, uint32_t gi, uint64_t *bufs, mp_device *devs, uint8_t *has) {
    const ograph *G = &c->g[gi];
    for (uint32_t i = 0; i < G->n_specs; i++) has[G->bidx[G->specs[i]]] = 1; /* zero-size ones too */
    for (uint32_t b = 0; b < G->n_buf; b++) {
        devs[b] = b ? device_of(c, b) : (mp_device){MP_DEV_CPU, 0};
        bufs[b] = b && (G->local[b] || has[b]) ? G->base[b] + G->local[b] : 0;
        if (b && G->esc && G->local[b] > G->split[b]) { /* two regions (split.c): the higher end */
            uint64_t rest = G->base[b] + G->split[b], esc = G->ebase[b] + G->local[b];
            bufs[b] = rest > esc ? rest : esc;
        }
    }
}

/* The scratch of graph_bufs and fill_block in one block (bufs, next,
 * devs, has): a program of many small sub-graphs fills one per graph. */
static uint64_t *bufs_scratch(const ograph *G, uint64_t **next, mp_device **devs, uint8_t **has) {
    size_t nb = (size_t)G->n_buf + 1;
    uint64_t *bufs = mp_xcalloc(1, nb * (2 * sizeof *bufs + sizeof(mp_device) + 1));
    *next = bufs + nb;
    *devs = (mp_device *)(void *)(*next + nb);
    *has = (uint8_t *)(*devs + nb);
    return bufs;
}

static void fill_block(const octx *c, uint32_t gi, mp_graph_plan *gp, mp_arena *A) {
    const ograph *G = &c->g[gi];
    const mp_graphdef *g = &c->prog->graphs[gi];
    uint64_t *next;
    mp_device *devs;
    uint8_t *has;
    uint64_t *bufs = bufs_scratch(G, &next, &devs, &has);
    graph_bufs(c, gi, bufs, devs, has);
    mp_block_start(gp, c->prog, gi, bufs, devs, G->n_buf, G->n_specs, A);
    int64_t small[32]; /* most sub-graphs of a program of many have a few tensors */
    int64_t *obj = g->n_tensors < 32 ? small : mp_xmalloc((g->n_tensors + 1) * sizeof *obj);
    for (uint32_t t = 0; t < g->n_tensors; t++) obj[t] = -1;
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        if (!G->planned[t]) continue;
        int32_t r = G->family[t];
        uint32_t b = (uint32_t)G->bidx[t];
        if (obj[r] < 0) obj[r] = (int64_t)next[b]++;
        uint64_t base = G->esc && G->esc[r] ? G->ebase[b] : G->base[b];
        mp_block_add(gp, g, (int32_t)t, b, (uint64_t)obj[r], base + G->loff[t], G->asize[t],
                     &G->life);
    }
    mp_xfree(bufs);
    if (obj != small) mp_xfree(obj);
    mp_add_frees(g, &G->life, gp, A);
}

static mp_plan *build_plan(const octx *c) {
    mp_plan *plan = mp_plan_new(c->o, c->algo_name);
    mp_arena *A = plan->arena;
    uint32_t nb = 0;
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++) nb += c->reach[gi];
    plan->graphs = mp_arena_alloc(A, (nb + 1) * sizeof *plan->graphs);
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++)
        if (c->reach[gi]) fill_block(c, gi, &plan->graphs[plan->n_graphs++], A);
    if (c->notes.len) plan->notes = mp_arena_strndup(A, c->notes.data, c->notes.len);
    return plan;
}

/* ------------------------------------------------------------- driver */

static void free_ctx(octx *c) {
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++) {
        ograph *G = &c->g[gi];
        if (G->have_life) mp_life_free(&G->life), mp_escape_free(&G->keep);
        if (!G->done) continue;
        mp_xfree(G->time);
        if (G->arena) continue; /* the rest freed with c->small */
        void *own[] = {G->specs, G->planned, G->family, G->asize, G->bidx, G->loff, G->local, G->base, G->lb,
                       G->hlb, G->tlb, G->full, G->buf_start, G->buf_specs, G->cf_nodes, G->slot, G->esc,
                       G->split, G->ebase, G->shift};
        for (size_t k = 0; k < sizeof own / sizeof *own; k++) mp_xfree(own[k]);
        for (uint32_t i = 0; i < c->prog->graphs[gi].n_nodes; i++)
            if (G->block[i]) mp_xfree(G->block[i]); /* few nodes have one */
        mp_xfree(G->block);
    }
    mp_arena_free(c->small);
    mp_xfree(c->g);
    mp_xfree(c->reach);
    mp_xfree(c->map_body);
    mp_table_free(&c->table);
    mp_buf_free(&c->notes);
}

/* mp_plan_total_bytes of the plan plan_of would build now, without
 * building it: the entry graph's buffer ends, summed (UINT64_MAX past 64
 * bits); bases placed.  A split plan no smaller than the whole blocks'
 * is never built (at `deep`-10^6, 333,000 graph blocks). */
static uint64_t entry_total(octx *c, const int32_t *order, uint32_t n) {
    mp_opt_place_bases(c, order, n);
    uint64_t *next, total = 0;
    mp_device *devs;
    uint8_t *has;
    uint64_t *bufs = bufs_scratch(&c->g[0], &next, &devs, &has);
    graph_bufs(c, 0, bufs, devs, has);
    for (uint32_t b = 0; b < c->g[0].n_buf && total != UINT64_MAX; b++)
        if (!mp_add_u64(total, bufs[b], &total)) total = UINT64_MAX;
    mp_xfree(bufs);
    return total;
}

/* Every buffer of the entry graph at its true bound (layout.c's tlb). */
static bool at_true_bound(const octx *c) {
    const ograph *G = &c->g[0];
    for (uint32_t b = 1; b < G->n_buf; b++)
        if (G->local[b] > G->tlb[b]) return false;
    return true;
}

/* The context of one plan: the graphs reached, their lifetimes and what
 * cond results keep, the buffer table, each graph prepared; *order: the
 * graphs children first. */
static int open_ctx(octx *c, const mp_program *prog, const mp_options *o, int32_t **order, uint32_t *n_order) {
    uint32_t ng = prog->n_graphs;
    c->pins = mp_pins_first(prog) >= 0;
    c->reach = mp_xcalloc(ng + 1, sizeof *c->reach);
    mp_graph_reachable(prog, c->reach);
    c->map_body = mp_map_bodies(prog, c->reach);
    c->g = mp_xcalloc(ng + 1, sizeof *c->g);
    c->small = mp_arena_new();
    const mp_life **lives = mp_xcalloc(ng + 1, sizeof *lives);
    for (uint32_t gi = 0; gi < ng; gi++)
        if (c->reach[gi]) {
            mp_life_compute(&prog->graphs[gi], &c->g[gi].life);
            mp_escape_compute(prog, &prog->graphs[gi], c->g[gi].life.end, &c->g[gi].keep);
            c->g[gi].have_life = true;
            lives[gi] = &c->g[gi].life;
        }
    mp_table_build(&c->table, prog, o, c->reach, c->map_body, lives);
    mp_xfree(lives);
    uint32_t depth;
    *order = postorder(c, n_order, &depth);
    int rc = MP_OK;
    if (depth > MP_MAX_DEPTH)
        rc = mp_err_set(c->err, MP_EPLAN, "control flow nested deeper than %d levels", MP_MAX_DEPTH);
    if (rc == MP_OK) rc = mp_escape_check(prog, c->reach, c->err); /* as the reference refuses */
    for (uint32_t k = 0; k < *n_order && rc == MP_OK; k++) {
        rc = prepare(c, (uint32_t)(*order)[k]);
        c->total_items += c->g[(*order)[k]].n_specs + prog->graphs[(*order)[k]].n_nodes;
        c->total_specs += c->g[(*order)[k]].n_specs;
    }
    c->tree = mp_graphs_tree(prog, c->reach);
    c->work_total = (uint64_t)o->budget_ms * PK_WORK_PER_MS;
    return rc;
}

/* The plan of c's layout as it stands. */
static mp_plan *plan_of(octx *c, const int32_t *order, uint32_t n) {
    mp_opt_place_bases(c, order, n);
    if (c->o->exact) mp_opt_exact_status(c);
    return build_plan(c);
}

/* Split cond blocks (split.c), where one can split and the plan of whole
 * blocks is not at its true bound; the smaller plan kept, the whole
 * blocks' on a tie.  Split blocks free all of a branch's memory but its
 * results after the cond, at the cost of keeping those apart in the
 * branch, which is more where they shared bytes with the rest.  Not with
 * a memory map: its spill moved tensors between banks. */
static mp_plan *try_split(octx *c, const int32_t *order, uint32_t n, mp_opt_effort effort, mp_plan *whole) {
    if (!c->splittable || c->o->banks.n || at_true_bound(c)) return whole;
    c->notes.len = 0; /* --exact's notes and counts: the split layout's */
    memset(c->exact_outcomes, 0, sizeof c->exact_outcomes);
    c->exact_best = c->exact_bound = 0;
    if (mp_opt_layout_split(c, order, n, effort) != MP_OK) { /* past 64 bits: the whole blocks' */
        mp_err_clear(c->err);
        return whole;
    }
    if (entry_total(c, order, n) >= mp_plan_total_bytes(whole)) return whole;
    mp_plan *split = plan_of(c, order, n);
    if (mp_plan_total_bytes(split) < mp_plan_total_bytes(whole)) {
        mp_plan_free(whole);
        return split;
    }
    mp_plan_free(split);
    return whole;
}

/* The bytes no layout with whole cond blocks can go below: the entry's
 * buffers at the bound with every sub-graph at its own (hlb; a layout's
 * buffer is at least its live bytes, a sub-graph's block at least its
 * bound); with `any` the bound of every layout, split blocks too (tlb:
 * a block live at its node alone).  0 past 64 bits. */
static uint64_t entry_bound(const octx *c, bool any) {
    uint64_t total = 0;
    for (uint32_t b = 1; b < c->g[0].n_buf; b++)
        if (!mp_add_u64(total, any ? c->g[0].tlb[b] : c->g[0].hlb[b], &total)) return 0;
    return total;
}

/* The whole blocks' layout resumed after their quick layouts: refined
 * at lazy effort (at quick effort that was all of it). */
static mp_opt_first resume(octx *c, mp_opt_effort effort, mp_opt_first why, int *rc) {
    if (effort == MP_OPT_LAZY) *rc = mp_opt_refine_entry(c);
    return why;
}

/* Trying the split layout first costs a mark, a snapshot and a quick
 * layout for each graph a split changes.  On very many tiny graphs that is
 * more than the whole blocks' refinement it can save, which lays out a
 * graph of a few tensors about as fast as a quick layout does (`deep`-10^6:
 * 333,000 changed graphs of 2 planned tensors, 8% slower with the try). */
#define FIRST_MANY_GRAPHS 4096
#define FIRST_TINY_GRAPH 16 /* planned tensors, on average */

static bool worth_trying(const octx *c, const uint8_t *dirty) {
    uint64_t graphs = 0, specs = 0;
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++)
        if (dirty[gi]) graphs++, specs += c->g[gi].n_specs;
    return graphs <= FIRST_MANY_GRAPHS || specs >= graphs * FIRST_TINY_GRAPH;
}

/* The split layout, below every whole-block layout's bound, refined and
 * planned (*plan); restarted where the refinement ends above it. */
static mp_opt_first plan_split(octx *c, const int32_t *order, uint32_t n, mp_opt_effort effort, uint64_t bound,
                               mp_plan **plan, int *rc) {
    if (effort == MP_OPT_LAZY) *rc = mp_opt_refine_entry(c);
    if (*rc != MP_OK || entry_total(c, order, n) >= bound) return MP_OPT_FIRST_RESTARTED;
    *plan = plan_of(c, order, n);
    return MP_OPT_FIRST_PLANNED;
}

/* The split layout tried before the whole blocks' refinement (lazy
 * effort).  The whole blocks get quick layouts (the first half of their
 * lazy layout; at the true bound that is all of it).  Where a split
 * layout may go below the bound of any whole-block layout, the graphs a
 * split changes are laid out split, quickly, and when that is below the
 * bound the whole blocks cannot win: the split layout is refined and,
 * still below it, planned (*plan: at `mixed`-10^6 the whole blocks'
 * refinement and plan were 40% of the planning).  Otherwise the whole
 * blocks' quick layouts are put back and their lazy layout resumes: the
 * same layout as when they come first, so the same plan.  A refinement
 * that ends above the bound (sub-graphs laid out otherwise than after the
 * whole blocks' refinement) means planning again, whole blocks first. */
static mp_opt_first whole_then_split(octx *c, const int32_t *order, uint32_t n, mp_opt_effort effort,
                                     mp_plan **plan, int *rc) {
    *rc = mp_opt_layout_graphs(c, order, n, MP_OPT_QUICK, NULL);
    if (*rc != MP_OK || at_true_bound(c)) return MP_OPT_FIRST_AT_BOUND; /* nothing to refine */
    uint64_t bound = entry_bound(c, false);
    if (entry_bound(c, true) >= bound) return resume(c, effort, MP_OPT_FIRST_NO_GAIN, rc);
    uint8_t *dirty = mp_opt_split_marks(c, order, n);
    if (!worth_trying(c, dirty)) {
        mp_xfree(dirty);
        mp_opt_unsplit(c);
        return resume(c, effort, MP_OPT_FIRST_NO_GAIN, rc);
    }
    mp_opt_snapshot *saved = mp_opt_snapshot_take(c, dirty);
    int src = mp_opt_layout_graphs(c, order, n, MP_OPT_QUICK, dirty);
    mp_xfree(dirty);
    if (src == MP_OK && entry_total(c, order, n) < bound) {
        mp_opt_snapshot_free(saved);
        return plan_split(c, order, n, effort, bound, plan, rc);
    }
    mp_err_clear(c->err); /* a split layout past 64 bits: the whole blocks' */
    mp_opt_snapshot_restore(c, saved);
    return resume(c, effort, MP_OPT_FIRST_RESUMED, rc);
}

/* Whether every planned byte of the program sums below 2^62: then no
 * layout or bound of any graph wraps, and a graph's bounds tell exactly
 * whether its layout is empty (mp_opt_bound_graphs). */
static bool sums_small(const octx *c) {
    uint64_t total = 0;
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++)
        for (uint32_t k = 0; c->reach[gi] && k < c->g[gi].n_specs; k++)
            if (!mp_add_u64(total, c->g[gi].asize[c->g[gi].specs[k]], &total)) return false;
    return total < (UINT64_C(1) << 62);
}

/* The graphs a split changes, where split_first can bound them without
 * laying them out; NULL where it cannot.  At most 4,096 graphs: those are
 * always worth trying (worth_trying), and on `many-conds`-10^6 (285,000
 * graphs) this path, with the split marked first as it then was, made
 * opt 10% slower. */
static uint8_t *boundable(octx *c, const int32_t *order, uint32_t n) {
    if (n > FIRST_MANY_GRAPHS) return NULL;
    uint8_t *dirty = mp_opt_split_changes(c, order, n);
    if (dirty[0] && !c->pins && sums_small(c)) return dirty;
    mp_xfree(dirty);
    return NULL;
}

/* split_first without the whole blocks' quick layouts of the graphs a
 * split changes: their bounds come from their items alone, so that where
 * the split layout is planned first those layouts are never made, and
 * nothing needs putting back.  Where the whole blocks are needed after
 * all they are laid out then, from the same layouts of the other graphs,
 * so every outcome and plan is whole_then_split's.  Not with pins (the
 * entry's layout checks them), sums near 64 bits, or very many graphs. */
static mp_opt_first split_first(octx *c, const int32_t *order, uint32_t n, mp_opt_effort effort, mp_plan **plan,
                                int *rc) {
    uint8_t *dirty = boundable(c, order, n);
    if (!dirty) return whole_then_split(c, order, n, effort, plan, rc);
    mp_opt_first why = MP_OPT_FIRST_NO_GAIN;
    *rc = mp_opt_bound_graphs(c, order, n, dirty);
    uint64_t bound = entry_bound(c, false);
    if (*rc == MP_OK && entry_bound(c, true) < bound) { /* a split may win: not at the true bound either */
        mp_xfree(mp_opt_split_marks(c, order, n));
        int src = mp_opt_layout_graphs(c, order, n, MP_OPT_QUICK, dirty);
        if (src == MP_OK && entry_total(c, order, n) < bound) {
            mp_xfree(dirty);
            return plan_split(c, order, n, effort, bound, plan, rc);
        }
        mp_err_clear(c->err); /* a split layout past 64 bits: the whole blocks' */
        mp_opt_unsplit(c);
        why = MP_OPT_FIRST_RESUMED;
    }
    if (*rc == MP_OK) *rc = mp_opt_layout_graphs(c, order, n, MP_OPT_QUICK, dirty); /* the whole blocks' */
    mp_xfree(dirty);
    if (*rc != MP_OK || (why == MP_OPT_FIRST_NO_GAIN && at_true_bound(c))) return MP_OPT_FIRST_AT_BOUND;
    return resume(c, effort, why, rc);
}

/* Whether split_first applies: opt's own packer at lazy or quick effort
 * (full effort and --exact lay every graph out in full anyway) on a tree
 * of graphs where a cond block can split, without a memory map.  At
 * quick effort (tests) nothing is refined, so its plans show any layout
 * the snapshot failed to put back. */
static bool split_first_applies(const octx *c, mp_opt_effort effort) {
    return effort != MP_OPT_FULL && !c->pack && !c->o->exact && !c->o->banks.n && c->tree && c->splittable;
}

/* The program planned by opt's driver: every buffer laid out by `pack`
 * (NULL: opt's own packer, with `effort`).  NULL with err set when the
 * program cannot be planned.  first: NULL, the whole blocks first;
 * else split_first where it applies, and what it did. */
static mp_plan *drive(const mp_program *prog, const mp_options *o, mp_opt_effort effort,
                      pk_packer pack, const char *algo_name, mp_opt_first *first, mp_err *err) {
    mp_opt_first found = MP_OPT_FIRST_NOT_TRIED;
    if (first) *first = found;
    mp_err_clear(err);
    if (mp_check_alignment(o->alignment, err)) return NULL;
    octx c = {.prog = prog, .o = o, .err = err, .pack = pack, .algo_name = algo_name};
    int32_t *order = NULL;
    uint32_t n_order = 0;
    mp_plan *plan = NULL;
    int rc = open_ctx(&c, prog, o, &order, &n_order);
    if (rc == MP_OK) mp_opt_prepare_layout(&c, order, n_order);
    if (rc == MP_OK && first && split_first_applies(&c, effort)) found = split_first(&c, order, n_order, effort, &plan, &rc);
    else if (rc == MP_OK) rc = mp_opt_layout_graphs(&c, order, n_order, effort, NULL);
    if (found != MP_OPT_FIRST_PLANNED && found != MP_OPT_FIRST_RESTARTED) {
        if (rc == MP_OK && o->banks.n) rc = mp_opt_spill(&c); /* a memory map: fill and spill */
        plan = rc == MP_OK ? plan_of(&c, order, n_order) : NULL;
        if (plan) plan = try_split(&c, order, n_order, effort, plan);
    }
    mp_xfree(order);
    free_ctx(&c);
    if (first) *first = found;
    if (found == MP_OPT_FIRST_RESTARTED) return drive(prog, o, effort, pack, algo_name, NULL, err);
    return plan;
}

/* opt's own layout: no candidate of another planner's beside it (the
 * portfolio, api/portfolio.c, adds the reference greedy around it). */
mp_plan *mp_opt_plan_effort(const mp_program *prog, const mp_options *o, mp_opt_effort effort,
                            mp_err *err) {
    mp_opt_first first;
    return drive(prog, o, effort, NULL, "opt", &first, err);
}

/* The (graph, buffer) bounds of `dirty` graphs that differ between
 * mp_opt_bound_graphs and the whole blocks' quick layouts. */
static uint32_t bounds_differ(octx *c, const int32_t *order, uint32_t n, const uint8_t *dirty) {
    size_t total = 0, at = 0;
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++) total += dirty[gi] ? c->g[gi].n_buf : 0;
    uint64_t *saved = mp_xmalloc((2 * total + 1) * sizeof *saved);
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++)
        for (uint32_t b = 0; dirty[gi] && b < c->g[gi].n_buf; b++)
            saved[at++] = c->g[gi].hlb[b], saved[at++] = c->g[gi].tlb[b];
    uint32_t differ = mp_opt_layout_graphs(c, order, n, MP_OPT_QUICK, NULL) == MP_OK ? 0 : 1;
    at = 0;
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++)
        for (uint32_t b = 0; dirty[gi] && b < c->g[gi].n_buf; b++, at += 2)
            differ += saved[at] != c->g[gi].hlb[b] || saved[at + 1] != c->g[gi].tlb[b];
    mp_xfree(saved);
    return differ;
}

int mp_opt_bounds_check(const mp_program *prog, const mp_options *o, mp_err *err) {
    octx c = {.prog = prog, .o = o, .err = err, .algo_name = "opt"};
    int32_t *order = NULL;
    uint32_t n = 0;
    int result = -1;
    if (open_ctx(&c, prog, o, &order, &n) == MP_OK) {
        mp_opt_prepare_layout(&c, order, n);
        uint8_t *dirty = split_first_applies(&c, MP_OPT_LAZY) ? boundable(&c, order, n) : NULL;
        if (dirty && mp_opt_bound_graphs(&c, order, n, dirty) == MP_OK) result = (int)bounds_differ(&c, order, n, dirty);
        mp_xfree(dirty);
    }
    mp_xfree(order);
    free_ctx(&c);
    return result;
}

mp_plan *mp_opt_plan_order(const mp_program *prog, const mp_options *o, mp_opt_effort effort, bool split_first,
                           mp_opt_first *first, mp_err *err) {
    mp_plan *plan = drive(prog, o, effort, NULL, "opt", split_first ? first : NULL, err);
    if (!split_first) *first = MP_OPT_FIRST_NOT_TRIED;
    return plan;
}

mp_plan *mp_opt_plan(const mp_program *prog, const mp_options *o, mp_err *err) {
    return mp_opt_plan_effort(prog, o, MP_OPT_LAZY, err);
}

mp_plan *mp_opt_plan_packed(const mp_program *prog, const mp_options *o, pk_packer pack,
                            const char *algo_name, mp_err *err) {
    return drive(prog, o, MP_OPT_FULL, pack, algo_name, NULL, err);
}
