/* memplan.h - the public API of libmemplan.
 *
 * memplan plans, checks and measures the static memory layout of tensor
 * programs.  This header is the library: the graph model (what a .mpg file
 * says) and an in-memory builder for it, the options, the planner table,
 * the plan model (what a .mpp file says), the verifier and its quality
 * figures, reading and writing both formats, and the version.  The tools
 * the command line is built from (generator, harness, metrics store,
 * pictures) are in memplan_tools.h and are not part of the shared library.
 *
 * Conventions
 * - Every fallible call takes an mp_err* and returns a value; on failure it
 *   fills err->msg ("FILE:LINE: what is wrong" for input errors) and sets
 *   err->code to one of the MP_E* codes.  The library never prints, aborts
 *   or exits: running out of memory is MP_ENOMEM, and everything the call
 *   had allocated is freed again.
 * - Objects are owned by the caller and freed with their *_free function.
 * - All sizes and offsets are bytes in uint64_t.  Planners refuse (MP_EPLAN)
 *   a plan whose buffer would not fit in 64 bits (ExecuTorch's emitter
 *   raises there too); every sum of offsets and sizes is overflow-checked.
 *
 * Threads
 * - Every function may run in several threads at once on different
 *   objects: two threads may plan, verify, parse or write two programs at
 *   the same time.  Objects are not locked: one object (a program, a plan,
 *   a builder, a buffer) must not be used by two threads at once, except
 *   that a program and a plan are only read by planning, verifying and
 *   writing, which may share them.
 * - mp_set_allocator changes process-wide state: call it before any other
 *   thread uses the library.
 */
#ifndef MEMPLAN_H
#define MEMPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The functions of the shared library's interface. */
#if defined(__GNUC__) || defined(__clang__)
#define MP_API __attribute__((visibility("default")))
#else
#define MP_API
#endif

/* --------------------------------------------------------------- version */

#define MP_VERSION_MAJOR 1
#define MP_VERSION_MINOR 8
#define MP_VERSION_PATCH 1
/* "MAJOR.MINOR.PATCH" of this header, made from the three numbers above
 * (the one place the version is written). */
#define MP_VERSION_STR_(x) #x
#define MP_VERSION_STR(x) MP_VERSION_STR_(x)
#define MEMPLAN_VERSION \
    MP_VERSION_STR(MP_VERSION_MAJOR) "." MP_VERSION_STR(MP_VERSION_MINOR) "." MP_VERSION_STR(MP_VERSION_PATCH)

/* "MAJOR.MINOR.PATCH" of the library actually loaded. */
MP_API const char *mp_version(void);

/* ---------------------------------------------------------------- errors */

enum {
    MP_OK = 0,
    MP_EINVALID = 1, /* a plan that breaks a rule (verifier) */
    MP_EFORMAT = 2,  /* bad usage, unreadable or malformed input */
    MP_EPLAN = 3,    /* a graph that cannot be planned */
    MP_EIO = 4,      /* an I/O failure (disk full, permission...) */
    MP_ENOMEM = 5    /* an allocation failed; nothing is left allocated */
};

typedef struct mp_err {
    int code;
    /* MP_EPLAN only: the graph is valid but beyond this planner's limits (a
     * buffer past 64 bits, the reference's re-planning work), so another
     * planner may still plan it; false for a graph that breaks a rule */
    bool limit;
    char msg[1024];
} mp_err;

MP_API void mp_err_clear(mp_err *err);

/* ------------------------------------------------------------- allocator */

/* Where the library's memory comes from (default: malloc, realloc, free).
 * realloc is given a block from this allocator or NULL; a failure (NULL)
 * becomes MP_ENOMEM for the call that asked.  Set it before anything is
 * allocated, or after everything allocated with the previous one is
 * freed; NULL restores the default. */
typedef struct mp_allocator {
    void *(*malloc)(size_t n, void *ctx);
    void *(*realloc)(void *p, size_t n, void *ctx);
    void (*free)(void *p, void *ctx);
    void *ctx;
} mp_allocator;

MP_API void mp_set_allocator(const mp_allocator *a);

/* ----------------------------------------------------------------- limits */

#define MP_MAX_NAME 255                 /* bytes in a name */
#define MP_MAX_SIZE (UINT64_C(1) << 62) /* a tensor's SIZE is below this */
#define MP_MAX_BYTES UINT64_MAX /* no buffer may exceed this */
#define MP_MAX_MEM_ID 1024              /* largest pre-assigned pool */
#define MP_MAX_DEVICE_INDEX 65535
#define MP_MAX_ALIGNMENT (UINT32_C(1) << 30)
#define MP_MAX_DEPTH 200 /* control-flow nesting the planners accept */

/* ------------------------------------------------------------ byte buffer */

/* A growable text; every writer appends to one.  `data` is NUL-terminated. */
typedef struct mp_buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed; contents are incomplete */
} mp_buf;

MP_API void mp_buf_init(mp_buf *b);
MP_API void mp_buf_free(mp_buf *b);
MP_API void mp_buf_put(mp_buf *b, const char *s, size_t n);
MP_API void mp_buf_puts(mp_buf *b, const char *s);
MP_API void mp_buf_printf(mp_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
MP_API void mp_buf_u64(mp_buf *b, uint64_t v);

/* ------------------------------------------------------------ graph model */

enum mp_device_type { MP_DEV_CPU = 0, MP_DEV_CUDA = 1 };

typedef struct mp_device {
    uint32_t type;  /* enum mp_device_type */
    uint32_t index; /* cpu:N / cuda:N */
} mp_device;

enum mp_tensor_flags {
    MP_T_CONST = 1u << 0,
    MP_T_MUTABLE = 1u << 1,
    MP_T_DYNAMIC = 1u << 2,
    /* a delegate node's scratch= (since 1.4): the tensor "scratch.N" that
     * node N defines as its last output and no node reads; files give it as
     * scratch=BYTES on the node, never as a tensor line */
    MP_T_SCRATCH = 1u << 3,
    /* at=OFFSET (since 1.5): the tensor's storage is fixed at byte `at` of
     * its pool, as in TFLite Micro's offline plans; entry graph only, never
     * on an in-place or view tensor (they live in their base's storage) */
    MP_T_PINNED = 1u << 4,
    /* shared (since 1.5): state several methods share (a KV cache): a
     * mutable tensor of an entry graph that every method declaring it keeps
     * at the same pool and offset */
    MP_T_SHARED = 1u << 5
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
    uint64_t at;          /* pinned offset in its pool (MP_T_PINNED), else 0 */
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
    const char *op;      /* the operator (op=, e.g. aten.add.Tensor), or NULL */
    /* span= (since 1.6): the time units the node stands for, 1 when not
     * given.  Only opt reads it: it weighs lifetimes by real time in its
     * orderings (a MiniMalloc CSV imported with its gaps squeezed out). */
    uint32_t span;
} mp_node;

typedef struct mp_graphdef {
    const char *name;
    int32_t line;
    mp_tensor *tensors;
    uint32_t n_tensors;
    mp_node *nodes;
    uint32_t n_nodes;
} mp_graphdef;

/* A memory map (since 1.5): named banks in order of preference (fastest
 * first), each with a byte capacity; bank i is pool (mem_id) i.  Tensors
 * without a mem_id go to the first bank and spill to the next when it is
 * full; a tensor with mem_id=i stays in bank i. */
#define MP_MAX_BANKS 8
#define MP_MAX_BANK_NAME 31
#define MP_UNLIMITED UINT64_MAX /* a bank's capacity: no limit */
typedef struct mp_bank {
    char name[MP_MAX_BANK_NAME + 1];
    uint64_t capacity;
} mp_bank;
typedef struct mp_banks {
    uint32_t n; /* 0: no memory map (one pool per mem_id, unlimited) */
    mp_bank bank[MP_MAX_BANKS];
} mp_banks;

/* Which tensors stay in a full bank (the others spill to the next). */
enum mp_spill_order {
    MP_SPILL_VALUE,  /* the largest size x lifetime stay (the most accesses) */
    MP_SPILL_PROGRAM /* program order: the first used stay (a plain fill) */
};

typedef struct mp_program {
    const char *filename;
    mp_graphdef *graphs; /* graphs[0] is the entry graph */
    uint32_t n_graphs;
    struct mp_arena *arena; /* owns every string and array above */
    mp_banks banks; /* the file's `banks` line (since 1.5), n = 0 when none */
    /* the methods (since 1.5): the graphs an `entry` line names, entries[0]
     * == 0; n_entries 0 (no entry line) means graphs[0] alone */
    int32_t *entries;
    uint32_t n_entries;
} mp_program;

/* Parse a .mpg file held in memory.  `filename` is used in messages.
 * Returns NULL with err->code MP_EFORMAT on any violation of the format. */
MP_API mp_program *mp_graph_parse(const char *data, size_t len, const char *filename,
                                  mp_err *err);
MP_API mp_program *mp_graph_load(const char *path, mp_err *err);
MP_API void mp_program_free(mp_program *prog);
/* Write a program back as .mpg text (canonical spacing). */
MP_API void mp_graph_write(const mp_program *prog, mp_buf *out);

MP_API const char *mp_node_kind_name(uint32_t kind);
/* "cpu:0", "cuda:3": writes into buf (at least 24 bytes), returns buf. */
MP_API const char *mp_device_str(mp_device dev, char *buf);
MP_API int mp_device_cmp(mp_device a, mp_device b); /* cpu:0 first, then type, index */
MP_API bool mp_device_eq(mp_device a, mp_device b);
MP_API int32_t mp_graph_find(const mp_program *prog, const char *name);
MP_API int32_t mp_tensor_find(const mp_graphdef *g, const char *name);

/* ------------------------------------------------------ graph builder */

/* A program built in memory, call by call, instead of parsed from text.
 * It holds exactly what a .mpg file can say and is checked by the same
 * rules when finished: an error names the call ("graph 'main', tensor
 * 'x': ...").  Names are [A-Za-z0-9_.$-]+, at most MP_MAX_NAME bytes;
 * an operator name may also hold the characters :/@+()[]<>. */
typedef struct mp_builder mp_builder;

typedef struct mp_tensor_spec {
    const char *name;
    uint64_t size;
    mp_device device;
    uint32_t flags;      /* mp_tensor_flags */
    uint32_t mem_id;     /* 0: none */
    const char *inplace; /* base tensor's name, or NULL */
    const char *view;    /* base tensor's name, or NULL */
    uint64_t at;         /* with MP_T_PINNED in flags: the pinned offset
                          * (since 1.5) */
} mp_tensor_spec;

typedef struct mp_node_spec {
    uint32_t kind; /* enum mp_node_kind */
    const char *const *in;
    uint32_t n_in;
    const char *const *out;
    uint32_t n_out;
    const char *sub[2];  /* sub-graph names (cond: true, false; while: cond,
                          * body; map, scan: body), NULL when unused */
    const char *backend; /* delegate only, or NULL */
    const char *op;      /* the operator's name, or NULL (since 1.2) */
    uint64_t scratch;    /* delegate only: bytes of working memory live during
                          * the node alone, planned as tensor "scratch.N"; 0:
                          * none (since 1.4) */
} mp_node_spec;

MP_API mp_builder *mp_builder_new(mp_err *err);
MP_API void mp_builder_free(mp_builder *b);
/* Start a graph; the tensors and nodes that follow belong to it.  The
 * first graph is the entry graph. */
MP_API int mp_builder_graph(mp_builder *b, const char *name, mp_err *err);
MP_API int mp_builder_tensor(mp_builder *b, const mp_tensor_spec *t, mp_err *err);
MP_API int mp_builder_node(mp_builder *b, const mp_node_spec *n, mp_err *err);
/* The program, checked as a parsed file is; the builder may then be freed.
 * NULL with MP_EFORMAT and the offending call named. */
/* The program's methods (an entry line, since 1.5): graph names, the first
 * graph first; the rules are checked at finish. */
MP_API int mp_builder_methods(mp_builder *b, const char *const *names, uint32_t n, mp_err *err);
MP_API mp_program *mp_builder_finish(mp_builder *b, mp_err *err);

/* ----------------------------------------------------------------- options */

/* The built-in planners' positions in the planner table (api/planners.c). */
enum mp_algo { MP_ALGO_GREEDY, MP_ALGO_NAIVE, MP_ALGO_OPT };

typedef struct mp_options {
    uint32_t alignment; /* default 16 */
    bool alloc_inputs, alloc_outputs, alloc_mutable, per_device;
    uint32_t algo;   /* a planner: its index in the planner table */
    bool et_exact;   /* reproduce ExecuTorch, defects included */
    bool exact;         /* opt: exact search */
    uint32_t budget_ms; /* opt: improvement effort (as fixed work) */
    uint32_t exact_ms;  /* opt --exact: search effort per buffer (as fixed work) */
    /* reference: tensors ExecuTorch's re-planning of shared sub-graphs may
     * visit beyond 8 per graph element before the graph is refused for a
     * limit; 0 means 10^6 (fuzz targets lower it to stay fast) */
    uint64_t replan_limit;
    /* with et_exact: ExecuTorch's pending pull requests applied on top of
     * it, MP_UPSTREAM_* bits (since 1.2; docs/deviations.md) */
    uint32_t et_upstream;
    /* the memory map (since 1.5); none: what the program file gives */
    mp_banks banks;
    uint32_t spill_order; /* enum mp_spill_order */
} mp_options;

enum mp_upstream {
    MP_UPSTREAM_21616 = 1u << 0, /* every spec aligned before the algorithm (D6) */
    MP_UPSTREAM_21840 = 1u << 1  /* an in-place base lives as long as its dependants (D5) */
};

MP_API void mp_options_default(mp_options *o);
/* Parse a memory map, "sram=256K,dram=64M" (or ':' for '='; sizes in
 * bytes with an optional K, M, G or T suffix of powers of 1024, or
 * "unlimited").  MP_EFORMAT with the reason in err on a bad map.  One
 * unlimited bank is no map at all (n = 0): plans stay as without one. */
MP_API int mp_banks_parse(const char *spec, mp_banks *out, mp_err *err);

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
    const char *algo_name; /* the planner, as written in the options line */
    mp_graph_plan *graphs; /* one block each, file order */
    uint32_t n_graphs;
    const char *notes; /* planner remarks for the user (exact search), or NULL */
    struct mp_arena *arena;
} mp_plan;

MP_API void mp_plan_free(mp_plan *plan);
MP_API void mp_plan_write(const mp_plan *plan, mp_buf *out);
/* Parse a .mpp file.  Only the syntax is checked here (MP_EFORMAT); names
 * are resolved against `prog` when it is given, unknown ones left as -1
 * for the verifier to report. */
MP_API mp_plan *mp_plan_parse(const char *data, size_t len, const char *filename,
                              const mp_program *prog, mp_err *err);
MP_API mp_plan *mp_plan_load(const char *path, const mp_program *prog, mp_err *err);
/* The plan in another tool's format (since 1.2; docs/formats.md): "json";
 * "minimalloc-csv" (the entry graph's allocations of buffer `buffer`,
 * id,lower,upper,size,offset); "tflm-offline" (TFLite Micro's offline
 * planning buffer, binary).  MP_EFORMAT for an unknown format or a plan
 * the format cannot hold. */
MP_API int mp_plan_export(const mp_program *prog, const mp_plan *plan, const char *format, uint64_t buffer,
                          mp_buf *out, mp_err *err);
/* Total bytes: the entry block's buffers added up (0 when absent). */
MP_API uint64_t mp_plan_total_bytes(const mp_plan *plan);

/* ---------------------------------------------------------- planner table */

/* What a planner can do (mp_planner.caps). */
enum mp_planner_caps {
    MP_CAP_ET_EXACT = 1u << 0,   /* reproduces ExecuTorch with et_exact */
    MP_CAP_EXACT = 1u << 1,      /* has an exact search (options.exact) */
    MP_CAP_REFUSES_INPLACE = 1u << 2, /* refuses programs with in-place tensors */
    MP_CAP_NO_WORSE = 1u << 3,   /* never more bytes than greedy (checked) */
    MP_CAP_REFERENCE = 1u << 4,  /* the reference the others are compared to */
    MP_CAP_BANKS = 1u << 5       /* plans over a memory map and around fixed offsets (banks,
                                  * pins, methods' shared state; since 1.5) */
};

typedef mp_plan *(*mp_plan_fn)(const mp_program *prog, const mp_options *opts, mp_err *err);

/* One planner: a line of the table in api/planners.c. */
typedef struct mp_planner {
    const char *name;    /* --algo NAME, the plan file's algo=, the store's algo */
    const char *summary; /* one line for --help and the docs */
    mp_plan_fn plan;     /* called by mp_plan_program, never directly */
    uint32_t caps;       /* enum mp_planner_caps */
    const char *color;   /* the pictures' colour for it, "#rrggbb" */
} mp_planner;

MP_API uint32_t mp_planner_count(void);
/* Planner i (NULL past the end); mp_options.algo is such an index. */
MP_API const mp_planner *mp_planner_get(uint32_t i);
MP_API int mp_algo_parse(const char *name); /* its index, -1 if unknown */
MP_API const char *mp_algo_name(uint32_t algo); /* "?" if out of range */

/* Plan a program with the planner and mode in `opts`.  Returns NULL with
 * MP_EPLAN when the graph cannot be planned, MP_EFORMAT for bad options
 * (an unknown planner, et_exact where the planner has no such mode),
 * MP_ENOMEM when memory ran out.  Planners without MP_CAP_EXACT ignore
 * `exact`, `budget_ms` and `exact_ms`. */
MP_API mp_plan *mp_plan_program(const mp_program *prog, const mp_options *opts, mp_err *err);

/* --------------------------------------------------------------- verifier */

/* The rules a plan must hold; the numbers are stable. */
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
    mp_violation *v;                /* the first MP_VERIFY_DETAIL of them (NULL: none) */
    uint32_t n_v;
    /* quality of the entry graph's buffers */
    uint64_t total_bytes, lower_bound;
    double ratio;                   /* total / lower bound (1 when both 0) */
    uint64_t *buf_bytes, *buf_lower;
    uint32_t n_buffers;
    struct mp_arena *arena;
    /* Wasteful, not unsafe (since 1.2): bytes a plan reserves that the
     * runtime never uses (a tensor planned that the options leave to the
     * caller or the parent graph).  A plan with warnings only is valid. */
    uint64_t n_warnings, wasted_bytes;
    mp_violation *w; /* the first MP_VERIFY_DETAIL of them (NULL: none) */
    uint32_t n_w;
    /* per buffer of the entry graph: the node where buf_lower is reached
     * (the first such), -1 when nothing lives in it (since 1.4) */
    int64_t *buf_peak;
} mp_verify_report;

#define MP_VERIFY_DETAIL 1000

MP_API const char *mp_rule_name(uint32_t rule);
/* Check `plan` against `prog`.  Returns MP_OK (valid), MP_EINVALID, or an
 * error code when the check itself could not run (the report is then
 * empty but may still be freed). */
MP_API int mp_verify(const mp_program *prog, const mp_plan *plan, mp_verify_report *r,
                     mp_err *err);
MP_API void mp_verify_report_free(mp_verify_report *r);
MP_API void mp_verify_write_text(const mp_verify_report *r, mp_buf *out);
MP_API void mp_verify_write_json(const mp_verify_report *r, mp_buf *out);

#ifdef __cplusplus
}
#endif
#endif
