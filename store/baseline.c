/* baseline.c - the gate's rows in and out of SQL: the latest harness
 * run's rows from the metrics store, and the baseline file, a text SQL
 * dump (results/baseline.sql) that is read in a fresh in-memory database
 * under an authorizer (data, never a program) and written sorted so that
 * its diff shows exactly the rows that changed.  Besides its rows it
 * records the run it came from (baseline_run: seed, count, command line,
 * memplan version), so that the gate compares like with like.
 * The comparison itself is harness/gate.c. */
#include "internal.h"

#include <math.h>
#include "metrics.h"
#include "files.h"
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* `where` begins every message: the baseline file and what it failed to
 * be, or the metrics database. */
static int read_rows(sqlite3 *db, const char *sql, int64_t run, const char *where, mp_gate_rows *out,
                     mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EFORMAT, "%s: %s", where, sqlite3_errmsg(db));
    if (run >= 0) sqlite3_bind_int64(st, 1, run);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        mp_gate_row r = {mp_db_column_text(st, 0), mp_db_column_text(st, 1), mp_db_column_text(st, 2), mp_db_column_text(st, 6),
                  (uint64_t)sqlite3_column_int64(st, 3), (uint64_t)sqlite3_column_int64(st, 4),
                  sqlite3_column_double(st, 5)};
        MP_VEC_PUSH(out->v, out->n, out->cap, r);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return mp_err_set(err, MP_EFORMAT, "%s: %s", where, sqlite3_errmsg(db));
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
    mp_xfree(b->options);
    mp_xfree(b->version);
}

static int cmp_row(const void *a, const void *b) {
    const mp_gate_row *x = a, *y = b;
    int c = strcmp(x->graph, y->graph);
    return c ? c : strcmp(x->algo, y->algo);
}

void mp_gate_sort_rows(mp_gate_rows *rows) {
    if (rows->n) qsort(rows->v, rows->n, sizeof *rows->v, cmp_row);
}

/* One row per graph and planner, as the dump's primary key demands: a
 * baseline whose own table has no such key (or whose keys differ only
 * past a NUL byte) is refused, not read with one of the two rows
 * chosen at random.  The rows are sorted (strcmp order) first; `where`
 * begins the message, as read_rows's. */
static int unique_rows(mp_gate_rows *rows, const char *where, mp_err *err) {
    mp_gate_sort_rows(rows);
    for (size_t i = 1; i < rows->n; i++) {
        if (cmp_row(&rows->v[i - 1], &rows->v[i])) continue;
        mp_buf m;
        mp_buf_init(&m);
        mp_buf_printf(&m, "%s: two rows for graph '", where);
        mp_buf_put_printable(&m, rows->v[i].graph);
        mp_buf_puts(&m, "', planner '");
        mp_buf_put_printable(&m, rows->v[i].algo);
        mp_buf_puts(&m, "'");
        mp_buf_put(&m, "", 1);
        int rc = mp_err_set(err, MP_EFORMAT, "%s", m.data);
        mp_buf_free(&m);
        return rc;
    }
    return MP_OK;
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
    return have ? MP_OK : mp_err_set(err, MP_EFORMAT, "the database has no harness run");
}

/* The two tables a baseline may create and fill. */
static bool baseline_table(const char *name) {
    return name && (strcmp(name, "baseline") == 0 || strcmp(name, "baseline_run") == 0);
}

/* A baseline is data: its statements may begin and end a transaction,
 * create the two baseline tables (which writes sqlite_master and makes
 * the primary key's index) and insert
 * rows into them, nothing else: no ATTACH, no PRAGMA, no function, no
 * UPDATE or DELETE, no trigger or view. */
static int baseline_authorizer(void *ctx, int action, const char *a1, const char *a2, const char *db,
                               const char *trigger) {
    (void)ctx, (void)trigger;
    if (db && strcmp(db, "main") && strcmp(db, "temp")) return SQLITE_DENY;
    switch (action) {
    case SQLITE_TRANSACTION: return SQLITE_OK;
    case SQLITE_CREATE_TABLE: return baseline_table(a1) ? SQLITE_OK : SQLITE_DENY;
    case SQLITE_CREATE_INDEX: /* a PRIMARY KEY's own index */
        return baseline_table(a2) && strncmp(a1, "sqlite_autoindex_", 17) == 0 ? SQLITE_OK : SQLITE_DENY;
    case SQLITE_INSERT: return baseline_table(a1) || strcmp(a1, "sqlite_master") == 0 ? SQLITE_OK : SQLITE_DENY;
    case SQLITE_UPDATE: return strcmp(a1, "sqlite_master") == 0 ? SQLITE_OK : SQLITE_DENY;
    case SQLITE_READ: return baseline_table(a1) || strcmp(a1, "sqlite_master") == 0 ? SQLITE_OK : SQLITE_DENY;
    default: return SQLITE_DENY;
    }
}

/* The baseline's run: seed, count, command line, memplan version.  A
 * baseline of an older format has none (options and version stay NULL:
 * the gate says so; --update still reads its rows to report changes). */
static int read_header(sqlite3 *mem, const char *path, mp_gate_rows *out, mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(mem, "SELECT seed, count, options, version FROM baseline_run", -1, &st, NULL))
        return MP_OK;
    int rc = MP_OK;
    if (sqlite3_step(st) == SQLITE_ROW) {
        out->seed = (uint64_t)sqlite3_column_int64(st, 0);
        out->count = (uint64_t)sqlite3_column_int64(st, 1);
        out->options = mp_db_column_text(st, 2);
        out->version = mp_db_column_text(st, 3);
    } else {
        rc = mp_err_set(err, MP_EFORMAT, "%s: the baseline's run row is missing", path);
    }
    sqlite3_finalize(st);
    return rc;
}

/* The baseline file runs in a fresh in-memory database, under the
 * authorizer, with no database attachable: whatever it says, it can only
 * produce baseline rows. */
int mp_gate_load_baseline(const char *path, mp_gate_rows *out, mp_err *err) {
    size_t len;
    struct stat st; /* a FIFO would block the open for ever (issue 45, B20) */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return mp_err_set(err, MP_EFORMAT, "%s: not a regular file; a baseline is one", path);
    char *sql = mp_read_file(path, &len, err);
    if (!sql) return err->code;
    sqlite3 *mem;
    if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        mp_xfree(sql);
        sqlite3_close(mem);
        return mp_err_set(err, MP_ENOMEM, "%s: cannot open an in-memory database", path);
    }
    sqlite3_limit(mem, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_set_authorizer(mem, baseline_authorizer, NULL);
    char *msg = NULL;
    int rc = MP_OK;
    if (sqlite3_exec(mem, sql, NULL, NULL, &msg) != SQLITE_OK) {
        rc = mp_err_set(err, MP_EFORMAT, "%s: not a memplan baseline: %s", path, msg ? msg : "?");
        sqlite3_free(msg);
    } else {
        sqlite3_set_authorizer(mem, NULL, NULL);
        char q[256];
        snprintf(q, sizeof q, Q_ROWS, "baseline");
        rc = read_header(mem, path, out, err);
        mp_buf where;
        mp_buf_init(&where);
        mp_buf_printf(&where, "%s: not a memplan baseline", path);
        if (rc == MP_OK) rc = read_rows(mem, q, -1, where.data, out, err);
        if (rc == MP_OK) rc = unique_rows(out, where.data, err);
        mp_buf_free(&where);
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

/* Seed, count and byte counts are written as the signed 64-bit integers
 * SQLite holds (the bits the reader got), so that any baseline's own dump
 * reads back the same: a seed past 2^63 or a negative count included. */
void mp_gate_dump(const mp_gate_rows *rows, mp_buf *b) {
    uint64_t seed = rows->seed, count = rows->count;
    mp_buf_printf(b,
                  "-- memplan gate baseline: plan quality of `memplan harness --seed %llu --count %llu`\n"
                  "-- regenerate: memplan gate --db FILE --baseline results/baseline.sql --update\n"
                  "BEGIN TRANSACTION;\n"
                  "CREATE TABLE baseline(graph TEXT NOT NULL, algo TEXT NOT NULL, options TEXT,\n"
                  "  total_bytes INTEGER, lower_bound INTEGER, ratio REAL, verify TEXT,\n"
                  "  PRIMARY KEY(graph, algo));\n"
                  "CREATE TABLE baseline_run(seed INTEGER, count INTEGER, options TEXT, version TEXT);\n"
                  "INSERT INTO baseline_run VALUES(%lld,%lld,",
                  (unsigned long long)seed, (unsigned long long)count, (long long)(int64_t)seed,
                  (long long)(int64_t)count);
    sql_quote(b, rows->options ? rows->options : "");
    mp_buf_put(b, ",", 1);
    sql_quote(b, rows->version ? rows->version : "");
    mp_buf_puts(b, ");\n");
    for (size_t i = 0; i < rows->n; i++) {
        const mp_gate_row *r = &rows->v[i];
        mp_buf_puts(b, "INSERT INTO baseline VALUES(");
        sql_quote(b, r->graph);
        mp_buf_put(b, ",", 1);
        sql_quote(b, r->algo);
        mp_buf_put(b, ",", 1);
        sql_quote(b, r->options);
        /* a ratio that is no finite number (a baseline may say 1e999) as NULL */
        mp_buf_printf(b, ",%lld,%lld,", (long long)(int64_t)r->total, (long long)(int64_t)r->lower);
        if (isfinite(r->ratio)) mp_buf_printf(b, "%.6f,", r->ratio);
        else mp_buf_puts(b, "NULL,");
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
    int rc = read_rows(db, q, rows->run, "the metrics database", rows, err);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT coalesce(seed,0), coalesce(count,0), options, version, coalesce(shard,0),"
                       " coalesce(shards,0) FROM runs WHERE id = ?1", -1, &st, NULL);
    sqlite3_bind_int64(st, 1, rows->run);
    if (sqlite3_step(st) == SQLITE_ROW) {
        rows->seed = (uint64_t)sqlite3_column_int64(st, 0);
        rows->count = (uint64_t)sqlite3_column_int64(st, 1);
        rows->options = mp_db_column_text(st, 2);
        rows->version = mp_db_column_text(st, 3);
        rows->shard = (uint32_t)sqlite3_column_int64(st, 4);
        rows->shards = (uint32_t)sqlite3_column_int64(st, 5);
    }
    sqlite3_finalize(st);
    return rc;
}
