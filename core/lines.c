/* lines.c - the text of a graph or plan, one line at a time, from memory
 * or from a file read a window at a time; and a whole file's text
 * (mp_read_file), opened and reported on the same way.
 *
 * A file used to be read whole first: at 10^7 tensors 0.66 GB of fresh
 * memory for the kernel to zero and copy into, held through the parse.
 * The window holds the lines not yet returned; it grows only to hold a
 * line longer than itself.  The parser still counts a graph's lines
 * before reading them, to size its arrays once (grown arrays lose their
 * huge pages when the kernel moves them): mp_lines_ahead reads the rest
 * of the file again for that, a window at a time (pread), where it can.
 * Invariant: [s, end) is the text not yet returned, inside buf (a file)
 * or the caller's text (memory); buf[0] is at file offset `at`. */
#include "internal.h"
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINES_WINDOW (1u << 20)

void mp_lines_text(mp_lines *L, const char *data, size_t len) {
    memset(L, 0, sizeof *L);
    L->fd = -1;
    L->s = data;
    L->end = data + len;
}

/* An input's descriptor ("-": standard input), owned by the guard so
 * that it is closed if the read runs out of memory. */
static int open_input(const char *path, int *fd, mp_err *err) {
    *fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) return mp_err_set(err, MP_EFORMAT, "%s: cannot open: %s", path, strerror(errno));
    if (*fd != STDIN_FILENO) (void)mp_guard_own_fd(*fd);
    return MP_OK;
}

static void close_input(int fd) {
    if (fd > STDIN_FILENO) {
        mp_guard_disown_fd(fd);
        close(fd);
    }
}

static int read_error(const char *path, int e, mp_err *err) {
    return mp_err_set(err, MP_EFORMAT, "%s: read error: %s", path, strerror(e));
}

int mp_lines_open(mp_lines *L, const char *path, mp_err *err) {
    memset(L, 0, sizeof *L);
    L->path = path;
    if (open_input(path, &L->fd, err)) return err->code;
    L->at = lseek(L->fd, 0, SEEK_CUR); /* -1: a pipe, not read again */
    L->cap = LINES_WINDOW;
    L->buf = mp_xmalloc(L->cap);
    L->s = L->end = L->buf;
    return MP_OK;
}

/* Up to n bytes at file offset `at` (-1: the next ones) into p, EINTR
 * retried; the count, 0 at the end, -1 with errno on an error. */
static ssize_t read_at(int fd, char *p, size_t n, off_t at) {
    for (;;) {
        ssize_t got = at < 0 ? read(fd, p, n) : pread(fd, p, n, at);
        if (got >= 0 || errno != EINTR) return got;
    }
}

/* More of the file behind the unread text, moved to the window's start
 * (the window doubled when that text fills it); false at the end of the
 * file or on a read error. */
static bool refill(mp_lines *L) {
    size_t keep = (size_t)(L->end - L->s);
    if (L->at >= 0) L->at += L->s - L->buf;
    if (keep && L->s != L->buf) memmove(L->buf, L->s, keep);
    if (keep == L->cap) L->buf = mp_xrealloc(L->buf, L->cap *= 2);
    ssize_t got = read_at(L->fd, L->buf + keep, L->cap - keep, -1);
    L->s = L->buf;
    L->end = L->buf + keep + (got > 0 ? got : 0);
    if (got <= 0) {
        L->done = true;
        if (got < 0) L->read_errno = errno;
    }
    return got > 0;
}

bool mp_lines_next(mp_lines *L, const char **b, const char **e) {
    const char *nl;
    while (!(nl = memchr(L->s, '\n', (size_t)(L->end - L->s))) && L->fd >= 0 && !L->done && refill(L)) {}
    if (L->s == L->end || L->read_errno) return false;
    *b = L->s;
    *e = nl ? nl : L->end;
    L->s = nl ? nl + 1 : L->end;
    if (*e > *b && (*e)[-1] == '\r') (*e)--; /* tolerate CRLF files */
    return true;
}

/* each() on the whole lines of s..end (and on the last, partial one when
 * `last`); returns where the first line not handed over starts, or NULL
 * when each() said stop. */
static const char *each_line(const char *s, const char *end, bool last, mp_line_fn each, void *ctx) {
    for (;;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl && (!last || s == end)) return s;
        if (!each(ctx, s, nl ? nl : end)) return NULL;
        if (!nl) return end;
        s = nl + 1;
    }
}

void mp_lines_ahead(const mp_lines *L, mp_line_fn each, void *ctx) {
    bool whole = L->fd < 0 || L->done; /* the window ends the text */
    const char *rest = each_line(L->s, L->end, whole, each, ctx);
    if (!rest || whole || L->at < 0) return;
    /* the file again from the partial line at the window's end */
    size_t cap = LINES_WINDOW, have = (size_t)(L->end - rest);
    off_t at = L->at + (L->end - L->buf);
    char *buf = mp_xmalloc(cap);
    memcpy(buf, rest, have);
    for (;;) {
        if (have == cap) buf = mp_xrealloc(buf, cap *= 2);
        ssize_t got = read_at(L->fd, buf + have, cap - have, at);
        if (got < 0) break; /* only a count: the reading proper reports it */
        at += got;
        const char *tail = each_line(buf, buf + have + (size_t)got, got == 0, each, ctx);
        if (!tail || got == 0) break;
        have = (size_t)(buf + have + (size_t)got - tail);
        memmove(buf, tail, have);
    }
    mp_xfree(buf);
}

int mp_lines_error(const mp_lines *L, mp_err *err) {
    return L->read_errno ? read_error(L->path, L->read_errno, err) : MP_OK;
}

void mp_lines_close(mp_lines *L) {
    close_input(L->fd);
    mp_xfree(L->buf);
    memset(L, 0, sizeof *L);
}

char *mp_read_file(const char *path, size_t *len, mp_err *err) {
    int fd;
    if (open_input(path, &fd, err)) return NULL;
    /* a regular file's size up front: one block, not a doubling series
     * (each step below 32 MiB a copy; a 658 MB graph grew to 1 GB) */
    struct stat st;
    size_t cap = 1 << 16, n = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < SIZE_MAX / 2)
        cap = (size_t)st.st_size + 2; /* + the end test's byte and the NUL */
    char *data = mp_xmalloc(cap);
    ssize_t got;
    for (;;) {
        if (cap - n < 2) data = mp_xrealloc(data, cap *= 2);
        got = read_at(fd, data + n, cap - n - 1, -1);
        if (got <= 0) break;
        n += (size_t)got;
    }
    int e = errno;
    close_input(fd);
    if (got < 0) {
        mp_xfree(data);
        (void)read_error(path, e, err);
        return NULL;
    }
    data[n] = 0;
    *len = n;
    return data;
}
