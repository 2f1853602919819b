/* cmd_db.c - `memplan merge` and `memplan prune`: the metrics databases'
 * upkeep (shards made one run, old rows dropped). */
#include "cli.h"

#include <stdio.h>
#include <sys/stat.h>

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

static const char PRUNE_HELP[] =
    "usage: memplan prune [--db FILE] --keep N [--vacuum]\n"
    "\n"
    "A metrics history grows for years: drop the per-case rows of every run\n"
    "but the newest N of its kind (harness, bench), in one transaction.  Every\n"
    "run stays with its summaries, so `memplan report` still shows its quality\n"
    "figures and --by-commit its commit; the worst graphs and the changes\n"
    "come from the runs that kept their rows, and the gate reads the newest\n"
    "harness run's, which is always kept.\n"
    "\n"
    "options:\n"
    "  --db FILE   metrics database (default results/metrics.db)\n"
    "  --keep N    runs of each kind that keep their rows (at least 1)\n"
    "  --vacuum    then give the freed space back to the file system\n";

int mp_cmd_prune(int argc, char **argv) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan prune");
    const char *db = "results/metrics.db", *arg;
    uint64_t keep = 0;
    bool vacuum = false, opt, have_keep = false;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) return mp_usage_error(a.cmd, "unexpected argument '%s'", arg);
        if (mp_args_is(&a, arg, "-h") || mp_args_is(&a, arg, "--help")) {
            fputs(PRUNE_HELP, stdout);
            return 0;
        } else if (mp_args_is(&a, arg, "--db")) {
            if (!(db = mp_args_value(&a, "--db"))) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--keep")) {
            if (!mp_args_u64(&a, "--keep", 1, UINT32_MAX, &keep)) return MP_EFORMAT;
            have_keep = true;
        } else if (mp_args_is(&a, arg, "--vacuum")) {
            vacuum = true;
        } else {
            return mp_usage_error(a.cmd, "unknown option '%s'", arg);
        }
    }
    if (!have_keep) return mp_usage_error(a.cmd, "--keep is required");
    mp_err err;
    struct stat st; /* an existing database only: prune creates none */
    if (stat(db, &st) != 0) {
        mp_err_set(&err, MP_EFORMAT, "no metrics database at %s", db);
        return mp_cli_fail(a.cmd, &err);
    }
    mp_db *d = mp_db_open(db, &err);
    if (!d) return mp_cli_fail(a.cmd, &err);
    mp_prune_summary s;
    int rc = mp_db_prune(d, keep, &s, &err);
    if (rc == MP_OK && vacuum) rc = mp_db_vacuum(d, &err);
    mp_db_close(d);
    if (rc) return mp_cli_fail(a.cmd, &err);
    printf("prune: the per-case rows of %lld run%s dropped (%lld rows); every run keeps its summaries\n",
           (long long)s.runs, s.runs == 1 ? "" : "s", (long long)s.rows);
    return 0;
}
