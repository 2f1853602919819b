/* merge.c - `memplan merge`: the shards of one harness run (harness
 * --shard K/N, one database each) made one run again.
 *
 * Each input contributes its latest harness run.  All of them are read and
 * checked before the output is touched: one seed, count, option line,
 * memplan version and commit; one N; every K from 0 to N-1 exactly once;
 * each shard's rows exactly its own cases.  The merged run is then written
 * in one transaction (all of its rows and summaries, or nothing; a new
 * output file is removed again on failure).  Its runs.merged_from names
 * the shards, so merging the same shards again finds that run and writes
 * nothing: merging is idempotent.  A shard is another machine's file:
 * each is checked as hostile input (store.c opens it hardened; here every
 * field's type and range, every row's values and the planners) before its
 * numbers size anything. */
#include "store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct shard_run {
    const char *path;
    int64_t run;
    uint64_t seed, count, graphs, rows;
    uint32_t shard, shards; /* a whole run: 0/1 */
    char *options, *version, *git_rev, *host, *started, *finished;
    char *planners; /* its planners, sorted, ','-separated */
} shard_run;

static void shard_free(shard_run *s) {
    mp_xfree(s->options);
    mp_xfree(s->version);
    mp_xfree(s->git_rev);
    mp_xfree(s->host);
    mp_xfree(s->started);
    mp_xfree(s->finished);
    mp_xfree(s->planners);
}

/* The latest harness run of one input: what it is.  A shard comes from
 * another machine: every field is checked for its type and range before
 * it is used (a shard count out of range would size arrays). */
static const char READ_RUN[] =
    "SELECT id, seed, count, options, version, git_rev, host, started, coalesce(finished, started), shard,"
    " shards, CASE"
    " WHEN typeof(seed) NOT IN ('integer','null') OR seed < 0 THEN 'seed'"
    " WHEN typeof(count) NOT IN ('integer','null') OR count < 0 THEN 'count'"
    " WHEN typeof(shard) NOT IN ('integer','null') OR shard < 0 OR shard >= ?1 THEN 'shard'"
    " WHEN typeof(shards) NOT IN ('integer','null') OR shards < 1 OR shards > ?1 THEN 'shards'"
    " WHEN (shard IS NULL) != (shards IS NULL) OR shard >= shards THEN 'shard'"
    " WHEN typeof(options) != 'text' THEN 'options' WHEN typeof(version) != 'text' THEN 'version'"
    " WHEN typeof(git_rev) != 'text' THEN 'git_rev' WHEN typeof(host) != 'text' THEN 'host'"
    " WHEN typeof(started) != 'text' THEN 'started' WHEN typeof(finished) NOT IN ('text','null') THEN 'finished'"
    " END FROM runs WHERE kind = 'harness' ORDER BY id DESC LIMIT 1";

static void take_run(sqlite3_stmt *st, shard_run *s) {
    s->run = sqlite3_column_int64(st, 0);
    s->seed = (uint64_t)sqlite3_column_int64(st, 1);
    s->count = (uint64_t)sqlite3_column_int64(st, 2);
    s->options = mp_db_column_text(st, 3);
    s->version = mp_db_column_text(st, 4);
    s->git_rev = mp_db_column_text(st, 5);
    s->host = mp_db_column_text(st, 6);
    s->started = mp_db_column_text(st, 7);
    s->finished = mp_db_column_text(st, 8);
    bool sharded = sqlite3_column_type(st, 10) != SQLITE_NULL;
    s->shard = sharded ? (uint32_t)sqlite3_column_int64(st, 9) : 0;
    s->shards = sharded ? (uint32_t)sqlite3_column_int64(st, 10) : 1;
}

static int read_run(sqlite3 *db, shard_run *s, mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, READ_RUN, -1, &st, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EFORMAT, "%s: %s", s->path, sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, MP_SHARDS_MAX);
    int step = sqlite3_step(st), rc = MP_OK;
    if (step == SQLITE_ROW && sqlite3_column_type(st, 11) != SQLITE_NULL)
        rc = mp_err_set(err, MP_EFORMAT, "%s: run %lld has a bad %s (a damaged or forged shard)", s->path,
                        (long long)sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 11));
    else if (step == SQLITE_ROW)
        take_run(st, s);
    else if (step != SQLITE_DONE)
        rc = mp_err_set(err, mp_db_code_of(step), "%s: %s", s->path, sqlite3_errmsg(db));
    else
        rc = mp_err_set(err, MP_EFORMAT, "%s: the database has no harness run", s->path);
    sqlite3_finalize(st);
    return rc;
}

/* Case index of harness graph id "h<seed>-<i>", or -1. */
static int64_t case_of(const char *id, uint64_t seed) {
    char head[32];
    snprintf(head, sizeof head, "h%llu-", (unsigned long long)seed);
    size_t n = strlen(head);
    if (strncmp(id, head, n) != 0 || id[n] < '0' || id[n] > '9') return -1;
    char *end;
    errno = 0;
    unsigned long long i = strtoull(id + n, &end, 10);
    return *end || errno || i > INT64_MAX ? -1 : (int64_t)i;
}

/* The first row of a run whose column has the wrong type or range:
 * (graph, algo, column); no row when all are good. */
static const char BAD_ROW[] =
    "SELECT graph, algo, bad FROM (SELECT graph, algo, CASE"
    " WHEN typeof(graph) != 'text' THEN 'graph' WHEN typeof(algo) != 'text' THEN 'algo'"
    " WHEN typeof(options) NOT IN ('text','null') THEN 'options'"
    " WHEN typeof(profile) NOT IN ('text','null') THEN 'profile'"
    " WHEN typeof(tensors) != 'integer' OR tensors < 0 THEN 'tensors'"
    " WHEN typeof(nodes) != 'integer' OR nodes < 0 THEN 'nodes'"
    " WHEN typeof(lower_bound) != 'integer' OR lower_bound < 0 THEN 'lower_bound'"
    " WHEN typeof(total_bytes) != 'integer' OR total_bytes < 0 THEN 'total_bytes'"
    " WHEN typeof(buffers) NOT IN ('text','null') THEN 'buffers'"
    " WHEN typeof(ratio) NOT IN ('real','integer','null') OR ratio < 0 THEN 'ratio'"
    " WHEN typeof(plan_ms) NOT IN ('real','integer','null') OR plan_ms < 0 THEN 'plan_ms'"
    " WHEN typeof(peak_kb) NOT IN ('integer','null') OR peak_kb < 0 THEN 'peak_kb'"
    " WHEN typeof(verify) != 'text' OR verify NOT IN ('valid','invalid','refused','crash','timeout') THEN 'verify'"
    " WHEN typeof(violations) NOT IN ('integer','null') OR violations < 0 THEN 'violations'"
    " END AS bad FROM results WHERE run_id = ?1) WHERE bad IS NOT NULL LIMIT 1";

/* Every value of the run's rows has its column's type and range. */
static int check_values(sqlite3 *db, shard_run *s, mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, BAD_ROW, -1, &st, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EFORMAT, "%s: %s", s->path, sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, s->run);
    int step = sqlite3_step(st), rc = MP_OK;
    if (step == SQLITE_ROW) {
        mp_buf m;
        mp_buf_init(&m);
        mp_buf_printf(&m, "%s: run %lld: the row of graph '", s->path, (long long)s->run);
        mp_buf_put_printable(&m, (const char *)sqlite3_column_text(st, 0));
        mp_buf_puts(&m, "', planner '");
        mp_buf_put_printable(&m, (const char *)sqlite3_column_text(st, 1));
        mp_buf_printf(&m, "' has a bad %s (a damaged or forged shard)", (const char *)sqlite3_column_text(st, 2));
        rc = mp_err_set(err, MP_EFORMAT, "%s", m.data);
        mp_buf_free(&m);
    } else if (step != SQLITE_DONE) {
        rc = mp_err_set(err, mp_db_code_of(step), "%s: %s", s->path, sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    return rc;
}

/* The run's planners, sorted, ','-separated: every shard must have run
 * the same ones. */
static int read_planners(sqlite3 *db, shard_run *s, mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT group_concat(algo, ',') FROM (SELECT DISTINCT algo FROM results"
                           " WHERE run_id = ?1 ORDER BY algo)", -1, &st, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EFORMAT, "%s: %s", s->path, sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, s->run);
    int step = sqlite3_step(st), rc = MP_OK;
    if (step == SQLITE_ROW) s->planners = mp_db_column_text(st, 0);
    else rc = mp_err_set(err, mp_db_code_of(step), "%s: %s", s->path, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

static size_t count_planners(const char *list) {
    size_t n = list[0] ? 1 : 0;
    for (const char *c = list; *c; c++) n += *c == ',';
    return n;
}

/* Every row of the shard is one of its own cases, and every case has one
 * row for each planner of the run. */
static int check_rows(sqlite3 *db, shard_run *s, mp_err *err) {
    sqlite3_stmt *st;
    int rc = check_values(db, s, err), step = SQLITE_DONE;
    if (rc == MP_OK) rc = read_planners(db, s, err);
    if (rc) return rc;
    if (sqlite3_prepare_v2(db, "SELECT graph, count(*), count(DISTINCT algo) FROM results WHERE run_id = ?1"
                           " GROUP BY graph", -1, &st, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EFORMAT, "%s: %s", s->path, sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, s->run);
    size_t planners = count_planners(s->planners);
    while (rc == MP_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *g = (const char *)sqlite3_column_text(st, 0);
        int64_t i = case_of(g ? g : "", s->seed), k = sqlite3_column_int64(st, 1);
        if (i < 0 || (uint64_t)i >= s->count || (uint64_t)i % s->shards != s->shard)
            rc = mp_err_set(err, MP_EFORMAT, "%s: run %lld (shard %u/%u) has rows of graph '%s', not one of its"
                            " cases", s->path, (long long)s->run, s->shard, s->shards, g ? g : "");
        else if (k != sqlite3_column_int64(st, 2) || (uint64_t)k != planners)
            rc = mp_err_set(err, MP_EFORMAT, "%s: run %lld: graph '%s' has %lld rows, not one for each of the"
                            " run's %zu planners", s->path, (long long)s->run, g, (long long)k, planners);
        s->graphs++;
        s->rows += (uint64_t)k;
    }
    if (rc == MP_OK && step != SQLITE_DONE)
        rc = mp_err_set(err, mp_db_code_of(step), "%s: %s", s->path, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    uint64_t want = s->count > s->shard ? (s->count - s->shard - 1) / s->shards + 1 : 0;
    if (rc == MP_OK && s->graphs != want)
        rc = mp_err_set(err, MP_EFORMAT, "%s: run %lld (shard %u/%u of %llu cases) has %llu of its %llu graphs",
                        s->path, (long long)s->run, s->shard, s->shards, (unsigned long long)s->count,
                        (unsigned long long)s->graphs, (unsigned long long)want);
    return rc;
}

static int load_shard(const char *path, shard_run *s, mp_err *err) {
    memset(s, 0, sizeof *s);
    s->path = path;
    mp_db *d = mp_db_open_existing(path, err);
    if (!d) return err->code;
    int rc = read_run(mp_db_sqlite(d), s, err);
    if (rc == MP_OK) rc = check_rows(mp_db_sqlite(d), s, err);
    mp_db_close(d);
    return rc;
}

/* Two shards of one run agree on everything but K; the first difference. */
static const char *differs(const shard_run *a, const shard_run *b) {
    if (a->seed != b->seed) return "seed";
    if (a->count != b->count) return "count";
    if (strcmp(a->options, b->options)) return "options";
    if (strcmp(a->version, b->version)) return "memplan version";
    if (strcmp(a->git_rev, b->git_rev)) return "commit";
    if (a->shards != b->shards) return "shard count";
    if (strcmp(a->planners, b->planners)) return "planners";
    return NULL;
}

/* The shards, in K order, as one run: or why not.  by_k has n places:
 * N is checked against n before a shard number indexes it. */
static int check_shards(shard_run *s, size_t n, shard_run **by_k, mp_err *err) {
    for (size_t i = 1; i < n; i++) {
        const char *what = differs(&s[0], &s[i]);
        if (what)
            return mp_err_set(err, MP_EFORMAT, "%s and %s: not shards of one run: they differ in %s", s[0].path,
                              s[i].path, what);
    }
    uint32_t N = s[0].shards;
    if (n > N) return mp_err_set(err, MP_EFORMAT, "%zu inputs for a run of %u shards", n, N);
    for (uint32_t k = 0; n < N && k <= n; k++) { /* fewer than N: the first K that none of them is */
        bool given = false;
        for (size_t i = 0; i < n; i++) given |= s[i].shard == k;
        if (!given) return mp_err_set(err, MP_EFORMAT, "shard %u/%u is missing (%zu of %u given)", k, N, n, N);
    }
    for (size_t i = 0; i < n; i++) {
        if (by_k[s[i].shard])
            return mp_err_set(err, MP_EFORMAT, "%s and %s: both are shard %u/%u", by_k[s[i].shard]->path,
                              s[i].path, s[i].shard, N);
        by_k[s[i].shard] = &s[i];
    }
    return MP_OK;
}

/* The merge's identity, kept in runs.merged_from: what differs() compares
 * (seed, count, version, commit, planners, N, options), then per shard
 * "K/N host started finished rows".  Runs started in the same second on
 * hosts of one name (CI containers) differ in one of these, or else they
 * are the same deterministic run. */
static void fingerprint(shard_run *const *by_k, uint32_t n, mp_buf *b) {
    const shard_run *a = by_k[0];
    mp_buf_printf(b, "seed=%llu count=%llu version=%s commit=%s planners=%s shards=%u options=",
                  (unsigned long long)a->seed, (unsigned long long)a->count, a->version, a->git_rev, a->planners, n);
    mp_buf_puts(b, a->options);
    for (uint32_t k = 0; k < n; k++)
        mp_buf_printf(b, ";%u/%u %s %s %s %llu", k, n, by_k[k]->host, by_k[k]->started, by_k[k]->finished,
                      (unsigned long long)by_k[k]->rows);
}

/* The merged run's host list, earliest start and latest finish. */
static void span(shard_run *const *by_k, uint32_t n, mp_buf *hosts, const char **started, const char **finished) {
    *started = by_k[0]->started;
    *finished = by_k[0]->finished;
    for (uint32_t k = 0; k < n; k++) {
        bool seen = false;
        for (uint32_t j = 0; j < k; j++) seen |= strcmp(by_k[j]->host, by_k[k]->host) == 0;
        if (!seen) mp_buf_printf(hosts, "%s%s", hosts->len ? "," : "", by_k[k]->host);
        if (strcmp(by_k[k]->started, *started) < 0) *started = by_k[k]->started;
        if (strcmp(by_k[k]->finished, *finished) > 0) *finished = by_k[k]->finished;
    }
}

/* A run whose merged_from is this merge's, or 0. */
static int64_t merged_before(sqlite3 *db, const char *fp) {
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT max(id) FROM runs WHERE kind = 'harness' AND merged_from = ?1", -1, &st, NULL);
    sqlite3_bind_text(st, 1, fp, -1, SQLITE_TRANSIENT);
    int64_t id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return id;
}

/* Shard s's rows into run `id` of out. */
static int copy_rows(mp_db *out, const shard_run *s, int64_t id, mp_err *err) {
    mp_db *in = mp_db_open_existing(s->path, err);
    if (!in) return err->code;
    sqlite3_stmt *rd, *wr;
    sqlite3_prepare_v2(mp_db_sqlite(in), "SELECT graph, algo, options, profile, tensors, nodes, lower_bound,"
                       " total_bytes, buffers, ratio, plan_ms, peak_kb, verify, violations FROM results"
                       " WHERE run_id = ?1 ORDER BY graph, algo", -1, &rd, NULL);
    int rc = MP_OK;
    if (sqlite3_prepare_v2(mp_db_sqlite(out), "INSERT INTO results(run_id, graph, algo, options, profile,"
                           " tensors, nodes, lower_bound, total_bytes, buffers, ratio, plan_ms, peak_kb, verify,"
                           " violations) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)", -1, &wr,
                           NULL) != SQLITE_OK)
        rc = mp_err_set(err, MP_EIO, "merge: %s", sqlite3_errmsg(mp_db_sqlite(out)));
    sqlite3_bind_int64(rd, 1, s->run);
    int step;
    while (rc == MP_OK && (step = sqlite3_step(rd)) == SQLITE_ROW) {
        sqlite3_bind_int64(wr, 1, id);
        for (int c = 0; c < 14; c++) sqlite3_bind_value(wr, c + 2, sqlite3_column_value(rd, c));
        if (sqlite3_step(wr) != SQLITE_DONE)
            rc = mp_err_set(err, MP_EIO, "merge: %s", sqlite3_errmsg(mp_db_sqlite(out)));
        sqlite3_reset(wr);
    }
    if (rc == MP_OK && step != SQLITE_DONE)
        rc = mp_err_set(err, mp_db_code_of(step), "%s: %s", s->path, sqlite3_errmsg(mp_db_sqlite(in)));
    sqlite3_finalize(rd);
    sqlite3_finalize(wr);
    mp_db_close(in);
    return rc;
}

static int write_merged(mp_db *out, shard_run *const *by_k, uint32_t n, const char *fp, mp_merge_summary *sum,
                        mp_err *err) {
    for (uint32_t k = 0; k < n; k++) {
        sum->rows += by_k[k]->rows;
        sum->graphs += by_k[k]->graphs;
    }
    if (mp_db_exec(out, "BEGIN IMMEDIATE", err)) return err->code;
    int rc = MP_OK;
    if ((sum->run_id = merged_before(mp_db_sqlite(out), fp)) > 0) {
        sum->already = true;
        mp_db_exec(out, "ROLLBACK", NULL);
        return MP_OK;
    }
    mp_buf hosts;
    mp_buf_init(&hosts);
    const shard_run *a = by_k[0];
    mp_run_info run = {.kind = "harness", .options = a->options, .seed = a->seed, .count = a->count,
                       .merged_from = fp, .git_rev = a->git_rev, .version = a->version};
    const char *started;
    span(by_k, n, &hosts, &started, &run.finished);
    run.host = hosts.data;
    snprintf(run.started, sizeof run.started, "%s", started);
    rc = mp_db_insert_run(out, &run, &sum->run_id, err);
    for (uint32_t k = 0; k < n && rc == MP_OK; k++) rc = copy_rows(out, by_k[k], sum->run_id, err);
    if (rc == MP_OK) rc = mp_db_summarize(out, sum->run_id, err);
    if (rc == MP_OK) rc = mp_db_exec(out, "COMMIT", err);
    if (rc != MP_OK) mp_db_exec(out, "ROLLBACK", NULL);
    mp_buf_free(&hosts);
    return rc;
}

/* The output is none of the inputs (the same file, however named). */
static int output_apart(const char *out, const char *const *inputs, size_t n, mp_err *err) {
    struct stat o;
    if (stat(out, &o) != 0) return MP_OK;
    for (size_t i = 0; i < n; i++) {
        struct stat s;
        if (stat(inputs[i], &s) == 0 && s.st_dev == o.st_dev && s.st_ino == o.st_ino)
            return mp_err_set(err, MP_EFORMAT, "%s: is the input %s; merge into another database", out, inputs[i]);
    }
    return MP_OK;
}

static void remove_db(const char *path) {
    size_t n = strlen(path) + 8;
    char *side = mp_xmalloc(n);
    unlink(path);
    snprintf(side, n, "%s-wal", path);
    unlink(side);
    snprintf(side, n, "%s-shm", path);
    unlink(side);
    mp_xfree(side);
}

int mp_db_merge(const char *out, const char *const *inputs, size_t n, mp_merge_summary *sum, mp_err *err) {
    memset(sum, 0, sizeof *sum);
    mp_err_clear(err);
    if (!n) return mp_err_set(err, MP_EFORMAT, "merge: no input database");
    if (output_apart(out, inputs, n, err)) return err->code;
    shard_run *s = mp_xcalloc(n, sizeof *s);
    int rc = MP_OK;
    for (size_t i = 0; i < n && rc == MP_OK; i++) rc = load_shard(inputs[i], &s[i], err);
    uint32_t N = rc == MP_OK ? s[0].shards : 0;
    shard_run **by_k = mp_xcalloc(n, sizeof *by_k);
    if (rc == MP_OK) rc = check_shards(s, n, by_k, err);
    if (rc == MP_OK) {
        mp_buf fp;
        mp_buf_init(&fp);
        fingerprint(by_k, N, &fp);
        struct stat st;
        bool existed = stat(out, &st) == 0;
        mp_db *d = mp_db_open(out, err);
        rc = d ? write_merged(d, by_k, N, fp.data, sum, err) : err->code;
        mp_db_close(d);
        if (rc != MP_OK && !existed) remove_db(out);
        sum->shards = N;
        mp_buf_free(&fp);
    }
    for (size_t i = 0; i < n; i++) shard_free(&s[i]);
    mp_xfree(s);
    mp_xfree(by_k);
    return rc;
}
