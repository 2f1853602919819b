/* graph_methods.c - several methods in one file (an `entry` line) and the
 * state they share (`shared` tensors): the rules the parser checks when
 * the file ends, and the view of the program as one method at a time that
 * the planners and the verifier work on.
 *
 * Rules (FILE:LINE, exit 2): the entry line names defined graphs, each
 * once, the file's first graph first; no node runs a method; no graph is
 * run by two methods (each method's plan is its own); `shared` is only on a
 * mutable tensor of a method, neither in-place, view nor pinned, and a
 * shared name has one size, pool and device in every method. */
#include "internal.h"

#include <stdio.h>

static const char *file_of(const mp_program *p) { return p->filename ? p->filename : "<input>"; }

static int fail_at(mp_err *err, const mp_program *p, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(mp_err *err, const mp_program *p, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = mp_err_at(err, file_of(p), line, fmt, ap);
    va_end(ap);
    return rc;
}

/* Mark every graph method m runs (m itself included) as m's; a graph
 * already another method's is a conflict: returns its index, else -1. */
static int32_t claim(const mp_program *p, int32_t m, int32_t *owner, int32_t *stack) {
    size_t sp = 0;
    stack[sp++] = m;
    owner[m] = m;
    while (sp) {
        const mp_graphdef *g = &p->graphs[stack[--sp]];
        for (uint32_t i = 0; i < g->n_nodes; i++)
            for (int s = 0; s < 2; s++) {
                int32_t c = g->nodes[i].sub[s];
                if (c < 0 || owner[c] == m) continue;
                if (owner[c] >= 0) return c;
                owner[c] = m;
                stack[sp++] = c;
            }
    }
    return -1;
}

static int check_names(mp_program *p, const mp_tok *names, uint32_t n, int line, mp_err *err) {
    int32_t *idx = mp_arena_alloc(p->arena, (n + 1) * sizeof *idx);
    for (uint32_t k = 0; k < n; k++) {
        idx[k] = mp_graph_find(p, names[k].s);
        if (idx[k] < 0) return fail_at(err, p, line, "entry: graph '%s' is not defined in this file", names[k].s);
        for (uint32_t j = 0; j < k; j++)
            if (idx[j] == idx[k]) return fail_at(err, p, line, "entry: method '%s' named twice", names[k].s);
    }
    if (idx[0] != 0)
        return fail_at(err, p, line, "entry: the first method must be the file's first graph ('%s')",
                       p->graphs[0].name);
    p->entries = idx;
    p->n_entries = n;
    return MP_OK;
}

/* No node runs a method, and no graph is run by two methods. */
static int check_owners(const mp_program *p, int line, mp_err *err) {
    int32_t *owner = mp_xmalloc((p->n_graphs + 1) * sizeof *owner);
    int32_t *stack = mp_xmalloc((p->n_graphs + 1) * sizeof *stack);
    int rc = MP_OK;
    for (uint32_t g = 0; g < p->n_graphs; g++) owner[g] = -1;
    for (uint32_t k = 0; k < p->n_entries && rc == MP_OK; k++) owner[p->entries[k]] = p->entries[k];
    for (uint32_t g = 0; g < p->n_graphs && rc == MP_OK; g++)
        for (uint32_t i = 0; i < p->graphs[g].n_nodes && rc == MP_OK; i++)
            for (int s = 0; s < 2 && rc == MP_OK; s++) {
                int32_t c = p->graphs[g].nodes[i].sub[s];
                if (c >= 0 && owner[c] == c)
                    rc = fail_at(err, p, p->graphs[g].nodes[i].line, "graph '%s' is a method (entry line): "
                                 "no node may run it", p->graphs[c].name);
            }
    for (uint32_t g = 0; g < p->n_graphs; g++) owner[g] = -1;
    for (uint32_t k = 0; k < p->n_entries && rc == MP_OK; k++) {
        int32_t c = claim(p, p->entries[k], owner, stack);
        if (c >= 0)
            rc = fail_at(err, p, line, "methods '%s' and '%s' both run graph '%s': give each method its own copy",
                         p->graphs[owner[c]].name, p->graphs[p->entries[k]].name, p->graphs[c].name);
    }
    mp_xfree(owner);
    mp_xfree(stack);
    return rc;
}

static bool is_method(const mp_program *p, uint32_t g) {
    for (uint32_t k = 0; k < p->n_entries; k++)
        if ((uint32_t)p->entries[k] == g) return true;
    return false;
}

/* A shared tensor's own rules. */
static int check_shared(const mp_program *p, uint32_t gi, const mp_tensor *t, mp_err *err) {
    if (!is_method(p, gi))
        return fail_at(err, p, t->line, "tensor '%s': shared state belongs to a method (%s)", t->name,
                       p->n_entries ? "a graph of the entry line" : "the file has no entry line");
    if (!(t->flags & MP_T_MUTABLE) || t->inplace_base >= 0 || t->view_base >= 0 || (t->flags & MP_T_PINNED))
        return fail_at(err, p, t->line, "tensor '%s': shared is for a mutable tensor (state), neither "
                       "in-place, view nor pinned", t->name);
    return MP_OK;
}

/* Every shared name agrees with its first declaration (methods in entry
 * order): one size, pool and device.  A hash map keeps it linear. */
static int check_agreement(const mp_program *p, mp_err *err) {
    mp_strmap first;
    mp_strmap_init(&first);
    const mp_tensor **seen = NULL;
    const char **where = NULL;
    size_t n = 0, cap = 0, wcap = 0;
    int rc = MP_OK;
    for (uint32_t k = 0; k < p->n_entries && rc == MP_OK; k++) {
        const mp_graphdef *g = &p->graphs[p->entries[k]];
        for (uint32_t i = 0; i < g->n_tensors && rc == MP_OK; i++) {
            const mp_tensor *t = &g->tensors[i];
            if (!(t->flags & MP_T_SHARED)) continue;
            int32_t at = mp_strmap_put(&first, t->name, strlen(t->name), (int32_t)n);
            if (at < 0) {
                size_t m = n;
                MP_VEC_PUSH(seen, n, cap, t);
                MP_VEC_PUSH(where, m, wcap, g->name);
                continue;
            }
            const mp_tensor *u = seen[at];
            if (u->size != t->size || u->mem_id != t->mem_id || !mp_device_eq(u->device, t->device))
                rc = fail_at(err, p, t->line, "tensor '%s' is shared with method '%s' (line %d) but differs "
                             "in size, mem_id or device", t->name, where[at], u->line);
        }
    }
    mp_strmap_free(&first);
    mp_xfree(seen);
    mp_xfree(where);
    return rc;
}

int mp_methods_bind(mp_program *p, const mp_tok *names, uint32_t n, int line, mp_err *err) {
    int rc = n ? check_names(p, names, n, line, err) : MP_OK;
    if (rc == MP_OK && n) rc = check_owners(p, line, err);
    for (uint32_t g = 0; g < p->n_graphs && rc == MP_OK; g++)
        for (uint32_t t = 0; t < p->graphs[g].n_tensors && rc == MP_OK; t++)
            if (p->graphs[g].tensors[t].flags & MP_T_SHARED) rc = check_shared(p, g, &p->graphs[g].tensors[t], err);
    if (rc == MP_OK && n) rc = check_agreement(p, err);
    return rc;
}

/* ------------------------------------------------------------ the view */

mp_program *mp_method_view(const mp_program *p, uint32_t k, const uint64_t *at) {
    mp_program *v = mp_xcalloc(1, sizeof *v);
    *v = *p;
    v->arena = NULL; /* borrows every string and array but these two */
    v->entries = NULL;
    v->n_entries = 0;
    v->graphs = mp_xmalloc((p->n_graphs + 1) * sizeof *v->graphs);
    memcpy(v->graphs, p->graphs, p->n_graphs * sizeof *v->graphs);
    int32_t m = k < p->n_entries ? p->entries[k] : 0;
    /* no node runs a method, so swapping the two renumbers no sub-graph */
    v->graphs[0] = p->graphs[m];
    v->graphs[m] = p->graphs[0];
    if (at) {
        mp_graphdef *g = &v->graphs[0];
        mp_tensor *t = mp_xmalloc((g->n_tensors + 1) * sizeof *t);
        memcpy(t, g->tensors, g->n_tensors * sizeof *t);
        for (uint32_t i = 0; i < g->n_tensors; i++)
            if (at[i] != UINT64_MAX) t[i].flags |= MP_T_PINNED, t[i].at = at[i];
        g->tensors = t;
    }
    return v;
}

void mp_method_view_free(mp_program *v, bool pinned) {
    if (!v) return;
    if (pinned) mp_xfree(v->graphs[0].tensors);
    mp_xfree(v->graphs);
    mp_xfree(v);
}

int32_t mp_method_graph(const mp_program *p, uint32_t k, int32_t g) {
    int32_t m = k < p->n_entries ? p->entries[k] : 0;
    return g == 0 ? m : g == m ? 0 : g;
}

bool mp_methods_share(const mp_program *p) {
    for (uint32_t k = 0; k < p->n_entries; k++) {
        const mp_graphdef *g = &p->graphs[p->entries[k]];
        for (uint32_t i = 0; i < g->n_tensors; i++)
            if (g->tensors[i].flags & MP_T_SHARED) return true;
    }
    return false;
}

/* owner[g]: the method (entry index) that runs graph g, -1 for none. */
int32_t *mp_method_owners(const mp_program *p) {
    int32_t *owner = mp_xmalloc((p->n_graphs + 1) * sizeof *owner), *st = mp_xmalloc((p->n_graphs + 1) * sizeof *st);
    for (uint32_t g = 0; g < p->n_graphs; g++) owner[g] = -1;
    for (uint32_t k = 0; k < p->n_entries; k++) {
        size_t sp = 0;
        st[sp++] = p->entries[k];
        owner[p->entries[k]] = (int32_t)k;
        while (sp) {
            const mp_graphdef *g = &p->graphs[st[--sp]];
            for (uint32_t i = 0; i < g->n_nodes; i++)
                for (int s = 0; s < 2; s++) {
                    int32_t c = g->nodes[i].sub[s];
                    if (c >= 0 && owner[c] < 0) owner[c] = (int32_t)k, st[sp++] = c;
                }
        }
    }
    mp_xfree(st);
    return owner;
}

/* The plan as method k sees it: its blocks, graph indices in its view. */
mp_plan mp_method_plan(const mp_program *p, const mp_plan *plan, const int32_t *owner, uint32_t k) {
    mp_plan s = *plan;
    s.graphs = mp_xmalloc((plan->n_graphs + 1) * sizeof *s.graphs);
    s.n_graphs = 0;
    for (uint32_t i = 0; i < plan->n_graphs; i++) {
        const mp_graph_plan *b = &plan->graphs[i];
        int32_t who = b->graph >= 0 ? owner[b->graph] : -1;
        if (who != (int32_t)k && !(k == 0 && who < 0)) continue;
        s.graphs[s.n_graphs] = *b;
        s.graphs[s.n_graphs++].graph = b->graph >= 0 ? mp_method_graph(p, k, b->graph) : -1;
    }
    return s;
}

