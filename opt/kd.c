/* kd.c - the priority structure of the bottom-up greedy.
 *
 * Each unplaced item i is a point (start_i, end_i) with a key: the lowest
 * offset it can take, i.e. the highest top among placed items that
 * overlap it in time.  Placing item j at offset o raises, to o + size_j,
 * the key of every item overlapping j: the points with start <= end_j and
 * end >= start_j, a quadrant.  A 2-d tree over the points answers the
 * smallest (key, rank) at its root and applies "key = max(key, v)" to a
 * quadrant lazily: a subtree wholly inside whose keys are all <= v becomes
 * uniform in one step (its smallest key is then v with its smallest rank);
 * one whose keys are all >= v is left alone; only mixed subtrees are
 * entered ("segment tree beats" on a k-d tree).  Keys stay exact, so the
 * greedy is exact, without re-examining stale entries. */
#include "internal.h"

#include "kd.h"

typedef struct kkey {
    uint64_t v;
    uint32_t rank, id; /* id: the item itself */
} kkey;

typedef struct knode {
    int32_t min_s, max_s, min_e, max_e; /* bounding box of alive points */
    kkey min;            /* smallest (key, rank) among alive points below */
    uint64_t max;        /* largest key among alive points below */
    uint32_t min_rank;   /* smallest rank among alive points below */
    uint32_t min_rank_id;
    uint64_t tag;        /* pending "key = max(key, tag)"; 0: none */
    uint32_t tag_who;
    uint32_t alive;
} knode;

struct kd {
    uint32_t n;
    uint32_t *pt;      /* node -> item (the point stored at that node) */
    uint32_t *node_of; /* item -> node */
    const int32_t *s, *e;
    const uint32_t *rank;
    uint64_t *key;     /* materialised key per item (exact once pushed) */
    uint32_t *who;
    uint8_t *dead;
    knode *t;          /* nodes 1..: node k has children 2k, 2k+1 */
    uint32_t size;
    uint64_t work;
};

static bool key_less(kkey a, kkey b) { return a.v != b.v ? a.v < b.v : a.rank < b.rank; }

/* Build: node k holds the median of its range along s (even depth) or e. */
typedef struct kbuild {
    kd *k;
    uint32_t *items;
} kbuild;

static int32_t coord(const kd *k, uint32_t item, int dim) { return dim ? k->e[item] : k->s[item]; }

static void select_nth(kd *k, uint32_t *v, uint32_t n, uint32_t nth, int dim) {
    uint32_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int32_t pivot = coord(k, v[(lo + hi) / 2], dim);
        uint32_t i = lo, j = hi;
        while (i <= j) {
            while (coord(k, v[i], dim) < pivot) i++;
            while (coord(k, v[j], dim) > pivot) j--;
            if (i <= j) {
                uint32_t t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (nth <= j) hi = j;
        else if (nth >= i) lo = i;
        else break;
    }
}

static void pull(kd *k, uint32_t x);

static void build(kd *k, uint32_t x, uint32_t *v, uint32_t n, int dim) {
    if (!n) return;
    uint32_t mid = n / 2;
    select_nth(k, v, n, mid, dim);
    k->pt[x] = v[mid];
    k->node_of[v[mid]] = x;
    build(k, 2 * x, v, mid, !dim);
    build(k, 2 * x + 1, v + mid + 1, n - mid - 1, !dim);
    pull(k, x);
}

static bool has(const kd *k, uint32_t x) { return x < k->size && k->pt[x] != UINT32_MAX; }

/* Recompute node x from its own point and its children. */
static void pull(kd *k, uint32_t x) {
    knode *a = &k->t[x];
    a->alive = 0;
    a->min = (kkey){UINT64_MAX, UINT32_MAX, UINT32_MAX};
    a->max = 0;
    a->min_rank = UINT32_MAX;
    a->min_rank_id = UINT32_MAX;
    a->min_s = a->min_e = INT32_MAX;
    a->max_s = a->max_e = INT32_MIN;
    uint32_t p = k->pt[x];
    if (!k->dead[p]) {
        a->alive = 1;
        a->min = (kkey){k->key[p], k->rank[p], p};
        a->max = k->key[p];
        a->min_rank = k->rank[p];
        a->min_rank_id = p;
        a->min_s = a->max_s = k->s[p];
        a->min_e = a->max_e = k->e[p];
    }
    for (uint32_t c = 2 * x; c <= 2 * x + 1; c++) {
        if (!has(k, c) || !k->t[c].alive) continue;
        const knode *b = &k->t[c];
        a->alive += b->alive;
        if (key_less(b->min, a->min)) a->min = b->min;
        if (b->max > a->max) a->max = b->max;
        if (b->min_rank < a->min_rank) a->min_rank = b->min_rank, a->min_rank_id = b->min_rank_id;
        if (b->min_s < a->min_s) a->min_s = b->min_s;
        if (b->max_s > a->max_s) a->max_s = b->max_s;
        if (b->min_e < a->min_e) a->min_e = b->min_e;
        if (b->max_e > a->max_e) a->max_e = b->max_e;
    }
}

/* pull for a change of keys alone (raise_in, apply): which points are
 * alive, their boxes and ranks stay, so only the smallest and largest
 * keys are recomputed; the same values pull would give. */
static void pull_keys(kd *k, uint32_t x) {
    knode *a = &k->t[x];
    uint32_t p = k->pt[x];
    if (!k->dead[p]) {
        a->min = (kkey){k->key[p], k->rank[p], p};
        a->max = k->key[p];
    } else {
        a->min = (kkey){UINT64_MAX, UINT32_MAX, UINT32_MAX};
        a->max = 0;
    }
    for (uint32_t c = 2 * x; c <= 2 * x + 1; c++) {
        if (!has(k, c) || !k->t[c].alive) continue;
        const knode *b = &k->t[c];
        if (key_less(b->min, a->min)) a->min = b->min;
        if (b->max > a->max) a->max = b->max;
    }
}

static void apply(kd *k, uint32_t x, uint64_t v, uint32_t who);

static void push(kd *k, uint32_t x) {
    knode *a = &k->t[x];
    if (!a->tag) return;
    uint64_t v = a->tag;
    uint32_t who = a->tag_who;
    a->tag = 0;
    uint32_t p = k->pt[x];
    if (!k->dead[p] && k->key[p] < v) {
        k->key[p] = v;
        k->who[p] = who;
    }
    for (uint32_t c = 2 * x; c <= 2 * x + 1; c++)
        if (has(k, c) && k->t[c].alive) apply(k, c, v, who);
}

/* key = max(key, v) for every alive point below x. */
static void apply(kd *k, uint32_t x, uint64_t v, uint32_t who) {
    knode *a = &k->t[x];
    k->work++;
    if (!a->alive || v <= a->min.v) return; /* nothing below is lower */
    if (v >= a->max) { /* all below become v: uniform */
        a->min = (kkey){v, a->min_rank, a->min_rank_id};
        a->max = v;
        if (v > a->tag) a->tag = v, a->tag_who = who;
        return;
    }
    push(k, x);
    uint32_t p = k->pt[x];
    if (!k->dead[p] && k->key[p] < v) k->key[p] = v, k->who[p] = who;
    for (uint32_t c = 2 * x; c <= 2 * x + 1; c++)
        if (has(k, c)) apply(k, c, v, who);
    pull_keys(k, x);
}

/* key = max(key, v) for alive points with start <= e and end >= s. */
static void raise_in(kd *k, uint32_t x, int32_t s, int32_t e, uint64_t v, uint32_t who) {
    if (!has(k, x)) return;
    knode *a = &k->t[x];
    k->work++;
    if (!a->alive || v <= a->min.v) return;
    if (a->min_s > e || a->max_e < s) return; /* no point inside */
    if (a->max_s <= e && a->min_e >= s) {     /* every point inside */
        apply(k, x, v, who);
        return;
    }
    push(k, x);
    uint32_t p = k->pt[x];
    if (!k->dead[p] && k->s[p] <= e && k->e[p] >= s && k->key[p] < v) k->key[p] = v, k->who[p] = who;
    raise_in(k, 2 * x, s, e, v, who);
    raise_in(k, 2 * x + 1, s, e, v, who);
    pull_keys(k, x);
}

kd *mp_kd_new(const int32_t *s, const int32_t *e, const uint32_t *rank, uint32_t n) {
    kd *k = mp_xcalloc(1, sizeof *k);
    k->n = n;
    k->s = s;
    k->e = e;
    k->rank = rank;
    /* the median split gives a subtree of m points children of at most
     * m / 2 each, so depth floor(log2 n) + 1 and every node below the
     * least power of 2 above n (a bottom-up of 5,000 items zeroed 2 MiB of
     * nodes, four times the tree, before each run) */
    k->size = 2;
    while (k->size <= n) k->size <<= 1;
    k->t = mp_xcalloc(k->size, sizeof *k->t);
    k->pt = mp_xmalloc(k->size * sizeof *k->pt);
    memset(k->pt, 0xff, k->size * sizeof *k->pt);
    k->node_of = mp_xmalloc((n + 1) * sizeof *k->node_of);
    k->key = mp_xcalloc(n + 1, sizeof *k->key);
    k->who = mp_xmalloc((n + 1) * sizeof *k->who);
    memset(k->who, 0xff, (n + 1) * sizeof *k->who);
    k->dead = mp_xcalloc(n + 1, 1);
    uint32_t *v = mp_xmalloc((n + 1) * sizeof *v);
    for (uint32_t i = 0; i < n; i++) v[i] = i;
    build(k, 1, v, n, 0);
    mp_xfree(v);
    return k;
}

void mp_kd_free(kd *k) {
    if (!k) return;
    mp_xfree(k->t);
    mp_xfree(k->pt);
    mp_xfree(k->node_of);
    mp_xfree(k->key);
    mp_xfree(k->who);
    mp_xfree(k->dead);
    mp_xfree(k);
}

bool mp_kd_min(kd *k, uint32_t *item, uint64_t *key) {
    if (!k->n || !k->t[1].alive) return false;
    *item = k->t[1].min.id;
    *key = k->t[1].min.v;
    return true;
}

/* Remove an item: push pending tags down its path, then pull back up.
 * Returns the item that last set its key (UINT32_MAX: none). */
uint32_t mp_kd_remove(kd *k, uint32_t item) {
    uint32_t path[80], depth = 0;
    for (uint32_t x = k->node_of[item]; x; x >>= 1) path[depth++] = x;
    for (uint32_t d = depth; d-- > 0;) push(k, path[d]);
    k->dead[item] = 1;
    for (uint32_t d = 0; d < depth; d++) pull(k, path[d]);
    k->work += depth;
    return k->who[item];
}

void mp_kd_raise(kd *k, int32_t s, int32_t e, uint64_t v, uint32_t who) { raise_in(k, 1, s, e, v, who); }

uint64_t mp_kd_work(const kd *k) { return k->work; }
