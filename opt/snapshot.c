/* snapshot.c - some graphs' layouts saved and put back.
 *
 * opt lays a program out with whole cond blocks and, where a block can
 * split, again with split ones (split.c), and keeps the smaller.  On a
 * program whose split layout is far below anything whole blocks can
 * reach, laying the whole blocks out in full first is wasted work (half
 * of `mixed`-10^6's layout time), so opt.c tries the split layout first
 * and resumes the whole blocks' only where the split one cannot rule
 * them out.  Resuming needs the whole blocks' quick layouts of the
 * graphs the split changed: this file keeps them.
 *
 * What a layout of graph G writes (layout.c), all of it saved: per
 * buffer local, split, lb, hlb, tlb, full; per tensor loff; per node
 * that runs sub-graphs its block offsets, or none.  base and ebase are
 * not: place_bases sets them again before every use. */
#include "opt_internal.h"

/* One graph's layout, in one block: per buffer local, split, lb, hlb,
 * tlb (n_buf + 1 each); per tensor loff; per entry of cf_nodes whether
 * it has a block, and the blocks it has (2 (n_buf + 1) each); full. */
typedef struct saved_graph {
    uint32_t gi;
    uint64_t *words;
} saved_graph;

struct mp_opt_snapshot {
    mp_arena *A; /* every copy */
    saved_graph *v;
    uint32_t n;
};

/* n bytes from the graph to the saved block, or back (to_graph); nothing
 * while the block is only being sized (saved NULL). */
static void move(void *graph, void *saved, size_t n, bool to_graph) {
    if (saved) memcpy(to_graph ? graph : saved, to_graph ? saved : graph, n);
}

/* Graph G's layout into the saved words w, or back (to_graph); with w
 * NULL only the words it takes, as G is now.  Returns that count.  Put
 * back, a block made since (the split layout placed a node's escaping
 * values) goes again: a node without one has its sub-graphs at the
 * graph's base, not at offset 0 of a block. */
static size_t transfer(ograph *G, uint32_t n_tensors, uint64_t *w, bool to_graph) {
    size_t nb = (size_t)G->n_buf + 1, at = 0;
    uint64_t *const arrays[6] = {G->local, G->split, G->lb, G->hlb, G->tlb, G->loff};
    const size_t lens[6] = {nb, nb, nb, nb, nb, (size_t)n_tensors + 1};
    for (int k = 0; k < 6; k++) {
        move(arrays[k], w ? w + at : NULL, lens[k] * sizeof *w, to_graph);
        at += lens[k];
    }
    for (uint32_t j = 0; j < G->n_cf; j++) {
        uint64_t **b = &G->block[G->cf_nodes[j]];
        bool had = w && to_graph ? w[at] != 0 : *b != NULL;
        if (w && !to_graph) w[at] = had;
        if (w && to_graph && !had && *b) { /* made by the split layout: none before */
            mp_og_free(G, *b);
            *b = NULL;
        }
        at++;
        if (!had) continue;
        move(*b, w ? w + at : NULL, 2 * nb * sizeof *w, to_graph); /* blocks are never freed */
        at += 2 * nb;
    }
    move(G->full, w ? w + at : NULL, nb, to_graph);
    return at + (nb + 7) / 8;
}

static void save(const octx *c, uint32_t gi, saved_graph *s, mp_arena *A) {
    ograph *G = &c->g[gi];
    uint32_t nt = c->prog->graphs[gi].n_tensors;
    s->gi = gi;
    s->words = mp_arena_alloc_aligned(A, transfer(G, nt, NULL, false) * sizeof *s->words, sizeof *s->words);
    (void)transfer(G, nt, s->words, false);
}

mp_opt_snapshot *mp_opt_snapshot_take(const octx *c, const uint8_t *which) {
    mp_opt_snapshot *s = mp_xcalloc(1, sizeof *s);
    s->A = mp_arena_new();
    uint32_t n = 0;
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++) n += which[gi] && c->g[gi].done;
    s->v = mp_arena_alloc(s->A, ((size_t)n + 1) * sizeof *s->v);
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++)
        if (which[gi] && c->g[gi].done) save(c, gi, &s->v[s->n++], s->A);
    return s;
}

void mp_opt_unsplit(octx *c) {
    c->split = false;
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++) {
        ograph *G = &c->g[gi];
        if (!G->esc) continue;
        mp_og_free(G, G->esc);
        G->esc = NULL;
    }
}

void mp_opt_snapshot_restore(octx *c, mp_opt_snapshot *s) {
    for (uint32_t k = 0; k < s->n; k++)
        (void)transfer(&c->g[s->v[k].gi], c->prog->graphs[s->v[k].gi].n_tensors, s->v[k].words, true);
    mp_opt_unsplit(c);
    mp_opt_snapshot_free(s);
}

void mp_opt_snapshot_free(mp_opt_snapshot *s) {
    if (!s) return;
    mp_arena_free(s->A);
    mp_xfree(s);
}
