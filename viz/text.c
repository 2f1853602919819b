/* text.c - escaping for XML and JSON, and the numbers the pictures print.
 *
 * Names in graph and plan files are plain ASCII, but file names and
 * database strings are not: whatever bytes come in, what goes out is
 * well-formed (valid UTF-8, markup escaped), so a picture never fails to
 * open because of a name. */
#include "viz.h"

#include <math.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t utf8_len(const unsigned char *s) {
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

void mp_viz_xml(mp_buf *b, const char *s) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        size_t n = utf8_len(p);
        if (n == 0) {
            mp_buf_put(b, "?", 1);
            p++;
            continue;
        }
        if (n == 1) {
            switch (*p) {
            case '&': mp_buf_puts(b, "&amp;"); break;
            case '<': mp_buf_puts(b, "&lt;"); break;
            case '>': mp_buf_puts(b, "&gt;"); break;
            case '"': mp_buf_puts(b, "&quot;"); break;
            case '\'': mp_buf_puts(b, "&#39;"); break;
            default:
                if (*p >= 0x20 && *p != 0x7f) mp_buf_put(b, (const char *)p, 1);
                else if (*p == '\n' || *p == '\t') mp_buf_put(b, " ", 1);
            }
        } else {
            mp_buf_put(b, (const char *)p, n);
        }
        p += n;
    }
}

void mp_viz_json_str(mp_buf *b, const char *s) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    mp_buf_put(b, "\"", 1);
    while (*p) {
        size_t n = utf8_len(p);
        if (n == 0) {
            mp_buf_put(b, "?", 1);
            p++;
            continue;
        }
        if (n == 1 && (*p == '"' || *p == '\\')) mp_buf_printf(b, "\\%c", *p);
        else if (n == 1 && *p < 0x20) mp_buf_printf(b, "\\u%04x", *p);
        else mp_buf_put(b, (const char *)p, n);
        p += n;
    }
    mp_buf_put(b, "\"", 1);
}

const char *mp_viz_bytes(uint64_t v, char *buf) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (v < 1024) {
        snprintf(buf, 32, "%llu B", (unsigned long long)v);
        return buf;
    }
    double x = (double)v;
    int u = 0;
    while (x >= 1024.0 && u < 6) {
        x /= 1024.0;
        u++;
    }
    /* round first, so 1023.9 KiB prints as 1.00 MiB, not 1024 KiB */
    if (x >= 999.5 && u < 6) {
        x /= 1024.0;
        u++;
    }
    snprintf(buf, 32, x < 9.995 ? "%.2f %s" : x < 99.95 ? "%.1f %s" : "%.0f %s", x, units[u]);
    return buf;
}

void mp_viz_num(mp_buf *b, double v) {
    if (!isfinite(v)) v = 0.0;
    if (v > 1e12) v = 1e12; /* coordinates stay far inside long long */
    if (v < -1e12) v = -1e12;
    double r = round(v * 10.0) / 10.0;
    if (r == 0.0) r = 0.0; /* no "-0.0" */
    long long t = (long long)llround(r * 10.0);
    if (t % 10 == 0) mp_buf_printf(b, "%lld", t / 10);
    else mp_buf_printf(b, "%s%lld.%lld", t < 0 ? "-" : "", llabs(t) / 10, llabs(t) % 10);
}
