/* cmd_reorder.c - `memplan reorder`: the graph in an operator order of
 * lower peak live bytes (opt/reorder.c, issue 50; docs/reorder.md). */
#include "cli.h"

#include <stdio.h>

static const char REORDER_HELP[] =
    "usage: memplan reorder [--effort N] [--alignment N] [--no-alloc-inputs]\n"
    "                       [--no-alloc-outputs] [--no-alloc-mutable] [--per-device]\n"
    "                       [-o OUT] GRAPH\n"
    "\n"
    "Write the graph with the nodes of each graph in another topological order,\n"
    "one whose peak of live bytes (the lower bound of every plan) is lower:\n"
    "every tensor read after it is written, the nodes that name storage\n"
    "written in place or a mutable buffer in their order, placeholders first,\n"
    "the output node last, sub-graphs reordered inside (docs/reorder.md).  A\n"
    "graph of at most 20 movable nodes is searched exhaustively (the order is\n"
    "then proved optimal); larger ones by list scheduling, the best of\n"
    "1 + N passes.  The given order is kept where nothing lower is found.\n"
    "The peak before and after goes to stderr.\n"
    "\n"
    "options:\n"
    "  --effort N         randomized passes beyond the first (default 8; more\n"
    "                     never ends worse)\n"
    "  --alignment N      round sizes to N bytes (default 16), as plan does\n"
    "  --no-alloc-inputs, --no-alloc-outputs, --no-alloc-mutable, --per-device\n"
    "                     what is planned, as plan takes them\n"
    "  -o, --output OUT   the reordered graph (default stdout; atomically)\n"
    "  -h, --help         this text\n"
    "\n"
    "exit status: 0 written; 2 bad usage or a graph file that breaks the\n"
    "format; 4 out of memory.\n";

mp_program *mp_cli_reorder(mp_program *prog, const mp_options *o, uint32_t effort, const char *name, mp_err *err) {
    uint64_t before = 0, after = 0;
    int optimal = 0;
    mp_program *q = mp_program_reorder(prog, o, effort, &before, &after, &optimal, err);
    mp_program_free(prog);
    if (!q) return NULL;
    double cut = before ? 100.0 * (double)(before - after) / (double)before : 0.0;
    fprintf(stderr, "%s: peak live bytes %llu -> %llu (-%.1f%%), %s\n", name, (unsigned long long)before,
            (unsigned long long)after, cut, optimal ? "order proved optimal" : "best order found");
    return q;
}

typedef struct reorder_args {
    mp_options opts;
    const char *graph, *out;
    uint64_t effort;
} reorder_args;

static int parse(int argc, char **argv, reorder_args *ra) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan reorder");
    mp_options_default(&ra->opts);
    ra->graph = NULL, ra->out = "-", ra->effort = 8;
    const char *arg;
    const mp_option_flag *f;
    bool opt;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) {
            if (ra->graph) return mp_usage_error(a.cmd, "more than one graph file given");
            ra->graph = arg;
        } else if (mp_args_is(&a, arg, "-h") || mp_args_is(&a, arg, "--help")) {
            fputs(REORDER_HELP, stdout);
            return -1;
        } else if (mp_args_is(&a, arg, "--effort")) {
            if (!mp_args_u64(&a, "--effort", 0, 1000000, &ra->effort)) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "-o") || mp_args_is(&a, arg, "--output")) {
            if (!(ra->out = mp_args_value(&a, "-o"))) return MP_EFORMAT;
        } else if ((f = mp_option_find(arg, a.eq ? (size_t)(a.eq - arg) : strlen(arg))) &&
                   (!strcmp(f->name, "--alignment") || !strncmp(f->name, "--no-alloc-", 11) ||
                    !strcmp(f->name, "--per-device"))) {
            if (!mp_cli_planning_option(&a, f, &ra->opts)) return MP_EFORMAT;
        } else {
            return mp_usage_error(a.cmd, "unknown option '%s'", arg);
        }
    }
    if (!ra->graph) return mp_usage_error(a.cmd, "no graph file given");
    return MP_OK;
}

int mp_cmd_reorder(int argc, char **argv) {
    reorder_args ra;
    int rc = parse(argc, argv, &ra);
    if (rc) return rc < 0 ? 0 : rc;
    mp_err err;
    mp_program *prog = mp_graph_load(ra.graph, &err);
    if (!prog || !(prog = mp_cli_reorder(prog, &ra.opts, (uint32_t)ra.effort, ra.graph, &err)))
        return mp_cli_fail("memplan reorder", &err);
    mp_buf b;
    mp_buf_init(&b);
    mp_graph_write(prog, &b);
    rc = mp_write_buf(ra.out, &b, &ra.graph, 1, &err);
    mp_buf_free(&b);
    mp_program_free(prog);
    return rc ? mp_cli_fail("memplan reorder", &err) : 0;
}
