/* formats.h - the text formats' shared pieces: the .mpg writer's
 * lines, a parser's text a line at a time (lines.c), writers that stream
 * through a sink, tokens, FILE:LINE errors, the methods' binding and
 * views, the control-flow binding checks. */
#ifndef MP_FORMATS_H
#define MP_FORMATS_H

#include "base.h"
#include "model.h"

#include <sys/types.h> /* off_t */

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
/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
size_t mp_utf8_len(const unsigned char *s);
/* The `graph NAME` line that opens a graph's block. */
void mp_graph_put_begin(mp_buf *b, const char *name);
void mp_graph_put_tensor(mp_buf *b, const char *name, uint64_t size, mp_device dev,
                         uint32_t flags, uint32_t mem_id, uint64_t at, const char *inplace,
                         const char *view, uint64_t offset);
/* The memory map (banks.c): written as NAME<kv>SIZE entries separated by
 * sep (' ' in a graph file's banks line, ',' in a plan's banks= field). */
void mp_banks_write(const mp_banks *b, char sep, char kv, mp_buf *out);
/* --et-upstream's pull requests (core/upstream.c): the MP_UPSTREAM_* bit of
 * PR number pr, 0 for one memplan does not apply; and the numbers of a set
 * of bits, in increasing order, `before` the first and `between` the rest. */
uint32_t mp_upstream_bit(uint64_t pr);
void mp_upstream_write(uint32_t set, const char *before, const char *between, mp_buf *out);
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

#endif
