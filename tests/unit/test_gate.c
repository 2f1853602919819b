/* test_gate.c - the regression gate: an equal run passes, and each kind
 * of regression fails it; --update writes a baseline that then passes. */
#include "helpers.h"

#include <unistd.h>

typedef struct grow {
    const char *graph, *algo, *verify;
    uint64_t bytes, lower;
} grow;

static void run_with(const char *db_path, const grow *g, size_t n) {
    mp_err err;
    mp_db *db = mp_db_open(db_path, &err);
    cr_assert(db, "%s", err.msg);
    mp_result_row rows[16];
    for (size_t i = 0; i < n; i++) {
        memset(&rows[i], 0, sizeof rows[i]);
        rows[i].graph = g[i].graph;
        rows[i].algo = g[i].algo;
        rows[i].options = "--alignment 16";
        rows[i].profile = "mixed";
        rows[i].total_bytes = g[i].bytes;
        rows[i].lower_bound = g[i].lower;
        rows[i].ratio = g[i].lower ? (double)g[i].bytes / (double)g[i].lower : 1.0;
        rows[i].buffers = "0";
        rows[i].verify = g[i].verify;
    }
    mp_run_info run = {.kind = "harness", .options = "--seed 1 --count 3", .seed = 1, .count = 3};
    cr_assert_eq(mp_db_record(db, &run, rows, n, NULL, 0, NULL, &err), MP_OK, "%s", err.msg);
    mp_db_close(db);
}

static bool gate(const char *db_path, const char *baseline, bool update, char *out, size_t n) {
    mp_err err;
    mp_db *db = mp_db_open_existing(db_path, &err);
    cr_assert(db, "%s", err.msg);
    mp_buf b;
    mp_buf_init(&b);
    bool passed = false;
    cr_assert_eq(mp_gate(db, baseline, update, &b, &passed, &err), MP_OK, "%s", err.msg);
    snprintf(out, n, "%s", b.data ? b.data : "");
    mp_buf_free(&b);
    mp_db_close(db);
    return passed;
}

static const grow BASE[] = {{"h1-0", "greedy", "valid", 200, 100},
                            {"h1-0", "opt", "valid", 100, 100},
                            {"h1-1", "greedy", "valid", 300, 150},
                            {"h1-1", "opt", "valid", 160, 150}};

static void fresh(char *db, char *base) {
    snprintf(db, 64, "/tmp/memplan-gate-%d.db", (int)getpid());
    snprintf(base, 64, "/tmp/memplan-gate-%d.sql", (int)getpid());
    unlink(db);
    unlink(base);
    run_with(db, BASE, 4);
    char out[4096];
    cr_assert(gate(db, base, true, out, sizeof out), "%s", out);
}

Test(gate, an_equal_run_passes) {
    char db[64], base[64], out[4096];
    fresh(db, base);
    cr_assert(gate(db, base, false, out, sizeof out), "%s", out);
    ASSERT_CONTAINS(out, "passed");
    run_with(db, BASE, 4); /* a new, identical run */
    cr_assert(gate(db, base, false, out, sizeof out), "%s", out);
}

Test(gate, more_bytes_fail) {
    char db[64], base[64], out[4096];
    fresh(db, base);
    grow worse[4];
    memcpy(worse, BASE, sizeof worse);
    worse[3].bytes = 176;
    run_with(db, worse, 4);
    cr_assert_not(gate(db, base, false, out, sizeof out));
    ASSERT_CONTAINS(out, "more-bytes");
    ASSERT_CONTAINS(out, "h1-1");
    ASSERT_CONTAINS(out, "176 bytes, baseline 160");
}

Test(gate, fewer_bytes_pass) {
    char db[64], base[64], out[4096];
    fresh(db, base);
    grow better[4];
    memcpy(better, BASE, sizeof better);
    better[3].bytes = 150;
    run_with(db, better, 4);
    cr_assert(gate(db, base, false, out, sizeof out), "%s", out);
}

Test(gate, failed_verification_fails) {
    char db[64], base[64], out[4096];
    fresh(db, base);
    grow broken[4];
    memcpy(broken, BASE, sizeof broken);
    broken[1].verify = "invalid";
    run_with(db, broken, 4);
    cr_assert_not(gate(db, base, false, out, sizeof out));
    ASSERT_CONTAINS(out, "invalid");
}

Test(gate, missing_or_refused_graphs_fail) {
    char db[64], base[64], out[4096];
    fresh(db, base);
    run_with(db, BASE, 3); /* h1-1 opt missing */
    cr_assert_not(gate(db, base, false, out, sizeof out));
    ASSERT_CONTAINS(out, "missing");
    grow refused[4];
    memcpy(refused, BASE, sizeof refused);
    refused[2].verify = "refused";
    refused[2].bytes = 0;
    run_with(db, refused, 4);
    cr_assert_not(gate(db, base, false, out, sizeof out));
    ASSERT_CONTAINS(out, "refused");
}

Test(gate, the_baseline_is_a_sorted_sql_dump) {
    char db[64], base[64];
    fresh(db, base);
    size_t len;
    mp_err err;
    char *text = mp_read_file(base, &len, &err);
    cr_assert(text);
    ASSERT_CONTAINS(text, "CREATE TABLE baseline");
    const char *a = strstr(text, "'h1-0','greedy'"), *b = strstr(text, "'h1-0','opt'"),
               *c = strstr(text, "'h1-1','greedy'");
    cr_assert(a && b && c && a < b && b < c);
    mp_xfree(text);
}

static int load_text(const char *sql, mp_gate_rows *rows, mp_err *err) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/memplan-gate-load-%d.sql", (int)getpid());
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(sql, f);
    fclose(f);
    int rc = mp_gate_load_baseline(path, rows, err);
    unlink(path);
    return rc;
}

/* A baseline's table may lack the dump's primary key (fuzz target
 * "baseline" found one): two rows for a graph and planner are refused,
 * since the dump of such rows could not be read back. */
Test(gate, a_baseline_with_two_rows_for_a_key_is_refused) {
    mp_gate_rows rows = {0};
    mp_err err;
    int rc = load_text("CREATE TABLE baseline(graph, algo, options, total_bytes, lower_bound, ratio, verify);\n"
                       "INSERT INTO baseline VALUES('h1-0','opt','',1,1,1.0,'valid');\n"
                       "INSERT INTO baseline VALUES('h1-0','opt','',2,1,2.0,'valid');\n",
                       &rows, &err);
    cr_assert_eq(rc, MP_EFORMAT);
    ASSERT_CONTAINS(err.msg, "memplan-gate-load-");
    ASSERT_CONTAINS(err.msg, "two rows for graph 'h1-0', planner 'opt'");
    mp_gate_rows_free(&rows);
}

/* Rows come back in strcmp order whatever collation the file's table
 * declares: the gate binary-searches them in that order. */
Test(gate, baseline_rows_come_back_in_strcmp_order) {
    mp_gate_rows rows = {0};
    mp_err err;
    int rc = load_text("CREATE TABLE baseline(graph TEXT COLLATE NOCASE, algo, options, total_bytes, lower_bound,"
                       " ratio, verify);\n"
                       "INSERT INTO baseline VALUES('a','opt','',1,1,1.0,'valid');\n"
                       "INSERT INTO baseline VALUES('B','opt','',2,1,2.0,'valid');\n",
                       &rows, &err);
    cr_assert_eq(rc, MP_OK, "%s", err.msg);
    cr_assert_eq(rows.n, 2);
    cr_assert_str_eq(rows.v[0].graph, "B");
    cr_assert_str_eq(rows.v[1].graph, "a");
    mp_gate_rows_free(&rows);
}
