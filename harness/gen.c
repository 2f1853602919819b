/* gen.c - the random graph generator (`memplan gen`).
 *
 * Deterministic: a splitmix64 stream seeded from the seed and the options
 * drives every choice, so the same seed and options give the same bytes
 * everywhere.  A builder collects placeholders and body nodes separately
 * (placeholders must come first in a graph), then writes .mpg text.
 *
 * Profiles:
 *   mixed        every feature of the format, for testing (default)
 *   chain        long chains with skip connections (ResNet-like)
 *   wide         wide branches joined again (Inception-like)
 *   encdec       encoder-decoder with long skips (U-Net-like)
 *   transformer  attention blocks with weights and a mutable KV cache
 * Every profile scales to millions of tensors in linear time. */
#include "internal.h"
#include "harness.h"
#include "files.h"

#include <stdio.h>

/* ------------------------------------------------------------- random */

typedef struct rng {
    uint64_t s;
} rng;

/* Every draw is a statement of its own (or sequenced by ?:, && or a call):
 * C leaves the order of operands and arguments unspecified, gcc and clang
 * choose differently, and a seed must give the same graph with any
 * compiler. */
static uint64_t next(rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t below(rng *r, uint64_t n) { return n ? next(r) % n : 0; }
static bool chance(rng *r, unsigned percent) { return below(r, 100) < percent; }

/* Sizes as real models have them: repeated powers of two, conv
 * activations (C x H x W x dtype), small odd sizes, and a long tail. */
static uint64_t real_size(rng *r) {
    static const uint64_t ch[] = {16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048};
    static const uint64_t hw[] = {7, 14, 28, 56, 112, 224};
    static const uint64_t dt[] = {1, 2, 4, 4};
    uint64_t k = below(r, 100);
    if (k < 40) return UINT64_C(1) << (6 + below(r, 19));
    if (k < 75) {
        uint64_t h = hw[below(r, 6)];
        uint64_t c = ch[below(r, 12)]; /* one draw per statement: see next() */
        return c * h * h * dt[below(r, 4)];
    }
    if (k < 90) return 1 + below(r, 4096);
    if (k < 99) return 1 + below(r, 16u << 20);
    return (64u << 20) + below(r, 448u << 20); /* 64 MiB .. 512 MiB */
}

/* ------------------------------------------------------------ builder */

typedef struct btensor {
    char *name;
    uint64_t size;
    mp_device dev;
    uint32_t flags, mem_id;
    int32_t inplace, view;
    bool base;  /* an in-place base: must stay an intermediate */
    uint64_t at; /* with MP_T_PINNED in flags */
    uint64_t offset; /* offset= in its in-place or view base (since 2.1) */
    bool input; /* placeholder */
} btensor;

typedef struct bnode {
    uint32_t kind;
    int32_t *in, *out;
    uint32_t n_in, n_out;
    int32_t sub[2];
    const char *backend;
    uint64_t scratch; /* a delegate's scratch= bytes, 0: none */
} bnode;

typedef struct bgraph {
    char name[32];
    btensor *t;
    size_t nt, ct;
    bnode *ph, *body;
    size_t nph, cph, nb, cb;
    int32_t *vals; /* operands available to later nodes */
    size_t nv, cv;
    uint32_t counter;
    mp_arena *arena; /* the generator's: names and operand lists (10^7 small blocks at 10^7 tensors) */
} bgraph;

typedef struct gen {
    rng r;
    mp_gen_options o;
    bgraph *g;
    size_t ng, cg;
    mp_arena *arena;  /* every graph's names and lists, freed at the end */
    uint64_t tensors; /* total so far */
    mp_device devs[16];
    uint32_t n_devs;
    bool pools;   /* this program uses pre-assigned pools */
    bool inplace; /* this program has in-place tensors */
    bool methods; /* an entry line: every graph is a method */
} gen;

/* prefix then n in decimal into name[48], as snprintf's "%s%u" writes it
 * (a printf call a tensor was a tenth of `memplan gen`), cut at 47
 * characters; its length. */
static size_t numbered_name(char *name, const char *prefix, uint32_t n) {
    char full[47 + MP_U64_DIGITS + 1];
    size_t len = 0;
    for (; *prefix && len < 47; prefix++) full[len++] = *prefix;
    len = (size_t)(mp_put_u64(full + len, n) - full);
    if (len > 47) len = 47;
    memcpy(name, full, len);
    name[len] = 0;
    return len;
}

static int32_t add_tensor(bgraph *g, const char *prefix, uint64_t size, mp_device dev) {
    btensor t = {0};
    char name[48];
    size_t len = numbered_name(name, prefix, g->counter++);
    t.name = mp_arena_strndup(g->arena, name, len);
    t.size = size;
    t.dev = dev;
    t.inplace = t.view = -1;
    MP_VEC_PUSH(g->t, g->nt, g->ct, t);
    return (int32_t)g->nt - 1;
}

static int32_t *list(bgraph *g, const int32_t *v, uint32_t n) {
    return mp_arena_memdup(g->arena, v, n * sizeof *v);
}

static void add_node(bgraph *g, uint32_t kind, const int32_t *in, uint32_t n_in,
                     const int32_t *out, uint32_t n_out) {
    bnode nd = {kind, list(g, in, n_in), list(g, out, n_out), n_in, n_out, {-1, -1}, NULL, 0};
    if (kind == MP_NODE_PLACEHOLDER) MP_VEC_PUSH(g->ph, g->nph, g->cph, nd);
    else MP_VEC_PUSH(g->body, g->nb, g->cb, nd);
}

static bnode *last_node(bgraph *g) { return &g->body[g->nb - 1]; }

static void offer(bgraph *g, int32_t t) { MP_VEC_PUSH(g->vals, g->nv, g->cv, t); }

static int32_t placeholder(gen *G, bgraph *g, const char *prefix, uint64_t size,
                           mp_device dev, uint32_t flags) {
    int32_t t = add_tensor(g, prefix, size, dev);
    g->t[t].flags = flags;
    g->t[t].input = true;
    add_node(g, MP_NODE_PLACEHOLDER, NULL, 0, &t, 1);
    G->tensors++;
    return t;
}

/* A recent operand (chains), or any (wide DAGs). */
static int32_t pick(gen *G, bgraph *g, bool recent) {
    if (!g->nv) return -1;
    size_t k = recent ? g->nv - 1 - below(&G->r, g->nv < 4 ? g->nv : 4) : below(&G->r, g->nv);
    return g->vals[k];
}

static mp_device pick_device(gen *G) {
    if (G->n_devs <= 1 || chance(&G->r, 60)) return G->devs[0];
    return G->devs[1 + below(&G->r, G->n_devs - 1)];
}

static bgraph *new_graph(gen *G, const char *name) {
    bgraph g = {0};
    snprintf(g.name, sizeof g.name, "%s", name);
    g.arena = G->arena;
    MP_VEC_PUSH(G->g, G->ng, G->cg, g);
    return &G->g[G->ng - 1];
}

/* Builder graphs move when G->g grows: refer to them by index. */
#define GR(i) (&G->g[i])

/* ----------------------------------------------------- mixed profile */

static size_t gen_mixed(gen *G, size_t gi, uint64_t budget, uint32_t depth,
                        const btensor *inputs, uint32_t n_inputs, uint32_t n_outputs);

static const char *const BACKENDS[] = {"XnnpackBackend", "QnnBackend", "CoreMLBackend",
                                       "VulkanBackend", "xnnpack_q8"};

static void mixed_call(gen *G, size_t gi) {
    bgraph *g = GR(gi);
    int32_t in[3];
    uint32_t n_in = 1 + (uint32_t)below(&G->r, 3), k = 0;
    for (uint32_t i = 0; i < n_in; i++) {
        int32_t v = pick(G, g, chance(&G->r, 70));
        if (v >= 0) in[k++] = v;
    }
    mp_device dev = pick_device(G);
    uint32_t n_out = chance(&G->r, 15) ? 2 : 1;
    int32_t out[2];
    for (uint32_t i = 0; i < n_out; i++) {
        uint64_t size = chance(&G->r, 4) ? 0 : real_size(&G->r);
        if (chance(&G->r, 25) && k) size = g->t[in[0]].size; /* equal sizes tie */
        out[i] = add_tensor(g, "t", size, dev);
        if (chance(&G->r, 6)) g->t[out[i]].flags |= MP_T_DYNAMIC;
        if (G->pools && chance(&G->r, 10)) g->t[out[i]].mem_id = 2 + (uint32_t)below(&G->r, 2);
    }
    bool delegate = chance(&G->r, 12);
    add_node(g, delegate ? MP_NODE_DELEGATE : MP_NODE_CALL, in, k, out, n_out);
    if (delegate) last_node(g)->backend = BACKENDS[below(&G->r, 5)];
    if (delegate) { /* a third of the delegates declare scratch memory, drawn
                     * from a copy of the stream: the graph is otherwise what
                     * the same seed gave before scratch= existed */
        rng side = {G->r.s ^ 0x5c2a7c4e1d9b3f61ull};
        if (chance(&side, 33)) last_node(g)->scratch = real_size(&side);
    }
    for (uint32_t i = 0; i < n_out; i++) offer(g, out[i]);
    G->tensors += n_out;
}

/* An in-place result over an intermediate of the same device whose size
 * it does not exceed; the base stays an intermediate (never returned). */
static void mixed_inplace(gen *G, size_t gi) {
    bgraph *g = GR(gi);
    int32_t b = pick(G, g, chance(&G->r, 80));
    if (b < 0) return;
    const btensor *bt = &g->t[b];
    if (bt->input || bt->view >= 0 || (bt->flags & (MP_T_CONST | MP_T_DYNAMIC)) || !bt->size) {
        mixed_call(G, gi);
        return;
    }
    uint64_t size = chance(&G->r, 70) ? bt->size : 1 + below(&G->r, bt->size);
    mp_device dev = bt->dev;
    uint32_t mem_id = bt->mem_id;
    int32_t t = add_tensor(g, "ip", size, dev);
    g->t[t].inplace = b;
    g->t[t].mem_id = mem_id;
    g->t[b].base = true;
    int32_t in[2] = {b, pick(G, g, false)};
    add_node(g, MP_NODE_CALL, in, in[1] >= 0 && in[1] != b ? 2 : 1, &t, 1);
    offer(g, t);
    G->tensors++;
}

static void mixed_view(gen *G, size_t gi) {
    bgraph *g = GR(gi);
    int32_t b = pick(G, g, chance(&G->r, 50));
    if (b < 0) return;
    int32_t v = add_tensor(g, "v", g->t[b].size, g->t[b].dev);
    g->t[v].view = b;
    if (chance(&G->r, 30)) { /* a view produced by a node (a view op) */
        add_node(g, MP_NODE_CALL, &b, 1, &v, 1);
    }
    offer(g, v);
    G->tensors++;
}

/* A control-flow node: operands cross into the sub-graphs as their
 * placeholders, results cross back as the node's out=, bound as
 * docs/formats.md says (a cond's predicate stays outside its branches; a
 * while's cond graph returns one value; the parser checks the counts). */
static void mixed_control(gen *G, size_t gi, uint32_t depth, uint64_t sub_budget) {
    static const uint32_t kinds[] = {MP_NODE_COND, MP_NODE_WHILE, MP_NODE_MAP, MP_NODE_SCAN};
    uint32_t kind = kinds[below(&G->r, 4)];
    int32_t in[4];
    uint32_t n_in = 1 + (uint32_t)below(&G->r, 3), k = 0;
    for (uint32_t i = 0; i < n_in; i++) {
        int32_t v = pick(G, GR(gi), chance(&G->r, 60));
        if (v >= 0) in[k++] = v;
    }
    if (!k) return;
    btensor ops[4];
    for (uint32_t i = 0; i < k; i++) ops[i] = GR(gi)->t[in[i]];
    uint32_t n_res = kind == MP_NODE_WHILE ? k : 1 + (uint32_t)below(&G->r, 2);
    uint32_t skip = kind == MP_NODE_COND; /* the predicate */
    size_t subs[2];
    uint32_t n_sub = kind == MP_NODE_COND || kind == MP_NODE_WHILE ? 2 : 1;
    for (uint32_t s = 0; s < n_sub; s++) {
        uint32_t outs = kind == MP_NODE_WHILE && s == 0 ? 1 : n_res;
        subs[s] = gen_mixed(G, G->ng, sub_budget, depth + 1, ops + skip, k - skip, outs);
    }
    bgraph *g = GR(gi);
    int32_t out[4];
    for (uint32_t i = 0; i < n_res; i++) {
        out[i] = add_tensor(g, "r", kind == MP_NODE_WHILE ? ops[i].size : real_size(&G->r),
                            kind == MP_NODE_WHILE ? ops[i].dev : G->devs[0]);
        offer(g, out[i]);
    }
    G->tensors += n_res;
    add_node(g, kind, in, k, out, n_res);
    bnode *nd = last_node(g);
    nd->sub[0] = (int32_t)subs[0];
    nd->sub[1] = n_sub == 2 ? (int32_t)subs[1] : -1;
}

/* The output node: up to n_outputs recent values (in-place bases stay
 * intermediates), sometimes an input too; a sub-graph (exact) returns
 * exactly n_outputs values, fresh tensors making up the count. */
static void finish_outputs(gen *G, size_t gi, uint32_t n_outputs, bool allow_input, bool exact) {
    bgraph *g = GR(gi);
    int32_t *out = mp_xmalloc((n_outputs + 2) * sizeof *out);
    uint32_t k = 0;
    for (size_t i = g->nv; i > 0 && k < n_outputs; i--) {
        int32_t v = g->vals[i - 1];
        int32_t root = v;
        while (g->t[root].view >= 0) root = g->t[root].view;
        if (g->t[root].base) continue; /* in-place bases stay intermediates */
        bool dup = false;
        for (uint32_t j = 0; j < k; j++) dup |= out[j] == v;
        if (!dup) out[k++] = v;
    }
    if (allow_input && g->nph && chance(&G->r, 30)) { /* an input that is also an output */
        int32_t ph = g->ph[below(&G->r, g->nph)].out[0];
        if (!(g->t[ph].flags & MP_T_CONST) && (!exact || k < n_outputs)) out[k++] = ph;
    }
    while (!k || (exact && k < n_outputs)) { /* make up the count with fresh tensors */
        int32_t t = add_tensor(g, "t", real_size(&G->r), G->devs[0]);
        add_node(g, MP_NODE_CALL, NULL, 0, &t, 1);
        out[k++] = t;
        G->tensors++;
    }
    add_node(g, MP_NODE_OUTPUT, out, k, NULL, 0);
    mp_xfree(out);
}

static size_t gen_mixed(gen *G, size_t gi, uint64_t budget, uint32_t depth,
                        const btensor *inputs, uint32_t n_inputs, uint32_t n_outputs) {
    char name[32];
    snprintf(name, sizeof name, gi ? "g%zu" : "main", gi);
    new_graph(G, name);
    uint64_t start = G->tensors;
    for (uint32_t i = 0; i < n_inputs; i++) {
        uint32_t fl = inputs ? inputs[i].flags & MP_T_DYNAMIC : 0;
        mp_device dev = inputs ? inputs[i].dev : pick_device(G);
        uint64_t size = inputs ? inputs[i].size : real_size(&G->r);
        int32_t t = placeholder(G, GR(gi), "in", size, dev, fl);
        offer(GR(gi), t);
    }
    /* weights and buffers are the entry graph's: a sub-graph's placeholders
     * are its operands */
    uint32_t n_w = inputs ? 0 : (uint32_t)below(&G->r, 3);
    for (uint32_t i = 0; i < n_w; i++)
        offer(GR(gi), placeholder(G, GR(gi), "w", real_size(&G->r), G->devs[0], MP_T_CONST));
    if (!inputs && chance(&G->r, 30)) {
        mp_device dev = pick_device(G);
        uint64_t size = real_size(&G->r);
        offer(GR(gi), placeholder(G, GR(gi), "buf", size, dev, MP_T_MUTABLE));
    }
    while (G->tensors - start < budget) {
        uint64_t k = below(&G->r, 100);
        uint64_t left = budget - (G->tensors - start);
        if (k < 8 && depth < G->o.depth && left > 6) mixed_control(G, gi, depth, 3 + below(&G->r, left / 3 + 1));
        else if (k < 20 && G->inplace) mixed_inplace(G, gi);
        else if (k < 28) mixed_view(G, gi);
        else mixed_call(G, gi);
    }
    finish_outputs(G, gi, n_outputs, true, inputs != NULL);
    return gi;
}

/* ------------------------------------------------- realistic profiles */

static int32_t op(gen *G, size_t gi, const int32_t *in, uint32_t n, uint64_t size, const char *p) {
    bgraph *g = GR(gi);
    int32_t t = add_tensor(g, p, size, G->devs[0]);
    add_node(g, MP_NODE_CALL, in, n, &t, 1);
    G->tensors++;
    return t;
}

static int32_t weight(gen *G, size_t gi, uint64_t size) {
    return placeholder(G, GR(gi), "w", size, G->devs[0], MP_T_CONST);
}

/* ResNet-like: conv-bn-relu pairs with identity skips, downsampling stages. */
static void body_chain(gen *G, size_t gi, int32_t x, uint64_t budget) {
    uint64_t c = 64, hw = 56, start = G->tensors;
    while (G->tensors - start < budget) {
        uint64_t act = c * hw * hw * 4;
        int32_t w1 = weight(G, gi, c * c * 9 * 4), w2 = weight(G, gi, c * c * 9 * 4);
        int32_t in1[2] = {x, w1};
        int32_t a = op(G, gi, in1, 2, act, "conv");
        int32_t r = op(G, gi, &a, 1, act, "relu");
        int32_t in2[2] = {r, w2};
        int32_t b = op(G, gi, in2, 2, act, "conv");
        int32_t in3[2] = {b, x};
        x = op(G, gi, in3, 2, act, "add");
        if (chance(&G->r, 15) && hw > 7) { /* next stage */
            hw /= 2;
            c *= 2;
            x = op(G, gi, &x, 1, c * hw * hw * 4, "down");
        }
        if (chance(&G->r, 20)) op(G, gi, &x, 1, 1 + below(&G->r, 4096), "stat"); /* side output */
    }
    offer(GR(gi), x);
}

/* Inception-like: branches of different depth and size, concatenated. */
static void body_wide(gen *G, size_t gi, int32_t x, uint64_t budget) {
    uint64_t start = G->tensors;
    while (G->tensors - start < budget) {
        uint32_t nb = 2 + (uint32_t)below(&G->r, 4);
        int32_t heads[6];
        uint64_t total = 0;
        for (uint32_t b = 0; b < nb; b++) {
            int32_t y = x;
            uint32_t depth = 1 + (uint32_t)below(&G->r, 3);
            uint64_t size = real_size(&G->r);
            for (uint32_t d = 0; d < depth; d++) y = op(G, gi, &y, 1, size, "br");
            heads[b] = y;
            total += size;
        }
        x = op(G, gi, heads, nb, total > (256u << 20) ? (256u << 20) : total, "cat");
    }
    offer(GR(gi), x);
}

/* U-Net-like: an encoder whose levels are consumed by the decoder. */
static void body_encdec(gen *G, size_t gi, int32_t x, uint64_t budget) {
    uint64_t start = G->tensors;
    while (G->tensors - start < budget) {
        uint32_t levels = 3 + (uint32_t)below(&G->r, 3);
        int32_t skip[8];
        uint64_t c = 32, hw = 256;
        for (uint32_t l = 0; l < levels; l++) {
            uint64_t act = c * hw * hw * 2;
            int32_t a = op(G, gi, &x, 1, act, "enc");
            skip[l] = op(G, gi, &a, 1, act, "enc");
            x = op(G, gi, &skip[l], 1, act / 4, "pool");
            c *= 2;
            hw /= 2;
        }
        for (uint32_t l = levels; l-- > 0;) {
            c /= 2;
            hw *= 2;
            uint64_t act = c * hw * hw * 2;
            int32_t up = op(G, gi, &x, 1, act, "up");
            int32_t in[2] = {up, skip[l]};
            int32_t m = op(G, gi, in, 2, act * 2, "merge");
            x = op(G, gi, &m, 1, act, "dec");
        }
    }
    offer(GR(gi), x);
}

/* Transformer blocks: qkv from one node, attention scores, MLP, residuals;
 * the KV cache is a mutable buffer per layer. */
static void body_transformer(gen *G, size_t gi, int32_t x, uint64_t budget) {
    uint64_t start = G->tensors, d = 1024 * (1 + below(&G->r, 4)), seq = 128u << below(&G->r, 4);
    uint64_t act = seq * d * 2;
    while (G->tensors - start < budget) {
        int32_t cache = placeholder(G, GR(gi), "kv", 2 * act, G->devs[0], MP_T_MUTABLE);
        int32_t wqkv = weight(G, gi, 3 * d * d * 2), wo = weight(G, gi, d * d * 2);
        int32_t w1 = weight(G, gi, 4 * d * d * 2), w2 = weight(G, gi, 4 * d * d * 2);
        int32_t n1 = op(G, gi, &x, 1, act, "ln");
        bgraph *g = GR(gi);
        int32_t qkv[3] = {add_tensor(g, "q", act, G->devs[0]), add_tensor(g, "k", act, G->devs[0]),
                          add_tensor(g, "v", act, G->devs[0])};
        int32_t in[3] = {n1, wqkv, cache};
        add_node(g, MP_NODE_CALL, in, 3, qkv, 3);
        G->tensors += 3;
        int32_t s = op(G, gi, qkv, 2, seq * seq * 16 * 2, "scores");
        int32_t p = op(G, gi, &s, 1, seq * seq * 16 * 2, "softmax");
        int32_t pv[2] = {p, qkv[2]};
        int32_t a = op(G, gi, pv, 2, act, "attn");
        int32_t ao[2] = {a, wo};
        int32_t o = op(G, gi, ao, 2, act, "proj");
        int32_t r1[2] = {o, x};
        int32_t h = op(G, gi, r1, 2, act, "res");
        int32_t n2 = op(G, gi, &h, 1, act, "ln");
        int32_t u[2] = {n2, w1};
        int32_t up = op(G, gi, u, 2, 4 * act, "mlp");
        int32_t ge = op(G, gi, &up, 1, 4 * act, "gelu");
        int32_t dn[2] = {ge, w2};
        int32_t m = op(G, gi, dn, 2, act, "mlp");
        int32_t r2[2] = {m, h};
        x = op(G, gi, r2, 2, act, "res");
    }
    offer(GR(gi), x);
}

/* A language model's two methods: `prefill` reads a prompt of seq tokens
 * and `decode` one token; both read and write the same KV caches, one per
 * layer, shared state (mutable, shared) of one size in both. */
static void body_method(gen *G, size_t gi, uint64_t seq, uint64_t d, uint64_t cache, uint32_t layers) {
    int32_t x = placeholder(G, GR(gi), "tokens", seq * 4, G->devs[0], 0);
    int32_t *kv = mp_xmalloc((layers + 1) * sizeof *kv);
    for (uint32_t l = 0; l < layers; l++) { /* named alike in both methods */
        bgraph *g = GR(gi);
        kv[l] = placeholder(G, g, "kv", cache, G->devs[0], MP_T_MUTABLE | MP_T_SHARED);
        char name[32];
        snprintf(name, sizeof name, "kv_%u", l);
        g->t[kv[l]].name = mp_arena_strndup(g->arena, name, strlen(name));
    }
    uint64_t act = seq * d * 2;
    x = op(G, gi, &x, 1, act, "embed");
    for (uint32_t l = 0; l < layers; l++) {
        int32_t n1 = op(G, gi, &x, 1, act, "ln");
        int32_t in[2] = {n1, kv[l]};
        int32_t s = op(G, gi, in, 2, seq * (cache / (d * 4) + 1) * 2, "scores");
        int32_t a = op(G, gi, &s, 1, act, "attn");
        int32_t r[2] = {a, x};
        x = op(G, gi, r, 2, act, "res");
        int32_t up = op(G, gi, &x, 1, 4 * act, "mlp");
        int32_t dn[2] = {up, x};
        x = op(G, gi, dn, 2, act, "res");
    }
    offer(GR(gi), op(G, gi, &x, 1, seq * 4096, "logits"));
    mp_xfree(kv);
}

static void gen_methods(gen *G) {
    G->methods = true;
    uint64_t d = 256u << below(&G->r, 3), seq = 16u << below(&G->r, 4), cache = 2 * 2 * d * 2 * (seq * 4);
    uint32_t layers = (uint32_t)(G->o.tensors / 16 + 1);
    new_graph(G, "prefill");
    body_method(G, 0, seq, d, cache, layers);
    finish_outputs(G, 0, 1, false, false);
    new_graph(G, "decode");
    body_method(G, 1, 1, d, cache, layers);
    finish_outputs(G, 1, 1, false, false);
}

/* Inception-style blocks with the concatenation in place (storage
 * offsets, since 2.1): from one input, 2 to 4 branches of one or two ops,
 * each branch's last result written into its part of the block's output
 * (inplace= the output, offset= its part; sizes and offsets multiples of
 * 64, so any alignment up to 64 holds), the output read by the next
 * block; now and then a slice of it (a view at an offset) read too. */
static void body_concat(gen *G, size_t gi, int32_t x, uint64_t budget) {
    uint64_t start = G->tensors;
    while (G->tensors - start < budget) {
        uint32_t nb = 2 + (uint32_t)below(&G->r, 3);
        uint64_t part[4], total = 0;
        for (uint32_t k = 0; k < nb; k++) {
            part[k] = 64 * (1 + below(&G->r, 256));
            total += part[k];
        }
        int32_t cat = add_tensor(GR(gi), "cat", total, G->devs[0]), pieces[4];
        G->tensors++;
        for (uint32_t k = 0, at = 0; k < nb; at += (uint32_t)part[k], k++) {
            int32_t y = x;
            if (chance(&G->r, 50)) y = op(G, gi, &x, 1, 64 * (1 + below(&G->r, 256)), "br");
            pieces[k] = op(G, gi, &y, 1, part[k], "pc");
            bgraph *g = GR(gi);
            g->t[pieces[k]].inplace = cat;
            g->t[pieces[k]].offset = at;
            g->t[cat].base = true;
        }
        add_node(GR(gi), MP_NODE_CALL, pieces, nb, &cat, 1);
        x = cat;
        if (chance(&G->r, 25)) { /* the second part as a slice, read by a node */
            bgraph *g = GR(gi);
            int32_t v = add_tensor(g, "sl", part[1], G->devs[0]);
            g->t[v].view = cat;
            g->t[v].offset = part[0];
            G->tensors++;
            op(G, gi, &v, 1, 64, "use");
        }
    }
    offer(GR(gi), op(G, gi, &x, 1, 64, "out"));
}

/* ---------------------------------------------- adversarial profiles */

/* One in-place chain, each link written over the previous, with side
 * outputs now and then; a tensor live across everything (the input). */
static void body_inplace_chain(gen *G, size_t gi, int32_t x, uint64_t budget) {
    uint64_t start = G->tensors, size = 4096;
    int32_t prev = op(G, gi, &x, 1, size, "a");
    while (G->tensors - start < budget) {
        bgraph *g = GR(gi);
        int32_t t = add_tensor(g, "ip", size, G->devs[0]);
        g->t[t].inplace = prev;
        g->t[prev].base = true;
        int32_t in[2] = {prev, x};
        add_node(g, MP_NODE_CALL, in, 2, &t, 1);
        G->tensors++;
        prev = t;
        if (chance(&G->r, 5)) op(G, gi, &prev, 1, 1 + below(&G->r, 8192), "side");
    }
    offer(GR(gi), op(G, gi, &prev, 1, size, "out"));
}

/* Views of views: every view made by a node of its own and read now and
 * then, the root live to the end. */
static void body_view_chain(gen *G, size_t gi, int32_t x, uint64_t budget) {
    uint64_t start = G->tensors, size = 1u << 20;
    int32_t prev = op(G, gi, &x, 1, size, "a");
    while (G->tensors - start < budget) {
        bgraph *g = GR(gi);
        int32_t v = add_tensor(g, "v", size, G->devs[0]);
        g->t[v].view = prev;
        add_node(g, MP_NODE_CALL, &prev, 1, &v, 1);
        G->tensors++;
        prev = v;
        if (chance(&G->r, 10)) op(G, gi, &v, 1, 1 + below(&G->r, size), "use");
    }
    offer(GR(gi), op(G, gi, &prev, 1, 64, "out"));
}

/* One node with n outputs (each on a device of its own, or all on one),
 * all read by one more node: planners that look devices or a node's
 * outputs up one by one are quadratic here. */
static void body_one_node(gen *G, size_t gi, int32_t x, uint64_t budget, bool devices) {
    uint32_t n = budget > 65535 ? 65535 : (uint32_t)budget;
    bgraph *g = GR(gi);
    int32_t *outs = mp_xmalloc((n + 1) * sizeof *outs);
    for (uint32_t i = 0; i < n; i++) {
        mp_device d = devices ? (mp_device){MP_DEV_CUDA, (uint16_t)i} : G->devs[0];
        outs[i] = add_tensor(g, "o", 16 + below(&G->r, 4096), d);
    }
    add_node(g, MP_NODE_CALL, &x, 1, outs, n);
    G->tensors += n;
    offer(GR(gi), op(G, gi, outs, n, 64, "all"));
    mp_xfree(outs);
}

/* --- the shapes that made ExecuTorch's greedy, TFLite Micro's and XLA's
 * planners quadratic where few tensors are live (issue 45, B8) --- */

/* A plain chain: each node reads the one before. */
static void body_plain_chain(gen *G, size_t gi, int32_t x, uint64_t budget) {
    uint64_t start = G->tensors;
    while (G->tensors - start < budget) x = op(G, gi, &x, 1, 64 * (1 + below(&G->r, 64)), "c");
    offer(GR(gi), x);
}

/* Short in-place families in a chain: a result, then an in-place op on it
 * (relu_ after conv), the family read by the next. */
static void body_inplace_pairs(gen *G, size_t gi, int32_t x, uint64_t budget) {
    uint64_t start = G->tensors;
    while (G->tensors - start < budget) {
        int32_t a = op(G, gi, &x, 1, 64 * (1 + below(&G->r, 64)), "a");
        bgraph *g = GR(gi);
        int32_t t = add_tensor(g, "ip", g->t[a].size, G->devs[0]);
        g->t[t].inplace = a;
        g->t[a].base = true;
        add_node(g, MP_NODE_CALL, &a, 1, &t, 1);
        G->tensors++;
        x = t;
    }
    offer(GR(gi), x);
}

/* One node reading n tensors, each made from the input by a node of its
 * own: all n live until the last node. */
static void body_fan_in(gen *G, size_t gi, int32_t x, uint64_t budget) {
    uint32_t n = budget > UINT32_MAX - 2 ? UINT32_MAX - 2 : (uint32_t)budget;
    int32_t *ins = mp_xmalloc((n + 1) * sizeof *ins);
    for (uint32_t i = 0; i < n; i++) ins[i] = op(G, gi, &x, 1, 64 * (1 + below(&G->r, 64)), "f");
    offer(GR(gi), op(G, gi, ins, n, 64, "all"));
    mp_xfree(ins);
}

/* A chain of delegates, each with scratch memory live during it alone. */
static void body_scratch_chain(gen *G, size_t gi, int32_t x, uint64_t budget) {
    uint64_t start = G->tensors;
    while (G->tensors - start < budget) {
        bgraph *g = GR(gi);
        int32_t y = add_tensor(g, "d", 64 * (1 + below(&G->r, 64)), G->devs[0]);
        add_node(g, MP_NODE_DELEGATE, &x, 1, &y, 1);
        last_node(g)->backend = BACKENDS[below(&G->r, 5)];
        last_node(g)->scratch = 64 * (1 + below(&G->r, 256));
        G->tensors += 2; /* the result and its scratch tensor */
        x = y;
    }
    offer(GR(gi), x);
}

/* A chain whose tensors go round every pre-assigned pool. */
static void body_many_pools(gen *G, size_t gi, int32_t x, uint64_t budget) {
    uint64_t start = G->tensors;
    while (G->tensors - start < budget) {
        x = op(G, gi, &x, 1, 16 + below(&G->r, 65536), "p");
        GR(gi)->t[x].mem_id = 1 + (uint32_t)((G->tensors - start) % MP_MAX_MEM_ID);
    }
    offer(GR(gi), op(G, gi, &x, 1, 64, "out"));
}

/* A cond whose two branches take x and return one new tensor (deeper:
 * a nested cond inside each branch); returns the result. */
static int32_t small_cond(gen *G, size_t gi, int32_t x, uint32_t depth) {
    size_t br[2];
    uint64_t size = GR(gi)->t[x].size;
    for (int k = 0; k < 2; k++) {
        char name[32];
        snprintf(name, sizeof name, "g%zu", G->ng);
        br[k] = G->ng;
        new_graph(G, name);
        int32_t in = placeholder(G, GR(br[k]), "in", size, G->devs[0], 0);
        int32_t y = op(G, br[k], &in, 1, 1 + below(&G->r, 65536), "b");
        int32_t r = depth > 1 && k == 0 ? small_cond(G, br[k], y, depth - 1) : op(G, br[k], &y, 1, size, "r");
        add_node(GR(br[k]), MP_NODE_OUTPUT, &r, 1, NULL, 0);
    }
    bgraph *g = GR(gi);
    int32_t res = add_tensor(g, "r", size, G->devs[0]);
    int32_t in[2] = {x, x};
    add_node(g, MP_NODE_COND, in, 2, &res, 1);
    last_node(g)->sub[0] = (int32_t)br[0];
    last_node(g)->sub[1] = (int32_t)br[1];
    G->tensors++;
    return res;
}

/* Conds in a row, each result read by the next cond (a result live while
 * the next one runs its branches: D14), or one cond nested `depth` deep. */
static void body_conds(gen *G, size_t gi, int32_t x, uint64_t budget, uint32_t depth) {
    uint64_t start = G->tensors;
    x = op(G, gi, &x, 1, 4096, "a");
    while (G->tensors - start < budget) x = small_cond(G, gi, x, depth);
    offer(GR(gi), op(G, gi, &x, 1, 64, "out"));
}

/* A large main graph's arrays sized for the whole budget at once.  Grown
 * by doubling, the kernel moved them (realloc of a large block is
 * mremap), and moved pages lose their huge pages: at 10^7 tensors 1 GB of
 * tensors and 0.7 GB of nodes.  Pages never touched cost nothing, so the
 * part of a budget that a profile spends elsewhere (sub-graphs, fewer
 * placeholders) reserves address space only.  Below RESERVE_MIN the
 * arrays grow as before. */
#define RESERVE_MIN (UINT64_C(1) << 16)
static void reserve_main(bgraph *g, uint64_t budget) {
    if (budget < RESERVE_MIN || budget > UINT32_MAX) return;
    size_t n = (size_t)budget + 1024; /* a profile ends its last block past the budget */
    g->t = mp_xrealloc(g->t, n * sizeof *g->t), g->ct = n;
    g->ph = mp_xrealloc(g->ph, n * sizeof *g->ph), g->cph = n;
    g->body = mp_xrealloc(g->body, n * sizeof *g->body), g->cb = n;
    g->vals = mp_xrealloc(g->vals, n * sizeof *g->vals), g->cv = n;
}

static void gen_profile(gen *G) {
    uint64_t budget = G->o.tensors > 2 ? G->o.tensors - 2 : 1;
    reserve_main(new_graph(G, "main"), budget);
    uint64_t in_size = 3 * 224 * 224 * 4;
    int32_t x = placeholder(G, GR(0), "in", in_size, G->devs[0], 0);
    switch (G->o.profile) {
    case MP_PROFILE_CHAIN: body_chain(G, 0, x, budget); break;
    case MP_PROFILE_WIDE: body_wide(G, 0, x, budget); break;
    case MP_PROFILE_ENCDEC: body_encdec(G, 0, x, budget); break;
    case MP_PROFILE_INPLACE_CHAIN: body_inplace_chain(G, 0, x, budget); break;
    case MP_PROFILE_VIEW_CHAIN: body_view_chain(G, 0, x, budget); break;
    case MP_PROFILE_MANY_DEVICES: body_one_node(G, 0, x, budget, true); break;
    case MP_PROFILE_MANY_POOLS: body_many_pools(G, 0, x, budget); break;
    case MP_PROFILE_WIDE_NODE: body_one_node(G, 0, x, budget, false); break;
    case MP_PROFILE_MANY_CONDS: body_conds(G, 0, x, budget, 1); break;
    case MP_PROFILE_DEEP: body_conds(G, 0, x, budget, budget / 3 < MP_MAX_DEPTH - 1 ? (uint32_t)(budget / 3) + 1 : MP_MAX_DEPTH - 1); break;
    case MP_PROFILE_PLAIN_CHAIN: body_plain_chain(G, 0, x, budget); break;
    case MP_PROFILE_INPLACE_PAIRS: body_inplace_pairs(G, 0, x, budget); break;
    case MP_PROFILE_FAN_IN: body_fan_in(G, 0, x, budget); break;
    case MP_PROFILE_SCRATCH_CHAIN: body_scratch_chain(G, 0, x, budget); break;
    case MP_PROFILE_CONCAT: body_concat(G, 0, x, budget); break;
    default: body_transformer(G, 0, x, budget); break;
    }
    finish_outputs(G, 0, 1, false, false);
}

/* ------------------------------------------------------------ writing */

static const char *btensor_name(const void *ctx, int32_t t, char *buf) {
    (void)buf;
    return ((const bgraph *)ctx)->t[t].name;
}

/* One graph's text, handed to the sink a piece at a time when there is
 * one; false once the sink or an allocation failed. */
static bool write_graph(const bgraph *g, const gen *G, mp_buf *b, mp_sink_fn sink, void *ctx) {
    mp_graph_put_begin(b, g->name);
    for (size_t i = 0; i < g->nt; i++) {
        if (!mp_buf_drain(b, sink, ctx, false)) return false;
        const btensor *t = &g->t[i];
        mp_graph_put_tensor(b, t->name, t->size, t->dev, t->flags, t->mem_id, t->at,
                            t->inplace >= 0 ? g->t[t->inplace].name : NULL,
                            t->view >= 0 ? g->t[t->view].name : NULL, t->offset);
    }
    for (size_t pass = 0; pass < 2; pass++) {
        const bnode *v = pass ? g->body : g->ph;
        size_t n = pass ? g->nb : g->nph;
        for (size_t i = 0; i < n; i++) {
            if (!mp_buf_drain(b, sink, ctx, false)) return false;
            const bnode *nd = &v[i];
            mp_node_line nl = {nd->kind, nd->in, nd->out, nd->n_in, nd->n_out, {NULL, NULL}, nd->backend, NULL,
                               nd->scratch, 0};
            for (int s = 0; s < 2; s++)
                if (nd->sub[s] >= 0) nl.sub[s] = G->g[nd->sub[s]].name;
            mp_graph_put_node(b, &nl, btensor_name, g);
        }
    }
    mp_buf_puts(b, "end\n");
    return !b->failed;
}

static void free_graph(bgraph *g) {
    mp_xfree(g->t);
    mp_xfree(g->ph);
    mp_xfree(g->body);
    mp_xfree(g->vals);
}

static const char *const PROFILES[] = {"mixed",        "chain",      "wide",      "encdec",
                                       "transformer",  "inplace-chain", "view-chain",
                                       "many-devices", "many-pools", "wide-node", "many-conds",
                                       "deep", "methods", "plain-chain", "inplace-pairs", "fan-in", "scratch-chain",
                                       "concat"};

int mp_gen_profile_parse(const char *name) {
    for (int i = 0; i < MP_N_PROFILES; i++)
        if (strcmp(name, PROFILES[i]) == 0) return i;
    return -1;
}

const char *mp_gen_profile_name(uint32_t p) { return p < MP_N_PROFILES ? PROFILES[p] : "?"; }

void mp_gen_options_default(mp_gen_options *o) {
    memset(o, 0, sizeof *o);
    o->tensors = 40;
    o->depth = 2;
    o->n_devices = 1;
    o->devices[0] = (mp_device){MP_DEV_CPU, 0};
}

/* One program in eight pins up to three tensors of its entry graph (at=),
 * drawn from a side stream so that the graphs stay what the seed gave
 * before pins existed.  The pins stack in byte order at multiples of 384,
 * a multiple of every alignment the harness draws, so they never
 * conflict; the generator makes no shared sub-graphs, whose reservation at
 * 0 a pin could overlap. */
static void pin_some(gen *G) {
    rng side = {G->r.s ^ 0x3c6ef372fe94f82bull};
    bgraph *g = GR(0);
    if (!g->nt || !chance(&side, 12) || G->methods) return; /* methods: the shared state sits at 0 */
    uint64_t at = 384 * below(&side, 4);
    for (int k = 0, tries = 0; k < 3 && tries < 64; tries++) {
        btensor *t = &g->t[below(&side, g->nt)];
        if (t->input || t->inplace >= 0 || t->view >= 0 || t->flags || t->size > (UINT64_C(1) << 58)) continue;
        t->flags = MP_T_PINNED;
        t->at = at;
        at += (t->size + 383) / 384 * 384 + 384 * below(&side, 2);
        k++;
    }
}

void mp_gen(const mp_gen_options *o, mp_buf *out) { mp_gen_to(o, out, NULL, NULL); }

void mp_gen_to(const mp_gen_options *o, mp_buf *out, mp_sink_fn sink, void *ctx) {
    gen G = {0};
    G.o = *o;
    G.arena = mp_arena_new();
    /* the stream depends on every option, so related runs differ */
    G.r.s = o->seed ^ (o->tensors * 0x2545f4914f6cdd1dull) ^ ((uint64_t)o->depth << 56) ^
            ((uint64_t)o->profile << 48) ^ ((uint64_t)o->n_devices << 40);
    G.n_devs = o->n_devices ? o->n_devices : 1;
    if (G.n_devs > 16) G.n_devs = 16;
    for (uint32_t i = 0; i < G.n_devs; i++) G.devs[i] = o->n_devices ? o->devices[i] : (mp_device){0, 0};
    G.pools = chance(&G.r, 30);
    G.inplace = chance(&G.r, 50);
    if (o->profile == MP_PROFILE_MIXED) {
        uint32_t n_out = 1 + (uint32_t)below(&G.r, 3), n_in = 1 + (uint32_t)below(&G.r, 3);
        gen_mixed(&G, 0, o->tensors > 4 ? o->tensors - 4 : 1, 0, NULL, n_in, n_out);
    }
    else if (o->profile == MP_PROFILE_METHODS)
        gen_methods(&G);
    else
        gen_profile(&G);
    if (o->pins) pin_some(&G);
    mp_buf_printf(out, "memplan-graph 1\n# memplan gen --seed %llu --tensors %llu --depth %u "
                       "--profile %s%s\n",
                  (unsigned long long)o->seed, (unsigned long long)o->tensors, o->depth,
                  mp_gen_profile_name(o->profile), o->pins ? " --pins" : "");
    if (G.methods) {
        mp_buf_puts(out, "entry");
        for (size_t i = 0; i < G.ng; i++) mp_buf_printf(out, " %s", G.g[i].name);
        mp_buf_puts(out, "\n");
    }
    for (size_t i = 0; i < G.ng && write_graph(&G.g[i], &G, out, sink, ctx); i++) continue;
    mp_buf_drain(out, sink, ctx, true);
    for (size_t i = 0; i < G.ng; i++) free_graph(&G.g[i]);
    mp_xfree(G.g);
    mp_arena_free(G.arena);
}

typedef struct gen_call {
    const mp_gen_options *o;
    mp_buf b;
    mp_out *out;
} gen_call;

static int gen_work(void *ctx) {
    gen_call *c = ctx;
    mp_gen_to(c->o, &c->b, mp_out_sink, c->out);
    return MP_OK;
}

int mp_gen_write(const mp_gen_options *o, const char *path, mp_err *err) {
    mp_out out;
    int rc = mp_out_open(&out, path, NULL, 0, err);
    if (rc) return rc;
    gen_call c = {o, {0}, &out};
    if (mp_guard_run(err, gen_work, &c) != MP_OK) { /* c.b's block went with the unwind */
        mp_out_close(&out, false, err);
        return mp_err_set(err, MP_ENOMEM, "out of memory generating %llu tensors: nothing written",
                          (unsigned long long)o->tensors);
    }
    rc = mp_out_finish(&out, &c.b, err);
    mp_buf_free(&c.b);
    return rc;
}
