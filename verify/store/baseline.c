/* baseline.c - the gate's rows in and out of SQL: the latest harness
 * run's rows from the metrics store, and the baseline file, a text SQL
 * dump (results/baseline.sql) that is read in a fresh in-memory database
 * and written sorted so that its diff shows exactly the rows that changed.
 * The comparison itself is verify/harness/gate.c. */
#include "internal.h"
#include "memplan_tools.h"
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>

static char *txt(sqlite3_stmt *st, int c) {
    const unsigned char *s = sqlite3_column_text(st, c);
    const char *t = s ? (const char *)s : "";
    return strcpy(mp_xmalloc(strlen(t) + 1), t);
}

static int read_rows(sqlite3 *db, const char *sql, int64_t run, mp_gate_rows *out, mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EFORMAT, "gate: %s", sqlite3_errmsg(db));
    if (run >= 0) sqlite3_bind_int64(st, 1, run);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        mp_gate_row r = {txt(st, 0), txt(st, 1), txt(st, 2), txt(st, 6),
                  (uint64_t)sqlite3_column_int64(st, 3), (uint64_t)sqlite3_column_int64(st, 4),
                  sqlite3_column_double(st, 5)};
        MP_VEC_PUSH(out->v, out->n, out->cap, r);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return mp_err_set(err, MP_EFORMAT, "gate: %s", sqlite3_errmsg(db));
    return MP_OK;
}

void mp_gate_rows_free(mp_gate_rows *b) {
    for (size_t i = 0; i < b->n; i++) {
        mp_xfree(b->v[i].graph);
        mp_xfree(b->v[i].algo);
        mp_xfree(b->v[i].options);
        mp_xfree(b->v[i].verify);
    }
    mp_xfree(b->v);
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
int mp_gate_load_baseline(const char *path, mp_gate_rows *out, mp_err *err) {
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
    mp_xfree(sql);
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

void mp_gate_dump(const mp_gate_rows *rows, mp_buf *b) {
    uint64_t seed = rows->seed, count = rows->count;
    mp_buf_printf(b,
                  "-- memplan gate baseline: plan quality of `memplan harness --seed %llu --count %llu`\n"
                  "-- regenerate: memplan gate --db FILE --baseline results/baseline.sql --update\n"
                  "BEGIN TRANSACTION;\n"
                  "CREATE TABLE baseline(graph TEXT NOT NULL, algo TEXT NOT NULL, options TEXT,\n"
                  "  total_bytes INTEGER, lower_bound INTEGER, ratio REAL, verify TEXT,\n"
                  "  PRIMARY KEY(graph, algo));\n",
                  (unsigned long long)seed, (unsigned long long)count);
    for (size_t i = 0; i < rows->n; i++) {
        const mp_gate_row *r = &rows->v[i];
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

/* The latest harness run's rows, its id, seed and count. */
int mp_db_gate_rows(mp_db *d, mp_gate_rows *rows, mp_err *err) {
    sqlite3 *db = mp_db_sqlite(d);
    if (latest_run(db, &rows->run, err)) return err->code;
    char q[256];
    snprintf(q, sizeof q, Q_ROWS, "results WHERE run_id = ?1");
    int rc = read_rows(db, q, rows->run, rows, err);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT coalesce(seed,0), coalesce(count,0) FROM runs WHERE id = ?1", -1, &st, NULL);
    sqlite3_bind_int64(st, 1, rows->run);
    if (sqlite3_step(st) == SQLITE_ROW) {
        rows->seed = (uint64_t)sqlite3_column_int64(st, 0);
        rows->count = (uint64_t)sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return rc;
}
