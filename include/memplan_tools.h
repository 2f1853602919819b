/* memplan_tools.h - the tools layer the memplan command is built from.
 *
 * The random program generator and the CSV importer, the differential
 * harness and its shrinker, the SQLite metrics store with its report and
 * regression gate, the pictures of a plan, and file helpers.  These live
 * in verify/harness/, verify/store/ and viz/, link SQLite, and are built
 * into build/libmemplan-tools.a for the command line and the tests; they
 * are not part of the shared library and their interface may change with
 * any release.  Same conventions as memplan.h. */
#ifndef MEMPLAN_TOOLS_H
#define MEMPLAN_TOOLS_H

#include "memplan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many planners in the table (and in one harness run). */
#define MP_MAX_PLANNERS 16

/* -------------------------------------------------------------- generator */

enum mp_profile {
    MP_PROFILE_MIXED,       /* every feature of the format */
    MP_PROFILE_CHAIN,       /* long chains with skip connections */
    MP_PROFILE_WIDE,        /* wide branches */
    MP_PROFILE_ENCDEC,      /* encoder-decoder with long skips */
    MP_PROFILE_TRANSFORMER, /* attention blocks, weights, KV cache */
    /* adversarial shapes: what makes a planner slow if anything does */
    MP_PROFILE_INPLACE_CHAIN, /* one in-place chain through the whole graph */
    MP_PROFILE_VIEW_CHAIN,    /* views of views, read along the way */
    MP_PROFILE_MANY_DEVICES,  /* one node's outputs, each on a device of its own */
    MP_PROFILE_MANY_POOLS,    /* a chain over every pre-assigned pool */
    MP_PROFILE_WIDE_NODE,     /* one node with every tensor as its output */
    MP_PROFILE_MANY_CONDS,    /* conds in a row, each one's result the next one's operand */
    MP_PROFILE_DEEP,          /* conds nested as deep as the planners accept */
    MP_PROFILE_METHODS,       /* two methods (prefill, decode) sharing KV caches (since 1.5) */
    /* where few are live: quadratic in 1.8.0's greedy, tflm and bestfit (since 1.8.1) */
    MP_PROFILE_PLAIN_CHAIN,   /* each node reads the one before */
    MP_PROFILE_INPLACE_PAIRS, /* short in-place families (relu_ after each op) in a chain */
    MP_PROFILE_FAN_IN,        /* one node reading every other tensor */
    MP_PROFILE_SCRATCH_CHAIN, /* delegates with scratch memory in a chain */
    MP_N_PROFILES
};

typedef struct mp_gen_options {
    uint64_t seed, tensors;
    uint32_t depth, profile, n_devices;
    mp_device devices[16]; /* devices[0] is the main device */
    bool pins; /* pin tensors (at=) in one program in eight (the harness's cases) */
} mp_gen_options;

void mp_gen_options_default(mp_gen_options *o);
/* Write a valid random .mpg program: same options, same bytes. */
void mp_gen(const mp_gen_options *o, struct mp_buf *out);
/* The same text handed to sink (with ctx) about a MiB at a time instead of
 * kept whole (a 10^7-tensor graph is 0.66 GB): out is left empty, and
 * out->failed when the sink returned false or an allocation failed (the
 * writing stopped there). */
void mp_gen_to(const mp_gen_options *o, struct mp_buf *out, bool (*sink)(const char *data, size_t len, void *ctx),
               void *ctx);
/* `memplan gen`: the text to path (as mp_out_open takes it) as it is
 * written, a MiB at a time (10^8 tensors are 6.6 GB of it), under the
 * allocation guard: running out of memory (10^8 tensors hold some 16 GB
 * while they are written) is MP_ENOMEM, a failed write MP_EIO, and either
 * leaves no file behind and everything freed. */
int mp_gen_write(const mp_gen_options *o, const char *path, mp_err *err);
int mp_gen_profile_parse(const char *name);
/* A MiniMalloc-style CSV (id,lower,upper,size; half-open lifetimes) as a
 * graph file whose tensors have exactly those lifetimes and sizes. */
int mp_import_csv(const char *data, size_t len, const char *name, struct mp_buf *out, mp_err *err);
const char *mp_gen_profile_name(uint32_t profile);


/* ---------------------------------------------------------- metrics store */

typedef struct mp_db mp_db;

typedef struct mp_run_info {
    const char *kind;    /* "harness", "bench", "fuzz" */
    const char *options; /* the command line, as JSON or text */
    char started[32];    /* ISO 8601 UTC; empty: now */
    uint64_t seed, count;
    uint32_t shard, shards; /* harness --shard K/N: K, N; shards 0: a whole run */
    /* a merged run: its identity (the run's seed, count, version,
     * commit, planners and options, then "K/N host started finished rows"
     * per shard, ';'-separated: merge.c), and where and what they measured (NULL: this machine, this build,
     * finished now) */
    const char *merged_from, *host, *git_rev, *finished, *version;
} mp_run_info;

typedef struct mp_result_row {
    const char *graph, *algo, *options, *profile;
    uint64_t tensors, nodes, lower_bound, total_bytes;
    const char *buffers; /* entry buffer sizes, space separated */
    double ratio, plan_ms;
    uint64_t peak_kb, violations;
    const char *verify; /* "valid", "invalid", "refused", "crash" */
} mp_result_row;

typedef struct mp_campaign_row {
    const char *target, *engine;
    double seconds;
    uint64_t executions, corpus_size, coverage, crashes;
} mp_campaign_row;

/* Open or create a database, migrating an older schema.  MP_EFORMAT when it
 * is not a memplan database or is newer than this memplan. */
mp_db *mp_db_open(const char *path, mp_err *err);
/* An existing database for queries (report, gate): read-only, never
 * migrated, no lock a writer waits behind; MP_EFORMAT when it does not
 * exist or is not of this schema version. */
mp_db *mp_db_open_existing(const char *path, mp_err *err);
void mp_db_close(mp_db *db);
const char *mp_db_path(const mp_db *d); /* as it was opened */
int mp_db_schema_version(void);
/* Record a run with its rows in one transaction: all of it or nothing. */
int mp_db_record(mp_db *db, const mp_run_info *run, const mp_result_row *rows, size_t n,
                 const mp_campaign_row *campaigns, size_t n_campaigns, int64_t *run_id,
                 mp_err *err);
void mp_db_now(char *buf, size_t n);
const char *mp_git_revision(void);
typedef struct mp_merge_summary {
    int64_t run_id;     /* the merged run (or the earlier identical merge) */
    uint32_t shards;
    uint64_t graphs, rows;
    bool already;       /* these shards were merged into run_id before: nothing written */
} mp_merge_summary;
/* At most this many shards in one harness run (--shard K/N). */
#define MP_SHARDS_MAX 1000000
/* The shards of one harness run (harness --shard K/N; each input's latest
 * harness run) as one run in `out`: all checked first (every field's type
 * and range; one seed, count, options, version, commit and planner set;
 * every shard once; each shard's rows its own cases, one per planner),
 * then written in one transaction.  Idempotent. */
int mp_db_merge(const char *out, const char *const *inputs, size_t n, mp_merge_summary *sum, mp_err *err);
typedef struct mp_prune_summary {
    int64_t runs, rows; /* runs whose per-case rows were dropped, and those rows */
} mp_prune_summary;
/* Drop the per-case rows (results) of every run but the newest `keep` of
 * its kind, in one transaction; runs and their summaries stay. */
int mp_db_prune(mp_db *db, uint64_t keep, mp_prune_summary *s, mp_err *err);
int mp_db_vacuum(mp_db *db, mp_err *err); /* give the freed pages back to the file system */
/* The history report: format "text", "csv" or "json"; since: an ISO date
 * prefix or NULL; algo: one algorithm or NULL. */
int mp_db_report(mp_db *db, const char *since, const char *algo, const char *format,
              struct mp_buf *out, mp_err *err);
/* Per commit (in the order first measured), each planner's figures over
 * the harness runs of the newest run's command, and the change against
 * the commit before. */
int mp_report_by_commit(mp_db *db, const char *since, const char *algo, const char *format,
                        struct mp_buf *out, mp_err *err);
/* Compare the latest harness run with a baseline SQL dump (or rewrite it). */
int mp_gate(mp_db *db, const char *baseline, bool update, struct mp_buf *out, bool *passed,
            mp_err *err);



/* What the HTML report reads from the store (mp_db_report_data): each list
 * in a total order, so the page is deterministic. */
typedef struct mp_report_qrow { /* one run and algorithm */
    int64_t run, graphs, valid, invalid, refused;
    char started[24], kind[16], git[48], algo[16];
    double mean, max; /* over valid plans; NAN when none */
} mp_report_qrow;

typedef struct mp_report_prow { /* one plan: time against size */
    int64_t run;
    double tensors, ms;
    char algo[16], graph[96];
} mp_report_prow;

typedef struct mp_report_wrow { /* one of the worst plans of an algorithm */
    int64_t run;
    uint64_t bytes, lower, tensors;
    double ratio;
    char graph[96], algo[16], profile[16], kind[16];
    char href[512]; /* link to its SVG, "" when there is none (viz) */
    char note[160]; /* why there is none, when asked for (viz) */
} mp_report_wrow;

typedef struct mp_report_data {
    mp_report_qrow *q; /* per run and algorithm, by run */
    size_t nq, capq;
    mp_report_prow *p; /* the most recent plans, at most max_points */
    size_t np, capp;
    mp_report_wrow *w; /* per algorithm its worst valid plans, at most worst */
    size_t nw, capw;
    bool by_commit; /* q is per commit: run = its first run, git = the commit */
} mp_report_data;

/* since: ISO date prefix or NULL; algo: one planner or NULL. */
int mp_db_report_data(mp_db *db, const char *since, const char *algo, uint32_t max_points,
                      uint32_t worst, bool by_commit, mp_report_data *d, mp_err *err);
void mp_report_data_free(mp_report_data *d);

/* The gate's rows: one (graph, algorithm) of a harness run or baseline. */
typedef struct mp_gate_row {
    char *graph, *algo, *options, *verify;
    uint64_t total, lower;
    double ratio;
} mp_gate_row;

typedef struct mp_gate_rows {
    mp_gate_row *v;
    size_t n, cap;
    uint64_t seed, count; /* of the run they come from */
    char *options;        /* its command line, "--seed S --count N --algos A,B" */
    char *version;        /* the memplan that made it */
    int64_t run;
    uint32_t shard, shards; /* a shard of a sharded run (shards > 1) */
} mp_gate_rows;

/* The latest harness run's rows (run, seed and count filled). */
int mp_db_gate_rows(mp_db *db, mp_gate_rows *rows, mp_err *err);
/* A baseline file's rows (the SQL dump mp_gate_dump writes), sorted as
 * mp_gate_sort_rows sorts, one per (graph, algo) or MP_EFORMAT.  The file is
 * data: it runs in a private in-memory database under an authorizer that
 * allows only creating and filling the two baseline tables. */
int mp_gate_load_baseline(const char *path, mp_gate_rows *rows, mp_err *err);
void mp_gate_dump(const mp_gate_rows *rows, mp_buf *out);
/* Rows in (graph, algo) strcmp order, the order the gate searches. */
void mp_gate_sort_rows(mp_gate_rows *rows);
void mp_gate_rows_free(mp_gate_rows *rows);

/* ---------------------------------------------------------------- harness */

typedef struct mp_algo_outcome {
    int code;        /* 0 planned, else the planner's error code */
    bool limit;      /* refused for a planner limit, not a broken rule */
    char verify[12]; /* "valid", "invalid", "refused" */
    uint64_t total_bytes, lower_bound, violations;
    double ratio, plan_ms;
    char buffers[512]; /* entry buffers, space separated */
    char name[16];     /* an external planner's name; "" for one of the table */
} mp_algo_outcome;

typedef struct mp_check_result {
    bool failed;
    char kind[32];  /* "invalid", "nondeterministic", "opt-worse", ... */
    char algo[16];
    char message[1024];
    uint64_t tensors, nodes;
    uint32_t n_algos, algos[MP_MAX_PLANNERS];
    mp_algo_outcome out[MP_MAX_PLANNERS];
} mp_check_result;

/* Every differential check on one graph with one set of options. */
void mp_check_graph(const mp_program *prog, const mp_options *opts, const uint32_t *algos,
                    uint32_t n_algos, mp_check_result *r);
/* The planning options as command-line flags (verify/harness/options.c):
 * the one table `memplan plan`, the harness's reproducers and the fuzz
 * targets' "# options:" lines use. */
typedef struct mp_option_flag {
    const char *name;  /* "--alignment" */
    bool takes_value;  /* a number in [lo, hi] follows */
    uint64_t lo, hi;
    int field;
} mp_option_flag;

/* The flag named by name[0..len), or NULL when it is no planning option. */
const mp_option_flag *mp_option_find(const char *name, size_t len);
/* Apply it (value: its number as text, for flags that take one). */
int mp_option_set(mp_options *o, const mp_option_flag *f, const char *value, mp_err *err);
/* The options as command-line flags ("--alignment 8 --per-device ..."). */
void mp_options_to_args(const mp_options *o, char *buf, size_t n);

/* The first failure of a case, kept (later ones are dropped). */
void mp_check_fail(mp_check_result *r, const char *kind, const char *algo, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Verify a plan: the outcome's figures and verdict; an invalid plan fails
 * the case with the verifier's text. */
void mp_check_verdict(const mp_program *p, const mp_plan *plan, const char *name, mp_check_result *r,
                      mp_algo_outcome *out);

/* A planner outside memplan (docs/external-planners.md): run as
 * `sh -c 'COMMAND "$@"' sh OPTIONS... GRAPH`, it writes a .mpp on stdout and
 * exits 0 (planned), 3 (refuses) or anything else (a crash). */
#define MP_MAX_EXTERNAL 8
typedef struct mp_external_planner {
    const char *name, *command;
} mp_external_planner;

/* Plan `graph_text` (the program `p`) with an external planner under a
 * time limit, verify its plan, fill `out` (verify: valid, invalid,
 * refused, crash, timeout) and record a failure in r. */
void mp_check_external(const mp_program *p, const char *graph_text, size_t len, const mp_options *o,
                       const mp_external_planner *ext, uint32_t timeout_ms, mp_check_result *r, mp_algo_outcome *out);
/* Its raw output (the plan text, NUL-terminated, len without the NUL) on
 * a graph, for a reproducer; true when it ran to its exit within the time
 * limit and the output cap, *status then its wait status; else *status is
 * one of these.  Caller frees out with mp_buf_free. */
enum { MP_EXTERNAL_FAILED = -1, MP_EXTERNAL_TIMEOUT = -2, MP_EXTERNAL_TOO_LONG = -3 };
/* The verdict on what an external planner did: its output (any bytes,
 * out_len of them) and status (a wait status, or MP_EXTERNAL_* below 0)
 * as the outcome `out` (timeout, invalid, valid, refused or crash) and a
 * failure in r; the graph's length sets the output cap. */
void mp_external_verdict(const mp_program *p, size_t graph_len, const char *output, size_t out_len, int status,
                         uint32_t timeout_ms, const char *name, mp_check_result *r, mp_algo_outcome *out);
bool mp_run_external(const char *graph_text, size_t len, const mp_options *o, const mp_external_planner *ext,
                     uint32_t timeout_ms, mp_buf *out, int *status);

typedef struct mp_harness_options {
    uint64_t seed, count;
    uint32_t algos[MP_MAX_PLANNERS], n_algos;
    const char *db;           /* NULL: record nothing */
    const char *failures_dir; /* where reproducers go */
    uint32_t jobs;
    bool progress;            /* a status line on stderr */
    bool shrink;
    mp_external_planner external[MP_MAX_EXTERNAL]; /* --planner NAME=COMMAND */
    uint32_t n_external, external_timeout_ms;      /* 0: 10000 ms */
    uint32_t shard, shards; /* --shard K/N: the cases i with i mod N == K; shards 0: all */
} mp_harness_options;

typedef struct mp_harness_summary {
    uint64_t graphs, plans, failures;
    int64_t run_id;
    double seconds;
} mp_harness_summary;

/* Case i of a harness seed: the generator's and the planner's options. */
void mp_harness_case(uint64_t seed, uint64_t i, mp_gen_options *g, mp_options *o);
int mp_harness_run(const mp_harness_options *h, mp_harness_summary *s, mp_err *err);

/* Shrink a failing text: drop lines, tokens and list items while
 * `still_fails` holds.  Returns a new string (caller frees). */
typedef bool (*mp_shrink_pred)(const char *text, size_t len, void *ctx);
char *mp_shrink(const char *text, mp_shrink_pred still_fails, void *ctx, uint32_t max_tries);

/* ---------------------------------------------------------- visualisation */

/* Pictures of a plan (viz/, docs/visualisation.md).  Each writes into
 * `out` and returns MP_OK, or an error code with err->msg; the same inputs
 * give the same bytes.  None prints or writes files, except the HTML
 * report when asked for SVGs (svg_dir). */

/* A Chrome trace event file (JSON) for Perfetto and chrome://tracing: one
 * process per graph block, tracks per buffer, one slice per tensor, slices
 * for sub-graph reservations, live-bytes counters; time = node * 1000 us. */
int mp_viz_trace(const mp_program *prog, const mp_plan *plan, struct mp_buf *out,
                 mp_err *err);

enum mp_viz_color { MP_VIZ_BY_DEVICE, MP_VIZ_BY_GRAPH };

typedef struct mp_viz_svg_options {
    uint32_t color;        /* enum mp_viz_color (default by device) */
    uint32_t width;        /* plot width in pixels (default 1200, 200..20000) */
    uint32_t panel_height; /* pixels per buffer panel (default 260, 60..5000) */
    const char *title;     /* first line of the picture; NULL: the graph file */
} mp_viz_svg_options;

void mp_viz_svg_options_default(mp_viz_svg_options *o);
/* A standalone SVG: x = node, y = byte offset, one panel per buffer, a
 * rectangle per tensor (sub-pixel ones merged into tiles), the live-bytes
 * curve and the lower bound, mp_verify's violations outlined in red. */
int mp_viz_svg(const mp_program *prog, const mp_plan *plan, const mp_viz_svg_options *o,
               struct mp_buf *out, mp_err *err);

/* The SVG of harness case `graph_id` ("h<seed>-<i>") planned with `algo`,
 * regenerated with mp_harness_case + mp_gen + mp_plan_program.  MP_EFORMAT
 * when the id is not of that form; *tensors (may be NULL) gets the
 * regenerated program's tensor count, to compare with the recorded one. */
int mp_viz_harness_svg(const char *graph_id, const char *algo, const mp_viz_svg_options *o,
                       struct mp_buf *out, uint64_t *tensors, mp_err *err);

typedef struct mp_viz_report_options {
    const char *since, *algo; /* as for mp_report; NULL: all */
    uint32_t worst;           /* rows in the worst-graphs table (default 20) */
    uint32_t max_points;      /* points in the time-vs-size plot (default 5000) */
    /* When set, the worst harness graphs' SVGs are written to
     * svg_dir/<graph>-<algo>.svg and linked as svg_href/<graph>-<algo>.svg;
     * a graph that cannot be regenerated is listed without a link. */
    const char *svg_dir, *svg_href;
    bool by_commit; /* the ratio chart and the runs table per commit (report --by-commit) */
} mp_viz_report_options;

void mp_viz_report_options_default(mp_viz_report_options *o);
/* The metrics history as one self-contained HTML page (inline CSS and SVG,
 * no script, no external asset). */
int mp_viz_report_html(mp_db *db, const mp_viz_report_options *o, struct mp_buf *out,
                       mp_err *err);


/* ------------------------------------------------------------------ files */

/* Read a whole file (core/lines.c; a NUL-terminated copy, freed with
 * mp_xfree).  Returns NULL with MP_EFORMAT. */
char *mp_read_file(const char *path, size_t *len, mp_err *err);
/* Write an output file (core/file.c): a regular or new file through a
 * temporary beside it and a rename, keeping its mode and owner; a
 * symbolic link's target (the link stays a link); a device, FIFO or
 * socket in place; "-" is stdout.  On failure nothing is left behind
 * (MP_EIO).  mp_write_output also refuses (MP_EFORMAT) a path that is the
 * same file as one of `inputs`. */
int mp_write_file_atomic(const char *path, const char *data, size_t len, mp_err *err);
/* The same output written in pieces, for a text too large to hold whole
 * (a 10^7-tensor plan is 0.7 GB): mp_out_open makes the checks and opens
 * the temporary (or the device, or stdout); mp_out_write appends (false
 * once a write failed: later ones are skipped); mp_out_close with keep
 * renames the temporary over the path, or reports the first failure
 * (MP_EIO), and without keep removes it.  Close every output opened. */
typedef struct mp_out {
    int fd;
    char *tmp; /* the temporary, NULL when written in place */
    char path[4096];
    bool is_stdout, has_old, ok;
    unsigned old_mode, old_uid, old_gid;
    int error; /* errno of the first failed write */
    int temp_slot; /* its place among the temporaries a signal removes, or -1 */
} mp_out;
int mp_out_open(mp_out *o, const char *path, const char *const *inputs, size_t n_inputs, mp_err *err);
/* Every byte of data to fd (EINTR retried); false with errno set. */
bool mp_write_all(int fd, const char *data, size_t len);
bool mp_out_write(mp_out *o, const char *data, size_t len);
/* mp_out_write as a writer's sink (ctx: the mp_out), for mp_gen_to and the
 * plan writer's pieces. */
bool mp_out_sink(const char *data, size_t len, void *ctx);
int mp_out_close(mp_out *o, bool keep, mp_err *err);
/* Remove every temporary an mp_out has open now: for a signal handler
 * (async-signal-safe; the command installs it, cli/main.c). */
void mp_out_remove_temporaries(void);
/* Whether two output paths name one file (links followed; a new file by
 * its folder and name): two outputs of one command on one path are
 * refused, as an output that is an input is. */
bool mp_same_output(const char *a, const char *b);
int mp_write_output(const char *path, const char *data, size_t len, const char *const *inputs,
                    size_t n_inputs, mp_err *err);
/* A writer's text in b (mp_buf), to path as mp_write_output does, only when
 * it is whole: when b failed (an allocation ran out, so its text stops
 * short), MP_ENOMEM and no file touched. */
int mp_write_buf(const char *path, const struct mp_buf *b, const char *const *inputs, size_t n_inputs,
                 mp_err *err);
/* mp_out_close for a text a writer handed through mp_out_write from b,
 * a piece at a time: kept only when whole.  MP_EIO when a write failed,
 * MP_ENOMEM when b failed on an allocation; either way nothing is left
 * behind. */
int mp_out_finish(mp_out *o, const struct mp_buf *b, mp_err *err);

#ifdef __cplusplus
}
#endif
#endif
