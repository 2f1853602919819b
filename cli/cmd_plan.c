/* cmd_plan.c - `memplan plan`: plan a graph file and write the plan. */
#include "cli.h"

#include <stdio.h>

static const char PLAN_HELP[] =
    "usage: memplan plan [options] GRAPH.mpg\n"
    "\n"
    "Plan the static memory of every graph reachable from GRAPH's entry graph\n"
    "and write the plan (.mpp) to stdout or to -o OUT.\n"
    "\n"
    "options:\n"
    "  --algo NAME           the planner (default opt); the table below\n"
    "  --budget-ms N         opt: an upper bound on the improvement effort\n"
    "                        (default 20), counted as a fixed amount of work so\n"
    "                        results never depend on the machine's speed; opt\n"
    "                        stops sooner at the lower bound or when no move helps;\n"
    "                        a larger value never gives more bytes\n"
    "  --exact               opt: search for the optimal layout of each buffer;\n"
    "                        stderr ends with a status line: proved optimal, or\n"
    "                        the best, the lower bound, the gap and why it stopped\n"
    "  --exact-ms N          opt: effort limit of the exact search per buffer\n"
    "                        (default 10000, counted as work like --budget-ms;\n"
    "                        a larger value never gives more bytes)\n"
    "  --et-exact            reproduce ExecuTorch bit for bit, its defects\n"
    "                        included (default: repaired, always valid)\n"
    "  --et-upstream PR      --et-exact with an ExecuTorch pull request applied:\n"
    "                        21840 (merged after cff6f4dd32: storage offsets,\n"
    "                        bases live as long as what they hold: D5), 21821\n"
    "                        (merged: greedy over a memory map, --banks, as\n"
    "                        banked greedy), 21818 and 21494 (open, competing\n"
    "                        fixes of D14), 21616 (closed unmerged;\n"
    "                        specs aligned first: D6); repeatable\n"
    "                        (docs/deviations.md)\n"
    "  --alignment N         round sizes and offsets to N bytes (default 16)\n"
    "  --no-alloc-inputs     do not plan graph inputs (placeholders)\n"
    "  --no-alloc-outputs    do not plan graph outputs\n"
    "  --no-alloc-mutable    do not plan mutable buffers\n"
    "  --per-device          one buffer set per device (ExecuTorch's\n"
    "                        enable_non_cpu_memory_planning)\n"
    "  --banks MAP           a memory map, fastest bank first, e.g.\n"
    "                        sram=256K,dram=64M (sizes in bytes, K/M/G/T, or\n"
    "                        unlimited); bank i is pool i: tensors without a\n"
    "                        mem_id fill the first bank and spill to the next;\n"
    "                        default: the graph file's banks line (opt, tflm,\n"
    "                        bestfit; exit 3 when the program does not fit)\n"
    "  --spill-order O       which tensors stay in a full bank: value (the\n"
    "                        largest size x lifetime, default) or program\n"
    "                        (the first used: a plain fill)\n"
    "  -o, --output OUT      write the plan to OUT (atomically; nothing is\n"
    "                        written when planning fails)\n"
    "  --verify              verify the plan before writing it; a violation is\n"
    "                        printed to stderr, nothing is written, exit 1\n"
    "  --reorder             plan the graph in an order of lower peak live bytes\n"
    "                        (memplan reorder: the plan is the reordered graph's)\n"
    "  --effort N            with --reorder: randomized passes beyond the first\n"
    "                        (default 8; more never ends worse)\n"
    "  --summary FILE        also write how big, exactly, to FILE ('-': stdout,\n"
    "                        then the plan needs -o): per buffer its bytes, lower\n"
    "                        bound, peak node and op and the tensors live there,\n"
    "                        largest first, and what alignment, in-place sharing\n"
    "                        and per-device planning cost\n"
    "  --summary-format F    text (default) or json\n"
    "  -h, --help            this text\n"
    "\n"
    "exit status: 0 planned; 1 the plan failed --verify; 2 bad usage,\n"
    "unreadable file or a graph file that breaks the format; 3 a graph that\n"
    "cannot be planned; 4 out of memory.\n";

typedef struct plan_args {
    mp_options opts;
    const char *graph, *out, *summary;
    bool verify, summary_json, reorder;
    uint64_t effort;
} plan_args;

/* A planning option (the table of harness/options.c), with its
 * value when it takes one; false after a usage message. */
bool mp_cli_planning_option(mp_args *a, const mp_option_flag *f, mp_options *o) {
    char num[24];
    mp_err err;
    const char *text = NULL;
    if (f->takes_value && f->lo > f->hi) { /* a text value */
        if (!(text = mp_args_value(a, f->name))) return false;
    } else if (f->takes_value) {
        uint64_t v;
        if (!mp_args_u64(a, f->name, f->lo, f->hi, &v)) return false;
        snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    } else if (!mp_args_flag_ok(a, f->name)) {
        return false;
    }
    if (mp_option_set(o, f, text ? text : f->takes_value ? num : NULL, &err) == MP_OK) return true;
    mp_usage_error(a->cmd, "%s", err.msg); /* a value in range the option still refuses */
    return false;
}

/* --summary FILE or --summary-format text|json. */
static int summary_option(mp_args *a, const char *arg, plan_args *pa) {
    if (mp_args_is(a, arg, "--summary")) return (pa->summary = mp_args_value(a, "--summary")) ? MP_OK : MP_EFORMAT;
    const char *fmt = mp_args_value(a, "--summary-format");
    if (!fmt) return MP_EFORMAT;
    if (strcmp(fmt, "text") && strcmp(fmt, "json")) return mp_usage_error(a->cmd, "unknown summary format '%s'", fmt);
    pa->summary_json = strcmp(fmt, "json") == 0;
    return MP_OK;
}

/* --verify, --reorder, --effort N; false after a usage message. */
static bool check_option(mp_args *a, const char *arg, plan_args *pa) {
    if (mp_args_is(a, arg, "--effort")) return mp_args_u64(a, "--effort", 0, 1000000, &pa->effort);
    bool *flag = mp_args_is(a, arg, "--verify") ? &pa->verify : &pa->reorder;
    *flag = true;
    return mp_args_flag_ok(a, arg);
}

static int parse_plan_args(int argc, char **argv, plan_args *pa) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan plan");
    mp_options_default(&pa->opts);
    pa->opts.algo = MP_ALGO_OPT; /* the public default, as mp_options_new's */
    pa->graph = NULL;
    pa->out = "-";
    pa->verify = pa->summary_json = pa->reorder = false;
    pa->effort = 8;
    pa->summary = NULL;
    const char *arg;
    const mp_option_flag *f;
    bool opt;
    bool algo_given = false;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) {
            if (pa->graph) return mp_usage_error(a.cmd, "more than one graph file given");
            pa->graph = arg;
        } else if (mp_args_is(&a, arg, "-h") || mp_args_is(&a, arg, "--help")) {
            fputs(PLAN_HELP, stdout);
            mp_cli_print_planners(stdout);
            return -1;
        } else if (mp_args_is(&a, arg, "--algo")) {
            const char *name = mp_args_value(&a, "--algo");
            int algo = name ? mp_algo_parse(name) : -1;
            if (!name) return MP_EFORMAT;
            if (algo < 0)
                return mp_usage_error(a.cmd, "unknown algorithm '%s' (want opt, greedy or naive)", name);
            pa->opts.algo = (uint32_t)algo;
            algo_given = true;
        } else if ((f = mp_option_find(arg, a.eq ? (size_t)(a.eq - arg) : strlen(arg)))) {
            if (!mp_cli_planning_option(&a, f, &pa->opts)) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--verify") || mp_args_is(&a, arg, "--reorder") ||
                   mp_args_is(&a, arg, "--effort")) {
            if (!check_option(&a, arg, pa)) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "-o") || mp_args_is(&a, arg, "--output")) {
            if (!(pa->out = mp_args_value(&a, "-o"))) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--summary") || mp_args_is(&a, arg, "--summary-format")) {
            if (summary_option(&a, arg, pa)) return MP_EFORMAT;
        } else {
            return mp_usage_error(a.cmd, "unknown option '%s'", arg);
        }
    }
    if (!pa->graph) return mp_usage_error(a.cmd, "no graph file given");
    if (pa->summary && !*pa->summary) return mp_usage_error(a.cmd, "empty --summary file name");
    if (pa->summary && !strcmp(pa->summary, "-") && !strcmp(pa->out, "-"))
        return mp_usage_error(a.cmd, "--summary - and the plan both on stdout: give the plan -o FILE");
    if (pa->summary && mp_same_output(pa->summary, pa->out)) /* one would overwrite the other */
        return mp_usage_error(a.cmd, "--summary %s and -o %s are one file: write them to two", pa->summary, pa->out);
    /* --et-exact reproduces ExecuTorch, whose default algorithm is greedy */
    if (pa->opts.et_exact && !algo_given) pa->opts.algo = MP_ALGO_GREEDY;
    uint32_t caps = mp_planner_get(pa->opts.algo)->caps;
    if (pa->opts.et_exact && !(caps & MP_CAP_ET_EXACT))
        return mp_usage_error(a.cmd, "--et-exact reproduces ExecuTorch: use it with --algo greedy or naive");
    if (pa->opts.exact && !(caps & MP_CAP_EXACT))
        return mp_usage_error(a.cmd, "--exact is an option of --algo opt");
    return MP_OK;
}

/* The plan to its output as it is written, a MiB at a time (a 10^7-tensor
 * plan is 0.7 GB): a failed write leaves no file behind. */
static int write_plan(const char *path, const mp_plan *plan, const char *const *inputs, mp_buf *b,
                      mp_err *err) {
    mp_out o;
    int rc = mp_out_open(&o, path, inputs, 1, err);
    if (rc) return rc;
    mp_plan_write_to(plan, b, mp_out_sink, &o);
    return mp_out_finish(&o, b, err);
}

/* plan --reorder: the reordered program's plan, unless the given order's
 * needs no more bytes (then that one: never worse than without --reorder);
 * *prog becomes the program the plan is of. */
static mp_plan *plan_reordered(mp_program **prog, const plan_args *pa, mp_err *err) {
    mp_program *given = *prog;
    mp_program *q = mp_program_reorder(given, &pa->opts, (uint32_t)pa->effort, NULL, NULL, NULL, err);
    mp_plan *p0 = q ? mp_plan_program(given, &pa->opts, err) : NULL;
    mp_plan *p1 = p0 ? mp_plan_program(q, &pa->opts, err) : NULL;
    if (!p1) {
        mp_plan_free(p0);
        mp_program_free(q);
        return NULL;
    }
    uint64_t b0 = mp_plan_total_bytes(p0), b1 = mp_plan_total_bytes(p1);
    fprintf(stderr, "%s: reordered, the plan needs %llu bytes, in the given order %llu: %s\n", pa->graph,
            (unsigned long long)b1, (unsigned long long)b0, b1 < b0 ? "the reordered graph's plan (memplan reorder "
            "writes that graph)" : "the given order's plan, kept");
    if (b1 < b0) {
        mp_plan_free(p0);
        mp_program_free(given);
        *prog = q;
        return p1;
    }
    mp_plan_free(p1);
    mp_program_free(q);
    return p0;
}

int mp_cmd_plan(int argc, char **argv) {
    plan_args pa;
    int rc = parse_plan_args(argc, argv, &pa);
    if (rc) return rc < 0 ? 0 : rc;
    mp_err err;
    mp_program *prog = mp_graph_load(pa.graph, &err);
    if (!prog) return mp_cli_fail("memplan plan", &err);
    mp_plan *plan = pa.reorder ? plan_reordered(&prog, &pa, &err) : mp_plan_program(prog, &pa.opts, &err);
    if (!plan) {
        mp_program_free(prog);
        return mp_cli_fail("memplan plan", &err);
    }
    if (pa.verify) {
        /* verify what a reader would see: the plan as written, parsed back */
        mp_buf t;
        mp_buf_init(&t);
        mp_plan_write(plan, &t);
        mp_plan *back = mp_plan_parse(t.data, t.len, "<plan>", prog, &err);
        mp_buf_free(&t);
        int vrc = back ? mp_verify_and_print(prog, back, false, stderr) : mp_cli_fail("memplan plan", &err);
        mp_plan_free(back);
        if (vrc != MP_OK) {
            mp_plan_free(plan);
            mp_program_free(prog);
            return vrc;
        }
    }
    if (plan->notes) fputs(plan->notes, stderr);
    mp_buf b, s;
    mp_buf_init(&b);
    mp_buf_init(&s);
    rc = pa.summary ? mp_summary_write(prog, plan, &pa.opts, pa.summary_json, &s, &err) : MP_OK;
    if (rc == MP_OK) rc = write_plan(pa.out, plan, &pa.graph, &b, &err);
    if (rc == MP_OK && pa.summary) rc = mp_write_buf(pa.summary, &s, &pa.graph, 1, &err);
    mp_buf_free(&b);
    mp_buf_free(&s);
    mp_plan_free(plan);
    mp_program_free(prog);
    return rc ? mp_cli_fail("memplan plan", &err) : 0;
}
