/* metrics.h - the SQLite metrics store as the harness, the pictures and
 * the command use it: runs and their rows, the report's queries, the
 * gate's baseline, merge and prune (store/, every SQL statement of the
 * project).  Not part of the shared library; may change in any release. */
#ifndef MP_METRICS_H
#define MP_METRICS_H

#include "model.h"

/* ---------------------------------------------------------- metrics store */

typedef struct mp_db mp_db;

typedef struct mp_run_info {
    const char *kind;    /* "harness", "bench", "fuzz" */
    const char *options; /* the command line, as JSON or text */
    char started[32];    /* ISO 8601 UTC; empty: now */
    uint64_t seed, count;
    uint32_t shard, shards; /* harness --shard K/N: K, N; shards 0: a whole run */
    /* a merged run: its identity (the run's seed, count, version,
     * commit, planners and options, then "K/N host started finished rows"
     * per shard, ';'-separated: merge.c), and where and what they measured (NULL: this machine, this build,
     * finished now) */
    const char *merged_from, *host, *git_rev, *finished, *version;
} mp_run_info;

typedef struct mp_result_row {
    const char *graph, *algo, *options, *profile;
    uint64_t tensors, nodes, lower_bound, total_bytes;
    const char *buffers; /* entry buffer sizes, space separated */
    double ratio, plan_ms;
    uint64_t peak_kb, violations;
    const char *verify; /* "valid", "invalid", "refused", "crash" */
} mp_result_row;

typedef struct mp_campaign_row {
    const char *target, *engine;
    double seconds;
    uint64_t executions, corpus_size, coverage, crashes;
} mp_campaign_row;

/* Open or create a database, migrating an older schema.  MP_EFORMAT when it
 * is not a memplan database or is newer than this memplan. */
mp_db *mp_db_open(const char *path, mp_err *err);
/* An existing database for queries (report, gate): read-only, never
 * migrated, no lock a writer waits behind; MP_EFORMAT when it does not
 * exist or is not of this schema version. */
mp_db *mp_db_open_existing(const char *path, mp_err *err);
void mp_db_close(mp_db *db);
const char *mp_db_path(const mp_db *d); /* as it was opened */
int mp_db_schema_version(void);
/* Record a run with its rows in one transaction: all of it or nothing. */
int mp_db_record(mp_db *db, const mp_run_info *run, const mp_result_row *rows, size_t n,
                 const mp_campaign_row *campaigns, size_t n_campaigns, int64_t *run_id,
                 mp_err *err);
void mp_db_now(char *buf, size_t n);
const char *mp_git_revision(void);
typedef struct mp_merge_summary {
    int64_t run_id;     /* the merged run (or the earlier identical merge) */
    uint32_t shards;
    uint64_t graphs, rows;
    bool already;       /* these shards were merged into run_id before: nothing written */
} mp_merge_summary;
/* At most this many shards in one harness run (--shard K/N). */
#define MP_SHARDS_MAX 1000000
/* The shards of one harness run (harness --shard K/N; each input's latest
 * harness run) as one run in `out`: all checked first (every field's type
 * and range; one seed, count, options, version, commit and planner set;
 * every shard once; each shard's rows its own cases, one per planner),
 * then written in one transaction.  Idempotent. */
int mp_db_merge(const char *out, const char *const *inputs, size_t n, mp_merge_summary *sum, mp_err *err);
typedef struct mp_prune_summary {
    int64_t runs, rows; /* runs whose per-case rows were dropped, and those rows */
} mp_prune_summary;
/* Drop the per-case rows (results) of every run but the newest `keep` of
 * its kind, in one transaction; runs and their summaries stay. */
int mp_db_prune(mp_db *db, uint64_t keep, mp_prune_summary *s, mp_err *err);
int mp_db_vacuum(mp_db *db, mp_err *err); /* give the freed pages back to the file system */
/* The history report: format "text", "csv" or "json"; since: an ISO date
 * prefix or NULL; algo: one algorithm or NULL. */
int mp_db_report(mp_db *db, const char *since, const char *algo, const char *format,
              struct mp_buf *out, mp_err *err);
/* Per commit (in the order first measured), each planner's figures over
 * the harness runs of the newest run's command, and the change against
 * the commit before. */
int mp_report_by_commit(mp_db *db, const char *since, const char *algo, const char *format,
                        struct mp_buf *out, mp_err *err);
/* Compare the latest harness run with a baseline SQL dump (or rewrite it). */
int mp_gate(mp_db *db, const char *baseline, bool update, struct mp_buf *out, bool *passed,
            mp_err *err);



/* What the HTML report reads from the store (mp_db_report_data): each list
 * in a total order, so the page is deterministic. */
typedef struct mp_report_qrow { /* one run and algorithm */
    int64_t run, graphs, valid, invalid, refused;
    char started[24], kind[16], git[48], algo[16];
    double mean, max; /* over valid plans; NAN when none */
} mp_report_qrow;

typedef struct mp_report_prow { /* one plan: time against size */
    int64_t run;
    double tensors, ms;
    char algo[16], graph[96];
} mp_report_prow;

typedef struct mp_report_wrow { /* one of the worst plans of an algorithm */
    int64_t run;
    uint64_t bytes, lower, tensors;
    double ratio;
    char graph[96], algo[16], profile[16], kind[16];
    char href[512]; /* link to its SVG, "" when there is none (viz) */
    char note[160]; /* why there is none, when asked for (viz) */
} mp_report_wrow;

typedef struct mp_report_data {
    mp_report_qrow *q; /* per run and algorithm, by run */
    size_t nq, capq;
    mp_report_prow *p; /* the most recent plans, at most max_points */
    size_t np, capp;
    mp_report_wrow *w; /* per algorithm its worst valid plans, at most worst */
    size_t nw, capw;
    bool by_commit; /* q is per commit: run = its first run, git = the commit */
} mp_report_data;

/* since: ISO date prefix or NULL; algo: one planner or NULL. */
int mp_db_report_data(mp_db *db, const char *since, const char *algo, uint32_t max_points,
                      uint32_t worst, bool by_commit, mp_report_data *d, mp_err *err);
void mp_report_data_free(mp_report_data *d);

/* The gate's rows: one (graph, algorithm) of a harness run or baseline. */
typedef struct mp_gate_row {
    char *graph, *algo, *options, *verify;
    uint64_t total, lower;
    double ratio;
} mp_gate_row;

typedef struct mp_gate_rows {
    mp_gate_row *v;
    size_t n, cap;
    uint64_t seed, count; /* of the run they come from */
    char *options;        /* its command line, "--seed S --count N --algos A,B" */
    char *version;        /* the memplan that made it */
    int64_t run;
    uint32_t shard, shards; /* a shard of a sharded run (shards > 1) */
} mp_gate_rows;

/* The latest harness run's rows (run, seed and count filled). */
int mp_db_gate_rows(mp_db *db, mp_gate_rows *rows, mp_err *err);
/* A baseline file's rows (the SQL dump mp_gate_dump writes), sorted as
 * mp_gate_sort_rows sorts, one per (graph, algo) or MP_EFORMAT.  The file is
 * data: it runs in a private in-memory database under an authorizer that
 * allows only creating and filling the two baseline tables. */
int mp_gate_load_baseline(const char *path, mp_gate_rows *rows, mp_err *err);
void mp_gate_dump(const mp_gate_rows *rows, mp_buf *out);
/* Rows in (graph, algo) strcmp order, the order the gate searches. */
void mp_gate_sort_rows(mp_gate_rows *rows);
void mp_gate_rows_free(mp_gate_rows *rows);

#endif
