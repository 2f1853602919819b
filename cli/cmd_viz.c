/* cmd_viz.c - `memplan trace` and `memplan svg`: pictures of a plan.
 *
 * Both read a graph file and a plan file, hand them to the library
 * (viz/) and write its output atomically: on any error nothing is
 * written and the exit status is 2. */
#include "cli.h"

#include <stdio.h>

static const char TRACE_HELP[] =
    "usage: memplan trace [-o FILE] GRAPH.mpg PLAN.mpp\n"
    "\n"
    "Write the plan as a Chrome trace event file (JSON) that opens in\n"
    "Perfetto (ui.perfetto.dev) and chrome://tracing.  Time is the node\n"
    "index (one node = 1000 us = 1 ms); each graph block is a process, each\n"
    "buffer a group of tracks (tensors whose lifetimes overlap go to separate\n"
    "lanes), each tensor a slice whose arguments give its size, offset, end,\n"
    "lifetime, device, mem_id and obj.  The memory each sub-graph occupies\n"
    "while its control-flow node runs shows as slices on the 'sub-graphs'\n"
    "lanes of the parent, and 'live bytes buffer B' counters show the bytes\n"
    "in use at each node.  See docs/visualisation.md.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE  write to FILE (default stdout; atomically)\n"
    "  -h, --help         this text\n"
    "\n"
    "exit status: 0 written; 2 bad usage or unreadable input.\n";

static const char SVG_HELP[] =
    "usage: memplan svg [options] GRAPH.mpg PLAN.mpp\n"
    "\n"
    "Draw the plan as a standalone SVG picture: x = node index, y = byte\n"
    "offset, one panel per buffer, a rectangle per tensor (hover for its\n"
    "name, size, bytes, lifetime and device; labelled where the name fits).\n"
    "Sub-graphs are drawn inside the column of the node that runs them.\n"
    "Tensors smaller than a pixel are merged into small tiles, so the file\n"
    "stays small for 10^4 tensors and more.  The live-bytes curve and the\n"
    "verifier's lower bound are drawn over each panel, and every violation\n"
    "memplan verify finds is outlined in red (or listed below the panels).\n"
    "\n"
    "options:\n"
    "  --color device|graph  colour tensors by device (default) or by graph\n"
    "  --width PX            plot width in pixels (default 1200, 200..20000)\n"
    "  --height PX           height of each buffer panel (default 260, 60..5000)\n"
    "  --title TEXT          the picture's title (default the graph file name)\n"
    "  --method NAME         with several methods (an entry line): the one to\n"
    "                        draw (default the first)\n"
    "  -o, --output FILE     write to FILE (default stdout; atomically)\n"
    "  -h, --help            this text\n"
    "\n"
    "exit status: 0 written (also for a plan with violations: they are in\n"
    "the picture); 2 bad usage or unreadable input.\n";

typedef struct viz_args {
    const char *files[2], *out, *method;
    mp_viz_svg_options svg;
} viz_args;

/* Returns MP_OK, MP_EFORMAT (usage error printed) or -1 (help printed). */
static int parse(int argc, char **argv, const char *cmd, const char *help, bool svg,
                 viz_args *va) {
    mp_args a;
    mp_args_init(&a, argc, argv, cmd);
    memset(va, 0, sizeof *va);
    va->out = "-";
    mp_viz_svg_options_default(&va->svg);
    const char *arg;
    int nf = 0;
    bool opt;
    uint64_t v;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) {
            if (nf == 2) return mp_usage_error(cmd, "too many files ('%s')", arg);
            va->files[nf++] = arg;
        } else if (mp_args_is(&a, arg, "-h") || mp_args_is(&a, arg, "--help")) {
            fputs(help, stdout);
            return -1;
        } else if (mp_args_is(&a, arg, "-o") || mp_args_is(&a, arg, "--output")) {
            if (!(va->out = mp_args_value(&a, "-o"))) return MP_EFORMAT;
            if (!*va->out) return mp_usage_error(cmd, "empty output file name");
        } else if (svg && mp_args_is(&a, arg, "--color")) {
            const char *c = mp_args_value(&a, "--color");
            if (!c) return MP_EFORMAT;
            if (strcmp(c, "device") == 0) va->svg.color = MP_VIZ_BY_DEVICE;
            else if (strcmp(c, "graph") == 0) va->svg.color = MP_VIZ_BY_GRAPH;
            else return mp_usage_error(cmd, "bad value '%s' for --color (want device or graph)", c);
        } else if (svg && mp_args_is(&a, arg, "--width")) {
            if (!mp_args_u64(&a, "--width", 200, 20000, &v)) return MP_EFORMAT;
            va->svg.width = (uint32_t)v;
        } else if (svg && mp_args_is(&a, arg, "--height")) {
            if (!mp_args_u64(&a, "--height", 60, 5000, &v)) return MP_EFORMAT;
            va->svg.panel_height = (uint32_t)v;
        } else if (svg && mp_args_is(&a, arg, "--method")) {
            if (!(va->method = mp_args_value(&a, "--method"))) return MP_EFORMAT;
        } else if (svg && mp_args_is(&a, arg, "--title")) {
            if (!(va->svg.title = mp_args_value(&a, "--title"))) return MP_EFORMAT;
        } else {
            return mp_usage_error(cmd, "unknown option '%s'", arg);
        }
    }
    if (nf != 2) return mp_usage_error(cmd, "need a graph file and a plan file");
    return MP_OK;
}

/* The SVG of one method: with several, the program and plan as that
 * method alone sees them (graph_methods.c). */
static int draw_svg(const mp_program *prog, const mp_plan *plan, const viz_args *va, mp_buf *b, mp_err *err) {
    uint32_t k = 0;
    while (va->method && k < prog->n_entries && strcmp(prog->graphs[prog->entries[k]].name, va->method)) k++;
    if (va->method && k == prog->n_entries)
        return mp_err_set(err, MP_EFORMAT, "%s has no method '%s'%s", prog->filename, va->method,
                          prog->n_entries ? "" : " (no entry line)");
    if (prog->n_entries < 2) return mp_viz_svg(prog, plan, &va->svg, b, err);
    mp_program *v = mp_method_view(prog, k, NULL);
    int32_t *owner = mp_method_owners(prog);
    mp_plan sub = mp_method_plan(prog, plan, owner, k);
    int rc = mp_viz_svg(v, &sub, &va->svg, b, err);
    mp_xfree(sub.graphs);
    mp_xfree(owner);
    mp_method_view_free(v, false);
    return rc;
}

typedef struct draw_call {
    const mp_program *prog;
    const mp_plan *plan;
    const viz_args *va;
    bool svg;
    mp_err *err;
} draw_call;

static int draw_work(void *ctx, mp_buf *b) {
    draw_call *c = ctx;
    return c->svg ? draw_svg(c->prog, c->plan, c->va, b, c->err) : mp_viz_trace(c->prog, c->plan, b, c->err);
}

/* The picture under the allocation guard (mp_guard_text): out of memory
 * is exit 4 with nothing written, not an abort (issue 45, B15). */
static int draw(const mp_program *prog, const mp_plan *plan, const viz_args *va, bool svg, mp_buf *b, mp_err *err) {
    draw_call c = {prog, plan, va, svg, err};
    return mp_guard_text(err, draw_work, &c, b);
}

static int run(int argc, char **argv, bool svg) {
    const char *cmd = svg ? "memplan svg" : "memplan trace";
    viz_args va;
    int rc = parse(argc, argv, cmd, svg ? SVG_HELP : TRACE_HELP, svg, &va);
    if (rc) return rc < 0 ? 0 : rc;
    mp_err err;
    mp_program *prog = mp_graph_load(va.files[0], &err);
    if (!prog) return mp_cli_fail(cmd, &err);
    mp_plan *plan = mp_plan_load(va.files[1], prog, &err);
    if (!plan) {
        mp_program_free(prog);
        return mp_cli_fail(cmd, &err);
    }
    mp_buf b;
    mp_buf_init(&b);
    rc = draw(prog, plan, &va, svg, &b, &err);
    if (rc == MP_OK) rc = mp_write_buf(va.out, &b, va.files, 2, &err);
    mp_buf_free(&b);
    mp_plan_free(plan);
    mp_program_free(prog);
    return rc ? mp_cli_fail(cmd, &err) : 0;
}

int mp_cmd_trace(int argc, char **argv) { return run(argc, argv, false); }

int mp_cmd_svg(int argc, char **argv) { return run(argc, argv, true); }
