/* gate.c - `memplan gate`: compare the latest harness run with a baseline
 * committed as a text SQL dump (results/baseline.sql; read and written by
 * store/baseline.c), so that a planner change that makes any plan
 * worse cannot land unnoticed.
 *
 * A regression is: a plan that fails verification (or crashes), a plan
 * that is refused where the baseline planned, a graph that needs more
 * bytes than in the baseline, a baseline graph missing from the run, or a
 * mean ratio to the lower bound (per algorithm) that got worse.
 * --update rewrites the baseline from the latest run, sorted, so that its
 * diff shows exactly the rows that changed. */
#include "internal.h"
#include "harness.h"
#include "files.h"

#include <stdio.h>
#include <sys/stat.h>

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

typedef struct mean {
    char algo[16];
    double base, now;
    size_t n;
} mean;

static void regression(mp_buf *b, size_t *n, const char *what, const mp_gate_row *r, const char *detail) {
    if (!*n) mp_buf_printf(b, "%-16s %-22s %-7s %s\n", "regression", "graph", "algo", "detail");
    (*n)++;
    if (*n > 200) return;
    mp_buf g;
    mp_buf_init(&g);
    mp_buf_put_printable(&g, r ? r->graph : "-");
    mp_buf_put(&g, "", 1);
    mp_buf_printf(b, "%-16s %-22s %-7s %s\n", what, g.data, r ? r->algo : "-", detail);
    mp_buf_free(&g);
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

/* Like with like: a baseline is comparable only with a run of the same
 * harness command (seed, count, planners) by the same memplan version.
 * One line names every difference. */
static int same_run(const mp_gate_rows *base, const mp_gate_rows *now, const char *path, mp_err *err) {
    if (!base->options || !base->version)
        return mp_err_set(err, MP_EFORMAT, "%s records no harness run (an older baseline format); "
                          "rewrite it with `memplan gate --update`", path);
    char what[128] = "";
    if (base->seed != now->seed) strcat(what, ", seed");
    if (base->count != now->count) strcat(what, ", count");
    if (strcmp(base->options, now->options ? now->options : "")) strcat(what, ", options");
    if (strcmp(base->version, now->version ? now->version : "")) strcat(what, ", memplan version");
    if (!what[0]) return MP_OK;
    return mp_err_set(err, MP_EFORMAT,
                      "the baseline and run %lld differ in %s: %s is of `memplan harness %s` (memplan %s), "
                      "the run of `memplan harness %s` (memplan %s); run the baseline's command, or --update",
                      (long long)now->run, what + 2, path, base->options, base->version,
                      now->options ? now->options : "?", now->version ? now->version : "?");
}

typedef struct tally {
    size_t improved, regressed, changed, added, removed, unchanged;
} tally;

/* One row of the new baseline against the old one: improved (fewer
 * bytes, or planned where it was not), regressed, added or unchanged. */
static void tally_row(const mp_gate_row *o, const mp_gate_row *r, tally *t, mp_buf *b, size_t *shown) {
    const char *what;
    bool ov = o && strcmp(o->verify, "valid") == 0, rv = strcmp(r->verify, "valid") == 0;
    if (!o) what = "added", t->added++;
    else if (ov && rv && r->total < o->total) what = "improved", t->improved++;
    else if (ov && rv && r->total > o->total) what = "regressed", t->regressed++;
    else if (!ov && rv) what = "improved", t->improved++;
    else if (ov && !rv) what = "regressed", t->regressed++;
    else if (strcmp(o->verify, r->verify)) what = "changed", t->changed++;
    else {
        t->unchanged++;
        return;
    }
    if ((*shown)++ >= 200 || !o) return; /* an added row is listed only in the count */
    mp_buf_printf(b, "  %-9s %-22s %-7s %llu bytes (%s) -> %llu bytes (%s)\n", what, r->graph, r->algo,
                  (unsigned long long)o->total, o->verify, (unsigned long long)r->total, r->verify);
}

/* Rewrite the baseline from the run, and say what changed against the
 * baseline it replaces (when there was a readable one). */
static int update(const mp_gate_rows *now, const char *path, const char *db_path, mp_buf *out, mp_err *err) {
    mp_gate_rows old = {0};
    struct stat st;
    bool had = stat(path, &st) == 0;
    /* only a baseline is replaced: a file that is none (the database
     * itself, notes, a FIFO) is someone's data, refused (issue 45, B6) */
    if (had && mp_gate_load_baseline(path, &old, err) != MP_OK) {
        mp_gate_rows_free(&old);
        return mp_err_set(err, MP_EFORMAT, "%s: exists and is no baseline memplan can read (%s); remove it or "
                          "name another file", path, err->msg);
    }
    mp_buf b, lines;
    mp_buf_init(&b);
    mp_buf_init(&lines);
    mp_gate_dump(now, &b);
    int rc = mp_write_buf(path, &b, &db_path, 1, err);
    if (rc == MP_OK) {
        tally t = {0};
        size_t shown = 0;
        for (size_t i = 0; i < now->n; i++)
            tally_row(find(&old, now->v[i].graph, now->v[i].algo), &now->v[i], &t, &lines, &shown);
        for (size_t i = 0; i < old.n; i++)
            if (!find(now, old.v[i].graph, old.v[i].algo)) t.removed++;
        if (lines.len) mp_buf_put(out, lines.data, lines.len);
        mp_buf_printf(out, "gate: baseline %s rewritten from run %lld (%zu rows): ", path, (long long)now->run, now->n);
        if (had)
            mp_buf_printf(out, "%zu improved, %zu regressed, %zu changed status, %zu added, %zu removed, "
                          "%zu unchanged\n", t.improved, t.regressed, t.changed, t.added, t.removed, t.unchanged);
        else
            mp_buf_printf(out, "a new baseline\n");
    }
    mp_buf_free(&b);
    mp_buf_free(&lines);
    mp_gate_rows_free(&old);
    return rc;
}

int mp_gate(mp_db *d, const char *baseline, bool update_baseline, mp_buf *out, bool *passed, mp_err *err) {
    *passed = false;
    mp_gate_rows now = {0}, base = {0};
    int rc = mp_db_gate_rows(d, &now, err);
    if (rc == MP_OK && now.shards > 1) /* a part of a run: against a whole baseline, rows would be missing */
        rc = mp_err_set(err, MP_EFORMAT, "run %lld is shard %u/%u of a sharded harness run: merge the shards "
                        "first (memplan merge OUT.db SHARD.db...) and gate the merged database",
                        (long long)now.run, now.shard, now.shards);
    mp_gate_sort_rows(&now);
    if (rc == MP_OK && update_baseline) {
        rc = update(&now, baseline, mp_db_path(d), out, err);
        *passed = rc == MP_OK;
    } else if (rc == MP_OK && (rc = mp_gate_load_baseline(baseline, &base, err)) == MP_OK &&
               (rc = same_run(&base, &now, baseline, err)) == MP_OK) {
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
