/* cmd_harness.c - `memplan harness`: the differential harness. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

static const char HARNESS_HELP[] =
    "usage: memplan harness --seed S --count N [--algos LIST]\n"
    "                       [--db FILE] [--jobs J] [--failures DIR] [--no-shrink]\n"
    "                       [--quiet] [--planner NAME=COMMAND]... [--planner-timeout-ms N]\n"
    "                       [--shard K/N]\n"
    "\n"
    "Generate N graphs over a spread of options (alignment, the three alloc\n"
    "flags, per-device, devices, profiles), plan each with every algorithm,\n"
    "verify every plan, check determinism and the plan format's round trip,\n"
    "check that opt never needs more bytes than greedy, and that the repaired\n"
    "mode equals ExecuTorch's plan wherever that one is valid.  Every failure\n"
    "is shrunk and written as a reproducer (graph, options, plan) under\n"
    "--failures (default results/failures).  The run is recorded in the\n"
    "metrics database.\n"
    "\n"
    "options:\n"
    "  --seed S        the run's seed (required)\n"
    "  --count N       number of graphs (required)\n"
    "  --algos LIST    planners to run, comma-separated (default: every\n"
    "                  planner in the table below)\n"
    "  --db FILE       metrics database (default results/metrics.db; 'none'\n"
    "                  records nothing)\n"
    "  --jobs J        graphs checked in parallel (default: the CPU count)\n"
    "  --failures DIR  where reproducers go (default results/failures)\n"
    "  --no-shrink     write reproducers unshrunk\n"
    "  --quiet         no progress line (it is shown only on a terminal)\n"
    "  --planner NAME=COMMAND\n"
    "                  also run a planner outside memplan on every case: the\n"
    "                  harness runs sh -c 'COMMAND \"$@\"' sh OPTIONS... GRAPH,\n"
    "                  reads a .mpp from its stdout (exit 0 planned, 3 refuses,\n"
    "                  else a crash), verifies, records, gates and shrinks it\n"
    "                  like the built-in ones (docs/external-planners.md);\n"
    "                  repeatable, up to 8\n"
    "  --shard K/N     check only the cases i with i mod N == K (0 <= K < N):\n"
    "                  N machines, one shard each, check the run one machine\n"
    "                  would; each records its shard, and `memplan merge`\n"
    "                  makes them one run again (docs/ci.md)\n"
    "  --planner-timeout-ms N\n"
    "                  the external planners' time limit per case (default\n"
    "                  10000); past it the command is killed: a timeout\n"
    "\n"
    "exit status: 0 every check passed; 1 failures were found; 2 bad usage or\n"
    "an unusable database.\n";

int mp_parse_algos(const char *list, uint32_t *algos, uint32_t *n) {
    *n = 0;
    const char *s = list;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char name[16];
        if (!len || len >= sizeof name || *n == MP_MAX_PLANNERS) return -1;
        memcpy(name, s, len);
        name[len] = 0;
        int a = mp_algo_parse(name);
        if (a < 0) return -1;
        for (uint32_t k = 0; k < *n; k++)
            if (algos[k] == (uint32_t)a) return -1;
        algos[(*n)++] = (uint32_t)a;
        s += len + (e ? 1 : 0);
        if (e && !*s) return -1;
    }
    return *n ? 0 : -1;
}

/* K/N: shard K of N. */
static int parse_shard(mp_args *a, mp_harness_options *h, const char *spec) {
    char *end;
    errno = 0;
    unsigned long long k = strtoull(spec, &end, 10), n = 0;
    bool ok = end != spec && *end == '/' && spec[0] >= '0' && spec[0] <= '9';
    if (ok) {
        const char *s = end + 1;
        n = strtoull(s, &end, 10);
        ok = end != s && !*end && s[0] >= '1' && s[0] <= '9' && errno == 0 && n <= MP_SHARDS_MAX && k < n;
    }
    if (!ok) return mp_usage_error(a->cmd, "bad --shard '%s' (want K/N with 0 <= K < N <= %d)", spec, MP_SHARDS_MAX);
    h->shard = (uint32_t)k;
    h->shards = (uint32_t)n;
    return MP_OK;
}

/* NAME=COMMAND: a name of its own (not a table planner's), a command. */
static int add_external(mp_args *a, mp_harness_options *h, const char *spec) {
    const char *eq = strchr(spec, '=');
    size_t n = eq ? (size_t)(eq - spec) : 0;
    char name[16];
    if (!eq || !n || n >= sizeof name || !eq[1])
        return mp_usage_error(a->cmd, "bad --planner '%s' (want NAME=COMMAND, NAME up to 15 characters)", spec);
    memcpy(name, spec, n);
    name[n] = 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", name[i]))
            return mp_usage_error(a->cmd, "bad planner name '%s' (letters, digits, _ . -)", name);
    if (mp_algo_parse(name) >= 0) return mp_usage_error(a->cmd, "'%s' is a built-in planner's name", name);
    for (uint32_t k = 0; k < h->n_external; k++)
        if (strcmp(h->external[k].name, name) == 0) return mp_usage_error(a->cmd, "planner '%s' given twice", name);
    if (h->n_external == MP_MAX_EXTERNAL || h->n_algos + h->n_external >= MP_MAX_PLANNERS)
        return mp_usage_error(a->cmd, "too many planners");
    static char names[MP_MAX_EXTERNAL][16]; /* the command line lives as long as the run */
    uint32_t k = h->n_external++;
    memcpy(names[k], name, n + 1);
    h->external[k] = (mp_external_planner){names[k], eq + 1};
    return MP_OK;
}

typedef struct harness_args {
    mp_harness_options h;
    bool quiet, have_seed, have_count;
} harness_args;

/* One option; -1 after --help. */
static int harness_option(mp_args *a, const char *arg, harness_args *ha) {
    mp_harness_options *h = &ha->h;
    uint64_t v;
    if (mp_args_is(a, arg, "-h") || mp_args_is(a, arg, "--help")) {
        fputs(HARNESS_HELP, stdout);
        mp_cli_print_planners(stdout);
        return -1;
    } else if (mp_args_is(a, arg, "--seed")) {
        if (!mp_args_u64(a, "--seed", 0, UINT64_MAX, &h->seed)) return MP_EFORMAT;
        ha->have_seed = true;
    } else if (mp_args_is(a, arg, "--count")) {
        if (!mp_args_u64(a, "--count", 1, 100000000, &h->count)) return MP_EFORMAT;
        ha->have_count = true;
    } else if (mp_args_is(a, arg, "--algos")) {
        const char *l = mp_args_value(a, "--algos");
        if (!l) return MP_EFORMAT;
        if (mp_parse_algos(l, h->algos, &h->n_algos)) return mp_usage_error(a->cmd, "bad algorithm list '%s'", l);
    } else if (mp_args_is(a, arg, "--db")) {
        if (!(h->db = mp_args_value(a, "--db"))) return MP_EFORMAT;
        if (strcmp(h->db, "none") == 0) h->db = NULL;
    } else if (mp_args_is(a, arg, "--jobs")) {
        if (!mp_args_u64(a, "--jobs", 1, 64, &v)) return MP_EFORMAT;
        h->jobs = (uint32_t)v;
    } else if (mp_args_is(a, arg, "--failures")) {
        if (!(h->failures_dir = mp_args_value(a, "--failures"))) return MP_EFORMAT;
    } else if (mp_args_is(a, arg, "--no-shrink")) {
        h->shrink = false;
    } else if (mp_args_is(a, arg, "--quiet")) {
        ha->quiet = true;
    } else if (mp_args_is(a, arg, "--planner")) {
        const char *spec = mp_args_value(a, "--planner");
        return spec ? add_external(a, h, spec) : MP_EFORMAT;
    } else if (mp_args_is(a, arg, "--shard")) {
        const char *spec = mp_args_value(a, "--shard");
        return spec ? parse_shard(a, h, spec) : MP_EFORMAT;
    } else if (mp_args_is(a, arg, "--planner-timeout-ms")) {
        if (!mp_args_u64(a, "--planner-timeout-ms", 1, 3600000, &v)) return MP_EFORMAT;
        h->external_timeout_ms = (uint32_t)v;
    } else {
        return mp_usage_error(a->cmd, "unknown option '%s'", arg);
    }
    return MP_OK;
}

int mp_cmd_harness(int argc, char **argv) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan harness");
    harness_args ha;
    memset(&ha, 0, sizeof ha);
    mp_harness_options *h = &ha.h;
    for (h->n_algos = 0; h->n_algos < mp_planner_count(); h->n_algos++) /* every planner */
        h->algos[h->n_algos] = h->n_algos;
    h->db = "results/metrics.db";
    h->failures_dir = "results/failures";
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    h->jobs = cpus > 0 ? (uint32_t)(cpus > 64 ? 64 : cpus) : 1;
    h->shrink = true;
    const char *arg;
    bool opt;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) return mp_usage_error(a.cmd, "unexpected argument '%s'", arg);
        int rc = harness_option(&a, arg, &ha);
        if (rc) return rc < 0 ? 0 : rc;
    }
    if (!ha.have_seed || !ha.have_count) return mp_usage_error(a.cmd, "--seed and --count are required");
    struct stat st; /* reproducers go into a folder: say so before the run, not after each failure */
    if (stat(h->failures_dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return mp_usage_error(a.cmd, "--failures %s: not a folder", h->failures_dir);
    h->progress = !ha.quiet && isatty(2);
    mp_harness_summary s;
    mp_err err;
    int rc = mp_harness_run(h, &s, &err);
    if (rc) return mp_cli_fail(a.cmd, &err);
    printf("harness: %llu graphs, %llu plans, %llu failure%s in %.1fs", (unsigned long long)s.graphs,
           (unsigned long long)s.plans, (unsigned long long)s.failures, s.failures == 1 ? "" : "s",
           s.seconds);
    if (h->db) printf("; run %lld in %s", (long long)s.run_id, h->db);
    printf("\n");
    return s.failures ? 1 : 0;
}
