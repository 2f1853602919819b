/* memplan.h - the public API of libmemplan.
 *
 * memplan plans, checks and measures the static memory layout of tensor
 * programs.  This header is the library's interface 2: programs (what a
 * .mpg file says) and an in-memory builder for them, the options, the
 * planner table, plans (what a .mpp file says), the verifier's report and
 * its quality figures, the plan summary, reading and writing both formats,
 * and the version.  The tools the command line is built from (generator,
 * harness, metrics store, pictures) are not part of the shared library.
 *
 * Conventions
 * - Every fallible call takes an mp_err* and returns a value; on failure it
 *   fills err->msg ("FILE:LINE: what is wrong" for input errors) and sets
 *   err->code to one of the MP_E* codes.  The library never prints, aborts
 *   or exits: running out of memory is MP_ENOMEM, and everything the call
 *   had allocated is freed again.
 * - Programs, plans, options, reports and builders are opaque handles: the
 *   library makes them, the caller frees each with its *_free function
 *   (NULL is accepted and ignored), and reads them through accessors, so
 *   they may grow in any release without breaking a caller.  An accessor
 *   given an index out of range returns 0, -1 or NULL (as its type says).
 *   The three structs a caller fills (mp_err, mp_buf, mp_allocator) and the
 *   value mp_device never change; the builder's two specs start with their
 *   own size.  libmemplan.so.MAJOR changes when the interface breaks
 *   (docs/api.md, tools/abi/).
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

/* Compiler attributes, behind macros so that any C99 compiler reads the
 * header: MP_API marks the functions of the shared library's interface,
 * MP_PRINTF(f, a) a printf-like function (format argument f, first value a). */
#if defined(__GNUC__) || defined(__clang__)
#define MP_API __attribute__((visibility("default")))
#define MP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MP_API
#define MP_PRINTF(f, a)
#endif

/* --------------------------------------------------------------- version */

#define MP_VERSION_MAJOR 2
#define MP_VERSION_MINOR 2
#define MP_VERSION_PATCH 0
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
    MP_PRINTF(2, 3);
MP_API void mp_buf_u64(mp_buf *b, uint64_t v);

/* ---------------------------------------------------------- the handles */

typedef struct mp_program mp_program;     /* a parsed or built program */
typedef struct mp_plan mp_plan;           /* a plan of one */
typedef struct mp_options mp_options;     /* planning options */
typedef struct mp_verify_report mp_report; /* what the verifier found */
typedef struct mp_builder mp_builder;     /* a program under construction */

/* ------------------------------------------------------------- programs */

enum mp_device_type { MP_DEV_CPU = 0, MP_DEV_CUDA = 1 };

typedef struct mp_device {
    uint32_t type;  /* enum mp_device_type */
    uint32_t index; /* cpu:N / cuda:N */
} mp_device;

enum mp_tensor_flags {
    MP_T_CONST = 1u << 0,
    MP_T_MUTABLE = 1u << 1,
    MP_T_DYNAMIC = 1u << 2,
    /* a delegate node's scratch=: the tensor "scratch.N" that node N
     * defines as its last output and no node reads */
    MP_T_SCRATCH = 1u << 3,
    /* at=OFFSET: storage fixed at byte `at` of its pool (entry graph only) */
    MP_T_PINNED = 1u << 4,
    /* shared: a mutable tensor several methods keep at one place */
    MP_T_SHARED = 1u << 5
};

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

/* Parse a .mpg file held in memory.  `filename` is used in messages.
 * Returns NULL with err->code MP_EFORMAT on any violation of the format. */
MP_API mp_program *mp_graph_parse(const char *data, size_t len, const char *filename,
                                  mp_err *err);
MP_API mp_program *mp_graph_load(const char *path, mp_err *err);
MP_API void mp_program_free(mp_program *prog);
/* Write a program back as .mpg text (canonical spacing). */
MP_API void mp_graph_write(const mp_program *prog, mp_buf *out);

/* Graphs: 0 is the entry graph; the methods (an `entry` line) are graphs
 * too, mp_program_method(prog, i) gives the graph of method i. */
MP_API uint32_t mp_program_graph_count(const mp_program *prog);
MP_API const char *mp_program_graph_name(const mp_program *prog, uint32_t graph);
MP_API int32_t mp_program_graph_find(const mp_program *prog, const char *name);
MP_API uint32_t mp_program_method_count(const mp_program *prog); /* at least 1 */
MP_API int32_t mp_program_method(const mp_program *prog, uint32_t method);

/* Tensors of a graph, in file order. */
enum mp_tensor_field {
    MP_TENSOR_SIZE,         /* unaligned bytes */
    MP_TENSOR_FLAGS,        /* enum mp_tensor_flags */
    MP_TENSOR_MEM_ID,       /* pre-assigned pool, 0 when none */
    MP_TENSOR_AT,           /* pinned offset (MP_T_PINNED), else 0 */
    MP_TENSOR_DEVICE_TYPE,  /* enum mp_device_type */
    MP_TENSOR_DEVICE_INDEX,
    MP_TENSOR_INPLACE_BASE, /* tensor index + 1, 0 when none */
    MP_TENSOR_VIEW_BASE,    /* tensor index + 1, 0 when none */
    MP_TENSOR_DEF_NODE,     /* index + 1 of the node whose out= names it, 0: none */
    MP_TENSOR_OFFSET        /* since 2.1: offset= in its base's storage, 0 when none */
};
MP_API uint32_t mp_program_tensor_count(const mp_program *prog, uint32_t graph);
MP_API const char *mp_program_tensor_name(const mp_program *prog, uint32_t graph, uint32_t tensor);
MP_API int32_t mp_program_tensor_find(const mp_program *prog, uint32_t graph, const char *name);
MP_API uint64_t mp_program_tensor_get(const mp_program *prog, uint32_t graph, uint32_t tensor,
                                      int field);

/* Nodes of a graph, in order. */
enum mp_node_field {
    MP_NODE_KIND,     /* enum mp_node_kind */
    MP_NODE_N_IN,     /* then mp_program_node_input(..., i) */
    MP_NODE_N_OUT,    /* then mp_program_node_output(..., i) */
    MP_NODE_SUB0,     /* sub-graph index + 1 (cond true, while cond, map/scan body), 0: none */
    MP_NODE_SUB1,     /* sub-graph index + 1 (cond false, while body), 0: none */
    MP_NODE_SPAN      /* the time units it stands for (1 unless given) */
};
MP_API uint32_t mp_program_node_count(const mp_program *prog, uint32_t graph);
MP_API uint64_t mp_program_node_get(const mp_program *prog, uint32_t graph, uint32_t node, int field);
MP_API int32_t mp_program_node_input(const mp_program *prog, uint32_t graph, uint32_t node, uint32_t i);
MP_API int32_t mp_program_node_output(const mp_program *prog, uint32_t graph, uint32_t node, uint32_t i);
/* The operator (op=) or the delegate's backend, NULL when none. */
MP_API const char *mp_program_node_op(const mp_program *prog, uint32_t graph, uint32_t node);
MP_API const char *mp_program_node_backend(const mp_program *prog, uint32_t graph, uint32_t node);

MP_API const char *mp_node_kind_name(uint32_t kind);
/* "cpu:0", "cuda:3": writes into buf (at least 24 bytes), returns buf. */
MP_API const char *mp_device_str(mp_device dev, char *buf);

/* ------------------------------------------------------ program builder */

/* A program built in memory, call by call, instead of parsed from text.
 * It holds exactly what a .mpg file can say and is checked by the same
 * rules when finished: an error names the call ("graph 'main', tensor
 * 'x': ...").  Names are [A-Za-z0-9_.$-]+, at most MP_MAX_NAME bytes;
 * an operator name may also hold the characters :/@+()[]<>.
 *
 * Each spec starts with its own size: set struct_size = sizeof the struct
 * you were built with.  A library newer than the caller reads the fields
 * that size holds and takes the rest as zero; an older one refuses
 * (MP_EFORMAT) a size it does not know unless the fields past its own
 * are all zero. */
typedef struct mp_tensor_spec {
    uint32_t struct_size; /* sizeof(mp_tensor_spec) */
    const char *name;
    uint64_t size;
    mp_device device;
    uint32_t flags;      /* mp_tensor_flags */
    uint32_t mem_id;     /* 0: none */
    const char *inplace; /* base tensor's name, or NULL */
    const char *view;    /* base tensor's name, or NULL */
    uint64_t at;         /* with MP_T_PINNED in flags: the pinned offset */
    /* since 2.1: where its bytes start in its base's storage (the view's or
     * the in-place base's), 0: at the start */
    uint64_t offset;
} mp_tensor_spec;

typedef struct mp_node_spec {
    uint32_t struct_size; /* sizeof(mp_node_spec) */
    uint32_t kind;        /* enum mp_node_kind */
    const char *const *in;
    uint32_t n_in;
    const char *const *out;
    uint32_t n_out;
    const char *sub[2];  /* sub-graph names (cond: true, false; while: cond,
                          * body; map, scan: body), NULL when unused */
    const char *backend; /* delegate only, or NULL */
    const char *op;      /* the operator's name, or NULL */
    uint64_t scratch;    /* delegate only: bytes of working memory live during
                          * the node alone, planned as tensor "scratch.N" */
} mp_node_spec;

MP_API mp_builder *mp_builder_new(mp_err *err);
MP_API void mp_builder_free(mp_builder *b);
/* Start a graph; the tensors and nodes that follow belong to it.  The
 * first graph is the entry graph. */
MP_API int mp_builder_graph(mp_builder *b, const char *name, mp_err *err);
MP_API int mp_builder_tensor(mp_builder *b, const mp_tensor_spec *t, mp_err *err);
MP_API int mp_builder_node(mp_builder *b, const mp_node_spec *n, mp_err *err);
/* The program's methods (an entry line): graph names, the first graph
 * first; the rules are checked at finish. */
MP_API int mp_builder_methods(mp_builder *b, const char *const *names, uint32_t n, mp_err *err);
/* The program, checked as a parsed file is; the builder may then be freed.
 * NULL with MP_EFORMAT and the offending call named. */
MP_API mp_program *mp_builder_finish(mp_builder *b, mp_err *err);

/* ---------------------------------------------------------------- options */

/* Defaults: planner opt, alignment 16, inputs, outputs and mutable
 * buffers allocated, one pool per mem_id; the same as `memplan plan`'s and
 * Python's. */
MP_API mp_options *mp_options_new(mp_err *err);
MP_API void mp_options_free(mp_options *o);
/* Set one option by the name the plan file's options line and the
 * command's flags use, from text:
 *   algo NAME (a planner of the table)   alignment N (1..2^30)
 *   alloc_inputs, alloc_outputs, alloc_mutable, per_device, et_exact,
 *   exact: 1 or 0 (true or false)        budget_ms N, exact_ms N
 *   et_upstream PR (21494, 21616, 21818, 21821 or 21840; adds to the set, implies et_exact)
 *   banks MAP ("sram=256K,dram=64M")     spill_order value|program
 * MP_EFORMAT naming the option on an unknown name or a bad value; the
 * options are then as before the call.  Names may be added, never taken
 * away. */
MP_API int mp_options_set(mp_options *o, const char *name, const char *value, mp_err *err);
/* The value of an option as text (as mp_options_set takes it) into out;
 * MP_EFORMAT on an unknown name. */
MP_API int mp_options_get(const mp_options *o, const char *name, mp_buf *out, mp_err *err);

/* ------------------------------------------------------------- reorder */

/* The program with the nodes of each graph in another topological order,
 * one of lower peak live bytes (the lower bound of every plan), since 2.2
 * (issue 50, docs/reorder.md).  Every data dependency is kept, the nodes
 * that name storage written in place or a mutable buffer keep their
 * relative order, placeholders stay first and the output node last;
 * sub-graphs are reordered inside.  opts (NULL: the defaults) gives the
 * alignment and what is planned.  effort: randomized passes of the list
 * scheduler beyond the first (0 for one pass; more effort never ends
 * worse); a graph of at most 20 movable nodes is searched exhaustively.
 * The given order is kept where nothing lower is found.  peak_before,
 * peak_after: the entry graphs' largest peak in the given order and the
 * new one; optimal: 1 when every graph's order was proved optimal (each
 * may be NULL).  A new program (free it), or NULL with err. */
/* Is `reordered` a valid schedule of `original` (since 2.2)?  The same
 * graphs, methods and tensors, the same nodes each once, placeholders
 * first and the output node last in their places, every tensor read after
 * the node that writes it, and the nodes that name storage written in
 * place or a mutable buffer in their order.  MP_OK, or MP_EINVALID with
 * the first rule broken in err (MP_ENOMEM). */
MP_API int mp_verify_order(const mp_program *original, const mp_program *reordered, mp_err *err);
MP_API mp_program *mp_program_reorder(const mp_program *prog, const mp_options *opts, uint32_t effort,
                                      uint64_t *peak_before, uint64_t *peak_after, int *optimal, mp_err *err);

/* ----------------------------------------------------------------- plans */

/* Plan a program with the planner and mode in `opts` (NULL: the
 * defaults).  Returns NULL with MP_EPLAN when the graph cannot be planned,
 * MP_EFORMAT for options the planner has no such mode for (et_exact
 * beside opt, exact beside greedy), MP_ENOMEM when memory ran out. */
MP_API mp_plan *mp_plan_program(const mp_program *prog, const mp_options *opts, mp_err *err);
MP_API void mp_plan_free(mp_plan *plan);
MP_API void mp_plan_write(const mp_plan *plan, mp_buf *out);
/* Parse a .mpp file.  Only the syntax is checked here (MP_EFORMAT); names
 * are resolved against `prog` when it is given, unknown ones left for the
 * verifier to report. */
MP_API mp_plan *mp_plan_parse(const char *data, size_t len, const char *filename,
                              const mp_program *prog, mp_err *err);
MP_API mp_plan *mp_plan_load(const char *path, const mp_program *prog, mp_err *err);
/* The plan in another tool's format (docs/formats.md): "json";
 * "minimalloc-csv" (the entry graph's allocations of buffer `buffer`);
 * "tflm-offline" (TFLite Micro's offline planning buffer, binary).
 * MP_EFORMAT for an unknown format or a plan the format cannot hold. */
MP_API int mp_plan_export(const mp_program *prog, const mp_plan *plan, const char *format, uint64_t buffer,
                          mp_buf *out, mp_err *err);
/* What `memplan plan --summary` writes: per pool and device, the bytes,
 * the lower bound, what holds the peak; as text or JSON. */
MP_API int mp_plan_summary(const mp_program *prog, const mp_plan *plan, bool json, mp_buf *out, mp_err *err);
/* Total bytes: the entry block's buffers added up (0 when absent). */
MP_API uint64_t mp_plan_total_bytes(const mp_plan *plan);
MP_API const char *mp_plan_algo(const mp_plan *plan);  /* the planner's name */
MP_API const char *mp_plan_notes(const mp_plan *plan); /* remarks (exact search), or NULL */

/* Blocks: one per graph planned, file order; block 0 is the entry graph's. */
MP_API uint32_t mp_plan_block_count(const mp_plan *plan);
MP_API const char *mp_plan_block_name(const mp_plan *plan, uint32_t block); /* its graph's name */
MP_API uint32_t mp_plan_buffer_count(const mp_plan *plan, uint32_t block);
MP_API uint64_t mp_plan_buffer_size(const mp_plan *plan, uint32_t block, uint32_t buffer);
MP_API mp_device mp_plan_buffer_device(const mp_plan *plan, uint32_t block, uint32_t buffer);

/* Allocations of a block, in plan order. */
enum mp_alloc_field {
    MP_ALLOC_MEM_ID,
    MP_ALLOC_OBJ,
    MP_ALLOC_OFFSET,
    MP_ALLOC_SIZE,
    MP_ALLOC_FIRST, /* first node of its lifetime + 1 (0: none) */
    MP_ALLOC_LAST   /* last node of its lifetime + 1 (0: none) */
};
MP_API uint32_t mp_plan_alloc_count(const mp_plan *plan, uint32_t block);
MP_API const char *mp_plan_alloc_name(const mp_plan *plan, uint32_t block, uint32_t alloc);
MP_API uint64_t mp_plan_alloc_get(const mp_plan *plan, uint32_t block, uint32_t alloc, int field);
/* Frees of a block (a dynamic tensor freed after node `after`). */
MP_API uint32_t mp_plan_release_count(const mp_plan *plan, uint32_t block);
MP_API const char *mp_plan_release_name(const mp_plan *plan, uint32_t block, uint32_t release);
MP_API int64_t mp_plan_release_after(const mp_plan *plan, uint32_t block, uint32_t release);

/* --------------------------------------------------------- planner table */

/* What a planner can do (mp_planner_caps). */
enum mp_planner_caps {
    MP_CAP_ET_EXACT = 1u << 0,   /* reproduces ExecuTorch with et_exact */
    MP_CAP_EXACT = 1u << 1,      /* has an exact search (exact) */
    MP_CAP_REFUSES_INPLACE = 1u << 2, /* refuses programs with in-place tensors */
    MP_CAP_NO_WORSE = 1u << 3,   /* never more bytes than greedy (checked) */
    MP_CAP_REFERENCE = 1u << 4,  /* the reference the others are compared to */
    MP_CAP_BANKS = 1u << 5       /* plans over a memory map and around pins */
};

MP_API uint32_t mp_planner_count(void);
MP_API const char *mp_planner_name(uint32_t i);    /* NULL past the end */
MP_API const char *mp_planner_summary(uint32_t i); /* one line, NULL past the end */
MP_API uint32_t mp_planner_caps(uint32_t i);       /* enum mp_planner_caps */
MP_API int mp_algo_parse(const char *name);        /* its index, -1 if unknown */

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

MP_API const char *mp_rule_name(uint32_t rule);
/* Check `plan` against `prog`.  Returns the report (valid or not: see
 * mp_report_valid), or NULL with err set when the check could not run. */
MP_API mp_report *mp_verify_plan(const mp_program *prog, const mp_plan *plan, mp_err *err);
MP_API void mp_report_free(mp_report *r);
MP_API bool mp_report_valid(const mp_report *r);

/* Figures of a report. */
enum mp_report_field {
    MP_REPORT_VIOLATIONS,   /* all of them (the first 1000 have details) */
    MP_REPORT_WARNINGS,     /* wasteful findings: bytes reserved, never used */
    MP_REPORT_WASTED_BYTES,
    MP_REPORT_TOTAL_BYTES,  /* the entry graph's buffers */
    MP_REPORT_LOWER_BOUND,
    MP_REPORT_BUFFERS       /* then mp_report_buffer */
};
MP_API uint64_t mp_report_get(const mp_report *r, int field);
MP_API double mp_report_ratio(const mp_report *r); /* total / lower bound (1 when both 0) */
MP_API uint64_t mp_report_rule_count(const mp_report *r, uint32_t rule);
/* Buffer i of the entry graph: its bytes, its lower bound, the node where
 * that bound is reached (-1: nothing lives in it). */
MP_API int mp_report_buffer(const mp_report *r, uint32_t i, uint64_t *bytes, uint64_t *lower, int64_t *peak_node);

/* A finding (a violation, or a warning with warning = true). */
enum mp_finding_field {
    MP_FINDING_GRAPH,   /* graph name ("" for the file as a whole) */
    MP_FINDING_KIND,    /* "overlap", "alignment", "size", ... */
    MP_FINDING_MESSAGE, /* the whole line, without the graph prefix */
    MP_FINDING_TENSOR0, /* the tensors it names, NULL when none */
    MP_FINDING_TENSOR1
};
MP_API uint32_t mp_report_finding_count(const mp_report *r, bool warning); /* with details */
MP_API const char *mp_report_finding(const mp_report *r, bool warning, uint32_t i, int field);
MP_API uint32_t mp_report_finding_rule(const mp_report *r, bool warning, uint32_t i);
MP_API void mp_report_write_text(const mp_report *r, mp_buf *out);
MP_API void mp_report_write_json(const mp_report *r, mp_buf *out);

#ifdef __cplusplus
}
#endif
#endif
