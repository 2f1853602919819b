/* viz.h - internals of the visualisation module (viz/).
 *
 * A plan is seen three ways: as a Chrome trace (trace.c), as an SVG picture
 * (svg*.c) and, through the metrics store, as an HTML report (html*.c).
 * They share what is declared here: the plan laid out as boxes in
 * (node, byte) space (layout.c), the bytes those boxes cover (cover.c),
 * non-overlapping lanes for trace tracks (lanes.c), colours (palette.c) and
 * text escaping and number formatting (text.c).
 *
 * Every function here is deterministic: the same inputs give the same
 * output bytes (sorts use total orders, floats are printed with fixed
 * precision). */
#ifndef MP_VIZ_H
#define MP_VIZ_H

#include "internal.h"
#include "pictures.h"
#include "files.h"

/* ------------------------------------------------------------- layout */

/* One allocation placed on the entry graph's time axis.  x is measured in
 * entry-graph nodes: node i of the entry graph covers [i, i + 1); a
 * sub-graph run by node i is drawn inside that column, its own nodes
 * splitting the column evenly.  Invariants: x0 < x1, lo <= hi. */
typedef struct viz_item {
    double x0, x1;
    uint64_t lo, hi;     /* byte range [lo, hi); hi saturates at UINT64_MAX */
    uint64_t buffer;     /* the alloc's mem_id */
    int32_t graph;       /* program graph of the block */
    int32_t depth;       /* 0 for the entry graph */
    mp_device dev;       /* the tensor's device, else the buffer's */
    const mp_alloc *a;
} viz_item;

/* Where one graph's nodes were drawn: [x0, x0 + w). */
typedef struct viz_instance {
    int32_t graph, parent, node; /* parent graph and its node; -1 at the top */
    uint32_t slot;               /* its place among the node's drawn sub-graphs */
    int32_t role;                /* which of the node's sub[] it is (0, 1) */
    int32_t depth;
    double x0, w;
} viz_instance;

typedef struct viz_layout {
    viz_item *items;
    size_t n, cap;
    viz_instance *inst;
    size_t ni, icap;
    int32_t *block_of; /* program graph -> its first plan block, -1 */
    double width;      /* entry graph's node count, at least 1 */
    bool truncated;    /* expansion stopped at VIZ_MAX_ITEMS / MP_MAX_DEPTH */
} viz_layout;

/* A bound on laid-out items: a sub-graph run from many places is drawn at
 * each, and a DAG of shared sub-graphs could multiply without end. */
#define VIZ_MAX_ITEMS 500000u

void mp_viz_layout_build(const mp_program *prog, const mp_plan *plan, viz_layout *L);
void mp_viz_layout_free(viz_layout *L);
/* program graph -> first plan block with that graph, -1 (caller frees) */
int32_t *mp_viz_block_index(const mp_program *prog, const mp_plan *plan);
/* The device of an allocation: its tensor's, else its buffer's, else cpu:0. */
/* The operator of the node that makes the allocation's tensor (NULL when
 * the file names none) and that node (-1 when none). */
const char *mp_viz_alloc_op(const mp_program *prog, int32_t graph, const mp_alloc *a, int32_t *node);
mp_device mp_viz_alloc_device(const mp_program *prog, const mp_graph_plan *gp,
                           const mp_alloc *a);
/* Inclusive node range of an allocation, clamped into [0, n_nodes). */
void mp_viz_alloc_life(const mp_alloc *a, uint32_t n_nodes, int32_t *s, int32_t *e);

/* The byte range [lo, hi) a graph's memory spans in one buffer, its own
 * allocations and those of every sub-graph it runs, transitively. */
typedef struct viz_span {
    uint64_t buffer, lo, hi;
} viz_span;

typedef struct viz_hulls {
    viz_span **of; /* per program graph, sorted by buffer */
    uint32_t *n;
} viz_hulls;

void mp_viz_hulls_build(const mp_program *prog, const mp_plan *plan, const int32_t *block_of,
                     viz_hulls *h);
void mp_viz_hulls_free(viz_hulls *h, uint32_t n_graphs);
/* What the k-th sub-graph of a control-flow node does: "true", "body"... */
const char *mp_viz_sub_role(uint32_t kind, int k);

/* -------------------------------------------------------------- cover */

typedef struct viz_box {
    double x0, x1;
    uint64_t lo, hi;
} viz_box;

/* A step function: the value v[k] holds on [x[k], x[k + 1]); the last step
 * runs to +inf (its value is 0 once every box has ended). */
typedef struct viz_steps {
    double *x;
    uint64_t *v;
    size_t n;
} viz_steps;

/* Bytes covered by the union of the boxes at each x (overlaps count once).
 * O(n log n): a sweep over x with a segment tree over the byte ends. */
void mp_viz_cover(const viz_box *b, size_t n, viz_steps *out);
void mp_viz_steps_free(viz_steps *s);

/* -------------------------------------------------------------- lanes */

/* Assign each inclusive interval [s[i], e[i]] the lowest lane free at its
 * start, so intervals sharing a lane never overlap.  Returns the number of
 * lanes (the largest overlap).  O(n log n). */
uint32_t mp_viz_lanes(const int64_t *s, const int64_t *e, size_t n, uint32_t *lane);

/* ------------------------------------------------------------ palette */

#define VIZ_N_COLORS 12
/* Colour k of the qualitative palette (k mod VIZ_N_COLORS), "#rrggbb". */
const char *mp_viz_color(uint32_t k);

/* Distinct devices of a program and plan, in mp_device_cmp order. */
typedef struct viz_devices {
    mp_device d[64];
    uint32_t n;
} viz_devices;
void mp_viz_devices_add(viz_devices *ds, mp_device d);
uint32_t mp_viz_devices_index(const viz_devices *ds, mp_device d);

/* ---------------------------------------------------------------- svg */

#define VIZ_TILE 3          /* pixels: the side of a merged tile */
#define VIZ_MAX_RECTS 2000  /* rectangles drawn one by one, per panel */
#define VIZ_MAX_PANELS 64
#define VIZ_MAX_MARKS 1000  /* violation outlines per panel */

/* One buffer's panel.  Invariant: ymax >= every item's hi, size, lower. */
typedef struct viz_panel {
    uint64_t buffer;
    const viz_item **items; /* this buffer's items, layout order */
    size_t n;
    uint64_t size;  /* the entry block's buffer size, 0 when it has none */
    uint64_t lower; /* the verifier's lower bound, 0 when none */
    uint64_t ymax;  /* the y axis' top, at least 1 */
    bool has_dev;
    mp_device dev;
    double top;     /* document y of the plot's top edge */
    /* the whole-life band (svg_band.c): merged byte ranges of tensors live
     * over the whole program, drawn compressed; n_band 0 when none */
    uint64_t (*band)[2];
    size_t n_band;
    uint64_t band_bytes;
} viz_panel;

/* A violation outline: bytes [lo, hi) of `buffer` over x in [x0, x1). */
typedef struct viz_mark {
    uint64_t buffer, lo, hi;
    double x0, x1;
    uint32_t v; /* index in the report's violations */
} viz_mark;

typedef struct viz_svg {
    const mp_program *prog;
    const mp_plan *plan;
    const mp_viz_svg_options *o;
    viz_layout L;
    mp_verify_report r;
    viz_devices devs;
    viz_mark *marks;
    size_t n_marks, cap_marks;
    mp_buf *b;
    double left, W, H; /* the plot area's left edge and width; panel height */
    /* a long run of placeholders at the start of the entry graph (an fx
     * export's weights) is drawn compressed: nodes [0, ph) take ph_px
     * pixels, the rest the remaining width; ph 0 when not */
    double ph, ph_px;
} viz_svg;

double mp_viz_svg_x(const viz_svg *s, double node);
/* The node position at `px` pixels right of the plot's left edge. */
double mp_viz_svg_node(const viz_svg *s, double px);
/* Compress the entry graph's leading placeholders when they are many. */
void mp_viz_svg_placeholders(viz_svg *s);
double mp_viz_svg_y(const viz_svg *s, const viz_panel *p, uint64_t bytes);
uint32_t mp_viz_svg_class(const viz_svg *s, const viz_item *it);
#define VIZ_BAND_SHARE 0.2 /* of a panel's height, for the whole-life bytes */
/* The whole-life band of a panel (svg_band.c): built once its items and
 * ymax are known, its pixels from the bottom for a byte offset, drawn. */
void mp_viz_band_build(const viz_svg *s, viz_panel *p);
void mp_viz_band_free(viz_panel *p);
double mp_viz_band_px(const viz_svg *s, const viz_panel *p, uint64_t bytes);
uint64_t mp_viz_band_bytes(const viz_svg *s, const viz_panel *p, double px);
void mp_viz_band_draw(const viz_svg *s, const viz_panel *p);
void mp_viz_band_label(const viz_svg *s, const viz_panel *p);
/* The panel: frame, axes, tiles, rectangles, curves, outlines. */
void mp_viz_svg_panel(viz_svg *s, const viz_panel *p);
/* Items below a pixel, merged into VIZ_TILE-sized tiles: each tile takes
 * the colour that covers most of it, its opacity the share covered. */
void mp_viz_svg_tiles(viz_svg *s, const viz_panel *p, const viz_item *const *v, size_t n);
/* Place the report's violations on the layout (s->marks); sets placed[i]
 * for each violation given at least one outline. */
void mp_viz_svg_marks_build(viz_svg *s, const viz_panel *panels, size_t n_panels, bool *placed);

/* --------------------------------------------------------------- plots */

/* A chart area: data range [x0, x1] x [y0, y1], log scales optional (then
 * the range must be positive), drawn into [left, left + w] x [top, top + h]. */
typedef struct viz_plot {
    double x0, x1, y0, y1;
    bool logx, logy;
    double left, top, w, h;
} viz_plot;

double mp_viz_plot_x(const viz_plot *p, double v);
double mp_viz_plot_y(const viz_plot *p, double v);
/* Frame, grid, ticks and axis labels.  With xnames, x ticks sit at the
 * integer positions 0..n_xnames-1 and carry those names (thinned out). */
void mp_viz_plot_frame(mp_buf *b, const viz_plot *p, const char *xlabel, const char *ylabel,
                    const char *const *xnames, size_t n_xnames);
/* A legend row of coloured swatches at (x, y). */
void mp_viz_plot_legend(mp_buf *b, double x, double y, const char *const *names,
                     const char *const *colors, size_t n);
/* The colour of an algorithm: fixed per known name, so reports agree. */
const char *mp_viz_algo_color(const char *algo);

/* -------------------------------------------------------------- report */

/* Write the worst plans' SVGs (o->svg_dir) and fill their href/note. */
int mp_viz_report_svgs(const mp_viz_report_options *o, mp_report_data *d, mp_err *err);
void mp_viz_report_charts(mp_buf *b, const mp_report_data *d); /* the two plots */

/* --------------------------------------------------------------- text */

/* Text for XML (element content and attribute values) and for JSON string
 * contents: markup characters escaped, control bytes dropped, invalid
 * UTF-8 bytes replaced by '?', so the output always parses. */
void mp_viz_xml(mp_buf *b, const char *s);
/* 1536 -> "1.50 KiB"; 3 significant digits, binary units. */
const char *mp_viz_bytes(uint64_t v, char *buf /* >= 32 */);
/* A coordinate with one decimal, "-0.0" never printed. */
void mp_viz_num(mp_buf *b, double v);

#endif
