/* fuzz_parse.c - target "parse": the .mpg parser and writer.
 *
 * Any bytes.  A rejected input must come back as MP_EFORMAT with a
 * "FILE:LINE: message".  An accepted one must hold every promise the parser
 * makes to later stages (parse.c's header comment), must write back to
 * text that parses to the same program, and writing that program again
 * must give the same bytes (the writer is canonical). */
#include "fuzz.h"
#include "internal.h"

#include <string.h>

static const char FILE_NAME[] = "<fuzz>";

/* The parser's promises: indices in range, views resolved to non-view
 * roots, one defining node per root, placeholders first with one out=,
 * exactly one output node and last, sub-graphs that exist and no graph
 * reaching itself. */
/* Every tensor of graph g: names, ranges, views resolved to their root,
 * each root defined by one node that names it. */
static void check_tensors(const mp_graphdef *g) {
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        const mp_tensor *x = &g->tensors[t];
        if (g->n_tensors <= 256) /* quadratic */
            FUZZ_ASSERT(mp_tensor_find(g, x->name) == (int32_t)t, "tensor %s twice", x->name);
        FUZZ_ASSERT(strlen(x->name) <= MP_MAX_NAME, "tensor name too long");
        FUZZ_ASSERT(x->size < MP_MAX_SIZE, "tensor %s size out of range", x->name);
        FUZZ_ASSERT(x->mem_id <= MP_MAX_MEM_ID, "mem_id out of range");
        FUZZ_ASSERT(x->device.type <= MP_DEV_CUDA && x->device.index <= MP_MAX_DEVICE_INDEX,
                    "bad device");
        FUZZ_ASSERT(x->inplace_base >= -1 && x->inplace_base < (int32_t)g->n_tensors,
                    "inplace base out of range");
        FUZZ_ASSERT(x->view_base >= -1 && x->view_base < (int32_t)g->n_tensors,
                    "view base out of range");
        FUZZ_ASSERT(x->root >= 0 && x->root < (int32_t)g->n_tensors, "root out of range");
        const mp_tensor *r = &g->tensors[x->root];
        FUZZ_ASSERT(r->view_base < 0 && r->root == x->root, "root of %s is a view", x->name);
        FUZZ_ASSERT((x->view_base < 0) == (x->root == (int32_t)t), "view/root mismatch");
        if (x->view_base >= 0) {
            FUZZ_ASSERT(g->tensors[x->view_base].root == x->root, "view chain broken");
        } else {
            FUZZ_ASSERT(x->def_node >= 0 && x->def_node < (int32_t)g->n_nodes,
                        "root %s has no defining node", x->name);
            const mp_node *d = &g->nodes[x->def_node];
            uint32_t k = 0;
            while (k < d->n_out && d->out[k] != (int32_t)t) k++;
            FUZZ_ASSERT(k < d->n_out, "defining node of %s does not name it", x->name);
            if (x->flags & MP_T_MUTABLE)
                FUZZ_ASSERT(d->kind == MP_NODE_PLACEHOLDER, "mutable %s not a placeholder",
                            x->name);
        }
    }
}

/* Every node of graph g: operands in range, placeholders first, one
 * output node, a backend exactly on delegates, the sub-graphs its kind
 * takes. */
static void check_nodes(const mp_program *p, const mp_graphdef *g) {
    bool body = false;
    uint32_t outputs = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const mp_node *nd = &g->nodes[i];
        FUZZ_ASSERT(nd->kind <= MP_NODE_OUTPUT, "bad node kind");
        for (uint32_t k = 0; k < nd->n_in; k++)
            FUZZ_ASSERT(nd->in[k] >= 0 && nd->in[k] < (int32_t)g->n_tensors, "bad in=");
        for (uint32_t k = 0; k < nd->n_out; k++) {
            int32_t t = nd->out[k];
            FUZZ_ASSERT(t >= 0 && t < (int32_t)g->n_tensors, "bad out=");
            if (g->tensors[t].view_base < 0)
                FUZZ_ASSERT(g->tensors[t].def_node == (int32_t)i, "two defining nodes");
        }
        if (nd->kind == MP_NODE_PLACEHOLDER) {
            FUZZ_ASSERT(!body, "placeholder after the body");
            FUZZ_ASSERT(nd->n_in == 0 && nd->n_out == 1, "placeholder shape");
            FUZZ_ASSERT(g->tensors[nd->out[0]].view_base < 0, "placeholder defines a view");
        } else {
            body = true;
        }
        if (nd->kind == MP_NODE_OUTPUT) {
            outputs++;
            FUZZ_ASSERT(nd->n_out == 0, "output node with out=");
        }
        FUZZ_ASSERT((nd->kind == MP_NODE_DELEGATE) == (nd->backend != NULL), "backend");
        int want = nd->kind == MP_NODE_COND || nd->kind == MP_NODE_WHILE ? 2
                   : nd->kind == MP_NODE_MAP || nd->kind == MP_NODE_SCAN ? 1 : 0;
        for (int s = 0; s < 2; s++) {
            if (s < want)
                FUZZ_ASSERT(nd->sub[s] >= 0 && nd->sub[s] < (int32_t)p->n_graphs,
                            "missing sub-graph");
            else
                FUZZ_ASSERT(nd->sub[s] == -1, "stray sub-graph");
        }
    }
    FUZZ_ASSERT(outputs == 1, "graph %s has %u output nodes", g->name, outputs);
}

/* No recursion: a graph reachable from each graph's children is never the
 * graph itself (small programs only; this is quadratic). */
static void check_no_recursion(const mp_program *p) {
    if (p->n_graphs > 64) return;
    bool *seen = mp_xcalloc(p->n_graphs, 1);
    int32_t *stack = mp_xmalloc((p->n_graphs + 1) * sizeof *stack);
    for (uint32_t root = 0; root < p->n_graphs; root++) {
        memset(seen, 0, p->n_graphs);
        size_t sp = 0;
        stack[sp++] = (int32_t)root;
        while (sp) {
            const mp_graphdef *g = &p->graphs[stack[--sp]];
            for (uint32_t i = 0; i < g->n_nodes; i++)
                for (int s = 0; s < 2; s++) {
                    int32_t c = g->nodes[i].sub[s];
                    if (c < 0 || seen[c]) continue;
                    FUZZ_ASSERT(c != (int32_t)root, "graph %s reaches itself", p->graphs[root].name);
                    seen[c] = true;
                    stack[sp++] = c;
                }
        }
    }
    mp_xfree(stack);
    mp_xfree(seen);
}

static void check_invariants(const mp_program *p) {
    FUZZ_ASSERT(p->n_graphs > 0, "program without graphs");
    for (uint32_t gi = 0; gi < p->n_graphs; gi++) {
        const mp_graphdef *g = &p->graphs[gi];
        FUZZ_ASSERT(g->name && *g->name, "graph %u has no name", gi);
        FUZZ_ASSERT(mp_graph_find(p, g->name) == (int32_t)gi, "graph name %s twice", g->name);
        FUZZ_ASSERT(g->n_nodes > 0 && g->nodes[g->n_nodes - 1].kind == MP_NODE_OUTPUT,
                    "graph %s does not end with its output node", g->name);
        check_tensors(g);
        check_nodes(p, g);
    }
    check_no_recursion(p);
}

static bool same_list(const int32_t *a, uint32_t na, const int32_t *b, uint32_t nb) {
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}

static bool same_str(const char *a, const char *b) {
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The same program, line numbers aside. */
static void check_same(const mp_program *a, const mp_program *b) {
    FUZZ_ASSERT(a->n_graphs == b->n_graphs, "round trip: %u graphs became %u", a->n_graphs,
                b->n_graphs);
    for (uint32_t gi = 0; gi < a->n_graphs; gi++) {
        const mp_graphdef *x = &a->graphs[gi], *y = &b->graphs[gi];
        FUZZ_ASSERT(strcmp(x->name, y->name) == 0, "round trip: graph name");
        FUZZ_ASSERT(x->n_tensors == y->n_tensors && x->n_nodes == y->n_nodes,
                    "round trip: graph %s changed shape", x->name);
        for (uint32_t t = 0; t < x->n_tensors; t++) {
            const mp_tensor *s = &x->tensors[t], *u = &y->tensors[t];
            FUZZ_ASSERT(strcmp(s->name, u->name) == 0 && s->size == u->size &&
                            mp_device_eq(s->device, u->device) && s->flags == u->flags &&
                            s->mem_id == u->mem_id && s->inplace_base == u->inplace_base &&
                            s->view_base == u->view_base && s->root == u->root &&
                            s->def_node == u->def_node,
                        "round trip: tensor %s of graph %s changed", s->name, x->name);
        }
        for (uint32_t i = 0; i < x->n_nodes; i++) {
            const mp_node *s = &x->nodes[i], *u = &y->nodes[i];
            FUZZ_ASSERT(s->kind == u->kind && same_list(s->in, s->n_in, u->in, u->n_in) &&
                            same_list(s->out, s->n_out, u->out, u->n_out) &&
                            s->sub[0] == u->sub[0] && s->sub[1] == u->sub[1] &&
                            same_str(s->backend, u->backend),
                        "round trip: node %u of graph %s changed", i, x->name);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mp_err err;
    mp_program *p = mp_graph_parse((const char *)data, size, FILE_NAME, &err);
    if (!p) {
        FUZZ_ASSERT(err.code == MP_EFORMAT, "rejected with code %d: %s", err.code, err.msg);
        FUZZ_ASSERT(strncmp(err.msg, "<fuzz>:", 7) == 0 && strlen(err.msg) > 9,
                    "message without FILE:LINE: '%s'", err.msg);
        return 0;
    }
    check_invariants(p);
    /* the queries the planners use must work on whatever parses */
    bool *reach = mp_xcalloc(p->n_graphs + 1, 1);
    mp_graph_reachable(p, reach);
    FUZZ_ASSERT(reach[0], "entry graph not reachable");
    mp_xfree(reach);
    for (uint32_t gi = 0; gi < p->n_graphs; gi++) (void)mp_graph_has_xnnpack(&p->graphs[gi]);

    mp_buf w1, w2;
    mp_buf_init(&w1);
    mp_buf_init(&w2);
    mp_graph_write(p, &w1);
    FUZZ_ASSERT(!w1.failed, "writer ran out of memory");
    mp_program *q = mp_graph_parse(w1.data, w1.len, FILE_NAME, &err);
    if (!q) fuzz_fail("written graph does not parse: %s\n--- written:\n%.*s", err.msg,
                      (int)(w1.len > 4000 ? 4000 : w1.len), w1.data);
    check_same(p, q);
    mp_graph_write(q, &w2);
    FUZZ_ASSERT(w1.len == w2.len && memcmp(w1.data, w2.data, w1.len) == 0,
                "writing the parsed written graph gives other bytes");
    mp_buf_free(&w1);
    mp_buf_free(&w2);
    mp_program_free(q);
    mp_program_free(p);
    return 0;
}
