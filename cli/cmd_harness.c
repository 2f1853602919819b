/* cmd_harness.c - `memplan harness`: the differential harness. */
#include "cli.h"

#include <stdio.h>
#include <unistd.h>

static const char HARNESS_HELP[] =
    "usage: memplan harness --seed S --count N [--algos LIST]\n"
    "                       [--db FILE] [--jobs J] [--failures DIR] [--no-shrink]\n"
    "                       [--quiet]\n"
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

int mp_cmd_harness(int argc, char **argv) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan harness");
    mp_harness_options h = {0};
    for (h.n_algos = 0; h.n_algos < mp_planner_count(); h.n_algos++) /* every planner */
        h.algos[h.n_algos] = h.n_algos;
    h.db = "results/metrics.db";
    h.failures_dir = "results/failures";
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    h.jobs = cpus > 0 ? (uint32_t)(cpus > 64 ? 64 : cpus) : 1;
    h.shrink = true;
    bool quiet = false, have_seed = false, have_count = false, opt;
    const char *arg;
    uint64_t v;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) return mp_usage_error(a.cmd, "unexpected argument '%s'", arg);
        if (mp_args_is(&a, arg, "-h") || mp_args_is(&a, arg, "--help")) {
            fputs(HARNESS_HELP, stdout);
            mp_cli_print_planners(stdout);
            return 0;
        } else if (mp_args_is(&a, arg, "--seed")) {
            if (!mp_args_u64(&a, "--seed", 0, UINT64_MAX, &h.seed)) return MP_EFORMAT;
            have_seed = true;
        } else if (mp_args_is(&a, arg, "--count")) {
            if (!mp_args_u64(&a, "--count", 1, 100000000, &h.count)) return MP_EFORMAT;
            have_count = true;
        } else if (mp_args_is(&a, arg, "--algos")) {
            const char *l = mp_args_value(&a, "--algos");
            if (!l) return MP_EFORMAT;
            if (mp_parse_algos(l, h.algos, &h.n_algos))
                return mp_usage_error(a.cmd, "bad algorithm list '%s'", l);
        } else if (mp_args_is(&a, arg, "--db")) {
            if (!(h.db = mp_args_value(&a, "--db"))) return MP_EFORMAT;
            if (strcmp(h.db, "none") == 0) h.db = NULL;
        } else if (mp_args_is(&a, arg, "--jobs")) {
            if (!mp_args_u64(&a, "--jobs", 1, 64, &v)) return MP_EFORMAT;
            h.jobs = (uint32_t)v;
        } else if (mp_args_is(&a, arg, "--failures")) {
            if (!(h.failures_dir = mp_args_value(&a, "--failures"))) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--no-shrink")) {
            h.shrink = false;
        } else if (mp_args_is(&a, arg, "--quiet")) {
            quiet = true;
        } else {
            return mp_usage_error(a.cmd, "unknown option '%s'", arg);
        }
    }
    if (!have_seed || !have_count) return mp_usage_error(a.cmd, "--seed and --count are required");
    h.progress = !quiet && isatty(2);
    mp_harness_summary s;
    mp_err err;
    int rc = mp_harness_run(&h, &s, &err);
    if (rc) return mp_cli_fail(a.cmd, &err);
    printf("harness: %llu graphs, %llu plans, %llu failure%s in %.1fs", (unsigned long long)s.graphs,
           (unsigned long long)s.plans, (unsigned long long)s.failures, s.failures == 1 ? "" : "s",
           s.seconds);
    if (h.db) printf("; run %lld in %s", (long long)s.run_id, h.db);
    printf("\n");
    return s.failures ? 1 : 0;
}
