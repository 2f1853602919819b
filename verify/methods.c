/* methods.c - the verifier on a program with several methods (an entry
 * line).  Each method is checked as a program of its own (its view, with
 * the plan's blocks of the graphs it runs), so every rule holds per method
 * as for one entry graph; the blocks of no method's graphs go with the
 * first, where the usual rules report them.  The reports become one: every
 * violation and warning, the quality of the method that needs the most.
 * Then the shared state: a shared tensor sits at the same pool, offset and
 * size in every method (rule 8, kind "shared"); that it overlaps no other
 * tensor of a method is the overlap rule, as it lives through each. */
#include "verify.h"

#include <stdio.h>

/* The method report with the largest total gives the quality figures. */
static void take_quality(mp_verify_report *r, const mp_verify_report *m) {
    r->total_bytes = m->total_bytes;
    r->lower_bound = m->lower_bound;
    r->ratio = m->ratio;
    r->n_buffers = m->n_buffers;
    size_t n = m->n_buffers + 1;
    r->buf_bytes = mp_xmalloc(n * sizeof *r->buf_bytes);
    r->buf_lower = mp_xmalloc(n * sizeof *r->buf_lower);
    r->buf_peak = mp_xmalloc(n * sizeof *r->buf_peak);
    if (m->n_buffers) {
        memcpy(r->buf_bytes, m->buf_bytes, m->n_buffers * sizeof *r->buf_bytes);
        memcpy(r->buf_lower, m->buf_lower, m->n_buffers * sizeof *r->buf_lower);
        memcpy(r->buf_peak, m->buf_peak, m->n_buffers * sizeof *r->buf_peak);
    }
}

static void add_report(vctx *c, const mp_verify_report *m) {
    mp_verify_report *r = c->r;
    for (uint32_t i = 0; i < m->n_v; i++) mp_v_copy(c, &m->v[i], false);
    for (uint32_t i = 0; i < m->n_w; i++) mp_v_copy(c, &m->w[i], true);
    r->n_violations += m->n_violations;
    r->n_warnings += m->n_warnings;
    r->wasted_bytes = mp_sat_add_u64(r->wasted_bytes, m->wasted_bytes);
    for (int k = 0; k < MP_N_RULES; k++) r->per_rule[k] += m->per_rule[k];
}

/* Method k's entry block's allocations by name (a hash map: linear). */
static const mp_graph_plan *entry_block(const mp_plan *plan, int32_t graph, mp_strmap *names) {
    mp_strmap_init(names);
    for (uint32_t i = 0; i < plan->n_graphs; i++) {
        const mp_graph_plan *b = &plan->graphs[i];
        if (b->graph != graph) continue;
        for (uint32_t a = 0; a < b->n_allocs; a++)
            mp_strmap_put(names, b->allocs[a].name, strlen(b->allocs[a].name), (int32_t)a);
        return b;
    }
    return NULL;
}

static const mp_alloc *alloc_named(const mp_graph_plan *b, const mp_strmap *names, const char *name) {
    int32_t a = b ? mp_strmap_get(names, name, strlen(name)) : -1;
    return a >= 0 ? &b->allocs[a] : NULL;
}

static void shared_mismatch(vctx *c, const mp_graphdef *g, const mp_alloc *a, const mp_alloc *f, const char *first) {
    vdetail d = {a->name, f->name, (int64_t)a->mem_id, {a->offset, mp_sat_add_u64(a->offset, a->size)},
                 {f->offset, mp_sat_add_u64(f->offset, f->size)}, 2, -1, -1};
    mp_v_violation(c, g->name, MP_RULE_CONSISTENCY, "shared", &d,
                   "shared: %s is at offset %llu (size %llu) in buffer %llu, but method %s has it at "
                   "offset %llu (size %llu) in buffer %llu", a->name, (unsigned long long)a->offset,
                   (unsigned long long)a->size, (unsigned long long)a->mem_id, first,
                   (unsigned long long)f->offset, (unsigned long long)f->size, (unsigned long long)f->mem_id);
}

/* Each shared tensor where the first method that plans it has it. */
static void shared_state(vctx *c) {
    const mp_program *p = c->prog;
    uint32_t n = p->n_entries;
    mp_strmap *names = mp_xmalloc((n + 1) * sizeof *names);
    const mp_graph_plan **blocks = mp_xmalloc((n + 1) * sizeof *blocks);
    for (uint32_t k = 0; k < n; k++) blocks[k] = entry_block(c->plan, p->entries[k], &names[k]);
    for (uint32_t k = 1; k < n; k++) {
        const mp_graphdef *g = &p->graphs[p->entries[k]];
        for (uint32_t t = 0; t < g->n_tensors; t++) {
            if (!(g->tensors[t].flags & MP_T_SHARED)) continue;
            const mp_alloc *a = alloc_named(blocks[k], &names[k], g->tensors[t].name), *f = NULL;
            uint32_t j = 0;
            for (; j < k && !f; j++) f = alloc_named(blocks[j], &names[j], g->tensors[t].name);
            if (a && f && (a->mem_id != f->mem_id || a->offset != f->offset || a->size != f->size))
                shared_mismatch(c, g, a, f, p->graphs[p->entries[j - 1]].name);
        }
    }
    for (uint32_t k = 0; k < n; k++) mp_strmap_free(&names[k]);
    mp_xfree(names);
    mp_xfree(blocks);
}

int mp_v_verify_methods(const mp_program *p, const mp_plan *plan, mp_verify_report *r, mp_err *err) {
    memset(r, 0, sizeof *r);
    r->arena = mp_arena_new();
    vctx c = {0};
    c.prog = p;
    c.plan = plan;
    c.r = r;
    c.A = r->arena;
    int32_t *owner = mp_method_owners(p);
    int rc = MP_OK;
    bool have_quality = false;
    for (uint32_t k = 0; k < p->n_entries && (rc == MP_OK || rc == MP_EINVALID); k++) {
        mp_program *v = mp_method_view(p, k, NULL);
        mp_plan s = mp_method_plan(p, plan, owner, k);
        mp_verify_report m;
        rc = mp_v_verify_one(v, &s, &m, err);
        if (rc == MP_OK || rc == MP_EINVALID) {
            add_report(&c, &m);
            if (!have_quality || m.total_bytes > r->total_bytes) {
                mp_xfree(r->buf_bytes), mp_xfree(r->buf_lower), mp_xfree(r->buf_peak);
                take_quality(r, &m);
                have_quality = true;
            }
        }
        mp_verify_report_free(&m);
        mp_xfree(s.graphs);
        mp_method_view_free(v, false);
    }
    mp_xfree(owner);
    if (rc != MP_OK && rc != MP_EINVALID) return rc;
    shared_state(&c);
    return r->n_violations ? MP_EINVALID : MP_OK;
}
