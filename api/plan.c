/* plan.c - mp_plan_program: checks the options against the planner's
 * abilities (planner table) and runs it under the allocation guard. */
#include "internal.h"

typedef struct plan_call {
    const mp_program *prog;
    const mp_options *opts;
    const mp_planner *pl;
    mp_err *err;
    mp_plan *plan;
} plan_call;

static int plan_work(void *ctx) {
    plan_call *c = ctx;
    c->plan = c->pl->plan(c->prog, c->opts, c->err);
    return c->plan ? MP_OK : c->err->code;
}

mp_plan *mp_plan_program(const mp_program *prog, const mp_options *opts, mp_err *err) {
    mp_err_clear(err);
    const mp_planner *pl = mp_planner_get(opts->algo);
    if (!pl) {
        mp_err_set(err, MP_EFORMAT, "no planner %u in the table (%u planners)", opts->algo,
                   mp_planner_count());
        return NULL;
    }
    if (opts->et_exact && !(pl->caps & MP_CAP_ET_EXACT)) {
        mp_err_set(err, MP_EFORMAT, "planner '%s' has no ExecuTorch-exact mode", pl->name);
        return NULL;
    }
    plan_call c = {prog, opts, pl, err, NULL};
    if (mp_guard_run(err, plan_work, &c) != MP_OK) return NULL;
    return c.plan;
}
