/* live.c - the verifier's own reading of a graph: when each storage root is
 * live, which tensors are inputs and outputs, and in-place families.
 *
 * Written independently of the planners' lifetime code on purpose.  A root
 * is live from the first to the last node that names it or a view of it
 * (in= or out=); a placeholder's tensor from node 0; a mutable buffer up to
 * the last node.  A family is a connected component of in-place links. */
#include "verify.h"

static int32_t find(int32_t *parent, int32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void name_at(vgraph *vg, int32_t root, int32_t node) {
    if (vg->first[root] < 0 || node < vg->first[root]) vg->first[root] = node;
    if (node > vg->last[root]) vg->last[root] = node;
}

void mp_v_graph_facts(const mp_graphdef *g, bool per_device, vgraph *vg) {
    uint32_t n = g->n_tensors + 1;
    vg->first = mp_xmalloc(n * sizeof *vg->first);
    vg->last = mp_xmalloc(n * sizeof *vg->last);
    vg->placeholder = mp_xcalloc(n, 1);
    vg->returned = mp_xcalloc(n, 1);
    vg->family = mp_xmalloc(n * sizeof *vg->family);
    for (uint32_t t = 0; t < n; t++) {
        vg->first[t] = vg->last[t] = -1;
        vg->family[t] = (int32_t)t;
    }
    const mp_tensor *ts = g->tensors;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const mp_node *nd = &g->nodes[i];
        for (uint32_t k = 0; k < nd->n_in; k++) {
            int32_t r = ts[nd->in[k]].root;
            name_at(vg, r, (int32_t)i);
            if (nd->kind == MP_NODE_OUTPUT) vg->returned[r] = 1;
        }
        for (uint32_t k = 0; k < nd->n_out; k++)
            name_at(vg, ts[nd->out[k]].root, (int32_t)i);
    }
    int32_t last_node = (int32_t)g->n_nodes - 1;
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        const mp_tensor *x = &ts[t];
        if (x->root != (int32_t)t || x->def_node < 0) continue;
        if (g->nodes[x->def_node].kind != MP_NODE_PLACEHOLDER) continue;
        vg->placeholder[t] = 1;
        vg->first[t] = 0;
        if (x->flags & MP_T_MUTABLE) vg->last[t] = last_node;
    }
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        int32_t b = ts[t].inplace_base; /* across devices: no shared bytes (mp_inplace_cut) */
        if (b < 0 || ts[t].root != (int32_t)t || mp_inplace_cut(g, (int32_t)t, per_device)) continue;
        int32_t x = find(vg->family, (int32_t)t), y = find(vg->family, ts[b].root);
        if (x != y) vg->family[x] = y;
    }
    for (uint32_t t = 0; t < g->n_tensors; t++)
        vg->family[t] = find(vg->family, (int32_t)t);
}

void mp_v_graph_free(vgraph *vg) {
    mp_xfree(vg->first);
    mp_xfree(vg->last);
    mp_xfree(vg->placeholder);
    mp_xfree(vg->returned);
    mp_xfree(vg->family);
    mp_xfree(vg->stretched);
    memset(vg, 0, sizeof *vg);
}
