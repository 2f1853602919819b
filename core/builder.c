/* builder.c - a program built in memory, call by call (mp_builder_*).
 *
 * The builder writes the .mpg text a file would hold and parses it when
 * finished, so a built program obeys exactly the rules of a parsed one and
 * the parser stays the one place that checks them.  What the text cannot
 * carry is checked here first: names must be tokens of the format (a name
 * with a space or a newline would otherwise write a different program).
 * A tensor may be added after the nodes that name it: each graph's tensor
 * lines are written before its node lines.  The parser's "FILE:LINE"
 * becomes the call that wrote that line.
 *
 * Allocation: the builder lives across calls, so it does not run under the
 * allocation guard (a guard frees what the failed call allocated, which
 * the builder may already point to); it checks each allocation and
 * returns MP_ENOMEM.  A tensor or node call that fails leaves the builder
 * as it was; after a graph or finish call fails, only free it. */
#include "internal.h"

#include <stddef.h>

/* mp_tensor_spec as 2.0 declared it: every field before offset */
#define MP_TENSOR_SPEC_SIZE_2_0 offsetof(mp_tensor_spec, offset)

/* Lines of text and, for each, which call wrote it. */
typedef struct lines {
    mp_buf text;
    char **what; /* per line: "graph 'g', tensor 'x'" */
    size_t n, cap;
} lines;

struct mp_builder {
    lines done;            /* header and finished graphs */
    lines tensors, nodes;  /* the open graph's lines */
    char graph[MP_MAX_NAME + 1];
    bool open;             /* a graph is open */
    uint32_t n_graphs, n_nodes;
};

static void lines_free(lines *l) {
    for (size_t i = 0; i < l->n; i++) mp_xfree(l->what[i]);
    mp_xfree(l->what);
    mp_buf_free(&l->text);
    memset(l, 0, sizeof *l);
}

/* Append one line (text ends with '\n') and its description; MP_ENOMEM
 * leaves l as it was. */
static int lines_add(lines *l, const char *text, size_t len, const char *what) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **w = mp_try_realloc(l->what, cap * sizeof *w);
        if (!w) return MP_ENOMEM;
        l->what = w;
        l->cap = cap;
    }
    size_t wl = strlen(what);
    char *copy = mp_try_realloc(NULL, wl + 1);
    size_t old = l->text.len;
    mp_buf_put(&l->text, text, len);
    if (!copy || l->text.failed) {
        mp_xfree(copy);
        l->text.failed = false;
        l->text.len = old;
        if (l->text.data) l->text.data[old] = 0;
        return MP_ENOMEM;
    }
    memcpy(copy, what, wl + 1);
    l->what[l->n++] = copy;
    return MP_OK;
}

/* Move every line of `from` to the end of `to`. */
static int lines_move(lines *to, lines *from) {
    const char *s = from->text.data;
    for (size_t i = 0; i < from->n; i++) {
        const char *e = strchr(s, '\n') + 1;
        if (lines_add(to, s, (size_t)(e - s), from->what[i])) return MP_ENOMEM;
        s = e;
    }
    lines_free(from);
    return MP_OK;
}

static int nomem(mp_err *err) { return mp_err_set(err, MP_ENOMEM, "builder: out of memory"); }

/* A name of the format: [A-Za-z0-9_.$-]+, at most MP_MAX_NAME bytes. */
static bool valid_name(const char *s) {
    size_t n = 0;
    for (; s && s[n]; n++) {
        char c = s[n];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '$' || c == '-';
        if (!ok) return false;
    }
    return n > 0 && n <= MP_MAX_NAME;
}

static int check_name(const char *s, const char *what, const char *where, mp_err *err) {
    char q[48];
    if (valid_name(s)) return MP_OK;
    return mp_err_set(err, MP_EFORMAT, "builder: %s: %s name '%s' is not [A-Za-z0-9_.$-]+ of 1..%d bytes",
                      where, what, s ? mp_quote(s, strlen(s), q) : "(null)", MP_MAX_NAME);
}

mp_builder *mp_builder_new(mp_err *err) {
    mp_err_clear(err);
    mp_builder *b = mp_try_realloc(NULL, sizeof *b);
    if (!b) {
        nomem(err);
        return NULL;
    }
    memset(b, 0, sizeof *b);
    if (lines_add(&b->done, "memplan-graph 1\n", 16, "the header")) {
        mp_builder_free(b);
        nomem(err);
        return NULL;
    }
    return b;
}

void mp_builder_free(mp_builder *b) {
    if (!b) return;
    lines_free(&b->done);
    lines_free(&b->tensors);
    lines_free(&b->nodes);
    mp_xfree(b);
}

/* Close the open graph: its tensors, its nodes, "end". */
static int close_graph(mp_builder *b) {
    if (!b->open) return MP_OK;
    char what[MP_MAX_NAME + 16];
    snprintf(what, sizeof what, "graph '%s'", b->graph);
    if (lines_move(&b->done, &b->tensors) || lines_move(&b->done, &b->nodes) ||
        lines_add(&b->done, "end\n", 4, what))
        return MP_ENOMEM;
    b->open = false;
    return MP_OK;
}

int mp_builder_graph(mp_builder *b, const char *name, mp_err *err) {
    mp_err_clear(err);
    char where[32];
    snprintf(where, sizeof where, "graph %u", b->n_graphs);
    if (check_name(name, "graph", where, err)) return err->code;
    if (close_graph(b)) return nomem(err);
    char line[MP_MAX_NAME + 16], what[MP_MAX_NAME + 16];
    int n = snprintf(line, sizeof line, "graph %s\n", name);
    snprintf(what, sizeof what, "graph '%s'", name);
    if (lines_add(&b->done, line, (size_t)n, what)) return nomem(err);
    snprintf(b->graph, sizeof b->graph, "%s", name);
    b->open = true;
    b->n_graphs++;
    b->n_nodes = 0;
    return MP_OK;
}

/* A spec as this library knows it from one a caller filled by its own
 * header: its struct_size bytes, the fields it lacks (an older header)
 * zero; bytes past ours (a newer header) must be zero, or the caller asks
 * for something this library cannot do.  The size of the first release of
 * a spec (min_size: 2.0's) is the smallest a caller can give. */
static int spec_in(const void *given, void *mine, size_t min_size, size_t my_size, const char *what, mp_err *err) {
    uint32_t size;
    memcpy(&size, given, sizeof size);
    if (size < min_size)
        return mp_err_set(err, MP_EFORMAT, "builder: %s spec of %u bytes: set struct_size to sizeof(%s) (%zu here)",
                          what, size, what, my_size);
    for (size_t i = my_size; i < size; i++)
        if (((const unsigned char *)given)[i])
            return mp_err_set(err, MP_EFORMAT, "builder: %s spec of %u bytes sets fields this library (%s, %zu "
                              "bytes) does not have", what, size, MEMPLAN_VERSION, my_size);
    memset(mine, 0, my_size);
    memcpy(mine, given, size < my_size ? size : my_size);
    return MP_OK;
}

int mp_builder_tensor(mp_builder *b, const mp_tensor_spec *given, mp_err *err) {
    mp_err_clear(err);
    mp_tensor_spec spec;
    if (!b || !given) return mp_err_set(err, MP_EFORMAT, "mp_builder_tensor: a NULL argument");
    if (spec_in(given, &spec, MP_TENSOR_SPEC_SIZE_2_0, sizeof spec, "mp_tensor_spec", err)) return err->code;
    const mp_tensor_spec *t = &spec;
    char where[2 * MP_MAX_NAME + 32];
    snprintf(where, sizeof where, "graph '%s', tensor '%.255s'", b->graph,
             t->name && valid_name(t->name) ? t->name : "?");
    if (!b->open) return mp_err_set(err, MP_EFORMAT, "builder: %s: no graph started", where);
    if (check_name(t->name, "tensor", where, err) ||
        (t->inplace && check_name(t->inplace, "in-place base", where, err)) ||
        (t->view && check_name(t->view, "view base", where, err)))
        return err->code;
    if (t->flags & ~(uint32_t)(MP_T_CONST | MP_T_MUTABLE | MP_T_DYNAMIC | MP_T_PINNED | MP_T_SHARED) ||
        t->device.type > MP_DEV_CUDA)
        return mp_err_set(err, MP_EFORMAT, "builder: %s: unknown flags or device type", where);
    if (t->offset && !t->inplace && !t->view)
        return mp_err_set(err, MP_EFORMAT, "builder: %s: an offset places the tensor in its base's storage: "
                          "it needs an in-place or a view base", where);
    mp_buf line;
    mp_buf_init(&line);
    mp_graph_put_tensor(&line, t->name, t->size, t->device, t->flags, t->mem_id, t->at, t->inplace,
                        t->view, t->offset);
    int rc = line.failed ? MP_ENOMEM : lines_add(&b->tensors, line.data, line.len, where);
    mp_buf_free(&line);
    return rc ? nomem(err) : MP_OK;
}

static const char *spec_name(const void *ctx, int32_t t, char *buf) {
    (void)buf;
    return ((const char *const *)ctx)[t];
}

/* The node's names are tokens of the format; its lists are given. */
static int check_node(const mp_node_spec *n, const char *where, mp_err *err) {
    if (n->kind > MP_NODE_OUTPUT || (n->n_in && !n->in) || (n->n_out && !n->out))
        return mp_err_set(err, MP_EFORMAT, "builder: %s: unknown kind or missing list", where);
    for (uint32_t i = 0; i < n->n_in; i++)
        if (check_name(n->in[i], "input", where, err)) return err->code;
    for (uint32_t i = 0; i < n->n_out; i++)
        if (check_name(n->out[i], "output", where, err)) return err->code;
    for (int s = 0; s < 2; s++)
        if (n->sub[s] && check_name(n->sub[s], "sub-graph", where, err)) return err->code;
    if (n->backend && check_name(n->backend, "backend", where, err)) return err->code;
    /* the operator's characters are checked by the parser at finish; here
     * only that it stays one token of the line */
    for (const char *c = n->op; c && *c; c++)
        if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f || *c == '#' || *c == '=' || *c == ',')
            return mp_err_set(err, MP_EFORMAT, "builder: %s: operator name holds a space, '#', '=' or ','", where);
    if (n->op && !*n->op) return mp_err_set(err, MP_EFORMAT, "builder: %s: empty operator name", where);
    return MP_OK;
}

int mp_builder_node(mp_builder *b, const mp_node_spec *given, mp_err *err) {
    mp_err_clear(err);
    mp_node_spec spec;
    if (!b || !given) return mp_err_set(err, MP_EFORMAT, "mp_builder_node: a NULL argument");
    if (spec_in(given, &spec, sizeof spec, sizeof spec, "mp_node_spec", err)) return err->code;
    const mp_node_spec *n = &spec;
    char where[MP_MAX_NAME + 64];
    snprintf(where, sizeof where, "graph '%s', node %u (%s)", b->graph, b->n_nodes,
             mp_node_kind_name(n->kind));
    if (!b->open) return mp_err_set(err, MP_EFORMAT, "builder: %s: no graph started", where);
    if (check_node(n, where, err)) return err->code;
    /* the writer names tensors by index: inputs, then outputs */
    const char **names = mp_try_realloc(NULL, ((size_t)n->n_in + n->n_out + 1) * sizeof *names);
    if (!names) return nomem(err);
    int32_t *idx = mp_try_realloc(NULL, ((size_t)n->n_in + n->n_out + 1) * sizeof *idx);
    if (!idx) {
        mp_xfree(names);
        return nomem(err);
    }
    for (uint32_t i = 0; i < n->n_in + n->n_out; i++) {
        names[i] = i < n->n_in ? n->in[i] : n->out[i - n->n_in];
        idx[i] = (int32_t)i;
    }
    mp_buf line;
    mp_buf_init(&line);
    mp_node_line nl = {n->kind, idx, idx + n->n_in, n->n_in, n->n_out, {n->sub[0], n->sub[1]}, n->backend, n->op,
                       n->scratch, 0};
    mp_graph_put_node(&line, &nl, spec_name, names);
    int rc = line.failed ? MP_ENOMEM : lines_add(&b->nodes, line.data, line.len, where);
    mp_buf_free(&line);
    mp_xfree(names);
    mp_xfree(idx);
    if (rc) return nomem(err);
    b->n_nodes++;
    return MP_OK;
}

/* "<builder>:N: what" becomes "builder: <the call of line N>: what". */
static void name_the_call(const mp_builder *b, mp_err *err) {
    const char *prefix = "<builder>:";
    size_t pl = strlen(prefix);
    if (strncmp(err->msg, prefix, pl) != 0) return;
    char *end;
    unsigned long line = strtoul(err->msg + pl, &end, 10);
    if (end[0] != ':' || line == 0 || line > b->done.n) return;
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "builder: %s:%s", b->done.what[line - 1], end + 1);
    memcpy(err->msg, msg, sizeof msg);
}

int mp_builder_methods(mp_builder *b, const char *const *names, uint32_t n, mp_err *err) {
    mp_err_clear(err);
    if (!n || !names) return mp_err_set(err, MP_EFORMAT, "builder: methods: no graph named");
    for (uint32_t k = 0; k < n; k++)
        if (check_name(names[k], "method", "methods", err)) return err->code;
    if (close_graph(b)) return nomem(err); /* an entry line stands outside the graphs */
    mp_buf line;
    mp_buf_init(&line);
    mp_buf_puts(&line, "entry");
    for (uint32_t k = 0; k < n; k++) mp_buf_printf(&line, " %s", names[k]);
    mp_buf_put(&line, "\n", 1);
    int rc = line.failed ? MP_ENOMEM : lines_add(&b->done, line.data, line.len, "the methods");
    mp_buf_free(&line);
    return rc ? nomem(err) : MP_OK;
}

mp_program *mp_builder_finish(mp_builder *b, mp_err *err) {
    mp_err_clear(err);
    if (close_graph(b)) {
        nomem(err);
        return NULL;
    }
    if (b->done.text.failed) {
        nomem(err);
        return NULL;
    }
    mp_program *p = mp_graph_parse(b->done.text.data, b->done.text.len, "<builder>", err);
    if (!p) name_the_call(b, err);
    return p;
}
