/* internal.h - internal helpers shared by every module: arena, growable
 * arrays, string hash map, error formatting, checked arithmetic; and the
 * data model behind the public handles (model.h). */
#ifndef MP_UTIL_H
#define MP_UTIL_H

#include "memplan.h"
#include "model.h"

#include <signal.h> /* struct sigaction: mp_stop_saved */
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h> /* off_t */
#include <stdlib.h>
#include <string.h>

/* --- arena: bump allocator; everything it hands out dies with it. */
typedef struct mp_arena mp_arena;
mp_arena *mp_arena_new(void);
void mp_arena_free(mp_arena *a);
/* Zeroed memory from mp_xmalloc: failure unwinds like it. */
void *mp_arena_alloc(mp_arena *a, size_t n);
/* The same, aligned only to align (a power of two, at most that of
 * max_align_t): for arrays of small items, one per node. */
void *mp_arena_alloc_aligned(mp_arena *a, size_t n, size_t align);
/* A copy of s[0..n) and a NUL, unaligned: names are packed. */
char *mp_arena_strndup(mp_arena *a, const char *s, size_t n);
void *mp_arena_memdup(mp_arena *a, const void *p, size_t n);
/* The arena takes over block p (from mp_xmalloc or mp_xrealloc), shrunk to
 * n bytes, and frees it with itself: a large array handed over without a
 * copy.  Returns the block (an arena allocation when n is 0). */
void *mp_arena_adopt(mp_arena *a, void *p, size_t n);

/* --- allocation (alloc.c): never returns NULL.  Inside mp_guard_run a
 * failure unwinds to the guard, which frees what the work allocated and
 * returns MP_ENOMEM; outside one it aborts with a message.  Free with
 * mp_xfree only. */
void *mp_xmalloc(size_t n);
void *mp_xcalloc(size_t n, size_t sz);
void *mp_xrealloc(void *p, size_t n);
void mp_xfree(void *p);
/* mp_xrealloc that returns NULL on failure (p still valid) instead. */
void *mp_try_realloc(void *p, size_t n);
bool mp_guard_active(void); /* inside mp_guard_run on this thread */
/* File descriptor fd is closed if the guard unwinds before it is disowned
 * (closed by its owner); false when there is no guard or no room, and then
 * an unwind leaves it open. */
bool mp_guard_own_fd(int fd);
void mp_guard_disown_fd(int fd);
/* Unwind to the guard (or abort outside one): n bytes could not be had. */
_Noreturn void mp_out_of_memory(size_t n);
/* Run work(ctx) so that running out of memory returns MP_ENOMEM (in err)
 * with nothing left allocated, instead of aborting.  Every public entry
 * point that allocates runs its work through this.  Nested calls run
 * inside the outermost guard. */
int mp_guard_run(mp_err *err, int (*work)(void *ctx), void *ctx);
/* work(ctx, b) under the guard into a buffer of its own, then appended to
 * out: out is untouched when the work fails or runs out of memory. */
typedef int (*mp_text_work)(void *ctx, mp_buf *b);
int mp_guard_text(mp_err *err, mp_text_work work, void *ctx, mp_buf *out);

/* A treap's priorities: Marsaglia's xorshift32 (state never 0). */
static inline uint32_t mp_xorshift32(uint32_t *s) {
    *s ^= *s << 13, *s ^= *s >> 17, *s ^= *s << 5;
    return *s;
}

/* --- the signals that stop a command, SIGTERM, SIGINT, SIGHUP (signals.c):
 * handler for each one the process does not ignore, the dispositions
 * before into saved (may be NULL); given back by mp_stop_restore; a
 * handler ends with mp_stop_die(sig) (the default action, raised). */
#define MP_STOP_SIGNALS 3
typedef struct mp_stop_saved {
    struct sigaction old[MP_STOP_SIGNALS];
} mp_stop_saved;
void mp_stop_catch(void (*handler)(int), mp_stop_saved *saved);
void mp_stop_restore(const mp_stop_saved *saved);
void mp_stop_die(int sig);

/* --- growable array of T: `T *v; size_t n, cap;` */
#define MP_VEC_PUSH(v, n, cap, x)                                          \
    do {                                                                   \
        if ((n) == (cap)) {                                                \
            (cap) = (cap) ? (cap) * 2 : 8;                                 \
            (v) = mp_xrealloc((v), (cap) * sizeof *(v));                   \
        }                                                                  \
        (v)[(n)++] = (x);                                                  \
    } while (0)

/* --- string -> int32 map (open addressing).  Keys are NUL-terminated
 * strings, not copied: they stay where they are while in the map. */
typedef struct mp_strmap_entry {
    const char *key; /* NULL: empty */
    uint32_t hash;   /* mp_strmap_hash of the key */
    int32_t val;
} mp_strmap_entry;
typedef struct mp_strmap {
    mp_strmap_entry *e;
    size_t cap, count;
} mp_strmap;
void mp_strmap_init(mp_strmap *m);
void mp_strmap_free(mp_strmap *m);
/* Returns the existing value, or inserts `val` and returns -1; len is
 * strlen(key).  Lookups take any len bytes. */
int32_t mp_strmap_put(mp_strmap *m, const char *key, size_t len, int32_t val);
int32_t mp_strmap_get(const mp_strmap *m, const char *key, size_t len);
/* Room for n keys in all without growing (rehashing every key on each
 * doubling was a fifth of a 10^7-tensor parse). */
void mp_strmap_reserve(mp_strmap *m, size_t n);
/* A lookup whose hash the caller has already (graph_lookup.c uses it for
 * a guess before the map). */
uint32_t mp_strmap_hash(const char *key, size_t len);
int32_t mp_strmap_get_hashed(const mp_strmap *m, const char *key, size_t len, uint32_t hash);
/* Puts n keys at once, entry k (key, its mp_strmap_hash and a value)
 * from get(ctx, k, e), called twice for each k; values must grow with k.
 * Many keys go in in the order of their slots, one sweep over the table
 * instead of a cache miss each (at 10^7 tensor names, 0.27 GB of table).
 * A key already there, from before or from a smaller k, is not put again:
 * returns the smallest value of such a key, with *prev the value there,
 * or -1 when every key was new. */
typedef void (*mp_strmap_get_fn)(void *ctx, size_t k, mp_strmap_entry *e);
int32_t mp_strmap_put_all(mp_strmap *m, size_t n, mp_strmap_get_fn get, void *ctx,
                          int32_t *prev);

/* --- radix.c: a key and what it belongs to, sorted by key */
typedef struct mp_pair {
    uint64_t key;
    uint32_t at;
} mp_pair;
/* A stable LSD radix sort of a[] by key ascending, where every key is
 * below 2^bits; b[] is scratch of n pairs.  Returns a or b, whichever
 * holds the sorted pairs. */
mp_pair *mp_sort_pairs(mp_pair *a, mp_pair *b, uint32_t n, int bits);
/* The same for 64-bit words by their bits lo .. lo + bits - 1 (those above
 * are 0; those below ride along): a key and what it belongs to packed in
 * 8 bytes instead of 16. */
uint64_t *mp_sort_words(uint64_t *a, uint64_t *b, uint32_t n, int lo, int bits);
/* The same order for words that the caller can make twice, through one
 * array of n words instead of two: the caller makes every word once to
 * count it (mp_placed_sort_count), then again, in the same order, to place
 * it (mp_placed_sort_place), which groups the words by their top digit as
 * a stable pass would; finish sorts each group on the bits below.  Worth
 * it only for arrays the plain sort splits that way (a million words):
 * mp_placed_sort_applies says so. */
typedef struct mp_placed_sort {
    uint64_t *words; /* the block: the caller frees (or reallocs) it */
    uint32_t *at;    /* counts, then where each digit's next word goes; the digits' starts after them */
    int lo, bits, shift;
} mp_placed_sort;
bool mp_placed_sort_applies(uint32_t n, int bits);
void mp_placed_sort_begin(mp_placed_sort *s, uint32_t n, int lo, int bits);
static inline void mp_placed_sort_count(mp_placed_sort *s, uint64_t w) { s->at[w >> s->shift]++; }
/* Between the counting and the placing. */
void mp_placed_sort_counted(mp_placed_sort *s);
static inline void mp_placed_sort_place(mp_placed_sort *s, uint64_t w) { s->words[s->at[w >> s->shift]++] = w; }
/* The sorted words: s->words. */
uint64_t *mp_placed_sort_finish(mp_placed_sort *s);
/* Bits needed to write x (0 for 0). */
int mp_bit_width(uint64_t x);
/* v[q] = old v[from[q]] for every q, for n elements of `size` bytes (at
 * most MP_PERMUTE_MAX), following the permutation's cycles: no second copy
 * of the array.  from[] (a permutation of 0..n-1, n < 2^32 - 1) is used
 * up.  Inline, so that each caller's element size is a constant. */
#define MP_PERMUTE_MAX 64
static inline void mp_permute_in_place(void *v, size_t size, uint32_t *from, uint32_t n) {
    unsigned char *a = v, first[MP_PERMUTE_MAX];
    for (uint32_t s = 0; s < n; s++) {
        if (from[s] == UINT32_MAX) continue;
        memcpy(first, a + (size_t)s * size, size);
        uint32_t j = s;
        for (uint32_t k = from[j]; from[j] = UINT32_MAX, k != s; k = from[j]) {
            memcpy(a + (size_t)j * size, a + (size_t)k * size, size);
            j = k;
        }
        memcpy(a + (size_t)j * size, first, size);
    }
}
/* v[] (n elements of `size` bytes) stably sorted by the keys in pairs[q]
 * = {key of v[q], q}, every key below 2^bits; pairs has room for 2n (the
 * sort's scratch) and is used up.  The permutation goes into the spare
 * half (4 of its 16 bytes an entry) and v is permuted in place: no third
 * array of n entries. */
static inline void mp_sort_by_pairs(void *v, size_t size, mp_pair *pairs, uint32_t n, int bits) {
    mp_pair *sorted = mp_sort_pairs(pairs, pairs + n, n, bits), *spare = sorted == pairs ? pairs + n : pairs;
    uint32_t *from = (uint32_t *)(void *)spare;
    for (uint32_t q = 0; q < n; q++) from[q] = sorted[q].at;
    mp_permute_in_place(v, size, from, n);
}

/* --- the graph writer's pieces (core/graph_write.c), shared by every writer of
 * .mpg text (the generator, the fuzz decoder) */
/* Room for `extra` more bytes in one step (false: the buffer failed).  A
 * writer that knows about how much it will write reserves it up front: a
 * large text grown by doubling is copied each time, and what is reserved
 * but never written costs address space only, not memory. */
bool mp_buf_reserve(mp_buf *b, size_t extra);
void mp_buf_i64(mp_buf *b, int64_t v); /* decimal, as %lld */
#define MP_U64_DIGITS 20 /* the most a uint64_t takes in decimal */
/* A line written in place, for writers of millions of lines (a call per
 * field, each checking for room and ending the text, was most of the
 * plan writer's time): mp_buf_room gives n bytes of room at the end of b
 * (NULL when the buffer failed), the mp_put_* write there and return
 * where they stopped, and mp_buf_done takes what was written up to end.
 * A number takes at most MP_U64_DIGITS bytes, a signed one one more. */
char *mp_buf_room(mp_buf *b, size_t n);
void mp_buf_done(mp_buf *b, char *end);
static inline char *mp_put_text(char *p, const char *s, size_t n) {
    memcpy(p, s, n); /* inline: most are a few bytes the compiler knows */
    return p + n;
}
/* " key=", the start of a field of the .mpg and .mpp writers' lines */
static inline char *mp_put_key(char *p, const char *key) {
    *p++ = ' ';
    p = mp_put_text(p, key, strlen(key));
    *p++ = '=';
    return p;
}
char *mp_put_u64(char *p, uint64_t v);
char *mp_put_i64(char *p, int64_t v);
/* s with control characters as \xNN and a backslash doubled. */
void mp_buf_put_printable(mp_buf *b, const char *s);
/* s as a JSON string literal (core/buf.c). */
void mp_buf_put_json_string(mp_buf *b, const char *s);
/* The `graph NAME` line that opens a graph's block. */
void mp_graph_put_begin(mp_buf *b, const char *name);
void mp_graph_put_tensor(mp_buf *b, const char *name, uint64_t size, mp_device dev,
                         uint32_t flags, uint32_t mem_id, uint64_t at, const char *inplace,
                         const char *view);
/* The memory map (banks.c): written as NAME<kv>SIZE entries separated by
 * sep (' ' in a graph file's banks line, ',' in a plan's banks= field). */
void mp_banks_write(const mp_banks *b, char sep, char kv, mp_buf *out);
/* The map a planning uses: the options', else the program file's. */
const mp_banks *mp_banks_of(const mp_program *prog, const mp_options *o);
/* Pinned offsets (pins.c).  A fixed region: lifetime [start, end]
 * (inclusive) by bytes [lo, hi). */
typedef struct mp_rect {
    int32_t start, end;
    uint64_t lo, hi;
} mp_rect;
/* The entry graph's first pinned tensor, or -1. */
int32_t mp_pins_first(const mp_program *prog);
/* MP_OK without pins; else a limit refusal (MP_EPLAN) naming the first
 * pinned tensor, for a planner without pinned offsets. */
int mp_pins_refuse(const mp_program *prog, const char *planner, mp_err *err);
/* MP_EPLAN "FILE:LINE: tensor 'x' pinned at N: <fmt>" for entry tensor t. */
int mp_pin_error(const mp_program *prog, int32_t t, mp_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Whether two of the regions share a byte while both live; the first pair
 * found in *a < *b.  O(n log n). */
bool mp_rects_overlap(const mp_rect *r, uint32_t n, uint32_t *a, uint32_t *b);
/* The key of sub-graph s (0, 1) of a node kind ("true", "body", ...), or NULL. */
const char *mp_node_sub_key(uint32_t kind, int s);
/* The name of tensor t; buf (24 bytes) may hold a name made on the fly. */
typedef const char *(*mp_name_fn)(const void *ctx, int32_t t, char *buf);
/* What one `node` line says: tensors as indices named by an mp_name_fn,
 * sub-graphs by name (NULL: none), scratch 0 and span 0 or 1 unwritten. */
typedef struct mp_node_line {
    uint32_t kind;
    const int32_t *in, *out;
    uint32_t n_in, n_out;
    const char *sub[2];
    const char *backend, *op;
    uint64_t scratch;
    uint32_t span;
} mp_node_line;
void mp_graph_put_node(mp_buf *b, const mp_node_line *nl, mp_name_fn name, const void *ctx);

/* --- the model (graph_model.c, file.c, plan_write.c) */
/* Graphs reachable from the entry, as flags indexed by graph. */
void mp_graph_reachable(const mp_program *prog, bool *reach);
/* Does the graph hold a delegate whose backend contains "xnnpack" (any case)? */
bool mp_graph_has_xnnpack(const mp_graphdef *g);
/* Some tensor of g is in place on another (without one, each tensor is its
 * own in-place root: the common case the planners skip the chains for). */
bool mp_graph_has_inplace(const mp_graphdef *g);
/* --- lines.c: a parser's text, a line at a time, from memory or a file
 * ("-": standard input) read in a window; lines without the newline and a
 * CR before it.  After the last line, read_errno is set when the file
 * could not be read to its end (mp_lines_error). */
typedef struct mp_lines {
    const char *s, *end; /* the text not yet returned */
    int fd;              /* -1: text in memory */
    off_t at;            /* file offset of buf[0]; -1: cannot be read again */
    char *buf;           /* the window (a file) */
    size_t cap;
    const char *path;
    bool done;
    int read_errno;
} mp_lines;
void mp_lines_text(mp_lines *L, const char *data, size_t len);
int mp_lines_open(mp_lines *L, const char *path, mp_err *err);
/* The next line in [*b, *e); false after the last (or a read error). */
bool mp_lines_next(mp_lines *L, const char **b, const char **e);
/* each(ctx, b, e) on the lines after the one last returned (with their
 * CR, if any), until it returns false or the text ends: what is left of
 * a file is read again for it, unless the file is a pipe (then only the
 * lines in the window).  Counts ahead; it changes nothing in L. */
typedef bool (*mp_line_fn)(void *ctx, const char *b, const char *e);
void mp_lines_ahead(const mp_lines *L, mp_line_fn each, void *ctx);
/* MP_OK, or "PATH: read error: ..." when the file was not read to its end. */
int mp_lines_error(const mp_lines *L, mp_err *err);
/* Closes the file (not standard input) and frees the window. */
void mp_lines_close(mp_lines *L);

/* A sink for a writer's text in pieces: false when it failed. */
typedef bool (*mp_sink_fn)(const char *data, size_t len, void *ctx);
/* Writers that stream hand their text on in pieces of about this size. */
#define MP_BUF_PIECE ((size_t)1 << 20)
/* The text in b handed to sink and b emptied, when there is a sink and a
 * piece's worth of text (or `end`); false once the sink or an allocation
 * failed (b->failed: the writer stops there). */
bool mp_buf_drain(mp_buf *b, mp_sink_fn sink, void *ctx, bool end);
/* mp_plan_write handing its text to sink about a MiB at a time instead of
 * keeping it whole (b is left empty; b->failed when the sink or an
 * allocation failed, and then the writing stopped there). */
void mp_plan_write_to(const mp_plan *plan, mp_buf *b, mp_sink_fn sink, void *ctx);
/* An empty plan of planner `algo_name` (a static string) with the options
 * line of `o`, in an arena of its own. */
mp_plan *mp_plan_new(const mp_options *o, const char *algo_name);

/* --- the text formats' pieces (graph_parse.c, plan_parse.c) */
/* A token of a line: s[0..n). */
typedef struct mp_tok {
    const char *s;
    size_t n;
} mp_tok;
/* Methods (graph_methods.c): the entry line's names resolved into
 * prog->entries and every rule of methods and shared state checked
 * (MP_EFORMAT, FILE:LINE); n 0: no entry line (shared tensors refused). */
int mp_methods_bind(mp_program *prog, const mp_tok *names, uint32_t n, int line, mp_err *err);
/* Program p as its method k alone: a program that borrows p's graphs,
 * with method k's graph as graphs[0] (and graph 0 where it was); with `at`
 * (per tensor of the method, UINT64_MAX: none) those tensors pinned.
 * Free with mp_method_view_free(v, at != NULL). */
mp_program *mp_method_view(const mp_program *p, uint32_t k, const uint64_t *at);
void mp_method_view_free(mp_program *v, bool pinned);
/* A graph index of p in method k's view, and back (the swap is its own
 * inverse). */
int32_t mp_method_graph(const mp_program *p, uint32_t k, int32_t g);
/* owner[g]: the method (entry index) that runs graph g, -1 for none
 * (caller frees). */
int32_t *mp_method_owners(const mp_program *p);
/* The plan as method k's view sees it: a shallow copy holding its blocks
 * (and, for k = 0, the blocks of no method's graph), graph indices in the
 * view's numbering; free its .graphs array only. */
mp_plan mp_method_plan(const mp_program *p, const mp_plan *plan, const int32_t *owner, uint32_t k);
/* Whether some method declares shared state. */
bool mp_methods_share(const mp_program *p);
/* mp_plan_program of several methods (api/plan_methods.c): each planned by
 * `plan` as its view's entry, shared tensors pinned at one place. */
mp_plan *mp_plan_methods(const mp_program *p, const mp_options *o,
                         mp_plan *(*plan)(const mp_program *, const mp_options *, mp_err *), mp_err *err);

/* A planner's own plan: mp_plan_program's checks of the options and its
 * guard, without what it adds around the planner (ExecuTorch's plan in
 * place of the repaired one where valid; opt's greedy safety net and its
 * fallback past 64 bits).  Fuzz target "plan" verifies these, so that a
 * wrong layout the additions would have replaced is still seen. */
mp_plan *mp_plan_program_alone(const mp_program *prog, const mp_options *opts, mp_err *err);
/* The plan summary with the options it was planned with (api/summary.c;
 * the command's --summary). */
int mp_summary_write(const mp_program *prog, const mp_plan *plan, const mp_options *o, bool json, mp_buf *out,
                     mp_err *err);
/* The planner table's bare plan function of planner i (its `plan` where it
 * adds nothing around itself), NULL past the end (api/planners.c). */
mp_plan_fn mp_planner_alone(uint32_t i);

static inline bool mp_tok_is(mp_tok t, const char *s) {
    size_t n = strlen(s);
    return t.n == n && memcmp(t.s, s, n) == 0;
}

/* MP_EFORMAT with "FILE:LINE: message". */
int mp_err_at(mp_err *err, const char *file, int line, const char *fmt, va_list ap);

/* Control-flow operand counts against their sub-graphs (graph_binding.c);
 * every sub-graph index resolved, every graph ending in its output node. */
int mp_check_binding(const mp_graphdef *graphs, size_t n_graphs, const char *file,
                     mp_err *err);

/* --- errors */
int mp_err_set(mp_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int mp_err_vset(mp_err *err, int code, const char *fmt, va_list ap);
/* MP_EPLAN with err->limit set: a valid graph beyond a planner's limits. */
int mp_err_limit(mp_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- checked arithmetic: false on overflow */
static inline bool mp_add_u64(uint64_t a, uint64_t b, uint64_t *r) {
    return !__builtin_add_overflow(a, b, r);
}
/* a + b, or UINT64_MAX where it would not fit: the planners' tops and
 * peaks saturate, so a layout past 64 bits compares as the worst. */
static inline uint64_t mp_sat_add_u64(uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
static inline bool mp_mul_u64(uint64_t a, uint64_t b, uint64_t *r) {
    return !__builtin_mul_overflow(a, b, r);
}

/* n rounded up to a multiple of a (a >= 1); UINT64_MAX where that does
 * not fit (never for sizes below 2^62 and a <= 2^30). */
static inline uint64_t mp_align_up(uint64_t n, uint64_t a) {
    return n % a == 0 ? n : mp_sat_add_u64(n, a - n % a);
}

/* An alignment the planners and the format accept: 1..MP_MAX_ALIGNMENT. */
static inline bool mp_alignment_ok(uint64_t a) { return a >= 1 && a <= MP_MAX_ALIGNMENT; }
/* MP_EFORMAT unless mp_alignment_ok(a). */
int mp_check_alignment(uint64_t a, mp_err *err);

/* ------------------------------------------------------------------
 * The problem model both planners share (lifetime.c, table.c, align.c):
 * ExecuTorch's lifetimes and spec filters, the buffer table, pools,
 * in-place roots, free points and size rounding. */

/* Per-graph facts the planners derive from the graph model: ExecuTorch's
 * update_all_tensors_lifetime and collect_specs_from_nodes. */
typedef struct mp_life {
    int32_t *start, *end; /* inclusive node indices, -1 when never named */
    uint8_t *is_input;    /* placeholder-defined and not mutable */
    uint8_t *is_output;   /* named (through views) by the output node */
    uint8_t *is_placeholder; /* defined by a placeholder (mutable included) */
    int32_t *order;       /* storage roots in ExecuTorch's spec order */
    uint32_t n_order;
} mp_life;

void mp_life_compute(const mp_graphdef *g, mp_life *L);
void mp_life_free(mp_life *L);

/* What a cond's results are at run time (escape.c; D14): per tensor, the
 * last node its bytes must survive to (its lifetime's end, or later when a
 * cond result aliases it); per node, for a cond whose results live in its
 * branches' memory after it, the last node they are used at (else -1). */
typedef struct mp_escape {
    int32_t *tensor_end, *node_end;
    bool any; /* some result escapes or some operand is extended */
} mp_escape;

void mp_escape_compute(const mp_program *prog, const mp_graphdef *g, const int32_t *end,
                       mp_escape *E);
void mp_escape_free(mp_escape *E);
/* The branch value behind result i of a cond whose branch is graph b, as a
 * storage root of b; *kind: 1 its bytes are in the branch's memory, 0
 * nowhere that can be overwritten (a weight, a dynamic tensor), -(j + 1)
 * it is b's j-th placeholder (the cond's operand after the predicate). */
int32_t mp_escape_value(const mp_graphdef *b, uint32_t i, int *kind);
/* The first node that runs sub-graphs while an earlier cond's results live
 * in its branches' memory (*cond: that cond), or -1. */
int32_t mp_escape_hazard(const mp_graphdef *g, const mp_escape *E, int32_t *cond);
/* Every reachable non-entry graph is run by exactly one node. */
bool mp_graphs_tree(const mp_program *prog, const bool *reach);
/* MP_EPLAN for a program the repaired planners cannot keep safe from D14:
 * a hazard (above) in a program that is not a tree. */
int mp_escape_check(const mp_program *prog, const bool *reach, mp_err *err);

/* Filters of collect_specs_from_nodes. */
typedef struct mp_alloc_flags {
    bool inputs, outputs, mutables;
} mp_alloc_flags;

bool mp_life_is_planned(const mp_graphdef *g, const mp_life *L, int32_t t,
                        mp_alloc_flags f);
/* The planned tensors, in spec order; returns the count (caller frees). */
uint32_t mp_life_planned(const mp_graphdef *g, const mp_life *L,
                         mp_alloc_flags f, int32_t **out);
/* The same into v, of room for L->n_order + 1 tensors. */
uint32_t mp_life_planned_into(const mp_graphdef *g, const mp_life *L, mp_alloc_flags f, int32_t *v);

/* The program-wide buffer table of the repaired mode (repair D2, D7):
 * every (device, pool) that some reachable graph plans, devices in
 * ExecuTorch's order (CPU:0 first, then by type and index), each device's
 * pools at consecutive indices from 1.  Without --per-device there is one
 * device, cpu:0.  Graph g's context: the entry takes the options' alloc
 * flags; a sub-graph plans its outputs and mutable buffers, and its inputs
 * when some map/scan node runs it (repair D10). */
typedef struct mp_slot {
    mp_device dev;
    uint32_t pools, base; /* global index of pool p: base + p - 1 */
} mp_slot;

typedef struct mp_table {
    mp_slot *slots;
    uint32_t n;
} mp_table;

mp_alloc_flags mp_context_flags(const mp_options *o, uint32_t gi, const uint8_t *map_body);
void mp_table_build(mp_table *t, const mp_program *p, const mp_options *o, const bool *reach,
                    const uint8_t *map_body, const mp_life *const *lives);
int32_t mp_table_find(const mp_table *t, mp_device d); /* slot, or -1 */
/* Global buffer index of a planned tensor, -1 if its device is absent. */
int64_t mp_table_index(const mp_table *t, const mp_options *o, const mp_tensor *x);
/* The end of t's in-place chain (through views): t itself when it is no
 * in-place tensor, -1 when the chain is a cycle.  With per_device, the
 * chain ends at a tensor whose base is on another device (see
 * mp_inplace_cut). */
int32_t mp_inplace_root(const mp_graphdef *g, int32_t t, bool per_device);
/* When a node of g carries span= (more than 1): the time each node starts
 * at, T[0] = 0, T[i + 1] = T[i] + span of node i, n_nodes + 1 of them
 * (caller frees); NULL when no node does. */
uint64_t *mp_graph_times(const mp_graphdef *g);
/* mp_inplace_root of every tensor of g, in linear time (caller frees).
 * The pool a planned tensor lives in is its root's mem_id (1 when none): an
 * in-place tensor lives in its base's, whatever its own mem_id says, as
 * ExecuTorch resolves it; a cycle (refused by the planners) its own. */
int32_t *mp_inplace_roots(const mp_graphdef *g, bool per_device);
/* The end of every element's chain through next[] (next[i] < 0 ends a
 * chain) into end[], -1 for an element that reaches a cycle; each chain is
 * walked once, so n elements cost O(n). */
void mp_chain_ends(const int32_t *next, uint32_t n, int32_t *end);
/* That pool, for planned tensor t given mp_inplace_roots' array. */
uint32_t mp_pool_of(const mp_graphdef *g, const int32_t *roots, int32_t t); /* roots NULL: t's own */
/* Repaired per-device planning: an in-place tensor whose base (through
 * views) is on another device cannot share the base's bytes (they are in
 * another device's buffer); it is planned as an allocation of its own. */
bool mp_inplace_cut(const mp_graphdef *g, int32_t t, bool per_device);
void mp_table_free(mp_table *t);
/* map_body[g]: some reachable map/scan node runs graph g. */
uint8_t *mp_map_bodies(const mp_program *p, const bool *reach);

/* A plan's block for graph gi, as planners write it: its name, n_bufs
 * buffer sizes and devices (copied), room for n_allocs allocs. */
void mp_block_start(mp_graph_plan *gp, const mp_program *prog, uint32_t gi, const uint64_t *bufs,
                    const mp_device *devs, uint32_t n_bufs, uint32_t n_allocs, mp_arena *A);
/* One alloc line of the block: tensor t at offset in pool mem_id, with
 * its lifetime from L. */
void mp_block_add(mp_graph_plan *gp, const mp_graphdef *g, int32_t t, uint64_t mem_id, uint64_t obj,
                  uint64_t offset, uint64_t size, const mp_life *L);

/* Per-device planning refused where pre-assigned pools meet non-CPU
 * tensors among the specs, as ExecuTorch does (MP_EPLAN). */
int mp_check_pools_per_device(const mp_graphdef *g, const int32_t *specs, uint32_t n, mp_err *err);

/* The free lines of one graph's block (repair D8). */
void mp_add_frees(const mp_graphdef *g, const mp_life *L, mp_graph_plan *gp, mp_arena *A);

/* Size rounding.  Exact: the smallest multiple of a not below n.
 * ExecuTorch: math.ceil(n / a) * a, where n / a is a double - which is not
 * exact above 2^53 (repair D9). */
uint64_t mp_ref_align_exact(uint64_t n, uint64_t a);
uint64_t mp_ref_align_et(uint64_t n, uint64_t a);
/* Whether ExecuTorch's float rounding (D9) gives some tensor of the
 * program another size than exact rounding, at alignment 16 (the sort key
 * of a first planning) or at `alignment`. */
bool mp_ref_et_rounding_differs(const mp_program *p, uint32_t alignment);

/* Quote a token for a message: copies at most 40 bytes, replacing
 * non-printable bytes by '?', into buf (>= 48 bytes). */
const char *mp_quote(const char *s, size_t n, char *buf);

#endif
