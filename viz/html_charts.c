/* html_charts.c - the two charts of the HTML report, as inline SVG:
 *   ratio over time  per algorithm, the mean ratio to the lower bound of
 *                    its valid plans in each run (solid) and the worst
 *                    (dashed); x = run, in id order; log y when the
 *                    ratios span more than a factor 4
 *   time vs size     planning time against tensors, one dot per plan,
 *                    log-log, coloured by algorithm
 * Every point has a tooltip (<title>). */
#include "viz.h"

#include <math.h>
#include <stdio.h>

#define CW 900
#define CH 340
#define MAX_ALGOS 16

static void chart_open(mp_buf *b, const char *label) {
    mp_buf_printf(b, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                     "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
                  CW, CH, CW, CH);
    mp_viz_xml(b, label);
    mp_buf_puts(b, "\">\n");
}

static void empty(mp_buf *b, const char *what) {
    mp_buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", CW / 2, CH / 2);
    mp_viz_xml(b, what);
    mp_buf_puts(b, "</text>\n</svg>\n");
}

/* Distinct algorithm names, sorted; returns the count (at most MAX_ALGOS). */
static size_t algos_of(const char *const *names, size_t n, const char **out) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < k && strcmp(out[j], names[i]) < 0) j++;
        if (j < k && strcmp(out[j], names[i]) == 0) continue;
        if (k == MAX_ALGOS) continue;
        memmove(out + j + 1, out + j, (k - j) * sizeof *out);
        out[j] = names[i];
        k++;
    }
    return k;
}

static void dot(mp_buf *b, double x, double y, double r, const char *color, const char *tip) {
    mp_buf_puts(b, "<circle cx=\"");
    mp_viz_num(b, x);
    mp_buf_puts(b, "\" cy=\"");
    mp_viz_num(b, y);
    mp_buf_puts(b, "\" r=\"");
    mp_viz_num(b, r);
    mp_buf_printf(b, "\" fill=\"%s\"><title>", color);
    mp_viz_xml(b, tip);
    mp_buf_puts(b, "</title></circle>\n");
}

/* The runs of the quality rows (they come in run order) and the range
 * of their finite ratios.  Returns how many runs. */
static size_t runs_and_range(const mp_report_data *d, int64_t *runs, double *lo, double *hi) {
    size_t nr = 0;
    *lo = INFINITY, *hi = -INFINITY;
    for (size_t i = 0; i < d->nq; i++) {
        if (!nr || runs[nr - 1] != d->q[i].run) runs[nr++] = d->q[i].run;
        double v[2] = {d->q[i].mean, d->q[i].max};
        for (int k = 0; k < 2; k++)
            if (isfinite(v[k])) {
                *lo = fmin(*lo, v[k]);
                *hi = fmax(*hi, v[k]);
            }
    }
    return nr;
}

/* One algorithm's mean (which 0) or worst (1) ratio per run, a line. */
static void ratio_line(mp_buf *b, const mp_report_data *d, const int64_t *runs, const viz_plot *p,
                       const char *algo, const char *color, int which) {
    mp_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" class=\"%s\" points=\"", color,
                  which ? "worst" : "mean");
    size_t x = 0, pts = 0;
    for (size_t i = 0; i < d->nq; i++) {
        while (runs[x] != d->q[i].run) x++;
        double v = which ? d->q[i].max : d->q[i].mean;
        if (strcmp(d->q[i].algo, algo) || !isfinite(v)) continue;
        mp_buf_puts(b, pts++ ? " " : "");
        mp_viz_num(b, mp_viz_plot_x(p, (double)x));
        mp_buf_puts(b, ",");
        mp_viz_num(b, mp_viz_plot_y(p, v));
    }
    mp_buf_puts(b, "\"/>\n");
}

/* One algorithm's mean ratio per run, a dot with the run's figures. */
static void ratio_dots(mp_buf *b, const mp_report_data *d, const int64_t *runs, const viz_plot *p,
                       const char *algo, const char *color) {
    char tip[400];
    size_t x = 0;
    for (size_t i = 0; i < d->nq; i++) {
        const mp_report_qrow *q = &d->q[i];
        while (runs[x] != q->run) x++;
        if (strcmp(q->algo, algo) || !isfinite(q->mean)) continue;
        snprintf(tip, sizeof tip, "run %lld (%s, %s%s%s): %s mean %.4f, worst %.4f, %lld graphs, "
                 "%lld invalid, %lld refused", (long long)q->run, q->started, q->kind,
                 q->git[0] ? ", " : "", q->git, q->algo, q->mean, q->max, (long long)q->graphs,
                 (long long)q->invalid, (long long)q->refused);
        dot(b, mp_viz_plot_x(p, (double)x), mp_viz_plot_y(p, q->mean), 3.5, color, tip);
    }
}

static void ratio_chart(mp_buf *b, const mp_report_data *d) {
    chart_open(b, d->by_commit ? "ratio to the lower bound per commit and algorithm"
                               : "ratio to the lower bound per run and algorithm");
    const char **names = mp_xmalloc((d->nq + 1) * sizeof *names);
    int64_t *runs = mp_xmalloc((d->nq + 1) * sizeof *runs);
    for (size_t i = 0; i < d->nq; i++) names[i] = d->q[i].algo;
    double lo, hi;
    size_t nr = runs_and_range(d, runs, &lo, &hi);
    const char *algos[MAX_ALGOS];
    size_t na = algos_of(names, d->nq, algos);
    mp_xfree(names);
    if (!(hi >= lo) || lo <= 0) {
        mp_xfree(runs);
        empty(b, "no valid plans recorded yet");
        return;
    }
    viz_plot p = {-0.5, (double)nr - 0.5, lo, hi, false, hi / lo > 4, 70, 40, CW - 100, CH - 110};
    double pad = (hi - lo) * 0.08 + 0.01;
    p.y0 = p.logy ? lo / 1.1 : lo - pad;
    p.y1 = p.logy ? hi * 1.1 : hi + pad;
    char **xn = mp_xmalloc((nr + 1) * sizeof *xn);
    for (size_t i = 0, k = 0; i < nr; i++) {
        xn[i] = mp_xmalloc(24);
        while (d->by_commit && d->q[k].run != runs[i]) k++;
        if (d->by_commit) snprintf(xn[i], 24, "%.10s", d->q[k].git); /* a commit: its short name */
        else snprintf(xn[i], 24, "%lld", (long long)runs[i]);
    }
    mp_viz_plot_frame(b, &p, d->by_commit ? "commit" : "run", p.logy ? "ratio to the lower bound (log)" : "ratio to the lower bound",
                      (const char *const *)xn, nr);
    const char *colors[MAX_ALGOS];
    for (size_t a = 0; a < na; a++) {
        colors[a] = mp_viz_algo_color(algos[a]);
        for (int which = 0; which < 2; which++) ratio_line(b, d, runs, &p, algos[a], colors[a], which);
        ratio_dots(b, d, runs, &p, algos[a], colors[a]);
    }
    mp_viz_plot_legend(b, p.left, 22, algos, colors, na);
    mp_buf_puts(b, "<text x=\"830\" y=\"22\" text-anchor=\"end\" class=\"note\">solid: mean, "
                   "dashed: worst</text>\n</svg>\n");
    for (size_t i = 0; i < nr; i++) mp_xfree(xn[i]);
    mp_xfree(xn);
    mp_xfree(runs);
}

static void time_chart(mp_buf *b, const mp_report_data *d) {
    chart_open(b, "planning time against graph size");
    double x0 = INFINITY, x1 = 0, y0 = INFINITY, y1 = 0;
    const char **names = mp_xmalloc((d->np + 1) * sizeof *names);
    for (size_t i = 0; i < d->np; i++) {
        double t = fmax(d->p[i].tensors, 1), ms = fmax(d->p[i].ms, 1e-3);
        names[i] = d->p[i].algo;
        x0 = fmin(x0, t);
        x1 = fmax(x1, t);
        y0 = fmin(y0, ms);
        y1 = fmax(y1, ms);
    }
    if (!d->np) {
        mp_xfree(names);
        empty(b, "no plans recorded yet");
        return;
    }
    viz_plot p = {x0 / 1.3, x1 * 1.3, y0 / 1.5, y1 * 1.5, true, true, 70, 40, CW - 100, CH - 110};
    mp_viz_plot_frame(b, &p, "tensors (log)", "planning time, ms (log)", NULL, 0);
    const char *algos[MAX_ALGOS];
    const char *colors[MAX_ALGOS];
    size_t na = algos_of(names, d->np, algos);
    for (size_t a = 0; a < na; a++) colors[a] = mp_viz_algo_color(algos[a]);
    char tip[300];
    mp_buf_puts(b, "<g class=\"pts\">\n");
    for (size_t i = 0; i < d->np; i++) {
        const mp_report_prow *r = &d->p[i];
        snprintf(tip, sizeof tip, "%s %s (run %lld): %.0f tensors, %.3f ms", r->graph, r->algo,
                 (long long)r->run, r->tensors, r->ms);
        dot(b, mp_viz_plot_x(&p, fmax(r->tensors, 1)), mp_viz_plot_y(&p, fmax(r->ms, 1e-3)), 2.5,
            mp_viz_algo_color(r->algo), tip);
    }
    mp_buf_puts(b, "</g>\n");
    mp_viz_plot_legend(b, p.left, 22, algos, colors, na);
    mp_buf_printf(b, "<text x=\"830\" y=\"22\" text-anchor=\"end\" class=\"note\">%zu plans, "
                     "most recent first</text>\n</svg>\n", d->np);
    mp_xfree(names);
}

void mp_viz_report_charts(mp_buf *b, const mp_report_data *d) {
    mp_buf_puts(b, "<h2>Plan quality over time</h2>\n<figure>\n");
    ratio_chart(b, d);
    mp_buf_puts(b, "<figcaption>Ratio of the planned bytes to the lower bound (1 is optimal) of "
                   "each algorithm's valid plans, per run.</figcaption>\n</figure>\n");
    mp_buf_puts(b, "<h2>Planning time against size</h2>\n<figure>\n");
    time_chart(b, d);
    mp_buf_puts(b, "<figcaption>Each dot is one plan: the graph's tensors and the time the "
                   "planner took.</figcaption>\n</figure>\n");
}
