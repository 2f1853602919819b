/* shrink.c - delta debugging on a graph file's text.
 *
 * Removes chunks of lines (halving the chunk size down to single lines),
 * then single tokens, then single items of in=/out= lists, keeping each
 * removal after which the failure persists, until nothing more can go.
 * The predicate decides what "persists" means (same failure, same
 * algorithm); candidates that no longer parse simply fail it. */
#include "internal.h"
#include "harness.h"
#include "files.h"

typedef struct lines {
    char **v;
    size_t n, cap;
} lines;

static void split_lines(const char *text, lines *L) {
    memset(L, 0, sizeof *L);
    const char *s = text;
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char *line = mp_xmalloc(n + 1);
        memcpy(line, s, n);
        line[n] = 0;
        MP_VEC_PUSH(L->v, L->n, L->cap, line);
        s += n + (e ? 1 : 0);
    }
}

/* Join the lines, leaving out [skip, skip + count). */
static char *join(const lines *L, size_t skip, size_t count, size_t *len) {
    mp_buf b;
    mp_buf_init(&b);
    for (size_t i = 0; i < L->n; i++) {
        if (i >= skip && i < skip + count) continue;
        mp_buf_puts(&b, L->v[i]);
        mp_buf_put(&b, "\n", 1);
    }
    *len = b.len;
    return b.data ? b.data : (mp_buf_put(&b, "", 0), b.data);
}

static void drop(lines *L, size_t at, size_t count) {
    for (size_t i = at; i < at + count; i++) mp_xfree(L->v[i]);
    memmove(L->v + at, L->v + at + count, (L->n - at - count) * sizeof *L->v);
    L->n -= count;
}

typedef struct shrinker {
    lines L;
    mp_shrink_pred pred;
    void *ctx;
    uint32_t tries, max_tries;
} shrinker;

static bool try_text(shrinker *s, const char *text, size_t len) {
    if (s->tries >= s->max_tries) return false;
    s->tries++;
    return s->pred(text, len, s->ctx);
}

static bool pass_lines(shrinker *s) {
    bool any = false;
    for (size_t chunk = s->L.n / 2; chunk >= 1; chunk /= 2) {
        for (size_t at = 1; at + chunk <= s->L.n;) { /* line 0: the header */
            size_t len;
            char *t = join(&s->L, at, chunk, &len);
            bool ok = try_text(s, t, len);
            mp_xfree(t);
            if (ok) {
                drop(&s->L, at, chunk);
                any = true;
            } else {
                at += chunk;
            }
        }
        if (chunk == 1) break;
    }
    return any;
}

/* Try a replacement for line i; keep it when the failure persists. */
static bool try_line(shrinker *s, size_t i, char *replacement) {
    char *old = s->L.v[i];
    s->L.v[i] = replacement;
    size_t len;
    char *t = join(&s->L, SIZE_MAX, 0, &len);
    bool ok = try_text(s, t, len);
    mp_xfree(t);
    if (ok) {
        mp_xfree(old);
        return true;
    }
    s->L.v[i] = old;
    mp_xfree(replacement);
    return false;
}

static bool pass_tokens(shrinker *s) {
    bool any = false;
    for (size_t i = 1; i < s->L.n; i++) {
        /* tokens after the first two (keyword and name/kind) */
        for (int k = 2;; k++) {
            const char *line = s->L.v[i];
            const char *p = line;
            int idx = 0;
            const char *tb = NULL, *te = NULL;
            while (*p) {
                while (*p == ' ' || *p == '\t') p++;
                if (!*p) break;
                const char *b = p;
                while (*p && *p != ' ' && *p != '\t') p++;
                if (idx++ == k) {
                    tb = b;
                    te = p;
                    break;
                }
            }
            if (!tb) break;
            size_t n = strlen(line) - (size_t)(te - tb);
            char *r = mp_xmalloc(n + 1);
            memcpy(r, line, (size_t)(tb - line));
            strcpy(r + (tb - line), te);
            if (try_line(s, i, r)) {
                any = true;
                k--; /* the next token moved into this place */
            }
        }
    }
    return any;
}

static bool pass_list_items(shrinker *s) {
    bool any = false;
    for (size_t i = 1; i < s->L.n; i++) {
        for (size_t pos = 0;; pos++) {
            const char *line = s->L.v[i];
            /* the pos-th comma-separated item among in=/out= lists */
            size_t seen = 0;
            const char *cut_b = NULL, *cut_e = NULL;
            for (const char *p = line; *p && !cut_b; p++) {
                if (!(p == line || p[-1] == ' ' || p[-1] == '\t')) continue;
                const char *v = NULL;
                if (strncmp(p, "in=", 3) == 0) v = p + 3;
                else if (strncmp(p, "out=", 4) == 0) v = p + 4;
                if (!v) continue;
                const char *end = v + strcspn(v, " \t");
                if (!memchr(v, ',', (size_t)(end - v))) continue; /* keep single items */
                for (const char *q = v; q < end;) {
                    const char *c = memchr(q, ',', (size_t)(end - q));
                    const char *ie = c ? c : end;
                    if (seen++ == pos) {
                        cut_b = q == v ? q : q - 1; /* take a comma with it */
                        cut_e = q == v ? (c ? c + 1 : ie) : ie;
                        break;
                    }
                    q = c ? c + 1 : end;
                }
            }
            if (!cut_b) break;
            size_t n = strlen(line) - (size_t)(cut_e - cut_b);
            char *r = mp_xmalloc(n + 1);
            memcpy(r, line, (size_t)(cut_b - line));
            strcpy(r + (cut_b - line), cut_e);
            if (try_line(s, i, r)) {
                any = true;
                pos--;
            }
        }
    }
    return any;
}

char *mp_shrink(const char *text, mp_shrink_pred pred, void *ctx, uint32_t max_tries) {
    shrinker s = {{0}, pred, ctx, 0, max_tries};
    split_lines(text, &s.L);
    bool progress = true;
    while (progress && s.tries < max_tries) {
        progress = pass_lines(&s);
        progress |= pass_tokens(&s);
        progress |= pass_list_items(&s);
    }
    size_t len;
    char *out = join(&s.L, SIZE_MAX, 0, &len);
    for (size_t i = 0; i < s.L.n; i++) mp_xfree(s.L.v[i]);
    mp_xfree(s.L.v);
    return out;
}
