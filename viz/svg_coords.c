/* svg_coords.c - where things go in the SVG picture, shared by the page
 * (svg.c), its panels (svg_panel.c) and its tiles (svg_tiles.c): node to
 * x, bytes to y, an item's colour class. */
#include "viz.h"

#include <math.h>

double mp_viz_svg_x(const viz_svg *s, double node) {
    if (!s->ph) return s->left + node / s->L.width * s->W;
    if (node <= s->ph) return s->left + node / s->ph * s->ph_px;
    return s->left + s->ph_px + (node - s->ph) / (s->L.width - s->ph) * (s->W - s->ph_px);
}

double mp_viz_svg_node(const viz_svg *s, double px) {
    if (!s->ph) return px / s->W * s->L.width;
    if (px <= s->ph_px) return px / s->ph_px * s->ph;
    return s->ph + (px - s->ph_px) / (s->W - s->ph_px) * (s->L.width - s->ph);
}

/* At least 8 leading placeholders, over a fifth of the nodes, with other
 * nodes after them: they get a tenth of the width (or their share). */
void mp_viz_svg_placeholders(viz_svg *s) {
    if (!s->prog->n_graphs) return;
    const mp_graphdef *g = &s->prog->graphs[0];
    uint32_t k = 0;
    while (k < g->n_nodes && g->nodes[k].kind == MP_NODE_PLACEHOLDER) k++;
    if (k < 8 || k <= 0.2 * s->L.width || k >= g->n_nodes) return;
    s->ph = k;
    s->ph_px = fmin(0.1 * s->W, k / s->L.width * s->W);
}

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
