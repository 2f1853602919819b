/* worst.c - the worst valid plans of a history, each graph once, without
 * sorting the history: the rows are read in (ratio, run) order from an
 * index (results_ratio, or results_worst for one planner) and the scan
 * stops as soon as `limit` graphs are found and the rows past them cannot
 * tie.  A graph's first row is its worst plan (ratio, then the latest run,
 * then the planner's name); the answer is ordered by ratio descending,
 * then the latest run, then the graph's name: exactly what ranking every
 * row would give, in milliseconds on a history of millions of rows. */
#include "store.h"

#include <stdlib.h>

static const char Q_ALL[] =
    "SELECT x.run_id, x.graph, x.algo, x.ratio, printf('%.4f', x.ratio), x.total_bytes, x.lower_bound,"
    " coalesce(x.profile,''), x.tensors, r.kind"
    " FROM results x JOIN runs r ON r.id = x.run_id"
    " WHERE x.verify = 'valid' AND r.started >= ?1"
    " ORDER BY x.ratio DESC, x.run_id DESC, x.algo";
static const char Q_ONE[] =
    "SELECT x.run_id, x.graph, x.algo, x.ratio, printf('%.4f', x.ratio), x.total_bytes, x.lower_bound,"
    " coalesce(x.profile,''), x.tensors, r.kind"
    " FROM results x JOIN runs r ON r.id = x.run_id"
    " WHERE x.verify = 'valid' AND r.started >= ?1 AND x.algo = ?2"
    " ORDER BY x.ratio DESC, x.run_id DESC, x.graph";

static void row_free(mp_worst_row *w) {
    mp_xfree(w->graph);
    mp_xfree(w->algo);
    mp_xfree(w->ratio_text);
    mp_xfree(w->profile);
    mp_xfree(w->kind);
}

/* Descending ratio, latest run, then the graph's name. */
static int cmp_worst(const void *a, const void *b) {
    const mp_worst_row *x = a, *y = b;
    if (x->ratio != y->ratio) return x->ratio > y->ratio ? -1 : 1;
    if (x->run != y->run) return x->run > y->run ? -1 : 1;
    return strcmp(x->graph, y->graph);
}

static void take(sqlite3_stmt *st, mp_worst_rows *out) {
    mp_worst_row w = {sqlite3_column_int64(st, 0), mp_db_column_text(st, 1), mp_db_column_text(st, 2), sqlite3_column_double(st, 3),
                      mp_db_column_text(st, 4), (uint64_t)sqlite3_column_int64(st, 5), (uint64_t)sqlite3_column_int64(st, 6),
                      mp_db_column_text(st, 7), (uint64_t)sqlite3_column_int64(st, 8), mp_db_column_text(st, 9)};
    MP_VEC_PUSH(out->v, out->n, out->cap, w);
}

int mp_db_worst(sqlite3 *db, const char *since, const char *algo, uint32_t limit, mp_worst_rows *out,
                mp_err *err) {
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    bool one = algo && *algo;
    if (sqlite3_prepare_v2(db, one ? Q_ONE : Q_ALL, -1, &st, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EFORMAT, "report query: %s", sqlite3_errmsg(db));
    sqlite3_bind_text(st, 1, since ? since : "", -1, SQLITE_TRANSIENT);
    if (one) sqlite3_bind_text(st, 2, algo, -1, SQLITE_TRANSIENT);
    mp_strmap seen;
    mp_strmap_init(&seen);
    int rc = SQLITE_DONE;
    while (limit && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (out->n >= limit) { /* past the limit only rows that tie the last one found can rank */
            const mp_worst_row *last = &out->v[limit - 1];
            if (sqlite3_column_double(st, 3) != last->ratio || sqlite3_column_int64(st, 0) != last->run) break;
        }
        const char *g = (const char *)sqlite3_column_text(st, 1);
        g = g ? g : "";
        size_t len = strlen(g);
        if (mp_strmap_get(&seen, g, len) >= 0) continue;
        take(st, out);
        mp_strmap_put(&seen, out->v[out->n - 1].graph, len, 1); /* keys are not copied: the row's */
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        mp_err_set(err, MP_EFORMAT, "report query: %s", sqlite3_errmsg(db));
        sqlite3_finalize(st);
        mp_strmap_free(&seen);
        return err->code;
    }
    sqlite3_finalize(st);
    mp_strmap_free(&seen);
    if (out->n) qsort(out->v, out->n, sizeof *out->v, cmp_worst);
    while (out->n > limit) row_free(&out->v[--out->n]);
    return MP_OK;
}

void mp_worst_rows_free(mp_worst_rows *w) {
    for (size_t i = 0; i < w->n; i++) row_free(&w->v[i]);
    mp_xfree(w->v);
    memset(w, 0, sizeof *w);
}
