/* planners_decode.h - the program decoder and entry point that targets
 * "planners" (fuzz_planners.c) and "plan" (fuzz_plan.c) share: one source
 * of programs, two oracles.  The including file defines
 *   static void check(const mp_program *p, const mp_options *o,
 *                     const char *text, size_t len);
 * before including it.  (Static definitions in a header: it is included
 * once per target binary, by exactly those two files.) */
#ifndef MEMPLAN_PLANNERS_DECODE_H
#define MEMPLAN_PLANNERS_DECODE_H
#include "fuzz.h"
#include "internal.h"

#include <string.h>

#define MAX_GRAPHS 8
#define MAX_DEPTH 3
#define MAX_T 40     /* tensors per graph */
#define MAX_NODES 48 /* nodes per graph */
#define MAX_TOTAL 160
#define MAX_LIST 6
/* The reference refuses shared sub-graphs re-planned past 10^6 tensors;
 * reaching that costs seconds under the sanitizers, so here the limit is
 * lower: the same refusal, reached in milliseconds. */
#define FUZZ_REPLAN_LIMIT 20000

static bool at_end(const rd *r) { return r->i >= r->n; }

typedef struct ftensor {
    uint64_t size;
    mp_device dev;
    uint32_t flags, mem_id;
    int32_t inplace, view;
    uint64_t at;     /* with MP_T_PINNED */
    uint64_t offset; /* a view's offset= in its base (since 2.2's decoder) */
} ftensor;

typedef struct fnode {
    uint32_t kind;
    int32_t in[MAX_LIST], out[MAX_LIST];
    uint32_t n_in, n_out;
    int32_t sub[2];
    const char *backend;
} fnode;

typedef struct fgraph {
    ftensor t[MAX_T];
    uint32_t nt;
    fnode ph[MAX_T], body[MAX_NODES];
    uint32_t nph, nb;
    int32_t vals[MAX_T]; /* operands offered to later nodes */
    uint32_t nv;
    bool done, sub; /* sub: a sub-graph, whose placeholders are its operands */
} fgraph;

typedef struct dec {
    rd r;
    fgraph g[MAX_GRAPHS];
    uint32_t ng, total;
    mp_device devs[4];
    uint32_t n_devs;
    bool pools;
    uint64_t last_size;
} dec;

static const char *const BACKENDS[] = {"XnnpackBackend", "QnnBackend", "xnnpack_q8", "CoreML"};

static uint64_t size_of(dec *d) {
    unsigned b = u8(&d->r), v = b >> 3;
    uint64_t s;
    switch (b & 7) {
    case 0: s = (uint64_t)(v + 1) * 16; break;
    case 1: s = v + 1; break;
    case 2: s = (uint64_t)(v + 1) * 1000 + v; break;
    case 3: s = UINT64_C(1) << (4 + v % 24); break;
    case 4: s = 0; break;
    case 5: s = (UINT64_C(1) << 40) * (v + 1); break;
    case 6: s = MP_MAX_SIZE - 1 - v; break; /* buffers overflow 64 bits */
    default: s = d->last_size; break;       /* ties */
    }
    d->last_size = s;
    return s;
}

static int32_t new_tensor(dec *d, fgraph *g, uint64_t size) {
    if (g->nt == MAX_T) return -1;
    ftensor *t = &g->t[g->nt];
    memset(t, 0, sizeof *t);
    t->size = size;
    t->dev = d->devs[0];
    t->inplace = t->view = -1;
    d->total++;
    return (int32_t)g->nt++;
}

/* One byte: device, const/dynamic, pre-assigned pool. */
static void attrs(dec *d, ftensor *t, bool may_flag) {
    unsigned a = u8(&d->r);
    static const uint32_t pools[8] = {0, 0, 0, 0, 1, 2, 3, MP_MAX_MEM_ID};
    t->dev = d->devs[(a & 3) % d->n_devs];
    unsigned f = (a >> 2) & 7;
    if (may_flag && f == 5) t->flags |= MP_T_DYNAMIC;
    if (may_flag && f == 6) t->flags |= MP_T_CONST;
    if (may_flag && f == 7) t->flags |= MP_T_CONST | MP_T_DYNAMIC;
    if (d->pools) t->mem_id = pools[(a >> 5) & 7];
    /* one tensor in 64 pinned, at 0 or at 768 (a multiple of most
     * alignments, not of 5 or 4096): write_program keeps the pin only where
     * the format allows one (entry graph, neither in-place nor view) */
    if (f == 4 && (a >> 5) == 7) {
        t->flags |= MP_T_PINNED;
        t->at = (a & 1) ? 768 : 0;
    }
}

static void offer(fgraph *g, int32_t t) {
    if (t < 0) return;
    if (g->nv < MAX_T) g->vals[g->nv++] = t;
}

/* A recent operand (chains) or any (DAGs); -1 when there is none. */
static int32_t pick(dec *d, fgraph *g) {
    unsigned b = u8(&d->r);
    if (!g->nv) return -1;
    uint32_t k = b < 128 ? g->nv - 1 - (b % (g->nv < 4 ? g->nv : 4)) : b % g->nv;
    return g->vals[k];
}

static fnode *add_node(fgraph *g, uint32_t kind) {
    fnode *nd = kind == MP_NODE_PLACEHOLDER ? &g->ph[g->nph++] : &g->body[g->nb++];
    memset(nd, 0, sizeof *nd);
    nd->kind = kind;
    nd->sub[0] = nd->sub[1] = -1;
    return nd;
}

static int32_t placeholder(dec *d, fgraph *g, uint64_t size, uint32_t flags) {
    int32_t t = new_tensor(d, g, size);
    if (t < 0) return -1;
    g->t[t].flags = flags;
    fnode *nd = add_node(g, MP_NODE_PLACEHOLDER);
    nd->out[0] = t;
    nd->n_out = 1;
    offer(g, t);
    return t;
}

static void op_call(dec *d, fgraph *g, bool delegate) {
    unsigned shape = u8(&d->r);
    uint32_t n_in = shape & 3, n_out = 1 + ((shape >> 2) & 1) + ((shape >> 3) & (shape >> 4) & 1);
    fnode *nd = add_node(g, delegate ? MP_NODE_DELEGATE : MP_NODE_CALL);
    for (uint32_t i = 0; i < n_in; i++) {
        int32_t v = pick(d, g);
        if (v >= 0) nd->in[nd->n_in++] = v;
    }
    for (uint32_t i = 0; i < n_out; i++) {
        int32_t t = new_tensor(d, g, size_of(d));
        if (t < 0) break;
        attrs(d, &g->t[t], true);
        nd->out[nd->n_out++] = t;
    }
    if (delegate) nd->backend = BACKENDS[u8(&d->r) % 4];
    for (uint32_t i = 0; i < nd->n_out; i++) offer(g, nd->out[i]);
}

/* A result written over an operand; usually no larger and on its device. */
static void op_inplace(dec *d, fgraph *g) {
    int32_t b = pick(d, g);
    unsigned how = u8(&d->r);
    if (b < 0) return op_call(d, g, false);
    uint64_t size = how < 160 ? g->t[b].size : size_of(d);
    int32_t t = new_tensor(d, g, size);
    if (t < 0) return;
    attrs(d, &g->t[t], true);
    if (!(how & 1)) {
        g->t[t].dev = g->t[b].dev;
        g->t[t].mem_id = g->t[b].mem_id;
    }
    g->t[t].inplace = b;
    fnode *nd = add_node(g, MP_NODE_CALL);
    nd->in[nd->n_in++] = b;
    if (how & 2) {
        int32_t o = pick(d, g);
        if (o >= 0) nd->in[nd->n_in++] = o;
    }
    nd->out[nd->n_out++] = t;
    offer(g, t);
}

/* Where tensor b's bytes start in its view chain's root (the offsets
 * summed) and the root's size. */
static uint64_t chain_offset(const fgraph *g, int32_t b, uint64_t *root_size) {
    uint64_t at = 0;
    for (uint32_t hops = 0; g->t[b].view >= 0 && hops < MAX_T; hops++) at += g->t[b].offset, b = g->t[b].view;
    *root_size = g->t[b].size;
    return at < *root_size ? at : *root_size;
}

/* A view of an operand, made by a node of its own or by none. */
static void op_view(dec *d, fgraph *g) {
    int32_t b = pick(d, g);
    unsigned how = u8(&d->r);
    if (b < 0) return;
    int32_t v = new_tensor(d, g, how & 4 ? size_of(d) : g->t[b].size);
    if (v < 0) return;
    /* how's top four bits all set: a slice (narrow, a split's piece), a
     * quarter or half of the way into its base (bit 1), 16-byte aligned;
     * a view is cut to fit in its root from where its chain starts (the
     * corpus's inputs from before 2.2 decode as they did: none of its
     * crash inputs sets those bits on a view) */
    uint64_t root_size, at = chain_offset(g, b, &root_size);
    if ((how & 0xF0) == 0xF0 && root_size - at >= 16) {
        uint64_t off = (root_size - at) / (how & 2 ? 2 : 4) / 16 * 16;
        g->t[v].offset = off;
        at += off;
    }
    if (at && g->t[v].size > root_size - at) g->t[v].size = root_size - at;
    g->t[v].view = b;
    g->t[v].dev = g->t[b].dev;
    if (how & 8) attrs(d, &g->t[v], true);
    if (how & 1) {
        fnode *nd = add_node(g, MP_NODE_CALL);
        nd->in[nd->n_in++] = b;
        nd->out[nd->n_out++] = v;
    }
    offer(g, v);
}

/* An existing view (views may appear in any out=) or a fresh result. */
static void op_view_out(dec *d, fgraph *g) {
    unsigned k = u8(&d->r);
    int32_t v = -1;
    for (uint32_t i = 0; i < g->nv && v < 0; i++) {
        int32_t c = g->vals[(k + i) % g->nv];
        if (g->t[c].view >= 0) v = c;
    }
    if (v < 0) return op_call(d, g, false);
    fnode *nd = add_node(g, MP_NODE_CALL);
    int32_t in = pick(d, g);
    if (in >= 0) nd->in[nd->n_in++] = in;
    nd->out[nd->n_out++] = v;
    if (k & 1) {
        int32_t t = new_tensor(d, g, size_of(d));
        if (t >= 0) nd->out[nd->n_out++] = t, offer(g, t);
    }
}

/* A new in-place link between existing tensors: cycles and links to
 * inputs, constants or views are all legal input (planners refuse some). */
static void op_link(dec *d, fgraph *g) {
    int32_t t = pick(d, g), b = pick(d, g);
    if (t < 0 || b < 0 || g->t[t].inplace >= 0 || g->t[t].view >= 0) return;
    g->t[t].inplace = b;
}

static void op_placeholder(dec *d, fgraph *g) {
    static const uint32_t kinds[4] = {0, MP_T_CONST, MP_T_MUTABLE, MP_T_MUTABLE | MP_T_DYNAMIC};
    unsigned k = u8(&d->r);
    int32_t t = placeholder(d, g, size_of(d), kinds[k & 3]);
    if (t >= 0) attrs(d, &g->t[t], false);
    if (t >= 0 && (k & 4)) g->t[t].flags |= MP_T_DYNAMIC;
}

static uint32_t build_graph(dec *d, uint32_t depth, const ftensor *ins, uint32_t n_ins,
                            uint32_t n_outs);

/* A finished sub-graph with n_in placeholders and n_out results (the
 * binding of docs/formats.md), chosen by `pick` among those; -1 if none. */
static int32_t fitting_graph(const dec *d, unsigned pick, uint32_t n_in, uint32_t n_out) {
    uint32_t n = 0, j;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t want = pass && n ? pick % n : 0;
        for (j = 1; j < d->ng; j++) {
            const fgraph *g = &d->g[j];
            if (!g->done || g->nph != n_in || g->body[g->nb - 1].n_in != n_out) continue;
            if (!pass) n++;
            else if (want-- == 0) return (int32_t)j;
        }
        if (!n) return -1;
    }
    return -1;
}

static void op_control(dec *d, uint32_t gi, uint32_t depth) {
    static const uint32_t kinds[4] = {MP_NODE_COND, MP_NODE_WHILE, MP_NODE_MAP, MP_NODE_SCAN};
    fgraph *g = &d->g[gi];
    uint32_t kind = kinds[u8(&d->r) & 3];
    if (depth >= MAX_DEPTH || d->ng >= MAX_GRAPHS) return op_call(d, g, false);
    uint32_t n = 1 + u8(&d->r) % 3, k = 0;
    int32_t in[3];
    ftensor ops[3];
    for (uint32_t i = 0; i < n; i++) {
        int32_t v = pick(d, g);
        if (v >= 0) ops[k] = g->t[v], in[k++] = v;
    }
    if (!k) return;
    uint32_t n_res = kind == MP_NODE_WHILE ? k : 1 + u8(&d->r) % 2;
    uint32_t n_sub = kind == MP_NODE_COND || kind == MP_NODE_WHILE ? 2 : 1;
    uint32_t skip = kind == MP_NODE_COND; /* the predicate stays outside */
    int32_t subs[2] = {-1, -1};
    for (uint32_t s = 0; s < n_sub; s++) {
        unsigned reuse = u8(&d->r);
        uint32_t outs = kind == MP_NODE_WHILE && s == 0 ? 1 : n_res;
        int32_t shared = fitting_graph(d, reuse, k - skip, outs);
        if ((reuse & 0xc0) == 0xc0 && shared >= 0) /* a shared sub-graph */
            subs[s] = shared;
        else if (d->ng < MAX_GRAPHS)
            subs[s] = (int32_t)build_graph(d, depth + 1, ops + skip, k - skip, outs);
        else if (shared >= 0)
            subs[s] = shared;
        else
            return;
    }
    fnode *nd = add_node(g, kind);
    memcpy(nd->in, in, k * sizeof *in);
    nd->n_in = k;
    for (uint32_t i = 0; i < n_res; i++) {
        int32_t t = new_tensor(d, g, kind == MP_NODE_WHILE ? ops[i].size : size_of(d));
        if (t < 0) break;
        if (kind == MP_NODE_WHILE) g->t[t].dev = ops[i].dev;
        else attrs(d, &g->t[t], true);
        nd->out[nd->n_out++] = t;
    }
    nd->sub[0] = subs[0];
    nd->sub[1] = subs[1];
    for (uint32_t i = 0; i < nd->n_out; i++) offer(g, nd->out[i]);
}

/* A sub-graph with nothing to return returns a new tensor, defined by a
 * call put before the output node *out (which moves and stays last): its
 * count of results is its node's. */
static int32_t fresh_result(dec *d, fgraph *g, fnode **out) {
    int32_t t = g->nb < MAX_NODES ? new_tensor(d, g, size_of(d)) : -1;
    if (t < 0) return -1;
    fnode saved = **out;
    fnode *def = *out;
    memset(def, 0, sizeof *def);
    def->kind = MP_NODE_CALL;
    def->sub[0] = def->sub[1] = -1;
    def->out[0] = t;
    def->n_out = 1;
    g->body[g->nb] = saved;
    *out = &g->body[g->nb++];
    offer(g, t);
    return t;
}

static uint32_t build_graph(dec *d, uint32_t depth, const ftensor *ins, uint32_t n_ins,
                            uint32_t n_outs) {
    uint32_t gi = d->ng++;
    fgraph *g = &d->g[gi];
    memset(g, 0, sizeof *g);
    g->sub = ins != NULL;
    if (ins) { /* operands cross into a sub-graph as its placeholders */
        for (uint32_t i = 0; i < n_ins; i++) {
            int32_t t = placeholder(d, g, ins[i].size, ins[i].flags & MP_T_DYNAMIC);
            if (t >= 0) g->t[t].dev = ins[i].dev;
        }
    } else {
        uint32_t n = 1 + u8(&d->r) % 3;
        for (uint32_t i = 0; i < n; i++) {
            int32_t t = placeholder(d, g, size_of(d), 0);
            if (t >= 0) attrs(d, &g->t[t], false);
        }
    }
    while (!at_end(&d->r) && g->nt + 4 <= MAX_T && g->nb + 3 <= MAX_NODES &&
           g->nph + 1 < MAX_T && d->total + 4 <= MAX_TOTAL) {
        unsigned op = u8(&d->r) % 12;
        if (op == 11) break;
        switch (op) {
        case 4: op_call(d, g, true); break;
        case 5: op_inplace(d, g); break;
        case 6: op_view(d, g); break;
        case 7: op_control(d, gi, depth); break;
        case 8: g->sub ? op_call(d, g, false) : op_placeholder(d, g); break;
        case 9: op_link(d, g); break;
        case 10: op_view_out(d, g); break;
        default: op_call(d, g, false); break;
        }
        g = &d->g[gi];
    }
    fnode *out = add_node(g, MP_NODE_OUTPUT);
    uint32_t n = ins ? n_outs : u8(&d->r) % 4;
    if (!ins && n == 0 && !at_end(&d->r)) n = 1;
    for (uint32_t i = 0; i < n && out->n_in < MAX_LIST; i++) {
        int32_t v = pick(d, g);
        if (v < 0 && ins) v = fresh_result(d, g, &out);
        if (v >= 0) out->in[out->n_in++] = v;
    }
    g->done = true;
    return gi;
}

static void graph_name(uint32_t gi, char *buf) {
    if (gi == 0) strcpy(buf, "main");
    else snprintf(buf, 16, "g%u", gi);
}

/* the decoder's tensors are t0, t1, ... */
static const char *index_name(const void *ctx, int32_t t, char *buf) {
    (void)ctx;
    snprintf(buf, 24, "t%d", t);
    return buf;
}

static void write_program(const dec *d, mp_buf *b) {
    char name[16];
    mp_buf_puts(b, "memplan-graph 1\n");
    for (uint32_t gi = 0; gi < d->ng; gi++) {
        const fgraph *g = &d->g[gi];
        graph_name(gi, name);
        mp_buf_printf(b, "graph %s\n", name);
        for (uint32_t i = 0; i < g->nt; i++) {
            const ftensor *t = &g->t[i];
            uint32_t flags = t->flags;
            if (gi || t->inplace >= 0 || t->view >= 0) flags &= ~(uint32_t)MP_T_PINNED;
            char tn[16], ip[16], vw[16];
            snprintf(tn, sizeof tn, "t%u", i);
            snprintf(ip, sizeof ip, "t%d", t->inplace);
            snprintf(vw, sizeof vw, "t%d", t->view);
            mp_graph_put_tensor(b, tn, t->size, t->dev, flags, t->mem_id, t->at,
                                t->inplace >= 0 ? ip : NULL, t->view >= 0 ? vw : NULL, t->offset);
        }
        for (int pass = 0; pass < 2; pass++) {
            const fnode *v = pass ? g->body : g->ph;
            uint32_t n = pass ? g->nb : g->nph;
            for (uint32_t i = 0; i < n; i++) {
                const fnode *nd = &v[i];
                char sub_name[2][16];
                mp_node_line nl = {nd->kind, nd->in, nd->out, nd->n_in, nd->n_out, {NULL, NULL}, nd->backend, NULL, 0, 0};
                for (int s = 0; s < 2; s++)
                    if (nd->sub[s] >= 0) graph_name((uint32_t)nd->sub[s], sub_name[s]), nl.sub[s] = sub_name[s];
                mp_graph_put_node(b, &nl, index_name, NULL);
            }
        }
        mp_buf_puts(b, "end\n");
    }
}

static void decode_options(dec *d, mp_options *o) {
    static const uint32_t aligns[16] = {16, 1, 2, 4, 8, 32, 64, 3, 24, 128, 16, 1, 4096, 5, 8, 256};
    static const mp_device devs[4] = {{MP_DEV_CPU, 0}, {MP_DEV_CUDA, 0}, {MP_DEV_CUDA, 1},
                                      {MP_DEV_CPU, 1}};
    static const uint32_t budgets[4] = {1, 0, 2, 5};
    unsigned a = u8(&d->r), f = u8(&d->r);
    mp_options_default(o);
    o->alignment = aligns[a & 15];
    d->n_devs = 1 + ((a >> 4) & 3);
    memcpy(d->devs, devs, sizeof devs);
    d->pools = (a >> 6) & 1;
    o->alloc_inputs = !(f & 1);
    o->alloc_outputs = !(f & 2);
    o->alloc_mutable = !(f & 4);
    o->per_device = (f & 8) != 0;
    o->budget_ms = budgets[(f >> 4) & 3];
    o->exact = (a >> 7) & (f >> 6) & 1;
    o->exact_ms = 1 + ((f >> 7) & 1);
    o->replan_limit = FUZZ_REPLAN_LIMIT;
    /* a's exact bit without f's (no exact search) and no --per-device: a
     * memory map of three banks, the fast one as small as the budget bits
     * say, spilled in value or program order */
    if (((a >> 7) & 1) && !((f >> 6) & 1) && !o->per_device) {
        static const char *const maps[4] = {"f=512,m=2K,s=unlimited", "f=4K,m=16K,s=unlimited",
                                            "f=64K,m=256K,s=unlimited", "f=1M,m=4M,s=unlimited"};
        mp_err err;
        mp_banks_parse(maps[(f >> 4) & 3], &o->banks, &err);
        o->spill_order = (f >> 7) & 1;
    }
}

/* "# options: --alignment 8 --no-alloc-inputs --per-device ..." */
static void text_options(const char *s, size_t n, mp_options *o) {
    static const char key[] = "# options:";
    mp_options_default(o);
    o->budget_ms = 2;
    o->exact_ms = 2;
    o->replan_limit = FUZZ_REPLAN_LIMIT;
    const char *end = s + n;
    for (; s < end; s++) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        if ((size_t)(e - s) >= sizeof key - 1 && memcmp(s, key, sizeof key - 1) == 0) {
            char line[512], *w[64], *save = NULL;
            size_t len = (size_t)(e - s) < sizeof line ? (size_t)(e - s) : sizeof line - 1;
            memcpy(line, s, len);
            line[len] = 0;
            uint32_t nw = 0;
            for (char *t = strtok_r(line + sizeof key - 1, " \t\r", &save); t && nw < 64;
                 t = strtok_r(NULL, " \t\r", &save))
                w[nw++] = t;
            for (uint32_t i = 0; i < nw; i++) {
                const char *next = i + 1 < nw ? w[i + 1] : NULL;
                const mp_option_flag *f = mp_option_find(w[i], strlen(w[i]));
                mp_options t = *o;
                mp_err err;
                if (!f || !strcmp(f->name, "--et-exact")) continue; /* both modes are checked */
                /* a fuzz input stays fast: an effort past 50 is not taken */
                if (mp_option_set(&t, f, next, &err) || t.budget_ms > 50 || t.exact_ms > 50) continue;
                *o = t;
                if (f->takes_value) i++;
            }
        }
        s = e;
    }
}

static void check(const mp_program *p, const mp_options *o, const char *text, size_t len);


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mp_err err;
    mp_options o;
    static const char magic[] = "memplan-graph";
    if (size >= sizeof magic - 1 && memcmp(data, magic, sizeof magic - 1) == 0) {
        if (size > 65536) return 0;
        mp_program *p = mp_graph_parse((const char *)data, size, "<fuzz>", &err);
        if (!p) return 0;
        text_options((const char *)data, size, &o);
        check(p, &o, (const char *)data, size);
        mp_program_free(p);
        return 0;
    }
    dec *d = mp_xcalloc(1, sizeof *d);
    d->r = (rd){data, size, 0};
    decode_options(d, &o);
    build_graph(d, 0, NULL, 0, 0);
    mp_buf b;
    mp_buf_init(&b);
    write_program(d, &b);
    mp_xfree(d);
    if (getenv("MEMPLAN_FUZZ_PRINT")) { /* triage: what the input decodes to */
        char args[256];
        mp_options_to_args(&o, args, sizeof args);
        const char *body = strchr(b.data, '\n') + 1; /* after the header */
        printf("memplan-graph 1\n# options: %s --budget-ms %u%s --exact-ms %u\n%s", args,
               o.budget_ms, o.exact ? " --exact" : "", o.exact_ms, body);
        fflush(stdout);
    }
    mp_program *p = mp_graph_parse(b.data, b.len, "<decoded>", &err);
    if (!p) fuzz_fail("the decoder made a graph that does not parse: %s\n%s", err.msg, b.data);
    check(p, &o, b.data, b.len);
    mp_program_free(p);
    mp_buf_free(&b);
    return 0;
}
#endif
