/* alloc.c - every allocation of the library, and what happens when one
 * fails.
 *
 * The library must never abort or exit on its caller's behalf, yet it has
 * hundreds of allocations, most deep inside planners.  Rather than thread
 * a failure out of each, a public entry point runs its work under a guard
 * (mp_guard_run): each block allocated meanwhile is linked into the
 * guard's list, and an allocation that fails unwinds (longjmp) to the
 * guard, which frees every block still listed and returns MP_ENOMEM.  When
 * the work returns normally, the guard unlinks its blocks: they belong to
 * whoever holds them now (a plan, a program, a buffer).
 *
 * Invariants: every block carries a header; a block is linked only while
 * the guard that allocated it runs; a guard is per thread (guards nest by
 * running inner work inside the outermost one).  Blocks are freed with
 * mp_xfree, never free().  Outside a guard (the tools and the command
 * line) a failed allocation prints a message and aborts, as a batch
 * program may. */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE */
#include "internal.h"

#include <malloc.h> /* malloc_usable_size */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h> /* close */

typedef union hdr {
    struct {
        union hdr *prev, *next; /* NULL, NULL: not in a guard's list */
    } link;
    max_align_t align; /* the payload after it is aligned for any type */
} hdr;

/* Large blocks freed inside a guard are kept for the next large request
 * they hold (the default allocator only).  glibc hands every block from
 * 32 MiB up straight from the kernel and back: at 10^7 tensors the
 * planner's temporaries (sorts, sweeps) made the kernel zero 12 GB of
 * fresh pages, more than a third of the time.  Bounded: at most BIG_KEPT
 * blocks; at a request none holds the largest is freed, and all of them
 * when the guard ends. */
#define BIG_BLOCK (32u << 20)
#define BIG_KEPT 4

/* Files a guarded call has open (a parser's input): closed when it
 * unwinds, since a descriptor is not a block on its list. */
#define GUARD_FDS 4

typedef struct guard {
    jmp_buf unwind;
    hdr head; /* circular list of the blocks this guard owns */
    hdr *kept[BIG_KEPT];
    size_t kept_size[BIG_KEPT];
    uint32_t n_kept;
    int fds[GUARD_FDS];
    uint32_t n_fds;
} guard;

static _Thread_local guard *active;

static void *std_malloc(size_t n, void *ctx) { (void)ctx; return malloc(n); }
static void *std_realloc(void *p, size_t n, void *ctx) { (void)ctx; return realloc(p, n); }
static void std_free(void *p, void *ctx) { (void)ctx; free(p); }

static mp_allocator alloc = {std_malloc, std_realloc, std_free, NULL};

void mp_set_allocator(const mp_allocator *a) {
    mp_allocator d = {std_malloc, std_realloc, std_free, NULL};
    alloc = a ? *a : d;
}

static void link_block(hdr *h) {
    if (!active) {
        h->link.prev = h->link.next = NULL;
        return;
    }
    hdr *head = &active->head;
    h->link.next = head->link.next;
    h->link.prev = head;
    head->link.next->link.prev = h;
    head->link.next = h;
}

static void unlink_block(hdr *h) {
    if (!h->link.prev) return;
    h->link.prev->link.next = h->link.next;
    h->link.next->link.prev = h->link.prev;
    h->link.prev = h->link.next = NULL;
}

static bool std_alloc(void) { return alloc.malloc == std_malloc; }

#ifdef MADV_HUGEPAGE
/* Large arrays on 2 MiB pages where the system allows it (Linux's
 * transparent huge pages in "madvise" mode): a 10^7-tensor plan touches
 * some 12 GB, and with 4 KiB pages the faults and TLB misses were a fifth
 * of its time (22.0 s, 17.1 s with them).  Advice only: nothing changes
 * where it is refused. */
static void huge_pages(void *p, size_t n) {
    /* The whole block, from the 4 KiB page it starts in: advice on a part
     * of a mapping splits it, and the C library can then no longer grow
     * the block in place (mremap fails on a range of several mappings, and
     * realloc falls back to copying). */
    const uintptr_t page = 4096;
    uintptr_t lo = (uintptr_t)p & ~(page - 1), hi = ((uintptr_t)p + n + page - 1) & ~(page - 1);
    (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}
#endif

/* A block of `total` bytes from the C library: a large one advised onto
 * huge pages, before its pages are first touched. */
static void advise(hdr *h, size_t total) {
#ifdef MADV_HUGEPAGE
    if (total >= (4u << 20) && std_alloc()) huge_pages(h, total);
#else
    (void)h, (void)total;
#endif
}

/* Kept blocks are the C library's (std_alloc held when they were kept):
 * freed and resized by it directly, whatever allocator is set now. */
static void drop_kept(guard *g) {
    for (uint32_t i = 0; i < g->n_kept; i++) free(g->kept[i]);
    g->n_kept = 0;
}

/* The smallest kept block that holds `total` bytes, cut down first when
 * much larger (its tail would hold pages no one uses: shrinking a block
 * the C library mapped keeps it where it is).  NULL when none holds them:
 * then the largest is freed, for the fresh block the caller maps instead.
 * Grown, a kept block kept its pages but the kernel moved them, and moved
 * pages lose their huge pages: at 10^7 tensors the plan's allocations sat
 * on 68 MB of 4 KiB pages, and the verifier's sort keys, ends and members
 * on 250 MB. */
static hdr *take_kept(size_t total) {
    guard *g = active;
    uint32_t best = 0;
    for (uint32_t i = 1; i < g->n_kept; i++) {
        bool fits = g->kept_size[i] >= total, best_fits = g->kept_size[best] >= total;
        if (fits ? !best_fits || g->kept_size[i] < g->kept_size[best]
                 : !best_fits && g->kept_size[i] > g->kept_size[best])
            best = i;
    }
    hdr *h = g->kept[best];
    size_t size = g->kept_size[best];
    g->n_kept--;
    g->kept[best] = g->kept[g->n_kept];
    g->kept_size[best] = g->kept_size[g->n_kept];
    if (size < total) {
        free(h);
        return NULL;
    }
    if (size - total <= total / 2) return h;
    hdr *q = realloc(h, total);
    if (!q) free(h);
    return q;
}

_Noreturn void mp_out_of_memory(size_t n) {
    if (active) longjmp(active->unwind, 1);
    fprintf(stderr, "memplan: out of memory (%zu bytes)\n", n);
    abort();
}

/* n bytes plus the header, or SIZE_MAX when that does not fit. */
static size_t with_header(size_t n) {
    return n > SIZE_MAX - sizeof(hdr) ? SIZE_MAX : n + sizeof(hdr);
}

/* Block h of `total` bytes (n asked for) handed out: linked into the
 * guard, a large one advised onto huge pages; NULL is out of memory. */
static void *hand_out(hdr *h, size_t total, size_t n) {
    if (!h) mp_out_of_memory(n);
    advise(h, total);
    link_block(h);
    return h + 1;
}

void *mp_xmalloc(size_t n) {
    size_t total = with_header(n);
    hdr *h = NULL;
    if (total >= BIG_BLOCK && total != SIZE_MAX && active && active->n_kept) h = take_kept(total);
    if (!h) h = total == SIZE_MAX ? NULL : alloc.malloc(total, alloc.ctx);
    return hand_out(h, total, n);
}

void *mp_xcalloc(size_t n, size_t sz) {
    size_t bytes;
    if (__builtin_mul_overflow(n, sz, &bytes)) mp_out_of_memory(SIZE_MAX);
    if (bytes >= BIG_BLOCK && std_alloc() && !(active && active->n_kept)) {
        /* fresh pages from the C library's calloc, which knows a block it
         * just mapped is zero: not written twice (the kernel zeroes each
         * page as it is first touched; at 10^7 tensors the name map alone
         * is 0.27 GB) */
        size_t total = with_header(bytes);
        return hand_out(total == SIZE_MAX ? NULL : calloc(1, total), total, bytes);
    }
    void *p = mp_xmalloc(bytes);
    memset(p, 0, bytes);
    return p;
}

void *mp_try_realloc(void *p, size_t n) {
    size_t total = with_header(n);
    if (!p) {
        hdr *h = total == SIZE_MAX ? NULL : alloc.malloc(total, alloc.ctx);
        return h ? hand_out(h, total, n) : NULL;
    }
    hdr *h = (hdr *)p - 1;
    bool linked = h->link.prev != NULL;
    unlink_block(h);
    hdr *q = total == SIZE_MAX ? NULL : alloc.realloc(h, total, alloc.ctx);
    if (!q) {
        if (linked) link_block(h); /* still the guard's to free */
        return NULL;
    }
    if (linked) return hand_out(q, total, n); /* linked again, advised if large */
    q->link.prev = q->link.next = NULL;
    advise(q, total);
    return q + 1;
}

void *mp_xrealloc(void *p, size_t n) {
    void *q = mp_try_realloc(p, n);
    if (!q) mp_out_of_memory(n);
    return q;
}

bool mp_guard_active(void) { return active != NULL; }

bool mp_guard_own_fd(int fd) {
    if (!active || active->n_fds == GUARD_FDS) return false;
    active->fds[active->n_fds++] = fd;
    return true;
}

void mp_guard_disown_fd(int fd) {
    for (uint32_t i = 0; active && i < active->n_fds; i++)
        if (active->fds[i] == fd) {
            active->fds[i] = active->fds[--active->n_fds];
            return;
        }
}

void mp_xfree(void *p) {
    if (!p) return;
    hdr *h = (hdr *)p - 1;
    unlink_block(h);
    if (active && std_alloc() && active->n_kept < BIG_KEPT) {
        size_t size = malloc_usable_size(h);
        if (size >= BIG_BLOCK) {
            active->kept[active->n_kept] = h;
            active->kept_size[active->n_kept++] = size;
            return;
        }
    }
    alloc.free(h, alloc.ctx);
}

/* The guard's blocks: freed (the work failed) or handed over (it worked). */
static void release(guard *g, bool free_them) {
    hdr *h = g->head.link.next;
    while (h != &g->head) {
        hdr *next = h->link.next;
        h->link.prev = h->link.next = NULL;
        if (free_them) alloc.free(h, alloc.ctx);
        h = next;
    }
}

int mp_guard_run(mp_err *err, int (*work)(void *ctx), void *ctx) {
    if (active) return work(ctx); /* nested: the outermost guard owns all */
    guard g;
    g.head.link.prev = g.head.link.next = &g.head;
    g.n_kept = 0;
    g.n_fds = 0;
    active = &g;
    int rc;
    if (setjmp(g.unwind) == 0) {
        rc = work(ctx);
        release(&g, false);
    } else {
        release(&g, true);
        for (uint32_t i = 0; i < g.n_fds; i++) close(g.fds[i]);
        rc = mp_err_set(err, MP_ENOMEM, "out of memory");
    }
    drop_kept(&g);
    active = NULL;
    return rc;
}
