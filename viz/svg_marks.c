/* svg_marks.c - where the verifier's violations go in the picture.
 *
 * A violation names a graph and, when it has them, a buffer, byte ranges,
 * a node range and tensors.  Each is outlined wherever its graph is drawn
 * (a sub-graph may be drawn at several control-flow nodes):
 *   buffer  the violation's, else the first named tensor's allocation's
 *   bytes   its ranges, else the named tensors' allocations, else the
 *           whole height of the panel
 *   nodes   its node range, else the named tensors' lives, else the whole
 *           graph
 * A violation with no graph in the program or no panel for its buffer is
 * left for the text list under the panels. */
#include "viz.h"

#define MARKS_PER_VIOLATION 64

static const mp_alloc *find_alloc(const mp_graph_plan *gp, const char *name) {
    for (uint32_t i = 0; name && i < gp->n_allocs; i++)
        if (strcmp(gp->allocs[i].name, name) == 0) return &gp->allocs[i];
    return NULL;
}

static const viz_panel *panel_of(const viz_panel *p, size_t n, uint64_t buffer) {
    for (size_t i = 0; i < n; i++)
        if (p[i].buffer == buffer) return &p[i];
    return NULL;
}

static uint64_t end_of(const mp_alloc *a) {
    uint64_t e;
    return mp_add_u64(a->offset, a->size, &e) ? e : UINT64_MAX;
}

/* The byte ranges to outline: the violation's, else the named tensors'
 * allocations in the buffer, else the panel's whole height. */
static uint32_t mark_ranges(const mp_violation *v, const mp_alloc *const ta[2], uint64_t buffer,
                            const viz_panel *p, uint64_t r[2][2]) {
    uint32_t nr = 0;
    for (uint32_t i = 0; i < v->n_ranges && i < 2; i++, nr++) {
        r[nr][0] = v->ranges[i][0];
        r[nr][1] = v->ranges[i][1];
    }
    for (int t = 0; t < 2 && v->n_ranges == 0; t++)
        if (ta[t] && ta[t]->mem_id == buffer) {
            r[nr][0] = ta[t]->offset;
            r[nr][1] = end_of(ta[t]);
            nr++;
        }
    if (nr == 0) {
        r[0][0] = 0;
        r[0][1] = p->ymax;
        nr = 1;
    }
    return nr;
}

/* The node range [n[0], n[1]] to outline, inclusive, in the graph's own
 * nodes: the violation's, else the named tensors' lives, else all. */
static void mark_nodes(const mp_violation *v, const mp_alloc *const ta[2], const mp_graphdef *g, int64_t n[2]) {
    int64_t last = g->n_nodes ? (int64_t)g->n_nodes - 1 : 0, n0 = 0, n1 = last;
    if (v->nodes[0] >= 0) {
        n0 = v->nodes[0];
        n1 = v->nodes[1] >= 0 ? v->nodes[1] : n0;
    } else if (ta[0]) {
        int32_t s0, e0;
        mp_viz_alloc_life(ta[0], g->n_nodes, &s0, &e0);
        n0 = s0;
        n1 = e0;
        if (ta[1]) {
            mp_viz_alloc_life(ta[1], g->n_nodes, &s0, &e0);
            if (s0 < n0) n0 = s0;
            if (e0 > n1) n1 = e0;
        }
    }
    if (n0 > n1) {
        int64_t t = n0;
        n0 = n1;
        n1 = t;
    }
    n[0] = n0 < 0 ? 0 : n0 > last ? last : n0;
    n[1] = n1 < 0 ? 0 : n1 > last ? last : n1;
}

static void place(viz_svg *s, const viz_panel *panels, size_t np, uint32_t vi, bool *placed) {
    const mp_violation *v = &s->r.v[vi];
    int32_t gi = mp_graph_find(s->prog, v->graph);
    if (gi < 0) return;
    const mp_graphdef *g = &s->prog->graphs[gi];
    int32_t k = s->L.block_of[gi];
    const mp_alloc *ta[2] = {NULL, NULL};
    for (int t = 0; t < 2 && k >= 0; t++) ta[t] = find_alloc(&s->plan->graphs[k], v->tensors[t]);
    uint64_t buffer;
    if (v->buffer >= 0) buffer = (uint64_t)v->buffer;
    else if (ta[0]) buffer = ta[0]->mem_id;
    else return;
    const viz_panel *p = panel_of(panels, np, buffer);
    if (!p) return;
    uint64_t r[2][2];
    uint32_t nr = mark_ranges(v, ta, buffer, p, r);
    int64_t n[2];
    mark_nodes(v, ta, g, n);
    uint32_t made = 0;
    for (size_t i = 0; i < s->L.ni && made < MARKS_PER_VIOLATION; i++) {
        const viz_instance *in = &s->L.inst[i];
        if (in->graph != gi) continue;
        double step = in->w / (double)(g->n_nodes ? g->n_nodes : 1);
        for (uint32_t q = 0; q < nr; q++) {
            viz_mark m = {buffer, r[q][0], r[q][1] > r[q][0] ? r[q][1] : r[q][0],
                          in->x0 + (double)n[0] * step, in->x0 + (double)(n[1] + 1) * step, vi};
            if (m.hi == m.lo && m.hi < UINT64_MAX) m.hi = m.lo + 1;
            MP_VEC_PUSH(s->marks, s->n_marks, s->cap_marks, m);
        }
        made++;
    }
    if (made) placed[vi] = true;
}

void mp_viz_svg_marks_build(viz_svg *s, const viz_panel *panels, size_t n_panels, bool *placed) {
    for (uint32_t i = 0; i < s->r.n_v; i++) place(s, panels, n_panels, i, placed);
}
