/* history.c - `memplan report`: what users ask of the metrics history.
 *
 *   quality  per run and algorithm: graphs, valid/invalid/refused, mean and
 *            worst ratio to the lower bound, bytes in all (the summaries)
 *   worst    the graphs with the highest ratio (worst.c)
 *   changes  (graph, algorithm) pairs whose planned bytes changed from one
 *            run of a command to its next, newest first
 *   campaigns fuzzing campaigns (make fuzz, fuzz-afl, fuzz-campaign)
 *   stages   gen, plan and verify per graph size (memplan bench --stages)
 * as aligned text, CSV (one header per section) or JSON.  Each section
 * reads an index or the summaries, never the whole history, so a report
 * of 1,000 runs of 1,000 cases answers in milliseconds (make bench). */
#include "report_table.h"

#include <stdint.h>
#include <stdio.h>

/* ?1 = since (ISO date prefix or ''), ?2 = algorithm or ''.  Quality
 * reads the runs' summaries (kept by prune), not their rows. */
static const char Q_QUALITY[] =
    "SELECT r.id, substr(r.started,1,19), r.kind, coalesce(r.git_rev,''), s.algo, s.graphs,"
    " s.valid, s.invalid, s.refused, printf('%.4f', s.mean_ratio), printf('%.4f', s.max_ratio), s.bytes"
    " FROM runs r JOIN summaries s ON s.run_id = r.id"
    " WHERE r.started >= ?1 AND (?2 = '' OR s.algo = ?2) AND r.kind <> 'stages'"
    " ORDER BY r.id, s.algo";
static const char *const C_QUALITY[] = {"run", "started", "kind", "git", "algo", "graphs",
                                        "valid", "invalid", "refused", "mean_ratio",
                                        "max_ratio", "bytes"};

/* each graph once: its worst valid plan (worst.c) */
static const char *const C_WORST[] = {"run", "graph", "algo", "ratio", "bytes", "lower_bound",
                                      "profile", "tensors"};

/* The changes between consecutive runs of one command (kind and option
 * line): the newest CHANGE_RUNS runs of the window are each compared with
 * the run of their command before them, newest first, at most
 * CHANGE_ROWS rows.  ?1 = the run, ?2 = the one before, ?3 = algorithm. */
#define CHANGE_RUNS 30
#define CHANGE_ROWS 200
static const char Q_CHANGE_RUNS[] =
    "SELECT r.id, (SELECT max(p.id) FROM runs p WHERE p.kind = r.kind AND p.options IS r.options AND p.id < r.id)"
    " FROM runs r WHERE r.started >= ?1 AND EXISTS (SELECT 1 FROM summaries s WHERE s.run_id = r.id)"
    " ORDER BY r.id DESC LIMIT ?2";
static const char Q_CHANGES[] =
    "SELECT p.run_id, x.run_id, r.kind, x.graph, x.algo, p.total_bytes, x.total_bytes,"
    " printf('%+lld', x.total_bytes - p.total_bytes), p.verify, x.verify"
    " FROM results x JOIN runs r ON r.id = x.run_id"
    " JOIN results p ON p.run_id = ?2 AND p.graph = x.graph AND p.algo = x.algo"
    " WHERE x.run_id = ?1 AND (?3 = '' OR x.algo = ?3)"
    " AND (p.total_bytes <> x.total_bytes OR p.verify <> x.verify)"
    " ORDER BY x.graph, x.algo";
static const char *const C_CHANGES[] = {"from_run", "to_run", "kind", "graph", "algo",
                                        "from_bytes", "to_bytes", "delta", "from_verify",
                                        "to_verify"};

/* fuzzing campaigns (the algorithm filter does not apply to them) */
static const char Q_CAMPAIGNS[] =
    "SELECT r.id, substr(r.started,1,19), coalesce(r.git_rev,''), c.target, c.engine,"
    " printf('%.1f', c.seconds), c.executions,"
    " printf('%.0f', c.executions / max(c.seconds, 0.001)), c.corpus_size, c.coverage, c.crashes"
    " FROM campaigns c JOIN runs r ON r.id = c.run_id"
    " WHERE r.started >= ?1 AND ?2 IS NOT NULL ORDER BY r.id, c.target";
static const char *const C_CAMPAIGNS[] = {"run", "started", "git", "target", "engine", "seconds",
                                          "executions", "exec_per_s", "corpus", "coverage",
                                          "crashes"};

/* `memplan bench --stages`: each stage's time and peak memory per graph
 * size, run by run (its rows keep the stage as the algorithm) */
static const char Q_STAGES[] =
    "SELECT r.id, substr(r.started,1,19), coalesce(r.git_rev,''), x.graph, x.algo,"
    " printf('%.2f', x.plan_ms / 1000.0), printf('%.0f', x.peak_kb / 1024.0), x.verify"
    " FROM results x JOIN runs r ON r.id = x.run_id"
    " WHERE r.kind = 'stages' AND r.started >= ?1 AND ?2 IS NOT NULL ORDER BY r.id, x.tensors, x.rowid";
static const char *const C_STAGES[] = {"run", "started", "git", "graph", "stage", "seconds", "peak_mib",
                                       "status"};

static int worst_table(sqlite3 *db, const char *since, const char *algo, mp_rtable *t, mp_err *err) {
    mp_worst_rows w;
    int rc = mp_db_worst(db, since, algo, 10, &w, err);
    for (size_t i = 0; rc == MP_OK && i < w.n; i++) {
        char **row = mp_xmalloc((size_t)t->ncols * sizeof *row);
        const mp_worst_row *x = &w.v[i];
        char n[4][24];
        snprintf(n[0], sizeof n[0], "%lld", (long long)x->run);
        snprintf(n[1], sizeof n[1], "%lld", (long long)x->bytes);
        snprintf(n[2], sizeof n[2], "%lld", (long long)x->lower);
        snprintf(n[3], sizeof n[3], "%lld", (long long)x->tensors);
        const char *cell[8] = {n[0], x->graph, x->algo, x->ratio_text, n[1], n[2], x->profile, n[3]};
        for (int c = 0; c < t->ncols; c++) row[c] = mp_rtable_dup((const unsigned char *)cell[c]);
        MP_VEC_PUSH(t->rows, t->n, t->cap, row);
    }
    mp_worst_rows_free(&w);
    return rc;
}

static int changes_table(sqlite3 *db, const char *since, const char *algo, mp_rtable *t, mp_err *err) {
    sqlite3_stmt *runs, *q;
    if (sqlite3_prepare_v2(db, Q_CHANGE_RUNS, -1, &runs, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EFORMAT, "report query: %s", sqlite3_errmsg(db));
    if (sqlite3_prepare_v2(db, Q_CHANGES, -1, &q, NULL) != SQLITE_OK) {
        sqlite3_finalize(runs);
        return mp_err_set(err, MP_EFORMAT, "report query: %s", sqlite3_errmsg(db));
    }
    sqlite3_bind_text(runs, 1, since ? since : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(runs, 2, CHANGE_RUNS);
    sqlite3_bind_text(q, 3, algo ? algo : "", -1, SQLITE_TRANSIENT);
    int rc = MP_OK;
    while (rc == MP_OK && t->n < CHANGE_ROWS && sqlite3_step(runs) == SQLITE_ROW) {
        if (sqlite3_column_type(runs, 1) == SQLITE_NULL) continue; /* the command's first run */
        sqlite3_bind_int64(q, 1, sqlite3_column_int64(runs, 0));
        sqlite3_bind_int64(q, 2, sqlite3_column_int64(runs, 1));
        rc = mp_rtable_fetch(db, q, t, CHANGE_ROWS, err);
        sqlite3_reset(q);
    }
    sqlite3_finalize(runs);
    sqlite3_finalize(q);
    return rc;
}

int mp_db_report(mp_db *d, const char *since, const char *algo, const char *format, mp_buf *out,
              mp_err *err) {
    sqlite3 *db = mp_db_sqlite(d);
    enum { N_TABLES = 5 };
    mp_rtable t[N_TABLES] = {{"quality", C_QUALITY, 12, NULL, 0, 0},
                         {"worst", C_WORST, 8, NULL, 0, 0},
                         {"changes", C_CHANGES, 10, NULL, 0, 0},
                         {"campaigns", C_CAMPAIGNS, 11, NULL, 0, 0},
                         {"stages", C_STAGES, 8, NULL, 0, 0}};
    int rc = mp_rtable_query(db, Q_QUALITY, since, algo, &t[0], err);
    if (rc == MP_OK) rc = worst_table(db, since, algo, &t[1], err);
    if (rc == MP_OK) rc = changes_table(db, since, algo, &t[2], err);
    if (rc == MP_OK) rc = mp_rtable_query(db, Q_CAMPAIGNS, since, algo, &t[3], err);
    if (rc == MP_OK) rc = mp_rtable_query(db, Q_STAGES, since, algo, &t[4], err);
    if (rc == MP_OK) mp_rtable_put(t, N_TABLES, format, out);
    for (int i = 0; i < N_TABLES; i++) mp_rtable_free(&t[i]);
    return rc;
}
