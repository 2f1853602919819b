/* harness.h - the random program generator and the CSV importer, the
 * differential harness, its shrinker and external planners, the gate's
 * comparison, the planning options as flags (harness/).  Not part of the
 * shared library; may change in any release. */
#ifndef MP_HARNESS_H
#define MP_HARNESS_H

#include "metrics.h"

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
    MP_PROFILE_CONCAT,        /* inception blocks, the concatenation in place (offset=, since 2.1) */
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
/* The planning options as command-line flags (harness/options.c):
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

#endif
