/* graph_lookup.c - the graph parser's name lookups: a small table of
 * recently found tensors in front of the name map (graph_lookup.h says
 * why). */
#include "graph_lookup.h"

void mp_lookup_init(mp_lookup *L) {
    memset(L->recent, 0xff, sizeof L->recent);
    L->last = -1;
}

static uint32_t recent_slot(uint32_t hash) { return hash >> (32 - LOOKUP_RECENT_BITS); }

/* Tensor t of g, when it is called s[0..len).  strncmp stops at the end of
 * the tensor's name, which may be shorter than len. */
static bool is_named(const mp_lookup_graph *g, int32_t t, const char *s, size_t len) {
    if (t < 0 || (uint32_t)t >= g->n_tensors) return false;
    const char *name = g->tensors[t].name;
    return strncmp(name, s, len) == 0 && name[len] == 0;
}

/* A guess without the map: the tensor found last with this hash slot, or
 * the one after the tensor found last; -1 when neither is the name. */
static int32_t guess(const mp_lookup *L, const mp_lookup_graph *g, const char *s, size_t len,
                     uint32_t hash) {
    int32_t t = L->recent[recent_slot(hash)];
    if (is_named(g, t, s, len)) return t;
    if (L->last >= 0 && is_named(g, L->last + 1, s, len)) return L->last + 1;
    return -1;
}

int32_t mp_lookup_find(mp_lookup *L, const mp_lookup_graph *g, const char *s, size_t len) {
    uint32_t hash = mp_strmap_hash(s, len);
    int32_t t = guess(L, g, s, len, hash);
    if (t < 0) t = mp_strmap_get_hashed(g->names, s, len, hash);
    if (t >= 0) {
        L->recent[recent_slot(hash)] = t;
        L->last = t;
    }
    return t;
}

typedef struct name_source {
    const mp_tensor *tensors;
    uint32_t from;
} name_source;

static void name_entry(void *ctx, size_t k, mp_strmap_entry *e) {
    const name_source *src = ctx;
    const char *name = src->tensors[src->from + k].name;
    size_t len = strlen(name);
    *e = (mp_strmap_entry){name, mp_strmap_hash(name, len), (int32_t)(src->from + k)};
}

int32_t mp_lookup_add_names(mp_strmap *m, const mp_tensor *tensors, uint32_t from, uint32_t to,
                            int32_t *prev) {
    name_source src = {tensors, from};
    return mp_strmap_put_all(m, to - from, name_entry, &src, prev);
}

mp_tok mp_first_word(const char *s, const char *e) {
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    const char *b = s;
    while (s < e && *s != ' ' && *s != '\t' && *s != '#' && *s != '\r') s++;
    return (mp_tok){b, (size_t)(s - b)};
}
