/* plan_methods.c - mp_plan_program of a program with several methods (an
 * entry line, e.g. `prefill` and `decode` of a language model).
 *
 * The state the methods share (`shared` tensors: a KV cache) gets one place
 * for all of them: stacked at the bottom of its pool in the order the
 * methods first declare it, each shared tensor is then pinned there (at=)
 * in every method.  Each method is planned on its own, as the entry graph
 * of a view of the program (graph_methods.c), by the planner asked for, so
 * it plans around the shared state; a planner without pinned offsets (the
 * reference) refuses.  The plan holds every method's blocks, in file order,
 * and each method's entry buffers are sized to the largest method's: one
 * arena per pool serves every method. */
#include "internal.h"
#include "api.h"

#include <stdio.h>

typedef struct pool_next {
    mp_device dev;
    uint64_t mem_id, next;
} pool_next;

/* Where each shared tensor of method k goes (per tensor, UINT64_MAX: not
 * shared), from the stacking of every method's shared tensors. */
static uint64_t *shared_offsets(const mp_program *p, const mp_options *o, uint32_t k) {
    const mp_graphdef *mg = &p->graphs[p->entries[k]];
    uint64_t *at = mp_xmalloc((mg->n_tensors + 1) * sizeof *at);
    for (uint32_t i = 0; i < mg->n_tensors; i++) at[i] = UINT64_MAX;
    if (!o->alloc_mutable) return at; /* shared state is mutable: not planned at all */
    pool_next *pools = NULL;
    size_t np = 0, cap = 0;
    mp_strmap seen, mine_by_name, pool_of; /* hash maps: linear in the tensors */
    mp_strmap_init(&seen);
    mp_strmap_init(&pool_of);
    mp_strmap_init(&mine_by_name);
    mp_arena *keys = mp_arena_new(); /* pool_of's keys: a map does not copy them */
    for (uint32_t i = 0; i < mg->n_tensors; i++)
        mp_strmap_put(&mine_by_name, mg->tensors[i].name, strlen(mg->tensors[i].name), (int32_t)i);
    for (uint32_t j = 0; j < p->n_entries; j++) {
        const mp_graphdef *g = &p->graphs[p->entries[j]];
        for (uint32_t i = 0; i < g->n_tensors; i++) {
            const mp_tensor *t = &g->tensors[i];
            if (!(t->flags & MP_T_SHARED) || mp_strmap_get(&seen, t->name, strlen(t->name)) >= 0) continue;
            mp_device d = o->per_device ? t->device : (mp_device){MP_DEV_CPU, 0};
            uint64_t mem = t->mem_id ? t->mem_id : 1;
            char key[64]; /* the pool, as a key of the hash map (a copy in keys goes in) */
            int kn = snprintf(key, sizeof key, "%u:%u:%llu", d.type, d.index, (unsigned long long)mem);
            int32_t got = mp_strmap_get(&pool_of, key, (size_t)kn);
            if (got < 0) mp_strmap_put(&pool_of, mp_arena_strndup(keys, key, (size_t)kn), (size_t)kn, (int32_t)np);
            size_t q = got >= 0 ? (size_t)got : np;
            if (q == np) MP_VEC_PUSH(pools, np, cap, ((pool_next){d, mem, 0}));
            mp_strmap_put(&seen, t->name, strlen(t->name), (int32_t)i);
            int32_t mine = mp_strmap_get(&mine_by_name, t->name, strlen(t->name));
            if (mine >= 0 && (mg->tensors[mine].flags & MP_T_SHARED)) at[mine] = pools[q].next;
            pools[q].next = mp_sat_add_u64(pools[q].next, mp_align_up(t->size, o->alignment));
        }
    }
    mp_strmap_free(&seen);
    mp_strmap_free(&mine_by_name);
    mp_strmap_free(&pool_of);
    mp_arena_free(keys);
    mp_xfree(pools);
    return at;
}

/* Block b of method k's plan, into plan P's arena, with its graph index
 * back in the program's numbering. */
static void copy_block(mp_plan *P, mp_graph_plan *dst, const mp_graph_plan *b, const mp_program *p, uint32_t k) {
    *dst = *b;
    dst->graph = b->graph >= 0 ? mp_method_graph(p, k, b->graph) : -1;
    dst->buffers = mp_arena_memdup(P->arena, b->buffers, b->n_buffers * sizeof *b->buffers);
    dst->devices = mp_arena_memdup(P->arena, b->devices, b->n_devices * sizeof *b->devices);
    dst->allocs = mp_arena_memdup(P->arena, b->allocs, b->n_allocs * sizeof *b->allocs);
    dst->frees = mp_arena_memdup(P->arena, b->frees, b->n_frees * sizeof *b->frees);
}

static int by_graph(const void *a, const void *b) {
    const mp_graph_plan *x = a, *y = b;
    return (x->graph > y->graph) - (x->graph < y->graph);
}

/* Every method's entry buffers sized to the largest method's (per index). */
static void one_arena(mp_plan *P, const mp_program *p) {
    uint32_t nb = 0;
    for (uint32_t i = 0; i < P->n_graphs; i++)
        if (P->graphs[i].n_buffers > nb) nb = P->graphs[i].n_buffers;
    uint64_t *most = mp_xcalloc(nb + 1, sizeof *most);
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < P->n_graphs; i++) {
            mp_graph_plan *g = &P->graphs[i];
            bool method = false;
            for (uint32_t k = 0; k < p->n_entries; k++) method |= g->graph == p->entries[k];
            for (uint32_t b = 0; method && b < g->n_buffers; b++) {
                if (!pass && g->buffers[b] > most[b]) most[b] = g->buffers[b];
                if (pass) g->buffers[b] = most[b];
            }
        }
    mp_xfree(most);
}

static mp_plan *merge(mp_plan **plans, const mp_program *p, const mp_options *o) {
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->n_entries; k++) n += plans[k]->n_graphs;
    const char *name = plans[0]->algo_name ? plans[0]->algo_name : "?";
    mp_plan *P = mp_plan_new(o, NULL);
    P->algo_name = mp_arena_strndup(P->arena, name, strlen(name));
    P->graphs = mp_arena_alloc(P->arena, (n + 1) * sizeof *P->graphs);
    for (uint32_t k = 0; k < p->n_entries; k++)
        for (uint32_t i = 0; i < plans[k]->n_graphs; i++) copy_block(P, &P->graphs[P->n_graphs++], &plans[k]->graphs[i], p, k);
    qsort(P->graphs, P->n_graphs, sizeof *P->graphs, by_graph); /* file order (methods own disjoint graphs) */
    one_arena(P, p);
    return P;
}

mp_plan *mp_plan_methods(const mp_program *p, const mp_options *o, mp_plan *(*plan)(const mp_program *,
                         const mp_options *, mp_err *), mp_err *err) {
    mp_plan **plans = mp_xcalloc(p->n_entries + 1, sizeof *plans);
    mp_plan *P = NULL;
    uint32_t k = 0;
    for (; k < p->n_entries; k++) {
        uint64_t *at = shared_offsets(p, o, k);
        mp_program *v = mp_method_view(p, k, at);
        plans[k] = plan(v, o, err);
        mp_method_view_free(v, true);
        mp_xfree(at);
        if (!plans[k]) break;
    }
    if (k == p->n_entries) {
        P = merge(plans, p, o);
    } else {
        char msg[sizeof err->msg];
        memcpy(msg, err->msg, sizeof msg);
        int n = snprintf(err->msg, sizeof err->msg, "method '%s': ", p->graphs[p->entries[k]].name);
        if (n > 0 && (size_t)n < sizeof err->msg) snprintf(err->msg + n, sizeof err->msg - (size_t)n, "%.*s",
                                                          (int)(sizeof err->msg - (size_t)n - 1), msg);
    }
    for (uint32_t j = 0; j < p->n_entries; j++) mp_plan_free(plans[j]);
    mp_xfree(plans);
    return P;
}
