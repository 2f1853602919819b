/* memplan.h - the one public header of libmemplan.
 *
 * memplan plans, checks and measures the static memory layout of tensor
 * programs.  This header holds the graph model (what a .mpg file says), the
 * plan model (what a .mpp file says), the planners, the verifier and the
 * helpers the command line is built from.
 *
 * Conventions
 * - Every fallible call takes an mp_err* and returns a value; on failure it
 *   fills err->msg ("FILE:LINE: what is wrong" for input errors) and sets
 *   err->code to one of the MP_E* codes, which are also the CLI exit codes.
 * - Objects are owned by the caller and freed with their *_free function.
 * - All sizes and offsets are bytes in uint64_t.  Planners refuse (MP_EPLAN)
 *   a plan whose buffer would not fit in 64 bits (ExecuTorch's emitter
 *   raises there too); every sum of offsets and sizes is overflow-checked.
 */
#ifndef MEMPLAN_H
#define MEMPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MEMPLAN_VERSION "1.0.0"

/* ---------------------------------------------------------------- errors */

enum {
    MP_OK = 0,
    MP_EINVALID = 1, /* a plan that breaks a rule (verifier) */
    MP_EFORMAT = 2,  /* bad usage, unreadable or malformed input */
    MP_EPLAN = 3,    /* a graph that cannot be planned */
    MP_EIO = 4       /* an I/O failure (disk full, permission...) */
};

typedef struct mp_err {
    int code;
    /* MP_EPLAN only: the graph is valid but beyond this planner's limits (a
     * buffer past 64 bits, the reference's re-planning work), so another
     * planner may still plan it; false for a graph that breaks a rule */
    bool limit;
    char msg[1024];
} mp_err;

void mp_err_clear(mp_err *err);

/* ----------------------------------------------------------------- limits */

#define MP_MAX_NAME 255                 /* bytes in a name */
#define MP_MAX_SIZE (UINT64_C(1) << 62) /* a tensor's SIZE is below this */
#define MP_MAX_BYTES UINT64_MAX /* no buffer may exceed this */
#define MP_MAX_MEM_ID 1024              /* largest pre-assigned pool */
#define MP_MAX_DEVICE_INDEX 65535
#define MP_MAX_ALIGNMENT (UINT32_C(1) << 30)
#define MP_MAX_DEPTH 200 /* control-flow nesting the planners accept */

/* ------------------------------------------------------------ graph model */

enum mp_device_type { MP_DEV_CPU = 0, MP_DEV_CUDA = 1 };

typedef struct mp_device {
    uint32_t type;  /* enum mp_device_type */
    uint32_t index; /* cpu:N / cuda:N */
} mp_device;

enum mp_tensor_flags {
    MP_T_CONST = 1u << 0,
    MP_T_MUTABLE = 1u << 1,
    MP_T_DYNAMIC = 1u << 2
};

typedef struct mp_tensor {
    const char *name;
    uint64_t size;        /* unaligned byte count */
    mp_device device;
    uint32_t flags;       /* mp_tensor_flags */
    uint32_t mem_id;      /* pre-assigned pool, 0 when none */
    int32_t inplace_base; /* tensor index as written, or -1 */
    int32_t view_base;    /* tensor index as written, or -1 */
    int32_t root;         /* storage owner: self, or the view chain's end */
    int32_t def_node;     /* node whose out= names it, -1 if none */
    int32_t line;         /* line of its tensor declaration */
} mp_tensor;

enum mp_node_kind {
    MP_NODE_PLACEHOLDER,
    MP_NODE_CALL,
    MP_NODE_DELEGATE,
    MP_NODE_COND,
    MP_NODE_WHILE,
    MP_NODE_MAP,
    MP_NODE_SCAN,
    MP_NODE_OUTPUT
};

typedef struct mp_node {
    uint32_t kind; /* enum mp_node_kind */
    int32_t line;
    int32_t *in;   /* tensor indices as written (views not resolved) */
    uint32_t n_in;
    int32_t *out;
    uint32_t n_out;
    /* sub-graph indices, -1 when unused: cond true/false, while cond/body,
     * map and scan body in sub[0]. */
    int32_t sub[2];
    const char *backend; /* delegate only */
} mp_node;

typedef struct mp_graphdef {
    const char *name;
    int32_t line;
    mp_tensor *tensors;
    uint32_t n_tensors;
    mp_node *nodes;
    uint32_t n_nodes;
} mp_graphdef;

typedef struct mp_program {
    const char *filename;
    mp_graphdef *graphs; /* graphs[0] is the entry graph */
    uint32_t n_graphs;
    struct mp_arena *arena; /* owns every string and array above */
} mp_program;

/* Parse a .mpg file held in memory.  `filename` is used in messages.
 * Returns NULL with err->code MP_EFORMAT on any violation of the format. */
mp_program *mp_graph_parse(const char *data, size_t len, const char *filename,
                           mp_err *err);
mp_program *mp_graph_load(const char *path, mp_err *err);
void mp_program_free(mp_program *prog);

/* Write a program back as .mpg text (canonical spacing). */
struct mp_buf;
void mp_graph_write(const mp_program *prog, struct mp_buf *out);

const char *mp_node_kind_name(uint32_t kind);
/* "cpu:0", "cuda:3": writes into buf (at least 24 bytes), returns buf. */
const char *mp_device_str(mp_device dev, char *buf);
int mp_device_cmp(mp_device a, mp_device b); /* cpu:0 first, then type, index */
bool mp_device_eq(mp_device a, mp_device b);
int32_t mp_graph_find(const mp_program *prog, const char *name);
int32_t mp_tensor_find(const mp_graphdef *g, const char *name);
/* Graphs reachable from the entry, as flags indexed by graph. */
void mp_graph_reachable(const mp_program *prog, bool *reach);
/* Does the graph hold a delegate whose backend contains "xnnpack" (any case)? */
bool mp_graph_has_xnnpack(const mp_graphdef *g);

/* ----------------------------------------------------------------- options */

enum mp_algo { MP_ALGO_GREEDY, MP_ALGO_NAIVE, MP_ALGO_OPT };

typedef struct mp_options {
    uint32_t alignment; /* default 16 */
    bool alloc_inputs, alloc_outputs, alloc_mutable, per_device;
    uint32_t algo;   /* enum mp_algo */
    bool et_exact;   /* reproduce ExecuTorch, defects included */
    bool exact;         /* opt: exact search */
    uint32_t budget_ms; /* opt: improvement effort (as fixed work) */
    uint32_t exact_ms;  /* opt --exact: search effort per buffer (as fixed work) */
    /* reference: tensors ExecuTorch's re-planning of shared sub-graphs may
     * visit beyond 8 per graph element before the graph is refused for a
     * limit; 0 means 10^6 (fuzz targets lower it to stay fast) */
    uint64_t replan_limit;
} mp_options;

void mp_options_default(mp_options *o);
const char *mp_algo_name(uint32_t algo);
int mp_algo_parse(const char *name); /* -1 if unknown */

/* ------------------------------------------------------------- plan model */

typedef struct mp_alloc {
    const char *name; /* tensor name as in the plan */
    int32_t tensor;   /* index in the graph, -1 if the name is unknown */
    int32_t line;     /* line in the plan file, 0 when made in memory */
    uint64_t mem_id;
    uint64_t obj;
    uint64_t offset;
    uint64_t size;
    int64_t life_start, life_end;
} mp_alloc;

typedef struct mp_free {
    const char *name;
    int32_t tensor;
    int32_t line;
    int64_t after;
} mp_free;

typedef struct mp_graph_plan {
    const char *name; /* graph name */
    int32_t graph;    /* index in the program, -1 if unknown */
    int32_t line;
    uint64_t *buffers;
    mp_device *devices;
    uint32_t n_buffers, n_devices;
    mp_alloc *allocs;
    uint32_t n_allocs;
    mp_free *frees;
    uint32_t n_frees;
} mp_graph_plan;

typedef struct mp_plan {
    mp_options opts;       /* the options line, clamped to legal values */
    /* The options line as written, for the verifier to judge: alignment and
     * the four flags alloc_inputs, alloc_outputs, alloc_mutable, per_device. */
    uint64_t raw_alignment, raw_flags[4];
    const char *algo_name; /* as written in the options line */
    mp_graph_plan *graphs; /* one block each, file order */
    uint32_t n_graphs;
    const char *notes; /* planner remarks for the user (exact search), or NULL */
    struct mp_arena *arena;
} mp_plan;

void mp_plan_free(mp_plan *plan);
void mp_plan_write(const mp_plan *plan, struct mp_buf *out);
/* Parse a .mpp file.  Only the syntax is checked here (MP_EFORMAT); names
 * are resolved against `prog` when it is given, unknown ones left as -1
 * for the verifier to report. */
mp_plan *mp_plan_parse(const char *data, size_t len, const char *filename,
                       const mp_program *prog, mp_err *err);
mp_plan *mp_plan_load(const char *path, const mp_program *prog, mp_err *err);
/* Total bytes: the entry block's buffers added up (0 when absent). */
uint64_t mp_plan_total_bytes(const mp_plan *plan);

/* --------------------------------------------------------------- planners */

/* Plan a program with the algorithm and mode in `opts`.  Returns NULL with
 * MP_EPLAN when the graph cannot be planned (or MP_EFORMAT for bad options). */
mp_plan *mp_plan_program(const mp_program *prog, const mp_options *opts,
                         mp_err *err);

/* The reference planner (ref/): ExecuTorch's apply_algo. */
mp_plan *mp_ref_plan(const mp_program *prog, const mp_options *opts,
                     mp_err *err);
/* The optimized planner (src/opt/). */
mp_plan *mp_opt_plan(const mp_program *prog, const mp_options *opts,
                     mp_err *err);


/* --------------------------------------------------------------- verifier */

/* The rules a plan must hold (issue 3); the numbers are stable. */
enum mp_rule {
    MP_RULE_COMPLETENESS = 1,
    MP_RULE_SIZE = 2, /* sizes and alignment */
    MP_RULE_BOUNDS = 3,
    MP_RULE_OVERLAP = 4,
    MP_RULE_CONTROL_FLOW = 5,
    MP_RULE_DEVICE = 6,
    MP_RULE_FREE = 7,
    MP_RULE_CONSISTENCY = 8
};
#define MP_N_RULES 9 /* indices 1..8 */

typedef struct mp_violation {
    const char *graph; /* graph name ("" for the file as a whole) */
    uint32_t rule;     /* enum mp_rule */
    const char *kind;  /* "overlap", "alignment", "size", ... */
    char *msg;         /* the whole line, without the graph prefix */
    const char *tensors[2];
    int64_t buffer;    /* -1 when none */
    uint64_t ranges[2][2]; /* byte ranges [lo, hi) of tensors[0..1] */
    uint32_t n_ranges;
    int64_t nodes[2];  /* node range, -1 when none */
} mp_violation;

typedef struct mp_verify_report {
    uint64_t n_violations;          /* all of them */
    uint64_t per_rule[MP_N_RULES];
    mp_violation *v;                /* the first MP_VERIFY_DETAIL of them */
    uint32_t n_v;
    /* quality of the entry graph's buffers */
    uint64_t total_bytes, lower_bound;
    double ratio;                   /* total / lower bound (1 when both 0) */
    uint64_t *buf_bytes, *buf_lower;
    uint32_t n_buffers;
    struct mp_arena *arena;
} mp_verify_report;

#define MP_VERIFY_DETAIL 1000

const char *mp_rule_name(uint32_t rule);
/* Check `plan` against `prog`.  Returns MP_OK (valid), MP_EINVALID, or an
 * error code when the check itself could not run. */
int mp_verify(const mp_program *prog, const mp_plan *plan, mp_verify_report *r,
              mp_err *err);
void mp_verify_report_free(mp_verify_report *r);
void mp_verify_write_text(const mp_verify_report *r, struct mp_buf *out);
void mp_verify_write_json(const mp_verify_report *r, struct mp_buf *out);


/* -------------------------------------------------------------- generator */

enum mp_profile {
    MP_PROFILE_MIXED,       /* every feature of the format */
    MP_PROFILE_CHAIN,       /* long chains with skip connections */
    MP_PROFILE_WIDE,        /* wide branches */
    MP_PROFILE_ENCDEC,      /* encoder-decoder with long skips */
    MP_PROFILE_TRANSFORMER, /* attention blocks, weights, KV cache */
    MP_N_PROFILES
};

typedef struct mp_gen_options {
    uint64_t seed, tensors;
    uint32_t depth, profile, n_devices;
    mp_device devices[16]; /* devices[0] is the main device */
} mp_gen_options;

void mp_gen_options_default(mp_gen_options *o);
/* Write a valid random .mpg program: same options, same bytes. */
void mp_gen(const mp_gen_options *o, struct mp_buf *out);
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
mp_db *mp_db_open_existing(const char *path, mp_err *err);
void mp_db_close(mp_db *db);
int mp_db_schema_version(void);
/* Record a run with its rows in one transaction: all of it or nothing. */
int mp_db_record(mp_db *db, const mp_run_info *run, const mp_result_row *rows, size_t n,
                 const mp_campaign_row *campaigns, size_t n_campaigns, int64_t *run_id,
                 mp_err *err);
struct sqlite3 *mp_db_handle(mp_db *db);
void mp_db_now(char *buf, size_t n);
const char *mp_git_revision(void);
/* The history report: format "text", "csv" or "json"; since: an ISO date
 * prefix or NULL; algo: one algorithm or NULL. */
int mp_report(mp_db *db, const char *since, const char *algo, const char *format,
              struct mp_buf *out, mp_err *err);
/* Compare the latest harness run with a baseline SQL dump (or rewrite it). */
int mp_gate(mp_db *db, const char *baseline, bool update, struct mp_buf *out, bool *passed,
            mp_err *err);


/* ---------------------------------------------------------------- harness */

typedef struct mp_algo_outcome {
    int code;        /* 0 planned, else the planner's error code */
    bool limit;      /* refused for a planner limit, not a broken rule */
    char verify[12]; /* "valid", "invalid", "refused" */
    uint64_t total_bytes, lower_bound, violations;
    double ratio, plan_ms;
    char buffers[512]; /* entry buffers, space separated */
} mp_algo_outcome;

typedef struct mp_check_result {
    bool failed;
    char kind[32];  /* "invalid", "nondeterministic", "opt-worse", ... */
    char algo[16];
    char message[1024];
    uint64_t tensors, nodes;
    uint32_t n_algos, algos[3];
    mp_algo_outcome out[3];
} mp_check_result;

/* Every differential check on one graph with one set of options. */
void mp_check_graph(const mp_program *prog, const mp_options *opts, const uint32_t *algos,
                    uint32_t n_algos, mp_check_result *r);
uint64_t mp_peak_rss_kb(void);
/* The options as command-line flags ("--alignment 8 --per-device ..."). */
void mp_options_to_args(const mp_options *o, char *buf, size_t n);

typedef struct mp_harness_options {
    uint64_t seed, count;
    uint32_t algos[3], n_algos;
    const char *db;           /* NULL: record nothing */
    const char *failures_dir; /* where reproducers go */
    uint32_t jobs;
    bool progress;            /* a status line on stderr */
    bool shrink;
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

/* Pictures of a plan (src/viz/, docs/visualisation.md).  Each writes into
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
} mp_viz_report_options;

void mp_viz_report_options_default(mp_viz_report_options *o);
/* The metrics history as one self-contained HTML page (inline CSS and SVG,
 * no script, no external asset). */
int mp_viz_report_html(mp_db *db, const mp_viz_report_options *o, struct mp_buf *out,
                       mp_err *err);

/* ------------------------------------------------------------ byte buffer */

typedef struct mp_buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed; contents are incomplete */
} mp_buf;

void mp_buf_init(mp_buf *b);
void mp_buf_free(mp_buf *b);
void mp_buf_put(mp_buf *b, const char *s, size_t n);
void mp_buf_puts(mp_buf *b, const char *s);
void mp_buf_printf(mp_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void mp_buf_u64(mp_buf *b, uint64_t v);

/* Read a whole file (NUL-terminated copy).  Returns NULL with MP_EFORMAT. */
char *mp_read_file(const char *path, size_t *len, mp_err *err);
/* Write atomically: a temporary file beside `path`, then rename.  "-" means
 * stdout.  On failure nothing is left behind (MP_EIO). */
int mp_write_file_atomic(const char *path, const char *data, size_t len,
                         mp_err *err);

#ifdef __cplusplus
}
#endif
#endif
