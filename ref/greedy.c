/* greedy.c - ExecuTorch's `greedy` memory planning algorithm.
 *
 * Specs are sorted by allocated size, largest first (bisect.insort keeps
 * equal keys in insertion order, and the list is then reversed, so equal
 * keys come out last-inserted first).  Each spec goes into the first shared
 * object none of whose allocations it overlaps in time (offset 0); failing
 * that, into the first object with room above every allocation it overlaps
 * (pick_shared_obj's overlapping-allocations pass); failing that, into a new
 * object of its own size.  Objects are laid out one after another after the
 * sub-graph reservation.  In-place specs are resolved last, at their base's
 * offset.
 *
 * The sort key is the size rounded to the spec's *current* alignment,
 * which is 16 until a planning realigns it (ExecuTorch's TensorSpec
 * starts at 16): a sub-graph planned twice sorts differently the second
 * time, and the reference reproduces that through p->realigned. */
#include "greedy_index.h"

#include <stdio.h>

typedef struct sobj {
    uint32_t pool, idx; /* local mem_id, index among that pool's objects */
    uint64_t size, offset;
    uint32_t *allocs; /* spec positions */
    uint32_t n, cap;
} sobj;

typedef struct gctx {
    const ref_part *p;
    uint32_t n;
    uint32_t *order;      /* spec positions in processing order */
    uint64_t *size;       /* aligned size per position */
    uint32_t *pool;
    int32_t *ls, *le;     /* effective lifetimes used for placement */
    int32_t *base;        /* in-place: position of the base's root, -1 */
    uint32_t *fam;        /* position of the end of its in-place chain */
    int32_t *obj_of;      /* sobj index per position, -1 */
    uint64_t *off_in_obj;
    sobj *objs;
    uint32_t n_objs, cap_objs;
    uint32_t **pool_objs; /* per pool: sobj indices in creation order */
    uint32_t *pool_n, *pool_cap;
    uint32_t max_pool;
    gx_index ix;  /* the objects indexed (greedy_index.c) while placing */
    bool indexed; /* every lifetime an interval: the index answers pick */
    mp_err *err;
} gctx;

static bool overlap(int32_t s1, int32_t e1, int32_t s2, int32_t e2) {
    return !(e1 < s2 || s1 > e2);
}

/* Position pos joins object k (its offset in it already set). */
static void obj_add(gctx *c, uint32_t k, uint32_t pos) {
    sobj *o = &c->objs[k];
    MP_VEC_PUSH(o->allocs, o->n, o->cap, pos);
    if (c->indexed)
        mp_gx_add(&c->ix, k, o->pool, o->idx, o->size, pos, c->ls[pos], c->le[pos], c->off_in_obj[pos], c->size[pos]);
}

static uint32_t new_obj(gctx *c, uint32_t pool, uint64_t size) {
    if (c->n_objs == c->cap_objs) {
        c->cap_objs = c->cap_objs ? c->cap_objs * 2 : 16;
        c->objs = mp_xrealloc(c->objs, c->cap_objs * sizeof *c->objs);
    }
    uint32_t k = c->n_objs++;
    sobj *o = &c->objs[k];
    memset(o, 0, sizeof *o);
    o->pool = pool;
    o->idx = c->pool_n[pool];
    o->size = size;
    MP_VEC_PUSH(c->pool_objs[pool], c->pool_n[pool], c->pool_cap[pool], k);
    return k;
}

/* Position i into object k at offset off. */
static int put(gctx *c, uint32_t i, uint32_t k, uint64_t off) {
    c->obj_of[i] = (int32_t)k;
    c->off_in_obj[i] = off;
    obj_add(c, k, i);
    return MP_OK;
}

/* Whether any allocation of object k is live with position i. */
static bool meets(const gctx *c, uint32_t k, uint32_t i) {
    if (c->indexed) return mp_gx_meets(&c->ix, k, c->ls[i], c->le[i]);
    const sobj *o = &c->objs[k];
    for (uint32_t a = 0; a < o->n; a++)
        if (overlap(c->ls[i], c->le[i], c->ls[o->allocs[a]], c->le[o->allocs[a]])) return true;
    return false;
}

/* The largest offset + size of object k's allocations live with i; 0: none. */
static uint64_t top(const gctx *c, uint32_t k, uint32_t i) {
    if (c->indexed) return mp_gx_top(&c->ix, k, c->ls[i], c->le[i]);
    const sobj *o = &c->objs[k];
    uint64_t max_off = 0;
    for (uint32_t a = 0; a < o->n; a++) {
        uint32_t j = o->allocs[a];
        if (!overlap(c->ls[i], c->le[i], c->ls[j], c->le[j])) continue;
        uint64_t end = c->off_in_obj[j] + c->size[j];
        if (end > max_off) max_off = end;
    }
    return max_off;
}

/* The object among pool's first np that holds position i as it is: the
 * first none of whose allocations is live with it (offset 0), else the
 * first with room above those that are (at *off); -1 when none does.
 * sorted: pick_shared_obj's assertion that such a free object is large
 * enough (-2 when one is not); else a too-small object is no candidate
 * (_reusable_object, and repair D6). */
static int64_t reusable(const gctx *c, uint32_t pool, uint32_t np, uint32_t i, bool sorted, uint64_t *off) {
    const uint32_t *list = c->pool_objs[pool];
    *off = 0;
    for (uint32_t k = 0; k < np; k++) {
        if (meets(c, list[k], i)) continue;
        if (c->objs[list[k]].size >= c->size[i]) return list[k];
        if (sorted) return -2;
    }
    for (uint32_t k = 0; k < np; k++) {
        uint64_t max_off = top(c, list[k], i);
        if (max_off > 0 && max_off + c->size[i] <= c->objs[list[k]].size) {
            *off = max_off;
            return list[k];
        }
    }
    return -1;
}

/* pick_shared_obj for the spec at position i: the first object none of
 * whose allocations is live with it (offset 0), else the first with room
 * above those that are, else a new one.  When every allocation of the
 * pool is live with it, no object is free and the first with room is the
 * index's answer (greedy_index.c). */
static int pick(gctx *c, uint32_t i) {
    uint32_t pool = c->pool[i], np = c->pool_n[pool];
    uint32_t *list = c->pool_objs[pool];
    uint64_t size = c->size[i];
    if (c->indexed && mp_gx_all_meet(&c->ix, pool, c->ls[i], c->le[i])) {
        int64_t k = mp_gx_first_room(&c->ix, pool, size);
        if (k >= 0) return put(c, i, list[k], c->ix.height[list[k]]);
        np = 0; /* none: a new object */
    }
    uint64_t off;
    int64_t k = reusable(c, pool, np, i, c->p->et, &off);
    if (k == -2)
        return mp_err_set(c->err, MP_EPLAN,
                          "ExecuTorch's greedy fails its assertion "
                          "\"Allocation specs are not sorted\" at tensor "
                          "'%s' (alignment %u below 16 makes sizes that "
                          "sort equal differ)",
                          c->p->g->tensors[c->p->specs[i]].name,
                          c->p->alignment);
    if (k >= 0) return put(c, i, (uint32_t)k, off);
    return put(c, i, new_obj(c, pool, size), 0);
}

/* ExecuTorch's _resolve_inplace_specs resolves the deferred specs in
 * passes: a spec resolves in the pass where its base is placed (earlier in
 * the same pass counts), and a pass without progress is an error naming
 * the first spec left.  pass_of gives each spec its pass in one walk per
 * chain (O(n) where the passes themselves are O(n^2) on a reversed chain);
 * UINT32_MAX: never (base not placed, or a cycle). */
static void pass_of(const gctx *c, const uint32_t *deferred, uint32_t nd, uint32_t *pass) {
    int32_t *at = mp_xmalloc((c->n + 1) * sizeof *at); /* deferred index of a position */
    uint32_t *path = mp_xmalloc((nd + 1) * sizeof *path);
    uint8_t *state = mp_xcalloc(nd + 1, 1); /* 0 new, 1 on this walk, 2 done */
    for (uint32_t i = 0; i < c->n; i++) at[i] = -1;
    for (uint32_t k = 0; k < nd; k++) at[deferred[k]] = (int32_t)k;
    for (uint32_t k0 = 0; k0 < nd; k0++) {
        uint32_t len = 0, k = k0, p;
        for (;;) { /* down the chain to a placed base, a known pass or the end */
            state[k] = 1;
            path[len++] = k;
            int32_t b = c->base[deferred[k]];
            if (b < 0 || (at[b] < 0 && c->obj_of[b] < 0)) { p = UINT32_MAX; break; }
            if (at[b] < 0) { p = 0; break; } /* placed before any pass: base "pass 0" */
            if (state[at[b]] == 2) { p = pass[at[b]]; break; }
            if (state[at[b]] == 1) { p = UINT32_MAX; break; } /* a cycle */
            k = (uint32_t)at[b];
        }
        while (len--) { /* back up: a base later in the list costs one more pass */
            uint32_t j = path[len];
            int32_t b = c->base[deferred[j]];
            bool later = at[b] >= 0 && (uint32_t)at[b] > j;
            p = p == UINT32_MAX ? p : (at[b] < 0 ? 1 : p + later);
            pass[j] = p;
            state[j] = 2;
        }
    }
    mp_xfree(at);
    mp_xfree(path);
    mp_xfree(state);
}

typedef struct pass_key {
    uint32_t pass, k;
} pass_key;

static int cmp_pass(const void *a, const void *b) {
    const pass_key *x = a, *y = b;
    if (x->pass != y->pass) return x->pass < y->pass ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* One deferred spec onto its base's object, at its offset= in it (D12:
 * the repaired mode refuses one that does not fit in its base; ExecuTorch
 * checks that since PR #21840, and its snapshot has no offsets at all). */
static int resolve_one(gctx *c, uint32_t i) {
    int32_t b = c->base[i], t = c->p->specs[i];
    const mp_graphdef *g = c->p->g;
    uint64_t link = mp_inplace_link(g, t);
    bool upstream = c->p->et && (c->p->upstream & MP_UPSTREAM_21840);
    if (link && c->p->et && !upstream)
        return mp_err_set(c->err, MP_EPLAN, "in-place tensor '%s' at offset %llu of its base '%s': ExecuTorch "
                          "(cff6f4dd32) has no storage offsets; --et-upstream 21840 adds them",
                          g->tensors[t].name, (unsigned long long)link, g->tensors[g->tensors[t].inplace_base].name);
    if ((!c->p->et || upstream) &&
        mp_inplace_fits(g, t, c->size[i], c->size[b], c->off_in_obj[b], c->p->alignment, c->err))
        return c->err->code;
    c->pool[i] = c->pool[b];
    return put(c, i, (uint32_t)c->obj_of[b], c->off_in_obj[b] + link);
}

static int resolve_inplace(gctx *c, const uint32_t *deferred, uint32_t nd) {
    uint32_t *pass = mp_xmalloc((nd + 1) * sizeof *pass);
    pass_key *order = mp_xmalloc((nd + 1) * sizeof *order);
    pass_of(c, deferred, nd, pass);
    for (uint32_t k = 0; k < nd; k++) order[k] = (pass_key){pass[k], k};
    if (nd) qsort(order, nd, sizeof *order, cmp_pass); /* ExecuTorch's resolution order */
    int rc = MP_OK;
    for (uint32_t j = 0; j < nd && rc == MP_OK && order[j].pass != UINT32_MAX; j++)
        rc = resolve_one(c, deferred[order[j].k]);
    for (uint32_t k = 0; k < nd && rc == MP_OK; k++)
        if (pass[k] == UINT32_MAX) { /* the first spec a pass could not resolve */
            const mp_tensor *t = &c->p->g->tensors[c->p->specs[deferred[k]]];
            rc = mp_err_set(c->err, MP_EPLAN,
                            "in-place tensor '%s': its base '%s' is not planned "
                            "here, or the in-place chain is a cycle",
                            t->name, c->p->g->tensors[t->inplace_base].name);
        }
    mp_xfree(pass);
    mp_xfree(order);
    return rc;
}

static void reset_objects(gctx *c) {
    for (uint32_t k = 0; k < c->n_objs; k++) mp_xfree(c->objs[k].allocs);
    c->n_objs = 0;
    for (uint32_t pl = 0; pl <= c->max_pool; pl++) c->pool_n[pl] = 0;
    for (uint32_t i = 0; i < c->n; i++) c->obj_of[i] = -1;
}

static int place_all(gctx *c) {
    reset_objects(c);
    c->indexed = true; /* the index takes intervals: an inverted lifetime is scanned */
    for (uint32_t i = 0; i < c->n; i++) c->indexed &= c->ls[i] <= c->le[i];
    if (c->indexed) mp_gx_init(&c->ix, c->n, c->max_pool);
    uint32_t *deferred = mp_xmalloc((c->n + 1) * sizeof *deferred), nd = 0;
    int rc = MP_OK;
    for (uint32_t k = 0; k < c->n && rc == MP_OK; k++) {
        uint32_t i = c->order[k];
        int32_t t = c->p->specs[i];
        if (c->p->g->tensors[t].inplace_base >= 0 && !(c->p->cut && mp_inplace_cut(c->p->g, t, true)))
            deferred[nd++] = i;
        else
            rc = pick(c, i);
    }
    if (rc == MP_OK) rc = resolve_inplace(c, deferred, nd);
    mp_xfree(deferred);
    if (c->indexed) mp_gx_free(&c->ix);
    c->indexed = false;
    return rc;
}

/* ------------------------------------------------------ banked greedy */

/* ExecuTorch PR #21821 (exir/banked_memory_planning.py, BankedGreedy):
 * greedy over a memory map.  Pins (a mem_id set) go first, into their
 * bank by pick_shared_obj, charged against its capacity when they open an
 * object; then every other spec, largest first, into the first bank (in
 * the map's order) that holds it for free (_reusable_object: an object it
 * fits without growing) or has room for a new object; extra padding is
 * charged with a bank's first object.  memplan's map numbers its banks 1..n
 * in preference order and has no per-bank alignment (docs/deviations.md). */

typedef struct bank_use {
    uint64_t used[MP_MAX_BANKS + 1];
} bank_use;

static bool bank_takes(const gctx *c, const bank_use *u, uint32_t b, uint64_t cost) {
    uint64_t after;
    return mp_add_u64(u->used[b], cost, &after) && after <= c->p->banks->bank[b - 1].capacity;
}

/* _reusable_object: an object of bank b that holds position i as it is. */
static bool reuse_in(gctx *c, uint32_t b, uint32_t i) {
    uint64_t off;
    int64_t k = reusable(c, b, c->pool_n[b], i, false, &off);
    return k >= 0 && put(c, i, (uint32_t)k, off) == MP_OK;
}

static int place_pin(gctx *c, bank_use *u, uint32_t i) {
    const mp_banks *bk = c->p->banks;
    uint32_t b = c->pool[i], before;
    const char *name = c->p->g->tensors[c->p->specs[i]].name;
    if (b > bk->n)
        return mp_err_set(c->err, MP_EPLAN, "tensor '%s' has mem_id=%u, past the memory map's %u bank%s (ExecuTorch's "
                          "banked greedy lays such a pin out unbudgeted; memplan's map has no undeclared pools)",
                          name, b, bk->n, bk->n == 1 ? "" : "s");
    before = c->pool_n[b];
    int rc = pick(c, i);
    if (rc || c->pool_n[b] == before) return rc; /* rode along inside an object already there */
    uint64_t cost = c->size[i] + (c->pool_n[b] == 1 ? c->p->padding : 0);
    if (!bank_takes(c, u, b, cost))
        return mp_err_set(c->err, MP_EPLAN, "banked greedy: a %llu-byte buffer ('%s') is pinned to bank %s (mem_id=%u), "
                          "which has %llu of %llu bytes left; a pinned buffer has no fallback bank",
                          (unsigned long long)c->size[i], name, bk->bank[b - 1].name, b,
                          (unsigned long long)(bk->bank[b - 1].capacity - u->used[b]),
                          (unsigned long long)bk->bank[b - 1].capacity);
    u->used[b] += cost;
    return MP_OK;
}

static int place_free(gctx *c, bank_use *u, uint32_t i) {
    const mp_banks *bk = c->p->banks;
    for (uint32_t b = 1; b <= bk->n; b++) {
        c->pool[i] = b;
        if (reuse_in(c, b, i)) return MP_OK;
        uint64_t cost = c->size[i] + (c->pool_n[b] ? 0 : c->p->padding);
        if (bank_takes(c, u, b, cost)) {
            u->used[b] += cost;
            return put(c, i, new_obj(c, b, c->size[i]), 0);
        }
    }
    char left[MP_MAX_BANKS * (MP_MAX_BANK_NAME + 48)];
    size_t at = 0;
    for (uint32_t b = 1; b <= bk->n && at < sizeof left; b++)
        at += (size_t)snprintf(left + at, sizeof left - at, "%s%s %llu of %llu free", b > 1 ? ", " : "",
                               bk->bank[b - 1].name, (unsigned long long)(bk->bank[b - 1].capacity - u->used[b]),
                               (unsigned long long)bk->bank[b - 1].capacity);
    return mp_err_set(c->err, MP_EPLAN, "banked greedy: no bank can hold a %llu-byte buffer ('%s'): %s",
                      (unsigned long long)c->size[i], c->p->g->tensors[c->p->specs[i]].name, left);
}

static int place_banked(gctx *c) {
    reset_objects(c);
    c->indexed = false; /* scans: the reference as ExecuTorch writes it */
    bank_use u;
    memset(&u, 0, sizeof u);
    for (uint32_t b = 1; b <= c->p->banks->n; b++) u.used[b] = b < c->p->n_input ? c->p->input[b] : 0;
    for (uint32_t i = 0; i < c->n; i++)
        if (c->p->g->tensors[c->p->specs[i]].device.type != MP_DEV_CPU)
            return mp_err_set(c->err, MP_EPLAN, "banked greedy plans CPU tensors only ('%s' is not): a memory map "
                              "is one address space", c->p->g->tensors[c->p->specs[i]].name);
    uint32_t *deferred = mp_xmalloc((c->n + 1) * sizeof *deferred), nd = 0;
    int rc = MP_OK;
    for (int pass = 0; pass < 2 && rc == MP_OK; pass++) /* the pins, then the rest */
        for (uint32_t k = 0; k < c->n && rc == MP_OK; k++) {
            uint32_t i = c->order[k];
            const mp_tensor *t = &c->p->g->tensors[c->p->specs[i]];
            if (t->inplace_base >= 0) {
                if (pass) deferred[nd++] = i;
            } else if (!pass && t->mem_id) {
                rc = place_pin(c, &u, i);
            } else if (pass && !t->mem_id) {
                rc = place_free(c, &u, i);
            }
        }
    if (rc == MP_OK) rc = resolve_inplace(c, deferred, nd);
    mp_xfree(deferred);
    return rc;
}

/* _compute_total_sizes: lay each pool's objects out after its reservation. */
static int totals(gctx *c, ref_result *r) {
    const ref_part *p = c->p;
    uint32_t n_bufs = 0;
    for (uint32_t pl = 1; pl <= c->max_pool; pl++)
        if (c->pool_n[pl]) n_bufs = pl + 1;
    bool any = n_bufs > 0;
    if (p->banks && n_bufs < p->banks->n + 1) n_bufs = p->banks->n + 1; /* every declared bank */
    if (!p->et) { /* repair D1, D3: keep every reserved buffer, at least 2 */
        if (n_bufs < p->n_input) n_bufs = p->n_input;
        if (n_bufs < 2) n_bufs = 2;
    } else if (!any) {
        n_bufs = 2; /* ExecuTorch returns [0, 0], dropping the reservation */
    }
    r->bufs = mp_xcalloc(n_bufs, sizeof *r->bufs);
    r->n_bufs = n_bufs;
    for (uint32_t pl = 1; pl < n_bufs; pl++) {
        uint64_t reserved = pl < p->n_input ? p->input[pl] : 0;
        if (pl > c->max_pool || !c->pool_n[pl]) {
            if (!p->et || p->banks) r->bufs[pl] = reserved; /* repair D1, D3; a declared bank's reservation */
            continue;
        }
        bool fits = true;
        if (!p->et && reserved % p->alignment) /* repair D4: objects start aligned */
            fits = mp_add_u64(reserved, p->alignment - reserved % p->alignment, &reserved);
        uint64_t at = reserved;
        for (uint32_t k = 0; k < c->pool_n[pl] && fits; k++) {
            sobj *o = &c->objs[c->pool_objs[pl][k]];
            o->offset = at;
            fits = mp_add_u64(at, o->size, &at);
        }
        if (!fits || !mp_add_u64(at, p->padding, &r->bufs[pl]))
            return mp_err_limit(c->err, "graph '%s': buffer %u would not fit in 64 bits",
                              p->g->name, pl);
    }
    for (uint32_t i = 0; i < c->n; i++) {
        sobj *o = &c->objs[c->obj_of[i]];
        r->pool[i] = c->pool[i];
        r->obj[i] = o->idx;
        r->offset[i] = o->offset + c->off_in_obj[i];
        r->size[i] = c->size[i];
    }
    return MP_OK;
}

/* Family root of position i: the end of its chain of in-place bases
 * (computed once by families()). */
static uint32_t family(const gctx *c, uint32_t i) { return c->fam[i]; }

/* Every position's chain end (mp_chain_ends: O(n) for a chain of n).  A
 * cycle, which resolve_inplace refuses, maps each member to itself. */
static void families(gctx *c) {
    int32_t *end = mp_xmalloc((c->n + 1) * sizeof *end);
    mp_chain_ends(c->base, c->n, end);
    for (uint32_t i = 0; i < c->n; i++) c->fam[i] = end[i] < 0 ? i : (uint32_t)end[i];
    mp_xfree(end);
}

/* Repair D5: does an in-place spec, at its base's offset, share bytes with a
 * live tensor of another in-place family?  Marks both families.  In the
 * repaired mode an in-place spec lies inside its base, so inside its base's
 * object, and objects share no byte: only an object's own allocations can
 * conflict, and only in an object with two families. */
typedef struct by_start {
    int32_t start;
    uint32_t pos;
} by_start;

static int cmp_by_start(const void *a, const void *b) {
    const by_start *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Whether positions i and j (live together) conflict: one in-place, of
 * two families, sharing bytes. */
static bool pair_conflicts(const gctx *c, const ref_result *r, uint32_t i, uint32_t j) {
    if ((c->base[i] < 0 && c->base[j] < 0) || family(c, i) == family(c, j)) return false;
    return r->offset[i] < r->offset[j] + r->size[j] && r->offset[j] < r->offset[i] + r->size[i];
}

/* A sweep over the object's allocations by start, each checked against
 * those still live: the pairs live together, not all pairs. */
static bool object_conflicts(const gctx *c, const ref_result *r, const sobj *o, uint8_t *mark) {
    bool mixed = false, any = false;
    for (uint32_t k = 1; k < o->n && !mixed; k++) mixed = family(c, o->allocs[k]) != family(c, o->allocs[0]);
    if (!mixed) return false;
    by_start *v = mp_xmalloc((o->n + 1) * sizeof *v);
    uint32_t *live = mp_xmalloc((o->n + 1) * sizeof *live), n = 0, nl = 0;
    for (uint32_t a = 0; a < o->n; a++)
        if (r->size[o->allocs[a]])
            v[n++] = (by_start){c->p->life_start[c->p->specs[o->allocs[a]]], o->allocs[a]};
    qsort(v, n, sizeof *v, cmp_by_start);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = v[k].pos, kept = 0;
        for (uint32_t l = 0; l < nl; l++) { /* retire what ended before i starts */
            uint32_t j = live[l];
            if (c->p->life_end[c->p->specs[j]] < v[k].start) continue;
            live[kept++] = j;
            if (pair_conflicts(c, r, i, j)) mark[family(c, i)] = mark[family(c, j)] = 1, any = true;
        }
        nl = kept;
        live[nl++] = i;
    }
    mp_xfree(v);
    mp_xfree(live);
    return any;
}

static bool find_conflicts(const gctx *c, const ref_result *r, uint8_t *mark) {
    bool any = false;
    for (uint32_t k = 0; k < c->n_objs; k++) any |= object_conflicts(c, r, &c->objs[k], mark);
    return any;
}

/* Give each marked family root the hull of its members' lifetimes, so that
 * nothing is placed over the family's bytes while any member lives. */
static void extend_families(gctx *c, const uint8_t *mark) {
    for (uint32_t i = 0; i < c->n; i++) {
        uint32_t f = family(c, i);
        if (!mark[f]) continue;
        if (c->ls[i] < c->ls[f]) c->ls[f] = c->ls[i];
        if (c->le[i] > c->le[f]) c->le[f] = c->le[i];
    }
}

/* Sorted processing order: key descending, ties by insertion descending
 * (bisect.insort is stable ascending, then the list is reversed). */
typedef struct keyed {
    uint64_t key;
    uint32_t pos;
} keyed;

static int cmp_keyed(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return x->pos > y->pos ? -1 : (x->pos < y->pos);
}

static void setup(gctx *c, const ref_part *p, mp_err *err) {
    uint32_t n = p->n;
    memset(c, 0, sizeof *c);
    c->p = p;
    c->n = n;
    c->err = err;
    c->order = mp_xmalloc((n + 1) * sizeof *c->order);
    c->size = mp_xmalloc((n + 1) * sizeof *c->size);
    c->pool = mp_xmalloc((n + 1) * sizeof *c->pool);
    c->ls = mp_xmalloc((n + 1) * sizeof *c->ls);
    c->le = mp_xmalloc((n + 1) * sizeof *c->le);
    c->base = mp_xmalloc((n + 1) * sizeof *c->base);
    c->fam = mp_xmalloc((n + 1) * sizeof *c->fam);
    c->obj_of = mp_xmalloc((n + 1) * sizeof *c->obj_of);
    c->off_in_obj = mp_xcalloc(n + 1, sizeof *c->off_in_obj);
    c->max_pool = 1;
    for (uint32_t i = 0; i < n; i++) {
        const mp_tensor *t = &p->g->tensors[p->specs[i]];
        c->pool[i] = t->mem_id ? t->mem_id : 1;
        if (c->pool[i] > c->max_pool) c->max_pool = c->pool[i];
    }
    if (p->banks && p->banks->n > c->max_pool) c->max_pool = p->banks->n; /* pools a spec may spill to */
    c->pool_objs = mp_xcalloc(c->max_pool + 1, sizeof *c->pool_objs);
    c->pool_n = mp_xcalloc(c->max_pool + 1, sizeof *c->pool_n);
    c->pool_cap = mp_xcalloc(c->max_pool + 1, sizeof *c->pool_cap);
    /* position of each tensor in this partition, to find in-place bases */
    int32_t *pos = p->pos;
    for (uint32_t i = 0; i < n; i++) pos[p->specs[i]] = (int32_t)i;
    for (uint32_t i = 0; i < n; i++) {
        const mp_tensor *t = &p->g->tensors[p->specs[i]];
        bool own = p->cut && mp_inplace_cut(p->g, p->specs[i], true); /* repair: across devices */
        c->base[i] = t->inplace_base >= 0 && !own ? pos[p->g->tensors[t->inplace_base].root] : -1;
        c->ls[i] = p->life_start[p->specs[i]];
        c->le[i] = p->life_end[p->specs[i]];
        c->obj_of[i] = -1;
    }
    for (uint32_t i = 0; i < n; i++) pos[p->specs[i]] = -1;
    families(c);
    if (p->upstream & MP_UPSTREAM_21840) { /* a base lives as long as every dependant */
        uint8_t *all = mp_xmalloc(n + 1);
        memset(all, 1, n + 1);
        extend_families(c, all);
        mp_xfree(all);
    }
}

static void teardown(gctx *c) {
    reset_objects(c);
    for (uint32_t pl = 0; pl <= c->max_pool; pl++) mp_xfree(c->pool_objs[pl]);
    mp_xfree(c->pool_objs);
    mp_xfree(c->pool_n);
    mp_xfree(c->pool_cap);
    mp_xfree(c->objs);
    mp_xfree(c->order);
    mp_xfree(c->size);
    mp_xfree(c->pool);
    mp_xfree(c->ls);
    mp_xfree(c->le);
    mp_xfree(c->base);
    mp_xfree(c->fam);
    mp_xfree(c->obj_of);
    mp_xfree(c->off_in_obj);
}

int mp_ref_greedy(const ref_part *p, ref_result *r, mp_err *err) {
    gctx c;
    setup(&c, p, err);
    keyed *keys = mp_xmalloc((p->n + 1) * sizeof *keys);
    for (uint32_t i = 0; i < p->n; i++) {
        int32_t t = p->specs[i];
        /* PR #21616 aligns every spec before the algorithm runs.  Repair
         * D15: the repaired mode sorts every planning of a shared sub-graph
         * alike (as its first), so that each parent reserves the size of
         * the layout the plan keeps */
        uint64_t a = (p->et && p->realigned[t]) || (p->upstream & MP_UPSTREAM_21616) ? p->alignment : 16;
        keys[i] = (keyed){ref_align(p, p->g->tensors[t].size, a), i};
    }
    qsort(keys, p->n, sizeof *keys, cmp_keyed);
    for (uint32_t i = 0; i < p->n; i++) c.order[i] = keys[i].pos;
    mp_xfree(keys);
    /* spec.realign(alignment) as each spec is processed */
    for (uint32_t i = 0; i < p->n; i++) {
        int32_t t = p->specs[i];
        c.size[i] = ref_align(p, p->g->tensors[t].size, p->alignment);
        p->realigned[t] = 1;
    }
    mp_ref_result_init(r, p->n);
    int rc = p->banks ? place_banked(&c) : place_all(&c);
    if (rc == MP_OK) rc = totals(&c, r);
    for (uint32_t b = 1; rc == MP_OK && p->banks && b <= p->banks->n; b++) /* _check_capacity's backstop */
        if (b < r->n_bufs && r->bufs[b] > p->banks->bank[b - 1].capacity)
            rc = mp_err_set(err, MP_EPLAN, "banked greedy: bank %s needs %llu bytes but holds %llu",
                            p->banks->bank[b - 1].name, (unsigned long long)r->bufs[b],
                            (unsigned long long)p->banks->bank[b - 1].capacity);
    /* repair D5: re-place with conflicting families' lifetimes extended;
     * if that still conflicts, extend every family (then nothing can). */
    for (int round = 0; rc == MP_OK && !p->et && round < 2; round++) {
        uint8_t *mark = mp_xcalloc(p->n + 1, 1);
        if (!find_conflicts(&c, r, mark)) {
            mp_xfree(mark);
            break;
        }
        if (round == 1) memset(mark, 1, p->n + 1);
        extend_families(&c, mark);
        mp_xfree(mark);
        mp_xfree(r->bufs);
        r->bufs = NULL;
        rc = place_all(&c);
        if (rc == MP_OK) rc = totals(&c, r);
    }
    teardown(&c);
    return rc;
}

void mp_ref_result_init(ref_result *r, uint32_t n) {
    memset(r, 0, sizeof *r);
    r->pool = mp_xcalloc(n + 1, sizeof *r->pool);
    r->obj = mp_xcalloc(n + 1, sizeof *r->obj);
    r->offset = mp_xcalloc(n + 1, sizeof *r->offset);
    r->size = mp_xcalloc(n + 1, sizeof *r->size);
}

void mp_ref_result_free(ref_result *r) {
    mp_xfree(r->bufs);
    mp_xfree(r->pool);
    mp_xfree(r->obj);
    mp_xfree(r->offset);
    mp_xfree(r->size);
    memset(r, 0, sizeof *r);
}
