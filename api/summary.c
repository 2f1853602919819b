/* summary.c - the plan summary (mp_plan_summary, `memplan plan
 * --summary`): how big, exactly.  Per buffer of
 * the entry graph (a pool on a device): the arena size, the lower bound,
 * the node where the most bytes are live, its operator, the tensors live
 * there (largest first; a sub-graph's memory at its control-flow node
 * counts as one entry), and what the options cost: the same planner
 * without alignment, without in-place sharing, and with per-device
 * planning the other way.  As text, or as JSON for scripts and a
 * microcontroller's linker script. */
#include "internal.h"
#include "api.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct live {
    const char *name; /* tensor or sub-graph */
    const char *what; /* "tensor", "scratch", "input", the sub-graphs' node kind or "held" */
    int32_t node;     /* the node that defines it (or runs the sub-graphs), -1: none */
    uint64_t bytes;
    int32_t held_by; /* a cond whose results' branch memory the bytes include (D14), -1: none */
} live;

typedef struct peak {
    int64_t node;
    uint64_t bytes;
    live *v;
    size_t n, cap;
} peak;

static int cmp_live(const void *a, const void *b) {
    const live *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

static const mp_graph_plan *block_of(const mp_plan *plan, int32_t graph) {
    for (uint32_t k = 0; k < plan->n_graphs; k++)
        if (plan->graphs[k].graph == graph) return &plan->graphs[k];
    return NULL;
}

/* The end of t's in-place chain (views stand for their roots). */
static int32_t family_of(const mp_graphdef *g, int32_t t) {
    for (uint32_t steps = 0; g->tensors[t].inplace_base >= 0 && steps <= g->n_tensors; steps++)
        t = g->tensors[g->tensors[t].inplace_base].root;
    return t;
}

/* One in-place family's allocations in buffer b: the hull of their lives,
 * the largest size, and the member live at node i (the first). */
typedef struct family {
    int32_t root;
    int64_t start, end;
    uint64_t size;
    const mp_alloc *at_node;
} family;

static void families_of(const mp_graphdef *g, const mp_graph_plan *gp, uint32_t b, int64_t i, family **fv,
                        size_t *nf) {
    size_t cap = 0;
    *fv = NULL, *nf = 0;
    int32_t *slot = mp_xmalloc((g->n_tensors + 1) * sizeof *slot); /* root -> its family, -1 */
    for (uint32_t t = 0; t < g->n_tensors; t++) slot[t] = -1;
    for (uint32_t a = 0; gp && a < gp->n_allocs; a++) {
        const mp_alloc *x = &gp->allocs[a];
        if (x->mem_id != b || !x->size || x->tensor < 0) continue;
        int32_t r = family_of(g, x->tensor);
        if (slot[r] < 0) {
            family f = {r, x->life_start, x->life_end, 0, NULL};
            slot[r] = (int32_t)*nf;
            MP_VEC_PUSH(*fv, *nf, cap, f);
        }
        size_t k = (size_t)slot[r];
        family *f = &(*fv)[k];
        if (x->life_start < f->start) f->start = x->life_start;
        if (x->life_end > f->end) f->end = x->life_end;
        if (x->size > f->size) f->size = x->size;
        if (!f->at_node && x->life_start <= i && i <= x->life_end) f->at_node = x;
    }
    mp_xfree(slot);
}

/* The latest cond before node i of the entry graph whose results live in
 * its branches' memory at i (D14: the verifier's bound counts that memory
 * there), or -1. */
static int32_t holding_cond(const mp_program *prog, int64_t i) {
    const mp_graphdef *g = &prog->graphs[0];
    mp_life L;
    mp_life_compute(g, &L);
    mp_escape E;
    mp_escape_compute(prog, g, L.end, &E);
    int32_t k = -1;
    for (int64_t n = i - 1; n >= 0 && k < 0; n--)
        if (E.node_end[n] >= i) k = (int32_t)n;
    mp_escape_free(&E);
    mp_life_free(&L);
    return k;
}

/* What is live in buffer b of the entry graph at node i, where the
 * verifier's lower bound is reached: each in-place family whose lives
 * cover the node, once (its bytes are its root's), and the rest of the
 * bound: the memory the control-flow node's sub-graphs need and what the
 * results of earlier conds hold in their branches' memory. */
static void live_at(const mp_program *prog, const mp_plan *plan, uint32_t b, int64_t i, uint64_t bound,
                    peak *p) {
    const mp_graphdef *g = &prog->graphs[0];
    family *fv;
    size_t nf;
    families_of(g, block_of(plan, 0), b, i, &fv, &nf);
    uint64_t sum = 0;
    for (size_t k = 0; k < nf; k++) {
        const family *f = &fv[k];
        if (f->start > i || f->end < i) continue;
        const mp_tensor *t = &g->tensors[f->root];
        int32_t d = t->def_node;
        if (d == i && g->nodes[i].kind == MP_NODE_COND) continue; /* in its branch's memory */
        sum += f->size;
        const char *what = (t->flags & MP_T_SCRATCH) ? "scratch"
                           : d >= 0 && g->nodes[d].kind == MP_NODE_PLACEHOLDER ? "input" : "tensor";
        const char *name = f->at_node ? f->at_node->name : t->name;
        live e = {name, what, d, f->size, -1};
        MP_VEC_PUSH(p->v, p->n, p->cap, e);
    }
    mp_xfree(fv);
    if (bound <= sum) return;
    int32_t k = holding_cond(prog, i), s = g->nodes[i].sub[0];
    live e = {NULL, NULL, -1, bound - sum, k};
    if (s >= 0) e.name = prog->graphs[s].name, e.what = mp_node_kind_name(g->nodes[i].kind), e.node = (int32_t)i;
    else if (k >= 0) e.name = prog->graphs[g->nodes[k].sub[0]].name, e.what = "held";
    if (e.name) MP_VEC_PUSH(p->v, p->n, p->cap, e);
}

static void find_peak(const mp_program *prog, const mp_plan *plan, const mp_verify_report *r, uint32_t b,
                      peak *p) {
    memset(p, 0, sizeof *p);
    p->node = b < r->n_buffers && r->buf_peak ? r->buf_peak[b] : -1;
    if (p->node < 0 || p->node >= (int64_t)prog->graphs[0].n_nodes) {
        p->node = -1;
        return;
    }
    p->bytes = r->buf_lower[b];
    live_at(prog, plan, b, p->node, p->bytes, p);
    if (p->n) qsort(p->v, p->n, sizeof *p->v, cmp_live);
}

/* ------------------------------------------------------- option costs */

typedef struct cost {
    const char *option, *as_planned, *other;
    bool planned; /* the other way planned */
    int64_t delta; /* bytes of the plan minus bytes the other way */
} cost;

static int64_t total_of(const mp_plan *plan) {
    const mp_graph_plan *gp = block_of(plan, 0);
    uint64_t t = 0;
    for (uint32_t b = 0; gp && b < gp->n_buffers; b++) t += gp->buffers[b];
    return (int64_t)t;
}

/* The program again, without in-place sharing (every tensor its own). */
static mp_program *without_inplace(const mp_program *prog) {
    mp_program *q = mp_program_tensors_copy(prog);
    for (uint32_t gi = 0; gi < q->n_graphs; gi++)
        for (uint32_t i = 0; i < q->graphs[gi].n_tensors; i++) q->graphs[gi].tensors[i].inplace_base = -1;
    return q;
}

static void other_way(const mp_program *prog, const mp_options *o, int64_t total, cost *c) {
    mp_err err;
    mp_plan *p = prog ? mp_plan_program(prog, o, &err) : NULL;
    c->planned = p != NULL;
    if (p) c->delta = total - total_of(p);
    mp_plan_free(p);
}

static void option_costs(const mp_program *prog, const mp_plan *plan, const mp_options *o, cost *c) {
    static char align[24];
    int64_t total = total_of(plan);
    mp_options x = *o;
    x.exact = false; /* the costs compare like with like, quickly */
    snprintf(align, sizeof align, "alignment %u", o->alignment);
    c[0] = (cost){"alignment", align, "alignment 1", false, 0};
    x.alignment = 1;
    other_way(prog, &x, total, &c[0]);
    x.alignment = o->alignment;
    c[1] = (cost){"in-place", "shared", "each its own", false, 0};
    mp_program *q = without_inplace(prog);
    other_way(q, &x, total, &c[1]);
    mp_program_tensors_copy_free(q);
    c[2] = (cost){"per-device", o->per_device ? "on" : "off", o->per_device ? "off" : "on", false, 0};
    x.per_device = !o->per_device;
    other_way(prog, &x, total, &c[2]);
}

/* ------------------------------------------------------------- output */

#define SHOWN 20 /* live entries listed per buffer in text (JSON lists all) */

static void put_text(const mp_program *prog, const mp_plan *plan, const mp_verify_report *r, const cost *c,
                     mp_buf *out) {
    const mp_graph_plan *gp = block_of(plan, 0);
    mp_buf_printf(out, "summary: %s, graph %s, algo %s, alignment %u: %llu bytes, lower bound %llu (ratio %.4f)\n",
                  prog->filename, prog->graphs[0].name, plan->algo_name ? plan->algo_name : "?",
                  plan->opts.alignment, (unsigned long long)r->total_bytes, (unsigned long long)r->lower_bound,
                  r->ratio);
    for (uint32_t b = 1; gp && b < gp->n_buffers; b++) {
        char d[24];
        peak p;
        find_peak(prog, plan, r, b, &p);
        mp_buf_printf(out, "buffer %u (%s", b, b < gp->n_devices ? mp_device_str(gp->devices[b], d) : "?");
        const mp_banks *bk = &plan->opts.banks; /* under a memory map buffer b is bank b */
        if (b <= bk->n && bk->bank[b - 1].capacity == MP_UNLIMITED)
            mp_buf_printf(out, ", bank %s, unlimited", bk->bank[b - 1].name);
        else if (b <= bk->n)
            mp_buf_printf(out, ", bank %s of %llu bytes", bk->bank[b - 1].name,
                          (unsigned long long)bk->bank[b - 1].capacity);
        mp_buf_printf(out, "): %llu bytes, lower bound %llu", (unsigned long long)gp->buffers[b],
                      (unsigned long long)(b < r->n_buffers ? r->buf_lower[b] : 0));
        if (p.node >= 0) {
            const mp_node *nd = &prog->graphs[0].nodes[p.node];
            mp_buf_printf(out, "; the bound is reached at node %lld (%s%s%s):\n", (long long)p.node,
                          mp_node_kind_name(nd->kind), nd->op ? ", " : "", nd->op ? nd->op : "");
            uint64_t rest = 0;
            for (size_t k = SHOWN; k < p.n; k++) rest += p.v[k].bytes;
            for (size_t k = 0; k < p.n && k < SHOWN; k++) {
                const live *e = &p.v[k];
                const mp_node *def = e->node >= 0 ? &prog->graphs[0].nodes[e->node] : NULL;
                mp_buf_printf(out, "  %-24s %12llu  %s", e->name, (unsigned long long)e->bytes, e->what);
                if (def) mp_buf_printf(out, " of node %d (%s%s%s)", e->node, mp_node_kind_name(def->kind),
                                       def->op ? ", " : "", def->op ? def->op : "");
                if (e->held_by >= 0)
                    mp_buf_printf(out, "%s by the results of node %d (cond)", def ? ", and memory held" : "",
                                  e->held_by);
                mp_buf_puts(out, "\n");
            }
            if (p.n > SHOWN) mp_buf_printf(out, "  ... and %zu more, %llu bytes\n", p.n - SHOWN, (unsigned long long)rest);
        } else {
            mp_buf_puts(out, "\n");
        }
        mp_xfree(p.v);
    }
    mp_buf_puts(out, "options (the plan's bytes against the same planner the other way):\n");
    for (int k = 0; k < 3; k++) {
        mp_buf_printf(out, "  %-11s %-14s", c[k].option, c[k].as_planned);
        if (c[k].planned) mp_buf_printf(out, "%+lld bytes against %s\n", (long long)c[k].delta, c[k].other);
        else mp_buf_printf(out, "%s: cannot be planned\n", c[k].other);
    }
}

static void json_str(mp_buf *out, const char *key, const char *v, bool comma) {
    mp_buf_printf(out, "\"%s\":", key);
    if (v) mp_buf_put_json_string(out, v);
    else mp_buf_puts(out, "null");
    if (comma) mp_buf_puts(out, ",");
}

static void json_peak(const mp_program *prog, const peak *p, mp_buf *out) {
    if (p->node < 0) {
        mp_buf_puts(out, "\"peak\":null");
        return;
    }
    const mp_node *nd = &prog->graphs[0].nodes[p->node];
    mp_buf_printf(out, "\"peak\":{\"node\":%lld,", (long long)p->node);
    json_str(out, "kind", mp_node_kind_name(nd->kind), true);
    json_str(out, "op", nd->op, true);
    mp_buf_printf(out, "\"live_bytes\":%llu,\"live\":[", (unsigned long long)p->bytes);
    for (size_t k = 0; k < p->n; k++) {
        mp_buf_puts(out, k ? ",{" : "{");
        json_str(out, "name", p->v[k].name, true);
        mp_buf_printf(out, "\"bytes\":%llu,", (unsigned long long)p->v[k].bytes);
        json_str(out, "what", p->v[k].what, true);
        mp_buf_printf(out, "\"node\":%d,\"held_by\":%d", p->v[k].node, p->v[k].held_by);
        mp_buf_puts(out, "}");
    }
    mp_buf_puts(out, "]}");
}

static void put_json(const mp_program *prog, const mp_plan *plan, const mp_verify_report *r, const cost *c,
                     mp_buf *out) {
    const mp_graph_plan *gp = block_of(plan, 0);
    mp_buf_puts(out, "{");
    json_str(out, "file", prog->filename, true);
    json_str(out, "graph", prog->graphs[0].name, true);
    json_str(out, "algo", plan->algo_name, true);
    mp_buf_printf(out, "\"alignment\":%u,\"total_bytes\":%llu,\"lower_bound\":%llu,\"ratio\":%.6f,\"buffers\":[",
                  plan->opts.alignment, (unsigned long long)r->total_bytes, (unsigned long long)r->lower_bound,
                  r->ratio);
    for (uint32_t b = 1; gp && b < gp->n_buffers; b++) {
        char d[24];
        peak p;
        find_peak(prog, plan, r, b, &p);
        mp_buf_printf(out, "%s{\"buffer\":%u,", b > 1 ? "," : "", b);
        json_str(out, "device", b < gp->n_devices ? mp_device_str(gp->devices[b], d) : NULL, true);
        const mp_banks *bk = &plan->opts.banks;
        if (b <= bk->n) {
            json_str(out, "bank", bk->bank[b - 1].name, true);
            if (bk->bank[b - 1].capacity == MP_UNLIMITED) mp_buf_puts(out, "\"capacity\":null,");
            else mp_buf_printf(out, "\"capacity\":%llu,", (unsigned long long)bk->bank[b - 1].capacity);
        }
        mp_buf_printf(out, "\"bytes\":%llu,\"lower_bound\":%llu,", (unsigned long long)gp->buffers[b],
                      (unsigned long long)(b < r->n_buffers ? r->buf_lower[b] : 0));
        json_peak(prog, &p, out);
        mp_buf_puts(out, "}");
        mp_xfree(p.v);
    }
    mp_buf_puts(out, "],\"options\":[");
    for (int k = 0; k < 3; k++) {
        mp_buf_puts(out, k ? ",{" : "{");
        json_str(out, "option", c[k].option, true);
        json_str(out, "as_planned", c[k].as_planned, true);
        json_str(out, "other", c[k].other, true);
        if (c[k].planned) mp_buf_printf(out, "\"bytes_against_other\":%lld}", (long long)c[k].delta);
        else mp_buf_puts(out, "\"bytes_against_other\":null}");
    }
    mp_buf_puts(out, "]}\n");
}

int mp_summary_write(const mp_program *prog, const mp_plan *plan, const mp_options *o, bool json, mp_buf *out,
                     mp_err *err) {
    mp_verify_report r;
    int rc = mp_verify(prog, plan, &r, err);
    if (rc != MP_OK && rc != MP_EINVALID) return rc;
    cost c[3];
    option_costs(prog, plan, o, c);
    if (json) put_json(prog, plan, &r, c, out);
    else put_text(prog, plan, &r, c, out);
    mp_verify_report_free(&r);
    return MP_OK;
}

typedef struct summary_call {
    const mp_program *prog;
    const mp_plan *plan;
    bool json;
    mp_err *err;
} summary_call;

static int summary_work(void *ctx, mp_buf *b) {
    summary_call *c = ctx;
    return mp_summary_write(c->prog, c->plan, &c->plan->opts, c->json, b, c->err);
}

/* The plan's own options (its options line; efforts as the command's
 * defaults) stand for the ones it was made with. */
int mp_plan_summary(const mp_program *prog, const mp_plan *plan, bool json, mp_buf *out, mp_err *err) {
    mp_err_clear(err);
    if (!prog || !plan || !out) return mp_err_set(err, MP_EFORMAT, "mp_plan_summary: a NULL argument");
    summary_call c = {prog, plan, json, err};
    return mp_guard_text(err, summary_work, &c, out);
}
