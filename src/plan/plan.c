/* plan.c - the planner entry point: dispatches on the algorithm. */
#include "util.h"

mp_plan *mp_plan_program(const mp_program *prog, const mp_options *opts,
                         mp_err *err) {
    if (opts->algo == MP_ALGO_OPT) return mp_opt_plan(prog, opts, err);
    return mp_ref_plan(prog, opts, err);
}
