/* pins.c - pinned offsets (a tensor's at=OFFSET, MP_T_PINNED): what every
 * planner shares about them.  A planner that places around pins (opt and
 * the peers over its driver) checks each pin's alignment and that no two
 * fixed regions overlap while both live; a planner without the notion (the
 * reference, as ExecuTorch has none) refuses the program with a limit
 * refusal, so that another planner may plan it. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

int32_t mp_pins_first(const mp_program *prog) {
    if (!prog->n_graphs) return -1;
    const mp_graphdef *g = &prog->graphs[0];
    for (uint32_t i = 0; i < g->n_tensors; i++)
        if (g->tensors[i].flags & MP_T_PINNED) return (int32_t)i;
    return -1;
}

int mp_pins_refuse(const mp_program *prog, const char *planner, mp_err *err) {
    int32_t t = mp_pins_first(prog);
    if (t < 0) return MP_OK;
    const mp_tensor *p = &prog->graphs[0].tensors[t];
    return mp_err_limit(err, "%s:%d: tensor '%s' is pinned (at=%llu) and planner '%s' has no pinned "
                        "offsets (ExecuTorch's planners have none): plan it with --algo opt",
                        prog->filename ? prog->filename : "<graph>", p->line, p->name,
                        (unsigned long long)p->at, planner);
}

int mp_pin_error(const mp_program *prog, int32_t t, mp_err *err, const char *fmt, ...) {
    const mp_tensor *p = &prog->graphs[0].tensors[t];
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return mp_err_set(err, MP_EPLAN, "%s:%d: tensor '%s' pinned at %llu: %s",
                      prog->filename ? prog->filename : "<graph>", p->line, p->name,
                      (unsigned long long)p->at, what);
}

/* ------------------------------------------- overlap of fixed rectangles */

/* A segment tree over the elementary byte segments between the regions'
 * ends: how many live regions cover each, with range add and range max. */
typedef struct segt {
    int32_t *mx, *lz;
} segt;

static void seg_add(segt *t, uint32_t k, uint32_t l, uint32_t r, uint32_t ql, uint32_t qr, int32_t v) {
    if (qr <= l || r <= ql) return;
    if (ql <= l && r <= qr) {
        t->mx[k] += v;
        t->lz[k] += v;
        return;
    }
    uint32_t m = l + (r - l) / 2;
    seg_add(t, 2 * k, l, m, ql, qr, v);
    seg_add(t, 2 * k + 1, m, r, ql, qr, v);
    int32_t a = t->mx[2 * k], b = t->mx[2 * k + 1];
    t->mx[k] = (a > b ? a : b) + t->lz[k];
}

static int32_t seg_max(const segt *t, uint32_t k, uint32_t l, uint32_t r, uint32_t ql, uint32_t qr) {
    if (qr <= l || r <= ql) return 0;
    if (ql <= l && r <= qr) return t->mx[k];
    uint32_t m = l + (r - l) / 2;
    int32_t a = seg_max(t, 2 * k, l, m, ql, qr), b = seg_max(t, 2 * k + 1, m, r, ql, qr);
    return (a > b ? a : b) + t->lz[k];
}

typedef struct keyed {
    uint64_t key;
    uint32_t i;
} keyed;

static int by_key(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The regions' indices sorted by start (by_end false) or by end, ties by
 * index (deterministic). */
static keyed *sorted(const mp_rect *r, uint32_t n, bool by_end) {
    keyed *v = mp_xmalloc((n + 1) * sizeof *v);
    for (uint32_t i = 0; i < n; i++) {
        int64_t k = by_end ? r[i].end : r[i].start;
        v[i] = (keyed){(uint64_t)(k - INT32_MIN), i}; /* order kept, never negative */
    }
    qsort(v, n, sizeof *v, by_key);
    return v;
}

/* Index of byte coordinate x among the sorted distinct coordinates. */
static uint32_t coord(const uint64_t *c, uint32_t m, uint64_t x) {
    uint32_t lo = 0, hi = m;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c[mid] <= x) lo = mid;
        else hi = mid;
    }
    return lo;
}

static bool rects_meet(const mp_rect *a, const mp_rect *b) {
    return a->start <= b->end && b->start <= a->end && a->lo < b->hi && b->lo < a->hi;
}

bool mp_rects_overlap(const mp_rect *r, uint32_t n, uint32_t *a, uint32_t *b) {
    uint64_t *c = mp_xmalloc((2 * (size_t)n + 1) * sizeof *c);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) c[m++] = r[i].lo, c[m++] = r[i].hi;
    keyed *tmp = mp_xmalloc((m + 1) * sizeof *tmp);
    for (uint32_t i = 0; i < m; i++) tmp[i] = (keyed){c[i], 0};
    qsort(tmp, m, sizeof *tmp, by_key);
    uint32_t u = 0;
    for (uint32_t i = 0; i < m; i++)
        if (!u || tmp[i].key != c[u - 1]) c[u++] = tmp[i].key;
    mp_xfree(tmp);
    segt t = {mp_xcalloc(4 * (size_t)u + 4, sizeof(int32_t)), mp_xcalloc(4 * (size_t)u + 4, sizeof(int32_t))};
    keyed *by_start = sorted(r, n, false), *by_end = sorted(r, n, true);
    uint8_t *live = mp_xcalloc(n + 1, 1);
    bool found = false;
    for (uint32_t k = 0, j = 0; k < n && !found; k++) {
        uint32_t i = by_start[k].i;
        for (; j < n && r[by_end[j].i].end < r[i].start; j++) /* ended before i starts */
            if (live[by_end[j].i]) {
                live[by_end[j].i] = 0;
                seg_add(&t, 1, 0, u, coord(c, u, r[by_end[j].i].lo), coord(c, u, r[by_end[j].i].hi), -1);
            }
        if (r[i].lo >= r[i].hi) continue; /* no bytes */
        uint32_t lo = coord(c, u, r[i].lo), hi = coord(c, u, r[i].hi);
        if (seg_max(&t, 1, 0, u, lo, hi) > 0) { /* some live region meets it: which (once) */
            for (uint32_t q = 0; q < n && !found; q++)
                if (live[q] && rects_meet(&r[q], &r[i])) *a = q < i ? q : i, *b = q < i ? i : q, found = true;
        }
        seg_add(&t, 1, 0, u, lo, hi, 1);
        live[i] = 1;
    }
    mp_xfree(c);
    mp_xfree(t.mx);
    mp_xfree(t.lz);
    mp_xfree(by_start);
    mp_xfree(by_end);
    mp_xfree(live);
    return found;
}
