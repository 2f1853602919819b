/* svg_tiles.c - tensors below a pixel, merged into tiles.
 *
 * Ten thousand tensors on a 1200-pixel axis are mostly narrower than a
 * pixel: drawn one by one they would make a large file of invisible
 * shapes.  Instead the plot is cut into VIZ_TILE x VIZ_TILE pixel cells;
 * each small rectangle adds the area it covers in each cell it touches.
 * A cell takes the colour holding most of its area (a weighted majority
 * vote, so memory stays 12 bytes a cell) and an opacity from the share of
 * the cell covered, in four steps; runs of equal cells along a row become
 * one rectangle.  The output size is bounded by the number of cells, not
 * by the number of tensors. */
#include "viz.h"

#include <math.h>

typedef struct cell {
    float total; /* pixels covered, overlaps counted each time */
    float lead;  /* the vote's margin for `best` */
    uint32_t best;
} cell;

static void vote(cell *c, uint32_t k, float a) {
    c->total += a;
    if (c->lead <= 0.0f || c->best == k) {
        if (c->best != k) c->lead = 0.0f;
        c->best = k;
        c->lead += a;
    } else if (c->lead >= a) {
        c->lead -= a;
    } else {
        c->best = k;
        c->lead = a - c->lead;
    }
}

/* Opacity step 1..4 of a cell of cw x ch pixels; 0 when nothing is in it. */
static int level(const cell *c, double cw, double ch) {
    if (c->total <= 0) return 0;
    int q = (int)ceil(4.0 * c->total / (cw * ch));
    return q > 4 ? 4 : q < 1 ? 1 : q;
}

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

void mp_viz_svg_tiles(viz_svg *s, const viz_panel *p, const viz_item *const *v, size_t n) {
    if (!n) return;
    const double T = VIZ_TILE;
    size_t nx = (size_t)ceil(s->W / T), ny = (size_t)ceil(s->H / T);
    cell *g = mp_xcalloc(nx * ny, sizeof *g);
    for (size_t i = 0; i < n; i++) {
        double x0 = clampd(mp_viz_svg_x(s, v[i]->x0) - s->left, 0, s->W);
        double x1 = clampd(mp_viz_svg_x(s, v[i]->x1) - s->left, 0, s->W);
        double y0 = clampd(mp_viz_svg_y(s, p, v[i]->hi) - p->top, 0, s->H);
        double y1 = clampd(mp_viz_svg_y(s, p, v[i]->lo) - p->top, 0, s->H);
        /* a footprint of at least 1/1000 pixel, so every tensor shows */
        if (x1 - x0 < 1e-3) x1 = x0 + 1e-3;
        if (y1 - y0 < 1e-3) y1 = y0 + 1e-3;
        uint32_t k = mp_viz_svg_class(s, v[i]);
        size_t cx0 = (size_t)(x0 / T), cy0 = (size_t)(y0 / T);
        for (size_t cy = cy0; cy < ny && cy * T < y1; cy++) {
            double hy = fmin(y1, (double)(cy + 1) * T) - fmax(y0, (double)cy * T);
            for (size_t cx = cx0; cx < nx && cx * T < x1; cx++) {
                double wx = fmin(x1, (double)(cx + 1) * T) - fmax(x0, (double)cx * T);
                if (wx > 0 && hy > 0) vote(&g[cy * nx + cx], k, (float)(wx * hy));
            }
        }
    }
    mp_buf *b = s->b;
    mp_buf_printf(b, "<g><title>%llu tensor%s smaller than a pixel, merged into %d-pixel tiles: "
                     "colour of the majority, opacity the share of the tile covered</title>\n",
                  (unsigned long long)n, n == 1 ? "" : "s", VIZ_TILE);
    for (size_t cy = 0; cy < ny; cy++) {
        double ch = fmin(T, s->H - (double)cy * T);
        for (size_t cx = 0; cx < nx;) {
            const cell *c = &g[cy * nx + cx];
            double cw = fmin(T, s->W - (double)cx * T);
            int q = level(c, cw, ch);
            size_t e = cx + 1; /* the run of equal cells [cx, e) */
            while (q && e < nx) {
                const cell *d = &g[cy * nx + e];
                double dw = fmin(T, s->W - (double)e * T);
                if (level(d, dw, ch) != q || d->best != c->best) break;
                e++;
            }
            if (q) {
                mp_buf_puts(b, "<rect x=\"");
                mp_viz_num(b, s->left + (double)cx * T);
                mp_buf_puts(b, "\" y=\"");
                mp_viz_num(b, p->top + (double)cy * T);
                mp_buf_puts(b, "\" width=\"");
                mp_viz_num(b, fmin((double)e * T, s->W) - (double)cx * T);
                mp_buf_puts(b, "\" height=\"");
                mp_viz_num(b, ch);
                mp_buf_printf(b, "\" class=\"c%u q%d\"/>\n", c->best % VIZ_N_COLORS, q);
            }
            cx = e;
        }
    }
    mp_buf_puts(b, "</g>\n");
    mp_xfree(g);
}
