/* store.h - private to the metrics store (store/): the SQLite
 * handle behind an mp_db.  Every SQL statement of the project lives in
 * this folder; nothing outside it includes sqlite3.h. */
#ifndef MP_STORE_H
#define MP_STORE_H

#include "internal.h"
#include "metrics.h"
#include "files.h"

#include <sqlite3.h>

sqlite3 *mp_db_sqlite(mp_db *d);
/* The exit code of an SQLite error: MP_EFORMAT for a file that is no
 * database, damaged or hostile; MP_EIO for I/O, permission and locks. */
int mp_db_code_of(int sqlite_rc);
/* Column c of the current row as a string of its own (NULL: ""; caller frees). */
char *mp_db_column_text(sqlite3_stmt *st, int c);

/* The summaries' columns from results (a run's figures per planner, as
 * the report shows them).  Bytes are summed as doubles (total(): exact up
 * to 2^53, never an overflow error that would refuse the run). */
#define SUMMARY_OF_RESULTS \
    "SELECT run_id, algo, count(*), sum(verify='valid')," \
    " sum(verify IN ('invalid','crash')), sum(verify='refused')," \
    " avg(CASE WHEN verify='valid' THEN ratio END), max(CASE WHEN verify='valid' THEN ratio END)," \
    " CAST(total(CASE WHEN verify='valid' THEN total_bytes END) AS INTEGER), sum(plan_ms)" \
    " FROM results"

/* The worst valid plans, each graph once (worst.c): of one planner, or
 * of all when algo is NULL or ""; since: an ISO date prefix or NULL. */
typedef struct mp_worst_row {
    int64_t run;
    char *graph, *algo;
    double ratio;
    char *ratio_text; /* "%.4f", as SQLite prints it */
    uint64_t bytes, lower;
    char *profile;
    uint64_t tensors;
    char *kind;
} mp_worst_row;
typedef struct mp_worst_rows {
    mp_worst_row *v;
    size_t n, cap;
} mp_worst_rows;
int mp_db_worst(sqlite3 *db, const char *since, const char *algo, uint32_t limit, mp_worst_rows *out,
                mp_err *err);
void mp_worst_rows_free(mp_worst_rows *w);

/* The per-commit figures as the HTML page's quality rows (by_commit.c):
 * ?1 = since, ?2 = algorithm or '' (report_data.c runs it). */
const char *mp_by_commit_chart_sql(void);

/* The indexes that answer the report's worst plans (worst.c): per planner
 * and over all, valid plans only.  prune drops and rebuilds them. */
#define RESULTS_INDEXES \
    "CREATE INDEX results_worst ON results(algo, ratio DESC, run_id DESC, graph) WHERE verify = 'valid';" \
    "CREATE INDEX results_ratio ON results(ratio DESC, run_id DESC, algo) WHERE verify = 'valid'"

/* Within a transaction the caller holds: */
int mp_db_insert_run(mp_db *d, const mp_run_info *run, int64_t *id, mp_err *err);
int mp_db_summarize(mp_db *d, int64_t run, mp_err *err); /* summaries from its results */
/* One statement or several, errors as "PATH: message". */
int mp_db_exec(mp_db *d, const char *sql, mp_err *err);

#endif
