/* brute.c - the rules of a plan, checked the slow and obvious way.
 *
 * The rules, as docs and verify/ state them (numbers as enum mp_rule):
 *  8 consistency: the options line has alignment in 1..2^30 and 0/1 flags;
 *    every block names a graph the entry reaches, at most once, and every
 *    such graph has a block; a block has as many devices as buffers; every
 *    alloc and free names a tensor of its graph, at most once each; an
 *    alloc of a storage root has the root's lifetime (first and last node
 *    naming it or a view of it; placeholders from node 0; mutable buffers
 *    to the last node); a pinned tensor (at=) of the entry graph is
 *    allocated at its pin.
 *  1 completeness: exactly the tensors that must be planned are: not views,
 *    constants or dynamic tensors; in the entry graph not the inputs,
 *    outputs or mutable buffers the alloc flags exclude; in a sub-graph not
 *    its inputs unless a map/scan node runs it.
 *  2 size: size is the tensor's size rounded up to the alignment, the
 *    offset a multiple of it.
 *  3 bounds: under a memory map (banks=) the entry block's buffer i is at
 *    most bank i's capacity and none lies past the last bank.
 *    buffer 0 exists and is empty; an alloc lies in a buffer 1..n-1
 *    of its block, inside it, and inside the entry block's too.
 *  6 device: buffer 0 and, without per_device, every buffer is cpu:0; with
 *    per_device a sub-graph's buffer has the entry's device, and a tensor
 *    lies in a buffer of its own device.
 *  7 free: only dynamic tensors that are neither inputs nor outputs are
 *    freed, each exactly once, after its last use and within the graph.
 *  4 overlap: two allocations of one buffer that are live at a common node
 *    share no byte, unless they are in one in-place family (a connected
 *    component of in-place links).
 *  5 control flow: the memory of a sub-graph a control-flow node runs (its
 *    allocations and its own sub-graphs', whatever their lifetimes) shares
 *    no byte with a parent allocation live at that node.  And a cond's
 *    result used after the cond is the value its branch returned (D14):
 *    from the node after the cond to the result's last use, those bytes
 *    (the value's allocation; all of the branch's memory for a nested
 *    cond's result; the operand's allocation for a placeholder, the result
 *    then keeping the operand) share no byte with a parent allocation live
 *    then (but the operand's in-place family and cond results' own slots)
 *    nor with the memory of a sub-graph a node runs then.
 * Allocations that are unknown, duplicated or outside their block's buffers
 * take no part in rules 4 and 5. */
#include "brute.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NONE = -1 };

typedef struct facts {
    int32_t root[BF_MAX_TENSORS];
    bool ph[BF_MAX_TENSORS], ret[BF_MAX_TENSORS];
    int32_t first[BF_MAX_TENSORS], last[BF_MAX_TENSORS], fam[BF_MAX_TENSORS];
    int32_t alloc_t[BF_MAX_ALLOCS]; /* resolved tensor per alloc */
    bool kept[BF_MAX_ALLOCS];       /* known and the first for its tensor */
    bool wasted[BF_MAX_TENSORS];    /* planned, though the runtime binds it elsewhere */
} facts;

typedef struct bf {
    const mp_program *p;
    const mp_plan *pl;
    bf_result *out;
    bool reach[BF_MAX_GRAPHS], map_body[BF_MAX_GRAPHS];
    int32_t owner[BF_MAX_GRAPHS]; /* block index per graph */
    bool desc[BF_MAX_GRAPHS][BF_MAX_GRAPHS];
    const mp_graph_plan *entry;
    uint64_t align; /* 0: not usable */
    bool flag[4];
    facts f[BF_MAX_GRAPHS];
} bf;

static void found(bf *c, uint32_t rule, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void found(bf *c, uint32_t rule, const char *fmt, ...) {
    if (c->out->found[rule]++) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->out->first[rule], sizeof c->out->first[rule], fmt, ap);
    va_end(ap);
}

static bool same_dev(mp_device a, mp_device b) { return a.type == b.type && a.index == b.index; }
static bool is_cpu0(mp_device d) { return d.type == MP_DEV_CPU && d.index == 0; }

static int32_t graph_named(const mp_program *p, const char *name) {
    for (uint32_t g = 0; g < p->n_graphs; g++)
        if (strcmp(p->graphs[g].name, name) == 0) return (int32_t)g;
    return NONE;
}

static int32_t tensor_named(const mp_graphdef *g, const char *name) {
    for (uint32_t t = 0; t < g->n_tensors; t++)
        if (strcmp(g->tensors[t].name, name) == 0) return (int32_t)t;
    return NONE;
}

/* Graphs the entry reaches: relax until nothing changes. */
static void reachability(bf *c) {
    const mp_program *p = c->p;
    c->reach[0] = true;
    for (bool more = true; more;) {
        more = false;
        for (uint32_t g = 0; g < p->n_graphs; g++) {
            if (!c->reach[g]) continue;
            for (uint32_t i = 0; i < p->graphs[g].n_nodes; i++)
                for (int s = 0; s < 2; s++) {
                    int32_t h = p->graphs[g].nodes[i].sub[s];
                    if (h >= 0 && !c->reach[h]) c->reach[h] = more = true;
                }
        }
    }
    for (uint32_t g = 0; g < p->n_graphs; g++) {
        if (!c->reach[g]) continue;
        for (uint32_t i = 0; i < p->graphs[g].n_nodes; i++) {
            const mp_node *nd = &p->graphs[g].nodes[i];
            if ((nd->kind == MP_NODE_MAP || nd->kind == MP_NODE_SCAN) && nd->sub[0] >= 0)
                c->map_body[nd->sub[0]] = true;
        }
    }
}

/* desc[s][h]: graph s is h or runs it, directly or not (relaxed to a
 * fixed point; the parser rules out cycles, and the relaxation needs none
 * ruled out). */
static void descendants(bf *c) {
    const mp_program *p = c->p;
    for (uint32_t g = 0; g < p->n_graphs; g++) c->desc[g][g] = true;
    for (bool more = true; more;) {
        more = false;
        for (uint32_t g = 0; g < p->n_graphs; g++)
            for (uint32_t i = 0; i < p->graphs[g].n_nodes; i++)
                for (int k = 0; k < 2; k++) {
                    int32_t s = p->graphs[g].nodes[i].sub[k];
                    if (s < 0) continue;
                    for (uint32_t h = 0; h < p->n_graphs; h++)
                        if (c->desc[s][h] && !c->desc[g][h]) c->desc[g][h] = more = true;
                }
    }
}

static void graph_facts(bf *c, uint32_t gi) {
    const mp_graphdef *g = &c->p->graphs[gi];
    facts *f = &c->f[gi];
    uint32_t n = g->n_tensors;
    for (uint32_t t = 0; t < n; t++) {
        int32_t r = (int32_t)t;
        for (uint32_t steps = 0; g->tensors[r].view_base >= 0 && steps <= n; steps++)
            r = g->tensors[r].view_base;
        f->root[t] = r;
        f->ph[t] = f->ret[t] = false;
        f->first[t] = f->last[t] = NONE;
        f->fam[t] = (int32_t)t;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const mp_node *nd = &g->nodes[i];
        for (int side = 0; side < 2; side++) {
            const int32_t *v = side ? nd->out : nd->in;
            uint32_t k = side ? nd->n_out : nd->n_in;
            for (uint32_t j = 0; j < k; j++) {
                int32_t r = f->root[v[j]];
                if (f->first[r] == NONE || (int32_t)i < f->first[r]) f->first[r] = (int32_t)i;
                if ((int32_t)i > f->last[r]) f->last[r] = (int32_t)i;
                if (!side && nd->kind == MP_NODE_OUTPUT) f->ret[r] = true;
                if (side && nd->kind == MP_NODE_PLACEHOLDER && f->root[v[j]] == v[j]) f->ph[v[j]] = true;
            }
        }
    }
    for (uint32_t t = 0; t < n; t++) {
        if (!f->ph[t]) continue;
        f->first[t] = 0;
        if (g->tensors[t].flags & MP_T_MUTABLE) f->last[t] = (int32_t)g->n_nodes - 1;
    }
    /* families: propagate the smallest member index over the links */
    for (bool more = true; more;) {
        more = false;
        for (uint32_t t = 0; t < n; t++) {
            int32_t b = g->tensors[t].inplace_base;
            if (b < 0 || f->root[t] != (int32_t)t) continue;
            int32_t u = f->root[b];
            /* per-device, a base on another device shares no bytes */
            if (c->flag[3] && !same_dev(g->tensors[u].device, g->tensors[t].device)) continue;
            int32_t m = f->fam[t] < f->fam[u] ? f->fam[t] : f->fam[u];
            if (f->fam[t] != m || f->fam[u] != m) f->fam[t] = f->fam[u] = m, more = true;
        }
    }
}

static void options_and_blocks(bf *c) {
    const mp_plan *pl = c->pl;
    const mp_program *p = c->p;
    c->align = pl->raw_alignment >= 1 && pl->raw_alignment <= MP_MAX_ALIGNMENT ? pl->raw_alignment : 0;
    if (!c->align)
        found(c, MP_RULE_CONSISTENCY, "alignment=%llu out of range",
              (unsigned long long)pl->raw_alignment);
    for (int i = 0; i < 4; i++) {
        if (pl->raw_flags[i] > 1)
            found(c, MP_RULE_CONSISTENCY, "flag %d is %llu", i, (unsigned long long)pl->raw_flags[i]);
        c->flag[i] = pl->raw_flags[i] != 0;
    }
    for (uint32_t g = 0; g < p->n_graphs; g++) c->owner[g] = NONE;
    for (uint32_t b = 0; b < pl->n_graphs; b++) {
        int32_t g = graph_named(p, pl->graphs[b].name);
        if (g < 0) found(c, MP_RULE_CONSISTENCY, "block %s: no such graph", pl->graphs[b].name);
        else if (!c->reach[g]) found(c, MP_RULE_CONSISTENCY, "block %s: unreachable", pl->graphs[b].name);
        else if (c->owner[g] != NONE) found(c, MP_RULE_CONSISTENCY, "block %s twice", pl->graphs[b].name);
        else c->owner[g] = (int32_t)b;
    }
    for (uint32_t g = 0; g < p->n_graphs; g++)
        if (c->reach[g] && c->owner[g] == NONE)
            found(c, MP_RULE_CONSISTENCY, "graph %s has no block", p->graphs[g].name);
    c->entry = c->owner[0] != NONE ? &pl->graphs[c->owner[0]] : NULL;
}

static bool usable(const facts *f, const mp_graph_plan *b, uint32_t a) {
    return f->kept[a] && b->allocs[a].mem_id >= 1 && b->allocs[a].mem_id < b->n_buffers;
}

static void bounds_in(bf *c, const mp_alloc *a, const mp_graph_plan *in, const char *what) {
    if (a->mem_id >= in->n_buffers) {
        found(c, MP_RULE_BOUNDS, "%s: buffer %llu missing from %s", a->name,
              (unsigned long long)a->mem_id, what);
        return;
    }
    uint64_t cap = in->buffers[a->mem_id];
    if (a->offset > cap || a->size > cap - a->offset)
        found(c, MP_RULE_BOUNDS, "%s: [%llu,+%llu) outside buffer %llu (%llu) of %s", a->name,
              (unsigned long long)a->offset, (unsigned long long)a->size,
              (unsigned long long)a->mem_id, (unsigned long long)cap, what);
}

/* 8: which tensor each alloc names; duplicates and unknown names. */
static void brute_allocs(bf *c, uint32_t gi) {
    const mp_graphdef *g = &c->p->graphs[gi];
    const mp_graph_plan *b = &c->pl->graphs[c->owner[gi]];
    facts *f = &c->f[gi];
    for (uint32_t a = 0; a < b->n_allocs; a++) {
        int32_t t = tensor_named(g, b->allocs[a].name);
        f->alloc_t[a] = t;
        f->kept[a] = false;
        if (t < 0) {
            found(c, MP_RULE_CONSISTENCY, "%s: alloc of unknown %s", g->name, b->allocs[a].name);
            continue;
        }
        bool dup = false;
        for (uint32_t e = 0; e < a; e++) dup |= f->alloc_t[e] == t;
        if (dup) found(c, MP_RULE_CONSISTENCY, "%s: second alloc of %s", g->name, b->allocs[a].name);
        else f->kept[a] = true;
    }
}

/* 1: exactly the tensors the options plan are planned; one the runtime
 * binds to the caller's or the parent's memory, planned anyway, is only a
 * waste (a warning, not a violation). */
static void brute_completeness(bf *c, uint32_t gi) {
    const mp_graphdef *g = &c->p->graphs[gi];
    const mp_graph_plan *b = &c->pl->graphs[c->owner[gi]];
    facts *f = &c->f[gi];
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        const mp_tensor *x = &g->tensors[t];
        bool input = f->ph[t] && !(x->flags & MP_T_MUTABLE), excluded, bound_elsewhere = false;
        if (f->root[t] != (int32_t)t || (x->flags & (MP_T_CONST | MP_T_DYNAMIC))) excluded = true;
        else if (gi == 0)
            excluded = bound_elsewhere = (input && !c->flag[0]) || (f->ret[t] && !c->flag[1]) ||
                                         ((x->flags & MP_T_MUTABLE) && !c->flag[2]);
        else excluded = bound_elsewhere = input && !c->map_body[gi];
        bool planned = false;
        for (uint32_t a = 0; a < b->n_allocs; a++) planned |= f->kept[a] && f->alloc_t[a] == (int32_t)t;
        if (planned && bound_elsewhere) {
            f->wasted[t] = true;
            c->out->wasteful++;
        } else if (planned == excluded)
            found(c, MP_RULE_COMPLETENESS, "%s: %s %s", g->name, x->name,
                  planned ? "planned but must not be" : "not planned");
    }
}

/* 3 and 6: buffer 0 empty, buffers on the right devices. */
static void brute_buffers(bf *c, uint32_t gi) {
    const mp_graphdef *g = &c->p->graphs[gi];
    const mp_graph_plan *b = &c->pl->graphs[c->owner[gi]];
    /* 3 bounds, buffer 0 */
    if (b->n_buffers == 0) found(c, MP_RULE_BOUNDS, "%s: no buffers", g->name);
    else if (b->buffers[0] != 0) found(c, MP_RULE_BOUNDS, "%s: buffer 0 not empty", g->name);
    /* 6 devices of buffers */
    for (uint32_t i = 0; i < b->n_devices; i++) {
        mp_device d = b->devices[i];
        if ((!c->flag[3] || i == 0) && !is_cpu0(d))
            found(c, MP_RULE_DEVICE, "%s: buffer %u not cpu:0", g->name, i);
        else if (c->flag[3] && c->entry && b != c->entry && i < c->entry->n_devices &&
                 !same_dev(d, c->entry->devices[i]))
            found(c, MP_RULE_DEVICE, "%s: buffer %u differs from the entry's", g->name, i);
    }
}

/* 3: under a memory map the entry block's buffers within their banks. */
static void brute_capacity(bf *c, const mp_graph_plan *b) {
    const mp_banks *bk = &c->pl->opts.banks;
    for (uint32_t i = 1; bk->n && i < b->n_buffers; i++)
        if ((i > bk->n && b->buffers[i]) || (i <= bk->n && b->buffers[i] > bk->bank[i - 1].capacity))
            found(c, MP_RULE_BOUNDS, "buffer %u over its bank", i);
}

/* The in-place base t's bytes live in (through views), or NONE: per
 * device, a base on another device shares none. */
static int32_t inplace_of(const bf *c, const mp_graphdef *g, const facts *f, int32_t t) {
    int32_t b = g->tensors[t].inplace_base;
    if (b < 0 || f->root[t] != t) return NONE;
    if (c->flag[3] && !same_dev(g->tensors[f->root[b]].device, g->tensors[t].device)) return NONE;
    return f->root[b];
}

/* ExecuTorch since PR #21840 writes a base's lifetime stretched over every
 * tensor stored in it, transitively: is [s, e] t's range so stretched? */
static bool stretched_life(const bf *c, const mp_graphdef *g, const facts *f, int32_t t, int64_t s, int64_t e) {
    int32_t lo = f->first[t], hi = f->last[t];
    for (uint32_t u = 0; u < g->n_tensors; u++) { /* u's chain: does it pass through t? */
        int32_t v = inplace_of(c, g, f, (int32_t)u);
        for (uint32_t steps = 0; v != NONE && v != t && steps < g->n_tensors; steps++) v = inplace_of(c, g, f, v);
        if (v != t || f->first[u] == NONE) continue;
        if (lo == NONE || f->first[u] < lo) lo = f->first[u];
        if (f->last[u] > hi) hi = f->last[u];
    }
    return s == lo && e == hi;
}

/* 8: an in-place tensor sits in its base's buffer, at the base's offset
 * plus its offset= and where its base (a view) starts in the view's root. */
static void brute_storage(bf *c, const mp_graphdef *g, const mp_graph_plan *b, const facts *f, const mp_alloc *a,
                          int32_t t) {
    int32_t r = inplace_of(c, g, f, t);
    if (r == NONE) return;
    uint64_t at = g->tensors[t].offset;
    for (int32_t v = g->tensors[t].inplace_base; g->tensors[v].view_base >= 0; v = g->tensors[v].view_base)
        at += g->tensors[v].offset;
    for (uint32_t k = 0; k < b->n_allocs; k++) {
        if (!f->kept[k] || f->alloc_t[k] != r) continue;
        if (a->mem_id != b->allocs[k].mem_id || a->offset != b->allocs[k].offset + at)
            found(c, MP_RULE_CONSISTENCY, "%s: at %llu in buffer %llu, not %llu bytes into %s", a->name,
                  (unsigned long long)a->offset, (unsigned long long)a->mem_id, (unsigned long long)at,
                  b->allocs[k].name);
        return;
    }
}

/* 2, 3, 6, 8: each kept alloc's size, alignment, bounds, device, life. */
static void brute_alloc_rules(bf *c, uint32_t gi) {
    const mp_graphdef *g = &c->p->graphs[gi];
    const mp_graph_plan *b = &c->pl->graphs[c->owner[gi]];
    facts *f = &c->f[gi];
    for (uint32_t k = 0; k < b->n_allocs; k++) {
        if (!f->kept[k]) continue;
        const mp_alloc *a = &b->allocs[k];
        int32_t t = f->alloc_t[k];
        const mp_tensor *x = &g->tensors[t];
        if (c->align) { /* 2 */
            uint64_t want = (x->size + c->align - 1) / c->align * c->align;
            if (a->size != want) found(c, MP_RULE_SIZE, "%s: size %llu, want %llu", a->name,
                                       (unsigned long long)a->size, (unsigned long long)want);
            if (a->offset % c->align) found(c, MP_RULE_SIZE, "%s: offset %llu misaligned", a->name,
                                            (unsigned long long)a->offset);
        }
        if (a->mem_id == 0) { /* 3 */
            found(c, MP_RULE_BOUNDS, "%s: in buffer 0", a->name);
        } else {
            bounds_in(c, a, b, g->name);
            if (c->entry && b != c->entry) bounds_in(c, a, c->entry, "the entry block");
        }
        if (c->flag[3] && a->mem_id < b->n_devices && !same_dev(x->device, b->devices[a->mem_id]))
            found(c, MP_RULE_DEVICE, "%s: device differs from buffer %llu's", a->name,
                  (unsigned long long)a->mem_id);
        if (gi == 0 && (x->flags & MP_T_PINNED) && a->offset != x->at) /* 8 */
            found(c, MP_RULE_CONSISTENCY, "%s: at %llu, pinned at %llu", a->name,
                  (unsigned long long)a->offset, (unsigned long long)x->at);
        if (f->root[t] == t && !f->wasted[t] && (a->life_start != f->first[t] || a->life_end != f->last[t]) &&
            !stretched_life(c, g, f, t, a->life_start, a->life_end))
            found(c, MP_RULE_CONSISTENCY, "%s: life %lld,%lld, live %d..%d", a->name,
                  (long long)a->life_start, (long long)a->life_end, f->first[t], f->last[t]);
        brute_storage(c, g, b, f, a, t);
    }
}

/* 7: free lines exactly for the dynamic tensors, at their last use. */
static void brute_frees(bf *c, uint32_t gi) {
    const mp_graphdef *g = &c->p->graphs[gi];
    const mp_graph_plan *b = &c->pl->graphs[c->owner[gi]];
    facts *f = &c->f[gi];
    for (uint32_t k = 0; k < b->n_frees; k++) {
        const mp_free *fr = &b->frees[k];
        int32_t t = tensor_named(g, fr->name);
        if (t < 0) {
            found(c, MP_RULE_CONSISTENCY, "%s: free of unknown %s", g->name, fr->name);
            continue;
        }
        bool dup = false;
        for (uint32_t e = 0; e < k; e++) dup |= strcmp(b->frees[e].name, fr->name) == 0;
        if (dup) {
            found(c, MP_RULE_CONSISTENCY, "%s: second free of %s", g->name, fr->name);
            continue;
        }
        const mp_tensor *x = &g->tensors[t];
        bool must = f->root[t] == t && (x->flags & MP_T_DYNAMIC) && !f->ph[t] && !f->ret[t];
        if (!must) found(c, MP_RULE_FREE, "%s: %s may not be freed", g->name, fr->name);
        else if (fr->after < f->last[t]) found(c, MP_RULE_FREE, "%s: %s freed early", g->name, fr->name);
        else if (fr->after >= (int64_t)g->n_nodes) found(c, MP_RULE_FREE, "%s: %s freed late", g->name, fr->name);
    }
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        const mp_tensor *x = &g->tensors[t];
        if (f->root[t] != (int32_t)t || !(x->flags & MP_T_DYNAMIC) || f->ph[t] || f->ret[t]) continue;
        bool freed = false;
        for (uint32_t k = 0; k < b->n_frees; k++) freed |= strcmp(b->frees[k].name, x->name) == 0;
        if (!freed) found(c, MP_RULE_FREE, "%s: %s never freed", g->name, x->name);
    }
}

static void per_graph(bf *c, uint32_t gi) {
    const mp_graphdef *g = &c->p->graphs[gi];
    const mp_graph_plan *b = &c->pl->graphs[c->owner[gi]];
    if (b->n_devices != b->n_buffers)
        found(c, MP_RULE_CONSISTENCY, "%s: %u buffers, %u devices", g->name, b->n_buffers, b->n_devices);
    brute_allocs(c, gi);
    brute_completeness(c, gi);
    brute_buffers(c, gi);
    if (gi == 0) brute_capacity(c, b);
    brute_alloc_rules(c, gi);
    brute_frees(c, gi);
}

/* An allocation taking part in rules 4 and 5 as a parent item. */
static bool item(const bf *c, uint32_t gi, uint32_t k, uint64_t *lo, uint64_t *hi) {
    const mp_graph_plan *b = &c->pl->graphs[c->owner[gi]];
    const facts *f = &c->f[gi];
    if (!usable(f, b, k) || !b->allocs[k].size) return false;
    int32_t t = f->alloc_t[k];
    if (f->root[t] != t || f->first[t] < 0) return false;
    *lo = b->allocs[k].offset;
    *hi = b->allocs[k].offset + b->allocs[k].size;
    if (*hi < *lo) *hi = UINT64_MAX;
    return true;
}

static void overlaps(bf *c, uint32_t gi) {
    const mp_graphdef *g = &c->p->graphs[gi];
    const mp_graph_plan *b = &c->pl->graphs[c->owner[gi]];
    const facts *f = &c->f[gi];
    for (uint32_t x = 0; x < b->n_allocs; x++) {
        uint64_t xl, xh;
        if (!item(c, gi, x, &xl, &xh)) continue;
        int32_t tx = f->alloc_t[x];
        /* 4: every later allocation */
        for (uint32_t y = x + 1; y < b->n_allocs; y++) {
            uint64_t yl, yh;
            if (!item(c, gi, y, &yl, &yh)) continue;
            int32_t ty = f->alloc_t[y];
            if (b->allocs[x].mem_id != b->allocs[y].mem_id || f->fam[tx] == f->fam[ty]) continue;
            if (xl < yh && yl < xh && f->first[tx] <= f->last[ty] && f->first[ty] <= f->last[tx])
                found(c, MP_RULE_OVERLAP, "%s: %s and %s overlap", g->name, b->allocs[x].name,
                      b->allocs[y].name);
        }
        /* 5: every allocation of every graph a node live with x runs */
        for (int32_t i = f->first[tx]; i <= f->last[tx] && i < (int32_t)g->n_nodes; i++)
            for (int s = 0; s < 2; s++) {
                int32_t sub = g->nodes[i].sub[s];
                if (sub < 0) continue;
                for (uint32_t h = 0; h < c->p->n_graphs; h++) {
                    if (c->owner[h] == NONE || !c->desc[sub][h]) continue;
                    const mp_graph_plan *hb = &c->pl->graphs[c->owner[h]];
                    for (uint32_t k = 0; k < hb->n_allocs; k++) {
                        const mp_alloc *a = &hb->allocs[k];
                        if (!usable(&c->f[h], hb, k) || !a->size || a->offset + a->size < a->offset)
                            continue;
                        if (a->mem_id == b->allocs[x].mem_id && a->offset < xh &&
                            xl < a->offset + a->size)
                            found(c, MP_RULE_CONTROL_FLOW, "%s: node %d runs %s, whose %s meets %s",
                                  g->name, i, c->p->graphs[sub].name, a->name, b->allocs[x].name);
                    }
                }
            }
    }
}

/* ------------------------------------------------ rule 5: cond results */

static int32_t placeholder_index(const mp_graphdef *g, int32_t t) {
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].kind == MP_NODE_PLACEHOLDER && g->nodes[i].out[0] == t) return (int32_t)i;
    return NONE;
}

static bool made_by_cond(const mp_graphdef *g, int32_t t) {
    for (uint32_t i = 0; i < g->n_nodes; i++)
        for (uint32_t j = 0; g->nodes[i].kind == MP_NODE_COND && j < g->nodes[i].n_out; j++)
            if (g->nodes[i].out[j] == t) return true;
    return false;
}

/* The value branch h returns as result i, as a root of h. */
static int32_t returned(const bf *c, int32_t h, uint32_t i) {
    const mp_graphdef *b = &c->p->graphs[h];
    return c->f[h].root[b->nodes[b->n_nodes - 1].in[i]];
}

/* keep[t]: the last node t's bytes are needed at, its own last use or a
 * cond result's that is t (through a branch's placeholder): a fixed point. */
static void keep_ends(const bf *c, uint32_t gi, int32_t *keep) {
    const mp_graphdef *g = &c->p->graphs[gi];
    const facts *f = &c->f[gi];
    for (uint32_t t = 0; t < g->n_tensors; t++) keep[t] = f->last[t];
    for (bool more = true; more;) {
        more = false;
        for (uint32_t n = 0; n < g->n_nodes; n++) {
            const mp_node *nd = &g->nodes[n];
            for (uint32_t i = 0; nd->kind == MP_NODE_COND && i < nd->n_out; i++) {
                int32_t r = nd->out[i];
                if (f->root[r] != r || keep[r] <= (int32_t)n) continue;
                for (int s = 0; s < 2; s++) {
                    int32_t h = nd->sub[s];
                    if (c->owner[h] == NONE) continue;
                    int32_t j = placeholder_index(&c->p->graphs[h], returned(c, h, i));
                    if (j == NONE) continue;
                    int32_t a = f->root[nd->in[1 + j]];
                    if (keep[r] > keep[a]) keep[a] = keep[r], more = true;
                }
            }
        }
    }
}

typedef struct kept_bytes {
    uint64_t buf, lo, hi;
    int32_t from, to, fam; /* nodes from..to; the operand's family or NONE */
} kept_bytes;

/* Bytes k of graph gi that must stay: every allocation live then, every
 * sub-graph a node runs then. */
static void must_stay(bf *c, uint32_t gi, const kept_bytes *k, const char *what) {
    const mp_graphdef *g = &c->p->graphs[gi];
    const mp_graph_plan *b = &c->pl->graphs[c->owner[gi]];
    const facts *f = &c->f[gi];
    for (uint32_t y = 0; y < b->n_allocs; y++) {
        uint64_t yl, yh;
        if (!item(c, gi, y, &yl, &yh) || b->allocs[y].mem_id != k->buf) continue;
        int32_t ty = f->alloc_t[y];
        if (f->fam[ty] == k->fam || made_by_cond(g, ty)) continue;
        if (yl < k->hi && k->lo < yh && f->first[ty] <= k->to && k->from <= f->last[ty])
            found(c, MP_RULE_CONTROL_FLOW, "%s: %s overwrites %s", g->name, b->allocs[y].name, what);
    }
    for (int32_t n = k->from; n <= k->to && n < (int32_t)g->n_nodes; n++)
        for (int s = 0; s < 2; s++) {
            int32_t sub = g->nodes[n].sub[s];
            for (uint32_t h = 0; sub >= 0 && h < c->p->n_graphs; h++) {
                if (c->owner[h] == NONE || !c->desc[sub][h]) continue;
                const mp_graph_plan *hb = &c->pl->graphs[c->owner[h]];
                for (uint32_t a = 0; a < hb->n_allocs; a++) {
                    const mp_alloc *x = &hb->allocs[a];
                    if (!usable(&c->f[h], hb, a) || !x->size || x->offset + x->size < x->offset) continue;
                    if (x->mem_id == k->buf && x->offset < k->hi && k->lo < x->offset + x->size)
                        found(c, MP_RULE_CONTROL_FLOW, "%s: node %d runs %s, whose %s overwrites %s",
                              g->name, n, c->p->graphs[sub].name, x->name, what);
                }
            }
        }
}

/* The bytes of alloc a of block b, kept from..to. */
static kept_bytes bytes_of(const mp_graph_plan *b, uint32_t a, int32_t from, int32_t to, int32_t fam) {
    const mp_alloc *x = &b->allocs[a];
    uint64_t hi = x->offset + x->size < x->offset ? UINT64_MAX : x->offset + x->size;
    return (kept_bytes){x->mem_id, x->offset, hi, from, to, fam};
}

/* Result r of cond node n, kept to e, is value v of branch h. */
static void result_bytes(bf *c, uint32_t gi, int32_t n, int32_t e, int32_t h, int32_t v, const char *what) {
    const mp_graphdef *g = &c->p->graphs[gi], *hg = &c->p->graphs[h];
    const mp_graph_plan *b = &c->pl->graphs[c->owner[gi]];
    int32_t j = placeholder_index(hg, v);
    if (j != NONE) { /* the operand */
        int32_t a = c->f[gi].root[g->nodes[n].in[1 + j]];
        for (uint32_t k = 0; k < b->n_allocs; k++)
            if (usable(&c->f[gi], b, k) && c->f[gi].alloc_t[k] == a && b->allocs[k].size) {
                kept_bytes kb = bytes_of(b, k, n + 1, e, c->f[gi].fam[a]);
                must_stay(c, gi, &kb, what);
            }
        return;
    }
    if (hg->tensors[v].flags & (MP_T_CONST | MP_T_DYNAMIC)) return;
    bool nested = made_by_cond(hg, v);
    for (uint32_t x = 0; x < c->p->n_graphs; x++) { /* nested: all of the branch's memory */
        if (c->owner[x] == NONE || !c->desc[h][x] || (!nested && x != (uint32_t)h)) continue;
        const mp_graph_plan *xb = &c->pl->graphs[c->owner[x]];
        for (uint32_t k = 0; k < xb->n_allocs; k++) {
            const mp_alloc *al = &xb->allocs[k];
            if (!usable(&c->f[x], xb, k) || !al->size) continue;
            if (nested ? al->offset + al->size < al->offset : c->f[x].alloc_t[k] != v) continue;
            kept_bytes kb = bytes_of(xb, k, n + 1, e, NONE);
            must_stay(c, gi, &kb, what);
        }
    }
}

static void cond_results(bf *c, uint32_t gi) {
    const mp_graphdef *g = &c->p->graphs[gi];
    int32_t keep[BF_MAX_TENSORS];
    keep_ends(c, gi, keep);
    for (uint32_t n = 0; n < g->n_nodes; n++) {
        const mp_node *nd = &g->nodes[n];
        for (uint32_t i = 0; nd->kind == MP_NODE_COND && i < nd->n_out; i++) {
            int32_t r = nd->out[i];
            if (c->f[gi].root[r] != r || keep[r] <= (int32_t)n) continue;
            char what[2 * MP_MAX_NAME + 64];
            snprintf(what, sizeof what, "%s, result of cond node %u", g->tensors[r].name, n);
            for (int s = 0; s < 2; s++)
                if (c->owner[nd->sub[s]] != NONE)
                    result_bytes(c, gi, (int32_t)n, keep[r], nd->sub[s], returned(c, nd->sub[s], i), what);
        }
    }
}

bool bf_check(const mp_program *prog, const mp_plan *plan, bf_result *out) {
    memset(out, 0, sizeof *out);
    if (prog->n_graphs > BF_MAX_GRAPHS) return false;
    for (uint32_t g = 0; g < prog->n_graphs; g++)
        if (prog->graphs[g].n_tensors > BF_MAX_TENSORS || prog->graphs[g].n_nodes > BF_MAX_NODES)
            return false;
    uint64_t allocs = 0, frees = 0;
    for (uint32_t b = 0; b < plan->n_graphs; b++) {
        allocs += plan->graphs[b].n_allocs;
        frees += plan->graphs[b].n_frees;
    }
    if (allocs > BF_MAX_ALLOCS || frees > BF_MAX_ALLOCS || plan->n_graphs > 4 * BF_MAX_GRAPHS)
        return false;
    bf *c = mp_xcalloc(1, sizeof *c);
    if (!c) abort();
    c->p = prog;
    c->pl = plan;
    c->out = out;
    reachability(c);
    descendants(c);
    options_and_blocks(c);
    for (uint32_t g = 0; g < prog->n_graphs; g++)
        if (c->owner[g] != NONE) graph_facts(c, g);
    for (uint32_t g = 0; g < prog->n_graphs; g++)
        if (c->owner[g] != NONE) per_graph(c, g);
    for (uint32_t g = 0; g < prog->n_graphs; g++)
        if (c->owner[g] != NONE) overlaps(c, g), cond_results(c, g);
    mp_xfree(c);
    return true;
}
