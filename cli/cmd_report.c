/* cmd_report.c - `memplan report` and `memplan gate`: the metrics store's
 * history and the regression gate. */
#include "cli.h"

#include <stdio.h>
#include <unistd.h>

static const char REPORT_HELP[] =
    "usage: memplan report [--db FILE] [--since DATE] [--algo A] [--by-commit]\n"
    "                      [--format text|csv|json | --html [--svg-dir DIR]] [-o FILE]\n"
    "\n"
    "Answer the questions users ask of the metrics history: plan quality per\n"
    "algorithm and run (mean and worst ratio to the lower bound), the worst\n"
    "graphs, and the changes of a graph's planned bytes from one run of a\n"
    "command to its next (the newest 30 runs, newest first).  The schema\n"
    "is documented in docs/metrics.md for raw SQL.\n"
    "\n"
    "options:\n"
    "  --db FILE      metrics database (default results/metrics.db)\n"
    "  --since DATE   only runs started on or after DATE (UTC: YYYY-MM-DD,\n"
    "                 optionally THH:MM[:SS])\n"
    "  --algo A       only algorithm A\n"
    "  --by-commit    per commit instead, in the order first measured: each\n"
    "                 planner's graphs, valid/invalid/refused, mean and worst\n"
    "                 ratio, bytes and time per graph, and the change against\n"
    "                 the commit before (harness runs of the newest run's\n"
    "                 command only, so every commit planned the same graphs);\n"
    "                 with --html the chart and table are per commit\n"
    "  --format F     text (default), csv or json\n"
    "  --html         a self-contained HTML page instead: charts of the ratio to\n"
    "                 the lower bound over time and of planning time against\n"
    "                 size, the worst graphs, the runs (docs/visualisation.md)\n"
    "  --svg-dir DIR  with --html: also write the worst harness graphs' pictures\n"
    "                 to DIR/<graph>-<algo>.svg (regenerated from their ids) and\n"
    "                 link them from the page\n"
    "  -o, --output FILE  write to FILE (default stdout; atomically)\n";

/* The link from the page at `out` to the directory `dir`: relative when dir
 * lies below the page's directory, else absolute; percent-encoded. */
static void svg_href(const char *out, const char *dir, char *buf, size_t n) {
    char path[4096] = "";
    const char *slash = strcmp(out, "-") ? strrchr(out, '/') : NULL;
    size_t od = slash ? (size_t)(slash - out) : 0;
    while (strncmp(dir, "./", 2) == 0) dir += 2;
    if (od && strncmp(dir, out, od) == 0 && dir[od] == '/') {
        snprintf(path, sizeof path, "%s", dir + od + 1);
    } else if (dir[0] == '/' || (!od && out[0] != '/')) {
        snprintf(path, sizeof path, "%s", dir);
    } else {
        char cwd[2048];
        snprintf(path, sizeof path, "%s/%s", getcwd(cwd, sizeof cwd) ? cwd : ".", dir);
    }
    size_t k = strlen(path);
    while (k > 1 && path[k - 1] == '/') path[--k] = 0;
    size_t j = 0;
    for (const unsigned char *p = (const unsigned char *)path; *p && j + 4 < n; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/._-~", *p))
            buf[j++] = (char)*p;
        else
            j += (size_t)snprintf(buf + j, n - j, "%%%02X", *p);
    }
    buf[j] = 0;
}

static const char GATE_HELP[] =
    "usage: memplan gate --db FILE --baseline results/baseline.sql [--update]\n"
    "\n"
    "Compare the latest harness run in FILE with the baseline (a text SQL\n"
    "dump): fail when any plan fails verification, is newly refused, needs\n"
    "more bytes than in the baseline, when a baseline graph is missing, or when\n"
    "an algorithm's mean ratio to the lower bound worsens.  --update rewrites\n"
    "the baseline from the latest run on purpose.\n"
    "\n"
    "exit status: 0 passed (or updated); 1 regressions; 2 bad usage or\n"
    "unreadable database or baseline.\n";

typedef struct report_args {
    const char *db, *since, *algo, *format, *out, *svg_dir;
    bool html, by_commit;
    char since_utc[32]; /* --since as stored: a T, no Z */
} report_args;

/* One option; -1 after --help. */
static int report_option(mp_args *a, const char *arg, report_args *ra) {
    if (mp_args_is(a, arg, "-h") || mp_args_is(a, arg, "--help")) {
        fputs(REPORT_HELP, stdout);
        return -1;
    } else if (mp_args_is(a, arg, "--db")) {
        if (!(ra->db = mp_args_value(a, "--db"))) return MP_EFORMAT;
    } else if (mp_args_is(a, arg, "--since")) {
        if (!(ra->since = mp_args_value(a, "--since"))) return MP_EFORMAT;
        if (!mp_args_is_time(ra->since))
            return mp_usage_error(a->cmd, "--since '%s' is not a date (YYYY-MM-DD, optionally THH:MM[:SS])",
                                  ra->since);
        snprintf(ra->since_utc, sizeof ra->since_utc, "%.*s", (int)strcspn(ra->since, "Z"), ra->since);
        if (ra->since_utc[10]) ra->since_utc[10] = 'T';
        ra->since = ra->since_utc;
    } else if (mp_args_is(a, arg, "--algo")) {
        if (!(ra->algo = mp_args_value(a, "--algo"))) return MP_EFORMAT;
        /* a planner of the table or an external one the harness ran */
        if (!*ra->algo || strspn(ra->algo, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
                              strlen(ra->algo))
            return mp_usage_error(a->cmd, "bad algorithm name '%s'", ra->algo);
    } else if (mp_args_is(a, arg, "--format")) {
        if (!(ra->format = mp_args_value(a, "--format"))) return MP_EFORMAT;
        if (strcmp(ra->format, "text") && strcmp(ra->format, "csv") && strcmp(ra->format, "json"))
            return mp_usage_error(a->cmd, "unknown format '%s'", ra->format);
    } else if (mp_args_is(a, arg, "--html")) {
        if (!mp_args_flag_ok(a, "--html")) return MP_EFORMAT;
        ra->html = true;
    } else if (mp_args_is(a, arg, "--by-commit")) {
        if (!mp_args_flag_ok(a, "--by-commit")) return MP_EFORMAT;
        ra->by_commit = true;
    } else if (mp_args_is(a, arg, "--svg-dir")) {
        if (!(ra->svg_dir = mp_args_value(a, "--svg-dir"))) return MP_EFORMAT;
        if (!*ra->svg_dir) return mp_usage_error(a->cmd, "empty --svg-dir");
    } else if (mp_args_is(a, arg, "-o") || mp_args_is(a, arg, "--output")) {
        if (!(ra->out = mp_args_value(a, "-o"))) return MP_EFORMAT;
        if (!*ra->out) return mp_usage_error(a->cmd, "empty output file name");
    } else {
        return mp_usage_error(a->cmd, "unknown option '%s'", arg);
    }
    return MP_OK;
}

/* The report of the open database, as text, CSV, JSON or HTML. */
static int write_report(mp_db *d, const report_args *ra, mp_buf *b, mp_err *err) {
    const char *format = ra->format ? ra->format : "text";
    if (!ra->html && ra->by_commit) return mp_report_by_commit(d, ra->since, ra->algo, format, b, err);
    if (!ra->html) return mp_db_report(d, ra->since, ra->algo, format, b, err);
    mp_viz_report_options ro;
    mp_viz_report_options_default(&ro);
    char href[4096];
    ro.since = ra->since;
    ro.algo = ra->algo;
    ro.by_commit = ra->by_commit;
    if (ra->svg_dir) {
        svg_href(ra->out, ra->svg_dir, href, sizeof href);
        ro.svg_dir = ra->svg_dir;
        ro.svg_href = href;
    }
    return mp_viz_report_html(d, &ro, b, err);
}

int mp_cmd_report(int argc, char **argv) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan report");
    report_args ra = {"results/metrics.db", NULL, NULL, NULL, "-", NULL, false, false, ""};
    const char *arg;
    bool opt;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) return mp_usage_error(a.cmd, "unexpected argument '%s'", arg);
        int rc = report_option(&a, arg, &ra);
        if (rc) return rc < 0 ? 0 : rc;
    }
    if (ra.html && ra.format) return mp_usage_error(a.cmd, "--html and --format exclude each other");
    if (ra.svg_dir && !ra.html) return mp_usage_error(a.cmd, "--svg-dir needs --html");
    mp_err err;
    mp_db *d = mp_db_open_existing(ra.db, &err);
    if (!d) return mp_cli_fail(a.cmd, &err);
    mp_buf b;
    mp_buf_init(&b);
    int rc = write_report(d, &ra, &b, &err);
    mp_db_close(d);
    if (rc == MP_OK) rc = mp_write_buf(ra.out, &b, &ra.db, 1, &err);
    mp_buf_free(&b);
    return rc ? mp_cli_fail(a.cmd, &err) : 0;
}

int mp_cmd_gate(int argc, char **argv) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan gate");
    const char *db = NULL, *baseline = NULL, *arg;
    bool update = false, opt;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) return mp_usage_error(a.cmd, "unexpected argument '%s'", arg);
        if (mp_args_is(&a, arg, "-h") || mp_args_is(&a, arg, "--help")) {
            fputs(GATE_HELP, stdout);
            return 0;
        } else if (mp_args_is(&a, arg, "--db")) {
            if (!(db = mp_args_value(&a, "--db"))) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--baseline")) {
            if (!(baseline = mp_args_value(&a, "--baseline"))) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--update")) {
            update = true;
        } else {
            return mp_usage_error(a.cmd, "unknown option '%s'", arg);
        }
    }
    if (!db || !baseline) return mp_usage_error(a.cmd, "--db and --baseline are required");
    mp_err err;
    mp_db *d = mp_db_open_existing(db, &err);
    if (!d) return mp_cli_fail(a.cmd, &err);
    mp_buf b;
    mp_buf_init(&b);
    bool passed;
    int rc = mp_gate(d, baseline, update, &b, &passed, &err);
    mp_db_close(d);
    if (b.len) fwrite(b.data, 1, b.len, stdout);
    mp_buf_free(&b);
    if (rc) return mp_cli_fail(a.cmd, &err);
    return passed ? 0 : 1;
}
