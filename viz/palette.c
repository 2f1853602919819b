/* palette.c - the colours of the pictures and the order of devices.
 *
 * A qualitative palette (distinct hues of similar lightness, readable on
 * white with white text borders), and a small sorted set of devices so a
 * device keeps its colour across panels and pictures of one program. */
#include "viz.h"

static const char *const COLORS[VIZ_N_COLORS] = {
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
    "#9c755f", "#ff9da7", "#86bcb6", "#d4a6c8", "#8cd17d", "#a0cbe8"};

const char *mp_viz_color(uint32_t k) { return COLORS[k % VIZ_N_COLORS]; }

/* Invariant: d[0..n) is strictly increasing in mp_device_cmp order. */
void mp_viz_devices_add(viz_devices *ds, mp_device d) {
    uint32_t i = 0;
    while (i < ds->n && mp_device_cmp(ds->d[i], d) < 0) i++;
    if (i < ds->n && mp_device_eq(ds->d[i], d)) return;
    if (ds->n == sizeof ds->d / sizeof *ds->d) return; /* beyond: "last" colour */
    memmove(ds->d + i + 1, ds->d + i, (ds->n - i) * sizeof *ds->d);
    ds->d[i] = d;
    ds->n++;
}

uint32_t mp_viz_devices_index(const viz_devices *ds, mp_device d) {
    for (uint32_t i = 0; i < ds->n; i++)
        if (mp_device_eq(ds->d[i], d)) return i;
    return ds->n ? ds->n - 1 : 0;
}
