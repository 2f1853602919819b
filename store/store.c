/* store.c - the SQLite metrics store (results/metrics.db).
 *
 * Schema (PRAGMA user_version = MP_DB_SCHEMA), documented in
 * docs/metrics.md:
 *   runs(id, started, finished, kind, git_rev, host, version, options,
 *        seed, count)
 *   results(run_id, graph, algo, options, profile, tensors, nodes,
 *           lower_bound, total_bytes, buffers, ratio, plan_ms, peak_kb,
 *           verify, violations)
 *   campaigns(run_id, target, engine, seconds, executions, corpus_size,
 *             coverage, crashes)
 *   summaries(run_id, algo, graphs, valid, invalid, refused, mean_ratio,
 *             max_ratio, bytes, plan_ms): a harness run's figures per
 *             planner, written with the run; `prune` drops old runs'
 *             results and keeps these
 * runs.shard/shards mark shard K of N (harness --shard); a merged run
 * (memplan merge) has none and names its shards in runs.merged_from.
 * Older databases are migrated step by step inside one transaction each;
 * a database newer than this memplan is refused, never touched.
 * WAL mode and a busy timeout let several processes write one database;
 * a run is written in one IMMEDIATE transaction, so a killed run leaves no
 * row at all. */
#include "internal.h"
#include "metrics.h"
#include "files.h"
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

struct mp_db {
    sqlite3 *db;
    char *path;
    uint64_t progress_calls, progress_limit; /* harden() */
};

/* Version 1: the first schema. */
static const char SCHEMA_V1[] =
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, started TEXT NOT NULL, kind TEXT NOT NULL,"
    " git_rev TEXT, host TEXT, version TEXT, options TEXT);"
    "CREATE TABLE results(run_id INTEGER NOT NULL REFERENCES runs(id), graph TEXT NOT NULL,"
    " algo TEXT NOT NULL, tensors INTEGER, nodes INTEGER, lower_bound INTEGER,"
    " total_bytes INTEGER, ratio REAL, verify TEXT, PRIMARY KEY(run_id, graph, algo));";

/* Each step takes version k to k + 1. */
static const char *const MIGRATIONS[] = {
    /* 1 -> 2: per-buffer bytes, timing, memory, options, violation counts */
    "ALTER TABLE runs ADD COLUMN finished TEXT;"
    "ALTER TABLE runs ADD COLUMN seed INTEGER;"
    "ALTER TABLE runs ADD COLUMN count INTEGER;"
    "ALTER TABLE results ADD COLUMN options TEXT;"
    "ALTER TABLE results ADD COLUMN profile TEXT;"
    "ALTER TABLE results ADD COLUMN buffers TEXT;"
    "ALTER TABLE results ADD COLUMN plan_ms REAL;"
    "ALTER TABLE results ADD COLUMN peak_kb INTEGER;"
    "ALTER TABLE results ADD COLUMN violations INTEGER;",
    /* 2 -> 3: fuzzing campaigns, and indexes for the report */
    "CREATE TABLE campaigns(run_id INTEGER NOT NULL REFERENCES runs(id), target TEXT NOT NULL,"
    " engine TEXT NOT NULL, seconds REAL, executions INTEGER, corpus_size INTEGER,"
    " coverage INTEGER, crashes INTEGER);"
    "CREATE INDEX results_by_graph ON results(graph, algo);"
    "CREATE INDEX runs_by_kind ON runs(kind, id);",
    /* 3 -> 4: shards and merges, per-run summaries (kept by prune), and
     * indexes that answer the report on a long history */
    "ALTER TABLE runs ADD COLUMN shard INTEGER;"
    "ALTER TABLE runs ADD COLUMN shards INTEGER;"
    "ALTER TABLE runs ADD COLUMN merged_from TEXT;"
    "CREATE TABLE summaries(run_id INTEGER NOT NULL REFERENCES runs(id), algo TEXT NOT NULL,"
    " graphs INTEGER, valid INTEGER, invalid INTEGER, refused INTEGER, mean_ratio REAL,"
    " max_ratio REAL, bytes INTEGER, plan_ms REAL, PRIMARY KEY(run_id, algo));"
    "INSERT INTO summaries " SUMMARY_OF_RESULTS " GROUP BY run_id, algo;"
    "DROP INDEX results_by_graph;" /* nothing reads by graph alone; it slowed every insert */
    RESULTS_INDEXES ";"
    "CREATE INDEX runs_by_rev ON runs(git_rev, id);",
};

/* A run's summaries from its results (?1 = the run). */
static const char SUMMARIZE[] =
    "INSERT INTO summaries " SUMMARY_OF_RESULTS " WHERE run_id = ?1 GROUP BY algo";

int mp_db_schema_version(void) { return 1 + (int)(sizeof MIGRATIONS / sizeof *MIGRATIONS); }

/* What an SQLite error is for the exit status: a file that is no
 * database (2), or an I/O, permission or lock error (4). */
static int code_of(int sqlite_rc) {
    int primary = sqlite_rc & 0xff;
    return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT || primary == SQLITE_ERROR ||
                   primary == SQLITE_INTERRUPT
               ? MP_EFORMAT
               : MP_EIO;
}

static int db_fail(mp_db *d, mp_err *err, const char *what) {
    if ((sqlite3_extended_errcode(d->db) & 0xff) == SQLITE_INTERRUPT)
        return mp_err_set(err, MP_EFORMAT, "%s: %s: interrupted: the query ran far longer than a database of "
                          "this size needs (a damaged or hostile file)", d->path, what);
    return mp_err_set(err, code_of(sqlite3_extended_errcode(d->db)), "%s: %s: %s", d->path, what,
                      sqlite3_errmsg(d->db));
}

static int exec(mp_db *d, const char *sql, mp_err *err) {
    char *msg = NULL;
    int rc = sqlite3_exec(d->db, sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK) return MP_OK;
    rc = mp_err_set(err, code_of(rc), "%s: %s", d->path, msg ? msg : "SQL error");
    sqlite3_free(msg);
    return rc;
}

static int user_version(mp_db *d, int *v) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(d->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK) return -1;
    int rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : -1;
}

/* Bring the schema to the current version; each step is atomic. */
static int migrate(mp_db *d, mp_err *err) {
    int v;
    if (exec(d, "BEGIN IMMEDIATE", err)) return MP_EFORMAT;
    if (user_version(d, &v)) {
        exec(d, "ROLLBACK", NULL);
        return db_fail(d, err, "cannot read the schema version");
    }
    int target = mp_db_schema_version();
    if (v > target) {
        exec(d, "ROLLBACK", NULL);
        return mp_err_set(err, MP_EFORMAT,
                          "%s: schema version %d is newer than this memplan's (%d); "
                          "use a newer memplan", d->path, v, target);
    }
    int rc = MP_OK;
    if (v == 0) { /* a new database */
        sqlite3_stmt *st;
        sqlite3_prepare_v2(d->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
        int objects = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
        sqlite3_finalize(st);
        if (objects != 0)
            rc = mp_err_set(err, MP_EFORMAT, "%s: not a memplan metrics database", d->path);
        else
            rc = exec(d, SCHEMA_V1, err);
        v = 1;
    }
    for (; rc == MP_OK && v < target; v++) {
        char pragma[64];
        snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", v + 1);
        rc = exec(d, MIGRATIONS[v - 1], err);
        if (rc == MP_OK) rc = exec(d, pragma, err);
    }
    if (rc == MP_OK) {
        char pragma[64];
        snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", target);
        rc = exec(d, pragma, err);
    }
    if (rc == MP_OK) return exec(d, "COMMIT", err);
    exec(d, "ROLLBACK", NULL);
    return rc;
}

/* ---------------------------------------------- a database is hostile input
 *
 * A metrics database, a shard from another machine or a baseline's dump
 * may have been made by anyone.  Before a statement of ours reads it:
 * the schema runs no function SQLite does not call innocuous
 * (trusted_schema off, defensive on); the four tables are plain tables
 * with exactly their columns (no view, no trigger, no virtual table, no
 * generated column: any of these runs code of the file's author when we
 * read); and a progress handler interrupts a statement that runs far
 * longer than the file's size explains (the last line of defence against
 * a loop no check above saw).  Values are checked where they are read. */

/* The tables and their columns at the current schema version. */
static const char *const TABLES[][20] = {
    {"runs", "id", "started", "kind", "git_rev", "host", "version", "options", "finished", "seed", "count",
     "shard", "shards", "merged_from", NULL},
    {"results", "run_id", "graph", "algo", "tensors", "nodes", "lower_bound", "total_bytes", "ratio", "verify",
     "options", "profile", "buffers", "plan_ms", "peak_kb", "violations", NULL},
    {"campaigns", "run_id", "target", "engine", "seconds", "executions", "corpus_size", "coverage", "crashes",
     NULL},
    {"summaries", "run_id", "algo", "graphs", "valid", "invalid", "refused", "mean_ratio", "max_ratio", "bytes",
     "plan_ms", NULL},
};

/* SQLite calls back every PROGRESS_STEPS virtual machine steps. */
#define PROGRESS_STEPS 10000

static int progress(void *ctx) {
    mp_db *d = ctx;
    return ++d->progress_calls > d->progress_limit;
}

/* Each statement has the whole budget: its count starts when it starts. */
static int statement_starts(unsigned what, void *ctx, void *p, void *x) {
    (void)what, (void)p, (void)x;
    ((mp_db *)ctx)->progress_calls = 0;
    return 0;
}

/* What one statement may cost: 10^9 steps, and 2,000 more per byte of
 * the file (the report's largest query over a 10^6-row history takes a
 * few 10^8). */
static void harden(mp_db *d, const char *path) {
    sqlite3_db_config(d->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
    sqlite3_db_config(d->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    struct stat st;
    uint64_t bytes = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
    d->progress_limit = (1000000000ull + 2000ull * bytes) / PROGRESS_STEPS;
    sqlite3_progress_handler(d->db, PROGRESS_STEPS, progress, d);
    sqlite3_trace_v2(d->db, SQLITE_TRACE_STMT, statement_starts, d);
}

/* Table t is a plain table with exactly TABLES[t]'s columns. */
static int check_columns(mp_db *d, const char *const *want, mp_err *err) {
    sqlite3_stmt *st;
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA table_xinfo(\"%s\")", want[0]);
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(d, err, "read the schema");
    size_t n_want = 0, seen = 0;
    while (want[1 + n_want]) n_want++;
    int rc = MP_OK;
    while (rc == MP_OK && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        bool known = false;
        for (size_t k = 0; name && k < n_want; k++) known |= strcmp(name, want[1 + k]) == 0;
        if (!known || sqlite3_column_int(st, 6) != 0)
            rc = mp_err_set(err, MP_EFORMAT, "%s: table %s has a column '%s' that memplan does not write%s",
                            d->path, want[0], name ? name : "", known ? " (generated or hidden)" : "");
        seen++;
    }
    sqlite3_finalize(st);
    if (rc == MP_OK && seen != n_want)
        rc = mp_err_set(err, MP_EFORMAT, "%s: table %s has %zu columns, memplan's has %zu", d->path, want[0], seen,
                        n_want);
    return rc;
}

/* Only plain tables and indexes, and the four tables each once with its
 * columns. */
static int check_objects(mp_db *d, mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(d->db, "SELECT type, name, coalesce(sql, '') FROM sqlite_master", -1, &st, NULL) !=
        SQLITE_OK)
        return db_fail(d, err, "read the schema");
    int rc = MP_OK, found = 0;
    while (rc == MP_OK && sqlite3_step(st) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0), *name = (const char *)sqlite3_column_text(st, 1);
        const char *sql = (const char *)sqlite3_column_text(st, 2);
        type = type ? type : "", name = name ? name : "";
        bool table = strcmp(type, "table") == 0, virt = sql && strncmp(sql, "CREATE VIRTUAL", 14) == 0;
        bool ours = false;
        for (size_t t = 0; t < sizeof TABLES / sizeof *TABLES; t++) ours |= table && strcmp(name, TABLES[t][0]) == 0;
        found += ours;
        if ((!table && strcmp(type, "index") != 0) || virt || (table && !ours && strncmp(name, "sqlite_", 7) != 0))
            rc = mp_err_set(err, MP_EFORMAT, "%s: not a memplan metrics database: it has a %s%s '%s' that memplan "
                            "does not make", d->path, virt ? "virtual " : "", type, name);
    }
    sqlite3_finalize(st);
    if (rc == MP_OK && found != (int)(sizeof TABLES / sizeof *TABLES))
        rc = mp_err_set(err, MP_EFORMAT, "%s: not a memplan metrics database: %d of its %d tables", d->path, found,
                        (int)(sizeof TABLES / sizeof *TABLES));
    for (size_t t = 0; rc == MP_OK && t < sizeof TABLES / sizeof *TABLES; t++) rc = check_columns(d, TABLES[t], err);
    return rc;
}

/* Not a FIFO, device or folder: opening one would block or write past. */
static int regular_or_new(const char *path, mp_err *err) {
    struct stat st;
    if (strcmp(path, ":memory:") == 0 || stat(path, &st) != 0 || S_ISREG(st.st_mode)) return MP_OK;
    return mp_err_set(err, MP_EFORMAT, "%s: not a regular file; a metrics database is one", path);
}

mp_db *mp_db_open(const char *path, mp_err *err) {
    if (regular_or_new(path, err)) return NULL;
    mp_db *d = mp_xcalloc(1, sizeof *d);
    d->path = mp_xmalloc(strlen(path) + 1);
    strcpy(d->path, path);
    if (sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        db_fail(d, err, "cannot open");
        mp_db_close(d);
        return NULL;
    }
    harden(d, path);
    sqlite3_busy_timeout(d->db, 30000);
    /* WAL with synchronous NORMAL: a transaction is still all or nothing,
     * a power cut may lose the last ones; a 64 MiB page cache keeps the
     * report's indexes' inserts off the disk on a long history */
    if (exec(d, "PRAGMA journal_mode = WAL", err) || exec(d, "PRAGMA synchronous = NORMAL", err) ||
        exec(d, "PRAGMA cache_size = -65536", err) || exec(d, "PRAGMA foreign_keys = ON", err) ||
        migrate(d, err) || check_objects(d, err)) {
        mp_db_close(d);
        return NULL;
    }
    return d;
}

/* A reader's check of the schema: a memplan database of this version
 * (a reader never migrates: that is a writer's job). */
static int check_schema(mp_db *d, mp_err *err) {
    int v;
    if (user_version(d, &v)) return db_fail(d, err, "cannot read the schema version");
    int target = mp_db_schema_version();
    if (v == 0) return mp_err_set(err, MP_EFORMAT, "%s: not a memplan metrics database", d->path);
    if (v > target)
        return mp_err_set(err, MP_EFORMAT, "%s: schema version %d is newer than this memplan's (%d); "
                          "use a newer memplan", d->path, v, target);
    if (v < target)
        return mp_err_set(err, MP_EFORMAT, "%s: schema version %d is older than this memplan's (%d); "
                          "a writer (memplan harness --db %s) migrates it", d->path, v, target, d->path);
    return MP_OK;
}

/* "file:PATH?QUERY" with the characters a URI gives meaning to escaped
 * (freed with sqlite3_free). */
static char *file_uri(const char *path, const char *query) {
    size_t n = strlen(path);
    char *esc = mp_xmalloc(3 * n + 1), *o = esc;
    for (const char *s = path; *s; s++) {
        if (*s == '%' || *s == '?' || *s == '#') o += sprintf(o, "%%%02x", (unsigned char)*s);
        else *o++ = *s;
    }
    *o = 0;
    char *uri = sqlite3_mprintf("file:%s?%s", esc, query);
    mp_xfree(esc);
    return uri;
}

/* Open an existing database for queries only: nothing is written, no lock
 * is taken that a writer would wait behind, and a file without write
 * permission (or on a read-only mount) works.  With no write-ahead log
 * beside it (no writer active), it is opened immutable: SQLite then
 * creates no -wal or -shm file either. */
mp_db *mp_db_open_existing(const char *path, mp_err *err) {
    struct stat st;
    if (stat(path, &st) != 0) {
        mp_err_set(err, MP_EFORMAT, "no metrics database at %s; run `memplan harness --db %s` first", path,
                   path);
        return NULL;
    }
    if (regular_or_new(path, err)) return NULL;
    mp_db *d = mp_xcalloc(1, sizeof *d);
    d->path = strcpy(mp_xmalloc(strlen(path) + 1), path);
    char *wal = mp_xmalloc(strlen(path) + 8);
    sprintf(wal, "%s-wal", path);
    bool writer = access(wal, F_OK) == 0;
    mp_xfree(wal);
    char *uri = file_uri(path, writer ? "mode=ro" : "immutable=1");
    int rc = uri ? sqlite3_open_v2(uri, &d->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) : SQLITE_NOMEM;
    sqlite3_free(uri);
    if (rc == SQLITE_OK) harden(d, path);
    if (rc != SQLITE_OK || check_schema(d, err) || check_objects(d, err)) {
        if (rc != SQLITE_OK) db_fail(d, err, "cannot open");
        mp_db_close(d);
        return NULL;
    }
    sqlite3_busy_timeout(d->db, 30000);
    return d;
}

void mp_db_close(mp_db *d) {
    if (!d) return;
    sqlite3_close(d->db);
    mp_xfree(d->path);
    mp_xfree(d);
}

sqlite3 *mp_db_sqlite(mp_db *d) { return d->db; }

const char *mp_db_path(const mp_db *d) { return d->path; }

int mp_db_code_of(int sqlite_rc) { return code_of(sqlite_rc); }

char *mp_db_column_text(sqlite3_stmt *st, int c) {
    const unsigned char *s = sqlite3_column_text(st, c);
    const char *t = s ? (const char *)s : "";
    return strcpy(mp_xmalloc(strlen(t) + 1), t);
}

void mp_db_now(char *buf, size_t n) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s) {
    if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, i);
}

static int insert_run(mp_db *d, const mp_run_info *run, int64_t *id, mp_err *err) {
    char host[256] = "", now[32];
    gethostname(host, sizeof host - 1);
    mp_db_now(now, sizeof now);
    sqlite3_stmt *st;
    const char *sql = "INSERT INTO runs(started, finished, kind, git_rev, host, version, options,"
                      " seed, count, shard, shards, merged_from) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)";
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(d, err, "prepare");
    bind_text(st, 1, run->started[0] ? run->started : now);
    bind_text(st, 2, run->finished ? run->finished : now);
    bind_text(st, 3, run->kind);
    bind_text(st, 4, run->git_rev ? run->git_rev : mp_git_revision());
    bind_text(st, 5, run->host ? run->host : host);
    bind_text(st, 6, run->version ? run->version : MEMPLAN_VERSION);
    bind_text(st, 7, run->options);
    sqlite3_bind_int64(st, 8, (sqlite3_int64)run->seed);
    sqlite3_bind_int64(st, 9, (sqlite3_int64)run->count);
    if (run->shards) {
        sqlite3_bind_int64(st, 10, run->shard);
        sqlite3_bind_int64(st, 11, run->shards);
    }
    bind_text(st, 12, run->merged_from);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MP_OK : db_fail(d, err, "insert run");
    sqlite3_finalize(st);
    *id = sqlite3_last_insert_rowid(d->db);
    return rc;
}

static int insert_results(mp_db *d, int64_t id, const mp_result_row *rows, size_t n, mp_err *err) {
    sqlite3_stmt *st;
    const char *sql = "INSERT INTO results(run_id, graph, algo, options, profile, tensors, nodes,"
                      " lower_bound, total_bytes, buffers, ratio, plan_ms, peak_kb, verify,"
                      " violations) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(d, err, "prepare");
    int rc = MP_OK;
    for (size_t i = 0; i < n && rc == MP_OK; i++) {
        const mp_result_row *r = &rows[i];
        sqlite3_bind_int64(st, 1, id);
        bind_text(st, 2, r->graph);
        bind_text(st, 3, r->algo);
        bind_text(st, 4, r->options);
        bind_text(st, 5, r->profile);
        sqlite3_bind_int64(st, 6, (sqlite3_int64)r->tensors);
        sqlite3_bind_int64(st, 7, (sqlite3_int64)r->nodes);
        sqlite3_bind_int64(st, 8, (sqlite3_int64)r->lower_bound);
        sqlite3_bind_int64(st, 9, (sqlite3_int64)r->total_bytes);
        bind_text(st, 10, r->buffers);
        sqlite3_bind_double(st, 11, r->ratio);
        sqlite3_bind_double(st, 12, r->plan_ms);
        sqlite3_bind_int64(st, 13, (sqlite3_int64)r->peak_kb);
        bind_text(st, 14, r->verify);
        sqlite3_bind_int64(st, 15, (sqlite3_int64)r->violations);
        if (sqlite3_step(st) != SQLITE_DONE) rc = db_fail(d, err, "insert result");
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static int insert_campaigns(mp_db *d, int64_t id, const mp_campaign_row *rows, size_t n, mp_err *err) {
    sqlite3_stmt *st;
    const char *sql = "INSERT INTO campaigns(run_id, target, engine, seconds, executions,"
                      " corpus_size, coverage, crashes) VALUES(?,?,?,?,?,?,?,?)";
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(d, err, "prepare");
    int rc = MP_OK;
    for (size_t i = 0; i < n && rc == MP_OK; i++) {
        const mp_campaign_row *c = &rows[i];
        sqlite3_bind_int64(st, 1, id);
        bind_text(st, 2, c->target);
        bind_text(st, 3, c->engine);
        sqlite3_bind_double(st, 4, c->seconds);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)c->executions);
        sqlite3_bind_int64(st, 6, (sqlite3_int64)c->corpus_size);
        sqlite3_bind_int64(st, 7, (sqlite3_int64)c->coverage);
        sqlite3_bind_int64(st, 8, (sqlite3_int64)c->crashes);
        if (sqlite3_step(st) != SQLITE_DONE) rc = db_fail(d, err, "insert campaign");
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

int mp_db_summarize(mp_db *d, int64_t run, mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(d->db, SUMMARIZE, -1, &st, NULL) != SQLITE_OK) return db_fail(d, err, "prepare");
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MP_OK : db_fail(d, err, "summarize run");
    sqlite3_finalize(st);
    return rc;
}

int mp_db_insert_run(mp_db *d, const mp_run_info *run, int64_t *id, mp_err *err) {
    return insert_run(d, run, id, err);
}

int mp_db_exec(mp_db *d, const char *sql, mp_err *err) { return exec(d, sql, err); }

/* One transaction: the run row and all of its rows, or nothing. */
int mp_db_record(mp_db *d, const mp_run_info *run, const mp_result_row *rows, size_t n,
                 const mp_campaign_row *camps, size_t nc, int64_t *run_id, mp_err *err) {
    if (exec(d, "BEGIN IMMEDIATE", err)) return MP_EFORMAT;
    int64_t id = 0;
    int rc = insert_run(d, run, &id, err);
    if (rc == MP_OK) rc = insert_results(d, id, rows, n, err);
    if (rc == MP_OK && n) rc = mp_db_summarize(d, id, err);
    if (rc == MP_OK) rc = insert_campaigns(d, id, camps, nc, err);
    if (rc == MP_OK) rc = exec(d, "COMMIT", err);
    if (rc != MP_OK) {
        exec(d, "ROLLBACK", NULL);
        return rc;
    }
    if (run_id) *run_id = id;
    return MP_OK;
}
