/* pictures.h - pictures of a plan and of the metrics history (viz/,
 * docs/visualisation.md).  Not part of the shared library. */
#ifndef MP_PICTURES_H
#define MP_PICTURES_H

#include "harness.h"
#include "metrics.h"

/* ---------------------------------------------------------- visualisation */

/* Pictures of a plan (viz/, docs/visualisation.md).  Each writes into
 * `out` and returns MP_OK, or an error code with err->msg; the same inputs
 * give the same bytes.  None prints or writes files, except the HTML
 * report when asked for SVGs (svg_dir). */

/* A Chrome trace event file (JSON) for Perfetto and chrome://tracing: one
 * process per graph block, tracks per buffer, one slice per tensor, slices
 * for sub-graph reservations, live-bytes counters; time = node * 1000 us. */
int mp_viz_trace(const mp_program *prog, const mp_plan *plan, struct mp_buf *out,
                 mp_err *err);

enum mp_viz_color { MP_VIZ_BY_DEVICE, MP_VIZ_BY_GRAPH };

typedef struct mp_viz_svg_options {
    uint32_t color;        /* enum mp_viz_color (default by device) */
    uint32_t width;        /* plot width in pixels (default 1200, 200..20000) */
    uint32_t panel_height; /* pixels per buffer panel (default 260, 60..5000) */
    const char *title;     /* first line of the picture; NULL: the graph file */
} mp_viz_svg_options;

void mp_viz_svg_options_default(mp_viz_svg_options *o);
/* A standalone SVG: x = node, y = byte offset, one panel per buffer, a
 * rectangle per tensor (sub-pixel ones merged into tiles), the live-bytes
 * curve and the lower bound, mp_verify's violations outlined in red. */
int mp_viz_svg(const mp_program *prog, const mp_plan *plan, const mp_viz_svg_options *o,
               struct mp_buf *out, mp_err *err);

/* The SVG of harness case `graph_id` ("h<seed>-<i>") planned with `algo`,
 * regenerated with mp_harness_case + mp_gen + mp_plan_program.  MP_EFORMAT
 * when the id is not of that form; *tensors (may be NULL) gets the
 * regenerated program's tensor count, to compare with the recorded one. */
int mp_viz_harness_svg(const char *graph_id, const char *algo, const mp_viz_svg_options *o,
                       struct mp_buf *out, uint64_t *tensors, mp_err *err);

typedef struct mp_viz_report_options {
    const char *since, *algo; /* as for mp_report; NULL: all */
    uint32_t worst;           /* rows in the worst-graphs table (default 20) */
    uint32_t max_points;      /* points in the time-vs-size plot (default 5000) */
    /* When set, the worst harness graphs' SVGs are written to
     * svg_dir/<graph>-<algo>.svg and linked as svg_href/<graph>-<algo>.svg;
     * a graph that cannot be regenerated is listed without a link. */
    const char *svg_dir, *svg_href;
    bool by_commit; /* the ratio chart and the runs table per commit (report --by-commit) */
} mp_viz_report_options;

void mp_viz_report_options_default(mp_viz_report_options *o);
/* The metrics history as one self-contained HTML page (inline CSS and SVG,
 * no script, no external asset). */
int mp_viz_report_html(mp_db *db, const mp_viz_report_options *o, struct mp_buf *out,
                       mp_err *err);

#endif
