/* history.c - `memplan report`: what users ask of the metrics history.
 *
 *   quality  per run and algorithm: graphs, valid/invalid/refused, mean and
 *            worst ratio to the lower bound, bytes in all
 *   worst    the graphs with the highest ratio
 *   changes  (graph, algorithm) pairs whose planned bytes changed from one
 *            run of a kind to the next
 * as aligned text, CSV (one header per section) or JSON. */
#include "internal.h"
#include "memplan_tools.h"
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>

typedef struct table {
    const char *name;
    const char *const *cols;
    int ncols;
    char ***rows; /* rows[r][c] */
    size_t n, cap;
} table;

static char *dup_text(const unsigned char *s) {
    const char *t = s ? (const char *)s : "";
    return strcpy(mp_xmalloc(strlen(t) + 1), t);
}

static int run_query(sqlite3 *db, const char *sql, const char *since, const char *algo, table *t,
                     mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EFORMAT, "report query: %s", sqlite3_errmsg(db));
    sqlite3_bind_text(st, 1, since ? since : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, algo ? algo : "", -1, SQLITE_TRANSIENT);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char **row = mp_xmalloc((size_t)t->ncols * sizeof *row);
        for (int c = 0; c < t->ncols; c++) row[c] = dup_text(sqlite3_column_text(st, c));
        MP_VEC_PUSH(t->rows, t->n, t->cap, row);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return mp_err_set(err, MP_EFORMAT, "report query: %s", sqlite3_errmsg(db));
    return MP_OK;
}

static void free_table(table *t) {
    for (size_t r = 0; r < t->n; r++) {
        for (int c = 0; c < t->ncols; c++) mp_xfree(t->rows[r][c]);
        mp_xfree(t->rows[r]);
    }
    mp_xfree(t->rows);
}

/* ?1 = since (ISO date prefix or ''), ?2 = algorithm or '' */
static const char Q_QUALITY[] =
    "SELECT r.id, substr(r.started,1,19), r.kind, coalesce(r.git_rev,''), x.algo, count(*),"
    " sum(x.verify='valid'), sum(x.verify IN ('invalid','crash')), sum(x.verify='refused'),"
    " printf('%.4f', avg(CASE WHEN x.verify='valid' THEN x.ratio END)),"
    " printf('%.4f', max(CASE WHEN x.verify='valid' THEN x.ratio END)),"
    " sum(CASE WHEN x.verify='valid' THEN x.total_bytes ELSE 0 END)"
    " FROM runs r JOIN results x ON x.run_id = r.id"
    " WHERE r.started >= ?1 AND (?2 = '' OR x.algo = ?2)"
    " GROUP BY r.id, x.algo ORDER BY r.id, x.algo";
static const char *const C_QUALITY[] = {"run", "started", "kind", "git", "algo", "graphs",
                                        "valid", "invalid", "refused", "mean_ratio",
                                        "max_ratio", "bytes"};

/* each graph once: its worst valid plan (latest run on a tie) */
static const char Q_WORST[] =
    "SELECT run_id, graph, algo, printf('%.4f', ratio), total_bytes, lower_bound, profile, tensors FROM"
    " (SELECT x.run_id, x.graph, x.algo, x.ratio, x.total_bytes, x.lower_bound,"
    "  coalesce(x.profile,'') AS profile, x.tensors,"
    "  row_number() OVER (PARTITION BY x.graph ORDER BY x.ratio DESC, x.run_id DESC, x.algo) AS k"
    "  FROM results x JOIN runs r ON r.id = x.run_id"
    "  WHERE r.started >= ?1 AND (?2 = '' OR x.algo = ?2) AND x.verify = 'valid')"
    " WHERE k = 1 ORDER BY ratio DESC, run_id DESC, graph LIMIT 10";
static const char *const C_WORST[] = {"run", "graph", "algo", "ratio", "bytes", "lower_bound",
                                      "profile", "tensors"};

static const char Q_CHANGES[] =
    "WITH seq AS (SELECT x.graph, x.algo, x.run_id, x.total_bytes, x.verify, r.kind,"
    "  lag(x.total_bytes) OVER w AS prev_bytes, lag(x.run_id) OVER w AS prev_run,"
    "  lag(x.verify) OVER w AS prev_verify"
    "  FROM results x JOIN runs r ON r.id = x.run_id"
    "  WHERE r.started >= ?1 AND (?2 = '' OR x.algo = ?2)"
    "  WINDOW w AS (PARTITION BY r.kind, x.graph, x.algo ORDER BY x.run_id))"
    " SELECT prev_run, run_id, kind, graph, algo, prev_bytes, total_bytes,"
    "  printf('%+lld', total_bytes - prev_bytes), prev_verify, verify FROM seq"
    " WHERE prev_run IS NOT NULL AND (prev_bytes <> total_bytes OR prev_verify <> verify)"
    " ORDER BY run_id, graph, algo LIMIT 200";
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

/* Text goes to terminals: database strings are shown printable. */
static void escape_controls(table *t) {
    for (size_t r = 0; r < t->n; r++)
        for (int c = 0; c < t->ncols; c++) {
            mp_buf b;
            mp_buf_init(&b);
            mp_buf_put_printable(&b, t->rows[r][c]);
            mp_buf_put(&b, "", 1);
            mp_xfree(t->rows[r][c]);
            t->rows[r][c] = b.data;
        }
}

static void put_text(table *t, mp_buf *b) {
    escape_controls(t);
    size_t w[16] = {0};
    for (int c = 0; c < t->ncols; c++) {
        w[c] = strlen(t->cols[c]);
        for (size_t r = 0; r < t->n; r++)
            if (strlen(t->rows[r][c]) > w[c]) w[c] = strlen(t->rows[r][c]);
    }
    mp_buf_printf(b, "== %s ==\n", t->name);
    for (int c = 0; c < t->ncols; c++) mp_buf_printf(b, "%-*s%s", (int)w[c], t->cols[c], c + 1 < t->ncols ? "  " : "\n");
    for (size_t r = 0; r < t->n; r++)
        for (int c = 0; c < t->ncols; c++)
            mp_buf_printf(b, "%-*s%s", (int)w[c], t->rows[r][c], c + 1 < t->ncols ? "  " : "\n");
    if (!t->n) mp_buf_puts(b, "(none)\n");
    mp_buf_puts(b, "\n");
}

static void csv_field(mp_buf *b, const char *s) {
    if (!strpbrk(s, ",\"\n")) {
        mp_buf_puts(b, s);
        return;
    }
    mp_buf_put(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"') mp_buf_put(b, "\"", 1);
        mp_buf_put(b, s, 1);
    }
    mp_buf_put(b, "\"", 1);
}

static void put_csv(const table *t, mp_buf *b) {
    mp_buf_puts(b, "section");
    for (int c = 0; c < t->ncols; c++) mp_buf_printf(b, ",%s", t->cols[c]);
    mp_buf_puts(b, "\n");
    for (size_t r = 0; r < t->n; r++) {
        mp_buf_puts(b, t->name);
        for (int c = 0; c < t->ncols; c++) {
            mp_buf_put(b, ",", 1);
            csv_field(b, t->rows[r][c]);
        }
        mp_buf_puts(b, "\n");
    }
}

/* Numbers stay numbers in JSON; SQLite gives them back as text. */
static bool numeric(const char *s) {
    if (!*s) return false;
    const char *p = s + (*s == '-' || *s == '+');
    bool digit = false, dot = false;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9') digit = true;
        else if (*p == '.' && !dot) dot = true;
        else return false;
    }
    return digit && *s != '+';
}

static void put_json(const table *t, mp_buf *b, bool last) {
    mp_buf_printf(b, "\"%s\":[", t->name);
    for (size_t r = 0; r < t->n; r++) {
        mp_buf_puts(b, r ? ",{" : "{");
        for (int c = 0; c < t->ncols; c++) {
            mp_buf_printf(b, "%s\"%s\":", c ? "," : "", t->cols[c]);
            const char *v = t->rows[r][c];
            if (!*v) mp_buf_puts(b, "null");
            else if (numeric(v)) mp_buf_puts(b, v);
            else mp_buf_put_json_string(b, v);
        }
        mp_buf_puts(b, "}");
    }
    mp_buf_puts(b, last ? "]" : "],");
}

int mp_report(mp_db *d, const char *since, const char *algo, const char *format, mp_buf *out,
              mp_err *err) {
    sqlite3 *db = mp_db_sqlite(d);
    enum { N_TABLES = 4 };
    table t[N_TABLES] = {{"quality", C_QUALITY, 12, NULL, 0, 0},
                         {"worst", C_WORST, 8, NULL, 0, 0},
                         {"changes", C_CHANGES, 10, NULL, 0, 0},
                         {"campaigns", C_CAMPAIGNS, 11, NULL, 0, 0}};
    const char *q[N_TABLES] = {Q_QUALITY, Q_WORST, Q_CHANGES, Q_CAMPAIGNS};
    int rc = MP_OK;
    for (int i = 0; i < N_TABLES && rc == MP_OK; i++) rc = run_query(db, q[i], since, algo, &t[i], err);
    if (rc == MP_OK) {
        if (strcmp(format, "csv") == 0) {
            for (int i = 0; i < N_TABLES; i++) put_csv(&t[i], out);
        } else if (strcmp(format, "json") == 0) {
            mp_buf_puts(out, "{");
            for (int i = 0; i < N_TABLES; i++) put_json(&t[i], out, i == N_TABLES - 1);
            mp_buf_puts(out, "}\n");
        } else {
            for (int i = 0; i < N_TABLES; i++) put_text(&t[i], out);
        }
    }
    for (int i = 0; i < N_TABLES; i++) free_table(&t[i]);
    return rc;
}
