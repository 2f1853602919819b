/* model.h - the data behind the public API's opaque handles: the program
 * (graphs, tensors, nodes, banks), the options, the plan (blocks,
 * allocations, frees), the planner table's rows and the verifier's report.
 * The library and the tools built on it read and write these fields
 * directly; callers of libmemplan see only the handles and the accessors of
 * include/memplan.h (api/access.c), so the layout may change in any
 * release.  Moved here from memplan.h in 2.0. */
#ifndef MP_MODEL_H
#define MP_MODEL_H

#include "memplan.h"

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
    /* offset= (since 2.1): where its bytes start in its base's storage (the
     * view base when it is a view, else the in-place base), 0 when none */
    uint64_t offset;
    /* a view: where its bytes start in its root's storage (the offsets of
     * its view chain summed); 0 for every tensor that is no view */
    uint64_t root_offset;
} mp_tensor;


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

struct mp_program {
    const char *filename;
    mp_graphdef *graphs; /* graphs[0] is the entry graph */
    uint32_t n_graphs;
    struct mp_arena *arena; /* owns every string and array above */
    mp_banks banks; /* the file's `banks` line (since 1.5), n = 0 when none */
    /* the methods (since 1.5): the graphs an `entry` line names, entries[0]
     * == 0; n_entries 0 (no entry line) means graphs[0] alone */
    int32_t *entries;
    uint32_t n_entries;
};


/* The built-in planners' positions in the planner table (api/planners.c). */
enum mp_algo { MP_ALGO_GREEDY, MP_ALGO_NAIVE, MP_ALGO_OPT };

/* ExecuTorch's pending pull requests et_exact applies on top of it
 * (docs/deviations.md). */
enum mp_upstream {
    MP_UPSTREAM_21616 = 1u << 0, /* every spec aligned before the algorithm (D6) */
    MP_UPSTREAM_21840 = 1u << 1, /* storage offsets; a base lives as long as its dependants (D5) */
    MP_UPSTREAM_21821 = 1u << 2, /* greedy over a memory map: banked greedy (--banks) */
    MP_UPSTREAM_21818 = 1u << 3, /* each control-flow node's sub-graph region placed first-fit (D14) */
    MP_UPSTREAM_21494 = 1u << 4  /* sub-graphs start above earlier conds' live outputs (D14) */
};

struct mp_options {
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
};


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

struct mp_plan {
    mp_options opts;       /* the options line, clamped to legal values */
    /* The options line as written, for the verifier to judge: alignment and
     * the four flags alloc_inputs, alloc_outputs, alloc_mutable, per_device. */
    uint64_t raw_alignment, raw_flags[4];
    const char *algo_name; /* the planner, as written in the options line */
    mp_graph_plan *graphs; /* one block each, file order */
    uint32_t n_graphs;
    const char *notes; /* planner remarks for the user (exact search), or NULL */
    struct mp_arena *arena;
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

typedef struct mp_verify_report mp_verify_report;
struct mp_verify_report {
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
};

#define MP_VERIFY_DETAIL 1000


/* --- the calls 1.x exported on these structs, internal since 2.0 (the
 * public ones are in memplan.h, on handles). */
int32_t mp_graph_find(const mp_program *prog, const char *name);
int32_t mp_tensor_find(const mp_graphdef *g, const char *name);
/* The internal starting point: alignment 16, everything allocated, the
 * reference planner (greedy), efforts as the command's.  Every public
 * default is opt (mp_options_new, the command, Python), set on top. */
void mp_options_default(mp_options *o);
/* Parse a memory map, "sram=256K,dram=64M" (or ':' for '='; sizes in
 * bytes with an optional K, M, G or T suffix of powers of 1024, or
 * "unlimited").  MP_EFORMAT with the reason in err on a bad map.  One
 * unlimited bank is no map at all (n = 0): plans stay as without one. */
int mp_banks_parse(const char *spec, mp_banks *out, mp_err *err);
/* Planner i (NULL past the end); mp_options.algo is such an index. */
const mp_planner *mp_planner_get(uint32_t i);
/* Check `plan` against `prog` into a report the caller holds.  Returns
 * MP_OK (valid), MP_EINVALID, or an error code when the check itself could
 * not run (the report is then empty but may still be freed). */
int mp_verify(const mp_program *prog, const mp_plan *plan, mp_verify_report *r, mp_err *err);
/* Frees what the report holds, not the report. */
void mp_verify_report_free(mp_verify_report *r);
void mp_verify_write_text(const mp_verify_report *r, mp_buf *out);
void mp_verify_write_json(const mp_verify_report *r, mp_buf *out);
int mp_device_cmp(mp_device a, mp_device b); /* cpu:0 first, then type, index */
bool mp_device_eq(mp_device a, mp_device b);
const char *mp_algo_name(uint32_t algo); /* "?" if out of range */

#endif
