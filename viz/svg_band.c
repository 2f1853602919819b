/* svg_band.c - tensors that live the whole program (weights copied in,
 * KV caches, mutable state) in a band of their own.  Their bytes are taken
 * for the whole run, so nothing else of a valid plan is ever drawn there;
 * when they hold a large share of a buffer they would squeeze everything
 * else into a sliver.  The panel's byte axis is then piecewise linear: the
 * byte ranges only such tensors cover share VIZ_BAND_SHARE of the panel's
 * height, the rest of the buffer gets the remaining height, and the band is
 * shaded and labelled.  Every y of the picture goes through
 * mp_viz_svg_y, so rectangles, curves, ticks and outlines all follow. */
#include "viz.h"

#define VIZ_BAND_MIN_BYTES 0.25 /* band only when they are at least this share of the axis */

static int cmp_range(const void *a, const void *b) {
    const uint64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* The merged byte ranges of the panel's whole-life items, clipped to the axis. */
static size_t whole_life_ranges(const viz_svg *s, const viz_panel *p, uint64_t (*r)[2]) {
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) {
        const viz_item *it = p->items[i];
        if (it->depth != 0 || it->x0 > 0 || it->x1 < s->L.width || it->lo >= it->hi || it->lo >= p->ymax) continue;
        r[n][0] = it->lo;
        r[n][1] = it->hi < p->ymax ? it->hi : p->ymax;
        n++;
    }
    qsort(r, n, sizeof *r, cmp_range);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && r[i][0] <= r[m - 1][1]) {
            if (r[i][1] > r[m - 1][1]) r[m - 1][1] = r[i][1];
        } else {
            r[m][0] = r[i][0];
            r[m][1] = r[i][1];
            m++;
        }
    }
    return m;
}

void mp_viz_band_build(const viz_svg *s, viz_panel *p) {
    uint64_t(*r)[2] = mp_xmalloc((p->n + 1) * sizeof *r);
    size_t n = whole_life_ranges(s, p, r);
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += r[i][1] - r[i][0];
    if (!n || bytes == p->ymax || (double)bytes < VIZ_BAND_MIN_BYTES * (double)p->ymax) {
        mp_xfree(r);
        return;
    }
    p->band = r;
    p->n_band = n;
    p->band_bytes = bytes;
}

void mp_viz_band_free(viz_panel *p) { mp_xfree(p->band); }

/* The byte offset drawn `px` pixels above the panel's bottom (the inverse
 * of mp_viz_band_px), for the axis ticks. */
uint64_t mp_viz_band_bytes(const viz_svg *s, const viz_panel *p, double px) {
    double band_h = VIZ_BAND_SHARE * s->H;
    double per_band = band_h / (double)p->band_bytes, per_rest = (s->H - band_h) / (double)(p->ymax - p->band_bytes);
    uint64_t at = 0;
    for (size_t i = 0; i <= p->n_band; i++) {
        uint64_t gap_end = i < p->n_band ? p->band[i][0] : p->ymax; /* the rest up to the next range */
        double h = (double)(gap_end - at) * per_rest;
        if (px <= h) return at + (uint64_t)(px / per_rest);
        px -= h;
        if (i == p->n_band) break;
        h = (double)(p->band[i][1] - p->band[i][0]) * per_band;
        if (px <= h) return p->band[i][0] + (uint64_t)(px / per_band);
        px -= h;
        at = p->band[i][1];
    }
    return p->ymax;
}

/* The shading of the band's ranges (drawn under the tensors). */
void mp_viz_band_draw(const viz_svg *s, const viz_panel *p) {
    mp_buf *b = s->b;
    for (size_t i = 0; i < p->n_band; i++) {
        double y0 = mp_viz_svg_y(s, p, p->band[i][1]), y1 = mp_viz_svg_y(s, p, p->band[i][0]);
        mp_buf_puts(b, "<rect class=\"wl\" x=\"");
        mp_viz_num(b, s->left);
        mp_buf_puts(b, "\" y=\"");
        mp_viz_num(b, y0);
        mp_buf_puts(b, "\" width=\"");
        mp_viz_num(b, s->W);
        mp_buf_puts(b, "\" height=\"");
        mp_viz_num(b, y1 - y0);
        mp_buf_printf(b, "\"><title>whole-life band: bytes %llu..%llu, taken by tensors live over the whole "
                      "program, drawn at a smaller scale</title></rect>\n",
                      (unsigned long long)p->band[i][0], (unsigned long long)p->band[i][1]);
    }
}

/* Its label, drawn over the tensors, inside the band's top. */
void mp_viz_band_label(const viz_svg *s, const viz_panel *p) {
    mp_buf *b = s->b;
    char t[32];
    double y = mp_viz_svg_y(s, p, p->band[p->n_band - 1][1]);
    mp_buf_puts(b, "<text class=\"lbt\" x=\"");
    mp_viz_num(b, s->left + s->W - 4);
    mp_buf_puts(b, "\" y=\"");
    mp_viz_num(b, y + 11);
    mp_buf_printf(b, "\">whole-life tensors: %s, drawn compressed to %.0f%% of the height</text>\n",
                  mp_viz_bytes(p->band_bytes, t), 100 * VIZ_BAND_SHARE);
}
