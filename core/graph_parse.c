/* graph_parse.c - the .mpg (memplan-graph 1) parser.
 *
 * One pass over the lines builds the graphs; references that may point
 * forward (view=, inplace=, sub-graph names) are resolved when their graph
 * closes or when the file ends.  Every rule of the format is checked here,
 * so later stages may rely on a well-formed program:
 *   - every non-view tensor is in the out= of exactly one node;
 *   - placeholders come first and have exactly one out=; one output, last;
 *   - views resolve to a non-view root (no view cycles);
 *   - control-flow nodes name existing graphs and no graph reaches itself;
 *   - their operand counts match their sub-graphs (graph_binding.c).
 * Cost is linear in the file size (hash maps for names). */
#include "graph_lookup.h"

#include <stdio.h>

#define MAX_TOKENS 32


typedef struct pgraph {
    mp_graphdef g;
    size_t tcap, ncap;
    /* tensors[0, named) are in names; the rest are added at the graph's
     * next name lookup, all at once (add_names) */
    mp_strmap names;
    uint32_t named;
    /* the tensors with view= or inplace=, in tensor order, with those
     * names until the graph closes (a list of the few, not two names per
     * tensor: at 10^7 tensors those arrays were 0.3 GB of empty slots) */
    struct base_ref {
        uint32_t tensor;
        mp_tok view, inplace;
    } *refs;
    size_t n_refs, refs_cap;
    bool seen_body, seen_output;
    /* delegate nodes' scratch= (node, bytes) until the graph closes */
    struct scratch_ref {
        int32_t node;
        uint64_t bytes;
    } *scratch;
    size_t n_scratch, scratch_cap;
} pgraph;

typedef struct subref {
    int32_t graph, node, slot, line;
    mp_tok name;
} subref;

typedef struct parser {
    const char *file;
    int line;
    mp_err *err;
    mp_arena *arena;
    pgraph *graphs;
    size_t n_graphs, gcap;
    mp_strmap graph_names;
    subref *subs;
    size_t n_subs, scap;
    pgraph *cur;
    mp_banks banks; /* the `banks` line */
    bool have_banks;
    mp_tok *entry; /* the `entry` line's names (copied into the arena), its line */
    uint32_t n_entry;
    int entry_line;
    const mp_lines *lines;  /* the text, at the line after the one being parsed */
    mp_arena *kept;         /* names kept past their line (view=, inplace=, sub-graphs) */
    mp_lookup look;         /* the current graph's name lookups */
} parser;

static int fail(parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int fail(parser *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = mp_err_at(p->err, p->file, p->line, fmt, ap);
    va_end(ap);
    return rc;
}


static const char *Q(mp_tok t, char *buf) { return mp_quote(t.s, t.n, buf); }

static bool name_char(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$' ||
           c == '-';
}

/* An operator's name: a name, or a qualified one as compilers print them
 * (aten::add.Tensor, torch.nn.modules.conv.Conv2d, <built-in>...). */
static bool op_char(unsigned char c) { return name_char(c) || (c && strchr(":/@+()[]<>", c)); }

static int check_op(parser *p, mp_tok t) {
    char q[48];
    if (t.n == 0) return fail(p, "empty operator name");
    if (t.n > MP_MAX_NAME) return fail(p, "operator name '%s' is longer than %d bytes", Q(t, q), MP_MAX_NAME);
    for (size_t i = 0; i < t.n; i++)
        if (!op_char((unsigned char)t.s[i])) return fail(p, "invalid character in operator name '%s'", Q(t, q));
    return MP_OK;
}

static int check_name(parser *p, mp_tok t, const char *what) {
    char q[48];
    if (t.n == 0) return fail(p, "empty %s name", what);
    if (t.n > MP_MAX_NAME)
        return fail(p, "%s name '%s' is longer than %d bytes", what, Q(t, q),
                    MP_MAX_NAME);
    for (size_t i = 0; i < t.n; i++)
        if (!name_char((unsigned char)t.s[i]))
            return fail(p, "invalid character in %s name '%s'", what, Q(t, q));
    return MP_OK;
}

/* Decimal digits only; fails when the value reaches `limit`. */
static bool parse_u64(mp_tok t, uint64_t limit, uint64_t *out) {
    if (t.n == 0) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < t.n; i++) {
        unsigned c = (unsigned char)t.s[i];
        if (c < '0' || c > '9') return false;
        if (v > (limit - (c - '0')) / 10) return false;
        v = v * 10 + (c - '0');
        if (v >= limit) return false;
    }
    *out = v;
    return true;
}

static bool parse_device(mp_tok t, mp_device *d) {
    const char *colon = memchr(t.s, ':', t.n);
    mp_tok type = {t.s, colon ? (size_t)(colon - t.s) : t.n};
    if (mp_tok_is(type, "cpu")) d->type = MP_DEV_CPU;
    else if (mp_tok_is(type, "cuda")) d->type = MP_DEV_CUDA;
    else return false;
    d->index = 0;
    if (!colon) return true;
    mp_tok idx = {colon + 1, t.n - type.n - 1};
    uint64_t v;
    if (!parse_u64(idx, MP_MAX_DEVICE_INDEX + 1ull, &v)) return false;
    d->index = (uint32_t)v;
    return true;
}

/* A name that outlives its line: the line is gone once the file's window
 * moves on (lines.c). */
static mp_tok keep(parser *p, mp_tok t) {
    return t.n ? (mp_tok){mp_arena_strndup(p->kept, t.s, t.n), t.n} : t;
}

/* ------------------------------------------------------------- tensors */

/* A tensor's view_base while its view= name waits for the graph's end. */
#define VIEW_PENDING (-2)

/* Room for cap tensors. */
static void reserve_tensors(pgraph *g, size_t cap) {
    g->tcap = cap;
    g->g.tensors = mp_xrealloc(g->g.tensors, cap * sizeof(mp_tensor));
}

static void reserve_nodes(pgraph *g, size_t cap) {
    g->ncap = cap;
    g->g.nodes = mp_xrealloc(g->g.nodes, cap * sizeof(mp_node));
}

static void grow_tensors(pgraph *g) {
    if (g->g.n_tensors == g->tcap) reserve_tensors(g, g->tcap ? g->tcap * 2 : 16);
}

static int tensor_attr(parser *p, mp_tensor *t, mp_tok a, unsigned *seen,
                       mp_tok *view, mp_tok *inplace) {
    char q[48];
    const char *eq = memchr(a.s, '=', a.n);
    mp_tok key = {a.s, eq ? (size_t)(eq - a.s) : a.n};
    mp_tok val = {eq ? eq + 1 : a.s + a.n, eq ? a.n - key.n - 1 : 0};
    static const char *const keys[] = {"device", "const",   "mutable", "dynamic",
                                       "mem_id", "inplace", "view",    "at", "shared", "offset"};
    unsigned k = 0;
    while (k < 10 && !mp_tok_is(key, keys[k])) k++;
    if (k == 10) return fail(p, "unknown tensor attribute '%s'", Q(a, q));
    bool wants_value = k == 0 || (k >= 4 && k <= 7) || k == 9;
    if (wants_value != (eq != NULL))
        return fail(p, wants_value ? "tensor attribute '%s' needs a value"
                                   : "tensor attribute '%s' takes no value",
                    Q(key, q));
    if (*seen & (1u << k))
        return fail(p, "tensor attribute '%s' given twice", Q(key, q));
    *seen |= 1u << k;
    uint64_t v;
    switch (k) {
    case 0:
        if (!parse_device(val, &t->device))
            return fail(p, "bad device '%s' (want cpu, cpu:N, cuda or cuda:N)",
                        Q(val, q));
        break;
    case 1: t->flags |= MP_T_CONST; break;
    case 2: t->flags |= MP_T_MUTABLE; break;
    case 3: t->flags |= MP_T_DYNAMIC; break;
    case 4:
        if (!parse_u64(val, MP_MAX_MEM_ID + 1ull, &v) || v < 1)
            return fail(p, "bad mem_id '%s' (want 1..%d)", Q(val, q),
                        MP_MAX_MEM_ID);
        t->mem_id = (uint32_t)v;
        break;
    case 5:
        if (check_name(p, val, "inplace base")) return p->err->code;
        *inplace = val;
        break;
    case 8: t->flags |= MP_T_SHARED; break;
    case 9:
        if (!parse_u64(val, MP_MAX_SIZE, &t->offset))
            return fail(p, "bad offset '%s' (want a byte offset below 2^62)", Q(val, q));
        break;
    case 7:
        if (!parse_u64(val, MP_MAX_SIZE, &t->at))
            return fail(p, "bad at '%s' (want a byte offset below 2^62)", Q(val, q));
        t->flags |= MP_T_PINNED;
        break;
    default:
        if (check_name(p, val, "view base")) return p->err->code;
        *view = val;
        break;
    }
    return MP_OK;
}

static int parse_tensor(parser *p, mp_tok *tk, int nt) {
    char q[48];
    pgraph *g = p->cur;
    if (nt < 3) return fail(p, "tensor line needs a name and a size");
    if (check_name(p, tk[1], "tensor")) return p->err->code;
    grow_tensors(g);
    uint32_t idx = g->g.n_tensors;
    mp_tensor *t = &g->g.tensors[idx];
    memset(t, 0, sizeof *t);
    t->name = mp_arena_strndup(p->arena, tk[1].s, tk[1].n);
    if (!parse_u64(tk[2], MP_MAX_SIZE, &t->size))
        return fail(p, "bad size '%s' for tensor '%s' (want a decimal below 2^62)",
                    Q(tk[2], q), t->name);
    t->inplace_base = t->view_base = -1;
    t->root = (int32_t)idx;
    t->def_node = -1;
    t->line = p->line;
    mp_tok view = {0, 0}, inplace = {0, 0};
    unsigned seen = 0;
    for (int i = 3; i < nt; i++)
        if (tensor_attr(p, t, tk[i], &seen, &view, &inplace)) return p->err->code;
    if ((t->flags & MP_T_PINNED) && (view.n || inplace.n))
        return fail(p, "tensor '%s': at= pins storage, and an in-place or view tensor lives in "
                       "its base's: pin the base", t->name);
    if ((seen & (1u << 9)) && !view.n && !inplace.n)
        return fail(p, "tensor '%s': offset= places it in its base's storage: it needs inplace= or view=",
                    t->name);
    if ((t->flags & MP_T_PINNED) && g != p->graphs)
        return fail(p, "tensor '%s': at= is allowed in the entry graph only (a sub-graph's "
                       "offsets move with its region)", t->name);
    if (view.n || inplace.n) {
        struct base_ref r = {idx, keep(p, view), keep(p, inplace)};
        MP_VEC_PUSH(g->refs, g->n_refs, g->refs_cap, r);
        if (view.n) t->view_base = VIEW_PENDING;
    }
    g->g.n_tensors++;
    return MP_OK;
}

/* The tensors declared since the last lookup, into the name map in one
 * sweep (mp_strmap_put_all): at 10^7 tensors, a cache miss per name as
 * each was declared was an eighth of the parse.  A name declared twice is
 * reported at its second declaration, as if checked on that line: a
 * lookup comes before any node line or graph end, and an error elsewhere
 * yields to an earlier duplicate (first_error). */
static int add_names(parser *p, pgraph *g) {
    if (g->named == g->g.n_tensors) return MP_OK;
    int32_t prev, again = mp_lookup_add_names(&g->names, g->g.tensors, g->named, g->g.n_tensors, &prev);
    g->named = g->g.n_tensors;
    if (again < 0) return MP_OK;
    p->line = g->g.tensors[again].line;
    return fail(p, "tensor '%s' is already declared at line %d", g->g.tensors[again].name,
                g->g.tensors[prev].line);
}

/* --------------------------------------------------------------- nodes */

static int kind_from(mp_tok t) {
    static const char *const kinds[] = {"placeholder", "call", "delegate",
                                        "cond",        "while", "map",
                                        "scan",        "output"};
    for (int k = 0; k < 8; k++)
        if (mp_tok_is(t, kinds[k])) return k;
    return -1;
}

/* The current graph, as the name lookups see it. */
static mp_lookup_graph lookup_graph(const pgraph *g) {
    return (mp_lookup_graph){&g->names, g->g.tensors, g->g.n_tensors};
}

static int parse_list(parser *p, mp_tok val, const char *key, int32_t **out,
                      uint32_t *n) {
    char q[48];
    size_t count = 1;
    for (size_t i = 0; i < val.n; i++) count += val.s[i] == ',';
    if (count > UINT32_MAX / 2) return fail(p, "%s= list is too long", key);
    int32_t *v = mp_arena_alloc_aligned(p->arena, count * sizeof *v, _Alignof(int32_t));
    mp_lookup_graph lg = lookup_graph(p->cur);
    const char *s = val.s, *end = val.s + val.n;
    for (size_t k = 0; k < count; k++) {
        const char *c = memchr(s, ',', (size_t)(end - s));
        mp_tok name = {s, c ? (size_t)(c - s) : (size_t)(end - s)};
        s = c ? c + 1 : end;
        if (name.n == 0) return fail(p, "empty name in %s= list", key);
        if (check_name(p, name, "tensor")) return p->err->code;
        int32_t t = mp_lookup_find(&p->look, &lg, name.s, name.n);
        if (t < 0)
            return fail(p, "%s= names tensor '%s', which is not declared before "
                           "this line", key, Q(name, q));
        v[k] = t;
    }
    *out = v;
    *n = (uint32_t)count;
    return MP_OK;
}

static int add_subref(parser *p, int32_t node, int slot, mp_tok name) {
    if (check_name(p, name, "graph")) return p->err->code;
    subref r = {(int32_t)(p->cur - p->graphs), node, slot, p->line, keep(p, name)};
    MP_VEC_PUSH(p->subs, p->n_subs, p->scap, r);
    return MP_OK;
}

/* Which sub-graph keys a kind takes, in slot order. */
static void sub_keys(int kind, const char **k0, const char **k1) {
    *k0 = *k1 = NULL;
    if (kind == MP_NODE_COND) *k0 = "true", *k1 = "false";
    else if (kind == MP_NODE_WHILE) *k0 = "cond", *k1 = "body";
    else if (kind == MP_NODE_MAP || kind == MP_NODE_SCAN) *k0 = "body";
}

/* scratch=BYTES of a delegate node: its working memory, at least a byte. */
static int scratch_attr(parser *p, const mp_node *nd, mp_tok val, uint64_t *bytes) {
    char q[48];
    if (nd->kind != MP_NODE_DELEGATE) return fail(p, "scratch= is only for delegate nodes");
    if (!parse_u64(val, MP_MAX_SIZE, bytes) || !*bytes)
        return fail(p, "bad scratch= '%s' (want bytes: a decimal from 1 to below 2^62)", Q(val, q));
    return MP_OK;
}

/* span=N: the time units the node stands for, 1 .. 2^30. */
static int span_attr(parser *p, mp_node *nd, mp_tok val) {
    char q[48];
    uint64_t v;
    if (!parse_u64(val, (UINT64_C(1) << 30) + 1, &v) || !v)
        return fail(p, "bad span= '%s' (want time units: a decimal from 1 to 2^30)", Q(val, q));
    nd->span = (uint32_t)v;
    return MP_OK;
}

static int node_attrs(parser *p, mp_node *nd, mp_tok *tk, int nt, mp_tok *subs,
                      bool *has_in, bool *has_out, uint64_t *scratch) {
    char q[48];
    const char *k0, *k1;
    sub_keys((int)nd->kind, &k0, &k1);
    bool has_backend = false;
    for (int i = 2; i < nt; i++) {
        const char *eq = memchr(tk[i].s, '=', tk[i].n);
        if (!eq) return fail(p, "node attribute '%s' needs key=value", Q(tk[i], q));
        mp_tok key = {tk[i].s, (size_t)(eq - tk[i].s)};
        mp_tok val = {eq + 1, tk[i].n - key.n - 1};
        bool dup = false;
        if (mp_tok_is(key, "in")) {
            dup = *has_in;
            *has_in = true;
            if (!dup && parse_list(p, val, "in", &nd->in, &nd->n_in))
                return p->err->code;
        } else if (mp_tok_is(key, "out")) {
            dup = *has_out;
            *has_out = true;
            if (!dup && parse_list(p, val, "out", &nd->out, &nd->n_out))
                return p->err->code;
        } else if (mp_tok_is(key, "backend")) {
            if (nd->kind != MP_NODE_DELEGATE)
                return fail(p, "backend= is only for delegate nodes");
            dup = has_backend;
            has_backend = true;
            if (check_name(p, val, "backend")) return p->err->code;
            nd->backend = mp_arena_strndup(p->arena, val.s, val.n);
        } else if (mp_tok_is(key, "scratch")) {
            dup = *scratch != 0;
            if (!dup && scratch_attr(p, nd, val, scratch)) return p->err->code;
        } else if (mp_tok_is(key, "span")) {
            dup = nd->span != 0;
            if (!dup && span_attr(p, nd, val)) return p->err->code;
        } else if (mp_tok_is(key, "op")) {
            dup = nd->op != NULL;
            if (!dup && check_op(p, val)) return p->err->code;
            if (!dup) nd->op = mp_arena_strndup(p->arena, val.s, val.n);
        } else if ((k0 && mp_tok_is(key, k0)) || (k1 && mp_tok_is(key, k1))) {
            int slot = mp_tok_is(key, k0) ? 0 : 1;
            dup = subs[slot].s != NULL;
            subs[slot] = val;
        } else {
            return fail(p, "unknown attribute '%s' for a %s node", Q(key, q),
                        mp_node_kind_name(nd->kind));
        }
        if (dup) return fail(p, "node attribute '%s' given twice", Q(key, q));
    }
    if (nd->kind == MP_NODE_DELEGATE && !has_backend)
        return fail(p, "delegate node needs backend=NAME");
    if (k0 && !subs[0].s) return fail(p, "%s node needs %s=GRAPH",
                                      mp_node_kind_name(nd->kind), k0);
    if (k1 && !subs[1].s) return fail(p, "%s node needs %s=GRAPH",
                                      mp_node_kind_name(nd->kind), k1);
    return MP_OK;
}

static int check_node_shape(parser *p, mp_node *nd, bool has_in) {
    pgraph *g = p->cur;
    if (g->seen_output) return fail(p, "node after the output node");
    if (nd->kind == MP_NODE_PLACEHOLDER) {
        if (g->seen_body)
            return fail(p, "placeholder after a non-placeholder node");
        if (has_in) return fail(p, "placeholder takes no in=");
        if (nd->n_out != 1) return fail(p, "placeholder needs exactly one out=");
        if (g->g.tensors[nd->out[0]].view_base != -1)
            return fail(p, "placeholder cannot define view '%s'",
                        g->g.tensors[nd->out[0]].name);
    } else {
        g->seen_body = true;
    }
    if (nd->kind == MP_NODE_OUTPUT) {
        if (nd->n_out) return fail(p, "output node takes no out=");
        g->seen_output = true;
    }
    return MP_OK;
}

static int define_outputs(parser *p, mp_node *nd, int32_t node_idx) {
    pgraph *g = p->cur;
    for (uint32_t i = 0; i < nd->n_out; i++) {
        int32_t ti = nd->out[i];
        mp_tensor *t = &g->g.tensors[ti];
        if (t->view_base == VIEW_PENDING) continue; /* views may appear in any out= */
        if (t->def_node == node_idx)
            return fail(p, "tensor '%s' appears twice in out=", t->name);
        if (t->def_node >= 0)
            return fail(p, "tensor '%s' is already in the out= of the node at "
                           "line %d", t->name, g->g.nodes[t->def_node].line);
        t->def_node = node_idx;
    }
    return MP_OK;
}

static int parse_node(parser *p, mp_tok *tk, int nt) {
    char q[48];
    pgraph *g = p->cur;
    if (add_names(p, g)) return p->err->code;
    if (nt < 2) return fail(p, "node line needs a kind");
    int kind = kind_from(tk[1]);
    if (kind < 0) return fail(p, "unknown node kind '%s'", Q(tk[1], q));
    if (g->g.n_nodes == g->ncap) reserve_nodes(g, g->ncap ? g->ncap * 2 : 16);
    int32_t idx = (int32_t)g->g.n_nodes;
    mp_node *nd = &g->g.nodes[idx];
    memset(nd, 0, sizeof *nd);
    nd->kind = (uint32_t)kind;
    nd->line = p->line;
    nd->sub[0] = nd->sub[1] = -1;
    mp_tok subs[2] = {{0, 0}, {0, 0}};
    bool has_in = false, has_out = false;
    uint64_t scratch = 0;
    if (node_attrs(p, nd, tk, nt, subs, &has_in, &has_out, &scratch)) return p->err->code;
    if (check_node_shape(p, nd, has_in)) return p->err->code;
    if (define_outputs(p, nd, idx)) return p->err->code;
    for (int s = 0; s < 2; s++)
        if (subs[s].s && add_subref(p, idx, s, subs[s])) return p->err->code;
    if (scratch) {
        struct scratch_ref r = {idx, scratch};
        MP_VEC_PUSH(g->scratch, g->n_scratch, g->scratch_cap, r);
    }
    g->g.n_nodes++;
    return MP_OK;
}

/* Each scratch= becomes a tensor of its own, after the declared ones (so
 * that writing and parsing again keeps every index): "scratch.N" for node
 * N, the device of the node's first output (else first input, else
 * cpu:0), defined by the node as its last output and used by no node, so
 * it lives at that node alone.  The writer gives it back as scratch=. */
static int add_scratch_tensors(parser *p, pgraph *g) {
    for (size_t k = 0; k < g->n_scratch; k++) {
        mp_node *nd = &g->g.nodes[g->scratch[k].node];
        char name[32];
        int len = snprintf(name, sizeof name, "scratch.%d", g->scratch[k].node);
        int32_t taken = mp_strmap_get(&g->names, name, (size_t)len);
        if (taken >= 0) {
            p->line = nd->line;
            return fail(p, "scratch= makes tensor '%s', but a tensor of that name is declared at line %d", name,
                        g->g.tensors[taken].line);
        }
        grow_tensors(g);
        int32_t idx = (int32_t)g->g.n_tensors++;
        mp_tensor *t = &g->g.tensors[idx];
        memset(t, 0, sizeof *t);
        t->name = mp_arena_strndup(p->arena, name, (size_t)len);
        t->size = g->scratch[k].bytes;
        t->flags = MP_T_SCRATCH;
        t->inplace_base = t->view_base = -1;
        t->root = idx;
        t->def_node = g->scratch[k].node;
        t->line = nd->line;
        int32_t near = nd->n_out ? nd->out[0] : nd->n_in ? nd->in[0] : -1;
        if (near >= 0) t->device = g->g.tensors[g->g.tensors[near].root].device;
        mp_strmap_put(&g->names, t->name, (size_t)len, idx);
        g->named = g->g.n_tensors;
        int32_t *out = mp_arena_alloc(p->arena, (nd->n_out + 1) * sizeof *out);
        if (nd->n_out) memcpy(out, nd->out, nd->n_out * sizeof *out);
        out[nd->n_out++] = idx;
        nd->out = out;
    }
    return MP_OK;
}

/* -------------------------------------------------------- graph close */

static int resolve_ref(parser *p, pgraph *g, uint32_t i, mp_tok ref,
                       const char *what, int32_t *out) {
    char q[48];
    int32_t b = mp_strmap_get(&g->names, ref.s, ref.n);
    if (b < 0) {
        p->line = g->g.tensors[i].line;
        return fail(p, "%s '%s' of tensor '%s' is not a tensor of graph '%s'",
                    what, Q(ref, q), g->g.tensors[i].name, g->g.name);
    }
    *out = b;
    return MP_OK;
}

/* Follow view= links to the storage root; a chain longer than the tensor
 * count is a cycle.  Iterative, memoised through t->root. */
static int resolve_views(parser *p, pgraph *g) {
    mp_tensor *ts = g->g.tensors;
    uint32_t n = g->g.n_tensors;
    int8_t *state = mp_xcalloc(n, 1); /* 0 new, 1 on the path, 2 done */
    int32_t *path = mp_xmalloc((n + 1) * sizeof *path);
    int rc = MP_OK;
    for (uint32_t i = 0; i < n && rc == MP_OK; i++) {
        size_t len = 0;
        int32_t t = (int32_t)i;
        while (state[t] == 0 && ts[t].view_base >= 0) {
            state[t] = 1;
            path[len++] = t;
            t = ts[t].view_base;
        }
        if (state[t] == 1) {
            p->line = ts[t].line;
            rc = fail(p, "view cycle through tensor '%s'", ts[t].name);
            break;
        }
        int32_t root = ts[t].root;
        uint64_t at = ts[t].root_offset; /* where t's bytes start in the root's */
        for (size_t k = len; k-- > 0 && rc == MP_OK;) { /* back up the path: offsets add */
            mp_tensor *v = &ts[path[k]];
            if (!mp_add_u64(at, v->offset, &at) || (at && (at > ts[root].size || v->size > ts[root].size - at))) {
                p->line = v->line;
                rc = fail(p, "view '%s' at offset %llu of '%s' (%llu bytes) does not fit in it (%llu bytes)",
                          v->name, (unsigned long long)v->offset, ts[v->view_base].name,
                          (unsigned long long)v->size, (unsigned long long)ts[root].size);
            }
            v->root = root;
            v->root_offset = at;
            state[path[k]] = 2;
        }
        state[t] = 2;
    }
    mp_xfree(state);
    mp_xfree(path);
    return rc;
}

static int close_graph(parser *p) {
    pgraph *g = p->cur;
    mp_tensor *ts = g->g.tensors;
    if (add_names(p, g)) return p->err->code;
    if (!g->seen_output)
        return fail(p, "graph '%s' has no output node", g->g.name);
    if (add_scratch_tensors(p, g)) return p->err->code;
    ts = g->g.tensors; /* add_scratch_tensors may have moved them */
    for (size_t k = 0; k < g->n_refs; k++) {
        const struct base_ref *r = &g->refs[k];
        if (r->view.n && resolve_ref(p, g, r->tensor, r->view, "view base", &ts[r->tensor].view_base))
            return p->err->code;
        if (r->inplace.n &&
            resolve_ref(p, g, r->tensor, r->inplace, "inplace base", &ts[r->tensor].inplace_base))
            return p->err->code;
    }
    if (resolve_views(p, g)) return p->err->code;
    for (uint32_t i = 0; i < g->g.n_tensors; i++) {
        mp_tensor *t = &ts[i];
        if (t->view_base >= 0) continue;
        if (t->def_node < 0) {
            p->line = t->line;
            return fail(p, "tensor '%s' is not in the out= of any node", t->name);
        }
        if ((t->flags & MP_T_MUTABLE) &&
            g->g.nodes[t->def_node].kind != MP_NODE_PLACEHOLDER) {
            p->line = t->line;
            return fail(p, "mutable tensor '%s' is not defined by a placeholder",
                        t->name);
        }
    }
    mp_xfree(g->refs);
    mp_xfree(g->scratch);
    g->refs = NULL;
    g->scratch = NULL;
    mp_strmap_free(&g->names);
    p->cur = NULL;
    return MP_OK;
}

/* ---------------------------------------------------------- file level */

static int open_graph(parser *p, mp_tok *tk, int nt) {
    if (p->cur)
        return fail(p, "graph opened inside graph '%s' (missing 'end')",
                    p->cur->g.name);
    if (nt != 2) return fail(p, "graph line needs exactly one name");
    if (check_name(p, tk[1], "graph")) return p->err->code;
    if (p->n_graphs == p->gcap) {
        p->gcap = p->gcap ? p->gcap * 2 : 8;
        p->graphs = mp_xrealloc(p->graphs, p->gcap * sizeof(pgraph));
    }
    pgraph *g = &p->graphs[p->n_graphs];
    memset(g, 0, sizeof *g);
    g->g.name = mp_arena_strndup(p->arena, tk[1].s, tk[1].n);
    g->g.line = p->line;
    int32_t prev = mp_strmap_put(&p->graph_names, g->g.name, tk[1].n,
                                 (int32_t)p->n_graphs);
    if (prev >= 0)
        return fail(p, "graph '%s' is already defined at line %d", g->g.name,
                    p->graphs[prev].g.line);
    p->n_graphs++;
    p->cur = g;
    static const char *const words[2] = {"tensor", "node"};
    size_t c[2];
    mp_count_block_lines(p->lines, words, c);
    /* sized as counted, small graphs too: a first step of 16 tensors and
     * 16 nodes was 2 KB a graph, nearly all unused at `deep`-10^6 (333,000
     * graphs of 3 tensors: 0.68 GB, each block then shrunk by finish()) */
    if (c[0] > 0 && c[0] < INT32_MAX) reserve_tensors(g, c[0]);
    if (c[1] > 0 && c[1] < INT32_MAX) reserve_nodes(g, c[1]);
    return MP_OK;
}

/* The fields of a line into tk (room for max); -1 when there are more.
 * With tk NULL, only counts them. */
static int line_tokens(const char *s, const char *e, mp_tok *tk, int max, int *nt) {
    int n = 0;
    while (s < e) {
        while (s < e && (*s == ' ' || *s == '\t')) s++;
        if (s == e || *s == '#') break;
        const char *b = s;
        while (s < e && *s != ' ' && *s != '\t' && *s != '#') s++;
        if (tk && n == max) return -1;
        if (tk) tk[n] = (mp_tok){b, (size_t)(s - b)};
        if (n == INT32_MAX) return -1;
        n++;
    }
    *nt = n;
    return 0;
}

static int parse_line(parser *p, mp_tok *tk, int nt, bool *have_header);

/* One line: its fields, then what it says.  Every line has at most
 * MAX_TOKENS fields but the entry line, which names every method (issue
 * 45, B23: 1.8.0 took at most 31): its fields go to the arena. */
static int one_line(parser *p, const char *s, const char *e, mp_tok *tk, bool *have_header) {
    int nt = 0;
    if (memchr(s, 0, (size_t)(e - s))) return fail(p, "NUL byte in the file");
    if (line_tokens(s, e, tk, MAX_TOKENS, &nt) == 0) return nt ? parse_line(p, tk, nt, have_header) : MP_OK;
    if (!mp_tok_is(tk[0], "entry"))
        return fail(p, "too many fields on one line (at most %d; an entry line may have more)", MAX_TOKENS);
    if (line_tokens(s, e, NULL, 0, &nt)) return fail(p, "too many fields on one line");
    mp_tok *many = mp_arena_alloc(p->arena, (size_t)nt * sizeof *many);
    line_tokens(s, e, many, nt, &nt);
    return parse_line(p, many, nt, have_header);
}

/* `banks NAME=SIZE ...`: the memory map, once, before the first graph. */
static int parse_banks(parser *p, mp_tok *tk, int nt) {
    if (p->n_graphs) return fail(p, "the banks line comes before the first graph");
    if (p->have_banks) return fail(p, "a second banks line");
    if (nt < 2) return fail(p, "banks line needs at least one NAME=SIZE");
    char spec[MAX_TOKENS * 48];
    size_t n = 0;
    for (int i = 1; i < nt; i++) {
        if (tk[i].n + 2 > sizeof spec - n) return fail(p, "banks line too long");
        if (i > 1) spec[n++] = ',';
        if (memchr(tk[i].s, ',', tk[i].n)) return fail(p, "banks are separated by spaces here, not commas");
        memcpy(spec + n, tk[i].s, tk[i].n);
        n += tk[i].n;
    }
    spec[n] = 0;
    mp_err e;
    if (mp_banks_parse(spec, &p->banks, &e)) return fail(p, "%s", e.msg);
    p->have_banks = true;
    return MP_OK;
}

/* `entry NAME NAME ...`: the methods, once, outside a graph; the names are
 * resolved and checked when the file ends (graph_methods.c). */
static int parse_entry(parser *p, mp_tok *tk, int nt) {
    if (p->cur) return fail(p, "the entry line is not inside a graph");
    if (p->n_entry) return fail(p, "a second entry line");
    if (nt < 2) return fail(p, "entry line needs at least one graph name");
    p->entry = mp_arena_alloc(p->arena, (size_t)(nt - 1) * sizeof *p->entry);
    for (int i = 1; i < nt; i++) {
        if (check_name(p, tk[i], "graph")) return p->err->code;
        p->entry[i - 1] = (mp_tok){mp_arena_strndup(p->arena, tk[i].s, tk[i].n), tk[i].n};
    }
    p->n_entry = (uint32_t)(nt - 1);
    p->entry_line = p->line;
    return MP_OK;
}

static int parse_line(parser *p, mp_tok *tk, int nt, bool *have_header) {
    char q[48];
    if (!*have_header) {
        if (nt == 2 && mp_tok_is(tk[0], "memplan-graph") && mp_tok_is(tk[1], "1")) {
            *have_header = true;
            return MP_OK;
        }
        if (nt >= 1 && mp_tok_is(tk[0], "memplan-graph"))
            return fail(p, "unsupported graph format version (want "
                           "'memplan-graph 1')");
        return fail(p, "expected 'memplan-graph 1' header, found '%s'",
                    Q(tk[0], q));
    }
    if (mp_tok_is(tk[0], "graph")) return open_graph(p, tk, nt);
    if (mp_tok_is(tk[0], "banks")) return parse_banks(p, tk, nt);
    if (mp_tok_is(tk[0], "entry")) return parse_entry(p, tk, nt);
    if (mp_tok_is(tk[0], "tensor") || mp_tok_is(tk[0], "node") ||
        mp_tok_is(tk[0], "end")) {
        if (!p->cur)
            return fail(p, "'%s' outside a graph", Q(tk[0], q));
        if (mp_tok_is(tk[0], "tensor")) return parse_tensor(p, tk, nt);
        if (mp_tok_is(tk[0], "node")) return parse_node(p, tk, nt);
        if (nt != 1) return fail(p, "'end' takes nothing after it");
        return close_graph(p);
    }
    return fail(p, "unknown keyword '%s'", Q(tk[0], q));
}

static int resolve_subgraphs(parser *p) {
    char q[48];
    for (size_t i = 0; i < p->n_subs; i++) {
        subref *r = &p->subs[i];
        int32_t gi = mp_strmap_get(&p->graph_names, r->name.s, r->name.n);
        if (gi < 0) {
            p->line = r->line;
            return fail(p, "graph '%s' is not defined in this file",
                        Q(r->name, q));
        }
        p->graphs[r->graph].g.nodes[r->node].sub[r->slot] = gi;
    }
    return MP_OK;
}

/* Iterative DFS over control-flow edges: a back edge is recursion. */
static int check_recursion(parser *p) {
    size_t n = p->n_graphs;
    int8_t *color = mp_xcalloc(n, 1);
    struct frame {
        int32_t g;
        uint32_t node;
        int slot;
    } *st = mp_xmalloc((n + 1) * sizeof *st);
    int rc = MP_OK;
    for (size_t root = 0; root < n && rc == MP_OK; root++) {
        if (color[root]) continue;
        size_t sp = 0;
        st[sp++] = (struct frame){(int32_t)root, 0, 0};
        color[root] = 1;
        while (sp && rc == MP_OK) {
            struct frame *f = &st[sp - 1];
            mp_graphdef *g = &p->graphs[f->g].g;
            if (f->node == g->n_nodes) {
                color[f->g] = 2;
                sp--;
                continue;
            }
            mp_node *nd = &g->nodes[f->node];
            int32_t child = f->slot < 2 ? nd->sub[f->slot] : -1;
            if (++f->slot >= 2) f->slot = 0, f->node++;
            if (child < 0 || color[child] == 2) continue;
            if (color[child] == 1) {
                p->line = nd->line;
                rc = fail(p, "graph '%s' reaches itself through control flow "
                             "(via graph '%s')", p->graphs[child].g.name,
                          g->name);
                break;
            }
            color[child] = 1;
            st[sp++] = (struct frame){child, 0, 0};
        }
    }
    mp_xfree(color);
    mp_xfree(st);
    return rc;
}

static void parser_free(parser *p) {
    mp_arena_free(p->kept);
    for (size_t i = 0; i < p->n_graphs; i++) {
        mp_xfree(p->graphs[i].g.tensors);
        mp_xfree(p->graphs[i].g.nodes);
        mp_xfree(p->graphs[i].refs);
        mp_xfree(p->graphs[i].scratch);
        mp_strmap_free(&p->graphs[i].names);
    }
    mp_xfree(p->graphs);
    mp_xfree(p->subs);
    mp_strmap_free(&p->graph_names);
}

static mp_program *finish(parser *p) {
    mp_program *prog = mp_arena_alloc(p->arena, sizeof *prog);
    prog->arena = p->arena;
    prog->filename = mp_arena_strndup(p->arena, p->file, strlen(p->file));
    prog->n_graphs = (uint32_t)p->n_graphs;
    prog->banks = p->banks;
    prog->graphs = mp_arena_alloc(p->arena, p->n_graphs * sizeof(mp_graphdef));
    for (size_t i = 0; i < p->n_graphs; i++) {
        mp_graphdef *src = &p->graphs[i].g, *dst = &prog->graphs[i];
        *dst = *src;
        /* handed over, not copied: at 10^7 tensors a copy of both arrays
         * was 1.4 GB more at the parse's peak */
        dst->tensors = mp_arena_adopt(p->arena, src->tensors, src->n_tensors * sizeof(mp_tensor));
        dst->nodes = mp_arena_adopt(p->arena, src->nodes, src->n_nodes * sizeof(mp_node));
        src->tensors = NULL;
        src->nodes = NULL;
    }
    return prog;
}

/* After an error inside a graph: a tensor declared twice on an earlier
 * line, not yet checked (add_names), is the error to report. */
static void first_error(parser *p) {
    (void)add_names(p, p->cur); /* a duplicate replaces the error; else it stands */
}

static mp_program *graph_parse(mp_lines *L, const char *filename, mp_err *err) {
    parser p = {0};
    p.file = filename ? filename : "<input>";
    p.err = err;
    p.arena = mp_arena_new();
    p.kept = mp_arena_new();
    p.lines = L;
    mp_lookup_init(&p.look);
    mp_err_clear(err);
    bool have_header = false;
    int rc = MP_OK;
    const char *s, *e;
    mp_tok tk[MAX_TOKENS];
    while (rc == MP_OK && mp_lines_next(L, &s, &e)) {
        p.line++;
        rc = one_line(&p, s, e, tk, &have_header);
    }
    if (rc == MP_OK) rc = mp_lines_error(L, err); /* not read to its end */
    if (rc != MP_OK && rc != MP_ENOMEM && p.cur && !L->read_errno) first_error(&p);
    if (p.line == 0) p.line = 1; /* an empty file: report line 1 */
    if (rc == MP_OK && p.cur)
        rc = fail(&p, "graph '%s' is not closed (missing 'end')", p.cur->g.name);
    if (rc == MP_OK && !have_header)
        rc = fail(&p, "empty file: expected 'memplan-graph 1' header");
    if (rc == MP_OK && p.n_graphs == 0) rc = fail(&p, "no graph in the file");
    if (rc == MP_OK) rc = resolve_subgraphs(&p);
    if (rc == MP_OK) rc = check_recursion(&p);
    mp_program *prog = rc == MP_OK ? finish(&p) : NULL;
    /* the binding rules read the finished program; its arena is freed below
     * when they fail */
    if (prog && mp_check_binding(prog->graphs, prog->n_graphs, p.file, err) != MP_OK) prog = NULL;
    if (prog && mp_methods_bind(prog, p.entry, p.n_entry, p.entry_line, err) != MP_OK) prog = NULL;
    parser_free(&p);
    if (!prog) mp_arena_free(p.arena);
    return prog;
}

/* The public entry points run under the allocation guard (alloc.c). */
typedef struct parse_call {
    const char *data, *path;
    size_t len;
    mp_err *err;
    mp_program *prog;
} parse_call;

static int parse_work(void *ctx) {
    parse_call *c = ctx;
    mp_lines L;
    mp_lines_text(&L, c->data, c->len);
    c->prog = graph_parse(&L, c->path, c->err);
    return c->prog ? MP_OK : c->err->code;
}

static int load_work(void *ctx) {
    parse_call *c = ctx;
    mp_lines L;
    if (mp_lines_open(&L, c->path, c->err)) return c->err->code;
    c->prog = graph_parse(&L, c->path, c->err);
    mp_lines_close(&L); /* a read error was the parse's to report */
    return c->prog ? MP_OK : c->err->code;
}

mp_program *mp_graph_parse(const char *data, size_t len, const char *filename, mp_err *err) {
    parse_call c = {data, filename, len, err, NULL};
    mp_err_clear(err);
    return mp_guard_run(err, parse_work, &c) == MP_OK ? c.prog : NULL;
}

mp_program *mp_graph_load(const char *path, mp_err *err) {
    parse_call c = {NULL, path, 0, err, NULL};
    mp_err_clear(err);
    return mp_guard_run(err, load_work, &c) == MP_OK ? c.prog : NULL;
}

void mp_program_free(mp_program *prog) {
    if (prog) mp_arena_free(prog->arena);
}
