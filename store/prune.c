/* prune.c - `memplan prune`: a history that grows for years keeps every
 * run and its summaries (the report's quality table and --by-commit read
 * only those) but the per-case rows of the newest runs only. */
#include "store.h"

#include <stdio.h>

/* The runs past the newest `keep` of their kind (?1 = keep). */
#define OLD_RUNS \
    "SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY kind ORDER BY id DESC) AS k FROM runs)" \
    " WHERE k > ?1"

static int step_count(sqlite3 *db, const char *sql, uint64_t keep, int64_t *count, mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EIO, "prune: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, (sqlite3_int64)keep);
    int rc = sqlite3_step(st);
    if (count) *count = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : (int64_t)sqlite3_changes(db);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? MP_OK : mp_err_set(err, MP_EIO, "prune: %s", sqlite3_errmsg(db));
}

int mp_db_prune(mp_db *d, uint64_t keep, mp_prune_summary *s, mp_err *err) {
    memset(s, 0, sizeof *s);
    if (keep < 1) return mp_err_set(err, MP_EFORMAT, "prune: keep at least one run of each kind");
    sqlite3 *db = mp_db_sqlite(d);
    if (mp_db_exec(d, "BEGIN IMMEDIATE", err)) return err->code;
    /* a run recorded before summaries existed gets them now, from its rows */
    int rc = step_count(db, "INSERT OR IGNORE INTO summaries " SUMMARY_OF_RESULTS
                        " WHERE run_id IN (" OLD_RUNS ") GROUP BY run_id, algo", keep, NULL, err);
    if (rc == MP_OK)
        rc = step_count(db, "SELECT count(DISTINCT run_id) FROM results WHERE run_id IN (" OLD_RUNS ")", keep,
                        &s->runs, err);
    /* the old runs' rows are a run of the primary key, cheap to delete; in
     * the report's indexes they are everywhere: those are rebuilt */
    if (rc == MP_OK) rc = mp_db_exec(d, "DROP INDEX results_worst; DROP INDEX results_ratio", err);
    if (rc == MP_OK)
        rc = step_count(db, "DELETE FROM results WHERE run_id IN (" OLD_RUNS ")", keep, &s->rows, err);
    if (rc == MP_OK) rc = mp_db_exec(d, RESULTS_INDEXES, err);
    if (rc == MP_OK) rc = mp_db_exec(d, "COMMIT", err);
    if (rc != MP_OK) mp_db_exec(d, "ROLLBACK", NULL);
    return rc;
}

int mp_db_vacuum(mp_db *d, mp_err *err) { return mp_db_exec(d, "VACUUM", err); }
