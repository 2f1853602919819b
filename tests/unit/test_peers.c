/* test_peers.c - the peer packers (peers/) against the scans they
 * reproduce: TFLite Micro's lowest fit and XLA's best fit over every
 * placed item, written here as 1.8.0 ran them (O(n^2)).  1.8.1 answers
 * the same from an index over time and from the free gaps when every
 * placed item is live with the new one (issue 45, B8): every offset must
 * stay the scan's, on random item lists of every shape the index treats
 * apart (few live at once, all live at once, a mix; empty items; fixed
 * items; below and above the index's threshold). */
#include "helpers.h"
#include "peers.h"

/* ------------------------------------------------- the scans, as they were */

static bool ref_before(const pk_item *v, uint32_t a, uint32_t b) {
    return v[a].offset < v[b].offset || (v[a].offset == v[b].offset && a < b);
}

static uint64_t ref_lowest(const pk_item *v, const uint32_t *placed, uint32_t n, const pk_item *it) {
    uint64_t at = 0;
    for (uint32_t j = 0; j < n; j++) {
        const pk_item *p = &v[placed[j]];
        if (!mp_pr_overlap(it, p)) continue;
        uint64_t end = p->offset + p->size;
        if (at + it->size > p->offset && end > at) at = end;
    }
    return at;
}

static uint64_t ref_best(const pk_item *v, const uint32_t *placed, uint32_t n, const pk_item *it) {
    uint64_t free_from = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
    for (uint32_t j = 0; j < n; j++) {
        const pk_item *p = &v[placed[j]];
        if (!mp_pr_overlap(it, p)) continue;
        if (p->offset > free_from) {
            uint64_t gap = p->offset - free_from;
            if (gap >= it->size && gap < best_gap) best = free_from, best_gap = gap;
        }
        if (p->offset + p->size > free_from) free_from = p->offset + p->size;
    }
    return best != UINT64_MAX ? best : free_from;
}

static void ref_pack(pk_item *v, uint32_t n, bool best) {
    uint32_t *order = mp_xmalloc((n + 1) * sizeof *order), *placed = mp_xmalloc((n + 1) * sizeof *placed), np = 0;
    uint32_t k = mp_pr_order_by_size(v, n, order);
    for (uint32_t pass = 0; pass < 2; pass++)
        for (uint32_t q = 0; q < (pass ? k : n); q++) {
            uint32_t i = pass ? order[q] : q;
            if (!pass && !v[i].fixed) continue;
            if (pass) v[i].offset = best ? ref_best(v, placed, np, &v[i]) : ref_lowest(v, placed, np, &v[i]);
            uint32_t at = np;
            while (at && ref_before(v, i, placed[at - 1])) at--;
            memmove(placed + at + 1, placed + at, (np - at) * sizeof *placed);
            placed[at] = i;
            np++;
        }
    mp_xfree(order);
    mp_xfree(placed);
}

/* ------------------------------------------------------------ the shapes */

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Shape 0: few live (chains, short lives); 1: all live at the last time;
 * 2: a mix; 3: inverted lifetimes among them (the plain scan). */
static void make_items(pk_item *v, uint32_t n, int shape, uint64_t *s) {
    for (uint32_t i = 0; i < n; i++) {
        int32_t start = shape == 1 ? (int32_t)(next(s) % (n + 1)) : (int32_t)(i + next(s) % 3);
        int32_t len = shape == 0 ? (int32_t)(next(s) % 4) : shape == 1 ? (int32_t)(n + 2) - start
                                                           : (int32_t)(next(s) % (next(s) % 8 ? 6 : n + 1));
        uint64_t size = next(s) % 10 == 0 ? 0 : 16 * (1 + next(s) % (next(s) % 2 ? 8 : 512));
        v[i] = (pk_item){size, start, start + len, false, 0};
        if (shape == 3 && next(s) % 50 == 0) v[i].end = start - 1;
        if (next(s) % 40 == 0) v[i].fixed = true, v[i].offset = 16 * (next(s) % 64);
    }
}

Test(peers, every_offset_is_the_scans_own) {
    uint64_t s = 0x9e3779b97f4a7c15ull;
    /* 9,000: past the 8,192 placed items the index keeps in order too */
    static const uint32_t sizes[] = {1, 5, 40, 63, 64, 65, 200, 1000, 2500, 9000};
    for (uint32_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (int shape = 0; shape < 4; shape++)
            for (int rep = 0; rep < (sizes[z] > 1000 ? 1 : 3); rep++) {
                if (sizes[z] > 2500 && shape != 2) continue;
                uint32_t n = sizes[z];
                pk_item *a = mp_xmalloc(n * sizeof *a), *b = mp_xmalloc(n * sizeof *b);
                make_items(a, n, shape, &s);
                for (int best = 0; best < 2; best++) {
                    memcpy(b, a, n * sizeof *a);
                    uint64_t peak = best ? mp_bestfit_pack(a, n) : mp_tflm_pack(a, n);
                    ref_pack(b, n, best);
                    for (uint32_t i = 0; i < n; i++)
                        cr_assert_eq(a[i].offset, b[i].offset, "%s, %u items, shape %d: item %u at %llu, the scan's %llu",
                                     best ? "bestfit" : "tflm", n, shape, i, (unsigned long long)a[i].offset,
                                     (unsigned long long)b[i].offset);
                    cr_assert_eq(peak, mp_pr_peak(b, n));
                    memcpy(a, b, n * sizeof *a);
                    for (uint32_t i = 0; i < n; i++)
                        if (!a[i].fixed) a[i].offset = 0;
                }
                mp_xfree(a);
                mp_xfree(b);
            }
}
