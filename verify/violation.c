/* violation.c - what every rule file of the verifier shares: recording a
 * violation, and the reachable graphs in children-first order. */
#include "verify.h"

#include <stdio.h>

static void record(vctx *c, mp_violation *v, const char *graph, uint32_t rule, const char *kind,
                   const vdetail *d, const char *msg) {
    memset(v, 0, sizeof *v);
    v->graph = graph ? graph : "";
    v->rule = rule;
    v->kind = kind;
    v->msg = mp_arena_strndup(c->A, msg, strlen(msg));
    v->buffer = -1;
    v->nodes[0] = v->nodes[1] = -1;
    if (d) {
        v->tensors[0] = d->t0;
        v->tensors[1] = d->t1;
        v->buffer = d->buffer;
        v->n_ranges = d->n_ranges;
        memcpy(v->ranges[0], d->r0, sizeof d->r0);
        memcpy(v->ranges[1], d->r1, sizeof d->r1);
        v->nodes[0] = d->n0;
        v->nodes[1] = d->n1;
    }
}

/* The message formatted into the next detail slot, when one is left. */
static void record_fmt(vctx *c, mp_violation *v, const char *graph, uint32_t rule, const char *kind,
                       const vdetail *d, const char *fmt, va_list ap) {
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    record(c, v, graph, rule, kind, d, msg);
}

/* The next free detail slot of a list that holds *n of *cap, grown in the
 * arena (doubling, up to MP_VERIFY_DETAIL; the old copy dies with the
 * arena).  Caller guarantees *n < MP_VERIFY_DETAIL. */
static mp_violation *next_slot(vctx *c, mp_violation **list, uint32_t *n, uint32_t *cap) {
    if (*n == *cap) {
        uint32_t grown = *cap ? *cap * 2 : 8;
        if (grown > MP_VERIFY_DETAIL) grown = MP_VERIFY_DETAIL;
        mp_violation *v = mp_arena_alloc(c->A, grown * sizeof *v);
        if (*n) memcpy(v, *list, *n * sizeof *v);
        *list = v;
        *cap = grown;
    }
    return &(*list)[(*n)++];
}

void mp_v_copy(vctx *c, const mp_violation *v, bool warning) {
    mp_verify_report *r = c->r;
    if (warning ? r->n_w >= MP_VERIFY_DETAIL : r->n_v >= MP_VERIFY_DETAIL) return;
    mp_violation *d = warning ? next_slot(c, &r->w, &r->n_w, &c->w_cap) : next_slot(c, &r->v, &r->n_v, &c->v_cap);
    *d = *v;
    d->msg = mp_arena_strndup(c->A, v->msg, strlen(v->msg)); /* the rest points into the program */
}

void mp_v_violation(vctx *c, const char *graph, uint32_t rule, const char *kind,
                 const vdetail *d, const char *fmt, ...) {
    mp_verify_report *r = c->r;
    r->n_violations++;
    r->per_rule[rule]++;
    if (r->n_v >= MP_VERIFY_DETAIL) return;
    va_list ap;
    va_start(ap, fmt);
    record_fmt(c, next_slot(c, &r->v, &r->n_v, &c->v_cap), graph, rule, kind, d, fmt, ap);
    va_end(ap);
}

void mp_v_warning(vctx *c, const char *graph, uint32_t rule, const char *kind, const vdetail *d,
                  uint64_t wasted, const char *fmt, ...) {
    mp_verify_report *r = c->r;
    r->n_warnings++;
    r->wasted_bytes = mp_sat_add_u64(r->wasted_bytes, wasted);
    if (r->n_w >= MP_VERIFY_DETAIL) return;
    va_list ap;
    va_start(ap, fmt);
    record_fmt(c, next_slot(c, &r->w, &r->n_w, &c->w_cap), graph, rule, kind, d, fmt, ap);
    va_end(ap);
}

int32_t *mp_v_postorder_of(const vctx *c, uint32_t *n) {
    uint32_t k = 0;
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++) k += c->reach[gi];
    int32_t *order = mp_xmalloc((k + 1) * sizeof *order);
    mp_graphs_children_first(c->prog, c->reach, order, NULL);
    *n = k;
    return order;
}

/* "[offset,end)" with the end exact even where offset + size passes 2^64
 * (a plan file may hold any 64-bit offset): then it is 2^64 + the wrapped
 * end, printed in two base-10^19 halves, never clamped. */
void mp_v_range(char *buf, size_t n, uint64_t offset, uint64_t size) {
    uint64_t end;
    if (mp_add_u64(offset, size, &end)) {
        snprintf(buf, n, "[%llu,%llu)", (unsigned long long)offset, (unsigned long long)end);
        return;
    }
    const uint64_t e19 = UINT64_C(10000000000000000000);
    uint64_t lo = UINT64_C(8446744073709551616) + end % e19, hi = 1 + end / e19; /* 2^64 = 1:8446744073709551616 */
    if (lo >= e19) lo -= e19, hi++;
    snprintf(buf, n, "[%llu,%llu%019llu)", (unsigned long long)offset, (unsigned long long)hi,
             (unsigned long long)lo);
}

/* A tensor as messages name it: "t7 (output of node 12, aten.add.Tensor)"
 * when the node that makes it names its operator, else just "t7". */
const char *mp_v_tensor(const mp_graphdef *g, const mp_alloc *a, char *buf, size_t n) {
    const mp_tensor *t = a->tensor >= 0 && (uint32_t)a->tensor < g->n_tensors ? &g->tensors[a->tensor] : NULL;
    const mp_node *nd = t && t->def_node >= 0 ? &g->nodes[t->def_node] : NULL;
    if (!nd || !nd->op) return a->name;
    snprintf(buf, n, "%s (output of node %d, %s)", a->name, t->def_node, nd->op);
    return buf;
}
