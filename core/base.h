/* base.h - what every module of the library builds on: the arena, the
 * allocation guard (out of memory as an error), the stop signals, growable
 * arrays, the string map, radix sorts and permutations, errors, checked
 * arithmetic.  Nothing here knows a graph or a plan. */
#ifndef MP_BASE_H
#define MP_BASE_H

#include "memplan.h"

#include <signal.h> /* struct sigaction: mp_stop_saved */
#include <stdarg.h>
#include <stdio.h>
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
/* The stop signals held back (mp_stop_block, the mask before into old)
 * and let through again (mp_stop_unblock): around a fork and the
 * bookkeeping of the child's pid, so that a handler never runs while a
 * child exists that it does not know of.  A forked child unblocks too. */
void mp_stop_block(sigset_t *old);
void mp_stop_unblock(const sigset_t *old);

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

/* A whole decimal number (digits only, no sign or space) within [lo, hi]
 * into *v; false (and *v untouched) otherwise.  For option values given
 * as text (core/buf.c). */
bool mp_decimal_in(const char *s, uint64_t lo, uint64_t hi, uint64_t *v);

/* Quote a token for a message: copies at most 40 bytes, replacing
 * non-printable bytes by '?', into buf (>= 48 bytes). */
const char *mp_quote(const char *s, size_t n, char *buf);

#endif
