/* order.c - is one program a valid schedule of another (issue 50)?  The
 * reorder (opt/reorder.c) moves nodes; this checks what it promises, from
 * the rules' text and with nothing of its code: the same graphs, methods
 * and tensors; the same nodes, each once (a node is known by its kind, its
 * operator, backend, sub-graphs, span, scratch and the names it reads and
 * writes); placeholders first in their order and the output node last;
 * every tensor read after the node that writes it (a view: its root's);
 * and the nodes that name a storage written in place, or a mutable
 * buffer, in their order. */
#include "verify.h"

#include <stdio.h>

/* A node as text: what identifies it whatever its place (scratch tensors
 * are named after the node's index, so they count by their size). */
static void node_key(const mp_program *p, const mp_graphdef *g, const mp_node *nd, mp_buf *b) {
    mp_buf_printf(b, "%u|%s|%s|%s|%s|%u|", nd->kind, nd->op ? nd->op : "", nd->backend ? nd->backend : "",
                  nd->sub[0] >= 0 ? p->graphs[nd->sub[0]].name : "", nd->sub[1] >= 0 ? p->graphs[nd->sub[1]].name : "",
                  nd->span);
    for (uint32_t i = 0; i < nd->n_in; i++) mp_buf_printf(b, "%s,", g->tensors[nd->in[i]].name);
    mp_buf_puts(b, "|");
    for (uint32_t i = 0; i < nd->n_out; i++) {
        const mp_tensor *x = &g->tensors[nd->out[i]];
        if (x->flags & MP_T_SCRATCH) mp_buf_printf(b, "scratch=%llu,", (unsigned long long)x->size);
        else mp_buf_printf(b, "%s,", x->name);
    }
    mp_buf_put(b, "", 1);
}

/* Each node's key, NUL-separated, and where each starts. */
static size_t *node_keys(const mp_program *p, const mp_graphdef *g, mp_buf *b) {
    size_t *at = mp_xcalloc((size_t)g->n_nodes + 1, sizeof *at);
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        at[v] = b->len;
        node_key(p, g, &g->nodes[v], b);
    }
    return at;
}

/* Tensors the same, but for scratch tensors' names (checked with their
 * nodes); a description of the first difference into err. */
static bool same_tensors(const mp_graphdef *a, const mp_graphdef *b, mp_err *err) {
    if (a->n_tensors != b->n_tensors)
        return mp_err_set(err, MP_EINVALID, "graph '%s': %u tensors, the original has %u", a->name, b->n_tensors,
                          a->n_tensors), false;
    for (uint32_t t = 0; t < a->n_tensors; t++) {
        const mp_tensor *x = &a->tensors[t], *y = &b->tensors[t];
        if ((x->flags & MP_T_SCRATCH) && (y->flags & MP_T_SCRATCH)) continue; /* made in node order: by their nodes */
        bool same = x->size == y->size && x->flags == y->flags && x->mem_id == y->mem_id && x->at == y->at &&
                    x->offset == y->offset && x->inplace_base == y->inplace_base && x->view_base == y->view_base &&
                    x->device.type == y->device.type && x->device.index == y->device.index &&
                    !strcmp(x->name, y->name);
        if (!same)
            return mp_err_set(err, MP_EINVALID, "graph '%s': tensor '%s' is not the original's '%s'", a->name,
                              y->name, x->name), false;
    }
    return true;
}

/* pos[v]: where original node v is in the reordered graph (equal keys
 * matched in order), or false with the node that has no match. */
static bool match_nodes(const mp_program *pa, const mp_graphdef *a, const mp_program *pb, const mp_graphdef *b,
                        uint32_t *pos, mp_err *err) {
    if (a->n_nodes != b->n_nodes)
        return mp_err_set(err, MP_EINVALID, "graph '%s': %u nodes, the original has %u", a->name, b->n_nodes,
                          a->n_nodes), false;
    mp_buf ka, kb;
    mp_buf_init(&ka), mp_buf_init(&kb);
    size_t *at_a = node_keys(pa, a, &ka), *at_b = node_keys(pb, b, &kb);
    /* first[k]: the first unmatched reordered node of key k; next: the rest */
    mp_strmap m;
    mp_strmap_init(&m);
    int32_t *next = mp_xmalloc(((size_t)b->n_nodes + 1) * sizeof *next), *first = mp_xmalloc(((size_t)b->n_nodes + 1) * sizeof *first);
    uint32_t *tail = mp_xcalloc((size_t)b->n_nodes + 1, sizeof *tail), nk = 0;
    for (uint32_t w = 0; w < b->n_nodes; w++) {
        const char *key = kb.data + at_b[w];
        int32_t k = mp_strmap_put(&m, key, strlen(key), (int32_t)nk);
        next[w] = -1;
        if (k < 0) first[nk] = (int32_t)w, tail[nk++] = w;
        else next[tail[k]] = (int32_t)w, tail[k] = w;
    }
    bool ok = true;
    for (uint32_t v = 0; v < a->n_nodes && ok; v++) {
        const char *key = ka.data + at_a[v];
        int32_t k = mp_strmap_get(&m, key, strlen(key));
        if (k < 0 || first[k] < 0) {
            ok = false;
            mp_err_set(err, MP_EINVALID, "graph '%s': node %u of the original (%s) is not in the reordered graph "
                       "(or not as often)", a->name, v, a->nodes[v].op ? a->nodes[v].op : "no op");
        } else {
            pos[v] = (uint32_t)first[k];
            first[k] = next[first[k]];
        }
    }
    mp_strmap_free(&m);
    mp_xfree(next), mp_xfree(first), mp_xfree(tail), mp_xfree(at_a), mp_xfree(at_b);
    mp_buf_free(&ka), mp_buf_free(&kb);
    return ok;
}

/* Node a before node b in the reordered graph, or why not into err. */
static bool kept(const mp_graphdef *g, const uint32_t *pos, int32_t a, uint32_t b, const char *why, mp_err *err) {
    if (a < 0 || (uint32_t)a == b || pos[a] < pos[b]) return true;
    mp_err_set(err, MP_EINVALID, "graph '%s': node %u (%s) now runs before node %d (%s), which %s", g->name, b,
               g->nodes[b].op ? g->nodes[b].op : "no op", a, g->nodes[a].op ? g->nodes[a].op : "no op", why);
    return false;
}

/* The dependencies of the original graph g, kept under pos. */
static bool dependencies_kept(const mp_graphdef *g, const uint32_t *pos, mp_err *err) {
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        bool fixed_kind = g->nodes[v].kind == MP_NODE_PLACEHOLDER || g->nodes[v].kind == MP_NODE_OUTPUT;
        if (fixed_kind && pos[v] != v)
            return mp_err_set(err, MP_EINVALID, "graph '%s': node %u, a %s, moved to %u", g->name, v,
                              g->nodes[v].kind == MP_NODE_OUTPUT ? "output" : "placeholder", pos[v]), false;
        for (uint32_t i = 0; i < g->nodes[v].n_in; i++) {
            const mp_tensor *x = &g->tensors[g->nodes[v].in[i]];
            int32_t d = x->def_node >= 0 ? x->def_node : g->tensors[x->root].def_node;
            if (!kept(g, pos, d, v, "writes a tensor it reads", err)) return false;
        }
    }
    /* storage written in place, or mutable: its nodes in their order */
    int32_t *roots = mp_inplace_roots(g, false);
    uint8_t *written = mp_xcalloc((size_t)g->n_tensors + 1, 1);
    int32_t *last = mp_xmalloc(((size_t)g->n_tensors + 1) * sizeof *last);
    for (uint32_t t = 0; t < g->n_tensors; t++) last[t] = -1;
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        int32_t r = roots[t] >= 0 ? roots[t] : g->tensors[t].root;
        roots[t] = r;
        if (g->tensors[t].inplace_base >= 0 || (g->tensors[t].flags & MP_T_MUTABLE)) written[r] = 1;
    }
    bool ok = true;
    for (uint32_t v = 0; v < g->n_nodes && ok; v++)
        for (int side = 0; side < 2 && ok; side++) {
            const mp_node *nd = &g->nodes[v];
            for (uint32_t i = 0; i < (side ? nd->n_out : nd->n_in) && ok; i++) {
                int32_t r = roots[side ? nd->out[i] : nd->in[i]];
                if (!written[r]) continue;
                ok = kept(g, pos, last[r], v, "names the same storage written in place (or a mutable buffer) first",
                          err);
                last[r] = (int32_t)v;
            }
        }
    mp_xfree(roots), mp_xfree(written), mp_xfree(last);
    return ok;
}

static int order_check(const mp_program *orig, const mp_program *re, mp_err *err) {
    if (orig->n_graphs != re->n_graphs || orig->n_entries != re->n_entries)
        return mp_err_set(err, MP_EINVALID, "%u graphs and %u methods, the original has %u and %u", re->n_graphs,
                          re->n_entries, orig->n_graphs, orig->n_entries);
    for (uint32_t k = 0; k < orig->n_entries; k++)
        if (orig->entries[k] != re->entries[k])
            return mp_err_set(err, MP_EINVALID, "method %u is not the original's", k);
    for (uint32_t gi = 0; gi < orig->n_graphs; gi++) {
        const mp_graphdef *a = &orig->graphs[gi], *b = &re->graphs[gi];
        if (strcmp(a->name, b->name))
            return mp_err_set(err, MP_EINVALID, "graph %u is '%s', the original's is '%s'", gi, b->name, a->name);
        uint32_t *pos = mp_xcalloc((size_t)a->n_nodes + 1, sizeof *pos);
        bool ok = same_tensors(a, b, err) && match_nodes(orig, a, re, b, pos, err) && dependencies_kept(a, pos, err);
        mp_xfree(pos);
        if (!ok) return MP_EINVALID;
    }
    return MP_OK;
}

typedef struct order_call {
    const mp_program *orig, *re;
    mp_err *err;
} order_call;

static int order_work(void *ctx) {
    const order_call *c = ctx;
    return order_check(c->orig, c->re, c->err);
}

int mp_verify_order(const mp_program *original, const mp_program *reordered, mp_err *err) {
    if (!original || !reordered) return mp_err_set(err, MP_EFORMAT, "mp_verify_order: no program");
    order_call c = {original, reordered, err};
    return mp_guard_run(err, order_work, &c);
}
