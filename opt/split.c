/* split.c - a cond's sub-graph block in two parts: what its results keep
 * after it, and the rest.
 *
 * A cond's results live in its branches' memory until their last use
 * (docs/deviations.md, D14).  Up to 1.6.6 opt kept the cond's whole block
 * that long, though the results are usually a few tensors of it, and a
 * chain of conds each used by the next held two blocks at every cond.
 * Now each branch lays out the values it returns (the in-place families
 * behind the results used after the cond) at the top of its memory, for
 * its whole life, apart from everything else; the parent places two
 * items: the rest, live at the cond alone, and the values' region, live
 * until the results' last use.  A branch's tensors sit at base + loff, its
 * escaping values at ebase + loff.
 *
 * The block stays whole where a value is itself a nested cond's result
 * (all of that branch's memory is then the result's, as the verifier
 * reads it) and in programs that are not a tree (shared sub-graphs are
 * reserved for the parent's whole life anyway). */
#include "opt_internal.h"

/* The results of cond node nd used after it, as result indexes: calls
 * f(ctx, branch, value, kind) for each branch and each. */
typedef bool (*value_fn)(void *ctx, int32_t branch, int32_t value, int kind);

static bool each_value(const octx *c, uint32_t gi, uint32_t i, value_fn f, void *ctx) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    const ograph *G = &c->g[gi];
    const mp_node *nd = &g->nodes[i];
    for (uint32_t k = 0; k < nd->n_out; k++) {
        int32_t r = nd->out[k];
        if (g->tensors[r].root != r || G->keep.tensor_end[r] <= (int32_t)i) continue;
        for (int s = 0; s < 2 && !(s == 1 && nd->sub[1] == nd->sub[0]); s++) {
            int kind;
            int32_t v = mp_escape_value(&c->prog->graphs[nd->sub[s]], k, &kind);
            if (!f(ctx, nd->sub[s], v, kind)) return false;
        }
    }
    return true;
}

/* A value that is a nested cond's result: the block cannot split. */
static bool plain_value(void *ctx, int32_t branch, int32_t v, int kind) {
    const octx *c = ctx;
    const mp_graphdef *b = &c->prog->graphs[branch];
    int32_t d = b->tensors[v].def_node;
    return kind <= 0 || d < 0 || b->nodes[d].kind != MP_NODE_COND;
}

/* Marks the family of a value in the branch's memory. */
static bool mark_value(void *ctx, int32_t branch, int32_t v, int kind) {
    octx *c = ctx;
    ograph *S = &c->g[branch];
    /* a value of no bytes needs no room: it stays with the rest */
    if (kind > 0 && S->planned[v] && S->asize[S->family[v]]) S->esc[S->family[v]] = 1;
    return true;
}

static bool splittable(const octx *c, uint32_t gi, uint32_t i) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    const mp_node *nd = &g->nodes[i];
    /* escape items are told apart by who codes below -n_nodes (layout.c) */
    if (nd->kind != MP_NODE_COND || g->n_nodes >= (UINT32_C(1) << 30)) return false;
    if (c->g[gi].keep.node_end[i] <= (int32_t)i) return false;
    return each_value(c, gi, i, plain_value, (void *)c);
}

/* Every cond that splits, children first: with `mark`, its branches get
 * an escape table and its escaping values are marked; with `seeds`, both
 * branches are set there (whether or not a value is marked in them).
 * Returns whether any cond splits. */
static bool each_split(octx *c, const int32_t *order, uint32_t n, bool mark, uint8_t *seeds) {
    bool any = false;
    for (uint32_t k = 0; c->tree && k < n; k++) {
        uint32_t gi = (uint32_t)order[k];
        const ograph *G = &c->g[gi];
        const mp_graphdef *g = &c->prog->graphs[gi];
        for (uint32_t j = 0; j < G->n_cf; j++) {
            uint32_t i = G->cf_nodes[j];
            if (!splittable(c, gi, i)) continue;
            any = true;
            if (seeds) seeds[g->nodes[i].sub[0]] = seeds[g->nodes[i].sub[1]] = 1;
            if (!mark) continue;
            for (int s = 0; s < 2; s++) {
                ograph *S = &c->g[g->nodes[i].sub[s]];
                uint32_t nt = c->prog->graphs[g->nodes[i].sub[s]].n_tensors;
                if (!S->esc) S->esc = mp_og_alloc(S, nt + 1, true);
            }
            (void)each_value(c, gi, i, mark_value, c);
        }
    }
    return any;
}

bool mp_opt_mark_escapes(octx *c, const int32_t *order, uint32_t n) { return each_split(c, order, n, c->split, NULL); }

/* The seeds and every graph above one: a second pass, since a branch
 * comes before its parent in `order` (children first). */
static uint8_t *with_parents(const octx *c, const int32_t *order, uint32_t n, uint8_t *dirty) {
    for (uint32_t k = 0; k < n; k++) {
        const mp_graphdef *g = &c->prog->graphs[order[k]];
        for (uint32_t i = 0; i < g->n_nodes; i++)
            for (int s = 0; s < 2; s++)
                if (g->nodes[i].sub[s] >= 0 && dirty[g->nodes[i].sub[s]]) dirty[order[k]] = 1;
    }
    return dirty;
}

uint8_t *mp_opt_split_marks(octx *c, const int32_t *order, uint32_t n) {
    c->split = true;
    uint8_t *dirty = c->o->exact ? NULL : mp_xcalloc(c->prog->n_graphs + 1, 1); /* --exact: every note again */
    (void)each_split(c, order, n, true, dirty);
    return dirty ? with_parents(c, order, n, dirty) : NULL;
}

uint8_t *mp_opt_split_changes(octx *c, const int32_t *order, uint32_t n) {
    uint8_t *dirty = mp_xcalloc(c->prog->n_graphs + 1, 1);
    (void)each_split(c, order, n, false, dirty);
    return with_parents(c, order, n, dirty);
}

bool mp_opt_node_splits(const octx *c, uint32_t gi, uint32_t i) {
    const mp_node *nd = &c->prog->graphs[gi].nodes[i];
    return c->tree && nd->sub[0] >= 0 && c->g[nd->sub[0]].esc != NULL;
}

size_t mp_opt_escapes_last(const ograph *G, pk_item *v, int32_t *who, size_t n) {
    size_t rest = 0, n_esc = 0;
    for (size_t k = 0; k < n; k++) n_esc += who[k] >= 0 && G->esc[who[k]];
    if (!n_esc) return n;
    pk_item *ev = mp_xmalloc(n_esc * sizeof *ev);
    int32_t *ew = mp_xmalloc(n_esc * sizeof *ew);
    size_t e = 0;
    for (size_t k = 0; k < n; k++) {
        if (who[k] >= 0 && G->esc[who[k]]) {
            ev[e] = v[k], ew[e++] = who[k];
        } else {
            v[rest] = v[k], who[rest++] = who[k];
        }
    }
    memcpy(v + rest, ev, n_esc * sizeof *ev);
    memcpy(who + rest, ew, n_esc * sizeof *ew);
    mp_xfree(ev);
    mp_xfree(ew);
    return rest;
}

uint64_t mp_opt_stack_escapes(pk_item *v, size_t from, size_t n, uint64_t at, int32_t last) {
    uint64_t used = 0;
    for (size_t k = from; k < n; k++) {
        v[k].offset = mp_sat_add_u64(at, used);
        v[k].start = 0;
        v[k].end = last;
        used = mp_sat_add_u64(used, v[k].size);
    }
    return used;
}
