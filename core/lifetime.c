/* lifetime.c - lifetimes, graph inputs/outputs and spec order, as
 * ExecuTorch's update_all_tensors_lifetime and collect_specs_from_nodes
 * compute them.
 *
 * A node touches its own specs (its out=, or for the output node its in=)
 * and the specs of its arguments (its in=); views stand for their storage
 * root.  A tensor's lifetime is [first, last] touching node, except that a
 * placeholder's tensor starts at 0 and a mutable buffer ends at the last
 * node.  Spec order is the order in which roots first appear among the
 * nodes' own specs. */
#include "internal.h"

static void touch(mp_life *L, int32_t t, int32_t idx, bool placeholder,
                  bool mutable_ph, int32_t last) {
    int32_t s = L->start[t], e = L->end[t];
    s = placeholder ? 0 : (s < 0 || s > idx ? idx : s);
    e = mutable_ph ? last : (e < idx ? idx : e);
    L->start[t] = s;
    L->end[t] = e;
}

void mp_life_compute(const mp_graphdef *g, mp_life *L) {
    uint32_t n = g->n_tensors;
    const mp_tensor *ts = g->tensors;
    /* one block (start, end and order, then four byte arrays, the last
     * scratch): a program of many small sub-graphs computes one per graph */
    size_t m = (size_t)n + 1;
    int32_t *block = mp_xmalloc(3 * m * sizeof *block + 4 * m);
    L->start = block;
    L->end = block + m;
    L->order = block + 2 * m;
    L->is_input = (uint8_t *)(block + 3 * m);
    L->is_output = L->is_input + m;
    L->is_placeholder = L->is_output + m;
    uint8_t *seen = L->is_placeholder + m;
    memset(L->is_input, 0, 4 * m);
    L->n_order = 0;
    for (uint32_t i = 0; i < n; i++) L->start[i] = L->end[i] = -1;
    int32_t last = (int32_t)g->n_nodes - 1;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const mp_node *nd = &g->nodes[i];
        bool ph = nd->kind == MP_NODE_PLACEHOLDER;
        bool out = nd->kind == MP_NODE_OUTPUT;
        /* own specs: out=, or the output node's in= */
        const int32_t *own = out ? nd->in : nd->out;
        uint32_t n_own = out ? nd->n_in : nd->n_out;
        for (uint32_t k = 0; k < n_own; k++) {
            int32_t r = ts[own[k]].root;
            bool mut = ph && (ts[r].flags & MP_T_MUTABLE);
            touch(L, r, (int32_t)i, ph, mut, last);
            if (ph) {
                L->is_placeholder[r] = 1;
                L->is_input[r] = !(ts[r].flags & MP_T_MUTABLE);
            }
            if (out) L->is_output[r] = 1;
            if (!seen[r]) {
                seen[r] = 1;
                L->order[L->n_order++] = r;
            }
        }
        for (uint32_t k = 0; k < nd->n_in; k++)
            touch(L, ts[nd->in[k]].root, (int32_t)i, ph, false, last);
    }
}

void mp_life_free(mp_life *L) {
    mp_xfree(L->start); /* the block of every array */
    memset(L, 0, sizeof *L);
}

bool mp_life_is_planned(const mp_graphdef *g, const mp_life *L, int32_t t,
                        mp_alloc_flags f) {
    const mp_tensor *x = &g->tensors[t];
    if (x->root != t) return false; /* views share their root's storage */
    if (x->flags & (MP_T_CONST | MP_T_DYNAMIC)) return false;
    if (!f.inputs && L->is_input[t]) return false;
    if (!f.outputs && L->is_output[t]) return false;
    if (!f.mutables && (x->flags & MP_T_MUTABLE)) return false;
    return true;
}

uint32_t mp_life_planned_into(const mp_graphdef *g, const mp_life *L, mp_alloc_flags f, int32_t *v) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < L->n_order; i++)
        if (mp_life_is_planned(g, L, L->order[i], f)) v[n++] = L->order[i];
    return n;
}

uint32_t mp_life_planned(const mp_graphdef *g, const mp_life *L,
                         mp_alloc_flags f, int32_t **out) {
    *out = mp_xmalloc((L->n_order + 1) * sizeof **out);
    return mp_life_planned_into(g, L, f, *out);
}
