/* fuzz_planners.c - target "planners": every algorithm on valid graphs.
 *
 * The input is not a graph file: a byte stream drives a small generator
 * (below), so every input decodes to a valid program and the fuzzer
 * explores graphs and options rather than syntax errors.  Each byte is one
 * structural decision (an operation, a size class, an operand, a device),
 * so a mutation changes the graph locally.  The first two bytes choose the
 * options (alignment, devices, pre-assigned pools, the three alloc flags,
 * per-device, the opt planner's effort and exact search).  A missing byte
 * reads as 0, the plainest choice.
 *
 * MEMPLAN_FUZZ_PRINT=1 in the environment prints what each input decodes
 * to, as a graph file with its options line, which this target also takes:
 * an input that starts with "memplan-graph" is a graph file instead (a
 * reproducer from `memplan harness` or corpus/defects), with its options
 * in a "# options: --alignment 8 --per-device ..." comment line.
 *
 * Then mp_check_graph runs greedy, naive and opt: each must plan or refuse
 * (MP_EPLAN), every plan must verify, parse back and write the same bytes,
 * planning twice must give the same bytes, ExecuTorch's plan where valid
 * must equal the repaired one (unless D9's float rounding changed a size),
 * opt must never need more than greedy and must refuse what greedy
 * refuses, except a graph only past greedy's limits (64 bits, re-planning
 * work), which opt may plan.  Any failure aborts. */
#include "planners_decode.h"

static void check(const mp_program *p, const mp_options *o, const char *text, size_t len) {
    static const uint32_t algos[3] = {MP_ALGO_GREEDY, MP_ALGO_NAIVE, MP_ALGO_OPT};
    mp_check_result r;
    mp_check_graph(p, o, algos, 3, &r);
    if (!r.failed) return;
    char head[1200];
    snprintf(head, sizeof head, "planners: %s (%s): %s", r.kind, r.algo, r.message);
    if (!fuzz_counts(head)) return; /* not the failure being minimized */
    char args[256];
    mp_options_to_args(o, args, sizeof args);
    fuzz_fail("planners: %s (%s): %s\n--- options: %s --budget-ms %u%s --exact-ms %u\n"
              "--- graph:\n%.*s",
              r.kind, r.algo, r.message, args, o->budget_ms, o->exact ? " --exact" : "",
              o->exact_ms, (int)(len > 20000 ? 20000 : len), text);
}
