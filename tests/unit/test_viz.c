/* test_viz.c - the visualisation module: the trace JSON checked against
 * the Trace Event Format by a validator written here (a strict JSON parser
 * plus the format's per-phase rules), the SVG checked for well-formed XML,
 * size and content, the HTML report for self-containment, and the helpers
 * (cover, lanes, escaping) for their invariants.  The validators are shown
 * to reject broken input, so their passing means something. */
#include "helpers.h"

#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "viz.h"

#define HDR "memplan-graph 1\n"

static const char CHAIN[] = FIXTURE_CHAIN;
static const char COND[] = FIXTURE_COND;

/* ------------------------------------------------------- a JSON parser */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jv {
    jtype t;
    double num;
    char *str;        /* J_STR: the raw contents (escapes kept) */
    struct jv *items; /* J_ARR elements, J_OBJ values */
    char **keys;      /* J_OBJ */
    size_t n, cap;
} jv;

typedef struct jp {
    const char *s, *err;
} jp;

static void jfree(jv *v) {
    for (size_t i = 0; i < v->n; i++) {
        jfree(&v->items[i]);
        if (v->keys) mp_xfree(v->keys[i]);
    }
    mp_xfree(v->items);
    mp_xfree(v->keys);
    mp_xfree(v->str);
}

static void ws(jp *p) {
    while (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r') p->s++;
}

static bool jvalue(jp *p, jv *v, int depth);

static bool jstring(jp *p, char **out) {
    if (*p->s != '"') return p->err = "expected a string", false;
    const char *b = ++p->s;
    while (*p->s != '"') {
        unsigned char c = (unsigned char)*p->s;
        if (c == 0) return p->err = "unterminated string", false;
        if (c < 0x20) return p->err = "control character in a string", false;
        if (c == '\\') {
            p->s++;
            if (*p->s == 'u') {
                for (int k = 1; k <= 4; k++)
                    if (!strchr("0123456789abcdefABCDEF", p->s[k]) || !p->s[k])
                        return p->err = "bad \\u escape", false;
                p->s += 4;
            } else if (!*p->s || !strchr("\"\\/bfnrt", *p->s)) {
                return p->err = "bad escape", false;
            }
        }
        p->s++;
    }
    size_t n = (size_t)(p->s - b);
    *out = mp_xmalloc(n + 1);
    memcpy(*out, b, n);
    (*out)[n] = 0;
    p->s++;
    return true;
}

static bool jnumber(jp *p, jv *v) {
    const char *b = p->s;
    if (*p->s == '-') p->s++;
    if (*p->s == '0') p->s++;
    else if (*p->s >= '1' && *p->s <= '9') while (*p->s >= '0' && *p->s <= '9') p->s++;
    else return p->err = "bad number", false;
    if (*p->s == '.') {
        p->s++;
        if (!(*p->s >= '0' && *p->s <= '9')) return p->err = "bad fraction", false;
        while (*p->s >= '0' && *p->s <= '9') p->s++;
    }
    if (*p->s == 'e' || *p->s == 'E') {
        p->s++;
        if (*p->s == '+' || *p->s == '-') p->s++;
        if (!(*p->s >= '0' && *p->s <= '9')) return p->err = "bad exponent", false;
        while (*p->s >= '0' && *p->s <= '9') p->s++;
    }
    v->t = J_NUM;
    v->num = strtod(b, NULL);
    return true;
}

static void jpush(jv *v, jv item, char *key) {
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->items = mp_xrealloc(v->items, v->cap * sizeof *v->items);
        if (v->t == J_OBJ) v->keys = mp_xrealloc(v->keys, v->cap * sizeof *v->keys);
    }
    if (v->t == J_OBJ) v->keys[v->n] = key;
    v->items[v->n++] = item;
}

static bool jcontainer(jp *p, jv *v, int depth, bool obj) {
    v->t = obj ? J_OBJ : J_ARR;
    p->s++;
    ws(p);
    if (*p->s == (obj ? '}' : ']')) {
        p->s++;
        return true;
    }
    for (;;) {
        char *key = NULL;
        ws(p);
        if (obj) {
            if (!jstring(p, &key)) return false;
            ws(p);
            if (*p->s++ != ':') {
                mp_xfree(key);
                return p->err = "expected ':'", false;
            }
        }
        jv item;
        memset(&item, 0, sizeof item);
        bool ok = jvalue(p, &item, depth + 1);
        jpush(v, item, key);
        if (!ok) return false;
        ws(p);
        if (*p->s == ',') {
            p->s++;
            continue;
        }
        if (*p->s == (obj ? '}' : ']')) {
            p->s++;
            return true;
        }
        return p->err = obj ? "expected ',' or '}'" : "expected ',' or ']'", false;
    }
}

static bool jvalue(jp *p, jv *v, int depth) {
    if (depth > 64) return p->err = "nested too deeply", false;
    ws(p);
    char c = *p->s;
    if (c == '{' || c == '[') return jcontainer(p, v, depth, c == '{');
    if (c == '"') {
        v->t = J_STR;
        return jstring(p, &v->str);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return jnumber(p, v);
    static const char *const lit[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++)
        if (strncmp(p->s, lit[k], strlen(lit[k])) == 0) {
            p->s += strlen(lit[k]);
            v->t = k == 2 ? J_NULL : J_BOOL;
            return true;
        }
    return p->err = "unexpected character", false;
}

/* The whole text is one JSON value; NULL on success, else the error. */
static const char *jparse(const char *text, jv *v) {
    jp p = {text, NULL};
    memset(v, 0, sizeof *v);
    if (!jvalue(&p, v, 0)) return p.err;
    ws(&p);
    return *p.s ? "trailing characters" : NULL;
}

static const jv *jget(const jv *o, const char *key) {
    if (o->t != J_OBJ) return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0) return &o->items[i];
    return NULL;
}

/* ------------------------------------------- the Trace Event Format check */

typedef struct xev {
    double pid, tid, ts, dur;
} xev;

static int cmp_xev(const void *a, const void *b) {
    const xev *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

typedef struct tstats {
    size_t tensors, reservations, counters, meta, processes;
} tstats;

static char terr[512];

static const char *bad(size_t i, const char *what) {
    snprintf(terr, sizeof terr, "event %zu: %s", i, what);
    return terr;
}

static bool is_num(const jv *v) { return v && v->t == J_NUM && isfinite(v->num); }
static bool is_str(const jv *v) { return v && v->t == J_STR; }

/* The JSON Object Format of the Trace Event Format, for the phases memplan
 * writes: X (complete: dur), M (metadata: the four names), C (counter:
 * numeric args).  Every event: name (string), ph, ts, pid, tid (numbers),
 * args (object).  Slices of one thread must not overlap (viewers need
 * them nested; memplan never nests them). */
/* An X event's cat and args: a tensor slice or a sub-graph reservation. */
static const char *check_slice(size_t i, const jv *ev, const jv *args, tstats *st) {
    const jv *dur = jget(ev, "dur"), *cat = jget(ev, "cat");
    if (!is_num(dur) || dur->num <= 0) return bad(i, "X without a positive dur");
    if (!is_str(cat)) return bad(i, "X without a cat");
    if (!strcmp(cat->str, "tensor")) {
        static const char *const nums[] = {"size", "offset", "end", "mem_id", "obj", "life_start", "life_end"};
        st->tensors++;
        for (int k = 0; k < 7; k++)
            if (!is_num(jget(args, nums[k]))) return bad(i, "tensor slice lacks a number arg");
        if (!is_str(jget(args, "device")) || !is_str(jget(args, "graph")))
            return bad(i, "tensor slice lacks device/graph");
        if (jget(args, "end")->num < jget(args, "offset")->num) return bad(i, "end before offset");
        return NULL;
    }
    if (!strcmp(cat->str, "sub-graph")) {
        static const char *const nums[] = {"node", "offset", "end", "bytes", "mem_id"};
        st->reservations++;
        for (int k = 0; k < 5; k++)
            if (!is_num(jget(args, nums[k]))) return bad(i, "reservation lacks a number arg");
        if (!is_str(jget(args, "graph"))) return bad(i, "reservation lacks graph");
        return NULL;
    }
    return bad(i, "unknown cat");
}

/* An M event: one of the four names, with its argument. */
static const char *check_meta(size_t i, const jv *name, const jv *args, tstats *st) {
    const char *n = name->str;
    bool names = !strcmp(n, "process_name") || !strcmp(n, "thread_name");
    bool sorts = !strcmp(n, "process_sort_index") || !strcmp(n, "thread_sort_index");
    st->meta++;
    st->processes += !strcmp(n, "process_name");
    if (!names && !sorts) return bad(i, "unknown metadata event");
    if (names && !is_str(jget(args, "name"))) return bad(i, "metadata without args.name");
    if (sorts && !is_num(jget(args, "sort_index"))) return bad(i, "no args.sort_index");
    return NULL;
}

/* One event: the common fields, then its phase's; an X slice goes to x. */
static const char *check_event(size_t i, const jv *ev, tstats *st, xev *x, size_t *nx) {
    const jv *name = jget(ev, "name"), *ph = jget(ev, "ph"), *ts = jget(ev, "ts");
    const jv *pid = jget(ev, "pid"), *tid = jget(ev, "tid"), *args = jget(ev, "args");
    if (ev->t != J_OBJ) return bad(i, "not an object");
    if (!is_str(name)) return bad(i, "name is not a string");
    if (!is_str(ph) || strlen(ph->str) != 1 || !strchr("XMC", ph->str[0])) return bad(i, "ph is not one of X, M, C");
    if (!is_num(ts) || ts->num < 0) return bad(i, "ts is not a number >= 0");
    if (!is_num(pid) || !is_num(tid)) return bad(i, "pid/tid are not numbers");
    if (!args || args->t != J_OBJ) return bad(i, "args is not an object");
    if (ph->str[0] == 'X') {
        const jv *dur = jget(ev, "dur");
        x[(*nx)++] = (xev){pid->num, tid->num, ts->num, is_num(dur) ? dur->num : 0};
        return check_slice(i, ev, args, st);
    }
    if (ph->str[0] == 'M') return check_meta(i, name, args, st);
    st->counters++;
    if (args->n == 0) return bad(i, "counter without values");
    for (size_t k = 0; k < args->n; k++)
        if (!is_num(&args->items[k])) return bad(i, "counter value is not a number");
    return NULL;
}

/* Slices of one thread never overlap. */
static const char *check_nesting(xev *x, size_t nx) {
    qsort(x, nx, sizeof *x, cmp_xev);
    for (size_t i = 1; i < nx; i++)
        if (x[i].pid == x[i - 1].pid && x[i].tid == x[i - 1].tid && x[i].ts < x[i - 1].ts + x[i - 1].dur) {
            snprintf(terr, sizeof terr, "slices overlap on pid %g tid %g at ts %g", x[i].pid, x[i].tid,
                     x[i].ts);
            return terr;
        }
    return NULL;
}

static const char *check_trace(const char *text, tstats *st) {
    jv root;
    memset(st, 0, sizeof *st);
    const char *e = jparse(text, &root);
    if (e) {
        jfree(&root);
        snprintf(terr, sizeof terr, "not JSON: %s", e);
        return terr;
    }
    const jv *evs = jget(&root, "traceEvents"), *unit = jget(&root, "displayTimeUnit");
    const char *res = NULL;
    if (root.t != J_OBJ) res = "top level is not an object";
    else if (!evs || evs->t != J_ARR) res = "no traceEvents array";
    else if (unit && !(is_str(unit) && (!strcmp(unit->str, "ms") || !strcmp(unit->str, "ns"))))
        res = "displayTimeUnit is not \"ms\" or \"ns\"";
    xev *x = evs && evs->t == J_ARR ? mp_xmalloc((evs->n + 1) * sizeof *x) : NULL;
    size_t nx = 0;
    for (size_t i = 0; !res && i < evs->n; i++) res = check_event(i, &evs->items[i], st, x, &nx);
    if (!res && x) res = check_nesting(x, nx);
    mp_xfree(x);
    jfree(&root);
    return res;
}

/* ------------------------------------------------ an XML well-formedness check */

static const char *check_entity(const char **s) {
    static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
    for (int k = 0; k < 5; k++)
        if (strncmp(*s, ents[k], strlen(ents[k])) == 0) {
            *s += strlen(ents[k]);
            return NULL;
        }
    return "bad entity";
}

/* A start tag's attributes, from after its name to its '>' or '/>':
 * quoted, no '<', entities only.  NULL when well formed. */
static const char *check_attributes(const char **ps) {
    const char *s = *ps;
    for (;;) {
        while (*s == ' ' || *s == '\n' || *s == '\t') s++;
        if (*s == '>' || (s[0] == '/' && s[1] == '>')) break;
        size_t al = strcspn(s, "= \t\n>");
        if (!al || s[al] != '=' || s[al + 1] != '"') return "unquoted or bad attribute";
        s += al + 2;
        while (*s && *s != '"') {
            if (*s == '<') return "'<' in an attribute";
            if (*s == '&') {
                if (check_entity(&s)) return "bad entity in an attribute";
            } else {
                s++;
            }
        }
        if (!*s) return "unterminated attribute";
        s++;
    }
    *ps = s;
    return NULL;
}

/* The open elements while the document is read. */
typedef struct xstack {
    const char *name[256];
    size_t len[256], depth, roots;
} xstack;

/* One tag at s ('<'), moved past. */
static const char *check_tag(const char **ps, xstack *x) {
    const char *s = *ps;
    bool close = s[1] == '/';
    const char *n = s + 1 + close;
    size_t nl = strcspn(n, " \t\n/>");
    if (!nl) return "empty tag name";
    s = n + nl;
    if (close) {
        if (!x->depth || x->len[x->depth - 1] != nl || strncmp(x->name[x->depth - 1], n, nl))
            return "mismatched closing tag";
        x->depth--;
        if (*s++ != '>') return "bad closing tag";
        *ps = s;
        return NULL;
    }
    const char *e = check_attributes(&s);
    if (e) return e;
    if (!x->depth) x->roots++;
    if (*s == '/') {
        s += 2;
    } else {
        if (x->depth == 256) return "too deep";
        x->name[x->depth] = n;
        x->len[x->depth++] = nl;
        s++;
    }
    *ps = s;
    return NULL;
}

/* Tags balance, attributes are quoted, text has no raw '<' or bare '&',
 * one root element.  NULL when well formed. */
static const char *check_xml(const char *s) {
    xstack x;
    x.depth = x.roots = 0;
    if (strncmp(s, "<?xml", 5) == 0) {
        s = strstr(s, "?>");
        if (!s) return "unterminated prolog";
        s += 2;
    }
    while (*s) {
        const char *e = NULL;
        if (*s == '&') {
            if (check_entity(&s)) return "bad entity in text";
        } else if (*s != '<') {
            if (!x.depth && !strchr(" \n\t\r", *s)) return "text outside the root";
            s++;
        } else if (strncmp(s, "<!--", 4) == 0) {
            s = strstr(s, "-->");
            if (!s) return "unterminated comment";
            s += 3;
        } else if ((e = check_tag(&s, &x))) {
            return e;
        }
    }
    if (x.depth) return "unclosed element";
    return x.roots == 1 ? NULL : "not exactly one root element";
}

/* ------------------------------------------------------------- helpers */

typedef struct pp {
    mp_program *prog;
    mp_plan *plan;
} pp;

static pp planned(const char *graph, uint32_t algo) {
    pp r;
    r.prog = must_parse(graph);
    mp_options o;
    mp_options_default(&o);
    o.algo = algo;
    mp_err err;
    r.plan = mp_plan_program(r.prog, &o, &err);
    cr_assert(r.plan != NULL, "%s", err.msg);
    return r;
}

static pp from_text(const char *graph, const char *plan_text) {
    pp r;
    r.prog = must_parse(graph);
    mp_err err;
    r.plan = mp_plan_parse(plan_text, strlen(plan_text), "p.mpp", r.prog, &err);
    cr_assert(r.plan != NULL, "%s", err.msg);
    return r;
}

static pp generated(uint64_t seed, uint64_t tensors, bool cuda) {
    mp_gen_options g;
    mp_gen_options_default(&g);
    g.seed = seed;
    g.tensors = tensors;
    if (cuda) {
        g.n_devices = 2;
        g.devices[1] = (mp_device){MP_DEV_CUDA, 0};
    }
    pp r = {generated_program(&g), NULL};
    mp_options o;
    mp_options_default(&o);
    o.algo = MP_ALGO_OPT;
    mp_err err;
    r.plan = mp_plan_program(r.prog, &o, &err);
    cr_assert(r.plan != NULL, "%s", err.msg);
    return r;
}

static void pp_free(pp *r) {
    mp_plan_free(r->plan);
    mp_program_free(r->prog);
}

static size_t n_allocs(const mp_plan *p) {
    size_t n = 0;
    for (uint32_t i = 0; i < p->n_graphs; i++) n += p->graphs[i].n_allocs;
    return n;
}

static char *trace_of(const pp *r) {
    mp_buf b;
    mp_buf_init(&b);
    mp_err err;
    cr_assert_eq(mp_viz_trace(r->prog, r->plan, &b, &err), MP_OK, "%s", err.msg);
    return b.data;
}

static char *svg_of(const pp *r, uint32_t color) {
    mp_viz_svg_options o;
    mp_viz_svg_options_default(&o);
    o.color = color;
    mp_buf b;
    mp_buf_init(&b);
    mp_err err;
    cr_assert_eq(mp_viz_svg(r->prog, r->plan, &o, &b, &err), MP_OK, "%s", err.msg);
    return b.data;
}

static size_t count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle)) n++;
    return n;
}

/* ------------------------------------------------------------ the trace */

static void trace_ok(const pp *r) {
    char *t = trace_of(r);
    tstats st;
    const char *e = check_trace(t, &st);
    cr_assert(e == NULL, "trace invalid: %s", e);
    cr_assert_eq(st.tensors, n_allocs(r->plan), "one slice per allocation");
    cr_assert_eq(st.processes, r->plan->n_graphs, "one process per graph block");
    cr_assert_gt(st.counters, 0);
    char *again = trace_of(r);
    cr_assert_str_eq(t, again, "the trace is deterministic");
    mp_xfree(again);
    mp_xfree(t);
}

Test(viz_trace, chain_is_valid_trace_event_format) {
    pp r = planned(CHAIN, MP_ALGO_GREEDY);
    trace_ok(&r);
    char *t = trace_of(&r);
    ASSERT_CONTAINS(t, "\"displayTimeUnit\":\"ms\"");
    /* a = 200 bytes planned from node 2 to 3: ts 2000, dur 2000 */
    ASSERT_CONTAINS(t, "{\"name\":\"a\",\"ph\":\"X\",\"ts\":2000,");
    ASSERT_CONTAINS(t, "\"dur\":2000,\"cat\":\"tensor\",\"args\":{\"size\":208,");
    mp_xfree(t);
    pp_free(&r);
}

Test(viz_trace, subgraph_reservations_show_where_their_memory_sits) {
    pp r = planned(COND, MP_ALGO_OPT);
    trace_ok(&r);
    char *t = trace_of(&r);
    tstats st;
    cr_assert_null(check_trace(t, &st));
    cr_assert_geq(st.reservations, 2, "true and false branches: %zu", st.reservations);
    ASSERT_CONTAINS(t, "\"name\":\"t (true of cond node 2)\",\"ph\":\"X\",\"ts\":2000,");
    ASSERT_CONTAINS(t, "\"name\":\"f (false of cond node 2)\",\"ph\":\"X\",\"ts\":2000,");
    ASSERT_CONTAINS(t, "\"name\":\"live bytes buffer 1\",\"ph\":\"C\"");
    mp_xfree(t);
    pp_free(&r);
}

Test(viz_trace, generated_graphs_are_valid) {
    for (uint64_t seed = 1; seed <= 6; seed++) {
        pp r = generated(seed, 40 + 30 * seed, seed % 2);
        trace_ok(&r);
        pp_free(&r);
    }
    pp big = generated(11, 3000, true);
    trace_ok(&big);
    pp_free(&big);
}

Test(viz_trace, the_validator_rejects_broken_traces) {
    tstats st;
    static const char *const broken[] = {
        "",
        "[]",
        "{\"traceEvents\":{}}",
        "{\"traceEvents\":[{\"name\":\"a\",\"ph\":\"X\",\"ts\":0,\"pid\":1,\"tid\":1,\"args\":{}}]}",
        "{\"traceEvents\":[{\"name\":\"a\",\"ph\":\"X\",\"ts\":\"0\",\"dur\":1,\"cat\":\"tensor\","
        "\"pid\":1,\"tid\":1,\"args\":{}}]}",
        "{\"traceEvents\":[{\"name\":\"a\",\"ts\":0,\"pid\":1,\"tid\":1,\"args\":{}}]}",
        "{\"traceEvents\":[{\"name\":\"a\",\"ph\":\"C\",\"ts\":0,\"pid\":1,\"tid\":1,\"args\":{\"v\":\"x\"}}]}",
        "{\"traceEvents\":[{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":1,\"tid\":0,"
        "\"args\":{}}]}",
        "{\"traceEvents\":[{\"name\":\"a\",\"ph\":\"C\",\"ts\":0,\"pid\":1,\"tid\":0,"
        "\"args\":{\"v\":1}},]}",
        "{\"traceEvents\":[{\"name\":\"s\",\"ph\":\"X\",\"ts\":0,\"dur\":10,\"cat\":\"sub-graph\","
        "\"pid\":1,\"tid\":1,\"args\":{\"graph\":\"g\",\"node\":0,\"offset\":0,\"end\":1,\"bytes\":1,"
        "\"mem_id\":1}},{\"name\":\"s\",\"ph\":\"X\",\"ts\":5,\"dur\":10,\"cat\":\"sub-graph\","
        "\"pid\":1,\"tid\":1,\"args\":{\"graph\":\"g\",\"node\":0,\"offset\":0,\"end\":1,\"bytes\":1,"
        "\"mem_id\":1}}]}",
        "{\"displayTimeUnit\":\"s\",\"traceEvents\":[]}",
    };
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++)
        cr_assert_not_null(check_trace(broken[i], &st), "accepted broken trace %zu: %s", i,
                           broken[i]);
    cr_assert_null(check_trace("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[]}", &st));
}

/* -------------------------------------------------------------- the SVG */

Test(viz_svg, well_formed_deterministic_and_labelled) {
    pp r = planned(CHAIN, MP_ALGO_GREEDY);
    char *s = svg_of(&r, MP_VIZ_BY_DEVICE);
    const char *e = check_xml(s);
    cr_assert(e == NULL, "SVG not well formed: %s", e);
    ASSERT_CONTAINS(s, "<svg xmlns=\"http://www.w3.org/2000/svg\"");
    ASSERT_CONTAINS(s, "<title>a (main) 208 B, bytes ");
    ASSERT_CONTAINS(s, "class=\"lv\"");   /* live bytes */
    ASSERT_CONTAINS(s, "class=\"lb\"");   /* lower bound */
    ASSERT_CONTAINS(s, ">cpu:0</text>"); /* legend */
    ASSERT_CONTAINS(s, ", valid</text>");
    cr_assert_eq(count(s, "class=\"v\""), 0, "a valid plan has no red outline");
    char *again = svg_of(&r, MP_VIZ_BY_DEVICE);
    cr_assert_str_eq(s, again);
    mp_xfree(again);
    mp_xfree(s);
    pp_free(&r);
}

Test(viz_svg, subgraphs_drawn_in_their_column_and_coloured_by_graph) {
    pp r = planned(COND, MP_ALGO_OPT);
    char *s = svg_of(&r, MP_VIZ_BY_GRAPH);
    cr_assert_null(check_xml(s));
    ASSERT_CONTAINS(s, "sub-graph t: true of cond node 2");
    ASSERT_CONTAINS(s, "sub-graph f: false of cond node 2");
    ASSERT_CONTAINS(s, "<title>m (f) ");
    ASSERT_CONTAINS(s, ">main</text>"); /* the legend names graphs */
    ASSERT_CONTAINS(s, ">f</text>");
    mp_xfree(s);
    pp_free(&r);
}

Test(viz_svg, violations_are_outlined_in_red) {
    /* b moved onto a while both are live: an overlap; c given a bad size */
    static const char PLAN[] =
        "memplan-plan 1\n"
        "options alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=greedy\n"
        "graph main\nbuffers 0 1024\ndevices cpu:0 cpu:0\n"
        "alloc x mem_id=1 obj=0 offset=0 size=112 life=0,4\n"
        "alloc a mem_id=1 obj=1 offset=112 size=208 life=2,3\n"
        "alloc b mem_id=1 obj=2 offset=200 size=208 life=3,4\n"
        "alloc c mem_id=1 obj=3 offset=512 size=8 life=4,5\n"
        "alloc y mem_id=1 obj=4 offset=640 size=112 life=5,6\n"
        "end\n";
    pp r = from_text(CHAIN, PLAN);
    char *s = svg_of(&r, MP_VIZ_BY_DEVICE);
    cr_assert_null(check_xml(s));
    ASSERT_CONTAINS(s, "INVALID: ");
    cr_assert_geq(count(s, "class=\"v\""), 2, "outlines: %zu", count(s, "class=\"v\""));
    ASSERT_CONTAINS(s, "class=\"v\"><title>main: overlap: a [112,320) and b [200,408)");
    mp_xfree(s);
    pp_free(&r);
}

Test(viz_svg, violations_without_a_place_are_listed) {
    static const char PLAN[] =
        "memplan-plan 1\n"
        "options alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=greedy\n"
        "graph main\nbuffers 0 1024\ndevices cpu:0 cpu:0\n"
        "alloc x mem_id=1 obj=0 offset=0 size=112 life=0,4\n"
        "end\n"
        "graph ghost\nbuffers 0\ndevices cpu:0\nend\n";
    pp r = from_text(CHAIN, PLAN);
    char *s = svg_of(&r, MP_VIZ_BY_DEVICE);
    cr_assert_null(check_xml(s));
    ASSERT_CONTAINS(s, "violations with no place in a panel:");
    mp_xfree(s);
    pp_free(&r);
}

Test(viz_svg, ten_thousand_tensors_stay_small) {
    pp r = generated(1, 10000, false);
    char *s = svg_of(&r, MP_VIZ_BY_DEVICE);
    size_t n = strlen(s);
    cr_assert_null(check_xml(s));
    cr_assert_lt(n, 2u << 20, "the SVG of 10^4 tensors is %zu bytes", n);
    cr_assert_lt(count(s, "<rect"), 40000u);
    ASSERT_CONTAINS(s, "smaller than a pixel, merged into 3-pixel tiles");
    mp_xfree(s);
    pp_free(&r);
}

Test(viz_svg, names_and_titles_are_escaped) {
    pp r = planned(CHAIN, MP_ALGO_GREEDY);
    mp_viz_svg_options o;
    mp_viz_svg_options_default(&o);
    o.title = "<b>&\"x\" \xff\xfe";
    mp_buf b;
    mp_buf_init(&b);
    mp_err err;
    cr_assert_eq(mp_viz_svg(r.prog, r.plan, &o, &b, &err), MP_OK);
    cr_assert_null(check_xml(b.data));
    ASSERT_CONTAINS(b.data, "&lt;b&gt;&amp;&quot;x&quot; ??");
    mp_buf_free(&b);
    o.width = 10;
    mp_buf_init(&b);
    cr_assert_eq(mp_viz_svg(r.prog, r.plan, &o, &b, &err), MP_EFORMAT);
    ASSERT_CONTAINS(err.msg, "out of range");
    mp_buf_free(&b);
    pp_free(&r);
}

Test(viz_svg, the_xml_check_rejects_broken_documents) {
    static const char *const broken[] = {"<svg><rect></svg>", "<svg a=b/>", "<svg>&x;</svg>",
                                         "<svg/><svg/>", "<svg>a<b</svg>", "<svg a=\"<\"/>"};
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++)
        cr_assert_not_null(check_xml(broken[i]), "accepted %s", broken[i]);
    cr_assert_null(check_xml("<?xml version=\"1.0\"?>\n<svg a=\"&amp;\"><g/>t&lt;</svg>\n"));
}

/* ------------------------------------------------------------- helpers */

Test(mp_viz_cover, union_of_boxes_counts_shared_bytes_once) {
    viz_box b[] = {{0, 2, 0, 100}, {1, 3, 50, 150}, {1, 2, 0, 10}, {5, 6, 0, 0}};
    viz_steps st;
    mp_viz_cover(b, 4, &st);
    /* x in [0,1): 100; [1,2): [0,150) = 150; [2,3): [50,150) = 100; then 0 */
    cr_assert_eq(st.n, 4);
    double xs[] = {0, 1, 2, 3};
    uint64_t vs[] = {100, 150, 100, 0};
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(st.x[i], xs[i]);
        cr_assert_eq(st.v[i], vs[i], "step %zu: %llu", i, (unsigned long long)st.v[i]);
    }
    mp_viz_steps_free(&st);
}

Test(mp_viz_lanes, lanes_never_overlap_and_are_as_few_as_the_overlap) {
    int64_t s[200], e[200];
    uint32_t lane[200];
    uint64_t r = 12345;
    for (int i = 0; i < 200; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        s[i] = (int64_t)(r >> 40) % 100;
        e[i] = s[i] + (int64_t)(r >> 20) % 15;
    }
    uint32_t n = mp_viz_lanes(s, e, 200, lane);
    uint32_t most = 0;
    for (int t = 0; t < 120; t++) {
        uint32_t live = 0;
        for (int i = 0; i < 200; i++) live += s[i] <= t && t <= e[i];
        if (live > most) most = live;
    }
    cr_assert_eq(n, most, "%u lanes for an overlap of %u", n, most);
    for (int i = 0; i < 200; i++)
        for (int j = i + 1; j < 200; j++)
            if (lane[i] == lane[j]) cr_assert(e[i] < s[j] || e[j] < s[i], "lane %u overlaps", lane[i]);
}

Test(viz_text, escaping_keeps_documents_well_formed) {
    mp_buf b;
    mp_buf_init(&b);
    mp_viz_xml(&b, "a<b>&'\"\x01\xc3\xa9\xed\xa0\x80\xf0\x9f\x98\x80z");
    cr_assert_str_eq(b.data, "a&lt;b&gt;&amp;&#39;&quot;\xc3\xa9???\xf0\x9f\x98\x80z");
    mp_buf_free(&b);
    mp_buf_init(&b);
    mp_buf_put_json_string(&b, "q\"\\\n\xff");
    cr_assert_str_eq(b.data, "\"q\\\"\\\\\\u000a?\"");
    mp_buf_free(&b);
    char t[32];
    cr_assert_str_eq(mp_viz_bytes(1023, t), "1023 B");
    cr_assert_str_eq(mp_viz_bytes(1536, t), "1.50 KiB");
    cr_assert_str_eq(mp_viz_bytes(1048575, t), "1.00 MiB");
    cr_assert_str_eq(mp_viz_bytes(UINT64_MAX, t), "16.0 EiB");
}

/* --------------------------------------------------------- the HTML page */

static char *tmp_dir(void) {
    char *d = strcpy(mp_xmalloc(32), "/tmp/memplan-viz-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

static void rm_tree(const char *dir) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static void self_contained(const char *html) {
    cr_assert_null(strstr(html, "<script"), "no script");
    cr_assert_null(strstr(html, " src="), "no external asset");
    cr_assert_null(strstr(html, "url("), "no CSS fetch");
    cr_assert_null(strstr(html, "@import"));
    cr_assert_null(strstr(html, "<link"));
    size_t http = count(html, "http"), ns = count(html, "xmlns=\"http://www.w3.org/2000/svg\"");
    cr_assert_eq(http, ns, "the only URLs are SVG namespace names");
    /* each inline chart is well-formed XML */
    for (const char *s = html; (s = strstr(s, "<svg ")); s++) {
        const char *e = strstr(s, "</svg>");
        cr_assert_not_null(e);
        size_t n = (size_t)(e - s) + 6;
        char *chart = mp_xmalloc(n + 1);
        memcpy(chart, s, n);
        chart[n] = 0;
        const char *err = check_xml(chart);
        cr_assert(err == NULL, "chart: %s", err);
        mp_xfree(chart);
    }
}

Test(viz_html, report_of_harness_runs_links_the_worst_graphs) {
    char *dir = tmp_dir();
    char db_path[600], svg_dir[600], failures[600];
    snprintf(db_path, sizeof db_path, "%s/m.db", dir);
    snprintf(svg_dir, sizeof svg_dir, "%s/svg", dir);
    snprintf(failures, sizeof failures, "%s/failures", dir);
    for (uint64_t seed = 1; seed <= 2; seed++) {
        mp_harness_options h = {.seed = seed, .count = 6, .algos = {MP_ALGO_GREEDY, MP_ALGO_NAIVE, MP_ALGO_OPT},
                                .n_algos = 3, .db = db_path, .failures_dir = failures, .jobs = 2};
        mp_harness_summary sum;
        mp_err err;
        cr_assert_eq(mp_harness_run(&h, &sum, &err), MP_OK, "%s", err.msg);
    }
    mp_err err;
    mp_db *db = mp_db_open_existing(db_path, &err);
    cr_assert_not_null(db, "%s", err.msg);
    mp_viz_report_options o;
    mp_viz_report_options_default(&o);
    o.worst = 3;
    o.svg_dir = svg_dir;
    o.svg_href = "svg";
    mp_buf b;
    mp_buf_init(&b);
    cr_assert_eq(mp_viz_report_html(db, &o, &b, &err), MP_OK, "%s", err.msg);
    self_contained(b.data);
    ASSERT_CONTAINS(b.data, "<!DOCTYPE html>");
    ASSERT_CONTAINS(b.data, "Plan quality over time");
    ASSERT_CONTAINS(b.data, "Planning time against size");
    cr_assert_eq(count(b.data, "<svg class=\"chart\""), 2);
    cr_assert_eq(count(b.data, "<polyline"), 6, "mean and worst line per algorithm");
    /* every link points at a file that was written and is a valid SVG */
    size_t links = 0;
    for (const char *s = b.data; (s = strstr(s, "<a href=\"svg/")); s++, links++) {
        char name[200], path[900];
        cr_assert_eq(sscanf(s, "<a href=\"svg/%199[^\"]\"", name), 1);
        snprintf(path, sizeof path, "%s/%s", svg_dir, name);
        size_t len;
        char *svg = mp_read_file(path, &len, &err);
        cr_assert_not_null(svg, "%s", err.msg);
        cr_assert_null(check_xml(svg), "%s", path);
        mp_xfree(svg);
    }
    cr_assert_eq(links, 9, "3 worst per algorithm, all regenerated: %zu", links);
    mp_buf again;
    mp_buf_init(&again);
    cr_assert_eq(mp_viz_report_html(db, &o, &again, &err), MP_OK);
    cr_assert_str_eq(b.data, again.data, "the page is deterministic");
    mp_buf_free(&again);
    mp_buf_free(&b);
    /* without svg_dir: no link at all */
    o.svg_dir = NULL;
    mp_buf_init(&b);
    cr_assert_eq(mp_viz_report_html(db, &o, &b, &err), MP_OK);
    cr_assert_null(strstr(b.data, "<a href"));
    mp_buf_free(&b);
    mp_db_close(db);
    rm_tree(dir);
    mp_xfree(dir);
}

Test(viz_html, empty_store_and_non_harness_graphs) {
    char *dir = tmp_dir();
    char db_path[600], svg_dir[600];
    snprintf(db_path, sizeof db_path, "%s/m.db", dir);
    snprintf(svg_dir, sizeof svg_dir, "%s/svg", dir);
    mp_err err;
    mp_db *db = mp_db_open(db_path, &err);
    cr_assert_not_null(db, "%s", err.msg);
    mp_buf b;
    mp_buf_init(&b);
    cr_assert_eq(mp_viz_report_html(db, NULL, &b, &err), MP_OK, "%s", err.msg);
    self_contained(b.data);
    ASSERT_CONTAINS(b.data, "no valid plans recorded yet");
    mp_buf_free(&b);
    mp_result_row row = {"resnet<1>", "opt", "", "mixed", 10, 11, 100, 120, "0 120", 1.2, 0.5,
                         0, 0, "valid"};
    mp_run_info run = {.kind = "bench", .options = "--x", .count = 1};
    int64_t id;
    cr_assert_eq(mp_db_record(db, &run, &row, 1, NULL, 0, &id, &err), MP_OK, "%s", err.msg);
    mp_viz_report_options o;
    mp_viz_report_options_default(&o);
    o.svg_dir = svg_dir;
    o.svg_href = "svg";
    mp_buf_init(&b);
    cr_assert_eq(mp_viz_report_html(db, &o, &b, &err), MP_OK, "%s", err.msg);
    self_contained(b.data);
    ASSERT_CONTAINS(b.data, "resnet&lt;1&gt;");
    ASSERT_CONTAINS(b.data, "not a harness run");
    cr_assert_null(strstr(b.data, "<a href"));
    mp_buf_free(&b);
    mp_db_close(db);
    rm_tree(dir);
    mp_xfree(dir);
}

Test(viz_html, harness_ids_are_checked) {
    mp_buf b;
    mp_buf_init(&b);
    mp_err err;
    static const char *const bad_ids[] = {"h1", "h-1", "x1-2", "h1-2x", "h99999999999999999999-1", ""};
    for (size_t i = 0; i < sizeof bad_ids / sizeof *bad_ids; i++)
        cr_assert_eq(mp_viz_harness_svg(bad_ids[i], "opt", NULL, &b, NULL, &err), MP_EFORMAT,
                     "%s", bad_ids[i]);
    cr_assert_eq(mp_viz_harness_svg("h1-2", "best", NULL, &b, NULL, &err), MP_EFORMAT);
    uint64_t tensors = 0;
    cr_assert_eq(mp_viz_harness_svg("h1-2", "opt", NULL, &b, &tensors, &err), MP_OK, "%s", err.msg);
    cr_assert_gt(tensors, 0);
    cr_assert_null(check_xml(b.data));
    ASSERT_CONTAINS(b.data, "h1-2 planned with opt");
    mp_buf_free(&b);
}
