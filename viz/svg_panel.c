/* svg_panel.c - one buffer's panel of the SVG picture.
 *
 * Layers, bottom to top: the frame, shading for sub-graph columns, tiles
 * of merged sub-pixel tensors, tensors drawn one by one (with a tooltip,
 * and a label where it fits), the buffer's end when tensors pass it, the
 * lower bound, the live-bytes curve, the axes and the violation outlines.
 * x = node index (mp_viz_svg_x), y = byte offset with 0 at the bottom. */
#include "viz.h"

#include <math.h>
#include <stdio.h>

typedef struct big {
    const viz_item *it;
    double area;
} big;

static int cmp_big_area(const void *a, const void *b) {
    const big *x = a, *y = b;
    if (x->area != y->area) return x->area > y->area ? -1 : 1;
    return (x->it > y->it) - (x->it < y->it);
}

static int cmp_big_order(const void *a, const void *b) {
    const big *x = a, *y = b;
    return (x->it > y->it) - (x->it < y->it);
}

static void rect_attrs(mp_buf *b, double x, double y, double w, double h) {
    mp_buf_puts(b, "<rect x=\"");
    mp_viz_num(b, x);
    mp_buf_puts(b, "\" y=\"");
    mp_viz_num(b, y);
    mp_buf_puts(b, "\" width=\"");
    mp_viz_num(b, w);
    mp_buf_puts(b, "\" height=\"");
    mp_viz_num(b, h);
    mp_buf_puts(b, "\"");
}

static void tensor(viz_svg *s, const viz_panel *p, const viz_item *it) {
    mp_buf *b = s->b;
    char sz[32], dev[24];
    double x0 = mp_viz_svg_x(s, it->x0), x1 = mp_viz_svg_x(s, it->x1);
    double y0 = mp_viz_svg_y(s, p, it->hi), y1 = mp_viz_svg_y(s, p, it->lo);
    rect_attrs(b, x0, y0, x1 - x0, y1 - y0);
    /* a pinned tensor (at=, entry graph): dashed black outline, its pin in
     * the title (attributes inline: pictures without pins keep their bytes) */
    const mp_tensor *pt = it->graph == 0 && it->a->tensor >= 0 ? &s->prog->graphs[0].tensors[it->a->tensor] : NULL;
    bool pinned = pt && (pt->flags & MP_T_PINNED);
    if (pinned) mp_buf_puts(b, " stroke=\"#000\" stroke-width=\"1.6\" stroke-dasharray=\"4 2\"");
    mp_buf_printf(b, " class=\"c%u\"><title>", mp_viz_svg_class(s, it));
    if (pinned) mp_buf_printf(b, "pinned at %llu (line %d): ", (unsigned long long)pt->at, pt->line);
    mp_viz_xml(b, it->a->name);
    mp_buf_puts(b, " (");
    mp_viz_xml(b, s->prog->graphs[it->graph].name);
    int32_t node;
    const char *op = mp_viz_alloc_op(s->prog, it->graph, it->a, &node);
    if (op) {
        mp_buf_printf(b, ") output of node %d, ", node);
        mp_viz_xml(b, op);
        mp_buf_puts(b, ",");
    } else {
        mp_buf_puts(b, ")");
    }
    mp_buf_printf(b, " %s, bytes %llu..%llu, life %lld..%lld, %s</title></rect>\n",
                  mp_viz_bytes(it->a->size, sz), (unsigned long long)it->lo,
                  (unsigned long long)it->hi, (long long)it->a->life_start,
                  (long long)it->a->life_end, mp_device_str(it->dev, dev));
    size_t len = strlen(it->a->name), with_op = op ? len + 2 + strlen(op) : 0;
    bool show_op = with_op && x1 - x0 >= 5.6 * (double)with_op + 4;
    if (y1 - y0 >= 11 && x1 - x0 >= 5.6 * (double)len + 4) {
        mp_buf_puts(b, "<text class=\"l\" x=\"");
        mp_viz_num(b, (x0 + x1) / 2);
        mp_buf_puts(b, "\" y=\"");
        mp_viz_num(b, (y0 + y1) / 2);
        mp_buf_puts(b, "\">");
        mp_viz_xml(b, it->a->name);
        if (show_op) {
            mp_buf_puts(b, ": ");
            mp_viz_xml(b, op);
        }
        mp_buf_puts(b, "</text>\n");
    }
}

/* Tiles for what is below a pixel (or past VIZ_MAX_RECTS), then the rest. */
static void tensors(viz_svg *s, const viz_panel *p) {
    big *v = mp_xmalloc((p->n + 1) * sizeof *v);
    const viz_item **small = mp_xmalloc((p->n + 1) * sizeof *small);
    size_t nb = 0, ns = 0;
    for (size_t i = 0; i < p->n; i++) {
        const viz_item *it = p->items[i];
        double w = mp_viz_svg_x(s, it->x1) - mp_viz_svg_x(s, it->x0);
        double h = mp_viz_svg_y(s, p, it->lo) - mp_viz_svg_y(s, p, it->hi);
        if (w >= 1.0 && h >= 1.0) v[nb++] = (big){it, w * h};
        else if (it->hi > it->lo) small[ns++] = it;
    }
    if (nb > VIZ_MAX_RECTS) { /* the largest are drawn, the others merged */
        qsort(v, nb, sizeof *v, cmp_big_area);
        for (size_t i = VIZ_MAX_RECTS; i < nb; i++) small[ns++] = v[i].it;
        nb = VIZ_MAX_RECTS;
        qsort(v, nb, sizeof *v, cmp_big_order);
    }
    mp_viz_svg_tiles(s, p, small, ns);
    mp_buf_puts(s->b, "<g class=\"r\">\n");
    for (size_t i = 0; i < nb; i++) tensor(s, p, v[i].it);
    mp_buf_puts(s->b, "</g>\n");
    mp_xfree(small);
    mp_xfree(v);
}

/* The live-bytes curve at pixel resolution: per pixel column, the least
 * and the most bytes covered at any x in it, so no peak is lost however
 * many nodes share a pixel.  Where a column holds at most one node the
 * two agree and the curve is a line; where nodes are denser it is drawn as
 * the band between the two (a line would zigzag into a solid block). */
static void live_curve(viz_svg *s, const viz_panel *p) {
    viz_box *bx = mp_xmalloc((p->n + 1) * sizeof *bx);
    for (size_t i = 0; i < p->n; i++)
        bx[i] = (viz_box){p->items[i]->x0, p->items[i]->x1, p->items[i]->lo, p->items[i]->hi};
    viz_steps st;
    mp_viz_cover(bx, p->n, &st);
    mp_xfree(bx);
    if (!st.n) return;
    size_t cols = (size_t)ceil(s->W), k = 0;
    double *hi = mp_xmalloc(cols * sizeof *hi), *lo = mp_xmalloc(cols * sizeof *lo);
    for (size_t c = 0; c < cols; c++) {
        double a = mp_viz_svg_node(s, (double)c), e = mp_viz_svg_node(s, (double)(c + 1));
        /* invariant: steps [0, k) start at or before a */
        while (k < st.n && st.x[k] <= a) k++;
        uint64_t most = k ? st.v[k - 1] : 0, least = most;
        for (size_t j = k; j < st.n && st.x[j] < e; j++) {
            if (st.v[j] > most) most = st.v[j];
            if (st.v[j] < least) least = st.v[j];
        }
        hi[c] = mp_viz_svg_y(s, p, most);
        lo[c] = mp_viz_svg_y(s, p, least);
    }
    mp_viz_steps_free(&st);
    mp_buf *b = s->b;
    bool band = s->L.width > s->W; /* more nodes than pixels */
    mp_buf_printf(b, "<path class=\"%s\" d=\"M", band ? "lvb" : "lv");
    mp_viz_num(b, s->left);
    mp_buf_puts(b, " ");
    mp_viz_num(b, hi[0]);
    for (size_t c = 1; c < cols; c++) {
        if (hi[c] == hi[c - 1]) continue;
        mp_buf_puts(b, "H");
        mp_viz_num(b, s->left + (double)c);
        mp_buf_puts(b, "V");
        mp_viz_num(b, hi[c]);
    }
    mp_buf_puts(b, "H");
    mp_viz_num(b, s->left + s->W);
    for (size_t c = cols; band && c-- > 0;) { /* back along the least bytes */
        if (c + 1 < cols && lo[c] == lo[c + 1]) continue;
        mp_buf_puts(b, "V");
        mp_viz_num(b, lo[c]);
        mp_buf_puts(b, "H");
        mp_viz_num(b, s->left + (double)c);
    }
    mp_buf_puts(b, band ? "Z" : "");
    mp_buf_puts(b, "\"><title>live bytes: bytes covered by the tensors live at each node");
    mp_buf_puts(b, band ? " (band: least to most within each pixel column)" : "");
    mp_buf_puts(b, "</title></path>\n");
    mp_xfree(hi);
    mp_xfree(lo);
}

static void hline(viz_svg *s, double y, const char *cls, const char *label) {
    mp_buf *b = s->b;
    mp_buf_puts(b, "<line x1=\"");
    mp_viz_num(b, s->left);
    mp_buf_puts(b, "\" x2=\"");
    mp_viz_num(b, s->left + s->W);
    mp_buf_puts(b, "\" y1=\"");
    mp_viz_num(b, y);
    mp_buf_puts(b, "\" y2=\"");
    mp_viz_num(b, y);
    mp_buf_printf(b, "\" class=\"%s\"/><text class=\"lbt\" x=\"", cls);
    mp_viz_num(b, s->left + s->W - 4);
    mp_buf_puts(b, "\" y=\"");
    mp_viz_num(b, y - 3);
    mp_buf_puts(b, "\">");
    mp_viz_xml(b, label);
    mp_buf_puts(b, "</text>\n");
}

static void node_ticks(viz_svg *s, const viz_panel *p);

static void axes(viz_svg *s, const viz_panel *p) {
    mp_buf *b = s->b;
    char t[32];
    for (int k = 0; k <= 4; k++) { /* bytes: five ticks, 0 at the bottom */
        uint64_t v = p->n_band ? mp_viz_band_bytes(s, p, s->H * k / 4.0) : (uint64_t)((double)p->ymax * k / 4.0);
        if (k == 4) v = p->ymax;
        double y = mp_viz_svg_y(s, p, v);
        mp_buf_puts(b, "<text class=\"tk\" text-anchor=\"end\" x=\"");
        mp_viz_num(b, s->left - 5);
        mp_buf_puts(b, "\" y=\"");
        mp_viz_num(b, y + 3);
        mp_buf_printf(b, "\">%s</text>\n", mp_viz_bytes(v, t));
    }
    node_ticks(s, p);
    mp_buf_puts(b, "<text class=\"tk\" text-anchor=\"end\" x=\"");
    mp_viz_num(b, s->left + s->W);
    mp_buf_puts(b, "\" y=\"");
    mp_viz_num(b, p->top + s->H + 28);
    mp_buf_puts(b, "\">node</text>\n");
}

/* Node ticks at 1, 2, 5, 10 ... apart; in a compressed run of
 * placeholders only its two ends, and a shaded band that says what it is. */
static void node_ticks(viz_svg *s, const viz_panel *p) {
    mp_buf *b = s->b;
    double raw = (s->L.width - s->ph) / 10.0, step = 1;
    while (step < raw) { /* 1, 2, 5, 10, 20, 50 ... nodes */
        if (step * 2 >= raw) step *= 2;
        else if (step * 5 >= raw) step *= 5;
        else step *= 10;
    }
    if (s->ph) {
        rect_attrs(b, s->left, p->top, s->ph_px, s->H);
        mp_buf_printf(b, " class=\"sg\"><title>nodes 0..%.0f: %.0f placeholders (inputs, weights), drawn "
                      "compressed</title></rect>\n", s->ph - 1, s->ph);
    }
    for (double n = 0; n <= s->L.width + 1e-9; n = n < s->ph ? s->ph : n + step) {
        double x = mp_viz_svg_x(s, n);
        mp_buf_puts(b, "<line class=\"ax\" x1=\"");
        mp_viz_num(b, x);
        mp_buf_puts(b, "\" x2=\"");
        mp_viz_num(b, x);
        mp_buf_puts(b, "\" y1=\"");
        mp_viz_num(b, p->top + s->H);
        mp_buf_puts(b, "\" y2=\"");
        mp_viz_num(b, p->top + s->H + 4);
        mp_buf_puts(b, "\"/><text class=\"tk\" text-anchor=\"middle\" x=\"");
        mp_viz_num(b, x);
        mp_buf_puts(b, "\" y=\"");
        mp_viz_num(b, p->top + s->H + 15);
        mp_buf_printf(b, "\">%.0f</text>\n", n);
    }
}

/* Columns of sub-graphs run by the entry graph's control-flow nodes. */
static void subgraph_columns(viz_svg *s, const viz_panel *p) {
    mp_buf *b = s->b;
    uint32_t drawn = 0;
    for (size_t i = 0; i < s->L.ni && drawn < 2000; i++) {
        const viz_instance *in = &s->L.inst[i];
        if (in->depth != 1) continue;
        double x0 = mp_viz_svg_x(s, in->x0), x1 = mp_viz_svg_x(s, in->x0 + in->w);
        if (x1 - x0 < 2) continue;
        const mp_graphdef *pg = &s->prog->graphs[in->parent];
        uint32_t kind = pg->nodes[in->node].kind;
        rect_attrs(b, x0, p->top, x1 - x0, s->H);
        mp_buf_puts(b, " class=\"sg\"><title>sub-graph ");
        mp_viz_xml(b, s->prog->graphs[in->graph].name);
        mp_buf_printf(b, ": %s of %s node %d", mp_viz_sub_role(kind, in->role), mp_node_kind_name(kind), in->node);
        if (pg->nodes[in->node].op) {
            mp_buf_puts(b, ", ");
            mp_viz_xml(b, pg->nodes[in->node].op);
        }
        mp_buf_puts(b, "</title></rect>\n");
        drawn++;
    }
}

static void outlines(viz_svg *s, const viz_panel *p) {
    mp_buf *b = s->b;
    uint32_t drawn = 0;
    for (size_t i = 0; i < s->n_marks && drawn < VIZ_MAX_MARKS; i++) {
        const viz_mark *m = &s->marks[i];
        if (m->buffer != p->buffer) continue;
        double x0 = mp_viz_svg_x(s, m->x0), x1 = mp_viz_svg_x(s, m->x1);
        double y0 = mp_viz_svg_y(s, p, m->hi > p->ymax ? p->ymax : m->hi);
        double y1 = mp_viz_svg_y(s, p, m->lo > p->ymax ? p->ymax : m->lo);
        if (x1 - x0 < 4) { /* visible however small */
            x0 = (x0 + x1) / 2 - 2;
            x1 = x0 + 4;
        }
        if (y1 - y0 < 4) {
            y0 = (y0 + y1) / 2 - 2;
            y1 = y0 + 4;
        }
        const mp_violation *v = &s->r.v[m->v];
        rect_attrs(b, x0, y0, x1 - x0, y1 - y0);
        mp_buf_puts(b, " class=\"v\"><title>");
        if (v->graph[0]) {
            mp_viz_xml(b, v->graph);
            mp_buf_puts(b, ": ");
        }
        mp_viz_xml(b, v->msg);
        mp_buf_puts(b, "</title></rect>\n");
        drawn++;
    }
}

void mp_viz_svg_panel(viz_svg *s, const viz_panel *p) {
    mp_buf *b = s->b;
    char t[32], dev[24];
    mp_buf_puts(b, "<text class=\"h\" x=\"");
    mp_viz_num(b, s->left);
    mp_buf_puts(b, "\" y=\"");
    mp_viz_num(b, p->top - 8);
    mp_buf_printf(b, "\">buffer %llu", (unsigned long long)p->buffer);
    const mp_banks *bk = &s->plan->opts.banks; /* under a memory map a buffer is a bank */
    bool bank = p->buffer >= 1 && p->buffer <= bk->n;
    if (bank) {
        mp_buf_puts(b, ", bank ");
        mp_viz_xml(b, bk->bank[p->buffer - 1].name);
        if (bk->bank[p->buffer - 1].capacity != MP_UNLIMITED)
            mp_buf_printf(b, " (capacity %s)", mp_viz_bytes(bk->bank[p->buffer - 1].capacity, t));
    }
    if (p->has_dev) mp_buf_printf(b, " (%s)", mp_device_str(p->dev, dev));
    mp_buf_printf(b, ": %s", p->size ? mp_viz_bytes(p->size, t) : "no size in the plan");
    if (p->lower) mp_buf_printf(b, ", lower bound %s", mp_viz_bytes(p->lower, t));
    mp_buf_printf(b, ", %llu tensor%s</text>\n", (unsigned long long)p->n, p->n == 1 ? "" : "s");
    rect_attrs(b, s->left, p->top, s->W, s->H);
    mp_buf_puts(b, " class=\"fr\"/>\n");
    subgraph_columns(s, p);
    if (p->n_band) mp_viz_band_draw(s, p);
    tensors(s, p);
    if (p->n_band) mp_viz_band_label(s, p);
    if (p->size && p->size < p->ymax) hline(s, mp_viz_svg_y(s, p, p->size), "be", "buffer end");
    if (bank && bk->bank[p->buffer - 1].capacity < p->ymax) {
        char label[64];
        snprintf(label, sizeof label, "capacity %s", mp_viz_bytes(bk->bank[p->buffer - 1].capacity, t));
        hline(s, mp_viz_svg_y(s, p, bk->bank[p->buffer - 1].capacity), "lb", label);
    }
    if (p->lower) {
        char label[64];
        snprintf(label, sizeof label, "lower bound %s", mp_viz_bytes(p->lower, t));
        hline(s, mp_viz_svg_y(s, p, p->lower), "lb", label);
    }
    live_curve(s, p);
    axes(s, p);
    outlines(s, p);
}
