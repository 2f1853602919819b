/* cmd_bench_history.c - `memplan bench --history`: how the metrics store
 * answers on a long history.  It records RUNS synthetic harness runs of
 * CASES cases for every planner of the table (three runs per commit, an
 * hour apart, a few plans changing every ten runs) into a scratch
 * database, then times what users run on it: the report in each form, the
 * HTML page, the gate, and prune.  Prints one Markdown table. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) { return mp_cli_now_ms() / 1e3; }

static uint64_t mix(uint64_t x) {
    x ^= x >> 33, x *= UINT64_C(0xff51afd7ed558ccd), x ^= x >> 33;
    return x;
}

/* Run r's start: an hour after run r - 1's. */
static void run_start(uint64_t r, char *buf, size_t n) {
    time_t t = (time_t)(1704067200 + r * 3600);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Run r's rows: case c planned by planner a; names in `names`. */
static void synth_rows(uint64_t r, uint64_t cases, uint32_t algos, mp_result_row *rows, char (*names)[24]) {
    for (uint64_t c = 0; c < cases; c++) {
        snprintf(names[c], sizeof names[c], "h1-%llu", (unsigned long long)c);
        for (uint32_t a = 0; a < algos; a++) {
            mp_result_row *x = &rows[c * algos + a];
            uint64_t h = mix(c * 31 + a), lower = 4096 + h % (1u << 24);
            /* every tenth run, one case in fifty plans a little differently */
            uint64_t drift = (r / 10 + c) % 50 == 0 ? 64 * (r / 10 % 3) : 0;
            uint64_t total = lower + (a == 0 ? lower / 8 : h % 512) + drift;
            *x = (mp_result_row){names[c], mp_algo_name(a), "--alignment 16", "mixed", 100 + h % 900, 50 + h % 400,
                                 lower, total, "0", (double)total / (double)lower, 0.1 + (double)(h % 100) / 50,
                                 1024, 0, h % 997 ? "valid" : "refused"};
        }
    }
}

static int fill(mp_db *d, uint64_t runs, uint64_t cases, mp_err *err) {
    uint32_t algos = mp_planner_count();
    mp_result_row *rows = mp_xcalloc(cases * algos + 1, sizeof *rows);
    char(*names)[24] = mp_xcalloc(cases + 1, sizeof *names);
    char opts[128], rev[32];
    snprintf(opts, sizeof opts, "--seed 1 --count %llu --algos all", (unsigned long long)cases);
    int rc = MP_OK;
    for (uint64_t r = 0; r < runs && rc == MP_OK; r++) {
        synth_rows(r, cases, algos, rows, names);
        snprintf(rev, sizeof rev, "c%05llu", (unsigned long long)(r / 3));
        mp_run_info run = {.kind = "harness", .options = opts, .seed = 1, .count = cases, .git_rev = rev,
                           .host = "bench"};
        run_start(r, run.started, sizeof run.started);
        run.finished = run.started;
        rc = mp_db_record(d, &run, rows, cases * algos, NULL, 0, NULL, err);
    }
    mp_xfree(rows);
    mp_xfree(names);
    return rc;
}

typedef struct timing {
    const char *what;
    double s;
    size_t bytes;
} timing;

/* One query as a user runs it: a fresh read-only open, the answer built. */
static int time_report(const char *path, const char *since, int form, timing *t, mp_err *err) {
    double t0 = now_s();
    mp_db *d = mp_db_open_existing(path, err);
    if (!d) return err->code;
    mp_buf b;
    mp_buf_init(&b);
    int rc;
    bool passed;
    if (form == 0) rc = mp_db_report(d, NULL, NULL, "text", &b, err);
    else if (form == 1) rc = mp_db_report(d, since, "opt", "json", &b, err);
    else if (form == 2) rc = mp_report_by_commit(d, NULL, NULL, "text", &b, err);
    else if (form == 3) {
        mp_viz_report_options o;
        mp_viz_report_options_default(&o);
        rc = mp_viz_report_html(d, &o, &b, err);
    } else {
        char base[4200];
        snprintf(base, sizeof base, "%s.sql", path);
        rc = mp_gate(d, base, form == 4, &b, &passed, err);
    }
    t->s = now_s() - t0;
    t->bytes = b.len;
    mp_buf_free(&b);
    mp_db_close(d);
    return rc;
}

static int measure(const char *path, const char *since, uint64_t keep, mp_err *err) {
    static const char *const WHAT[] = {"report (text, whole history)", "report --since (last tenth) --algo --format json",
                                       "report --by-commit", "report --html", "gate --update", "gate"};
    int rc = MP_OK;
    for (int pass = 0; pass < 2 && rc == MP_OK; pass++) {
        for (int f = 0; f < 6 && rc == MP_OK; f++) {
            timing t = {WHAT[f], 0, 0};
            rc = time_report(path, since, f, &t, err);
            char what[96];
            snprintf(what, sizeof what, "%s%s", pass ? "after prune: " : "", t.what);
            printf("| %-50s | %8.3f | %12zu |\n", what, t.s, t.bytes);
        }
        if (pass == 0 && rc == MP_OK) {
            double t0 = now_s();
            mp_db *d = mp_db_open(path, err);
            mp_prune_summary ps = {0};
            rc = d ? mp_db_prune(d, keep, &ps, err) : err->code;
            mp_db_close(d);
            printf("| prune --keep %-37llu | %8.3f | %12lld |\n", (unsigned long long)keep, now_s() - t0,
                   (long long)ps.rows);
        }
    }
    return rc;
}

/* The scratch database and what SQLite and the gate put beside it. */
static void remove_scratch(const char *dir) {
    static const char *const FILES[] = {"h.db", "h.db-wal", "h.db-shm", "h.db.sql"};
    char p[128];
    for (size_t i = 0; i < sizeof FILES / sizeof *FILES; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, FILES[i]);
        unlink(p);
    }
    if (rmdir(dir) != 0) fprintf(stderr, "memplan bench: could not remove %s\n", dir);
}

int mp_bench_history(uint64_t runs, uint64_t cases, uint64_t keep) {
    char dir[] = "/tmp/memplan-history-XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        perror("memplan bench: mkdtemp");
        return MP_EIO;
    }
    snprintf(path, sizeof path, "%s/h.db", dir);
    mp_err err;
    double t0 = now_s();
    mp_db *d = mp_db_open(path, &err);
    int rc = d ? fill(d, runs, cases, &err) : err.code;
    mp_db_close(d);
    double fill_s = now_s() - t0;
    if (rc == MP_OK) {
        printf("# the metrics store on a long history: %llu runs of %llu cases x %u planners (%llu rows),"
               " recorded in %.1f s\n\n| %-50s | %8s | %12s |\n|---|---:|---:|\n",
               (unsigned long long)runs, (unsigned long long)cases, mp_planner_count(),
               (unsigned long long)(runs * cases * mp_planner_count()), fill_s, "query", "seconds", "output bytes (prune: rows dropped)");
        char since[32]; /* the newest tenth of the runs */
        run_start(runs - runs / 10 - 1, since, sizeof since);
        since[10] = 0;
        rc = measure(path, since, keep, &err);
    }
    remove_scratch(dir);
    if (rc) fprintf(stderr, "memplan bench: %s\n", err.msg);
    return rc;
}
