/* banks.c - the optimized planner over a memory map (--banks): bank i is
 * pool i; the entry graph's tensors without a pool of their own (no
 * mem_id=, no at=) start in bank 1, and each full bank keeps the families
 * that matter most and spills the rest to the next bank.  "Matter most"
 * is the spill order: by value (size x lifetime, a stand-in for how often
 * a tensor is touched: the default) or in program order (a plain fill, the
 * baseline the bench compares with).  Which prefix of that order fits is
 * found by bisection over full layouts of the bank, so a bank keeps as
 * much as opt's packer can fit, not as much as a first fit would.  What
 * must stay in a bank (mem_id=, at=, control-flow sub-graphs' memory) and
 * does not fit, and a last bank that overflows, are refusals that name
 * the bank, the bytes and what is live at its busiest node. */
#include "opt_internal.h"

#include <stdio.h>

/* The units that move between banks: the entry graph's families (a root
 * t >= 0) and, in a tree of graphs, the control-flow nodes of the entry
 * graph (-(i + 1)): a node's unit is the pool-1 memory of every graph
 * below it, which moves as one (its sub-graphs are laid out again). */
typedef struct spill {
    octx *c;
    int32_t *fam;       /* movable units, in keep order */
    uint32_t n;
    uint32_t *bank;     /* per tensor (roots): the bank it is in now */
    uint32_t *node_bank; /* per entry node (units): the bank its sub-graphs' memory is in */
} spill;

typedef struct ranked {
    uint64_t key;
    int32_t t;
} ranked;

static int cmp_ranked(const void *a, const void *b) {
    const ranked *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1; /* larger keys first */
    return (x->t > y->t) - (x->t < y->t);
}

/* The entry graph's control-flow nodes whose sub-graphs (a tree: each
 * reached by this node alone) need pool-1 bytes, as units into v, keyed by
 * the spill order; returns how many. */
static uint32_t node_units(spill *s, ranked *v) {
    const octx *c = s->c;
    const ograph *G = &c->g[0];
    const mp_graphdef *g = &c->prog->graphs[0];
    uint32_t n = 0;
    for (uint32_t j = 0; c->tree && j < G->n_cf; j++) {
        uint32_t i = G->cf_nodes[j];
        uint64_t need = 0;
        for (int k = 0; k < 2; k++)
            if (g->nodes[i].sub[k] >= 0 && c->g[g->nodes[i].sub[k]].local[1] > need)
                need = c->g[g->nodes[i].sub[k]].local[1];
        if (!need) continue;
        int32_t until = G->keep.node_end[i] > (int32_t)i ? G->keep.node_end[i] : (int32_t)i;
        uint64_t area;
        if (!mp_mul_u64(need, (uint64_t)(until - (int32_t)i) + 1, &area)) area = UINT64_MAX;
        s->node_bank[i] = 1;
        v[n++] = (ranked){c->o->spill_order == MP_SPILL_PROGRAM ? UINT64_MAX - i : area, -(int32_t)i - 1};
    }
    return n;
}

/* The entry graph's movable families (roots in pool 1, no at=), sorted by
 * the spill order: the first are kept longest. */
static void movable(spill *s) {
    const ograph *G = &s->c->g[0];
    const mp_graphdef *g = &s->c->prog->graphs[0];
    uint32_t nt = g->n_tensors;
    int32_t *lo = mp_xmalloc((nt + 1) * sizeof *lo), *hi = mp_xmalloc((nt + 1) * sizeof *hi);
    for (uint32_t t = 0; t < nt; t++) lo[t] = INT32_MAX, hi[t] = INT32_MIN;
    for (uint32_t i = 0; i < G->n_specs; i++) { /* each family's hull */
        int32_t t = G->specs[i], r = G->family[t];
        if (G->life.start[t] < lo[r]) lo[r] = G->life.start[t];
        if (G->keep.tensor_end[t] > hi[r]) hi[r] = G->keep.tensor_end[t];
    }
    ranked *v = mp_xmalloc((G->n_specs + G->n_cf + 1) * sizeof *v);
    s->n = 0;
    for (uint32_t i = 0; i < G->n_specs; i++) {
        int32_t t = G->specs[i];
        const mp_tensor *x = &g->tensors[t];
        if (G->family[t] != t || G->bidx[t] != 1 || x->mem_id || (x->flags & MP_T_PINNED)) continue;
        uint64_t area, len = (uint64_t)(hi[t] - lo[t]) + 1;
        if (!mp_mul_u64(G->asize[t], len, &area)) area = UINT64_MAX;
        uint64_t key = s->c->o->spill_order == MP_SPILL_PROGRAM ? UINT64_MAX - (uint64_t)(int64_t)lo[t] : area;
        v[s->n++] = (ranked){key, t};
    }
    s->n += node_units(s, v + s->n);
    qsort(v, s->n, sizeof *v, cmp_ranked);
    s->fam = mp_xmalloc((s->n + 1) * sizeof *s->fam);
    for (uint32_t i = 0; i < s->n; i++) s->fam[i] = v[i].t;
    mp_xfree(v);
    mp_xfree(lo);
    mp_xfree(hi);
}

/* Graph gi's pool-1 memory (tensors whose root names no pool) and that of
 * every graph below it, from bank `from` to bank `to`, children first, each
 * graph laid out again in both banks. */
static int move_graph(octx *c, int32_t gi, uint32_t from, uint32_t to) {
    const mp_graphdef *g = &c->prog->graphs[gi];
    int rc = MP_OK;
    for (uint32_t i = 0; i < g->n_nodes && rc == MP_OK; i++)
        for (int k = 0; k < 2 && rc == MP_OK; k++)
            if (g->nodes[i].sub[k] >= 0) rc = move_graph(c, g->nodes[i].sub[k], from, to);
    ograph *S = &c->g[gi];
    for (uint32_t i = 0; i < S->n_specs; i++) {
        int32_t t = S->specs[i];
        if (!g->tensors[S->family[t]].mem_id) S->bidx[t] = to;
    }
    mp_opt_index_buffers(S, S->n_buf);
    if (rc == MP_OK) rc = mp_opt_layout_buffer(c, (uint32_t)gi, from);
    if (rc == MP_OK) rc = mp_opt_layout_buffer(c, (uint32_t)gi, to);
    return rc;
}

/* Entry node i's sub-graphs' memory into bank `to` (a tree of graphs: no
 * other node runs them). */
static int move_node(spill *s, uint32_t i, uint32_t to) {
    uint32_t from = s->node_bank[i];
    if (from == to) return MP_OK;
    const mp_node *nd = &s->c->prog->graphs[0].nodes[i];
    int rc = MP_OK;
    for (int k = 0; k < 2 && rc == MP_OK; k++)
        if (nd->sub[k] >= 0) rc = move_graph(s->c, nd->sub[k], from, to);
    s->node_bank[i] = to;
    return rc;
}

/* Units fam[from..n) of bank b: those with stay[i - from] set stay in b,
 * the rest go to b + 1; bank b laid out again.  Returns whether it fits its
 * capacity (*rc set when a layout itself failed). */
static bool try_stay(spill *s, uint32_t b, uint32_t from, const uint8_t *stay, int *rc) {
    ograph *G = &s->c->g[0];
    *rc = MP_OK;
    for (uint32_t i = from; i < s->n && *rc == MP_OK; i++) {
        uint32_t to = stay[i - from] ? b : b + 1;
        if (s->fam[i] >= 0) s->bank[s->fam[i]] = to;
        else *rc = move_node(s, (uint32_t)(-s->fam[i] - 1), to);
    }
    if (*rc) return false;
    for (uint32_t i = 0; i < G->n_specs; i++) {
        int32_t t = G->specs[i], r = G->family[t];
        if (s->bank[r]) G->bidx[t] = s->bank[r];
    }
    mp_opt_index_buffers(G, G->n_buf);
    *rc = mp_opt_layout_buffer(s->c, 0, b);
    return *rc == MP_OK && G->local[b] <= s->c->o->banks.bank[b - 1].capacity;
}

/* The first `keep` of fam[from..n) stay, the rest go. */
static bool try_keep(spill *s, uint32_t b, uint32_t from, uint32_t keep, uint8_t *stay, int *rc) {
    for (uint32_t i = 0; i < s->n - from; i++) stay[i] = i < keep;
    return try_stay(s, b, from, stay, rc);
}

static int full_bank(spill *s, uint32_t b, bool last) {
    const mp_bank *k = &s->c->o->banks.bank[b - 1];
    mp_buf why;
    mp_buf_init(&why);
    mp_opt_busiest(s->c, b, &why);
    int rc = mp_err_set(s->c->err, MP_EPLAN,
                        "%s: bank '%s' (pool %u%s) needs %llu bytes and has %llu%s; %s",
                        s->c->prog->filename ? s->c->prog->filename : "<graph>", k->name, b,
                        last ? ", the last" : "", (unsigned long long)s->c->g[0].local[b],
                        (unsigned long long)k->capacity,
                        last ? ": the program does not fit the memory map"
                             : " for what must stay in it (mem_id=, at=, shared sub-graphs' memory)",
                        why.data ? why.data : "");
    mp_buf_free(&why);
    return rc;
}

/* Families tried one by one after the longest prefix: a later, smaller
 * family often fits beside what stays (each try is a layout of the bank). */
#define SPILL_TRIES 32

/* fam[from..n) reordered: the ones that stay in bank b first (stable). */
static void stay_first(spill *s, uint32_t from, const uint8_t *stay) {
    uint32_t m = s->n - from, k = 0;
    int32_t *v = mp_xmalloc((m + 1) * sizeof *v);
    for (uint32_t i = 0; i < m; i++)
        if (stay[i]) v[k++] = s->fam[from + i];
    for (uint32_t i = 0; i < m; i++)
        if (!stay[i]) v[k++] = s->fam[from + i];
    memcpy(s->fam + from, v, m * sizeof *v);
    mp_xfree(v);
}

/* Bank b keeps the longest prefix of fam[*from..n) that fits (bisection
 * over layouts), then up to SPILL_TRIES later families that still fit; the
 * rest moves on to bank b + 1, and *from past what b kept. */
static int fill_bank(spill *s, uint32_t b, uint32_t *from) {
    uint32_t m = s->n - *from;
    int rc = mp_opt_layout_buffer(s->c, 0, b); /* with what the bank before spilled into it */
    if (rc) return rc;
    if (s->c->g[0].local[b] <= s->c->o->banks.bank[b - 1].capacity) { /* fits: the rest stays */
        *from = s->n;
        return MP_OK;
    }
    uint8_t *stay = mp_xcalloc(m + 1, 1);
    uint32_t lo = 0, hi = m; /* keeping lo fits (checked next); keeping all (m) did not */
    bool ok = try_keep(s, b, *from, 0, stay, &rc);
    while (ok && hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (try_keep(s, b, *from, mid, stay, &rc)) lo = mid;
        else if (rc) ok = false;
        else hi = mid;
    }
    for (uint32_t i = 0; i < m; i++) stay[i] = i < lo;
    for (uint32_t i = lo + 1, tries = 0; ok && i < m && tries < SPILL_TRIES; i++, tries++) {
        stay[i] = 1;
        if (!try_stay(s, b, *from, stay, &rc)) stay[i] = 0;
        if (rc) ok = false;
    }
    if (ok && !try_stay(s, b, *from, stay, &rc)) ok = false;
    if (ok) {
        stay_first(s, *from, stay);
        for (uint32_t i = 0; i < m; i++) *from += stay[i];
    }
    mp_xfree(stay);
    return ok ? MP_OK : rc ? rc : full_bank(s, b, false);
}

/* Every pool a tensor names is a bank of the map. */
static int check_pools(const octx *c) {
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++) {
        if (!c->reach[gi]) continue;
        const mp_graphdef *g = &c->prog->graphs[gi];
        for (uint32_t t = 0; t < g->n_tensors; t++)
            if (g->tensors[t].mem_id > c->o->banks.n)
                return mp_err_set(c->err, MP_EPLAN, "%s:%d: tensor '%s' has mem_id=%u, but the memory map "
                                  "has %u bank%s", c->prog->filename ? c->prog->filename : "<graph>",
                                  g->tensors[t].line, g->tensors[t].name, g->tensors[t].mem_id,
                                  c->o->banks.n, c->o->banks.n == 1 ? "" : "s");
    }
    return MP_OK;
}

int mp_opt_spill(octx *c) {
    int rc = check_pools(c);
    if (rc) return rc;
    ograph *G = &c->g[0];
    uint32_t nb = c->o->banks.n;
    spill s = {c, NULL, 0, mp_xcalloc(c->prog->graphs[0].n_tensors + 1, sizeof *s.bank),
               mp_xcalloc(c->prog->graphs[0].n_nodes + 1, sizeof *s.node_bank)};
    movable(&s);
    uint32_t from = 0;
    for (uint32_t b = 1; b < nb && rc == MP_OK; b++) rc = fill_bank(&s, b, &from);
    if (rc == MP_OK && from < s.n) rc = mp_opt_layout_buffer(c, 0, nb); /* what reached the last bank */
    if (rc == MP_OK && G->local[nb] > c->o->banks.bank[nb - 1].capacity) rc = full_bank(&s, nb, true);
    mp_xfree(s.fam);
    mp_xfree(s.bank);
    mp_xfree(s.node_bank);
    return rc;
}
