/* err.c - error values with a message buffer, and token quoting. */
#include "internal.h"

#include <stdio.h>

int mp_err_at(mp_err *err, const char *file, int line, const char *fmt, va_list ap) {
    char msg[900];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return mp_err_set(err, MP_EFORMAT, "%s:%d: %s", file, line, msg);
}

int mp_check_alignment(uint64_t a, mp_err *err) {
    if (mp_alignment_ok(a)) return MP_OK;
    return mp_err_set(err, MP_EFORMAT, "alignment must be 1..%u", (unsigned)MP_MAX_ALIGNMENT);
}

void mp_err_clear(mp_err *err) {
    if (!err) return;
    err->code = MP_OK;
    err->limit = false;
    err->msg[0] = 0;
}

int mp_err_vset(mp_err *err, int code, const char *fmt, va_list ap) {
    if (err) {
        err->code = code;
        err->limit = false;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    }
    return code;
}

int mp_err_set(mp_err *err, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    mp_err_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int mp_err_limit(mp_err *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    mp_err_vset(err, MP_EPLAN, fmt, ap);
    va_end(ap);
    if (err) err->limit = true;
    return MP_EPLAN;
}

const char *mp_quote(const char *s, size_t n, char *buf) {
    size_t k = n > 40 ? 40 : n, j = 0;
    for (size_t i = 0; i < k; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (n > k) {
        buf[j++] = '.';
        buf[j++] = '.';
        buf[j++] = '.';
    }
    buf[j] = 0;
    return buf;
}
