/* plot.c - the small chart kit of the HTML report: scales (linear or
 * log), a frame with grid and ticks, a legend.  Charts are inline SVG, so
 * the page needs no script and no external asset. */
#include "viz.h"

#include <math.h>
#include <stdio.h>

static double tr(double v, bool lg) { return lg ? log10(v > 0 ? v : 1e-300) : v; }

double mp_viz_plot_x(const viz_plot *p, double v) {
    double a = tr(p->x0, p->logx), b = tr(p->x1, p->logx);
    return p->left + (b > a ? (tr(v, p->logx) - a) / (b - a) : 0.5) * p->w;
}

double mp_viz_plot_y(const viz_plot *p, double v) {
    double a = tr(p->y0, p->logy), b = tr(p->y1, p->logy);
    return p->top + p->h - (b > a ? (tr(v, p->logy) - a) / (b - a) : 0.5) * p->h;
}

/* Tick values for [lo, hi]: 1-2-5 steps, or decades (and 2, 5 within
 * them when the range is short) on a log scale.  At most `max` of them. */
static size_t ticks(double lo, double hi, bool lg, double *t, size_t max) {
    size_t n = 0;
    if (!(hi > lo)) {
        t[n++] = lo;
        return n;
    }
    if (lg) {
        int a = (int)floor(log10(lo)), b = (int)ceil(log10(hi));
        bool fine = b - a <= 3;
        for (int e = a; e <= b && n < max; e++)
            for (int m = 1; m <= 5 && n < max; m += m == 1 ? 1 : 3) {
                if (m > 1 && !fine) break;
                double v = m * pow(10.0, e);
                if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t[n++] = v;
            }
        return n;
    }
    double raw = (hi - lo) / 5.0, mag = pow(10.0, floor(log10(raw))), step = mag;
    if (step < raw) step = 2 * mag;
    if (step < raw) step = 5 * mag;
    if (step < raw) step = 10 * mag;
    for (double v = ceil(lo / step) * step; v <= hi + step * 1e-9 && n < max; v += step)
        t[n++] = fabs(v) < step * 1e-9 ? 0.0 : v;
    return n;
}

static void line(mp_buf *b, double x1, double y1, double x2, double y2, const char *cls) {
    mp_buf_puts(b, "<line x1=\"");
    mp_viz_num(b, x1);
    mp_buf_puts(b, "\" y1=\"");
    mp_viz_num(b, y1);
    mp_buf_puts(b, "\" x2=\"");
    mp_viz_num(b, x2);
    mp_buf_puts(b, "\" y2=\"");
    mp_viz_num(b, y2);
    mp_buf_printf(b, "\" class=\"%s\"/>\n", cls);
}

static void label(mp_buf *b, double x, double y, const char *anchor, const char *s) {
    mp_buf_puts(b, "<text x=\"");
    mp_viz_num(b, x);
    mp_buf_puts(b, "\" y=\"");
    mp_viz_num(b, y);
    mp_buf_printf(b, "\" text-anchor=\"%s\">", anchor);
    mp_viz_xml(b, s);
    mp_buf_puts(b, "</text>\n");
}

void mp_viz_plot_frame(mp_buf *b, const viz_plot *p, const char *xlabel, const char *ylabel,
                    const char *const *xnames, size_t n_xnames) {
    double t[64];
    char s[48];
    mp_buf_puts(b, "<rect x=\"");
    mp_viz_num(b, p->left);
    mp_buf_puts(b, "\" y=\"");
    mp_viz_num(b, p->top);
    mp_buf_puts(b, "\" width=\"");
    mp_viz_num(b, p->w);
    mp_buf_puts(b, "\" height=\"");
    mp_viz_num(b, p->h);
    mp_buf_puts(b, "\" class=\"pf\"/>\n");
    size_t n = ticks(p->y0, p->y1, p->logy, t, 64);
    for (size_t i = 0; i < n; i++) {
        double y = mp_viz_plot_y(p, t[i]);
        line(b, p->left, y, p->left + p->w, y, "gr");
        snprintf(s, sizeof s, "%g", t[i]);
        label(b, p->left - 6, y + 4, "end", s);
    }
    if (xnames) {
        size_t every = n_xnames > 12 ? (n_xnames + 11) / 12 : 1;
        for (size_t i = 0; i < n_xnames; i += every) {
            double x = mp_viz_plot_x(p, (double)i);
            line(b, x, p->top + p->h, x, p->top + p->h + 4, "ax");
            label(b, x, p->top + p->h + 16, "middle", xnames[i]);
        }
    } else {
        n = ticks(p->x0, p->x1, p->logx, t, 64);
        for (size_t i = 0; i < n; i++) {
            double x = mp_viz_plot_x(p, t[i]);
            line(b, x, p->top, x, p->top + p->h, "gr");
            snprintf(s, sizeof s, "%g", t[i]);
            label(b, x, p->top + p->h + 16, "middle", s);
        }
    }
    label(b, p->left + p->w / 2, p->top + p->h + 34, "middle", xlabel);
    mp_buf_puts(b, "<text transform=\"rotate(-90)\" x=\"");
    mp_viz_num(b, -(p->top + p->h / 2));
    mp_buf_puts(b, "\" y=\"16\" text-anchor=\"middle\">");
    mp_viz_xml(b, ylabel);
    mp_buf_puts(b, "</text>\n");
}

void mp_viz_plot_legend(mp_buf *b, double x, double y, const char *const *names,
                     const char *const *colors, size_t n) {
    for (size_t i = 0; i < n; i++) {
        mp_buf_puts(b, "<rect x=\"");
        mp_viz_num(b, x);
        mp_buf_puts(b, "\" y=\"");
        mp_viz_num(b, y - 9);
        mp_buf_printf(b, "\" width=\"10\" height=\"10\" fill=\"%s\"/>", colors[i]);
        label(b, x + 14, y, "start", names[i]);
        x += 30 + 7.0 * (double)strlen(names[i]);
    }
}

const char *mp_viz_algo_color(const char *algo) {
    int a = mp_algo_parse(algo);
    if (a >= 0) return mp_planner_get((uint32_t)a)->color; /* the planner table's */
    /* a planner this build does not have (an old run, "opt-exact"): a
     * palette colour past the table's, which takes the palette's first */
    uint32_t h = 0, n = mp_planner_count();
    for (const char *s = algo; *s; s++) h = h * 31 + (unsigned char)*s;
    return mp_viz_color(n + h % (VIZ_N_COLORS - n));
}
