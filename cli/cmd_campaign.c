/* cmd_campaign.c - `memplan record-campaign`: one fuzzing campaign into the
 * metrics store (a run of kind "fuzz" with one campaigns row), as `make
 * fuzz` and `make fuzz-afl` call it when a campaign ends. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char CAMPAIGN_HELP[] =
    "usage: memplan record-campaign --target T --engine libfuzzer|afl --seconds S\n"
    "                               --executions N --corpus-size N --coverage N\n"
    "                               --crashes N [--db FILE] [--started TIME]\n"
    "\n"
    "Record one fuzzing campaign in the metrics database: a run of kind\n"
    "\"fuzz\" and its campaigns row (target, engine, seconds, executions,\n"
    "corpus size, coverage, crashes), in one transaction.  make fuzz and make\n"
    "fuzz-afl call it with the figures of the campaign that just ended\n"
    "(docs/fuzzing.md).\n"
    "\n"
    "options:\n"
    "  --db FILE         metrics database (default results/metrics.db)\n"
    "  --target T        the fuzz target (parse, planners, verify, planfile...)\n"
    "  --engine E        libfuzzer or afl\n"
    "  --seconds S       the campaign's length in seconds (decimals allowed)\n"
    "  --executions N    inputs executed\n"
    "  --corpus-size N   inputs in the corpus at the end\n"
    "  --coverage N      coverage reached (edges: libFuzzer's cov, AFL's\n"
    "                    edges_found)\n"
    "  --crashes N       crashing inputs found\n"
    "  --started TIME    when it started (ISO 8601 UTC; default: now)\n"
    "\n"
    "exit status: 0 recorded; 2 bad usage or an unusable database.\n";

/* A name for a target or engine: what the store can show in a report. */
static bool plain_word(const char *s) {
    if (!*s || strlen(s) > 64) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

static bool seconds_of(mp_args *a, double *out) {
    const char *v = mp_args_value(a, "--seconds");
    if (!v) return false;
    char *end = NULL;
    errno = 0;
    double d = *v >= '0' && *v <= '9' ? strtod(v, &end) : -1;
    if (d < 0 || errno || !end || *end || !isfinite(d) || d > 1e9) {
        mp_usage_error(a->cmd, "bad value '%s' for --seconds (want a number of seconds)", v);
        return false;
    }
    *out = d;
    return true;
}

int mp_cmd_record_campaign(int argc, char **argv) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan record-campaign");
    const char *db = "results/metrics.db", *started = NULL, *arg;
    mp_campaign_row c = {0};
    /* executions, corpus-size, coverage, crashes */
    static const char *const counts[] = {"--executions", "--corpus-size", "--coverage", "--crashes"};
    uint64_t *dst[] = {&c.executions, &c.corpus_size, &c.coverage, &c.crashes};
    bool have[4] = {false}, have_seconds = false, opt;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) return mp_usage_error(a.cmd, "unexpected argument '%s'", arg);
        int k = 0;
        while (k < 4 && !mp_args_is(&a, arg, counts[k])) k++;
        if (k < 4) {
            if (!mp_args_u64(&a, counts[k], 0, INT64_MAX, dst[k])) return MP_EFORMAT;
            have[k] = true;
        } else if (mp_args_is(&a, arg, "-h") || mp_args_is(&a, arg, "--help")) {
            fputs(CAMPAIGN_HELP, stdout);
            return 0;
        } else if (mp_args_is(&a, arg, "--db")) {
            if (!(db = mp_args_value(&a, "--db"))) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--target")) {
            if (!(c.target = mp_args_value(&a, "--target"))) return MP_EFORMAT;
            if (!plain_word(c.target)) return mp_usage_error(a.cmd, "bad target name '%s'", c.target);
        } else if (mp_args_is(&a, arg, "--engine")) {
            if (!(c.engine = mp_args_value(&a, "--engine"))) return MP_EFORMAT;
            if (strcmp(c.engine, "libfuzzer") && strcmp(c.engine, "afl"))
                return mp_usage_error(a.cmd, "unknown engine '%s' (want libfuzzer or afl)", c.engine);
        } else if (mp_args_is(&a, arg, "--seconds")) {
            if (!seconds_of(&a, &c.seconds)) return MP_EFORMAT;
            have_seconds = true;
        } else if (mp_args_is(&a, arg, "--started")) {
            if (!(started = mp_args_value(&a, "--started"))) return MP_EFORMAT;
            if (strlen(started) >= sizeof ((mp_run_info *)0)->started || !*started)
                return mp_usage_error(a.cmd, "bad value '%s' for --started", started);
        } else {
            return mp_usage_error(a.cmd, "unknown option '%s'", arg);
        }
    }
    if (!c.target || !c.engine || !have_seconds)
        return mp_usage_error(a.cmd, "--target, --engine and --seconds are required");
    for (int k = 0; k < 4; k++)
        if (!have[k]) return mp_usage_error(a.cmd, "%s is required", counts[k]);

    char options[256];
    snprintf(options, sizeof options, "{\"target\":\"%s\",\"engine\":\"%s\",\"seconds\":%.3f}",
             c.target, c.engine, c.seconds);
    mp_run_info run = {0};
    run.kind = "fuzz";
    run.options = options;
    run.count = c.executions;
    if (started) snprintf(run.started, sizeof run.started, "%s", started);
    mp_err err;
    mp_db *d = mp_db_open(db, &err);
    if (!d) return mp_cli_fail(a.cmd, &err);
    int64_t id = 0;
    int rc = mp_db_record(d, &run, NULL, 0, &c, 1, &id, &err);
    mp_db_close(d);
    if (rc) return mp_cli_fail(a.cmd, &err);
    printf("record-campaign: %s %s %.1fs %llu executions, corpus %llu, coverage %llu, "
           "%llu crash%s; run %lld in %s\n",
           c.target, c.engine, c.seconds, (unsigned long long)c.executions,
           (unsigned long long)c.corpus_size, (unsigned long long)c.coverage,
           (unsigned long long)c.crashes, c.crashes == 1 ? "" : "es", (long long)id, db);
    return 0;
}
