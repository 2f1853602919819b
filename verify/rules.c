/* rules.c - the per-allocation rules: completeness (1), sizes and
 * alignment (2), bounds (3), devices (6), free points (7) and the plan's
 * consistency with its graph (8: lifetimes as written, pins, in-place
 * tensors in their base's storage). */
#include "verify.h"

#include <stdio.h>

/* Why a tensor must not be planned, or NULL when it must be.  *wasteful:
 * planning it anyway only wastes its bytes (the runtime binds it to the
 * caller's or the parent graph's memory and never touches the planned
 * bytes); otherwise (a view, a constant, a dynamic tensor) the runtime
 * would read it from the planned bytes, which is wrong. */
static const char *not_planned_reason(const vctx *c, uint32_t gi, int32_t t, bool *wasteful) {
    *wasteful = false;
    const mp_tensor *x = &c->prog->graphs[gi].tensors[t];
    const vgraph *vg = &c->vg[gi];
    if (x->root != t) return "a view, which shares its base's storage";
    if (x->flags & MP_T_CONST) return "a constant";
    if (x->flags & MP_T_DYNAMIC) return "dynamic (the runtime allocates it)";
    bool input = vg->placeholder[t] && !(x->flags & MP_T_MUTABLE);
    *wasteful = true;
    if (gi == 0) {
        if (input && !c->flags[0]) return "a graph input and alloc_inputs=0";
        if (vg->returned[t] && !c->flags[1]) return "a graph output and alloc_outputs=0";
        if ((x->flags & MP_T_MUTABLE) && !c->flags[2])
            return "a mutable buffer and alloc_mutable=0";
        return NULL;
    }
    if (input && !vg->map_body)
        return "an input of a graph that only cond/while nodes run";
    return NULL;
}

static void completeness(vctx *c, uint32_t gi) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    const int32_t *of = c->alloc_of[gi];
    const mp_graph_plan *gp = c->block_of[gi] >= 0 ? &c->plan->graphs[c->block_of[gi]] : NULL;
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        bool wasteful;
        const char *why = not_planned_reason(c, gi, (int32_t)t, &wasteful);
        vdetail d = {g->tensors[t].name, NULL, -1, {0}, {0}, 0, -1, -1};
        if (!why && of[t] < 0)
            mp_v_violation(c, g->name, MP_RULE_COMPLETENESS, "completeness", &d,
                        "completeness: tensor %s is not planned", g->tensors[t].name);
        else if (why && of[t] >= 0 && wasteful && gp)
            mp_v_warning(c, g->name, MP_RULE_COMPLETENESS, "completeness", &d, gp->allocs[of[t]].size,
                         "wasteful: tensor %s is planned though it is %s: %llu bytes the runtime never uses",
                         g->tensors[t].name, why, (unsigned long long)gp->allocs[of[t]].size);
        else if (why && of[t] >= 0)
            mp_v_violation(c, g->name, MP_RULE_COMPLETENESS, "completeness", &d,
                        "completeness: tensor %s must not be planned: it is %s",
                        g->tensors[t].name, why);
    }
}

static void sizes(vctx *c, uint32_t gi, const mp_alloc *a) {
    if (!c->alignment) return;
    const mp_tensor *t = &c->prog->graphs[gi].tensors[a->tensor];
    const char *gname = c->prog->graphs[gi].name;
    uint64_t want = mp_align_up(t->size, c->alignment);
    vdetail d = {a->name, NULL, (int64_t)a->mem_id, {a->offset, a->offset + a->size}, {0}, 1, -1, -1};
    if (a->size != want)
        mp_v_violation(c, gname, MP_RULE_SIZE, "size", &d,
                    "size: %s has size=%llu, but %llu bytes rounded up to %u is %llu",
                    a->name, (unsigned long long)a->size, (unsigned long long)t->size,
                    c->alignment, (unsigned long long)want);
    if (a->offset % c->alignment)
        mp_v_violation(c, gname, MP_RULE_SIZE, "alignment", &d,
                    "alignment: %s at offset %llu in buffer %llu is not a multiple of %u",
                    a->name, (unsigned long long)a->offset, (unsigned long long)a->mem_id,
                    c->alignment);
}

/* Under a memory map (the plan's banks=), the entry block's buffer b is
 * bank b: within its capacity, and no buffer past the last bank. */
static void capacities(vctx *c, const mp_graph_plan *gp) {
    const mp_banks *bk = &c->plan->opts.banks;
    for (uint32_t b = 1; bk->n && b < gp->n_buffers; b++) {
        vdetail d = {NULL, NULL, (int64_t)b, {0, gp->buffers[b]}, {0}, 1, -1, -1};
        if (b > bk->n && gp->buffers[b])
            mp_v_violation(c, gp->name, MP_RULE_BOUNDS, "capacity", &d,
                           "capacity: buffer %u holds %llu bytes, but the memory map has %u bank%s", b,
                           (unsigned long long)gp->buffers[b], bk->n, bk->n == 1 ? "" : "s");
        else if (b <= bk->n && gp->buffers[b] > bk->bank[b - 1].capacity)
            mp_v_violation(c, gp->name, MP_RULE_BOUNDS, "capacity", &d,
                           "capacity: buffer %u (bank '%s') holds %llu bytes, over its capacity %llu", b,
                           bk->bank[b - 1].name, (unsigned long long)gp->buffers[b],
                           (unsigned long long)bk->bank[b - 1].capacity);
    }
}

/* A pinned tensor (at=, entry graph) sits exactly at its pin. */
static void pinned(vctx *c, const mp_alloc *a) {
    const mp_tensor *t = &c->prog->graphs[0].tensors[a->tensor];
    if (!(t->flags & MP_T_PINNED) || a->offset == t->at) return;
    vdetail d = {a->name, NULL, (int64_t)a->mem_id, {a->offset, mp_sat_add_u64(a->offset, a->size)}, {0}, 1,
                 -1, -1};
    mp_v_violation(c, c->prog->graphs[0].name, MP_RULE_CONSISTENCY, "pin", &d,
                   "pin: %s is at offset %llu in buffer %llu, but line %d pins it at %llu", a->name,
                   (unsigned long long)a->offset, (unsigned long long)a->mem_id, t->line,
                   (unsigned long long)t->at);
}

/* Whether allocation a lies inside its buffer of plan `in` (the graph's
 * own, or the entry's when `entry`); the messages are made only for a
 * violation (formatting them for every allocation was 4% of verify's
 * time at 10^7 tensors). */
static void bounds_of(vctx *c, const mp_graphdef *g, const mp_alloc *a,
                      const mp_graph_plan *in, bool entry) {
    const char *gname = g->name;
    char who[MP_V_TENSOR_BUF], graph[300];
    const char *whose = entry ? "the entry graph (the runtime allocates only its buffers)" : graph;
    uint64_t end;
    bool wraps = !mp_add_u64(a->offset, a->size, &end);
    vdetail d = {a->name, NULL, (int64_t)a->mem_id, {a->offset, wraps ? UINT64_MAX : end},
                 {0}, 1, -1, -1};
    bool outside = a->mem_id >= in->n_buffers || wraps || end > in->buffers[a->mem_id];
    if (!outside) return;
    if (!entry) snprintf(graph, sizeof graph, "graph %s", gname);
    if (a->mem_id >= in->n_buffers) {
        mp_v_violation(c, gname, MP_RULE_BOUNDS, "bounds", &d,
                    "bounds: %s is in buffer %llu, but %s has only buffers 0..%d",
                    a->name, (unsigned long long)a->mem_id, whose, (int)in->n_buffers - 1);
        return;
    }
    char range[48];
    mp_v_range(range, sizeof range, a->offset, a->size);
    mp_v_violation(c, gname, MP_RULE_BOUNDS, "bounds", &d, "bounds: %s %s lies outside buffer %llu of %s (size %llu)",
                   mp_v_tensor(g, a, who, sizeof who), range, (unsigned long long)a->mem_id, whose,
                   (unsigned long long)in->buffers[a->mem_id]);
}

static void bounds(vctx *c, uint32_t gi, const mp_graph_plan *gp, const mp_alloc *a) {
    const char *gname = c->prog->graphs[gi].name;
    if (a->mem_id == 0) {
        vdetail d = {a->name, NULL, 0, {0}, {0}, 0, -1, -1};
        mp_v_violation(c, gname, MP_RULE_BOUNDS, "bounds", &d,
                    "bounds: %s is in buffer 0, which holds constants only", a->name);
        return;
    }
    bounds_of(c, &c->prog->graphs[gi], a, gp, false);
    if (c->entry && gp != c->entry) bounds_of(c, &c->prog->graphs[gi], a, c->entry, true);
}

static void devices_of_block(vctx *c, uint32_t gi, const mp_graph_plan *gp) {
    const char *gname = c->prog->graphs[gi].name;
    char d1[24], d2[24];
    for (uint32_t i = 0; i < gp->n_devices; i++) {
        mp_device d = gp->devices[i];
        bool cpu0 = d.type == MP_DEV_CPU && d.index == 0;
        vdetail det = {NULL, NULL, (int64_t)i, {0}, {0}, 0, -1, -1};
        if ((!c->flags[3] || i == 0) && !cpu0)
            mp_v_violation(c, gname, MP_RULE_DEVICE, "device", &det,
                        "device: buffer %u is %s, but %s", i, mp_device_str(d, d1),
                        i == 0 ? "buffer 0 (constants) is cpu:0"
                               : "without per_device every buffer is cpu:0");
        else if (c->flags[3] && c->entry && gp != c->entry && i < c->entry->n_devices &&
                 !mp_device_eq(d, c->entry->devices[i]))
            mp_v_violation(c, gname, MP_RULE_DEVICE, "device", &det,
                        "device: buffer %u is %s here but %s in the entry graph", i,
                        mp_device_str(d, d1), mp_device_str(c->entry->devices[i], d2));
    }
}

static void device_of_alloc(vctx *c, uint32_t gi, const mp_graph_plan *gp, const mp_alloc *a) {
    if (!c->flags[3] || a->mem_id >= gp->n_devices) return;
    const mp_tensor *t = &c->prog->graphs[gi].tensors[a->tensor];
    mp_device bd = gp->devices[a->mem_id];
    char d1[24], d2[24];
    if (!mp_device_eq(t->device, bd)) {
        vdetail d = {a->name, NULL, (int64_t)a->mem_id, {a->offset, a->offset + a->size}, {0}, 1, -1, -1};
        mp_v_violation(c, c->prog->graphs[gi].name, MP_RULE_DEVICE, "device", &d,
                    "device: %s (%s) lies in buffer %llu, a %s buffer", a->name,
                    mp_device_str(t->device, d1), (unsigned long long)a->mem_id,
                    mp_device_str(bd, d2));
    }
}

/* An in-place tensor lives in its base's storage: in the base's buffer, at
 * the base's offset plus its own offset= (mp_inplace_link), when the base
 * is planned in the same block.  Across devices (per_device) it has bytes
 * of its own (mp_inplace_cut). */
static void storage(vctx *c, uint32_t gi, const mp_graph_plan *gp, const mp_alloc *a) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    const mp_tensor *t = &g->tensors[a->tensor];
    if (t->inplace_base < 0 || mp_inplace_cut(g, a->tensor, c->flags[3] != 0)) return;
    int32_t r = g->tensors[t->inplace_base].root, k = c->alloc_of[gi][r];
    if (k < 0) return;
    const mp_alloc *b = &gp->allocs[k];
    uint64_t link = mp_inplace_link(g, a->tensor), want = mp_sat_add_u64(b->offset, link);
    if (a->mem_id == b->mem_id && a->offset == want) return;
    vdetail d = {a->name, b->name, (int64_t)a->mem_id, {a->offset, mp_sat_add_u64(a->offset, a->size)},
                 {b->offset, mp_sat_add_u64(b->offset, b->size)}, 2, -1, -1};
    mp_v_violation(c, g->name, MP_RULE_CONSISTENCY, "storage", &d,
                   "storage: %s is at offset %llu in buffer %llu, but it is in-place in %s's storage: offset %llu "
                   "in buffer %llu", a->name, (unsigned long long)a->offset, (unsigned long long)a->mem_id,
                   b->name, (unsigned long long)want, (unsigned long long)b->mem_id);
}

/* Whether a's life is t's stretched over the tensors stored in it, as
 * ExecuTorch writes a storage base's back since PR #21840 (so
 * `--et-upstream 21840` does). */
static bool stretched_life(vctx *c, uint32_t gi, const mp_alloc *a) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    vgraph *vg = &c->vg[gi];
    if (!mp_graph_has_inplace(g)) return false;
    if (!vg->stretched) {
        vg->stretched = mp_xmalloc(2 * ((size_t)g->n_tensors + 1) * sizeof *vg->stretched);
        mp_storage_lives(g, c->flags[3] != 0, vg->first, vg->last, vg->stretched, vg->stretched + g->n_tensors);
    }
    return a->life_start == vg->stretched[a->tensor] && a->life_end == vg->stretched[g->n_tensors + a->tensor];
}

static void life_matches(vctx *c, uint32_t gi, const mp_alloc *a) {
    const vgraph *vg = &c->vg[gi];
    int32_t t = a->tensor;
    if (a->life_start == vg->first[t] && a->life_end == vg->last[t]) return;
    if (stretched_life(c, gi, a)) return;
    bool wasteful; /* an allocation the runtime never uses: its life is moot (D13) */
    if (not_planned_reason(c, gi, t, &wasteful) && wasteful) return;
    vdetail d = {a->name, NULL, -1, {0}, {0}, 0, vg->first[t], vg->last[t]};
    mp_v_violation(c, c->prog->graphs[gi].name, MP_RULE_CONSISTENCY, "life", &d,
                "consistency: %s has life=%lld,%lld but is live at nodes %d..%d",
                a->name, (long long)a->life_start, (long long)a->life_end,
                vg->first[t], vg->last[t]);
}

static bool must_free(const vctx *c, uint32_t gi, int32_t t) {
    const mp_tensor *x = &c->prog->graphs[gi].tensors[t];
    const vgraph *vg = &c->vg[gi];
    return x->root == t && (x->flags & MP_T_DYNAMIC) && !vg->placeholder[t] &&
           !vg->returned[t];
}

static void frees(vctx *c, uint32_t gi, const mp_graph_plan *gp) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    const vgraph *vg = &c->vg[gi];
    int32_t *freed = mp_xmalloc((g->n_tensors + 1) * sizeof *freed);
    for (uint32_t t = 0; t < g->n_tensors; t++) freed[t] = -1;
    for (uint32_t k = 0; k < gp->n_frees; k++) {
        const mp_free *f = &gp->frees[k];
        int32_t t = f->tensor;
        vdetail d = {f->name, NULL, -1, {0}, {0}, 0, f->after, -1};
        if (t < 0) {
            mp_v_violation(c, g->name, MP_RULE_CONSISTENCY, "unknown", &d,
                        "consistency: free of %s, which is not a tensor of graph %s "
                        "(plan line %d)", f->name, g->name, f->line);
            continue;
        }
        if (freed[t] >= 0) {
            mp_v_violation(c, g->name, MP_RULE_CONSISTENCY, "duplicate", &d,
                        "consistency: second free of %s (plan line %d)", f->name, f->line);
            continue;
        }
        freed[t] = (int32_t)k;
        if (!must_free(c, gi, t)) {
            mp_v_violation(c, g->name, MP_RULE_FREE, "free", &d,
                        "free: %s is freed, but only dynamic tensors that are neither "
                        "inputs nor outputs may be", f->name);
        } else if (f->after < vg->last[t]) {
            d.n1 = vg->last[t];
            mp_v_violation(c, g->name, MP_RULE_FREE, "free", &d,
                        "free: %s is freed after node %lld, before its last use at node %d",
                        f->name, (long long)f->after, vg->last[t]);
        } else if (f->after >= (int64_t)g->n_nodes) {
            mp_v_violation(c, g->name, MP_RULE_FREE, "free", &d,
                        "free: %s is freed after node %lld, but the graph's last node is %u",
                        f->name, (long long)f->after, g->n_nodes - 1);
        }
    }
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        if (!must_free(c, gi, (int32_t)t) || freed[t] >= 0) continue;
        vdetail d = {g->tensors[t].name, NULL, -1, {0}, {0}, 0, vg->last[t], -1};
        mp_v_violation(c, g->name, MP_RULE_FREE, "free", &d,
                    "free: dynamic tensor %s is never freed (last use at node %d)",
                    g->tensors[t].name, vg->last[t]);
    }
    mp_xfree(freed);
}

void mp_v_rules_structure(vctx *c) {
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++) {
        if (c->block_of[gi] < 0) continue;
        const mp_graph_plan *gp = &c->plan->graphs[c->block_of[gi]];
        const char *gname = c->prog->graphs[gi].name;
        completeness(c, gi);
        if (gp->n_buffers == 0)
            mp_v_violation(c, gname, MP_RULE_BOUNDS, "bounds", NULL,
                        "bounds: the block has no buffers (buffer 0 must exist)");
        else if (gp->buffers[0] != 0) {
            vdetail d = {NULL, NULL, 0, {0}, {0}, 0, -1, -1};
            mp_v_violation(c, gname, MP_RULE_BOUNDS, "bounds", &d,
                        "bounds: buffer 0 (constants) has size %llu; it must be 0",
                        (unsigned long long)gp->buffers[0]);
        }
        devices_of_block(c, gi, gp);
        if (gi == 0) capacities(c, gp);
        for (uint32_t k = 0; k < gp->n_allocs; k++) {
            const mp_alloc *a = &gp->allocs[k];
            if (a->tensor < 0 || c->alloc_of[gi][a->tensor] != (int32_t)k) continue;
            sizes(c, gi, a);
            if (gi == 0) pinned(c, a);
            bounds(c, gi, gp, a);
            device_of_alloc(c, gi, gp, a);
            storage(c, gi, gp, a);
            if (c->prog->graphs[gi].tensors[a->tensor].root == a->tensor) life_matches(c, gi, a);
        }
        frees(c, gi, gp);
    }
}
