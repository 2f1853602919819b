/* graph_lookup.h - the parsers' name lookups and line counts (core/graph_lookup.c).
 *
 * At 10^7 tensors a graph's name map is 0.27 GB, so each lookup is a cache
 * miss on the map and another on the name it compares against.  Most
 * names a node reads were written by a node a few lines earlier (a small
 * table of recently found tensors, by hash), or are the tensor declared
 * after one found a little earlier: a node's results, the weights read
 * layer by layer.  A few streams follow those runs.  Guesses are checked
 * on the hash before the name is read, so a wrong one costs no cache
 * miss.  Before the map, the few tensors declared after the one found
 * last are hashed into the recent table (a window): a layer's first node
 * reads tensors declared a few lines past the last one found (its norm,
 * its weights, its cache), which no stream predicts.  Of the lookups of
 * a 10^7-tensor transformer, 38% reach the map with the recent table and
 * one stream, 7.6% with four streams, 3.0% with the window (graph load
 * 10% less user time; the `mixed` profile's 19% fall to 17%).  See
 * docs/notes/optimized.md.  A mere hint: a lookup's answer never depends on it.
 * (Declarations reach the map in batches, graph_parse.c's add_names.) */
#ifndef MP_GRAPH_LOOKUP_H
#define MP_GRAPH_LOOKUP_H

#include "internal.h"

#define LOOKUP_RECENT_BITS 10
#define LOOKUP_STREAMS 4
#define LOOKUP_WINDOW 8 /* tensors hashed past the one found last */

/* A tensor found and its name's hash (a guess is rejected on the hash
 * before its name, most likely not in the cache, is read). */
typedef struct mp_lookup_hit {
    int32_t t;     /* a tensor index, or -1 */
    uint32_t hash; /* its name's hash */
} mp_lookup_hit;

/* A stream: lookups of one tensor after another in declaration order
 * (a node's results, the weights layer by layer).  next is the tensor
 * after the one the stream found last, with its hash, computed while
 * that tensor's neighbourhood is in the cache; -1 when not yet declared. */
typedef struct mp_lookup_stream {
    mp_lookup_hit next;
    int32_t last; /* the tensor the stream found last */
} mp_lookup_stream;

typedef struct mp_lookup {
    mp_lookup_hit recent[1u << LOOKUP_RECENT_BITS]; /* by a name's hash */
    mp_lookup_stream stream[LOOKUP_STREAMS];        /* most recently used first */
    /* The window is hashed while it pays: a find adds credit, a miss takes
     * one away; without credit it is tried once in a while only, so that a
     * graph whose names have no such order pays a few hashes, not
     * LOOKUP_WINDOW, per lookup that reaches the map. */
    uint32_t window_credit, window_skipped;
} mp_lookup;

/* The graph whose names are looked up: its map and tensors. */
typedef struct mp_lookup_graph {
    const mp_strmap *names;
    const mp_tensor *tensors;
    uint32_t n_tensors;
} mp_lookup_graph;

/* The lines after the last one L returned whose first word is words[0]
 * or words[1], counted into n[0] and n[1] up to the block's `end` (or the
 * next `graph` line).  Both parsers size a block's arrays by it, once:
 * an array grown by doubling is moved by the kernel and loses its huge
 * pages. */
void mp_count_block_lines(const mp_lines *L, const char *const words[2], size_t n[2]);
void mp_lookup_init(mp_lookup *L);
/* The index of the tensor called s[0..len) in g, or -1. */
int32_t mp_lookup_find(mp_lookup *L, const mp_lookup_graph *g, const char *s, size_t len);

/* The names of tensors[from, to) into m (as values, their indices) at
 * once: mp_strmap_put_all, whose answer this returns. */
int32_t mp_lookup_add_names(mp_strmap *m, const mp_tensor *tensors, uint32_t from, uint32_t to,
                            int32_t *prev);

#endif
