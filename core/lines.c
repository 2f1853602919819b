/* lines.c - the text of a graph or plan, one line at a time, from memory
 * or from a file read a window at a time.
 *
 * A file used to be read whole first: at 10^7 tensors 0.66 GB of fresh
 * memory for the kernel to zero and copy into, held through the parse.
 * The window holds the lines not yet returned; it grows only to hold a
 * line longer than itself.  Invariant: [s, end) is the text not yet
 * returned, inside buf (a file) or the caller's text (memory). */
#include "internal.h"

#include <errno.h>

#define LINES_WINDOW (1u << 20)

void mp_lines_text(mp_lines *L, const char *data, size_t len) {
    memset(L, 0, sizeof *L);
    L->s = data;
    L->end = data + len;
}

int mp_lines_open(mp_lines *L, const char *path, mp_err *err) {
    memset(L, 0, sizeof *L);
    L->path = path;
    L->f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!L->f)
        return mp_err_set(err, MP_EFORMAT, "%s: cannot open: %s", path, strerror(errno));
    L->cap = LINES_WINDOW;
    L->buf = mp_xmalloc(L->cap);
    L->s = L->end = L->buf;
    return MP_OK;
}

/* More of the file behind the unread text, moved to the window's start
 * (the window doubled when that text fills it); false at the end of the
 * file or on a read error. */
static bool refill(mp_lines *L) {
    size_t keep = (size_t)(L->end - L->s);
    if (keep && L->s != L->buf) memmove(L->buf, L->s, keep);
    if (keep == L->cap) L->buf = mp_xrealloc(L->buf, L->cap *= 2);
    size_t got = fread(L->buf + keep, 1, L->cap - keep, L->f);
    L->s = L->buf;
    L->end = L->buf + keep + got;
    if (got == 0) {
        L->done = true;
        if (ferror(L->f)) L->read_errno = errno ? errno : EIO;
    }
    return got > 0;
}

bool mp_lines_next(mp_lines *L, const char **b, const char **e) {
    const char *nl;
    while (!(nl = memchr(L->s, '\n', (size_t)(L->end - L->s))) && L->f && !L->done && refill(L)) {}
    if (L->s == L->end || L->read_errno) return false;
    *b = L->s;
    *e = nl ? nl : L->end;
    L->s = nl ? nl + 1 : L->end;
    if (*e > *b && (*e)[-1] == '\r') (*e)--; /* tolerate CRLF files */
    return true;
}

int mp_lines_error(const mp_lines *L, mp_err *err) {
    if (!L->read_errno) return MP_OK;
    return mp_err_set(err, MP_EFORMAT, "%s: read error: %s", L->path, strerror(L->read_errno));
}

void mp_lines_close(mp_lines *L) {
    if (L->f && L->f != stdin) fclose(L->f);
    mp_xfree(L->buf);
    memset(L, 0, sizeof *L);
}
