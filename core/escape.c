/* escape.c - what a cond's results are at run time (D14 in
 * docs/deviations.md).
 *
 * ExecuTorch's emitter ends each cond branch with MoveCall(branch value ->
 * cond output).  It moves the value, a tensor handle, not the bytes: after
 * the cond its i-th result is the i-th value the branch returned, in the
 * branch's memory (or, when the branch returned its j-th placeholder, the
 * cond's j-th operand after the predicate).  The planned slot of the result
 * itself is never written.  So, for as long as a result is used after the
 * cond:
 *   - the branch memory it lives in must not be reused: by the parent's
 *     tensors, nor by the sub-graphs of a later control-flow node (which
 *     ExecuTorch places at the same offsets: PRs #21818 and #21494);
 *   - an operand it aliases must keep its bytes as if it were still live.
 * map and scan copy their results into the parent's tensors
 * (et_copy_index, copy_), and ExecuTorch's emitter has no while: their
 * results are tensors of their own.
 *
 * Results are resolved through the binding of docs/formats.md, which the
 * parser guarantees (counts match).  The cost is linear in the graph. */
#include "internal.h"

/* Where the bytes of branch value v of graph b are: 1 in the branch's
 * memory, 0 nowhere that can be overwritten (a weight, a dynamic tensor),
 * -(j + 1) for its j-th placeholder (the caller's operand). */
static int value_kind(const mp_graphdef *b, int32_t v) {
    const mp_tensor *t = &b->tensors[v];
    if (t->def_node >= 0 && b->nodes[t->def_node].kind == MP_NODE_PLACEHOLDER)
        return -(t->def_node + 1); /* placeholders come first: node index = position */
    if (t->flags & (MP_T_CONST | MP_T_DYNAMIC)) return 0;
    return 1;
}

int32_t mp_escape_value(const mp_graphdef *b, uint32_t i, int *kind) {
    const mp_node *out = &b->nodes[b->n_nodes - 1];
    int32_t v = b->tensors[out->in[i]].root;
    *kind = value_kind(b, v);
    return v;
}

/* One pass over the conds, later ones first (a result that is an operand
 * of a later cond whose result escapes is extended before its own cond is
 * seen); returns whether some end grew. */
static bool escape_pass(const mp_program *prog, const mp_graphdef *g, mp_escape *E) {
    bool grew = false;
    for (uint32_t n = g->n_nodes; n-- > 0;) {
        const mp_node *nd = &g->nodes[n];
        E->node_end[n] = -1;
        for (uint32_t i = 0; nd->kind == MP_NODE_COND && i < nd->n_out; i++) {
            int32_t r = nd->out[i];
            if (g->tensors[r].root != r) continue; /* a view: its root is defined elsewhere */
            int32_t e = E->tensor_end[r];
            if (e <= (int32_t)n) continue;
            for (int s = 0; s < 2 && !(s == 1 && nd->sub[1] == nd->sub[0]); s++) {
                const mp_graphdef *b = &prog->graphs[nd->sub[s]];
                int k;
                (void)mp_escape_value(b, i, &k);
                if (k > 0 && e > E->node_end[n]) E->node_end[n] = e;
                if (k < 0) { /* the operand after the predicate */
                    int32_t a = g->tensors[nd->in[1 + (-k - 1)]].root;
                    if (e > E->tensor_end[a]) E->tensor_end[a] = e, grew = true;
                }
            }
        }
    }
    return grew;
}

void mp_escape_compute(const mp_program *prog, const mp_graphdef *g, const int32_t *end,
                       mp_escape *E) {
    /* one block: a program of many small sub-graphs computes one per graph */
    E->tensor_end = mp_xmalloc(((size_t)g->n_tensors + g->n_nodes + 2) * sizeof *E->tensor_end);
    E->node_end = E->tensor_end + g->n_tensors + 1;
    for (uint32_t t = 0; t < g->n_tensors; t++) E->tensor_end[t] = end[t];
    /* to a fixed point: a node may name a tensor before the node that
     * makes it, so an earlier cond may extend a later one's result; each
     * pass but the last grows some end, which is at most the last node */
    while (escape_pass(prog, g, E)) {}
    E->any = false;
    for (uint32_t n = 0; n < g->n_nodes; n++) E->any |= E->node_end[n] >= 0;
    for (uint32_t t = 0; t < g->n_tensors; t++) E->any |= E->tensor_end[t] != end[t];
}

void mp_escape_free(mp_escape *E) {
    mp_xfree(E->tensor_end); /* and node_end, in its block */
    E->tensor_end = E->node_end = NULL;
}

/* A node after cond n, while its results live in its branches' memory,
 * that runs sub-graphs of its own. */
int32_t mp_escape_hazard(const mp_graphdef *g, const mp_escape *E, int32_t *cond) {
    int32_t open = -1, from = -1; /* the latest escape end so far, and its cond */
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        if ((int32_t)k <= open && g->nodes[k].sub[0] >= 0) {
            *cond = from;
            return (int32_t)k;
        }
        if (E->node_end[k] > open) open = E->node_end[k], from = (int32_t)k;
    }
    return -1;
}

/* Every reachable non-entry graph is run by exactly one node (a cond's two
 * branches may be one graph). */
bool mp_graphs_tree(const mp_program *prog, const bool *reach) {
    uint32_t ng = prog->n_graphs;
    uint32_t *users = mp_xcalloc(ng + 1, sizeof *users);
    for (uint32_t gi = 0; gi < ng; gi++) {
        if (!reach[gi]) continue;
        const mp_graphdef *g = &prog->graphs[gi];
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            int32_t a = g->nodes[i].sub[0], b = g->nodes[i].sub[1];
            if (a >= 0) users[a]++;
            if (b >= 0 && b != a) users[b]++;
        }
    }
    bool tree = users[0] == 0;
    for (uint32_t gi = 1; gi < ng; gi++) tree &= !reach[gi] || users[gi] <= 1;
    mp_xfree(users);
    return tree;
}

/* The repaired planners keep a cond's results apart from later sub-graph
 * memory by moving that memory; with a graph run by several nodes its
 * offsets are shared, so a program that also needs the move is refused. */
int mp_escape_check(const mp_program *prog, const bool *reach, mp_err *err) {
    if (mp_graphs_tree(prog, reach)) return MP_OK;
    for (uint32_t gi = 0; gi < prog->n_graphs; gi++) {
        if (!reach[gi]) continue;
        const mp_graphdef *g = &prog->graphs[gi];
        mp_life L;
        mp_escape E;
        mp_life_compute(g, &L);
        mp_escape_compute(prog, g, L.end, &E);
        int32_t cond = -1, k = E.any ? mp_escape_hazard(g, &E, &cond) : -1;
        int32_t until = k >= 0 ? E.node_end[cond] : -1;
        mp_escape_free(&E);
        mp_life_free(&L);
        if (k >= 0)
            return mp_err_set(err, MP_EPLAN,
                              "graph '%s': the results of cond node %d live in its branches' "
                              "memory until node %d (ExecuTorch moves a branch's value into the "
                              "cond's result: D14), and node %d runs sub-graphs meanwhile; "
                              "with a graph run by several nodes their offsets are shared, so no "
                              "plan keeps them apart", g->name, cond, until, k);
    }
    return MP_OK;
}
