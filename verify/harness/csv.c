/* csv.c - `memplan import-csv`: a MiniMalloc / idealloc allocation problem
 * (CSV: id,lower,upper,size; lifetimes half-open [lower, upper)) as a graph.
 *
 * Node t is time t: it defines the buffers that start at t (out=) and
 * names those whose last time is t (in=), so a buffer [l, u) is live at
 * nodes l..u-1 and keeps its real width (which orders the exact search).
 * Only when the time span exceeds MAX_NODES are time points compressed to
 * their ranks, which keeps exactly the overlaps (l1 < u2 iff rank(l1) <
 * rank(u2)).  The last node is an empty output node.  Sizes are kept
 * exact: plan with --alignment 1. */
#include "internal.h"
#include "memplan_tools.h"

#include <stdio.h>

#define MAX_NODES 4000000u

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

int mp_import_csv(const char *data, size_t len, const char *name, mp_buf *out, mp_err *err) {
    char *text = mp_xmalloc(len + 1);
    memcpy(text, data, len);
    text[len] = 0;
    row *rows = NULL;
    size_t nr = 0, cap = 0;
    int col[4] = {-1, -1, -1, -1}, line = 0, rc = MP_OK;
    static const char *const keys[4] = {"id", "lower", "upper", "size"};
    for (char *s = text, *nl; s && *s && rc == MP_OK; s = nl) {
        nl = strchr(s, '\n');
        if (nl) *nl++ = 0;
        line++;
        char *f[8];
        if (!*s || *s == '\r') continue;
        int nf = fields(s, f);
        if (col[0] < 0 && col[3] < 0) { /* the header names the columns */
            for (int i = 0; i < nf; i++)
                for (int k = 0; k < 4; k++)
                    if (strcmp(f[i], keys[k]) == 0) col[k] = i;
            for (int k = 0; k < 4 && rc == MP_OK; k++)
                if (col[k] < 0)
                    rc = mp_err_set(err, MP_EFORMAT, "%s:%d: header lacks column '%s' "
                                    "(want id,lower,upper,size)", name, line, keys[k]);
            continue;
        }
        row r;
        uint64_t *dst[4] = {NULL, &r.lo, &r.hi, &r.size};
        if (col[0] >= nf) rc = mp_err_set(err, MP_EFORMAT, "%s:%d: missing id", name, line);
        else {
            size_t j = 0; /* keep a printable label */
            for (const char *c = f[col[0]]; *c && j + 1 < sizeof r.id; c++)
                r.id[j++] = (*c > ' ' && *c < 127 && *c != '#') ? *c : '_';
            r.id[j] = 0;
        }
        for (int k = 1; k < 4 && rc == MP_OK; k++)
            if (col[k] >= nf || !num(f[col[k]], dst[k]))
                rc = mp_err_set(err, MP_EFORMAT, "%s:%d: bad %s value", name, line, keys[k]);
        if (rc) break;
        if (r.hi <= r.lo)
            rc = mp_err_set(err, MP_EFORMAT, "%s:%d: empty lifetime [%llu,%llu)", name, line,
                            (unsigned long long)r.lo, (unsigned long long)r.hi);
        else if (r.size >= MP_MAX_SIZE)
            rc = mp_err_set(err, MP_EFORMAT, "%s:%d: size too large", name, line);
        else
            MP_VEC_PUSH(rows, nr, cap, r);
    }
    if (rc == MP_OK && col[0] < 0) rc = mp_err_set(err, MP_EFORMAT, "%s: no header line", name);
    if (rc == MP_OK && !nr) rc = mp_err_set(err, MP_EFORMAT, "%s: no buffers", name);
    if (rc == MP_OK) {
        uint64_t *t = mp_xmalloc(2 * nr * sizeof *t);
        for (size_t i = 0; i < nr; i++) t[2 * i] = rows[i].lo, t[2 * i + 1] = rows[i].hi;
        qsort(t, 2 * nr, sizeof *t, cmp_u64);
        size_t nt = 0;
        for (size_t i = 0; i < 2 * nr; i++)
            if (!nt || t[nt - 1] != t[i]) t[nt++] = t[i];
        if (t[nt - 1] < MAX_NODES) { /* real time: every point 0..max is a node */
            nt = (size_t)t[nt - 1] + 1;
            t = mp_xrealloc(t, (nt + 1) * sizeof *t);
            for (size_t i = 0; i < nt; i++) t[i] = i;
        }
        /* per node: buffers starting and ending there (counting sort) */
        size_t *starts = mp_xcalloc(nt + 1, sizeof *starts), *ends = mp_xcalloc(nt + 1, sizeof *ends);
        size_t *s_at = mp_xmalloc(nr * sizeof *s_at), *e_at = mp_xmalloc(nr * sizeof *e_at);
        for (size_t i = 0; i < nr; i++) {
            starts[rank_of(t, nt, rows[i].lo) + 1]++;
            ends[rank_of(t, nt, rows[i].hi)]++; /* ends at rank(hi) - 1, index shifted */
        }
        for (size_t k = 0; k < nt; k++) starts[k + 1] += starts[k], ends[k + 1] += ends[k];
        size_t *sp = mp_xmalloc((nt + 1) * sizeof *sp), *ep = mp_xmalloc((nt + 1) * sizeof *ep);
        memcpy(sp, starts, (nt + 1) * sizeof *sp);
        memcpy(ep, ends, (nt + 1) * sizeof *ep);
        for (size_t i = 0; i < nr; i++) {
            s_at[sp[rank_of(t, nt, rows[i].lo)]++] = i;
            e_at[ep[rank_of(t, nt, rows[i].hi) - 1]++] = i;
        }
        mp_buf_printf(out, "memplan-graph 1\n# imported from %s: %zu buffers; plan with --alignment 1\n"
                           "graph problem\n", name, nr);
        for (size_t i = 0; i < nr; i++) {
            mp_buf_printf(out, "tensor b%zu ", i);
            mp_buf_u64(out, rows[i].size);
            mp_buf_printf(out, "  # id %s [%llu,%llu)\n", rows[i].id,
                          (unsigned long long)rows[i].lo, (unsigned long long)rows[i].hi);
        }
        for (size_t k = 0; k + 1 < nt; k++) { /* the last time point only ends buffers */
            mp_buf_puts(out, "node call");
            bool first = true;
            for (size_t q = ends[k]; q < ends[k + 1]; q++) {
                size_t i = e_at[q];
                if (rank_of(t, nt, rows[i].lo) == k) continue; /* named by out= below */
                mp_buf_printf(out, "%sb%zu", first ? " in=" : ",", i);
                first = false;
            }
            first = true;
            for (size_t q = starts[k]; q < starts[k + 1]; q++) {
                mp_buf_printf(out, "%sb%zu", first ? " out=" : ",", s_at[q]);
                first = false;
            }
            mp_buf_puts(out, "\n");
        }
        mp_buf_puts(out, "node output\nend\n");
        mp_xfree(t);
        mp_xfree(starts);
        mp_xfree(ends);
        mp_xfree(s_at);
        mp_xfree(e_at);
        mp_xfree(sp);
        mp_xfree(ep);
    }
    mp_xfree(rows);
    mp_xfree(text);
    return rc;
}
