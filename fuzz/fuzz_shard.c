/* fuzz_shard.c - target "shard": `memplan merge` (store/merge.c)
 * on a shard database that is any bytes (issue 45: a forged runs.shards
 * made merge write out of bounds; a view with a recursive CTE made it
 * loop forever).
 *
 * Two shards of one small run (seed 5, 4 cases, planners greedy and opt)
 * are recorded once per process through the store's own writer.  The
 * input's first byte says which of them the rest of the input replaces,
 * byte for byte as a file (its seeds are those shards' files and forged
 * ones: tests/cli/hostile_store.sh's forgeries).  Then:
 *   - merge answers OK, MP_EFORMAT or MP_EIO, and a refusal leaves no
 *     output file;
 *   - a merged run reads back through the gate's reader with one row per
 *     case and planner of the run, and merging the same shards again
 *     writes nothing (already);
 *   - it ends: the store's step budget bounds every statement. */
#include "fuzz.h"

#include <sys/stat.h>

static char dir[64];

static void record_shard(uint32_t k, const char *path) {
    mp_err err;
    mp_db *d = mp_db_open(path, &err);
    if (!d) fuzz_fail("template shard: %s", err.msg);
    static const char *const algos[] = {"greedy", "opt"};
    mp_result_row rows[4];
    char graphs[2][16];
    size_t n = 0;
    for (uint32_t i = k; i < 4; i += 2) {
        snprintf(graphs[n / 2], sizeof graphs[0], "h5-%u", i);
        for (int a = 0; a < 2; a++, n++)
            rows[n] = (mp_result_row){graphs[n / 2], algos[a], "--alignment 16", "mixed", 10, 12, 640, 640 + 64 * a,
                                      "640", 1.0 + 0.1 * a, 0.5, 100, 0, "valid"};
    }
    mp_run_info run = {.kind = "harness", .options = "--seed 5 --count 4 --algos greedy,opt", .seed = 5,
                       .count = 4, .shard = k, .shards = 2, .host = "fuzz", .git_rev = "0", .version = "1",
                       .finished = "2026-01-01T00:00:01Z"};
    snprintf(run.started, sizeof run.started, "2026-01-01T00:00:00Z");
    if (mp_db_record(d, &run, rows, n, NULL, 0, NULL, &err)) fuzz_fail("template shard: %s", err.msg);
    mp_db_close(d);
}

static void path_of(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

static void setup(void) {
    if (dir[0]) return;
    snprintf(dir, sizeof dir, "/tmp/memplan-fuzz-shard-%d", (int)getpid());
    mkdir(dir, 0700);
    char p[128];
    path_of(p, sizeof p, "s0.db");
    record_shard(0, p);
    path_of(p, sizeof p, "s1.db");
    record_shard(1, p);
}

static void remove_db(const char *path) {
    char side[160];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

static void check_merged(const char *out, const char *const *in) {
    mp_err err;
    mp_db *d = mp_db_open_existing(out, &err);
    FUZZ_ASSERT(d, "the merged database does not open: %s", err.msg);
    mp_gate_rows rows = {0};
    int rc = mp_db_gate_rows(d, &rows, &err);
    FUZZ_ASSERT(rc == MP_OK, "the merged run does not read back: %s", err.msg);
    FUZZ_ASSERT(rows.n % 4 == 0 && rows.n >= 4, "%zu rows merged from 4 cases", rows.n);
    mp_gate_rows_free(&rows);
    mp_db_close(d);
    mp_merge_summary s;
    rc = mp_db_merge(out, in, 2, &s, &err);
    FUZZ_ASSERT(rc == MP_OK && s.already, "merging the same shards again: code %d, already %d: %s", rc, s.already,
                err.msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!size || size > (1u << 20)) return 0;
    setup();
    char s0[128], s1[128], x[128], out[128];
    path_of(s0, sizeof s0, "s0.db");
    path_of(s1, sizeof s1, "s1.db");
    path_of(x, sizeof x, "x.db");
    path_of(out, sizeof out, "out.db");
    remove_db(x);
    remove_db(out);
    FILE *f = fopen(x, "wb");
    if (!f || fwrite(data + 1, 1, size - 1, f) != size - 1) fuzz_fail("cannot write %s", x);
    fclose(f);
    const char *in[2] = {data[0] & 1 ? s0 : x, data[0] & 1 ? x : s1};
    mp_merge_summary s;
    mp_err err;
    int rc = mp_db_merge(out, in, 2, &s, &err);
    FUZZ_ASSERT(rc == MP_OK || rc == MP_EFORMAT || rc == MP_EIO, "merge: code %d: %s", rc, err.msg);
    struct stat st;
    if (rc != MP_OK) FUZZ_ASSERT(stat(out, &st) != 0, "a refused merge left %s (%s)", out, err.msg);
    else check_merged(out, in);
    remove_db(x);
    remove_db(out);
    return 0;
}
