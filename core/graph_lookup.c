/* graph_lookup.c - the graph parser's name lookups: a small table of
 * recently found tensors in front of the name map (graph_lookup.h says
 * why); and the count of a block's lines both parsers size arrays by. */
#include "graph_lookup.h"

/* The window's credit (graph_lookup.h): a find pays for WINDOW_PAYS
 * misses; without credit, one lookup in WINDOW_RETRY tries it. */
#define WINDOW_PAYS 4u
#define WINDOW_CREDIT_MAX 64u
#define WINDOW_RETRY 64u

void mp_lookup_init(mp_lookup *L) {
    for (size_t i = 0; i < sizeof L->recent / sizeof L->recent[0]; i++) L->recent[i] = (mp_lookup_hit){-1, 0};
    for (int i = 0; i < LOOKUP_STREAMS; i++) L->stream[i] = (mp_lookup_stream){{-1, 0}, -1};
    L->window_credit = WINDOW_CREDIT_MAX;
    L->window_skipped = 0;
}

static uint32_t recent_slot(uint32_t hash) { return hash >> (32 - LOOKUP_RECENT_BITS); }

/* Whether guess h is the tensor called s[0..len) (with that hash) in g.
 * strncmp stops at the end of the tensor's name, which may be shorter. */
static bool is_named(const mp_lookup_graph *g, mp_lookup_hit h, const char *s, size_t len,
                     uint32_t hash) {
    if (h.t < 0 || h.hash != hash || (uint32_t)h.t >= g->n_tensors) return false;
    const char *name = g->tensors[h.t].name;
    return strncmp(name, s, len) == 0 && name[len] == 0;
}

/* The tensor after t, with its name's hash, or -1 when not declared yet. */
static mp_lookup_hit after(const mp_lookup_graph *g, int32_t t) {
    if (t < 0 || (uint32_t)t + 1 >= g->n_tensors) return (mp_lookup_hit){-1, 0};
    const char *name = g->tensors[t + 1].name;
    return (mp_lookup_hit){t + 1, mp_strmap_hash(name, strlen(name))};
}

/* Stream i found t: it moves to the front, predicting the tensor after t. */
static void advance(mp_lookup *L, const mp_lookup_graph *g, int i, int32_t t) {
    for (; i > 0; i--) L->stream[i] = L->stream[i - 1];
    L->stream[0] = (mp_lookup_stream){after(g, t), t};
}

/* A guess without the map: a stream's next tensor (-2 when there is none
 * and the map is to be asked), updating the streams. */
static int32_t from_streams(mp_lookup *L, const mp_lookup_graph *g, const char *s, size_t len,
                            uint32_t hash) {
    for (int i = 0; i < LOOKUP_STREAMS; i++) {
        mp_lookup_stream *st = &L->stream[i];
        if (st->next.t < 0 && st->last >= 0) st->next = after(g, st->last); /* declared since */
        if (!is_named(g, st->next, s, len, hash)) continue;
        int32_t t = st->next.t;
        advance(L, g, i, t);
        return t;
    }
    return -2;
}

/* Whether to hash the window for this lookup (graph_lookup.h). */
static bool window_worth(mp_lookup *L) {
    return L->window_credit > 0 || ++L->window_skipped % WINDOW_RETRY == 0;
}

/* The tensors declared just after the one found last, hashed into the
 * recent table (a later lookup may want them: a layer's weights are read
 * after its norm); the one called s[0..len), or -2. */
static int32_t from_window(mp_lookup *L, const mp_lookup_graph *g, const char *s, size_t len,
                           uint32_t hash) {
    int32_t last = L->stream[0].last;
    for (int32_t k = 1; last >= 0 && k <= LOOKUP_WINDOW && (uint32_t)last + k < g->n_tensors; k++) {
        const char *name = g->tensors[last + k].name;
        mp_lookup_hit h = {last + k, mp_strmap_hash(name, strlen(name))};
        L->recent[recent_slot(h.hash)] = h;
        if (is_named(g, h, s, len, hash)) {
            L->window_credit += WINDOW_PAYS;
            if (L->window_credit > WINDOW_CREDIT_MAX) L->window_credit = WINDOW_CREDIT_MAX;
            return h.t;
        }
    }
    if (L->window_credit) L->window_credit--;
    return -2;
}

int32_t mp_lookup_find(mp_lookup *L, const mp_lookup_graph *g, const char *s, size_t len) {
    uint32_t hash = mp_strmap_hash(s, len);
    mp_lookup_hit *r = &L->recent[recent_slot(hash)];
    if (is_named(g, *r, s, len, hash)) return r->t; /* read again: not a stream's step */
    int32_t t = from_streams(L, g, s, len, hash);
    if (t == -2) {
        t = window_worth(L) ? from_window(L, g, s, len, hash) : -2;
        if (t == -2) t = mp_strmap_get_hashed(g->names, s, len, hash);
        if (t >= 0) advance(L, g, LOOKUP_STREAMS - 1, t); /* a new stream, in the oldest's place */
    }
    if (t >= 0) *r = (mp_lookup_hit){t, hash};
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

/* The first word of the line s..e: blanks skipped, up to a blank, a
 * comment or a CR (empty when there is none). */
static mp_tok first_word(const char *s, const char *e) {
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    const char *b = s;
    while (s < e && *s != ' ' && *s != '\t' && *s != '#' && *s != '\r') s++;
    return (mp_tok){b, (size_t)(s - b)};
}

typedef struct block_count {
    mp_tok words[2];
    size_t *n;
} block_count;

/* Short words: compared in line, not by a call to memcmp. */
static bool same_word(mp_tok a, mp_tok b) {
    if (a.n != b.n) return false;
    for (size_t i = 0; i < a.n; i++)
        if (a.s[i] != b.s[i]) return false;
    return true;
}

/* The counted words first: nearly every line is one of them. */
static bool count_line(void *ctx, const char *s, const char *e) {
    block_count *c = ctx;
    mp_tok w = first_word(s, e);
    if (same_word(w, c->words[0])) c->n[0]++;
    else if (same_word(w, c->words[1])) c->n[1]++;
    else if (mp_tok_is(w, "end") || mp_tok_is(w, "graph")) return false;
    return true;
}

void mp_count_block_lines(const mp_lines *L, const char *const words[2], size_t n[2]) {
    block_count c = {{{words[0], strlen(words[0])}, {words[1], strlen(words[1])}}, n};
    n[0] = n[1] = 0;
    mp_lines_ahead(L, count_line, &c);
}
