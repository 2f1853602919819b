/* cmd_db.c - `memplan merge` and `memplan prune`: the metrics databases'
 * upkeep (shards made one run, old rows dropped). */
#include "cli.h"

#include <stdio.h>

static const char MERGE_HELP[] =
    "usage: memplan merge OUT.db IN1.db [IN2.db ...]\n"
    "\n"
    "Make the shards of one harness run (memplan harness --shard K/N, one\n"
    "database each) one run again, recorded in OUT.db (created if missing).\n"
    "Each input gives its latest harness run.  They must be shards of the\n"
    "same run: one seed, count, option line, memplan version and commit,\n"
    "every shard 0..N-1 exactly once, each with exactly its own cases; else\n"
    "nothing is written (exit 2).  The merged run is written in one\n"
    "transaction, and a gate or report of OUT.db sees what one unsharded run\n"
    "would have recorded.  Merging the same shards again writes nothing.\n";

int mp_cmd_merge(int argc, char **argv) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan merge");
    const char *files[1 + 4096], *arg;
    size_t n = 0;
    bool opt;
    while ((arg = mp_args_next(&a, &opt))) {
        if (opt && (mp_args_is(&a, arg, "-h") || mp_args_is(&a, arg, "--help"))) {
            fputs(MERGE_HELP, stdout);
            return 0;
        }
        if (opt) return mp_usage_error(a.cmd, "unknown option '%s'", arg);
        if (n == sizeof files / sizeof *files) return mp_usage_error(a.cmd, "too many databases");
        files[n++] = arg;
    }
    if (n < 2) return mp_usage_error(a.cmd, "want OUT.db and at least one input database");
    mp_merge_summary s;
    mp_err err;
    if (mp_db_merge(files[0], files + 1, n - 1, &s, &err)) return mp_cli_fail(a.cmd, &err);
    if (s.already)
        printf("merge: these %u shard%s are run %lld of %s already; nothing written\n", s.shards,
               s.shards == 1 ? "" : "s", (long long)s.run_id, files[0]);
    else
        printf("merge: %u shard%s, %llu graphs, %llu rows: run %lld in %s\n", s.shards, s.shards == 1 ? "" : "s",
               (unsigned long long)s.graphs, (unsigned long long)s.rows, (long long)s.run_id, files[0]);
    return 0;
}
