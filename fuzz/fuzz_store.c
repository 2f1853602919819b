/* fuzz_store.c - target "store": the metrics store's round trip
 * (store/): a run's rows recorded and read back, its summaries, the
 * report in every form, and a second identical run.
 *
 * The input decodes into a harness run (option line, seed, count) and up to
 * 48 result rows whose names, planners and verdicts are any bytes and
 * whose numbers span 64 bits (and every double, NaN included).  Into a
 * fresh in-memory database:
 *   - the record is all or nothing: refused only for a repeated (graph,
 *     planner) pair, and then no run is there at all;
 *   - the gate's reader gives every row back (graph, planner, options,
 *     verdict, both byte counts, a finite ratio) exactly, in (graph,
 *     planner) order, and the run's seed, count and option line;
 *   - the report answers in text, CSV, JSON and by commit, and its JSON
 *     parses as far as balance goes;
 *   - the same rows recorded again show no change, and prune keeps them. */
#include "fuzz.h"

#include <math.h>

#define MAX_ROWS 48


/* A string of up to `most` bytes (length byte first), without NUL. */
static char *str(rd *r, size_t most) {
    size_t len = u8(r) % (most + 1), k = 0;
    char *s = mp_xmalloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        uint8_t c = u8(r);
        if (c) s[k++] = (char)c;
    }
    s[k] = 0;
    return s;
}

/* A verdict: mostly the four the store knows, sometimes any bytes. */
static char *verdict(rd *r) {
    static const char *const V[] = {"valid", "invalid", "refused", "crash"};
    uint8_t k = u8(r);
    if (k < 240) return strcpy(mp_xmalloc(8), V[k % 4]);
    return str(r, 12);
}

static double number(rd *r) {
    uint64_t bits = u64(r);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static int cmp_row(const void *a, const void *b) {
    const mp_result_row *x = a, *y = b;
    int c = strcmp(x->graph, y->graph);
    return c ? c : strcmp(x->algo, y->algo);
}

static bool repeated(const mp_result_row *rows, size_t n) {
    for (size_t i = 1; i < n; i++)
        if (!cmp_row(&rows[i - 1], &rows[i])) return true;
    return false;
}

static void check_back(mp_db *d, const mp_run_info *run, const mp_result_row *rows, size_t n) {
    mp_gate_rows g = {0};
    mp_err err;
    FUZZ_ASSERT(mp_db_gate_rows(d, &g, &err) == MP_OK, "store: recorded run not read back: %s", err.msg);
    FUZZ_ASSERT(g.n == n && g.seed == run->seed && g.count == run->count, "store: %zu rows of %zu, or seed/count",
                g.n, n);
    FUZZ_ASSERT(!strcmp(g.options ? g.options : "", run->options), "store: option line changed");
    for (size_t i = 0; i < n; i++) {
        const mp_gate_row *x = &g.v[i];
        const mp_result_row *y = &rows[i];
        FUZZ_ASSERT(!strcmp(x->graph, y->graph) && !strcmp(x->algo, y->algo) && !strcmp(x->options, y->options) &&
                        !strcmp(x->verify, y->verify) && x->total == y->total_bytes && x->lower == y->lower_bound,
                    "store: row %zu (%s, %s) changed", i, y->graph, y->algo);
        FUZZ_ASSERT(!isfinite(y->ratio) || x->ratio == y->ratio, "store: row %zu's ratio %.17g came back as %.17g",
                    i, y->ratio, x->ratio);
    }
    mp_gate_rows_free(&g);
}

/* Every report form answers; JSON brackets balance outside strings. */
static void reports(mp_db *d, bool expect_no_changes) {
    static const char *const F[] = {"text", "csv", "json"};
    for (int k = 0; k < 4; k++) {
        mp_buf b;
        mp_buf_init(&b);
        mp_err err;
        int rc = k < 3 ? mp_db_report(d, NULL, NULL, F[k], &b, &err) : mp_report_by_commit(d, NULL, NULL, "json", &b, &err);
        FUZZ_ASSERT(rc == MP_OK, "store: report %d failed: %s", k, err.msg);
        if (k >= 2) {
            int depth = 0;
            bool in = false;
            for (size_t i = 0; i < b.len; i++) {
                char c = b.data[i];
                if (in && c == '\\') i++;
                else if (c == '"') in = !in;
                else if (!in && (c == '{' || c == '[')) depth++;
                else if (!in && (c == '}' || c == ']')) depth--;
                FUZZ_ASSERT(depth >= 0, "store: report JSON closes what it did not open");
            }
            FUZZ_ASSERT(depth == 0 && !in, "store: report JSON unbalanced");
        }
        if (k == 2 && expect_no_changes) /* in JSON no name can spell this: its quotes are escaped */
            FUZZ_ASSERT(strstr(b.data ? b.data : "", "\"changes\":[]"), "store: an identical run shows changes");
        mp_buf_free(&b);
    }
}

static void free_rows(mp_result_row *rows, size_t n, char *opts) {
    for (size_t i = 0; i < n; i++) {
        mp_xfree((char *)rows[i].graph);
        mp_xfree((char *)rows[i].algo);
        mp_xfree((char *)rows[i].options);
        mp_xfree((char *)rows[i].verify);
    }
    mp_xfree(opts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rd r = {data, size, 0};
    char *opts = str(&r, 40);
    mp_run_info run = {.kind = "harness", .options = opts, .seed = u64(&r), .count = u64(&r) >> 1};
    mp_result_row rows[MAX_ROWS];
    size_t n = u8(&r) % (MAX_ROWS + 1);
    for (size_t i = 0; i < n; i++) {
        rows[i] = (mp_result_row){str(&r, 20), str(&r, 10), str(&r, 20), "mixed", u8(&r), u8(&r), u64(&r), u64(&r),
                                  "0", number(&r), number(&r), u8(&r), u8(&r), verdict(&r)};
    }
    mp_err err;
    mp_db *d = mp_db_open(":memory:", &err);
    FUZZ_ASSERT(d, "store: cannot open an in-memory database: %s", err.msg);
    int rc = mp_db_record(d, &run, rows, n, NULL, 0, NULL, &err);
    qsort(rows, n, sizeof *rows, cmp_row);
    if (rc != MP_OK) {
        FUZZ_ASSERT(repeated(rows, n), "store: record refused %zu distinct rows: %s", n, err.msg);
        mp_gate_rows g = {0};
        FUZZ_ASSERT(mp_db_gate_rows(d, &g, &err) != MP_OK, "store: a refused record left a run behind");
        mp_gate_rows_free(&g);
    } else {
        FUZZ_ASSERT(!repeated(rows, n), "store: a repeated (graph, planner) was recorded");
        check_back(d, &run, rows, n);
        reports(d, false);
        FUZZ_ASSERT(mp_db_record(d, &run, rows, n, NULL, 0, NULL, &err) == MP_OK, "store: second record: %s",
                    err.msg);
        reports(d, true);
        mp_prune_summary ps;
        FUZZ_ASSERT(mp_db_prune(d, 1, &ps, &err) == MP_OK, "store: prune: %s", err.msg);
        check_back(d, &run, rows, n);
    }
    mp_db_close(d);
    free_rows(rows, n, opts);
    return 0;
}
