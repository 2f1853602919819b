/* buf.c - growable byte buffer used for every text the library writes,
 * and mp_guard_text: a text made under the allocation guard. */
#include "internal.h"

#include <errno.h>

#include <stdio.h>

void mp_buf_init(mp_buf *b) { memset(b, 0, sizeof *b); }

void mp_buf_free(mp_buf *b) {
    mp_xfree(b->data);
    memset(b, 0, sizeof *b);
}

/* Room for `extra` more bytes and the NUL.  A failed allocation unwinds
 * inside a guarded call (alloc.c); outside one the buffer is marked failed
 * and keeps what it has, so a caller's writer never aborts. */
bool mp_buf_reserve(mp_buf *b, size_t extra) {
    if (b->failed) return false;
    if (b->cap - b->len > extra) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len <= extra) {
        if (cap > SIZE_MAX / 2) cap = SIZE_MAX;
        else cap *= 2;
        if (cap == SIZE_MAX) break;
    }
    char *d = cap - b->len > extra ? mp_try_realloc(b->data, cap) : NULL;
    if (!d) {
        if (mp_guard_active()) mp_out_of_memory(cap); /* unwinds */
        b->failed = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

void mp_buf_put(mp_buf *b, const char *s, size_t n) {
    if (!mp_buf_reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

bool mp_buf_drain(mp_buf *b, mp_sink_fn sink, void *ctx, bool end) {
    if (!sink || (!end && b->len < MP_BUF_PIECE)) return true;
    if (!b->failed && b->len && !sink(b->data, b->len, ctx)) b->failed = true;
    b->len = 0;
    if (b->data) b->data[0] = 0;
    return !b->failed;
}

void mp_buf_puts(mp_buf *b, const char *s) { mp_buf_put(b, s, strlen(s)); }

void mp_buf_printf(mp_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        mp_buf_put(b, small, (size_t)n);
        return;
    }
    if (!mp_buf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* "00" "01" ... "99": two digits a division */
static const char DIGIT_PAIRS[] = "00010203040506070809101112131415161718192021222324"
                                  "25262728293031323334353637383940414243444546474849"
                                  "50515253545556575859606162636465666768697071727374"
                                  "75767778798081828384858687888990919293949596979899";

/* The number of decimal digits of v (1 to MP_U64_DIGITS). */
static size_t decimal_digits(uint64_t v) {
    static const uint64_t pow10[MP_U64_DIGITS] = {
        1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
        10000000000u, 100000000000u, 1000000000000u, 10000000000000u, 100000000000000u,
        1000000000000000u, 10000000000000000u, 100000000000000000u, 1000000000000000000u,
        10000000000000000000u};
    size_t n = 1;
    while (n < MP_U64_DIGITS && v >= pow10[n]) n++;
    return n;
}

/* v's digits written backward from end, two a division. */
static void digits_before(char *end, uint64_t v) {
    for (; v >= 100; v /= 100) {
        end -= 2;
        memcpy(end, DIGIT_PAIRS + 2 * (v % 100), 2);
    }
    if (v >= 10) memcpy(end - 2, DIGIT_PAIRS + 2 * v, 2);
    else end[-1] = (char)('0' + v);
}

char *mp_put_u64(char *p, uint64_t v) {
    char *end = p + decimal_digits(v);
    digits_before(end, v);
    return end;
}

char *mp_buf_room(mp_buf *b, size_t n) { return mp_buf_reserve(b, n) ? b->data + b->len : NULL; }

/* end lies in the room mp_buf_room gave (the NUL still fits after it) */
void mp_buf_done(mp_buf *b, char *end) {
    b->len = (size_t)(end - b->data);
    b->data[b->len] = 0;
}

/* v as printf's %lld writes it */
char *mp_put_i64(char *p, int64_t v) {
    if (v < 0) *p++ = '-';
    return mp_put_u64(p, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

bool mp_decimal_in(const char *s, uint64_t lo, uint64_t hi, uint64_t *v) {
    char *end;
    if (!s || *s < '0' || *s > '9') return false;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end || x < lo || x > hi) return false;
    *v = x;
    return true;
}

void mp_buf_u64(mp_buf *b, uint64_t v) {
    char *p = mp_buf_room(b, MP_U64_DIGITS);
    if (p) mp_buf_done(b, mp_put_u64(p, v));
}

void mp_buf_i64(mp_buf *b, int64_t v) {
    char *p = mp_buf_room(b, MP_U64_DIGITS + 1);
    if (p) mp_buf_done(b, mp_put_i64(p, v));
}

/* For text bound to a terminal: a string from a file or a database must
 * not carry escape sequences there, so control characters become \xNN
 * and a backslash \\. */
void mp_buf_put_printable(mp_buf *b, const char *s) {
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20 || ch == 0x7f) mp_buf_printf(b, "\\x%02x", ch);
        else if (ch == '\\') mp_buf_puts(b, "\\\\");
        else mp_buf_put(b, s, 1);
    }
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
size_t mp_utf8_len(const unsigned char *s) {
    unsigned c = s[0];
    size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
             : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (n == 0 || (n == 2 && c < 0xc2) || (n == 4 && c > 0xf4)) return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0; /* also stops at the NUL */
    if (n == 3) {
        unsigned v = (c & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
        if (v < 0x800 || (v >= 0xd800 && v <= 0xdfff)) return 0;
    }
    if (n == 4) {
        unsigned v = (c & 0x07u) << 18 | (s[1] & 0x3fu) << 12;
        if (v < 0x10000 || v > 0x10ffff) return 0;
    }
    return n;
}

/* s as a JSON string: quotes and backslashes escaped, control characters
 * as \u00XX, a byte that starts no valid UTF-8 sequence as '?' (a file
 * name or a database string may hold any bytes; the JSON stays valid). */
void mp_buf_put_json_string(mp_buf *b, const char *s) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    mp_buf_put(b, "\"", 1);
    while (*p) {
        size_t n = mp_utf8_len(p);
        if (n == 0) mp_buf_put(b, "?", 1), n = 1;
        else if (n == 1 && (*p == '"' || *p == '\\')) mp_buf_printf(b, "\\%c", *p);
        else if (n == 1 && *p < 0x20) mp_buf_printf(b, "\\u%04x", *p);
        else mp_buf_put(b, (const char *)p, n);
        p += n;
    }
    mp_buf_put(b, "\"", 1);
}

/* A text made under the guard into a buffer of its own, appended to the
 * caller's after the guard returned: a block the caller holds is never
 * one the guard frees when it unwinds (1.8.0's export grew the caller's
 * buffer inside the guard, and the caller's mp_buf_free freed it again). */
typedef struct text_call {
    mp_text_work work;
    void *ctx;
    mp_buf mine;
} text_call;

static int text_work(void *p) {
    text_call *t = p;
    return t->work(t->ctx, &t->mine);
}

int mp_guard_text(mp_err *err, mp_text_work work, void *ctx, mp_buf *out) {
    text_call t = {work, ctx, {0}};
    int rc = mp_guard_run(err, text_work, &t);
    if (rc == MP_ENOMEM) return rc; /* unwound: t.mine's block went with the guard's */
    if (rc == MP_OK && t.mine.len) {
        mp_buf_put(out, t.mine.data, t.mine.len); /* outside the guard: marks out failed */
        if (out->failed) rc = mp_err_set(err, MP_ENOMEM, "out of memory");
    }
    mp_buf_free(&t.mine);
    return rc;
}
