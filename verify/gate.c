/* gate.c - `memplan gate`: compare the latest harness run with a baseline
 * committed as a text SQL dump (results/baseline.sql), so that a planner
 * change that makes any plan worse cannot land unnoticed.
 *
 * A regression is: a plan that fails verification (or crashes), a plan
 * that is refused where the baseline planned, a graph that needs more
 * bytes than in the baseline, a baseline graph missing from the run, or a
 * mean ratio to the lower bound (per algorithm) that got worse.
 * --update rewrites the baseline from the latest run, sorted, so that its
 * diff shows exactly the rows that changed. */
#include "util.h"

#include <sqlite3.h>
#include <stdio.h>

typedef struct brow {
    char *graph, *algo, *options, *verify;
    uint64_t total, lower;
    double ratio;
} brow;

typedef struct brows {
    brow *v;
    size_t n, cap;
} brows;

static char *txt(sqlite3_stmt *st, int c) {
    const unsigned char *s = sqlite3_column_text(st, c);
    const char *t = s ? (const char *)s : "";
    return strcpy(mp_xmalloc(strlen(t) + 1), t);
}

static int read_rows(sqlite3 *db, const char *sql, int64_t run, brows *out, mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EFORMAT, "gate: %s", sqlite3_errmsg(db));
    if (run >= 0) sqlite3_bind_int64(st, 1, run);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        brow r = {txt(st, 0), txt(st, 1), txt(st, 2), txt(st, 6),
                  (uint64_t)sqlite3_column_int64(st, 3), (uint64_t)sqlite3_column_int64(st, 4),
                  sqlite3_column_double(st, 5)};
        MP_VEC_PUSH(out->v, out->n, out->cap, r);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return mp_err_set(err, MP_EFORMAT, "gate: %s", sqlite3_errmsg(db));
    return MP_OK;
}

static void free_rows(brows *b) {
    for (size_t i = 0; i < b->n; i++) {
        free(b->v[i].graph);
        free(b->v[i].algo);
        free(b->v[i].options);
        free(b->v[i].verify);
    }
    free(b->v);
}

static const char Q_ROWS[] = "SELECT graph, algo, coalesce(options,''), total_bytes, lower_bound,"
                             " ratio, verify FROM %s ORDER BY graph, algo";

static int latest_run(sqlite3 *db, int64_t *run, mp_err *err) {
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT max(id) FROM runs WHERE kind = 'harness'", -1, &st, NULL);
    int rc = sqlite3_step(st);
    bool have = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
    *run = have ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return have ? MP_OK : mp_err_set(err, MP_EFORMAT, "gate: the database has no harness run");
}

/* The baseline file runs in a fresh in-memory database: it cannot touch
 * the metrics database whatever it says. */
static int load_baseline(const char *path, brows *out, mp_err *err) {
    size_t len;
    char *sql = mp_read_file(path, &len, err);
    if (!sql) return err->code;
    sqlite3 *mem;
    sqlite3_open(":memory:", &mem);
    char *msg = NULL;
    int rc = MP_OK;
    if (sqlite3_exec(mem, sql, NULL, NULL, &msg) != SQLITE_OK) {
        rc = mp_err_set(err, MP_EFORMAT, "%s: not a memplan baseline: %s", path, msg ? msg : "?");
        sqlite3_free(msg);
    } else {
        char q[256];
        snprintf(q, sizeof q, Q_ROWS, "baseline");
        rc = read_rows(mem, q, -1, out, err);
    }
    sqlite3_close(mem);
    free(sql);
    return rc;
}

static void sql_quote(mp_buf *b, const char *s) {
    mp_buf_put(b, "'", 1);
    for (; *s; s++) {
        if (*s == '\'') mp_buf_put(b, "'", 1);
        mp_buf_put(b, s, 1);
    }
    mp_buf_put(b, "'", 1);
}

static void dump(const brows *rows, uint64_t seed, uint64_t count, mp_buf *b) {
    mp_buf_printf(b,
                  "-- memplan gate baseline: plan quality of `memplan harness --seed %llu --count %llu`\n"
                  "-- regenerate: memplan gate --db FILE --baseline results/baseline.sql --update\n"
                  "BEGIN TRANSACTION;\n"
                  "CREATE TABLE baseline(graph TEXT NOT NULL, algo TEXT NOT NULL, options TEXT,\n"
                  "  total_bytes INTEGER, lower_bound INTEGER, ratio REAL, verify TEXT,\n"
                  "  PRIMARY KEY(graph, algo));\n",
                  (unsigned long long)seed, (unsigned long long)count);
    for (size_t i = 0; i < rows->n; i++) {
        const brow *r = &rows->v[i];
        mp_buf_puts(b, "INSERT INTO baseline VALUES(");
        sql_quote(b, r->graph);
        mp_buf_put(b, ",", 1);
        sql_quote(b, r->algo);
        mp_buf_put(b, ",", 1);
        sql_quote(b, r->options);
        mp_buf_printf(b, ",%llu,%llu,%.6f,", (unsigned long long)r->total,
                      (unsigned long long)r->lower, r->ratio);
        sql_quote(b, r->verify);
        mp_buf_puts(b, ");\n");
    }
    mp_buf_puts(b, "COMMIT;\n");
}

static const brow *find(const brows *b, const char *graph, const char *algo) {
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

static int cmp_brow(const void *a, const void *b) {
    const brow *x = a, *y = b;
    int c = strcmp(x->graph, y->graph);
    return c ? c : strcmp(x->algo, y->algo);
}

typedef struct mean {
    char algo[16];
    double base, now;
    size_t n;
} mean;

static void regression(mp_buf *b, size_t *n, const char *what, const brow *r, const char *detail) {
    if (!*n) mp_buf_printf(b, "%-16s %-22s %-7s %s\n", "regression", "graph", "algo", "detail");
    (*n)++;
    if (*n > 200) return;
    mp_buf_printf(b, "%-16s %-22s %-7s %s\n", what, r ? r->graph : "-", r ? r->algo : "-", detail);
}

static size_t compare(const brows *base, const brows *now, mp_buf *b) {
    size_t n = 0;
    char d[256];
    mean means[4];
    size_t nm = 0;
    for (size_t i = 0; i < now->n; i++) {
        const brow *r = &now->v[i];
        if (strcmp(r->verify, "invalid") == 0 || strcmp(r->verify, "crash") == 0) {
            snprintf(d, sizeof d, "verification: %s", r->verify);
            regression(b, &n, "invalid", r, d);
        }
    }
    for (size_t i = 0; i < base->n; i++) {
        const brow *o = &base->v[i], *r = find(now, o->graph, o->algo);
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
            brow r = {(char *)"(all)", means[k].algo, NULL, NULL, 0, 0, 0};
            snprintf(d, sizeof d, "mean ratio %.6f, baseline %.6f", mn, mb);
            regression(b, &n, "mean-ratio", &r, d);
        }
    }
    return n;
}

int mp_gate(mp_db *d, const char *baseline, bool update, mp_buf *out, bool *passed, mp_err *err) {
    sqlite3 *db = mp_db_handle(d);
    int64_t run;
    *passed = false;
    if (latest_run(db, &run, err)) return err->code;
    char q[256];
    snprintf(q, sizeof q, Q_ROWS, "results WHERE run_id = ?1");
    brows now = {0}, base = {0};
    int rc = read_rows(db, q, run, &now, err);
    if (now.n) qsort(now.v, now.n, sizeof *now.v, cmp_brow);
    if (rc == MP_OK && update) {
        sqlite3_stmt *st;
        sqlite3_prepare_v2(db, "SELECT coalesce(seed,0), coalesce(count,0) FROM runs WHERE id = ?1", -1, &st, NULL);
        sqlite3_bind_int64(st, 1, run);
        uint64_t seed = 0, count = 0;
        if (sqlite3_step(st) == SQLITE_ROW) {
            seed = (uint64_t)sqlite3_column_int64(st, 0);
            count = (uint64_t)sqlite3_column_int64(st, 1);
        }
        sqlite3_finalize(st);
        mp_buf b;
        mp_buf_init(&b);
        dump(&now, seed, count, &b);
        rc = mp_write_file_atomic(baseline, b.data, b.len, err);
        mp_buf_free(&b);
        if (rc == MP_OK) {
            mp_buf_printf(out, "gate: baseline %s rewritten from run %lld (%zu rows)\n", baseline,
                          (long long)run, now.n);
            *passed = true;
        }
    } else if (rc == MP_OK && (rc = load_baseline(baseline, &base, err)) == MP_OK) {
        if (base.n) qsort(base.v, base.n, sizeof *base.v, cmp_brow);
        size_t n = compare(&base, &now, out);
        if (n > 200) mp_buf_printf(out, "... and %zu more\n", n - 200);
        *passed = n == 0;
        mp_buf_printf(out, "gate: %s: run %lld against %s: %zu rows compared, %zu regression%s\n",
                      n ? "FAILED" : "passed", (long long)run, baseline, base.n, n, n == 1 ? "" : "s");
    }
    free_rows(&now);
    free_rows(&base);
    return rc;
}
