/* svg.c - `memplan svg`: a plan as one standalone SVG document.
 *
 * The document: a title and summary (totals, lower bound, verdict), a
 * colour legend, one panel per buffer (svg_panel.c), then the violations
 * that have no place in a panel, as text.  Nothing outside the file is
 * referenced (no fonts, no scripts, no links), so it opens anywhere.
 * The body is written first and the header after, because the height is
 * known only at the end. */
#include "viz.h"

#include <math.h>
#include <stdio.h>

void mp_viz_svg_options_default(mp_viz_svg_options *o) {
    memset(o, 0, sizeof *o);
    o->color = MP_VIZ_BY_DEVICE;
    o->width = 1200;
    o->panel_height = 260;
}

static int cmp_item_buffer(const void *a, const void *b) {
    const viz_item *x = *(const viz_item *const *)a, *y = *(const viz_item *const *)b;
    if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
    return (x > y) - (x < y); /* layout order within a buffer */
}

/* Panels: every buffer that holds an item, and every non-empty buffer of
 * the entry block, in mem_id order; at most VIZ_MAX_PANELS. */
static size_t make_panels(viz_svg *s, const viz_item **sorted, viz_panel *p, bool *more) {
    const viz_layout *L = &s->L;
    const mp_graph_plan *entry = L->block_of[0] >= 0 ? &s->plan->graphs[L->block_of[0]] : NULL;
    uint64_t nb = entry ? entry->n_buffers : 0, b = 0;
    size_t np = 0, i = 0;
    *more = false;
    for (;;) { /* merge two ascending sequences: item buffers, non-empty entry buffers */
        while (b < nb && entry->buffers[b] == 0) b++;
        bool hi = i < L->n, hb = b < nb;
        if (!hi && !hb) break;
        uint64_t next = !hi ? b : !hb ? sorted[i]->buffer
                        : sorted[i]->buffer < b ? sorted[i]->buffer : b;
        if (np == VIZ_MAX_PANELS) {
            *more = true;
            break;
        }
        viz_panel *q = &p[np++];
        memset(q, 0, sizeof *q);
        q->buffer = next;
        q->items = sorted + i;
        while (i < L->n && sorted[i]->buffer == next) i++;
        q->n = (size_t)(sorted + i - q->items);
        if (hb && b == next) b++;
        q->size = next < nb ? entry->buffers[next] : 0;
        q->lower = next < s->r.n_buffers ? s->r.buf_lower[next] : 0;
        q->has_dev = entry && next < entry->n_devices;
        if (q->has_dev) q->dev = entry->devices[next];
        q->ymax = q->size > q->lower ? q->size : q->lower;
        for (size_t k = 0; k < q->n; k++)
            if (q->items[k]->hi > q->ymax) q->ymax = q->items[k]->hi;
        if (q->ymax == 0) q->ymax = 1;
        mp_viz_band_build(s, q);
    }
    return np;
}

static void legend(viz_svg *s, mp_buf *b, double *y) {
    char name[MP_MAX_NAME + 32];
    double x = s->left;
    uint32_t n = s->o->color == MP_VIZ_BY_GRAPH ? s->prog->n_graphs : s->devs.n;
    bool *used = mp_xcalloc(n + 1, sizeof *used);
    for (size_t i = 0; i < s->L.n; i++) {
        const viz_item *it = &s->L.items[i];
        uint32_t k = s->o->color == MP_VIZ_BY_GRAPH ? (uint32_t)it->graph
                                                     : mp_viz_devices_index(&s->devs, it->dev);
        if (k < n) used[k] = true;
    }
    uint32_t shown = 0;
    for (uint32_t k = 0; k < n && shown < 48; k++) {
        if (!used[k]) continue;
        if (s->o->color == MP_VIZ_BY_GRAPH)
            snprintf(name, sizeof name, "%s", s->prog->graphs[k].name);
        else
            mp_device_str(s->devs.d[k], name);
        double w = 22 + 6.5 * (double)strlen(name);
        if (x + w > s->left + s->W && x > s->left) {
            x = s->left;
            *y += 16;
        }
        mp_buf_puts(b, "<rect x=\"");
        mp_viz_num(b, x);
        mp_buf_puts(b, "\" y=\"");
        mp_viz_num(b, *y - 9);
        mp_buf_printf(b, "\" width=\"10\" height=\"10\" class=\"c%u\"/><text x=\"", k % VIZ_N_COLORS);
        mp_viz_num(b, x + 14);
        mp_buf_puts(b, "\" y=\"");
        mp_viz_num(b, *y);
        mp_buf_puts(b, "\">");
        mp_viz_xml(b, name);
        mp_buf_puts(b, "</text>\n");
        x += w + 8;
        shown++;
    }
    mp_xfree(used);
    *y += 16;
    /* what the rest of a panel means */
    mp_buf_printf(b, "<text x=\"%d\" y=\"", (int)s->left);
    mp_viz_num(b, *y);
    mp_buf_printf(b, "\" class=\"tk\">boxes: tensors, coloured by %s (x: their life in node order, y: their "
                  "bytes in the buffer); grey columns: sub-graphs a control-flow node runs; black line: bytes "
                  "live; dashed: lower bound; shaded band: tensors live the whole program, compressed; red: "
                  "violations</text>\n", s->o->color == MP_VIZ_BY_GRAPH ? "graph" : "device");
    *y += 18;
}

static void summary(viz_svg *s, mp_buf *b, double *y) {
    const mp_verify_report *r = &s->r;
    char t[32], l[32];
    mp_buf_printf(b, "<text x=\"%d\" y=\"22\" class=\"t\">", (int)s->left);
    mp_viz_xml(b, s->o->title ? s->o->title : s->prog->filename ? s->prog->filename : "plan");
    mp_buf_puts(b, "</text>\n<text x=\"");
    mp_viz_num(b, s->left);
    mp_buf_puts(b, "\" y=\"40\">algo ");
    mp_viz_xml(b, s->plan->algo_name ? s->plan->algo_name : mp_algo_name(s->plan->opts.algo));
    mp_buf_printf(b, ", alignment %u, total %s, lower bound %s, ratio ", s->plan->opts.alignment,
                  mp_viz_bytes(r->total_bytes, t), mp_viz_bytes(r->lower_bound, l));
    if (isinf(r->ratio)) mp_buf_puts(b, "inf");
    else mp_buf_printf(b, "%.4f", r->ratio);
    if (r->n_violations)
        mp_buf_printf(b, ", <tspan class=\"bad\">INVALID: %llu violation%s</tspan>",
                      (unsigned long long)r->n_violations, r->n_violations == 1 ? "" : "s");
    else
        mp_buf_puts(b, ", valid");
    mp_buf_puts(b, "</text>\n");
    *y = 64;
}

/* Violations without an outline, and the notes on what was left out. */
static void notes(viz_svg *s, mp_buf *b, double *y, const bool *placed, bool more_panels) {
    char line[400];
    uint32_t listed = 0, unplaced = 0;
    for (uint32_t i = 0; i < s->r.n_v; i++) unplaced += !placed[i];
    if (unplaced) {
        mp_buf_printf(b, "<text x=\"%d\" y=\"", (int)s->left);
        mp_viz_num(b, *y);
        mp_buf_printf(b, "\" class=\"bad\">violations with no place in a panel: %u</text>\n", unplaced);
        *y += 16;
    }
    for (uint32_t i = 0; i < s->r.n_v && listed < 40; i++) {
        if (placed[i]) continue;
        const mp_violation *v = &s->r.v[i];
        snprintf(line, sizeof line, "%s%s%.300s", v->graph, v->graph[0] ? ": " : "", v->msg);
        mp_buf_printf(b, "<text x=\"%d\" y=\"", (int)s->left + 8);
        mp_viz_num(b, *y);
        mp_buf_puts(b, "\" class=\"bad\">");
        mp_viz_xml(b, line);
        mp_buf_puts(b, "</text>\n");
        *y += 15;
        listed++;
    }
    const char *msg[3] = {NULL, NULL, NULL};
    if (unplaced > listed) msg[0] = "... more violations: see memplan verify";
    if (s->L.truncated) msg[1] = "sub-graphs run from too many places are drawn only in part";
    if (more_panels) msg[2] = "more buffers than panels: only the first 64 are drawn";
    for (int k = 0; k < 3; k++) {
        if (!msg[k]) continue;
        mp_buf_printf(b, "<text x=\"%d\" y=\"", (int)s->left);
        mp_viz_num(b, *y);
        mp_buf_printf(b, "\">%s</text>\n", msg[k]);
        *y += 15;
    }
}

static const char STYLE[] =
    "<style>\n"
    "text{font-family:sans-serif;font-size:11px;fill:#222}\n"
    ".t{font-size:15px;font-weight:bold}.bad{fill:#d00000}.h{font-size:12px;font-weight:bold}\n"
    ".fr{fill:#fbfbfb;stroke:#999}.ax{stroke:#999}.tk{fill:#555;font-size:10px}\n"
    ".r rect{stroke:#fff;stroke-width:.4}.l{font-size:9px;fill:#111;text-anchor:middle;"
    "dominant-baseline:central;pointer-events:none}\n"
    ".sg{fill:#000;fill-opacity:.045}.lv{fill:none;stroke:#222;stroke-width:1.2}.lvb{fill:#222;fill-opacity:.3;stroke:none}\n"
    ".lb{stroke:#6a3d9a;stroke-width:1.4;stroke-dasharray:7 4}.be{stroke:#e07000;stroke-width:1.2;"
    "stroke-dasharray:2 3}.lbt{fill:#6a3d9a;font-size:10px;text-anchor:end}\n"
    ".wl{fill:#8c6d31;fill-opacity:.12}\n"
    ".v{fill:none;stroke:#e00000;stroke-width:2}\n"
    ".q1{fill-opacity:.3}.q2{fill-opacity:.55}.q3{fill-opacity:.8}.q4{fill-opacity:1}\n";

static void style(mp_buf *b) {
    mp_buf_puts(b, STYLE);
    for (uint32_t k = 0; k < VIZ_N_COLORS; k++) mp_buf_printf(b, ".c%u{fill:%s}", k, mp_viz_color(k));
    mp_buf_puts(b, "\n</style>\n");
}

/* The panels' bodies under the summary and legend, the notes below;
 * returns the picture's height. */
static double draw_body(viz_svg *s, viz_panel *panels, size_t np, bool more) {
    double y = 0;
    summary(s, s->b, &y);
    legend(s, s->b, &y);
    for (size_t k = 0; k < np; k++) {
        panels[k].top = y + 22;
        y = panels[k].top + s->H + 40;
    }
    bool *placed = mp_xcalloc(s->r.n_v + 1, sizeof *placed);
    mp_viz_svg_marks_build(s, panels, np, placed);
    for (size_t k = 0; k < np; k++) mp_viz_svg_panel(s, &panels[k]);
    if (np == 0) {
        mp_buf_printf(s->b, "<text x=\"%d\" y=\"", (int)s->left);
        mp_viz_num(s->b, y + 4);
        mp_buf_puts(s->b, "\">nothing to draw: the plan places no tensor of the entry graph</text>\n");
        y += 24;
    }
    notes(s, s->b, &y, placed, more);
    mp_xfree(placed);
    return y;
}

/* The document: header, title, style, background, the body. */
static void write_document(const viz_svg *s, const mp_buf *body, double y, mp_buf *out) {
    int width = (int)(s->left + s->W + 24), height = (int)ceil(y + 8);
    mp_buf_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                       "viewBox=\"0 0 %d %d\">\n<title>",
                  width, height, width, height);
    mp_viz_xml(out, s->o->title ? s->o->title : s->prog->filename ? s->prog->filename : "plan");
    mp_buf_puts(out, "</title>\n");
    style(out);
    mp_buf_printf(out, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", width, height);
    mp_buf_put(out, body->data ? body->data : "", body->len);
    mp_buf_puts(out, "</svg>\n");
}

int mp_viz_svg(const mp_program *prog, const mp_plan *plan, const mp_viz_svg_options *o,
               mp_buf *out, mp_err *err) {
    mp_err_clear(err);
    mp_viz_svg_options dflt;
    if (!o) {
        mp_viz_svg_options_default(&dflt);
        o = &dflt;
    }
    if (o->width < 200 || o->width > 20000 || o->panel_height < 60 || o->panel_height > 5000)
        return mp_err_set(err, MP_EFORMAT, "picture size %ux%u out of range (width 200..20000, "
                          "panel height 60..5000)", o->width, o->panel_height);
    viz_svg s;
    memset(&s, 0, sizeof s);
    s.prog = prog;
    s.plan = plan;
    s.o = o;
    int rc = mp_verify(prog, plan, &s.r, err);
    if (rc != MP_OK && rc != MP_EINVALID) {
        mp_verify_report_free(&s.r);
        return rc;
    }
    mp_err_clear(err);
    mp_viz_layout_build(prog, plan, &s.L);
    for (size_t i = 0; i < s.L.n; i++) mp_viz_devices_add(&s.devs, s.L.items[i].dev);
    s.left = 84;
    s.W = o->width;
    s.H = o->panel_height;
    mp_viz_svg_placeholders(&s);
    const viz_item **sorted = mp_xmalloc((s.L.n + 1) * sizeof *sorted);
    for (size_t i = 0; i < s.L.n; i++) sorted[i] = &s.L.items[i];
    qsort(sorted, s.L.n, sizeof *sorted, cmp_item_buffer);
    viz_panel *panels = mp_xcalloc(VIZ_MAX_PANELS, sizeof *panels);
    bool more = false;
    size_t np = make_panels(&s, sorted, panels, &more);
    mp_buf body;
    mp_buf_init(&body);
    s.b = &body;
    write_document(&s, &body, draw_body(&s, panels, np, more), out);
    bool failed = body.failed || out->failed;
    mp_buf_free(&body);
    for (size_t k = 0; k < np; k++) mp_viz_band_free(&panels[k]);
    mp_xfree(panels);
    mp_xfree(sorted);
    mp_xfree(s.marks);
    mp_viz_layout_free(&s.L);
    mp_verify_report_free(&s.r);
    if (failed) return mp_err_set(err, MP_EIO, "out of memory writing the picture");
    return MP_OK;
}
