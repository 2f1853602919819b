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
 * it touches, and with nothing else. */
#include "verify.h"

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

typedef struct item {
    uint64_t buffer, lo, hi;
    int32_t start, end;
    int32_t family; /* in-place family, or -1 for a sub-graph footprint */
    int32_t alloc;  /* alloc index, or the footprint's node index */
    int32_t sub;    /* footprint: the sub-graph */
} item;

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

static void build_footprint(vctx *c, int32_t gi, fprint *fp) {
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
    uint8_t *added = mp_xcalloc(c->prog->n_graphs + 1, 1);
    for (uint32_t i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < 2; k++) {
            int32_t s = g->nodes[i].sub[k];
            if (s < 0 || added[s]) continue;
            added[s] = 1;
            for (uint32_t j = 0; j < fp[s].n; j++) MP_VEC_PUSH(f->s, f->n, cap, fp[s].s[j]);
        }
    mp_xfree(added);
    merge_segs(f);
}

static int cmp_start(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->alloc > y->alloc) - (x->alloc < y->alloc);
}

typedef struct ending {
    uint64_t buffer;
    int32_t end;
    uint32_t idx;
} ending;

static int cmp_end(const void *a, const void *b) {
    const ending *x = a, *y = b;
    if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static void report_pair(vctx *c, int32_t gi, const item *x, const item *y) {
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
                    c->prog->graphs[f->sub].name, (unsigned long long)f->lo,
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

static uint32_t collect_items(vctx *c, int32_t gi, const fprint *fp, item **out) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    const mp_graph_plan *gp = &c->plan->graphs[c->block_of[gi]];
    const vgraph *vg = &c->vg[gi];
    size_t cap = gp->n_allocs + 16;
    uint32_t n = 0;
    item *it = mp_xmalloc(cap * sizeof *it);
    for (uint32_t a = 0; a < gp->n_allocs; a++) {
        const mp_alloc *x = &gp->allocs[a];
        uint64_t end;
        if (!c->usable[gi][a] || !x->size) continue;
        int32_t t = x->tensor;
        if (g->tensors[t].root != t || vg->first[t] < 0) continue;
        if (!mp_add_u64(x->offset, x->size, &end)) end = UINT64_MAX;
        item i = {x->mem_id, x->offset, end, vg->first[t], vg->last[t], vg->family[t],
                  (int32_t)a, -1};
        MP_VEC_PUSH(it, n, cap, i);
    }
    for (uint32_t i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < 2; k++) {
            int32_t s = g->nodes[i].sub[k];
            if (s < 0) continue;
            for (uint32_t j = 0; j < fp[s].n; j++) {
                item f = {fp[s].s[j].buffer, fp[s].s[j].lo, fp[s].s[j].hi, (int32_t)i,
                          (int32_t)i, -1, (int32_t)i, s};
                MP_VEC_PUSH(it, n, cap, f);
            }
        }
    *out = it;
    return n;
}

static void sweep_graph(vctx *c, int32_t gi, const fprint *fp) {
    item *it;
    uint32_t n = collect_items(c, gi, fp, &it);
    qsort(it, n, sizeof *it, cmp_start);
    ending *by_end = mp_xmalloc((n + 1) * sizeof *by_end);
    for (uint32_t i = 0; i < n; i++) by_end[i] = (ending){it[i].buffer, it[i].end, i};
    qsort(by_end, n, sizeof *by_end, cmp_end);
    uint32_t *hits = mp_xmalloc(MAX_HITS * sizeof *hits);
    v_itree *tree = NULL;
    uint64_t cur_buffer = UINT64_MAX;
    uint32_t e = 0;
    for (uint32_t i = 0; i < n; i++) {
        const item *x = &it[i];
        if (x->buffer != cur_buffer) { /* items are grouped by buffer */
            mp_v_itree_free(tree);
            tree = mp_v_itree_new();
            cur_buffer = x->buffer;
            while (e < n && by_end[e].buffer < cur_buffer) e++;
        }
        /* retire what ended before this start (all inserted already) */
        while (e < n && by_end[e].buffer == cur_buffer && by_end[e].end < x->start) {
            mp_v_itree_remove(tree, it[by_end[e].idx].lo, by_end[e].idx);
            e++;
        }
        uint32_t k = mp_v_itree_query(tree, x->lo, x->hi, hits, MAX_HITS), reported = 0;
        for (uint32_t h = 0; h < k && reported < MAX_REPORT; h++) {
            const item *y = &it[hits[h]];
            if (x->family < 0 && y->family < 0) continue; /* footprints never clash */
            if (x->family >= 0 && x->family == y->family) continue; /* one in-place family */
            report_pair(c, gi, y, x);
            reported++;
        }
        mp_v_itree_insert(tree, x->lo, x->hi, i);
    }
    mp_v_itree_free(tree);
    mp_xfree(hits);
    mp_xfree(by_end);
    mp_xfree(it);
}

void mp_v_rules_overlap(vctx *c) {
    uint32_t n;
    int32_t *order = mp_v_postorder_of(c, &n);
    fprint *fp = mp_xcalloc(c->prog->n_graphs + 1, sizeof *fp);
    for (uint32_t k = 0; k < n; k++) build_footprint(c, order[k], fp);
    for (uint32_t k = 0; k < n; k++)
        if (c->block_of[order[k]] >= 0) sweep_graph(c, order[k], fp);
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++) mp_xfree(fp[gi].s);
    mp_xfree(fp);
    mp_xfree(order);
}
