/* csv.c - `memplan import-csv`: a MiniMalloc / idealloc allocation problem
 * (CSV: id,lower,upper,size; lifetimes half-open [lower, upper)) as a graph.
 *
 * A node per distinct time t (a bound of some buffer), in order: it
 * defines the buffers that start at t (out=) and names those whose last
 * node it is (in=), so a buffer [l, u) is live at the nodes of l .. the
 * one before u's.  That keeps exactly the overlaps (l1 < u2 iff rank(l1) <
 * rank(u2)) in a graph as large as the problem.  Each node carries the gap
 * to the next time as span=, so opt still sees every lifetime's real width
 * (which orders the exact search); spans are left out only when the times
 * pass 2^30 (then widths are ranks).  The last node is an empty output
 * node.  Sizes are kept exact: plan with --alignment 1. */
#include "internal.h"
#include "harness.h"
#include "files.h"

#include <stdio.h>

#define MAX_SPAN (UINT64_C(1) << 30) /* the graph format's limit on spans */

typedef struct row {
    uint64_t lo, hi, size;
    char id[40]; /* the buffer's label, as in the file (comment only) */
} row;

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static size_t rank_of(const uint64_t *v, size_t n, uint64_t x) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Split one CSV line into at most 8 fields (no quoting in these files). */
static int fields(char *line, char **f) {
    int n = 0;
    for (char *s = line; n < 8;) {
        f[n++] = s;
        char *c = strchr(s, ',');
        if (!c) break;
        *c = 0;
        s = c + 1;
    }
    for (int i = 0; i < n; i++) { /* trim blanks and CR */
        while (*f[i] == ' ' || *f[i] == '\t') f[i]++;
        size_t l = strlen(f[i]);
        while (l && (f[i][l - 1] == ' ' || f[i][l - 1] == '\t' || f[i][l - 1] == '\r')) f[i][--l] = 0;
    }
    return n;
}

static bool num(const char *s, uint64_t *v) {
    if (!*s) return false;
    uint64_t x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9) / 10) return false;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    *v = x;
    return true;
}

typedef struct rows {
    row *v;
    size_t n, cap;
    int col[4]; /* the header's column of id, lower, upper, size; -1 */
} rows;

static const char *const KEYS[4] = {"id", "lower", "upper", "size"};

/* The header line: which column holds each key. */
static int read_header(rows *R, char **f, int nf, const char *name, int line, mp_err *err) {
    for (int i = 0; i < nf; i++)
        for (int k = 0; k < 4; k++)
            if (strcmp(f[i], KEYS[k]) == 0) R->col[k] = i;
    for (int k = 0; k < 4; k++)
        if (R->col[k] < 0)
            return mp_err_set(err, MP_EFORMAT, "%s:%d: header lacks column '%s' (want id,lower,upper,size)",
                              name, line, KEYS[k]);
    return MP_OK;
}

/* One buffer's line. */
static int read_row(rows *R, char **f, int nf, const char *name, int line, mp_err *err) {
    row r;
    uint64_t *dst[4] = {NULL, &r.lo, &r.hi, &r.size};
    if (R->col[0] >= nf) return mp_err_set(err, MP_EFORMAT, "%s:%d: missing id", name, line);
    size_t j = 0; /* keep a printable label */
    for (const char *c = f[R->col[0]]; *c && j + 1 < sizeof r.id; c++)
        r.id[j++] = (*c > ' ' && *c < 127 && *c != '#') ? *c : '_';
    r.id[j] = 0;
    for (int k = 1; k < 4; k++)
        if (R->col[k] >= nf || !num(f[R->col[k]], dst[k]))
            return mp_err_set(err, MP_EFORMAT, "%s:%d: bad %s value", name, line, KEYS[k]);
    if (r.hi <= r.lo)
        return mp_err_set(err, MP_EFORMAT, "%s:%d: empty lifetime [%llu,%llu)", name, line,
                          (unsigned long long)r.lo, (unsigned long long)r.hi);
    if (r.size >= MP_MAX_SIZE) return mp_err_set(err, MP_EFORMAT, "%s:%d: size too large", name, line);
    MP_VEC_PUSH(R->v, R->n, R->cap, r);
    return MP_OK;
}

/* Every line of the CSV text (modified in place: lines cut). */
static int read_rows(rows *R, char *text, const char *name, mp_err *err) {
    int line = 0, rc = MP_OK;
    for (char *s = text, *nl; s && *s && rc == MP_OK; s = nl) {
        nl = strchr(s, '\n');
        if (nl) *nl++ = 0;
        line++;
        char *f[8];
        if (!*s || *s == '\r') continue;
        int nf = fields(s, f);
        if (R->col[0] < 0 && R->col[3] < 0) rc = read_header(R, f, nf, name, line, err);
        else rc = read_row(R, f, nf, name, line, err);
    }
    if (rc == MP_OK && R->col[0] < 0) rc = mp_err_set(err, MP_EFORMAT, "%s: no header line", name);
    if (rc == MP_OK && !R->n) rc = mp_err_set(err, MP_EFORMAT, "%s: no buffers", name);
    return rc;
}

/* The time points (nodes): every distinct bound.  Returns the sorted
 * points, *nt of them. */
static uint64_t *time_points(const rows *R, size_t *n_points) {
    size_t nr = R->n, nt = 0;
    uint64_t *t = mp_xmalloc(2 * nr * sizeof *t);
    for (size_t i = 0; i < nr; i++) t[2 * i] = R->v[i].lo, t[2 * i + 1] = R->v[i].hi;
    qsort(t, 2 * nr, sizeof *t, cmp_u64);
    for (size_t i = 0; i < 2 * nr; i++)
        if (!nt || t[nt - 1] != t[i]) t[nt++] = t[i];
    *n_points = nt;
    return t;
}

/* Per node, the buffers starting there and those ending there (counting
 * sort): starts[k]..starts[k+1] index s_at, likewise ends and e_at. */
typedef struct events {
    size_t *starts, *ends, *s_at, *e_at;
} events;

static void make_events(const rows *R, const uint64_t *t, size_t nt, events *E) {
    size_t nr = R->n;
    E->starts = mp_xcalloc(nt + 1, sizeof *E->starts);
    E->ends = mp_xcalloc(nt + 1, sizeof *E->ends);
    E->s_at = mp_xmalloc(nr * sizeof *E->s_at);
    E->e_at = mp_xmalloc(nr * sizeof *E->e_at);
    for (size_t i = 0; i < nr; i++) {
        E->starts[rank_of(t, nt, R->v[i].lo) + 1]++;
        E->ends[rank_of(t, nt, R->v[i].hi)]++; /* ends at rank(hi) - 1, index shifted */
    }
    for (size_t k = 0; k < nt; k++) E->starts[k + 1] += E->starts[k], E->ends[k + 1] += E->ends[k];
    size_t *sp = mp_xmalloc((nt + 1) * sizeof *sp), *ep = mp_xmalloc((nt + 1) * sizeof *ep);
    memcpy(sp, E->starts, (nt + 1) * sizeof *sp);
    memcpy(ep, E->ends, (nt + 1) * sizeof *ep);
    for (size_t i = 0; i < nr; i++) {
        E->s_at[sp[rank_of(t, nt, R->v[i].lo)]++] = i;
        E->e_at[ep[rank_of(t, nt, R->v[i].hi) - 1]++] = i;
    }
    mp_xfree(sp);
    mp_xfree(ep);
}

/* The graph: a tensor per buffer, a call node per time point that reads
 * the buffers ending there and writes those starting there. */
static void write_graph(const rows *R, const uint64_t *t, size_t nt, const events *E, const char *name,
                        mp_buf *out) {
    mp_buf_printf(out, "memplan-graph 1\n# imported from %s: %zu buffers; plan with --alignment 1\n"
                       "graph problem\n", name, R->n);
    for (size_t i = 0; i < R->n; i++) {
        mp_buf_printf(out, "tensor b%zu ", i);
        mp_buf_u64(out, R->v[i].size);
        mp_buf_printf(out, "  # id %s [%llu,%llu)\n", R->v[i].id, (unsigned long long)R->v[i].lo,
                      (unsigned long long)R->v[i].hi);
    }
    /* with spans, a first empty node stands for the time before the first
     * bound, so node times are the file's own (export gives them back) */
    bool spans = t[nt - 1] < MAX_SPAN; /* with the output node's unit: opt's limit */
    if (spans && t[0]) mp_buf_printf(out, t[0] > 1 ? "node call span=%llu\n" : "node call\n", (unsigned long long)t[0]);
    for (size_t k = 0; k + 1 < nt; k++) { /* the last time point only ends buffers */
        mp_buf_puts(out, "node call");
        bool first = true;
        for (size_t q = E->ends[k]; q < E->ends[k + 1]; q++) {
            size_t i = E->e_at[q];
            if (rank_of(t, nt, R->v[i].lo) == k) continue; /* named by out= below */
            mp_buf_printf(out, "%sb%zu", first ? " in=" : ",", i);
            first = false;
        }
        first = true;
        for (size_t q = E->starts[k]; q < E->starts[k + 1]; q++) {
            mp_buf_printf(out, "%sb%zu", first ? " out=" : ",", E->s_at[q]);
            first = false;
        }
        if (spans && t[k + 1] - t[k] > 1) mp_buf_printf(out, " span=%llu", (unsigned long long)(t[k + 1] - t[k]));
        mp_buf_puts(out, "\n");
    }
    mp_buf_puts(out, "node output\nend\n");
}

int mp_import_csv(const char *data, size_t len, const char *name, mp_buf *out, mp_err *err) {
    char *text = mp_xmalloc(len + 1);
    memcpy(text, data, len);
    text[len] = 0;
    rows R = {NULL, 0, 0, {-1, -1, -1, -1}};
    int rc = read_rows(&R, text, name, err);
    if (rc == MP_OK) {
        size_t nt;
        uint64_t *t = time_points(&R, &nt);
        events E;
        make_events(&R, t, nt, &E);
        write_graph(&R, t, nt, &E, name, out);
        mp_xfree(t);
        mp_xfree(E.starts);
        mp_xfree(E.ends);
        mp_xfree(E.s_at);
        mp_xfree(E.e_at);
    }
    mp_xfree(R.v);
    mp_xfree(text);
    return rc;
}
