/* svg_coords.c - where things go in the SVG picture, shared by the page
 * (svg.c), its panels (svg_panel.c) and its tiles (svg_tiles.c): node to
 * x, bytes to y, an item's colour class. */
#include "viz.h"

double mp_viz_svg_x(const viz_svg *s, double node) { return s->left + node / s->L.width * s->W; }

/* (svg_band.c) Pixels from the panel's bottom to `bytes`. */
double mp_viz_band_px(const viz_svg *s, const viz_panel *p, uint64_t bytes) {
    uint64_t in_band = 0;
    for (size_t i = 0; i < p->n_band && p->band[i][0] < bytes; i++)
        in_band += (bytes < p->band[i][1] ? bytes : p->band[i][1]) - p->band[i][0];
    double band_h = VIZ_BAND_SHARE * s->H, rest = (double)(p->ymax - p->band_bytes);
    return (double)in_band / (double)p->band_bytes * band_h + (double)(bytes - in_band) / rest * (s->H - band_h);
}

double mp_viz_svg_y(const viz_svg *s, const viz_panel *p, uint64_t bytes) {
    if (p->n_band) return p->top + s->H - mp_viz_band_px(s, p, bytes > p->ymax ? p->ymax : bytes);
    return p->top + s->H * (1.0 - (double)bytes / (double)p->ymax);
}

uint32_t mp_viz_svg_class(const viz_svg *s, const viz_item *it) {
    if (s->o->color == MP_VIZ_BY_GRAPH) return (uint32_t)it->graph % VIZ_N_COLORS;
    return mp_viz_devices_index(&s->devs, it->dev) % VIZ_N_COLORS;
}
