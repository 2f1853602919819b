/* rankset.c - a set of ranks 0 .. n-1 with neighbour queries: a bitmap and
 * a summary bit per word above it, level on level, up to one word.
 *
 * Invariant: bit j of level l + 1 is set exactly when word j of level l is
 * not zero.  A query climbs to the first level with a set bit on its side
 * and descends along the highest (or lowest) set bits: O(log64 n) word
 * operations, and the whole set is n / 8 bytes, so at 10^7 ranks it stays
 * in cache where a tree of the same members does not. */
#include "verify.h"

struct v_rankset {
    uint64_t *w[V_RANKSET_LEVELS];
    int levels;
};

v_rankset *mp_v_rankset_new(uint32_t n) {
    v_rankset *s = mp_xcalloc(1, sizeof *s);
    uint64_t bits = n ? n : 1;
    do {
        uint64_t words = (bits + 63) / 64;
        s->w[s->levels++] = mp_xcalloc(words, sizeof(uint64_t));
        bits = words;
    } while (bits > 1);
    return s;
}

void mp_v_rankset_free(v_rankset *s) {
    if (!s) return;
    for (int l = 0; l < s->levels; l++) mp_xfree(s->w[l]);
    mp_xfree(s);
}

void mp_v_rankset_add(v_rankset *s, uint32_t r) {
    uint64_t at = r;
    for (int l = 0; l < s->levels; l++, at >>= 6) {
        uint64_t *word = &s->w[l][at >> 6], was = *word;
        *word = was | UINT64_C(1) << (at & 63);
        if (was) return; /* the levels above know this word already */
    }
}

void mp_v_rankset_remove(v_rankset *s, uint32_t r) {
    uint64_t at = r;
    for (int l = 0; l < s->levels; l++, at >>= 6) {
        uint64_t *word = &s->w[l][at >> 6];
        *word &= ~(UINT64_C(1) << (at & 63));
        if (*word) return; /* still not empty: the levels above stay */
    }
}

/* The largest member below r, or -1. */
int64_t mp_v_rankset_below(const v_rankset *s, uint32_t r) {
    uint64_t at = r;
    int l = 0;
    for (;; l++, at >>= 6) {
        if (l == s->levels) return -1;
        uint64_t word = s->w[l][at >> 6] & ((UINT64_C(1) << (at & 63)) - 1);
        if (word) {
            at = (at & ~UINT64_C(63)) | (uint64_t)(63 - __builtin_clzll(word));
            break;
        }
    }
    while (l-- > 0) at = at << 6 | (uint64_t)(63 - __builtin_clzll(s->w[l][at]));
    return (int64_t)at;
}

/* The smallest member above r, or -1. */
int64_t mp_v_rankset_above(const v_rankset *s, uint32_t r) {
    uint64_t at = r;
    int l = 0;
    for (;; l++, at >>= 6) {
        if (l == s->levels) return -1;
        /* bits above at & 63: 2 << 63 is 0 in 64 bits, leaving none */
        uint64_t word = s->w[l][at >> 6] & ~((UINT64_C(2) << (at & 63)) - 1);
        if (word) {
            at = (at & ~UINT64_C(63)) | (uint64_t)__builtin_ctzll(word);
            break;
        }
    }
    while (l-- > 0) at = at << 6 | (uint64_t)__builtin_ctzll(s->w[l][at]);
    return (int64_t)at;
}
