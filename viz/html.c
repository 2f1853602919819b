/* html.c - `memplan report --html`: the metrics history as one page.
 *
 * Self-contained on purpose: CSS inline, charts as inline SVG
 * (html_charts.c), no script, no font, image or link to anything outside
 * except, when asked, the worst plans' own SVG files beside the page.  It
 * opens from disk, offline, and is the same bytes for the same database. */
#include "viz.h"

#include <math.h>
#include <stdio.h>

void mp_viz_report_options_default(mp_viz_report_options *o) {
    memset(o, 0, sizeof *o);
    o->worst = 10;
    o->max_points = 5000;
}

static const char CSS[] =
    "body{font-family:sans-serif;margin:24px auto;max-width:1000px;color:#222;padding:0 12px}\n"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}\n"
    "table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;text-align:right;"
    "border-bottom:1px solid #eee}th{background:#f4f4f4}td.l,th.l{text-align:left}\n"
    "figure{margin:8px 0}figcaption,.note,.meta{color:#666;font-size:12px}\n"
    "svg.chart text{font-size:11px;fill:#333}svg.chart .note{fill:#666}\n"
    "svg.chart .pf{fill:#fcfcfc;stroke:#999}svg.chart .gr{stroke:#e4e4e4}"
    "svg.chart .ax{stroke:#999}\n"
    "svg.chart .mean{stroke-width:2}svg.chart .worst{stroke-width:1;stroke-dasharray:5 4}\n"
    "svg.chart .pts circle{fill-opacity:.55}\n"
    ".bad{color:#c00}\n";

static void cell(mp_buf *b, const char *s, bool left) {
    mp_buf_puts(b, left ? "<td class=\"l\">" : "<td>");
    mp_viz_xml(b, s);
    mp_buf_puts(b, "</td>");
}

static void cellf(mp_buf *b, double v, const char *fmt) {
    char s[64];
    if (isnan(v)) snprintf(s, sizeof s, "-");
    else if (isinf(v)) snprintf(s, sizeof s, "inf");
    else snprintf(s, sizeof s, fmt, v);
    cell(b, s, false);
}

static void cellu(mp_buf *b, uint64_t v) {
    char s[32];
    snprintf(s, sizeof s, "%llu", (unsigned long long)v);
    cell(b, s, false);
}

static void worst_table(mp_buf *b, const mp_report_data *d, const mp_viz_report_options *o) {
    mp_buf_printf(b, "<h2>Worst graphs</h2>\n<p class=\"note\">Per algorithm, its %u valid plans "
                     "with the highest ratio to the lower bound.%s</p>\n",
                  o->worst, o->svg_dir ? " The picture of a harness graph is regenerated from its "
                  "id (h&lt;seed&gt;-&lt;case&gt;)." : "");
    if (!d->nw) {
        mp_buf_puts(b, "<p>No valid plans recorded yet.</p>\n");
        return;
    }
    char bytes[32];
    mp_buf_puts(b, "<table>\n<tr><th>algo</th><th class=\"l\">graph</th><th>run</th><th>ratio</th>"
                   "<th>bytes</th><th>lower bound</th><th>size</th><th class=\"l\">profile</th>"
                   "<th>tensors</th><th class=\"l\">picture</th></tr>\n");
    for (size_t i = 0; i < d->nw; i++) {
        const mp_report_wrow *w = &d->w[i];
        mp_buf_puts(b, "<tr>");
        cell(b, w->algo, true);
        cell(b, w->graph, true);
        cellu(b, (uint64_t)(w->run < 0 ? 0 : w->run));
        cellf(b, w->ratio, "%.4f");
        cellu(b, w->bytes);
        cellu(b, w->lower);
        cell(b, mp_viz_bytes(w->bytes, bytes), false);
        cell(b, w->profile, true);
        cellu(b, w->tensors);
        if (w->href[0]) {
            mp_buf_puts(b, "<td class=\"l\"><a href=\"");
            mp_viz_xml(b, w->href);
            mp_buf_puts(b, "\">svg</a></td>");
        } else {
            cell(b, w->note, true);
        }
        mp_buf_puts(b, "</tr>\n");
    }
    mp_buf_puts(b, "</table>\n");
}

/* The latest runs, one row per run and algorithm. */
static void runs_table(mp_buf *b, const mp_report_data *d) {
    mp_buf_puts(b, d->by_commit ? "<h2>Commits</h2>\n" : "<h2>Runs</h2>\n");
    if (!d->nq) {
        mp_buf_puts(b, "<p>No runs recorded yet.</p>\n");
        return;
    }
    size_t first = d->nq > 60 ? d->nq - 60 : 0;
    if (first) mp_buf_printf(b, "<p class=\"note\">The latest 60 of %zu rows.</p>\n", d->nq);
    mp_buf_puts(b, d->by_commit ? "<table>\n<tr><th>first run</th>" : "<table>\n<tr><th>run</th>");
    mp_buf_puts(b, "<th class=\"l\">started</th><th class=\"l\">kind</th>"
                   "<th class=\"l\">git</th><th class=\"l\">algo</th><th>graphs</th><th>valid</th>"
                   "<th>invalid</th><th>refused</th><th>mean ratio</th><th>worst ratio</th></tr>\n");
    for (size_t i = first; i < d->nq; i++) {
        const mp_report_qrow *q = &d->q[i];
        mp_buf_printf(b, "<tr%s>", q->invalid ? " class=\"bad\"" : "");
        cellu(b, (uint64_t)(q->run < 0 ? 0 : q->run));
        cell(b, q->started, true);
        cell(b, q->kind, true);
        cell(b, q->git, true);
        cell(b, q->algo, true);
        cellu(b, (uint64_t)q->graphs);
        cellu(b, (uint64_t)q->valid);
        cellu(b, (uint64_t)q->invalid);
        cellu(b, (uint64_t)q->refused);
        cellf(b, q->mean, "%.4f");
        cellf(b, q->max, "%.4f");
        mp_buf_puts(b, "</tr>\n");
    }
    mp_buf_puts(b, "</table>\n");
}

int mp_viz_report_html(mp_db *db, const mp_viz_report_options *opts, mp_buf *out, mp_err *err) {
    mp_err_clear(err);
    mp_viz_report_options o;
    mp_viz_report_options_default(&o);
    if (opts) o = *opts;
    if (!o.worst) o.worst = 10;
    if (!o.max_points) o.max_points = 5000;
    mp_report_data d;
    int rc = mp_db_report_data(db, o.since, o.algo, o.max_points, o.worst, o.by_commit, &d, err);
    if (rc == MP_OK && o.svg_dir) rc = mp_viz_report_svgs(&o, &d, err);
    if (rc != MP_OK) {
        mp_report_data_free(&d);
        return rc;
    }
    int64_t runs = 0, last = -1;
    for (size_t i = 0; i < d.nq; i++)
        if (d.q[i].run != last) {
            runs++;
            last = d.q[i].run;
        }
    mp_buf_printf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<title>memplan metrics report</title>\n<style>\n%s</style>\n</head>\n"
                       "<body>\n<h1>memplan metrics report</h1>\n<p class=\"meta\">",
                  CSS);
    if (d.by_commit) /* the runs of the newest harness command, per commit */
        mp_buf_printf(out, "%lld commit%s (the harness runs of one command)", (long long)runs, runs == 1 ? "" : "s");
    else
        mp_buf_printf(out, "%lld run%s", (long long)runs, runs == 1 ? "" : "s");
    if (d.nq) {
        mp_buf_puts(out, " from ");
        mp_viz_xml(out, d.q[0].started);
        mp_buf_puts(out, " to ");
        mp_viz_xml(out, d.q[d.nq - 1].started);
    }
    if (o.since) {
        mp_buf_puts(out, "; since ");
        mp_viz_xml(out, o.since);
    }
    if (o.algo) {
        mp_buf_puts(out, "; algorithm ");
        mp_viz_xml(out, o.algo);
    }
    mp_buf_printf(out, ". Written by memplan %s; the raw data: memplan report --format "
                       "json.</p>\n", MEMPLAN_VERSION);
    mp_viz_report_charts(out, &d);
    worst_table(out, &d, &o);
    runs_table(out, &d);
    mp_buf_puts(out, "</body>\n</html>\n");
    mp_report_data_free(&d);
    if (out->failed) return mp_err_set(err, MP_EIO, "out of memory writing the report");
    return MP_OK;
}
