/* table.c - what the repaired reference mode and the optimized planner
 * share: the program-wide buffer table, graph contexts, free points. */
#include "internal.h"

static const mp_device CPU0 = {MP_DEV_CPU, 0};

mp_alloc_flags mp_context_flags(const mp_options *o, uint32_t gi, const uint8_t *map_body) {
    if (gi == 0) return (mp_alloc_flags){o->alloc_inputs, o->alloc_outputs, o->alloc_mutable};
    return (mp_alloc_flags){map_body[gi] != 0, true, true};
}

uint8_t *mp_map_bodies(const mp_program *p, const bool *reach) {
    uint8_t *m = mp_xcalloc(p->n_graphs + 1, 1);
    for (uint32_t gi = 0; gi < p->n_graphs; gi++) {
        if (!reach[gi]) continue;
        const mp_graphdef *g = &p->graphs[gi];
        for (uint32_t i = 0; i < g->n_nodes; i++)
            if (g->nodes[i].kind == MP_NODE_MAP || g->nodes[i].kind == MP_NODE_SCAN)
                m[g->nodes[i].sub[0]] = 1;
    }
    return m;
}

int32_t mp_table_find(const mp_table *t, mp_device d) {
    for (uint32_t k = 0; k < t->n; k++)
        if (mp_device_eq(t->slots[k].dev, d)) return (int32_t)k;
    return -1;
}

static void reg(mp_table *t, mp_device d, uint32_t pool) {
    int32_t k = mp_table_find(t, d);
    if (k < 0) {
        t->slots = mp_xrealloc(t->slots, (t->n + 1) * sizeof *t->slots);
        k = (int32_t)t->n++;
        t->slots[k] = (mp_slot){d, 0, 0};
    }
    if (pool > t->slots[k].pools) t->slots[k].pools = pool;
}

void mp_table_build(mp_table *t, const mp_program *p, const mp_options *o, const bool *reach,
                    const uint8_t *map_body, const mp_life *const *lives) {
    t->slots = NULL;
    t->n = 0;
    for (uint32_t gi = 0; gi < p->n_graphs; gi++) {
        if (!reach[gi]) continue;
        const mp_graphdef *g = &p->graphs[gi];
        mp_alloc_flags f = mp_context_flags(o, gi, map_body);
        for (uint32_t i = 0; i < g->n_tensors; i++)
            if (mp_life_is_planned(g, lives[gi], (int32_t)i, f))
                reg(t, o->per_device ? g->tensors[i].device : CPU0, mp_pool_of(g, (int32_t)i, o->per_device));
    }
    for (uint32_t a = 1; a < t->n; a++)
        for (uint32_t b = a; b > 0 && mp_device_cmp(t->slots[b].dev, t->slots[b - 1].dev) < 0; b--) {
            mp_slot tmp = t->slots[b];
            t->slots[b] = t->slots[b - 1];
            t->slots[b - 1] = tmp;
        }
    uint32_t base = 1;
    for (uint32_t k = 0; k < t->n; k++) {
        t->slots[k].base = base;
        base += t->slots[k].pools;
    }
}

int64_t mp_table_index(const mp_table *t, const mp_options *o, const mp_tensor *x) {
    int32_t k = mp_table_find(t, o->per_device ? x->device : CPU0);
    if (k < 0) return -1;
    return (int64_t)t->slots[k].base + (x->mem_id ? x->mem_id : 1) - 1;
}

bool mp_inplace_cut(const mp_graphdef *g, int32_t t, bool per_device) {
    int32_t b = g->tensors[t].inplace_base;
    return per_device && b >= 0 && !mp_device_eq(g->tensors[g->tensors[b].root].device, g->tensors[t].device);
}

int32_t mp_inplace_root(const mp_graphdef *g, int32_t t, bool per_device) {
    int32_t r = t;
    for (uint32_t steps = 0; g->tensors[r].inplace_base >= 0 && !mp_inplace_cut(g, r, per_device); steps++) {
        if (steps > g->n_tensors) return -1;
        r = g->tensors[g->tensors[r].inplace_base].root;
    }
    return r;
}

uint32_t mp_pool_of(const mp_graphdef *g, int32_t t, bool per_device) {
    int32_t r = mp_inplace_root(g, t, per_device);
    const mp_tensor *x = &g->tensors[r < 0 ? t : r];
    return x->mem_id ? x->mem_id : 1;
}

void mp_table_free(mp_table *t) {
    mp_xfree(t->slots);
    t->slots = NULL;
    t->n = 0;
}

/* Repair D8: a free after the last use of every dynamic tensor that is
 * neither a graph input (placeholder) nor a graph output. */
void mp_add_frees(const mp_graphdef *g, const mp_life *L, mp_graph_plan *gp, mp_arena *A) {
    uint32_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass) gp->frees = mp_arena_alloc(A, (n + 1) * sizeof *gp->frees);
        for (uint32_t t = 0; t < g->n_tensors; t++) {
            const mp_tensor *x = &g->tensors[t];
            if (x->root != (int32_t)t || !(x->flags & MP_T_DYNAMIC) || L->is_placeholder[t] ||
                L->is_output[t])
                continue;
            if (!pass) {
                n++;
                continue;
            }
            mp_free *fr = &gp->frees[gp->n_frees++];
            fr->name = x->name;
            fr->tensor = (int32_t)t;
            fr->after = L->end[t];
        }
    }
}

/* ExecuTorch refuses per-device planning when pre-assigned pools meet
 * non-CPU tensors (NotImplementedError in _partition_specs_by_device). */
int mp_check_pools_per_device(const mp_graphdef *g, const int32_t *specs, uint32_t n, mp_err *err) {
    bool non_cpu = false, pools = false;
    for (uint32_t i = 0; i < n; i++) {
        const mp_tensor *t = &g->tensors[specs[i]];
        non_cpu |= t->device.type != MP_DEV_CPU;
        pools |= t->mem_id != 0;
    }
    if (non_cpu && pools)
        return mp_err_set(err, MP_EPLAN,
                          "graph '%s': per-device planning cannot be combined with "
                          "pre-assigned mem_id pools (ExecuTorch raises NotImplementedError)",
                          g->name);
    return MP_OK;
}
