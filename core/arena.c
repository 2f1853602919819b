/* arena.c - bump allocator: everything it hands out dies with it. */
#include "internal.h"

/* Chunks double from 64 KiB up to 8 MiB: a small program keeps one small
 * chunk, while a 10^7-tensor graph's names (some 300 MB) come in blocks
 * large enough for 2 MiB pages (alloc.c) instead of 5,000 heap chunks on
 * 4 KiB pages, whose first-touch faults were a third of the parse. */
#define MP_ARENA_CHUNK (64u * 1024u)
#define MP_ARENA_CHUNK_MAX (8u << 20)

struct chunk {
    struct chunk *next;
    size_t used, cap;
    max_align_t data[]; /* payload, aligned for any type */
};

/* a block the arena took over (mp_arena_adopt), freed with it */
struct adopted {
    struct adopted *next;
    void *block;
};

struct mp_arena {
    struct chunk *head;
    struct adopted *adopted;
};

mp_arena *mp_arena_new(void) { return mp_xcalloc(1, sizeof(mp_arena)); }

void mp_arena_free(mp_arena *a) {
    if (!a) return;
    for (struct adopted *d = a->adopted; d; d = d->next) mp_xfree(d->block);
    for (struct chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        mp_xfree(c);
    }
    mp_xfree(a);
}

/* n bytes at an offset that is a multiple of align (the chunk's payload
 * is aligned for any type), not cleared. */
static void *take(mp_arena *a, size_t n, size_t align) {
    struct chunk *c = a->head;
    size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
    if (!c || at > c->cap || c->cap - at < n) {
        size_t grown = c ? c->cap * 2 : MP_ARENA_CHUNK;
        if (grown > MP_ARENA_CHUNK_MAX) grown = MP_ARENA_CHUNK_MAX;
        size_t cap = n > grown ? n : grown;
        c = mp_xmalloc(sizeof(struct chunk) + cap);
        c->used = 0;
        c->cap = cap;
        c->next = a->head;
        a->head = c;
        at = 0;
    }
    c->used = at + n;
    return (char *)c->data + at;
}

void *mp_arena_alloc_aligned(mp_arena *a, size_t n, size_t align) {
    void *p = take(a, n, align);
    memset(p, 0, n);
    return p;
}

void *mp_arena_alloc(mp_arena *a, size_t n) { return mp_arena_alloc_aligned(a, n, sizeof(max_align_t)); }

/* Names were 16-byte aligned, a third of their bytes padding at 10^7
 * tensors: packed now. */
char *mp_arena_strndup(mp_arena *a, const char *s, size_t n) {
    char *p = take(a, n + 1, 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

void *mp_arena_memdup(mp_arena *a, const void *p, size_t n) {
    void *q = mp_arena_alloc(a, n);
    if (n) memcpy(q, p, n);
    return q;
}

void *mp_arena_adopt(mp_arena *a, void *p, size_t n) {
    if (!p || !n) {
        mp_xfree(p);
        return mp_arena_alloc(a, 0);
    }
    struct adopted *d = mp_arena_alloc(a, sizeof *d); /* before: it may fail */
    d->block = mp_xrealloc(p, n);
    d->next = a->adopted;
    a->adopted = d;
    return d->block;
}
