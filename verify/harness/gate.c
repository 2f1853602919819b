/* gate.c - `memplan gate`: compare the latest harness run with a baseline
 * committed as a text SQL dump (results/baseline.sql; read and written by
 * verify/store/baseline.c), so that a planner change that makes any plan
 * worse cannot land unnoticed.
 *
 * A regression is: a plan that fails verification (or crashes), a plan
 * that is refused where the baseline planned, a graph that needs more
 * bytes than in the baseline, a baseline graph missing from the run, or a
 * mean ratio to the lower bound (per algorithm) that got worse.
 * --update rewrites the baseline from the latest run, sorted, so that its
 * diff shows exactly the rows that changed. */
#include "internal.h"
#include "memplan_tools.h"

#include <stdio.h>

static const mp_gate_row *find(const mp_gate_rows *b, const char *graph, const char *algo) {
    size_t lo = 0, hi = b->n; /* both lists are sorted by (graph, algo) */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(b->v[mid].graph, graph);
        if (!c) c = strcmp(b->v[mid].algo, algo);
        if (!c) return &b->v[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static int cmp_row(const void *a, const void *b) {
    const mp_gate_row *x = a, *y = b;
    int c = strcmp(x->graph, y->graph);
    return c ? c : strcmp(x->algo, y->algo);
}

typedef struct mean {
    char algo[16];
    double base, now;
    size_t n;
} mean;

static void regression(mp_buf *b, size_t *n, const char *what, const mp_gate_row *r, const char *detail) {
    if (!*n) mp_buf_printf(b, "%-16s %-22s %-7s %s\n", "regression", "graph", "algo", "detail");
    (*n)++;
    if (*n > 200) return;
    mp_buf_printf(b, "%-16s %-22s %-7s %s\n", what, r ? r->graph : "-", r ? r->algo : "-", detail);
}

static size_t compare(const mp_gate_rows *base, const mp_gate_rows *now, mp_buf *b) {
    size_t n = 0;
    char d[256];
    mean means[4];
    size_t nm = 0;
    for (size_t i = 0; i < now->n; i++) {
        const mp_gate_row *r = &now->v[i];
        if (strcmp(r->verify, "invalid") == 0 || strcmp(r->verify, "crash") == 0) {
            snprintf(d, sizeof d, "verification: %s", r->verify);
            regression(b, &n, "invalid", r, d);
        }
    }
    for (size_t i = 0; i < base->n; i++) {
        const mp_gate_row *o = &base->v[i], *r = find(now, o->graph, o->algo);
        if (!r) {
            regression(b, &n, "missing", o, "in the baseline, not in the latest run");
            continue;
        }
        if (strcmp(o->verify, "valid") == 0 && strcmp(r->verify, "refused") == 0)
            regression(b, &n, "refused", r, "planned in the baseline, refused now");
        if (strcmp(o->verify, "valid") || strcmp(r->verify, "valid")) continue;
        if (r->total > o->total) {
            snprintf(d, sizeof d, "%llu bytes, baseline %llu (+%llu)", (unsigned long long)r->total,
                     (unsigned long long)o->total, (unsigned long long)(r->total - o->total));
            regression(b, &n, "more-bytes", r, d);
        }
        size_t k = 0;
        while (k < nm && strcmp(means[k].algo, r->algo)) k++;
        if (k == nm && nm < 4) {
            memset(&means[nm], 0, sizeof means[nm]);
            snprintf(means[nm].algo, sizeof means[nm].algo, "%s", r->algo);
            nm++;
        }
        if (k < nm) { /* ratios from the exact byte counts, not the rounded dump */
            means[k].base += o->lower ? (double)o->total / (double)o->lower : 1.0;
            means[k].now += r->lower ? (double)r->total / (double)r->lower : 1.0;
            means[k].n++;
        }
    }
    for (size_t k = 0; k < nm; k++) {
        double mb = means[k].base / (double)means[k].n, mn = means[k].now / (double)means[k].n;
        if (mn > mb + 1e-9) {
            mp_gate_row r = {(char *)"(all)", means[k].algo, NULL, NULL, 0, 0, 0};
            snprintf(d, sizeof d, "mean ratio %.6f, baseline %.6f", mn, mb);
            regression(b, &n, "mean-ratio", &r, d);
        }
    }
    return n;
}

int mp_gate(mp_db *d, const char *baseline, bool update, mp_buf *out, bool *passed, mp_err *err) {
    *passed = false;
    mp_gate_rows now = {0}, base = {0};
    int rc = mp_db_gate_rows(d, &now, err);
    if (now.n) qsort(now.v, now.n, sizeof *now.v, cmp_row);
    if (rc == MP_OK && update) {
        mp_buf b;
        mp_buf_init(&b);
        mp_gate_dump(&now, &b);
        rc = mp_write_file_atomic(baseline, b.data, b.len, err);
        mp_buf_free(&b);
        if (rc == MP_OK) {
            mp_buf_printf(out, "gate: baseline %s rewritten from run %lld (%zu rows)\n", baseline,
                          (long long)now.run, now.n);
            *passed = true;
        }
    } else if (rc == MP_OK && (rc = mp_gate_load_baseline(baseline, &base, err)) == MP_OK) {
        if (base.n) qsort(base.v, base.n, sizeof *base.v, cmp_row);
        size_t n = compare(&base, &now, out);
        if (n > 200) mp_buf_printf(out, "... and %zu more\n", n - 200);
        *passed = n == 0;
        mp_buf_printf(out, "gate: %s: run %lld against %s: %zu rows compared, %zu regression%s\n",
                      n ? "FAILED" : "passed", (long long)now.run, baseline, base.n, n,
                      n == 1 ? "" : "s");
    }
    mp_gate_rows_free(&now);
    mp_gate_rows_free(&base);
    return rc;
}
