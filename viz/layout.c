/* layout.c - a plan laid out in (node, byte) space.
 *
 * The SVG draws every graph on the entry graph's time axis: entry node i
 * is the column [i, i + 1); a control-flow node's sub-graphs share its
 * column, one slot each (cond: true | false, while: cond | body), and a
 * sub-graph's own nodes split its slot evenly, recursively.  The trace
 * keeps each graph on its own axis and needs instead, per control-flow
 * node, the byte range each sub-graph's memory spans (hulls). */
#include "viz.h"

int32_t *mp_viz_block_index(const mp_program *prog, const mp_plan *plan) {
    int32_t *bo = mp_xmalloc((prog->n_graphs + 1) * sizeof *bo);
    for (uint32_t g = 0; g <= prog->n_graphs; g++) bo[g] = -1; /* one spare: never read past */
    for (uint32_t k = plan->n_graphs; k-- > 0;) {
        int32_t g = plan->graphs[k].graph;
        if (g >= 0 && (uint32_t)g < prog->n_graphs) bo[g] = (int32_t)k; /* first wins */
    }
    return bo;
}

mp_device mp_viz_alloc_device(const mp_program *prog, const mp_graph_plan *gp, const mp_alloc *a) {
    if (gp->graph >= 0 && (uint32_t)gp->graph < prog->n_graphs && a->tensor >= 0 &&
        (uint32_t)a->tensor < prog->graphs[gp->graph].n_tensors)
        return prog->graphs[gp->graph].tensors[a->tensor].device;
    if (a->mem_id < gp->n_devices) return gp->devices[a->mem_id];
    return (mp_device){MP_DEV_CPU, 0};
}

const char *mp_viz_alloc_op(const mp_program *prog, int32_t graph, const mp_alloc *a, int32_t *node) {
    *node = -1;
    if (graph < 0 || (uint32_t)graph >= prog->n_graphs) return NULL;
    const mp_graphdef *g = &prog->graphs[graph];
    if (a->tensor < 0 || (uint32_t)a->tensor >= g->n_tensors) return NULL;
    *node = g->tensors[a->tensor].def_node;
    return *node >= 0 ? g->nodes[*node].op : NULL;
}

void mp_viz_alloc_life(const mp_alloc *a, uint32_t n_nodes, int32_t *s, int32_t *e) {
    int64_t lo = a->life_start < a->life_end ? a->life_start : a->life_end;
    int64_t hi = a->life_start < a->life_end ? a->life_end : a->life_start;
    int64_t last = n_nodes ? (int64_t)n_nodes - 1 : 0;
    *s = (int32_t)(lo < 0 ? 0 : lo > last ? last : lo);
    *e = (int32_t)(hi < 0 ? 0 : hi > last ? last : hi);
}

const char *mp_viz_sub_role(uint32_t kind, int k) {
    if (kind == MP_NODE_COND) return k == 0 ? "true" : "false";
    if (kind == MP_NODE_WHILE) return k == 0 ? "cond" : "body";
    return "body";
}

typedef struct lctx {
    const mp_program *prog;
    const mp_plan *plan;
    viz_layout *L;
    bool *onstack;
} lctx;

static void place(lctx *c, viz_instance in) {
    viz_layout *L = c->L;
    if (L->n >= VIZ_MAX_ITEMS) {
        L->truncated = true;
        return;
    }
    MP_VEC_PUSH(L->inst, L->ni, L->icap, in);
    const mp_graphdef *g = &c->prog->graphs[in.graph];
    uint32_t m = g->n_nodes ? g->n_nodes : 1;
    double step = in.w / m;
    int32_t k = L->block_of[in.graph];
    if (k >= 0) {
        const mp_graph_plan *gp = &c->plan->graphs[k];
        for (uint32_t i = 0; i < gp->n_allocs; i++) {
            const mp_alloc *a = &gp->allocs[i];
            int32_t s, e;
            mp_viz_alloc_life(a, g->n_nodes, &s, &e);
            viz_item it = {in.x0 + s * step, in.x0 + (e + 1) * step, a->offset, 0, a->mem_id,
                           in.graph, in.depth, mp_viz_alloc_device(c->prog, gp, a), a};
            if (!mp_add_u64(a->offset, a->size, &it.hi)) it.hi = UINT64_MAX;
            if (it.x1 <= it.x0) it.x1 = it.x0 + step; /* keep x0 < x1 in float */
            MP_VEC_PUSH(L->items, L->n, L->cap, it);
        }
    }
    c->onstack[in.graph] = true;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const mp_node *nd = &g->nodes[i];
        uint32_t ns = (nd->sub[0] >= 0) + (nd->sub[1] >= 0), slot = 0;
        for (int j = 0; j < 2; j++) {
            int32_t s = nd->sub[j];
            if (s < 0 || (uint32_t)s >= c->prog->n_graphs) continue;
            if (in.depth + 1 > MP_MAX_DEPTH || c->onstack[s]) {
                L->truncated = true;
                continue;
            }
            double w = step / ns;
            viz_instance sub = {s, in.graph, (int32_t)i, slot, j, in.depth + 1,
                                in.x0 + i * step + slot * w, w};
            place(c, sub);
            slot++;
        }
    }
    c->onstack[in.graph] = false;
}

void mp_viz_layout_build(const mp_program *prog, const mp_plan *plan, viz_layout *L) {
    memset(L, 0, sizeof *L);
    L->block_of = mp_viz_block_index(prog, plan);
    L->width = prog->n_graphs && prog->graphs[0].n_nodes ? prog->graphs[0].n_nodes : 1;
    if (!prog->n_graphs) return;
    lctx c = {prog, plan, L, mp_xcalloc(prog->n_graphs, sizeof(bool))};
    place(&c, (viz_instance){0, -1, -1, 0, 0, 0, 0.0, L->width});
    mp_xfree(c.onstack);
}

void mp_viz_layout_free(viz_layout *L) {
    mp_xfree(L->items);
    mp_xfree(L->inst);
    mp_xfree(L->block_of);
    memset(L, 0, sizeof *L);
}

/* ---------------------------------------------------------------- hulls */

typedef struct hctx {
    const mp_program *prog;
    const mp_plan *plan;
    const int32_t *block_of;
    viz_hulls *h;
    uint8_t *state; /* 0 not yet, 1 in progress, 2 done */
} hctx;

static int cmp_span(const void *a, const void *b) {
    const viz_span *x = a, *y = b;
    if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return (x->hi > y->hi) - (x->hi < y->hi);
}

static void hull(hctx *c, int32_t gi, int depth) {
    if (c->state[gi]) return; /* done, or a cycle (the parser forbids them) */
    c->state[gi] = 1;
    const mp_graphdef *g = &c->prog->graphs[gi];
    viz_span *v = NULL;
    size_t n = 0, cap = 0;
    int32_t k = c->block_of[gi];
    if (k >= 0) {
        const mp_graph_plan *gp = &c->plan->graphs[k];
        for (uint32_t i = 0; i < gp->n_allocs; i++) {
            const mp_alloc *a = &gp->allocs[i];
            viz_span s = {a->mem_id, a->offset, 0};
            if (!mp_add_u64(a->offset, a->size, &s.hi)) s.hi = UINT64_MAX;
            if (s.hi > s.lo) MP_VEC_PUSH(v, n, cap, s);
        }
    }
    for (uint32_t i = 0; i < g->n_nodes && depth < MP_MAX_DEPTH; i++)
        for (int j = 0; j < 2; j++) {
            int32_t s = g->nodes[i].sub[j];
            if (s < 0 || (uint32_t)s >= c->prog->n_graphs) continue;
            hull(c, s, depth + 1);
            for (uint32_t q = 0; q < c->h->n[s]; q++) MP_VEC_PUSH(v, n, cap, c->h->of[s][q]);
        }
    if (n) qsort(v, n, sizeof *v, cmp_span);
    size_t u = 0; /* merge to one span per buffer: [min lo, max hi) */
    for (size_t i = 0; i < n; i++) {
        if (u && v[u - 1].buffer == v[i].buffer) {
            if (v[i].hi > v[u - 1].hi) v[u - 1].hi = v[i].hi;
        } else {
            v[u++] = v[i];
        }
    }
    c->h->of[gi] = v;
    c->h->n[gi] = (uint32_t)u;
    c->state[gi] = 2;
}

void mp_viz_hulls_build(const mp_program *prog, const mp_plan *plan, const int32_t *block_of,
                     viz_hulls *h) {
    h->of = mp_xcalloc(prog->n_graphs + 1, sizeof *h->of);
    h->n = mp_xcalloc(prog->n_graphs + 1, sizeof *h->n);
    hctx c = {prog, plan, block_of, h, mp_xcalloc(prog->n_graphs + 1, 1)};
    for (uint32_t g = 0; g < prog->n_graphs; g++) hull(&c, (int32_t)g, 0);
    mp_xfree(c.state);
}

void mp_viz_hulls_free(viz_hulls *h, uint32_t n_graphs) {
    for (uint32_t g = 0; g < n_graphs; g++) mp_xfree(h->of[g]);
    mp_xfree(h->of);
    mp_xfree(h->n);
    memset(h, 0, sizeof *h);
}
