/* plan_parse.c - the .mpp (memplan-plan 1) parser.
 *
 * Only the syntax is judged here: a file that is not a sequence of the
 * format's lines, with decimal numbers where numbers belong, is unreadable
 * (MP_EFORMAT).  Everything a well-formed file can still get wrong - unknown
 * names, duplicate blocks, options out of range - is left for the verifier,
 * which reports it as a violation.  Linear in the file size. */
#include "graph_lookup.h" /* mp_lookup_add_names, mp_count_block_lines */

#include <stdio.h>

#define MAX_FIELDS 16


typedef struct pp {
    const char *file;
    int line;
    mp_err *err;
    mp_arena *arena;
    const mp_program *prog;
    mp_plan *plan;
    const mp_lines *lines;
    size_t gcap;
    /* block under construction */
    mp_graph_plan *cur;
    size_t acap, fcap;
    bool have_buffers, have_devices;
    mp_strmap names;  /* tensor names of cur's graph, built at the first miss */
    bool names_built;
    int32_t last;     /* the tensor the last name resolved to, or -1 */
    mp_strmap graphs; /* the program's graph names, built at the first miss */
    bool graphs_built;
    int32_t last_graph; /* the graph the last block named, or -1 */
} pp;

static int pfail(pp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int pfail(pp *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = mp_err_at(p->err, p->file, p->line, fmt, ap);
    va_end(ap);
    return rc;
}


static bool u64_of(mp_tok t, uint64_t *v) {
    if (!t.n || t.n > 20) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < t.n; i++) {
        unsigned c = (unsigned char)t.s[i];
        if (c < '0' || c > '9') return false;
        if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, c - '0', &x))
            return false;
    }
    *v = x;
    return true;
}

static bool plain_name(mp_tok t) {
    if (!t.n || t.n > MP_MAX_NAME) return false;
    for (size_t i = 0; i < t.n; i++) {
        unsigned char c = (unsigned char)t.s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$' ||
              c == '-'))
            return false;
    }
    return true;
}

static bool device_of(mp_tok t, mp_device *d) {
    const char *c = memchr(t.s, ':', t.n);
    if (!c) return false;
    mp_tok type = {t.s, (size_t)(c - t.s)}, idx = {c + 1, t.n - type.n - 1};
    uint64_t v;
    if (mp_tok_is(type, "cpu")) d->type = MP_DEV_CPU;
    else if (mp_tok_is(type, "cuda")) d->type = MP_DEV_CUDA;
    else return false;
    if (!u64_of(idx, &v) || v > UINT32_MAX) return false;
    d->index = (uint32_t)v;
    return true;
}

/* key=value fields: each key of `keys` exactly once, values decimal except
 * the one named `text_key` (kept as a token). */
static int fields(pp *p, mp_tok *tk, int nt, const char *const *keys, int nk,
                  uint64_t *vals, const char *text_key, mp_tok *text) {
    char q[48];
    unsigned seen = 0;
    for (int i = 0; i < nt; i++) {
        const char *eq = memchr(tk[i].s, '=', tk[i].n);
        if (!eq) return pfail(p, "expected key=value, found '%s'",
                              mp_quote(tk[i].s, tk[i].n, q));
        mp_tok key = {tk[i].s, (size_t)(eq - tk[i].s)};
        mp_tok val = {eq + 1, tk[i].n - key.n - 1};
        int k = 0;
        while (k < nk && !mp_tok_is(key, keys[k])) k++;
        if (k == nk) return pfail(p, "unknown field '%s'", mp_quote(key.s, key.n, q));
        if (seen & (1u << k))
            return pfail(p, "field '%s' given twice", keys[k]);
        seen |= 1u << k;
        if (text_key && mp_tok_is(key, text_key)) {
            if (!plain_name(val))
                return pfail(p, "bad value '%s' for %s", mp_quote(val.s, val.n, q),
                             keys[k]);
            *text = val;
        } else if (!u64_of(val, &vals[k])) {
            return pfail(p, "bad number '%s' for %s", mp_quote(val.s, val.n, q),
                         keys[k]);
        }
    }
    for (int k = 0; k < nk; k++)
        if (!(seen & (1u << k))) return pfail(p, "missing field '%s'", keys[k]);
    return MP_OK;
}

static int options_line(pp *p, mp_tok *tk, int nt) {
    static const char *const keys[] = {"alignment",     "alloc_inputs",
                                       "alloc_outputs", "alloc_mutable",
                                       "per_device",    "algo"};
    uint64_t v[6] = {0};
    mp_tok algo = {0, 0};
    mp_banks banks = {0};
    /* a last field banks=NAME:SIZE,... (since 1.5): the memory map */
    if (nt > 1 && tk[nt - 1].n > 6 && !memcmp(tk[nt - 1].s, "banks=", 6)) {
        char spec[MP_MAX_BANKS * 64];
        size_t n = tk[nt - 1].n - 6;
        if (n >= sizeof spec) return pfail(p, "banks= too long");
        memcpy(spec, tk[nt - 1].s + 6, n);
        spec[n] = 0;
        mp_err e;
        if (mp_banks_parse(spec, &banks, &e)) return pfail(p, "%s", e.msg);
        nt--;
    }
    if (fields(p, tk + 1, nt - 1, keys, 6, v, "algo", &algo)) return p->err->code;
    mp_plan *pl = p->plan;
    pl->raw_alignment = v[0];
    for (int i = 0; i < 4; i++) pl->raw_flags[i] = v[1 + i];
    mp_options_default(&pl->opts);
    pl->opts.alignment = mp_alignment_ok(v[0]) ? (uint32_t)v[0] : 1;
    pl->opts.alloc_inputs = v[1] != 0;
    pl->opts.alloc_outputs = v[2] != 0;
    pl->opts.alloc_mutable = v[3] != 0;
    pl->opts.per_device = v[4] != 0;
    pl->opts.banks = banks;
    pl->algo_name = mp_arena_strndup(p->arena, algo.s, algo.n);
    /* the planner is named by algo_name alone: the table is not core's */
    pl->opts.algo = 0;
    return MP_OK;
}

/* How far past the last name a plan's next name is looked for before the
 * map: plans list their tensors in graph order, skipping those they do not
 * place (a run of constants, a sub-graph's operands). */
#define LOOKAHEAD 16

static bool is_name(const char *name, mp_tok t) {
    return strnlen(name, t.n + 1) == t.n && memcmp(name, t.s, t.n) == 0;
}

/* The tensor a plan line names, or -1.  The next few tensors after the
 * last one found are tried first: for plans in graph order (all that
 * memplan writes) the map of every name is never built, which at 10^7
 * tensors is 0.27 GB and a cache miss a line.  Names are unique within a
 * graph, so a match is the answer the map would give. */
static int32_t lookup(pp *p, mp_tok name) {
    if (p->cur->graph < 0) return -1;
    const mp_graphdef *gd = &p->prog->graphs[p->cur->graph];
    for (int32_t i = p->last + 1; i <= p->last + LOOKAHEAD && i < (int32_t)gd->n_tensors; i++)
        if (is_name(gd->tensors[i].name, name)) return p->last = i;
    if (!p->names_built) {
        int32_t prev; /* names are unique in a parsed graph: none is there twice */
        (void)mp_lookup_add_names(&p->names, gd->tensors, 0, gd->n_tensors, &prev);
        p->names_built = true;
    }
    int32_t t = mp_strmap_get(&p->names, name.s, name.n);
    if (t >= 0) p->last = t;
    return t;
}

/* The program's graph called `name`, or -1.  The graph after the last
 * block's is tried first: memplan writes blocks in graph order, and a
 * search of every graph per block (mp_graph_find) was quadratic: three
 * quarters of `verify` at deep-10^5 (33,000 graphs), minutes at 10^6.
 * Graph names are unique in a parsed program. */
static int32_t find_graph(pp *p, const char *name) {
    const mp_program *prog = p->prog;
    int32_t next = p->last_graph + 1;
    if (next < (int32_t)prog->n_graphs && strcmp(prog->graphs[next].name, name) == 0) return p->last_graph = next;
    if (!p->graphs_built) {
        mp_strmap_reserve(&p->graphs, prog->n_graphs);
        for (uint32_t i = 0; i < prog->n_graphs; i++) {
            const char *g = prog->graphs[i].name;
            (void)mp_strmap_put(&p->graphs, g, strlen(g), (int32_t)i);
        }
        p->graphs_built = true;
    }
    int32_t gi = mp_strmap_get(&p->graphs, name, strlen(name));
    if (gi >= 0) p->last_graph = gi;
    return gi;
}

/* The block's alloc and free arrays sized once, as its lines count them,
 * as the graph parser does: grown by doubling, the allocs array lost its
 * huge pages where the kernel moved it (at 10^7 allocations 264 of its
 * 493 MB on 4 KiB pages, and the verifier's first pass over it took
 * 380 ms instead of 17). */
static void reserve_block(pp *p) {
    static const char *const words[2] = {"alloc", "free"};
    size_t c[2];
    mp_count_block_lines(p->lines, words, c);
    if (c[0] > 0 && c[0] < UINT32_MAX) p->cur->allocs = mp_xmalloc((p->acap = c[0]) * sizeof *p->cur->allocs);
    if (c[1] > 0 && c[1] < UINT32_MAX) p->cur->frees = mp_xmalloc((p->fcap = c[1]) * sizeof *p->cur->frees);
}

static int open_block(pp *p, mp_tok *tk, int nt) {
    char q[48];
    if (p->cur) return pfail(p, "graph block opened inside another (missing 'end')");
    if (nt != 2 || !plain_name(tk[1]))
        return pfail(p, "graph line needs one graph name, found '%s'",
                     nt > 1 ? mp_quote(tk[1].s, tk[1].n, q) : "");
    mp_plan *pl = p->plan;
    if (pl->n_graphs == p->gcap) {
        p->gcap = p->gcap ? p->gcap * 2 : 8;
        pl->graphs = mp_xrealloc(pl->graphs, p->gcap * sizeof *pl->graphs);
    }
    mp_graph_plan *g = &pl->graphs[pl->n_graphs++];
    memset(g, 0, sizeof *g);
    g->name = mp_arena_strndup(p->arena, tk[1].s, tk[1].n);
    g->line = p->line;
    g->graph = p->prog ? find_graph(p, g->name) : -1;
    p->cur = g;
    p->acap = p->fcap = 0;
    reserve_block(p);
    p->have_buffers = p->have_devices = false;
    mp_strmap_free(&p->names);
    mp_strmap_init(&p->names);
    p->names_built = false;
    p->last = -1;
    return MP_OK;
}

static int list_line(pp *p, mp_tok *tk, int nt, bool devices) {
    char q[48];
    mp_graph_plan *g = p->cur;
    bool *have = devices ? &p->have_devices : &p->have_buffers;
    if (*have) return pfail(p, "second '%s' line in graph block", devices ? "devices" : "buffers");
    *have = true;
    size_t n = (size_t)(nt - 1);
    if (devices) {
        g->devices = mp_arena_alloc(p->arena, n * sizeof *g->devices);
        g->n_devices = (uint32_t)n;
    } else {
        g->buffers = mp_arena_alloc(p->arena, n * sizeof *g->buffers);
        g->n_buffers = (uint32_t)n;
    }
    for (size_t i = 0; i < n; i++) {
        mp_tok t = tk[i + 1];
        bool ok = devices ? device_of(t, &g->devices[i]) : u64_of(t, &g->buffers[i]);
        if (!ok) return pfail(p, "bad %s entry '%s'", devices ? "device" : "buffer size",
                              mp_quote(t.s, t.n, q));
    }
    return MP_OK;
}

/* Long lists (buffers/devices) are read token by token without a cap. */
static int count_tokens(const char *s, const char *e) {
    int n = 0;
    while (s < e) {
        while (s < e && (*s == ' ' || *s == '\t')) s++;
        if (s == e || *s == '#') break;
        while (s < e && *s != ' ' && *s != '\t' && *s != '#') s++;
        if (n == INT32_MAX / 2) break;
        n++;
    }
    return n;
}

static int split(const char *s, const char *e, mp_tok *tk, int max) {
    int n = 0;
    while (s < e && n < max) {
        while (s < e && (*s == ' ' || *s == '\t')) s++;
        if (s == e || *s == '#') break;
        const char *b = s;
        while (s < e && *s != ' ' && *s != '\t' && *s != '#') s++;
        tk[n].s = b;
        tk[n].n = (size_t)(s - b);
        n++;
    }
    return n;
}

static int alloc_line(pp *p, mp_tok *tk, int nt) {
    static const char *const keys[] = {"mem_id", "obj", "offset", "size", "life"};
    char q[48];
    if (nt < 2 || !plain_name(tk[1]))
        return pfail(p, "alloc line needs a tensor name");
    /* life=START,END is split into a number pair first */
    uint64_t v[5] = {0}, life[2] = {0};
    mp_tok rest[MAX_FIELDS];
    int nr = 0;
    bool have_life = false;
    for (int i = 2; i < nt; i++) {
        if (tk[i].n > 5 && memcmp(tk[i].s, "life=", 5) == 0) {
            if (have_life) return pfail(p, "field 'life' given twice");
            have_life = true;
            mp_tok val = {tk[i].s + 5, tk[i].n - 5};
            const char *c = memchr(val.s, ',', val.n);
            mp_tok a = {val.s, c ? (size_t)(c - val.s) : val.n};
            mp_tok b = {c ? c + 1 : val.s + val.n, c ? val.n - a.n - 1 : 0};
            if (!c || !u64_of(a, &life[0]) || !u64_of(b, &life[1]) ||
                life[0] > INT32_MAX || life[1] > INT32_MAX)
                return pfail(p, "bad life '%s' (want START,END)",
                             mp_quote(val.s, val.n, q));
            continue;
        }
        rest[nr++] = tk[i];
    }
    if (!have_life) return pfail(p, "missing field 'life'");
    if (fields(p, rest, nr, keys, 4, v, NULL, NULL)) return p->err->code;
    mp_graph_plan *g = p->cur;
    if (g->n_allocs == p->acap) {
        p->acap = p->acap ? p->acap * 2 : 16;
        g->allocs = mp_xrealloc(g->allocs, p->acap * sizeof *g->allocs);
    }
    mp_alloc *a = &g->allocs[g->n_allocs++];
    a->name = mp_arena_strndup(p->arena, tk[1].s, tk[1].n);
    a->tensor = lookup(p, tk[1]);
    a->line = p->line;
    a->mem_id = v[0];
    a->obj = v[1];
    a->offset = v[2];
    a->size = v[3];
    a->life_start = (int64_t)life[0];
    a->life_end = (int64_t)life[1];
    return MP_OK;
}

static int free_line(pp *p, mp_tok *tk, int nt) {
    static const char *const keys[] = {"after"};
    uint64_t v[1];
    if (nt < 2 || !plain_name(tk[1])) return pfail(p, "free line needs a tensor name");
    if (fields(p, tk + 2, nt - 2, keys, 1, v, NULL, NULL)) return p->err->code;
    if (v[0] > INT32_MAX) return pfail(p, "node index after=%llu is too large",
                                       (unsigned long long)v[0]);
    mp_graph_plan *g = p->cur;
    if (g->n_frees == p->fcap) {
        p->fcap = p->fcap ? p->fcap * 2 : 8;
        g->frees = mp_xrealloc(g->frees, p->fcap * sizeof *g->frees);
    }
    mp_free *f = &g->frees[g->n_frees++];
    f->name = mp_arena_strndup(p->arena, tk[1].s, tk[1].n);
    f->tensor = lookup(p, tk[1]);
    f->line = p->line;
    f->after = (int64_t)v[0];
    return MP_OK;
}

/* Move the block's growable arrays into the arena so mp_plan_free frees all. */
static int close_block(pp *p) {
    mp_graph_plan *g = p->cur;
    if (!p->have_buffers || !p->have_devices)
        return pfail(p, "graph block '%s' lacks a %s line", g->name,
                     p->have_buffers ? "devices" : "buffers");
    /* handed over, not copied: at 10^7 allocations a copy was 0.5 GB of
     * fresh pages to clear and fill */
    g->allocs = mp_arena_adopt(p->arena, g->allocs, g->n_allocs * sizeof *g->allocs);
    g->frees = mp_arena_adopt(p->arena, g->frees, g->n_frees * sizeof *g->frees);
    p->cur = NULL;
    return MP_OK;
}

static int plan_line(pp *p, const char *s, const char *e, int *state) {
    char q[48];
    mp_tok tk[MAX_FIELDS];
    int nt = split(s, e, tk, MAX_FIELDS);
    if (nt == 0) return MP_OK;
    if (*state == 0) {
        if (nt == 2 && mp_tok_is(tk[0], "memplan-plan") && mp_tok_is(tk[1], "1")) {
            *state = 1;
            return MP_OK;
        }
        return pfail(p, "expected 'memplan-plan 1' header");
    }
    if (*state == 1) {
        if (!mp_tok_is(tk[0], "options")) return pfail(p, "expected the options line");
        *state = 2;
        return options_line(p, tk, nt);
    }
    if (mp_tok_is(tk[0], "graph")) return open_block(p, tk, nt);
    if (!p->cur) return pfail(p, "'%s' outside a graph block", mp_quote(tk[0].s, tk[0].n, q));
    if (mp_tok_is(tk[0], "buffers") || mp_tok_is(tk[0], "devices")) {
        int n = count_tokens(s, e);
        mp_tok *all = mp_xmalloc((size_t)(n + 1) * sizeof *all);
        split(s, e, all, n);
        int rc = list_line(p, all, n, mp_tok_is(tk[0], "devices"));
        mp_xfree(all);
        return rc;
    }
    if (nt == MAX_FIELDS) return pfail(p, "too many fields on one line");
    if (mp_tok_is(tk[0], "alloc")) return alloc_line(p, tk, nt);
    if (mp_tok_is(tk[0], "free")) return free_line(p, tk, nt);
    if (mp_tok_is(tk[0], "end")) {
        if (nt != 1) return pfail(p, "'end' takes nothing after it");
        return close_block(p);
    }
    return pfail(p, "unknown keyword '%s'", mp_quote(tk[0].s, tk[0].n, q));
}

static mp_plan *plan_parse(mp_lines *L, const char *filename, const mp_program *prog, mp_err *err) {
    pp p = {0};
    p.file = filename ? filename : "<plan>";
    p.err = err;
    p.prog = prog;
    p.lines = L;
    p.arena = mp_arena_new();
    mp_strmap_init(&p.names);
    mp_strmap_init(&p.graphs);
    p.last_graph = -1;
    mp_err_clear(err);
    p.plan = mp_arena_alloc(p.arena, sizeof *p.plan);
    p.plan->arena = p.arena;
    int rc = MP_OK, state = 0;
    const char *s, *e;
    while (rc == MP_OK && mp_lines_next(L, &s, &e)) {
        p.line++;
        if (memchr(s, 0, (size_t)(e - s))) rc = pfail(&p, "NUL byte in the file");
        else rc = plan_line(&p, s, e, &state);
    }
    if (rc == MP_OK) rc = mp_lines_error(L, err); /* not read to its end */
    if (rc == MP_OK && p.cur) rc = pfail(&p, "graph block '%s' is not closed", p.cur->name);
    if (rc == MP_OK && state < 2)
        rc = pfail(&p, state ? "missing options line" : "empty file: expected 'memplan-plan 1'");
    mp_strmap_free(&p.names);
    mp_strmap_free(&p.graphs);
    mp_plan *plan = p.plan;
    if (rc == MP_OK) {
        mp_graph_plan *g = mp_arena_memdup(p.arena, plan->graphs,
                                           plan->n_graphs * sizeof *g);
        mp_xfree(plan->graphs);
        plan->graphs = g;
        return plan;
    }
    if (p.cur) {
        mp_xfree(p.cur->allocs);
        mp_xfree(p.cur->frees);
    }
    mp_xfree(plan->graphs);
    mp_arena_free(p.arena);
    return NULL;
}

/* The public entry points run under the allocation guard (alloc.c). */
typedef struct parse_call {
    const char *data, *path;
    size_t len;
    const mp_program *prog;
    mp_err *err;
    mp_plan *plan;
} parse_call;

static int parse_work(void *ctx) {
    parse_call *c = ctx;
    mp_lines L;
    mp_lines_text(&L, c->data, c->len);
    c->plan = plan_parse(&L, c->path, c->prog, c->err);
    return c->plan ? MP_OK : c->err->code;
}

static int load_work(void *ctx) {
    parse_call *c = ctx;
    mp_lines L;
    if (mp_lines_open(&L, c->path, c->err)) return c->err->code;
    c->plan = plan_parse(&L, c->path, c->prog, c->err);
    mp_lines_close(&L); /* a read error was the parse's to report */
    return c->plan ? MP_OK : c->err->code;
}

mp_plan *mp_plan_parse(const char *data, size_t len, const char *filename, const mp_program *prog,
                       mp_err *err) {
    parse_call c = {data, filename, len, prog, err, NULL};
    mp_err_clear(err);
    return mp_guard_run(err, parse_work, &c) == MP_OK ? c.plan : NULL;
}

mp_plan *mp_plan_load(const char *path, const mp_program *prog, mp_err *err) {
    parse_call c = {NULL, path, 0, prog, err, NULL};
    mp_err_clear(err);
    return mp_guard_run(err, load_work, &c) == MP_OK ? c.plan : NULL;
}
