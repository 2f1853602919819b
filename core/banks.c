/* banks.c - the memory map (--banks, a graph file's `banks` line, a plan's
 * `banks=` field): parsing, writing, and which map a planning uses. */
#include "internal.h"

#include <stdio.h>

static bool bank_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
}

/* "262144", "256K", "64M", "unlimited" -> bytes (MP_UNLIMITED); false when
 * malformed, zero or past 2^64 - 2. */
static bool bank_size(const char *s, size_t n, uint64_t *out) {
    if (n == 9 && !memcmp(s, "unlimited", 9)) {
        *out = MP_UNLIMITED;
        return true;
    }
    static const char units[] = "KMGT";
    unsigned shift = 0;
    if (n > 1 && strchr(units, s[n - 1])) shift = 10u * (unsigned)(strchr(units, s[n - 1]) - units + 1), n--;
    uint64_t v = 0;
    if (!n) return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (!v || (shift && v > (UINT64_MAX - 1) >> shift)) return false;
    *out = v << shift;
    return *out != MP_UNLIMITED;
}

/* One "NAME=SIZE" (or NAME:SIZE) entry of s[0..n) into b. */
static int bank_entry(const char *s, size_t n, mp_banks *b, mp_err *err) {
    const char *eq = memchr(s, '=', n);
    if (!eq) eq = memchr(s, ':', n);
    size_t nl = eq ? (size_t)(eq - s) : n;
    if (!eq || !nl || nl > MP_MAX_BANK_NAME)
        return mp_err_set(err, MP_EFORMAT, "bad bank '%.*s' (want NAME=SIZE, a name of 1 to %d characters)",
                          (int)(n > 64 ? 64 : n), s, MP_MAX_BANK_NAME);
    for (size_t i = 0; i < nl; i++)
        if (!bank_name_char(s[i]))
            return mp_err_set(err, MP_EFORMAT, "bad bank name '%.*s' (want [A-Za-z0-9_.-])", (int)nl, s);
    uint64_t cap;
    if (!bank_size(eq + 1, n - nl - 1, &cap))
        return mp_err_set(err, MP_EFORMAT, "bad size '%.*s' for bank '%.*s' (want bytes, e.g. 262144, "
                          "256K, 64M, or unlimited)", (int)((n - nl - 1) > 32 ? 32 : n - nl - 1), eq + 1,
                          (int)nl, s);
    for (uint32_t k = 0; k < b->n; k++)
        if (strlen(b->bank[k].name) == nl && !memcmp(b->bank[k].name, s, nl))
            return mp_err_set(err, MP_EFORMAT, "bank '%.*s' given twice", (int)nl, s);
    if (b->n == MP_MAX_BANKS) return mp_err_set(err, MP_EFORMAT, "more than %d banks", MP_MAX_BANKS);
    mp_bank *k = &b->bank[b->n++];
    memcpy(k->name, s, nl);
    k->name[nl] = 0;
    k->capacity = cap;
    return MP_OK;
}

int mp_banks_parse(const char *spec, mp_banks *out, mp_err *err) {
    mp_err_clear(err);
    mp_banks b;
    memset(&b, 0, sizeof b);
    const char *s = spec;
    for (;;) {
        const char *c = strchr(s, ',');
        size_t n = c ? (size_t)(c - s) : strlen(s);
        if (bank_entry(s, n, &b, err)) return err->code;
        if (!c) break;
        s = c + 1;
    }
    if (b.n == 1 && b.bank[0].capacity == MP_UNLIMITED) b.n = 0; /* no limit, no map */
    *out = b;
    return MP_OK;
}

void mp_banks_write(const mp_banks *b, char sep, char kv, mp_buf *out) {
    for (uint32_t k = 0; k < b->n; k++) {
        mp_buf_printf(out, "%s%s%c", k ? (sep == ' ' ? " " : ",") : "", b->bank[k].name, kv);
        if (b->bank[k].capacity == MP_UNLIMITED) mp_buf_puts(out, "unlimited");
        else mp_buf_u64(out, b->bank[k].capacity);
    }
}

const mp_banks *mp_banks_of(const mp_program *prog, const mp_options *o) {
    return o->banks.n ? &o->banks : &prog->banks;
}
