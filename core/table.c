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

/* Binary search: the slots are sorted by mp_device_cmp (invariant of
 * mp_table_build), so a program with 10^5 devices stays n log n. */
int32_t mp_table_find(const mp_table *t, mp_device d) {
    uint32_t lo = 0, hi = t->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = mp_device_cmp(t->slots[mid].dev, d);
        if (c == 0) return (int32_t)mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

static int cmp_slot(const void *a, const void *b) {
    const mp_slot *x = a, *y = b;
    int c = mp_device_cmp(x->dev, y->dev);
    return c ? c : (x->pools > y->pools) - (x->pools < y->pools);
}

/* Every (device, pool) some reachable graph plans, then sorted and merged:
 * a device's slot has its largest pool.  A tensor on the device of the
 * entry before it only raises that entry's pool: nearly every tensor of a
 * model, so the array holds a few entries, not one per tensor (at 10^7
 * tensors 160 MB, and as much again for the sort). */
void mp_table_build(mp_table *t, const mp_program *p, const mp_options *o, const bool *reach,
                    const uint8_t *map_body, const mp_life *const *lives) {
    mp_slot *all = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t gi = 0; gi < p->n_graphs; gi++) {
        if (!reach[gi]) continue;
        const mp_graphdef *g = &p->graphs[gi];
        mp_alloc_flags f = mp_context_flags(o, gi, map_body);
        int32_t *roots = mp_graph_has_inplace(g) ? mp_inplace_roots(g, o->per_device) : NULL;
        for (uint32_t i = 0; i < g->n_tensors; i++)
            if (mp_life_is_planned(g, lives[gi], (int32_t)i, f)) {
                mp_slot s = {o->per_device ? g->tensors[i].device : CPU0, mp_pool_of(g, roots, (int32_t)i), 0};
                if (n && mp_device_eq(all[n - 1].dev, s.dev)) {
                    if (s.pools > all[n - 1].pools) all[n - 1].pools = s.pools;
                    continue;
                }
                MP_VEC_PUSH(all, n, cap, s);
            }
        mp_xfree(roots);
    }
    if (n) qsort(all, n, sizeof *all, cmp_slot);
    /* the last of a device's run has its largest pool; kept in place (a
     * slot per device, 65,536 with as many devices: grown one at a time,
     * an allocator whose realloc moves copied O(n^2) bytes) */
    t->n = 0;
    for (size_t k = 0; k < n; k++)
        if (k + 1 == n || !mp_device_eq(all[k].dev, all[k + 1].dev)) all[t->n++] = all[k];
    t->slots = n ? mp_xrealloc(all, t->n * sizeof *t->slots) : NULL;
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

uint32_t mp_pool_of(const mp_graphdef *g, const int32_t *roots, int32_t t) {
    const mp_tensor *x = &g->tensors[!roots || roots[t] < 0 ? t : roots[t]];
    return x->mem_id ? x->mem_id : 1;
}

bool mp_inplace_cut(const mp_graphdef *g, int32_t t, bool per_device) {
    int32_t b = g->tensors[t].inplace_base;
    return per_device && b >= 0 && !mp_device_eq(g->tensors[g->tensors[b].root].device, g->tensors[t].device);
}

/* Every tensor's chain end at once: each chain is walked once, its members
 * then take the end found (-1 for a cycle), so a chain of n in-place
 * tensors costs O(n), not O(n^2). */
void mp_chain_ends(const int32_t *next, uint32_t n, int32_t *end) {
    uint32_t *path = mp_xmalloc((n + 1) * (sizeof *path + 1)); /* and the states, in one block */
    uint8_t *state = (uint8_t *)(path + n + 1); /* 0 new, 1 on the current walk, 2 done */
    memset(state, 0, n + 1);
    for (uint32_t i0 = 0; i0 < n; i0++) {
        uint32_t len = 0, i = i0;
        while (state[i] == 0) {
            state[i] = 1;
            path[len++] = i;
            if (next[i] < 0) break;
            i = (uint32_t)next[i];
        }
        int32_t e;
        if (state[i] == 2) e = end[i];                       /* joined a chain already done */
        else if (path[len - 1] == i && next[i] < 0) e = (int32_t)i; /* the chain ends here */
        else e = -1;                                         /* came back to the walk: a cycle */
        for (uint32_t k = 0; k < len; k++) end[path[k]] = e, state[path[k]] = 2;
    }
    mp_xfree(path);
}

int32_t *mp_inplace_roots(const mp_graphdef *g, bool per_device) {
    uint32_t n = g->n_tensors;
    int32_t *root = mp_xmalloc((n + 1) * sizeof *root);
    if (!mp_graph_has_inplace(g)) { /* no chains: each tensor its own root (most small graphs) */
        for (uint32_t t = 0; t < n; t++) root[t] = (int32_t)t;
        return root;
    }
    int32_t *next = mp_xmalloc((n + 1) * sizeof *next);
    for (uint32_t t = 0; t < n; t++) {
        const mp_tensor *x = &g->tensors[t];
        next[t] = x->inplace_base < 0 || mp_inplace_cut(g, (int32_t)t, per_device)
                      ? -1 : g->tensors[x->inplace_base].root;
    }
    mp_chain_ends(next, n, root);
    mp_xfree(next);
    return root;
}

uint64_t mp_inplace_link(const mp_graphdef *g, int32_t t) {
    const mp_tensor *x = &g->tensors[t];
    uint64_t link;
    if (x->inplace_base < 0) return 0;
    return mp_add_u64(x->offset, g->tensors[x->inplace_base].root_offset, &link) ? link : UINT64_MAX;
}

/* The next tensor of t's in-place chain (its base's root), -1 at the end,
 * and t's link to it. */
static int32_t shift_link(const mp_graphdef *g, uint32_t t, bool per_device, uint64_t *link) {
    const mp_tensor *x = &g->tensors[t];
    *link = 0;
    if (x->view_base >= 0 || x->inplace_base < 0 || mp_inplace_cut(g, (int32_t)t, per_device)) return -1;
    *link = mp_inplace_link(g, (int32_t)t);
    return g->tensors[x->inplace_base].root;
}

uint64_t *mp_inplace_shifts(const mp_graphdef *g, bool per_device) {
    uint32_t n = g->n_tensors;
    bool any = false;
    for (uint32_t t = 0; t < n && !any; t++) any = g->tensors[t].offset || g->tensors[t].root_offset;
    if (!any || !mp_graph_has_inplace(g)) return NULL;
    uint64_t *shift = mp_xmalloc((n + 1) * sizeof *shift), link;
    uint32_t *path = mp_xmalloc((n + 1) * sizeof *path);
    uint8_t *state = mp_xcalloc(n + 1, 1); /* 0 new, 1 on the current walk, 2 done */
    for (uint32_t i0 = 0; i0 < n; i0++) {
        uint32_t len = 0;
        for (int32_t i = (int32_t)i0; i >= 0 && state[i] == 0; i = shift_link(g, (uint32_t)i, per_device, &link)) {
            state[i] = 1;
            path[len++] = (uint32_t)i;
        }
        while (len--) { /* back up: each member sits its link above the next */
            uint32_t t = path[len];
            int32_t nx = shift_link(g, t, per_device, &link);
            uint64_t below = nx >= 0 && state[nx] == 2 ? shift[nx] : 0; /* a cycle: refused by the planners */
            if (nx < 0 || !mp_add_u64(link, below, &shift[t])) shift[t] = nx < 0 ? 0 : UINT64_MAX;
            state[t] = 2;
        }
    }
    mp_xfree(path);
    mp_xfree(state);
    return shift;
}

int mp_inplace_fits(const mp_graphdef *g, int32_t t, uint64_t size, uint64_t base_size, uint64_t base_at,
                    uint32_t alignment, mp_err *err) {
    uint64_t link, at;
    int32_t b = shift_link(g, (uint32_t)t, false, &link);
    const char *name = g->tensors[t].name, *base = g->tensors[b < 0 ? t : g->tensors[t].inplace_base].name;
    if (!link) {
        if (size <= base_size) return MP_OK;
        return mp_err_set(err, MP_EPLAN, "in-place tensor '%s' (aligned size %llu) is larger than its base '%s' (%llu)",
                          name, (unsigned long long)size, base, (unsigned long long)base_size);
    }
    if (!mp_add_u64(base_at, link, &at) || (alignment && at % alignment))
        return mp_err_set(err, MP_EPLAN, "in-place tensor '%s' at offset %llu of its base '%s': not a multiple of "
                          "the alignment %u", name, (unsigned long long)link, base, alignment);
    if (link > base_size || size > base_size - link)
        return mp_err_set(err, MP_EPLAN, "in-place tensor '%s' (aligned size %llu) at offset %llu does not fit in "
                          "its base '%s' (%llu)", name, (unsigned long long)size, (unsigned long long)link, base,
                          (unsigned long long)base_size);
    return MP_OK;
}

void mp_storage_lives(const mp_graphdef *g, bool per_device, const int32_t *start, const int32_t *end,
                      int32_t *ext_start, int32_t *ext_end) {
    uint32_t n = g->n_tensors, *kids = mp_xcalloc(n + 1, sizeof *kids), *queue = mp_xmalloc((n + 1) * sizeof *queue);
    int32_t *next = mp_xmalloc((n + 1) * sizeof *next);
    uint64_t link;
    for (uint32_t t = 0; t < n; t++) {
        ext_start[t] = start[t], ext_end[t] = end[t];
        next[t] = shift_link(g, t, per_device, &link);
        if (next[t] >= 0) kids[next[t]]++;
    }
    uint32_t head = 0, tail = 0;
    for (uint32_t t = 0; t < n; t++)
        if (!kids[t]) queue[tail++] = t;
    while (head < tail) { /* leaves first: a tensor's union is whole when its last child is done */
        uint32_t t = queue[head++];
        int32_t b = next[t];
        if (b < 0) continue;
        if (ext_start[t] >= 0 && (ext_start[b] < 0 || ext_start[t] < ext_start[b])) ext_start[b] = ext_start[t];
        if (ext_end[t] > ext_end[b]) ext_end[b] = ext_end[t];
        if (!--kids[b]) queue[tail++] = (uint32_t)b;
    }
    mp_xfree(kids);
    mp_xfree(queue);
    mp_xfree(next);
}

int32_t mp_inplace_root(const mp_graphdef *g, int32_t t, bool per_device) {
    int32_t r = t;
    for (uint32_t steps = 0; g->tensors[r].inplace_base >= 0 && !mp_inplace_cut(g, r, per_device); steps++) {
        if (steps > g->n_tensors) return -1;
        r = g->tensors[g->tensors[r].inplace_base].root;
    }
    return r;
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
