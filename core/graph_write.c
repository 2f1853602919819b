/* graph_write.c - the .mpg writer: canonical text for a program, so that
 * parse(write(p)) is the same program (the fuzz round-trip relies on it).
 * Its lines are built without printf, which was half of `memplan gen`'s
 * time at 10^6 tensors (five calls a tensor), and in place where they are
 * many (mp_buf_room: a call per field was a fifth). */
#include "internal.h"

/* " key=value" */
static void put_pair(mp_buf *b, const char *key, const char *value) {
    size_t n = strlen(value);
    char *p = mp_buf_room(b, strlen(key) + n + 2);
    if (p) mp_buf_done(b, mp_put_text(mp_put_key(p, key), value, n));
}

/* " key=N" */
static void put_number(mp_buf *b, const char *key, uint64_t n) {
    char *p = mp_buf_room(b, strlen(key) + MP_U64_DIGITS + 2);
    if (p) mp_buf_done(b, mp_put_u64(mp_put_key(p, key), n));
}

void mp_graph_put_begin(mp_buf *b, const char *name) {
    mp_buf_puts(b, "graph ");
    mp_buf_puts(b, name);
    mp_buf_put(b, "\n", 1);
}

static void put_list(mp_buf *b, const char *key, const int32_t *v, uint32_t n,
                     mp_name_fn name, const void *ctx) {
    if (!n) return;
    for (uint32_t i = 0; i < n; i++) {
        char buf[24];
        const char *s = name(ctx, v[i], buf);
        size_t len = strlen(s);
        char *p = mp_buf_room(b, strlen(key) + len + 2);
        if (!p) return;
        p = i ? mp_put_text(p, ",", 1) : mp_put_key(p, key);
        mp_buf_done(b, mp_put_text(p, s, len));
    }
}

/* One `tensor` line; inplace and view are the bases' names, or NULL,
 * offset its bytes' place in the base (written when not 0).  The generator
 * and the fuzz decoder write their graphs with it too. */
void mp_graph_put_tensor(mp_buf *b, const char *name, uint64_t size, mp_device dev,
                         uint32_t flags, uint32_t mem_id, uint64_t at, const char *inplace,
                         const char *view, uint64_t offset) {
    char d[24];
    size_t len = strlen(name);
    char *p = mp_buf_room(b, len + MP_U64_DIGITS + 8);
    if (!p) return;
    p = mp_put_text(p, "tensor ", 7);
    p = mp_put_text(p, name, len);
    *p++ = ' ';
    mp_buf_done(b, mp_put_u64(p, size));
    if (dev.type != MP_DEV_CPU || dev.index != 0) put_pair(b, "device", mp_device_str(dev, d));
    if (flags & MP_T_CONST) mp_buf_puts(b, " const");
    if (flags & MP_T_MUTABLE) mp_buf_puts(b, " mutable");
    if (flags & MP_T_DYNAMIC) mp_buf_puts(b, " dynamic");
    if (flags & MP_T_SHARED) mp_buf_puts(b, " shared");
    if (mem_id) put_number(b, "mem_id", mem_id);
    if (flags & MP_T_PINNED) put_number(b, "at", at);
    if (inplace) put_pair(b, "inplace", inplace);
    if (view) put_pair(b, "view", view);
    if (offset && (inplace || view)) put_number(b, "offset", offset);
    mp_buf_put(b, "\n", 1);
}

const char *mp_node_sub_key(uint32_t kind, int s) {
    static const char *const keys[8][2] = {
        [MP_NODE_COND] = {"true", "false"}, [MP_NODE_WHILE] = {"cond", "body"},
        [MP_NODE_MAP] = {"body", NULL},     [MP_NODE_SCAN] = {"body", NULL}};
    return kind < 8 && (s == 0 || s == 1) ? keys[kind][s] : NULL;
}

static void put_tensor(mp_buf *b, const mp_graphdef *g, const mp_tensor *t) {
    mp_graph_put_tensor(b, t->name, t->size, t->device, t->flags, t->mem_id, t->at,
                        t->inplace_base >= 0 ? g->tensors[t->inplace_base].name : NULL,
                        t->view_base >= 0 ? g->tensors[t->view_base].name : NULL, t->offset);
}

/* One `node` line: tensors are named by name(ctx, index, buf) (buf holds
 * 24 bytes for names made on the fly), sub-graphs by sub[] (NULL: none).
 * The generator and the fuzz decoder write their graphs with it too. */
void mp_graph_put_node(mp_buf *b, const mp_node_line *nl, mp_name_fn name, const void *ctx) {
    mp_buf_puts(b, "node ");
    mp_buf_puts(b, mp_node_kind_name(nl->kind));
    if (nl->op) put_pair(b, "op", nl->op);
    put_list(b, "in", nl->in, nl->n_in, name, ctx);
    put_list(b, "out", nl->out, nl->n_out, name, ctx);
    for (int s = 0; s < 2; s++)
        if (nl->sub[s] && mp_node_sub_key(nl->kind, s))
            put_pair(b, mp_node_sub_key(nl->kind, s), nl->sub[s]);
    if (nl->backend) put_pair(b, "backend", nl->backend);
    if (nl->scratch) put_number(b, "scratch", nl->scratch);
    if (nl->span > 1) put_number(b, "span", nl->span);
    mp_buf_put(b, "\n", 1);
}

static const char *tensor_name(const void *ctx, int32_t t, char *buf) {
    (void)buf;
    return ((const mp_graphdef *)ctx)->tensors[t].name;
}

static void put_node(mp_buf *b, const mp_program *prog, const mp_graphdef *g,
                     const mp_node *nd) {
    mp_node_line nl = {nd->kind, nd->in, nd->out, nd->n_in, nd->n_out, {NULL, NULL}, nd->backend, nd->op, 0,
                       nd->span};
    for (int s = 0; s < 2; s++)
        if (nd->sub[s] >= 0) nl.sub[s] = prog->graphs[nd->sub[s]].name;
    /* a scratch tensor is the node's last output, written as scratch= */
    if (nl.n_out && (g->tensors[nd->out[nl.n_out - 1]].flags & MP_T_SCRATCH))
        nl.scratch = g->tensors[nd->out[--nl.n_out]].size;
    mp_graph_put_node(b, &nl, tensor_name, g);
}

/* All tensors first, in declaration order, then the nodes: that keeps the
 * declaration order (allocs are listed in it) and declare-before-use. */
void mp_graph_write(const mp_program *prog, mp_buf *b) {
    mp_buf_puts(b, "memplan-graph 1\n");
    if (prog->banks.n) {
        mp_buf_puts(b, "banks ");
        mp_banks_write(&prog->banks, ' ', '=', b);
        mp_buf_put(b, "\n", 1);
    }
    if (prog->n_entries) { /* the methods */
        mp_buf_puts(b, "entry");
        for (uint32_t k = 0; k < prog->n_entries; k++) mp_buf_printf(b, " %s", prog->graphs[prog->entries[k]].name);
        mp_buf_put(b, "\n", 1);
    }
    for (uint32_t gi = 0; gi < prog->n_graphs; gi++) {
        const mp_graphdef *g = &prog->graphs[gi];
        mp_graph_put_begin(b, g->name);
        for (uint32_t t = 0; t < g->n_tensors; t++)
            if (!(g->tensors[t].flags & MP_T_SCRATCH)) put_tensor(b, g, &g->tensors[t]);
        for (uint32_t i = 0; i < g->n_nodes; i++)
            put_node(b, prog, g, &g->nodes[i]);
        mp_buf_puts(b, "end\n");
    }
}
