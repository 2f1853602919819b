/* cmd_campaign.c - `memplan record-campaign`: one fuzzing campaign into the
 * metrics store (a run of kind "fuzz" with one campaigns row), as `make
 * fuzz` and `make fuzz-afl` call it when a campaign ends. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char CAMPAIGN_HELP[] =
    "usage: memplan record-campaign --target T --engine libfuzzer|libfuzzer-nosan|afl|mutation --seconds S\n"
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
    "  --engine E        libfuzzer, libfuzzer-nosan (no sanitizers), afl, or\n"
    "                    mutation (fuzz/artifacts/campaign.py: the readers of\n"
    "                    compiled programs, in Python)\n"
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

typedef struct campaign_args {
    const char *db, *started;
    mp_campaign_row c;
} campaign_args;

/* The counts: executions, corpus-size, coverage, crashes. */
static const char *const COUNTS[] = {"--executions", "--corpus-size", "--coverage", "--crashes"};

/* One option that is not a count; -1 after --help. */
static int campaign_option(mp_args *a, const char *arg, campaign_args *ca, bool *have_seconds) {
    if (mp_args_is(a, arg, "-h") || mp_args_is(a, arg, "--help")) {
        fputs(CAMPAIGN_HELP, stdout);
        return -1;
    } else if (mp_args_is(a, arg, "--db")) {
        if (!(ca->db = mp_args_value(a, "--db"))) return MP_EFORMAT;
    } else if (mp_args_is(a, arg, "--target")) {
        if (!(ca->c.target = mp_args_value(a, "--target"))) return MP_EFORMAT;
        if (!plain_word(ca->c.target)) return mp_usage_error(a->cmd, "bad target name '%s'", ca->c.target);
    } else if (mp_args_is(a, arg, "--engine")) {
        if (!(ca->c.engine = mp_args_value(a, "--engine"))) return MP_EFORMAT;
        if (strcmp(ca->c.engine, "libfuzzer") && strcmp(ca->c.engine, "libfuzzer-nosan") &&
            strcmp(ca->c.engine, "afl") && strcmp(ca->c.engine, "mutation"))
            return mp_usage_error(a->cmd, "unknown engine '%s' (want libfuzzer, libfuzzer-nosan, afl or mutation)",
                                  ca->c.engine);
    } else if (mp_args_is(a, arg, "--seconds")) {
        if (!seconds_of(a, &ca->c.seconds)) return MP_EFORMAT;
        *have_seconds = true;
    } else if (mp_args_is(a, arg, "--started")) {
        if (!(ca->started = mp_args_value(a, "--started"))) return MP_EFORMAT;
        if (strlen(ca->started) >= sizeof ((mp_run_info *)0)->started || !mp_args_is_time(ca->started))
            return mp_usage_error(a->cmd, "bad value '%s' for --started", ca->started);
    } else {
        return mp_usage_error(a->cmd, "unknown option '%s'", arg);
    }
    return MP_OK;
}

static int parse_campaign_args(mp_args *a, campaign_args *ca) {
    uint64_t *dst[] = {&ca->c.executions, &ca->c.corpus_size, &ca->c.coverage, &ca->c.crashes};
    bool have[4] = {false}, have_seconds = false, opt;
    const char *arg;
    while ((arg = mp_args_next(a, &opt))) {
        if (!opt) return mp_usage_error(a->cmd, "unexpected argument '%s'", arg);
        int k = 0, rc;
        while (k < 4 && !mp_args_is(a, arg, COUNTS[k])) k++;
        if (k < 4) {
            if (!mp_args_u64(a, COUNTS[k], 0, INT64_MAX, dst[k])) return MP_EFORMAT;
            have[k] = true;
        } else if ((rc = campaign_option(a, arg, ca, &have_seconds))) {
            return rc;
        }
    }
    if (!ca->c.target || !ca->c.engine || !have_seconds)
        return mp_usage_error(a->cmd, "--target, --engine and --seconds are required");
    for (int k = 0; k < 4; k++)
        if (!have[k]) return mp_usage_error(a->cmd, "%s is required", COUNTS[k]);
    return MP_OK;
}

int mp_cmd_record_campaign(int argc, char **argv) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan record-campaign");
    campaign_args ca = {"results/metrics.db", NULL, {0}};
    int rc = parse_campaign_args(&a, &ca);
    if (rc) return rc < 0 ? 0 : rc;
    const mp_campaign_row *c = &ca.c;
    char options[256];
    snprintf(options, sizeof options, "{\"target\":\"%s\",\"engine\":\"%s\",\"seconds\":%.3f}",
             c->target, c->engine, c->seconds);
    mp_run_info run = {0};
    run.kind = "fuzz";
    run.options = options;
    run.count = c->executions;
    if (ca.started) snprintf(run.started, sizeof run.started, "%s", ca.started);
    mp_err err;
    mp_db *d = mp_db_open(ca.db, &err);
    if (!d) return mp_cli_fail(a.cmd, &err);
    int64_t id = 0;
    rc = mp_db_record(d, &run, NULL, 0, c, 1, &id, &err);
    mp_db_close(d);
    if (rc) return mp_cli_fail(a.cmd, &err);
    printf("record-campaign: %s %s %.1fs %llu executions, corpus %llu, coverage %llu, "
           "%llu crash%s; run %lld in %s\n",
           c->target, c->engine, c->seconds, (unsigned long long)c->executions,
           (unsigned long long)c->corpus_size, (unsigned long long)c->coverage,
           (unsigned long long)c->crashes, c->crashes == 1 ? "" : "es", (long long)id, ca.db);
    return 0;
}
