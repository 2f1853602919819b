/* svg_coords.c - where things go in the SVG picture, shared by the page
 * (svg.c), its panels (svg_panel.c) and its tiles (svg_tiles.c): node to
 * x, bytes to y, an item's colour class. */
#include "viz.h"

double mp_viz_svg_x(const viz_svg *s, double node) { return s->left + node / s->L.width * s->W; }

double mp_viz_svg_y(const viz_svg *s, const viz_panel *p, uint64_t bytes) {
    return p->top + s->H * (1.0 - (double)bytes / (double)p->ymax);
}

uint32_t mp_viz_svg_class(const viz_svg *s, const viz_item *it) {
    if (s->o->color == MP_VIZ_BY_GRAPH) return (uint32_t)it->graph % VIZ_N_COLORS;
    return mp_viz_devices_index(&s->devs, it->dev) % VIZ_N_COLORS;
}
