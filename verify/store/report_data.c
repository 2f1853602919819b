/* report_data.c - what the HTML report (viz/html.c) reads from the
 * metrics store.
 *
 * Three queries over runs and results (schema: store.c,
 * docs/metrics.md), each in a total order so the page is deterministic:
 *   quality  per run and algorithm: counts, mean and worst ratio to the
 *            lower bound of the valid plans (ratio over time)
 *   points   the most recent plans' size and planning time
 *   worst    per algorithm, its highest-ratio valid plans
 * ?1 = since ('' for all), ?2 = algorithm ('' for all), ?3 = a limit. */
#include "store.h"

#include <math.h>
#include <stdio.h>

static const char Q_QUALITY[] =
    "SELECT r.id, substr(r.started,1,19), r.kind, coalesce(r.git_rev,''), x.algo, count(*),"
    " sum(x.verify='valid'), sum(x.verify IN ('invalid','crash')), sum(x.verify='refused'),"
    " avg(CASE WHEN x.verify='valid' THEN x.ratio END),"
    " max(CASE WHEN x.verify='valid' THEN x.ratio END)"
    " FROM runs r JOIN results x ON x.run_id = r.id"
    " WHERE r.started >= ?1 AND (?2 = '' OR x.algo = ?2)"
    " GROUP BY r.id, x.algo ORDER BY r.id, x.algo";

static const char Q_POINTS[] =
    "SELECT x.run_id, x.tensors, x.plan_ms, x.algo, x.graph"
    " FROM results x JOIN runs r ON r.id = x.run_id"
    " WHERE r.started >= ?1 AND (?2 = '' OR x.algo = ?2)"
    " AND x.verify IN ('valid','invalid') AND x.plan_ms IS NOT NULL AND x.tensors > 0"
    " ORDER BY x.run_id DESC, x.graph, x.algo LIMIT ?3";

/* per algorithm, its worst graphs, each graph once (its worst run) */
static const char Q_WORST[] =
    "SELECT run_id, graph, algo, ratio, total_bytes, lower_bound, profile, tensors, kind FROM"
    " (SELECT *, row_number() OVER (PARTITION BY algo ORDER BY ratio DESC, run_id DESC, graph) AS rank"
    "  FROM (SELECT x.run_id, x.graph, x.algo, x.ratio, x.total_bytes, x.lower_bound,"
    "   coalesce(x.profile,'') AS profile, x.tensors, r.kind,"
    "   row_number() OVER (PARTITION BY x.algo, x.graph ORDER BY x.ratio DESC, x.run_id DESC) AS once"
    "   FROM results x JOIN runs r ON r.id = x.run_id"
    "   WHERE r.started >= ?1 AND (?2 = '' OR x.algo = ?2) AND x.verify = 'valid')"
    "  WHERE once = 1)"
    " WHERE rank <= ?3 ORDER BY algo, rank";

static void text(sqlite3_stmt *st, int c, char *dst, size_t n) {
    const unsigned char *s = sqlite3_column_text(st, c);
    snprintf(dst, n, "%s", s ? (const char *)s : "");
}

static double real(sqlite3_stmt *st, int c) {
    return sqlite3_column_type(st, c) == SQLITE_NULL ? NAN : sqlite3_column_double(st, c);
}

static uint64_t u64(sqlite3_stmt *st, int c) {
    sqlite3_int64 v = sqlite3_column_int64(st, c);
    return v < 0 ? 0 : (uint64_t)v;
}

static void row_quality(sqlite3_stmt *st, mp_report_data *d) {
    mp_report_qrow r;
    memset(&r, 0, sizeof r);
    r.run = sqlite3_column_int64(st, 0);
    text(st, 1, r.started, sizeof r.started);
    text(st, 2, r.kind, sizeof r.kind);
    text(st, 3, r.git, sizeof r.git);
    text(st, 4, r.algo, sizeof r.algo);
    r.graphs = sqlite3_column_int64(st, 5);
    r.valid = sqlite3_column_int64(st, 6);
    r.invalid = sqlite3_column_int64(st, 7);
    r.refused = sqlite3_column_int64(st, 8);
    r.mean = real(st, 9);
    r.max = real(st, 10);
    MP_VEC_PUSH(d->q, d->nq, d->capq, r);
}

static void row_point(sqlite3_stmt *st, mp_report_data *d) {
    mp_report_prow r;
    memset(&r, 0, sizeof r);
    r.run = sqlite3_column_int64(st, 0);
    r.tensors = real(st, 1);
    r.ms = real(st, 2);
    text(st, 3, r.algo, sizeof r.algo);
    text(st, 4, r.graph, sizeof r.graph);
    if (isfinite(r.tensors) && isfinite(r.ms)) MP_VEC_PUSH(d->p, d->np, d->capp, r);
}

static void row_worst(sqlite3_stmt *st, mp_report_data *d) {
    mp_report_wrow r;
    memset(&r, 0, sizeof r);
    r.run = sqlite3_column_int64(st, 0);
    text(st, 1, r.graph, sizeof r.graph);
    text(st, 2, r.algo, sizeof r.algo);
    r.ratio = real(st, 3);
    r.bytes = u64(st, 4);
    r.lower = u64(st, 5);
    text(st, 6, r.profile, sizeof r.profile);
    r.tensors = u64(st, 7);
    text(st, 8, r.kind, sizeof r.kind);
    MP_VEC_PUSH(d->w, d->nw, d->capw, r);
}

typedef struct filter {
    const char *since, *algo;
} filter;

static int query(sqlite3 *db, const char *sql, const filter *o, int64_t limit,
                 void (*row)(sqlite3_stmt *, mp_report_data *), mp_report_data *d,
                 mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EFORMAT, "report query: %s", sqlite3_errmsg(db));
    sqlite3_bind_text(st, 1, o->since ? o->since : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, o->algo ? o->algo : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, limit);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st, d);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return mp_err_set(err, MP_EFORMAT, "report query: %s", sqlite3_errmsg(db));
    return MP_OK;
}

int mp_db_report_data(mp_db *db, const char *since, const char *algo, uint32_t max_points,
                      uint32_t worst, mp_report_data *d, mp_err *err) {
    memset(d, 0, sizeof *d);
    sqlite3 *h = mp_db_sqlite(db);
    filter f = {since, algo};
    int rc = query(h, Q_QUALITY, &f, 0, row_quality, d, err);
    if (rc == MP_OK) rc = query(h, Q_POINTS, &f, max_points, row_point, d, err);
    if (rc == MP_OK) rc = query(h, Q_WORST, &f, worst, row_worst, d, err);
    return rc;
}

void mp_report_data_free(mp_report_data *d) {
    mp_xfree(d->q);
    mp_xfree(d->p);
    mp_xfree(d->w);
    memset(d, 0, sizeof *d);
}
