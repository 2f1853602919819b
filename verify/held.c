/* held.c - the bytes a cond's results keep after the cond, for the lower
 * bound (quality.c).
 *
 * A cond's result used after it is the value its branch returned, in the
 * branch's memory (D14): rule 5 (overlap.c) keeps those bytes from the node
 * after the cond to the result's last use, apart from every parent
 * allocation live then (but cond results' own slots, which nothing writes)
 * and from the memory of every later control-flow node.  Where the value is
 * itself a nested cond's result, all of the branch's memory is held, at
 * least the branch's own bound in each buffer.  The old bound counted that
 * memory at the cond alone: a program of nested conds (the `deep` profile)
 * looked 2.7 times its bound.
 *
 * Why the bound stays one no valid plan beats, at node t of a buffer: the
 * parent's allocations live at t split into S (families with no cond
 * result) and R (the others: cond result slots, exempt from rule 5, and
 * what shares their storage); F is the memory of the sub-graphs node t
 * runs; H the bytes held by earlier conds' results.  S, R and F are
 * pairwise disjoint (rules 4 and 5); H is disjoint from S and F, and the
 * parts of H held by two conds are disjoint too (the later cond's memory,
 * which holds its results, is kept apart from what the earlier one holds).
 * So a valid plan needs |S| + |F| + max(|R|, |H|) bytes at t.  The bound
 * adds max(0, held(t) - slots(t)) to its old figure, where held(t) sums,
 * per cond, the largest part any one of its live results holds (a lower
 * bound of H), and slots(t) sums R's allocations live at t (at least what
 * the old figure counted for R; counting more only lowers the addition). */
#include "verify.h"

static int cmp_hold(const void *a, const void *b) {
    const v_hold *x = a, *y = b;
    if (x->cond != y->cond) return x->cond < y->cond ? -1 : 1;
    return (x->end < y->end) - (x->end > y->end); /* latest end first */
}

/* What result i of a cond holds as the value of branch s, into h; false
 * when nothing beyond the parent's own allocations (an operand, a weight). */
static bool hold_of(const vctx *c, uint32_t i, int32_t s, v_hold *h) {
    const mp_graphdef *b = &c->prog->graphs[s];
    int kind;
    int32_t v = mp_escape_value(b, i, &kind);
    if (kind <= 0) return false; /* an operand (counted in the parent) or nothing */
    h->branch = s;
    int32_t d = b->tensors[v].def_node;
    if (d >= 0 && b->nodes[d].kind == MP_NODE_COND) {
        h->alloc = -1;
        return true;
    }
    if (c->block_of[s] < 0) return false;
    int32_t a = c->alloc_of[s][v];
    if (a < 0 || !c->usable[s][a] || !c->plan->graphs[c->block_of[s]].allocs[a].size) return false;
    h->alloc = a;
    return true;
}

/* The parent's families that hold a cond result (R above), by family id. */
static uint8_t *slot_families(const vctx *c, int32_t gi) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    uint8_t *fam = mp_xcalloc(g->n_tensors + 1, 1);
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        int32_t d = g->tensors[t].def_node;
        if (g->tensors[t].root == (int32_t)t && d >= 0 && g->nodes[d].kind == MP_NODE_COND)
            fam[c->vg[gi].family[t]] = 1;
    }
    return fam;
}

void mp_v_escapes(const vctx *c, int32_t gi, mp_v_escape_fn f, void *ctx) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    bool any_cond = false;
    for (uint32_t k = 0; k < g->n_nodes && !any_cond; k++) any_cond = g->nodes[k].kind == MP_NODE_COND;
    if (!any_cond) return;
    mp_escape E;
    mp_escape_compute(c->prog, g, c->vg[gi].last, &E); /* the ends rule 5 uses */
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        const mp_node *nd = &g->nodes[k];
        if (nd->kind != MP_NODE_COND) continue;
        for (uint32_t i = 0; i < nd->n_out; i++) {
            int32_t r = nd->out[i], e = E.tensor_end[r];
            if (g->tensors[r].root != r || e <= (int32_t)k) continue;
            for (int s = 0; s < 2 && !(s == 1 && nd->sub[1] == nd->sub[0]); s++) {
                const mp_graphdef *b = &c->prog->graphs[nd->sub[s]];
                const mp_node *out = &b->nodes[b->n_nodes - 1];
                f(ctx, k, i, r, e, nd->sub[s], b->tensors[out->in[i]].root);
            }
        }
    }
    mp_escape_free(&E);
}

typedef struct holds_ctx {
    const vctx *c;
    v_holds *out;
    size_t cap;
} holds_ctx;

static void add_hold(void *ctx, uint32_t k, uint32_t i, int32_t r, int32_t e, int32_t branch, int32_t v) {
    holds_ctx *x = ctx;
    (void)r, (void)v;
    v_hold h = {(int32_t)k, e, 0, 0};
    if (hold_of(x->c, i, branch, &h)) MP_VEC_PUSH(x->out->v, x->out->n, x->cap, h);
}

void mp_v_holds(const vctx *c, int32_t gi, v_holds *out) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    *out = (v_holds){0};
    holds_ctx x = {c, out, 0};
    mp_v_escapes(c, gi, add_hold, &x);
    if (!out->n) return;
    qsort(out->v, out->n, sizeof *out->v, cmp_hold);
    out->slot_family = slot_families(c, gi);
    out->boost = mp_xmalloc(((size_t)g->n_nodes + 2) * sizeof *out->boost);
    out->scratch = mp_xmalloc(((size_t)g->n_nodes + 2) * sizeof *out->scratch);
}

void mp_v_holds_free(v_holds *h) {
    mp_xfree(h->v);
    mp_xfree(h->slot_family);
    mp_xfree(h->boost);
    mp_xfree(h->scratch);
    *h = (v_holds){0};
}

/* What hold h keeps in buffer b. */
static uint64_t held_bytes(const vctx *c, const v_hold *h, uint32_t b, const v_bound *sub) {
    if (h->alloc < 0) return b < sub[h->branch].n ? sub[h->branch].v[b] : 0;
    const mp_alloc *a = &c->plan->graphs[c->block_of[h->branch]].allocs[h->alloc];
    return a->mem_id == b ? a->size : 0;
}

/* held(t) of buffer b as differences into diff[0 .. n_nodes + 1]: per
 * cond, at each node after it the largest part one of its results live
 * there holds (holds come by cond, latest end first).  True when any. */
static bool held_diff(const vctx *c, const v_holds *H, uint32_t b, const v_bound *sub, uint64_t *diff) {
    const v_hold *v = H->v;
    bool any = false;
    for (uint32_t i = 0; i < H->n;) {
        uint32_t j = i;
        uint64_t most = 0;
        for (; j < H->n && v[j].cond == v[i].cond; j++) {
            uint64_t x = held_bytes(c, &v[j], b, sub);
            if (x > most) most = x;
            int32_t lo = (j + 1 < H->n && v[j + 1].cond == v[i].cond ? v[j + 1].end : v[i].cond) + 1;
            if (!most || lo > v[j].end) continue; /* nothing held, or an end met twice */
            diff[lo] += most;                     /* modulo 2^64, as the sweep's sums */
            diff[v[j].end + 1] -= most;
            any = true;
        }
        i = j;
    }
    return any;
}

/* slots(t) of buffer b as differences: the allocations idx[0 .. k) of
 * graph gi whose family holds a cond result. */
static void slot_diff(const vctx *c, int32_t gi, const uint32_t *idx, size_t k, const uint8_t *slot_family,
                      uint64_t *diff) {
    const mp_graph_plan *gp = &c->plan->graphs[c->block_of[gi]];
    const vgraph *vg = &c->vg[gi];
    for (size_t q = 0; q < k; q++) {
        const mp_alloc *x = &gp->allocs[idx[q]];
        if (!slot_family[vg->family[x->tensor]]) continue;
        diff[vg->first[x->tensor]] += x->size;
        diff[vg->last[x->tensor] + 1] -= x->size;
    }
}

bool mp_v_held_boost(const vctx *c, int32_t gi, v_holds *H, uint32_t b, const v_bound *sub, const uint32_t *idx,
                     size_t k) {
    if (!H->n) return false;
    size_t n_t = (size_t)c->prog->graphs[gi].n_nodes + 2;
    uint64_t *boost = H->boost, *scratch = H->scratch;
    memset(boost, 0, n_t * sizeof *boost);
    if (!held_diff(c, H, b, sub, boost)) return false;
    memset(scratch, 0, n_t * sizeof *scratch);
    slot_diff(c, gi, idx, k, H->slot_family, scratch);
    uint64_t held = 0, slots = 0;
    bool any = false;
    for (size_t t = 0; t < n_t; t++) {
        held += boost[t];
        slots += scratch[t];
        boost[t] = held > slots ? held - slots : 0;
        any |= boost[t] != 0;
    }
    return any;
}
