/* text.c - escaping for XML (JSON strings: core's mp_buf_put_json_string), and the numbers the pictures print.
 *
 * Names in graph and plan files are plain ASCII, but file names and
 * database strings are not: whatever bytes come in, what goes out is
 * well-formed (valid UTF-8, markup escaped), so a picture never fails to
 * open because of a name. */
#include "viz.h"

#include <math.h>
#include <stdio.h>

void mp_viz_xml(mp_buf *b, const char *s) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        size_t n = mp_utf8_len(p);
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
