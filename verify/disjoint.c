/* disjoint.c - the overlap sweep's fast path for a valid buffer.
 *
 * A valid plan's live allocations in one buffer rarely share a byte (only
 * members of an in-place family may), and when no two do, the live set,
 * in order of offset, is a chain lo_1 <= hi_1 <= lo_2 <= hi_2 ...  A new
 * item then shares a byte with some live one exactly when it does with its
 * nearest neighbour on either side: the one before ends last of those
 * before it, the one after starts first of those after it.  So the sweep
 * needs no interval tree, only the neighbours by offset: each item gets its
 * rank by (offset, index) from one radix sort, and the live ranks are a
 * bitmap (v_rankset).  At 10^7 allocations the tree held half a million
 * live items, 20 MB walked at random; the bitmap is 1 MB.
 *
 * The first shared byte ends the fast path (false): the caller sweeps that
 * buffer again with the tree, which finds and reports exactly what it
 * always did.  So reports do not depend on this file, only their speed.
 * Members of an in-place family on exactly the same bytes are let share
 * them (twins); any other shared byte, within a family too, ends it. */
#include "overlap.h"

/* Runs shorter than this go to the tree, which is as fast there.  (Small,
 * so that the verifier's tests and its fuzz target, whose brute-force judge
 * takes up to 64 allocations, run this path and its fall-back too; at 16
 * and at 256 `verify` took the same time on deep- and many-conds-10^6.) */
#define DISJOINT_MIN_ITEMS 16

/* The words (lo >> shift) << wi | q, one per item, sorted by their offset
 * bits (stable: ties keep index order), in a block of at least n words
 * (*block, for the caller to free). */
static uint64_t *sorted_offsets(const v_item *it, uint32_t n, int shift, int wi, int wo, uint64_t **block) {
#define OFFSET_WORD(q) ((it[q].lo >> shift) << wi | (q))
    if (!mp_placed_sort_applies(n, wo)) {
        uint64_t *w = *block = mp_xmalloc((2 * (size_t)n + 1) * sizeof *w);
        for (uint32_t q = 0; q < n; q++) w[q] = OFFSET_WORD(q);
        return wo ? mp_sort_words(w, w + n, n, wi, wo) : w;
    }
    mp_placed_sort s; /* one array of n words instead of two (a million or more) */
    mp_placed_sort_begin(&s, n, wi, wo);
    for (uint32_t q = 0; q < n; q++) mp_placed_sort_count(&s, OFFSET_WORD(q));
    mp_placed_sort_counted(&s);
    for (uint32_t q = 0; q < n; q++) mp_placed_sort_place(&s, OFFSET_WORD(q));
    *block = s.words;
    return mp_placed_sort_finish(&s);
#undef OFFSET_WORD
}

bool mp_v_offset_ranks(const v_item *it, uint32_t n, v_ranks *r) {
    r->rank = r->who = NULL;
    if (n < DISJOINT_MIN_ITEMS) return false;
    uint64_t any = 0, top = 0;
    for (uint32_t q = 0; q < n; q++) any |= it[q].lo;
    int shift = any ? __builtin_ctzll(any) : 0;
    for (uint32_t q = 0; q < n; q++) top = it[q].lo >> shift > top ? it[q].lo >> shift : top;
    int wi = mp_bit_width(n - 1), wo = mp_bit_width(top);
    if (wi + wo > 64) return false;
    uint64_t *block, *sorted = sorted_offsets(it, n, shift, wi, wo, &block);
    /* who[r] over the block from its start: entry r is written to bytes
     * 4r.., at or before where sorted[r] was read (sorted is the block or
     * lies past its first n words) */
    uint32_t *who = (uint32_t *)(void *)block, index = (uint32_t)((UINT64_C(1) << wi) - 1);
    for (uint32_t k = 0; k < n; k++) who[k] = (uint32_t)(sorted[k] & index);
    r->who = mp_xrealloc(block, ((size_t)n + 1) * sizeof *who);
    r->rank = mp_xmalloc(((size_t)n + 1) * sizeof *r->rank);
    for (uint32_t k = 0; k < n; k++) r->rank[r->who[k]] = k;
    return true;
}

void mp_v_ranks_free(v_ranks *r) {
    mp_xfree(r->rank);
    mp_xfree(r->who);
    r->rank = r->who = NULL;
}

/* Twins: two allocations of one in-place family on the same bytes (an
 * in-place op's output where its input was).  They may be live together,
 * and the sweep reports nothing of them (overlap.c's clash). */
static bool twins(const v_item *x, const v_item *y) {
    return x->family >= 0 && x->family == y->family && x->lo == y->lo && x->hi == y->hi;
}

/* Whether live item x (rank r in s) shares a byte with a neighbour that is
 * not its twin.  Invariant, with twins counted as one: the live set is a
 * chain, so below a twin (same offset, same end) the next item is as far
 * from x as from the twin.  A twin is always below: it has x's offset and
 * was added before x, so its index, which breaks the tie, is smaller. */
static bool meets_neighbour(const v_item *it, const uint32_t *who, const v_rankset *s, uint32_t r,
                            const v_item *x) {
    int64_t b = mp_v_rankset_below(s, r), a = mp_v_rankset_above(s, r);
    return (b >= 0 && it[who[b]].hi > x->lo && !twins(&it[who[b]], x)) || (a >= 0 && it[who[a]].lo < x->hi);
}

bool mp_v_sweep_disjoint(const v_item *it, uint32_t n, const v_ending *by_end, uint32_t base,
                         const v_ranks *r) {
    v_rankset *s = mp_v_rankset_new(n);
    bool disjoint = true;
    /* the same retiring as the tree's sweep (overlap.c): an end before this
     * start leaves first; a removal of an item not yet added is a no-op in
     * both, and that item then stays to the end of the run in both */
    for (uint32_t i = 0, e = 0; i < n && disjoint; i++) {
        while (e < n && by_end[e].end < it[i].start) mp_v_rankset_remove(s, r->rank[by_end[e++].idx - base]);
        disjoint = it[i].lo <= it[i].hi && !meets_neighbour(it, r->who, s, r->rank[i], &it[i]);
        mp_v_rankset_add(s, r->rank[i]);
    }
    mp_v_rankset_free(s);
    return disjoint;
}
