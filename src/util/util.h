/* util.h - internal helpers shared by every module: arena, growable
 * arrays, string hash map, error formatting, checked arithmetic. */
#ifndef MP_UTIL_H
#define MP_UTIL_H

#include "memplan.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* --- arena: bump allocator; everything it hands out dies with it. */
typedef struct mp_arena mp_arena;
mp_arena *mp_arena_new(void);
void mp_arena_free(mp_arena *a);
/* Zeroed memory; aborts the process on exhaustion (see mp_xmalloc). */
void *mp_arena_alloc(mp_arena *a, size_t n);
char *mp_arena_strndup(mp_arena *a, const char *s, size_t n);
void *mp_arena_memdup(mp_arena *a, const void *p, size_t n);

/* --- allocation that never returns NULL: running out of memory is not an
 * input error we can report usefully, so we stop with a message. */
void *mp_xmalloc(size_t n);
void *mp_xcalloc(size_t n, size_t sz);
void *mp_xrealloc(void *p, size_t n);

/* --- growable array of T: `T *v; size_t n, cap;` */
#define MP_VEC_PUSH(v, n, cap, x)                                          \
    do {                                                                   \
        if ((n) == (cap)) {                                                \
            (cap) = (cap) ? (cap) * 2 : 8;                                 \
            (v) = mp_xrealloc((v), (cap) * sizeof *(v));                   \
        }                                                                  \
        (v)[(n)++] = (x);                                                  \
    } while (0)

/* --- string -> int32 map (open addressing).  Keys are not copied. */
typedef struct mp_strmap_entry {
    const char *key; /* NULL: empty */
    uint32_t len, hash;
    int32_t val;
} mp_strmap_entry;
typedef struct mp_strmap {
    mp_strmap_entry *e;
    size_t cap, count;
} mp_strmap;
void mp_strmap_init(mp_strmap *m);
void mp_strmap_free(mp_strmap *m);
/* Returns the existing value, or inserts `val` and returns -1. */
int32_t mp_strmap_put(mp_strmap *m, const char *key, size_t len, int32_t val);
int32_t mp_strmap_get(const mp_strmap *m, const char *key, size_t len);

/* --- the graph writer's pieces (graph/write.c), shared by every writer of
 * .mpg text (the generator, the fuzz decoder) */
void mp_graph_put_tensor(mp_buf *b, const char *name, uint64_t size, mp_device dev,
                         uint32_t flags, uint32_t mem_id, const char *inplace, const char *view);
/* The key of sub-graph s (0, 1) of a node kind ("true", "body", ...), or NULL. */
const char *mp_node_sub_key(uint32_t kind, int s);
/* The name of tensor t; buf (24 bytes) may hold a name made on the fly. */
typedef const char *(*mp_name_fn)(const void *ctx, int32_t t, char *buf);
void mp_graph_put_node(mp_buf *b, uint32_t kind, const int32_t *in, uint32_t n_in,
                       const int32_t *out, uint32_t n_out, const char *const sub[2],
                       const char *backend, mp_name_fn name, const void *ctx);

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

/* Exact round-up of n to a multiple of a (n < 2^62, a <= 2^30: no overflow). */
static inline uint64_t mp_align_up(uint64_t n, uint64_t a) {
    return (n + a - 1) / a * a;
}

/* Quote a token for a message: copies at most 40 bytes, replacing
 * non-printable bytes by '?', into buf (>= 48 bytes). */
const char *mp_quote(const char *s, size_t n, char *buf);

#endif
