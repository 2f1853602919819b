/* report_data.c - what the HTML report (viz/html.c) reads from the
 * metrics store.
 *
 * Three queries over runs, summaries and results (schema: store.c,
 * docs/metrics.md), each in a total order so the page is deterministic:
 *   quality  per run (or commit, by_commit.c) and algorithm: counts, mean
 *            and worst ratio to the lower bound of the valid plans
 *   points   the most recent plans' size and planning time
 *   worst    per algorithm, its highest-ratio valid plans (worst.c)
 * ?1 = since ('' for all), ?2 = algorithm ('' for all), ?3 = a limit. */
#include "store.h"

#include <math.h>
#include <stdio.h>

static const char Q_QUALITY[] =
    "SELECT r.id, substr(r.started,1,19), r.kind, coalesce(r.git_rev,''), s.algo, s.graphs,"
    " s.valid, s.invalid, s.refused, s.mean_ratio, s.max_ratio"
    " FROM runs r JOIN summaries s ON s.run_id = r.id"
    " WHERE r.started >= ?1 AND (?2 = '' OR s.algo = ?2)"
    " ORDER BY r.id, s.algo";

static const char Q_POINTS[] =
    "SELECT x.run_id, x.tensors, x.plan_ms, x.algo, x.graph"
    " FROM results x JOIN runs r ON r.id = x.run_id"
    " WHERE r.started >= ?1 AND (?2 = '' OR x.algo = ?2)"
    " AND x.verify IN ('valid','invalid') AND x.plan_ms IS NOT NULL AND x.tensors > 0"
    " ORDER BY x.run_id DESC, x.graph, x.algo LIMIT ?3";


static void text(sqlite3_stmt *st, int c, char *dst, size_t n) {
    const unsigned char *s = sqlite3_column_text(st, c);
    snprintf(dst, n, "%s", s ? (const char *)s : "");
}

static double real(sqlite3_stmt *st, int c) {
    return sqlite3_column_type(st, c) == SQLITE_NULL ? NAN : sqlite3_column_double(st, c);
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

static int cmp_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Per algorithm of the quality rows, its worst valid plans (worst.c). */
static int worst_rows(sqlite3 *h, const char *since, uint32_t worst, mp_report_data *d, mp_err *err) {
    const char **algos = mp_xmalloc((d->nq + 1) * sizeof *algos);
    size_t na = 0;
    for (size_t i = 0; i < d->nq; i++) {
        size_t k = 0;
        while (k < na && strcmp(algos[k], d->q[i].algo)) k++;
        if (k == na) algos[na++] = d->q[i].algo;
    }
    qsort(algos, na, sizeof *algos, cmp_name);
    int rc = MP_OK;
    for (size_t a = 0; a < na && rc == MP_OK; a++) {
        mp_worst_rows w;
        rc = mp_db_worst(h, since, algos[a], worst, &w, err);
        for (size_t i = 0; rc == MP_OK && i < w.n; i++) {
            mp_report_wrow r;
            memset(&r, 0, sizeof r);
            const mp_worst_row *x = &w.v[i];
            r.run = x->run, r.bytes = x->bytes, r.lower = x->lower, r.tensors = x->tensors, r.ratio = x->ratio;
            snprintf(r.graph, sizeof r.graph, "%s", x->graph);
            snprintf(r.algo, sizeof r.algo, "%s", x->algo);
            snprintf(r.profile, sizeof r.profile, "%s", x->profile);
            snprintf(r.kind, sizeof r.kind, "%s", x->kind);
            MP_VEC_PUSH(d->w, d->nw, d->capw, r);
        }
        mp_worst_rows_free(&w);
    }
    mp_xfree(algos);
    return rc;
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
                      uint32_t worst, bool by_commit, mp_report_data *d, mp_err *err) {
    memset(d, 0, sizeof *d);
    sqlite3 *h = mp_db_sqlite(db);
    filter f = {since, algo};
    /* the worst plans of every planner of the window, also by commit */
    int rc = query(h, Q_QUALITY, &f, 0, row_quality, d, err);
    if (rc == MP_OK) rc = query(h, Q_POINTS, &f, max_points, row_point, d, err);
    if (rc == MP_OK) rc = worst_rows(h, since, worst, d, err);
    if (rc == MP_OK && by_commit) {
        mp_xfree(d->q);
        d->q = NULL, d->nq = d->capq = 0;
        d->by_commit = true;
        rc = query(h, mp_by_commit_chart_sql(), &f, 0, row_quality, d, err);
    }
    return rc;
}

void mp_report_data_free(mp_report_data *d) {
    mp_xfree(d->q);
    mp_xfree(d->p);
    mp_xfree(d->w);
    memset(d, 0, sizeof *d);
}
