/* test_store.c - the metrics store: migration from an older schema, a run
 * is all or nothing (also when killed), several writers at once, and
 * databases it must refuse. */
#include "helpers.h"
#include "store.h"

#include <signal.h>
#include <time.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

static char *tmp_db(void) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/memplan-store-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    unlink(path);
    return path;
}

static void cleanup(const char *path) {
    char p[128];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

static long long scalar(const char *path, const char *sql) {
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    long long v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void exec_sql(const char *path, const char *sql) {
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s", msg ? msg : "");
    sqlite3_close(db);
}

static mp_result_row row(const char *graph, uint64_t bytes) {
    mp_result_row r = {0};
    r.graph = graph;
    r.algo = "greedy";
    r.options = "--alignment 16";
    r.profile = "mixed";
    r.tensors = 10;
    r.nodes = 11;
    r.lower_bound = 100;
    r.total_bytes = bytes;
    r.buffers = "0 100";
    r.ratio = (double)bytes / 100.0;
    r.verify = "valid";
    return r;
}

static void record(const char *path, size_t n, const char *prefix) {
    mp_err err;
    mp_db *db = mp_db_open(path, &err);
    cr_assert(db != NULL, "%s", err.msg);
    mp_result_row *rows = mp_xmalloc(n * sizeof *rows);
    char (*names)[32] = mp_xmalloc(n * sizeof *names);
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "%s%zu", prefix, i);
        rows[i] = row(names[i], 100 + i);
    }
    mp_run_info run = {.kind = "harness", .options = "--test", .seed = 1, .count = n};
    int64_t id;
    cr_assert_eq(mp_db_record(db, &run, rows, n, NULL, 0, &id, &err), MP_OK, "%s", err.msg);
    mp_xfree(rows);
    mp_xfree(names);
    mp_db_close(db);
}

Test(store, new_database_has_the_current_schema) {
    char *path = tmp_db();
    record(path, 3, "g");
    cr_assert_eq(scalar(path, "PRAGMA user_version"), mp_db_schema_version());
    cr_assert_eq(scalar(path, "SELECT journal_mode = 'wal' FROM pragma_journal_mode"), 1);
    cr_assert_eq(scalar(path, "SELECT count(*) FROM results WHERE graph LIKE 'g%'"), 3);
    cr_assert_eq(scalar(path, "SELECT count(*) FROM campaigns"), 0);
    cleanup(path);
}

/* What memplan's first schema (version 1) wrote. */
static const char V1[] =
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, started TEXT NOT NULL, kind TEXT NOT NULL,"
    " git_rev TEXT, host TEXT, version TEXT, options TEXT);"
    "CREATE TABLE results(run_id INTEGER NOT NULL REFERENCES runs(id), graph TEXT NOT NULL,"
    " algo TEXT NOT NULL, tensors INTEGER, nodes INTEGER, lower_bound INTEGER,"
    " total_bytes INTEGER, ratio REAL, verify TEXT, PRIMARY KEY(run_id, graph, algo));"
    "INSERT INTO runs VALUES(1, '2026-01-01T00:00:00Z', 'harness', 'abc', 'h', '0.9', '');"
    "INSERT INTO results VALUES(1, 'old', 'greedy', 5, 6, 64, 96, 1.5, 'valid');"
    "PRAGMA user_version = 1;";

Test(store, an_older_schema_is_migrated_and_its_rows_kept) {
    char *path = tmp_db();
    exec_sql(path, V1);
    record(path, 2, "new");
    cr_assert_eq(scalar(path, "PRAGMA user_version"), mp_db_schema_version());
    cr_assert_eq(scalar(path, "SELECT total_bytes FROM results WHERE graph = 'old'"), 96);
    cr_assert_eq(scalar(path, "SELECT count(*) FROM results"), 3);
    cr_assert_eq(scalar(path, "SELECT count(*) FROM results WHERE plan_ms IS NOT NULL"), 2);
    cr_assert_eq(scalar(path, "SELECT count(*) FROM campaigns"), 0);
    /* the report reads old and new rows alike */
    mp_err err;
    mp_db *db = mp_db_open_existing(path, &err);
    cr_assert(db);
    mp_buf b;
    mp_buf_init(&b);
    cr_assert_eq(mp_db_report(db, NULL, NULL, "text", &b, &err), MP_OK, "%s", err.msg);
    ASSERT_CONTAINS(b.data, "old");
    mp_buf_free(&b);
    mp_db_close(db);
    cleanup(path);
}

Test(store, newer_or_foreign_databases_are_refused_untouched) {
    char *path = tmp_db();
    exec_sql(path, "CREATE TABLE t(x); PRAGMA user_version = 99;");
    mp_err err;
    cr_assert_null(mp_db_open(path, &err));
    ASSERT_CONTAINS(err.msg, "newer than this memplan");
    cr_assert_eq(scalar(path, "PRAGMA user_version"), 99);
    cleanup(path);
    exec_sql(path, "CREATE TABLE t(x);");
    cr_assert_null(mp_db_open(path, &err));
    ASSERT_CONTAINS(err.msg, "not a memplan metrics database");
    cr_assert_eq(scalar(path, "SELECT count(*) FROM sqlite_master"), 1);
    cleanup(path);
}

Test(store, a_failing_run_leaves_no_row) {
    char *path = tmp_db();
    record(path, 1, "first");
    mp_err err;
    mp_db *db = mp_db_open(path, &err);
    mp_result_row rows[3] = {row("a", 1), row("b", 2), row("a", 3)}; /* duplicate key */
    mp_run_info run = {.kind = "harness", .options = "--dup", .seed = 2, .count = 3};
    cr_assert_neq(mp_db_record(db, &run, rows, 3, NULL, 0, NULL, &err), MP_OK);
    mp_db_close(db);
    cr_assert_eq(scalar(path, "SELECT count(*) FROM runs"), 1);
    cr_assert_eq(scalar(path, "SELECT count(*) FROM results"), 1);
    cleanup(path);
}

/* A writer killed while recording leaves either its whole run or nothing. */
Test(store, a_killed_run_leaves_nothing_partial) {
    char *path = tmp_db();
    record(path, 1, "seed");
    for (int attempt = 0; attempt < 4; attempt++) {
        pid_t pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
            record(path, 200000, "big");
            _exit(0);
        }
        struct timespec ts = {0, 20000000L * (attempt + 1)};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        long long runs = scalar(path, "SELECT count(*) FROM runs");
        long long rows = scalar(path, "SELECT count(*) FROM results");
        cr_assert_eq(rows, 1 + (runs - 1) * 200000, "partial run: %lld runs, %lld rows", runs, rows);
    }
    cleanup(path);
}

Test(store, two_writers_at_once) {
    char *path = tmp_db();
    record(path, 1, "init");
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            for (int r = 0; r < 15; r++) record(path, 200, k ? "b" : "a");
            _exit(0);
        }
    }
    for (int k = 0; k < 2; k++) {
        int status;
        waitpid(kids[k], &status, 0);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed", k);
    }
    cr_assert_eq(scalar(path, "SELECT count(*) FROM runs"), 31);
    cr_assert_eq(scalar(path, "SELECT count(*) FROM results"), 1 + 30 * 200);
    cleanup(path);
}

/* The report's worst plans (store/worst.c): worst first, each graph
 * once at its worst row, ties by the latest run, at most `limit`; one
 * planner's alone with algo.  Before, turning the query best-first was
 * caught only by tests/cli/history.sh (issue 47). */
Test(store, the_worst_plans_come_worst_first_each_graph_once) {
    char *path = tmp_db();
    mp_err err;
    mp_db *db = mp_db_open(path, &err);
    cr_assert(db != NULL, "%s", err.msg);
    static const char *const graphs[] = {"g0", "g1", "g2", "g3", "g4"};
    static const uint64_t bytes[2][5] = {{150, 110, 190, 120, 130}, {160, 110, 105, 170, 100}};
    for (int run = 0; run < 2; run++) {
        mp_result_row rows[10];
        for (int g = 0; g < 5; g++) {
            rows[2 * g] = row(graphs[g], bytes[run][g]);
            rows[2 * g + 1] = row(graphs[g], 100);
            rows[2 * g + 1].algo = "opt";
        }
        mp_run_info info = {.kind = "harness", .options = "--test", .seed = 1, .count = 5};
        cr_assert_eq(mp_db_record(db, &info, rows, 10, NULL, 0, NULL, &err), MP_OK, "%s", err.msg);
    }
    mp_worst_rows w = {0};
    cr_assert_eq(mp_db_worst(mp_db_sqlite(db), NULL, NULL, 3, &w, &err), MP_OK, "%s", err.msg);
    /* g2 1.90 (run 1), g3 1.70 (run 2), g0 1.60 (run 2) */
    cr_assert_eq(w.n, 3);
    const char *want[3] = {"g2", "g3", "g0"};
    int64_t want_run[3] = {1, 2, 2};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_str_eq(w.v[i].graph, want[i], "row %zu is %s", i, w.v[i].graph);
        cr_assert_eq(w.v[i].run, want_run[i], "row %zu from run %lld", i, (long long)w.v[i].run);
        cr_assert_str_eq(w.v[i].algo, "greedy");
    }
    mp_worst_rows_free(&w);
    memset(&w, 0, sizeof w);
    cr_assert_eq(mp_db_worst(mp_db_sqlite(db), NULL, "opt", 10, &w, &err), MP_OK, "%s", err.msg);
    cr_assert_eq(w.n, 5, "one row per graph for opt, %zu", w.n); /* all at 1.0000: the latest run first */
    for (size_t i = 0; i < w.n; i++) cr_assert(w.v[i].ratio == 1.0 && w.v[i].run == 2 && !strcmp(w.v[i].algo, "opt"));
    mp_worst_rows_free(&w);
    mp_db_close(db);
    cleanup(path);
}
