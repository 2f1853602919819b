/* by_commit.c - `memplan report --by-commit`: each planner's figures per
 * commit, in the order the commits were first measured, with the change
 * against the commit before, so that a regression is found by commit.
 *
 * Only harness runs of one command are compared (the option line of the
 * newest harness run in the window: the same seed, count and planners, so
 * the same graphs); a commit measured several times counts all of its
 * runs.  Everything comes from the runs' summaries, which prune keeps. */
#include "report_table.h"

#include <stdio.h>

/* ?1 = since, ?2 = algorithm or ''.  One row per commit and planner. */
#define PER_COMMIT \
    "WITH cmd AS (SELECT options FROM runs WHERE kind = 'harness' AND started >= ?1 ORDER BY id DESC LIMIT 1)," \
    " sel AS (SELECT r.id, coalesce(r.git_rev,'') AS rev, r.started, s.* FROM runs r" \
    "  JOIN summaries s ON s.run_id = r.id WHERE r.kind = 'harness' AND r.started >= ?1" \
    "  AND r.options IS (SELECT options FROM cmd) AND (?2 = '' OR s.algo = ?2))," \
    " per AS (SELECT rev, algo, min(id) AS first, max(id) AS last, count(*) AS runs, sum(graphs) AS graphs," \
    "  sum(valid) AS valid, sum(invalid) AS invalid, sum(refused) AS refused," \
    "  sum(mean_ratio * valid) / nullif(sum(valid), 0) AS ratio, max(max_ratio) AS worst," \
    "  CAST(total(bytes) / count(*) AS INTEGER) AS bytes, sum(plan_ms) / nullif(sum(graphs), 0) AS ms" \
    "  FROM sel GROUP BY rev, algo)," \
    " ord AS (SELECT *, min(first) OVER (PARTITION BY rev) AS seen," \
    "  (SELECT substr(started,1,19) FROM runs WHERE id = per.first) AS started FROM per)"

static const char Q_BY_COMMIT[] = PER_COMMIT
    " SELECT rev, first, last, runs, algo, graphs, valid, invalid, refused, printf('%.4f', ratio),"
    "  CASE WHEN lag(ratio) OVER w IS NULL OR ratio IS NULL THEN '' ELSE printf('%+.4f', ratio - lag(ratio) OVER w) END,"
    "  printf('%.4f', worst), bytes,"
    "  CASE WHEN lag(bytes) OVER w IS NULL OR lag(bytes) OVER w = 0 THEN ''"
    "   ELSE printf('%+.3f%%', 100.0 * (bytes - lag(bytes) OVER w) / lag(bytes) OVER w) END,"
    "  printf('%.3f', ms),"
    "  CASE WHEN lag(ms) OVER w IS NULL OR lag(ms) OVER w = 0 OR ms IS NULL THEN ''"
    "   ELSE printf('%+.1f%%', 100.0 * (ms - lag(ms) OVER w) / lag(ms) OVER w) END"
    " FROM ord WINDOW w AS (PARTITION BY algo ORDER BY seen) ORDER BY seen, algo";
static const char *const C_BY_COMMIT[] = {"commit", "first_run", "last_run", "runs", "algo", "graphs",
                                          "valid", "invalid", "refused", "mean_ratio", "ratio_change",
                                          "max_ratio", "bytes_per_run", "bytes_change", "ms_per_graph",
                                          "ms_change"};

/* The same rows for the HTML page's chart, as quality rows: run = the
 * commit's first run (of any planner), git = the commit. */
static const char Q_CHART[] = PER_COMMIT
    " SELECT seen, (SELECT substr(started,1,19) FROM runs WHERE id = seen), 'commit', rev, algo, graphs, valid,"
    "  invalid, refused, ratio, worst"
    " FROM ord ORDER BY seen, algo";

int mp_report_by_commit(mp_db *d, const char *since, const char *algo, const char *format, mp_buf *out,
                        mp_err *err) {
    mp_rtable t = {"by_commit", C_BY_COMMIT, 16, NULL, 0, 0};
    int rc = mp_rtable_query(mp_db_sqlite(d), Q_BY_COMMIT, since, algo, &t, err);
    if (rc == MP_OK) mp_rtable_put(&t, 1, format, out);
    mp_rtable_free(&t);
    return rc;
}

const char *mp_by_commit_chart_sql(void) { return Q_CHART; }
