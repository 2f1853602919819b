/* graph_binding.c - the operands of control-flow nodes against their
 * sub-graphs (docs/formats.md, "How a control-flow node's operands bind").
 *
 * ExecuTorch's higher-order operators bind positionally: a sub-graph's
 * placeholders are the node's operands, its output node's values are the
 * node's results.  A count that does not match is a program no exporter
 * writes, and the rules that rely on the binding (a cond's result is its
 * branch's output: D14 in docs/deviations.md) cannot be applied to it, so
 * it is a format error at the control-flow node's line.  Runs after every
 * graph is parsed and every sub-graph name resolved. */
#include "internal.h"

#include <stdarg.h>

typedef struct binding_ctx {
    const mp_graphdef *graphs;
    const char *file;
    mp_err *err;
    const mp_node *node;
} binding_ctx;

static int bad(binding_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(binding_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = mp_err_at(c->err, c->file, c->node->line, fmt, ap);
    va_end(ap);
    return rc;
}

static uint32_t placeholders(const mp_graphdef *g) {
    uint32_t n = 0;
    while (n < g->n_nodes && g->nodes[n].kind == MP_NODE_PLACEHOLDER) n++;
    return n; /* the parser keeps placeholders first */
}

/* The output node is the graph's last node (a parser invariant). */
static uint32_t results(const mp_graphdef *g) { return g->nodes[g->n_nodes - 1].n_in; }

static const char *plural(uint32_t n, const char *one, const char *many) {
    return n == 1 ? one : many;
}

/* Sub-graph `role` takes `operands` inputs and gives `outputs` results. */
static int expect(binding_ctx *c, const char *kind, const char *role, int32_t sub,
                  uint32_t operands, const char *after, uint32_t outputs) {
    const mp_graphdef *g = &c->graphs[sub];
    uint32_t np = placeholders(g), nr = results(g);
    if (np != operands)
        return bad(c, "%s passes %u %s%s to its %s graph '%s', which has %u %s", kind,
                   operands, plural(operands, "operand", "operands"), after, role, g->name, np,
                   plural(np, "placeholder", "placeholders"));
    if (nr != outputs)
        return bad(c, "%s's %s graph '%s' returns %u %s where %u %s expected", kind, role,
                   g->name, nr, plural(nr, "value", "values"), outputs,
                   plural(outputs, "is", "are"));
    return MP_OK;
}

static int check_node(binding_ctx *c) {
    const mp_node *nd = c->node;
    switch (nd->kind) {
    case MP_NODE_COND:
        if (nd->n_in == 0) return bad(c, "cond needs its predicate as its first input");
        if (expect(c, "cond", "true", nd->sub[0], nd->n_in - 1, " after its predicate",
                   nd->n_out))
            return MP_EFORMAT;
        return expect(c, "cond", "false", nd->sub[1], nd->n_in - 1,
                      " after its predicate", nd->n_out);
    case MP_NODE_WHILE:
        if (nd->n_out > nd->n_in)
            return bad(c, "while has %u outputs but %u inputs: its outputs are the final "
                          "values of its first inputs", nd->n_out, nd->n_in);
        if (expect(c, "while", "cond", nd->sub[0], nd->n_in, "", 1)) return MP_EFORMAT;
        return expect(c, "while", "body", nd->sub[1], nd->n_in, "", nd->n_out);
    case MP_NODE_MAP:
        if (nd->n_in == 0) return bad(c, "map needs at least one input to map over");
        return expect(c, "map", "body", nd->sub[0], nd->n_in, "", nd->n_out);
    case MP_NODE_SCAN:
        return expect(c, "scan", "body", nd->sub[0], nd->n_in, "", nd->n_out);
    default:
        return MP_OK;
    }
}

int mp_check_binding(const mp_graphdef *graphs, size_t n_graphs, const char *file,
                     mp_err *err) {
    binding_ctx c = {graphs, file, err, NULL};
    for (size_t g = 0; g < n_graphs; g++)
        for (uint32_t i = 0; i < graphs[g].n_nodes; i++) {
            c.node = &graphs[g].nodes[i];
            if (check_node(&c)) return MP_EFORMAT;
        }
    return MP_OK;
}
