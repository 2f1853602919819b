/* plan.c - mp_plan_program: checks the options against the planner's
 * abilities (planner table) and runs the planner, with the portfolio
 * around it (api/portfolio.c), under the allocation guard;
 * mp_plan_program_alone runs the planner without the portfolio. */
#include "internal.h"
#include "api.h"
#include "ref.h"

typedef struct plan_call {
    const mp_program *prog;
    const mp_options *opts;
    const mp_planner *pl;
    mp_err *err;
    mp_plan *plan;
    bool alone; /* mp_plan_program_alone: the planner's function and nothing else */
} plan_call;

static int plan_work(void *ctx) {
    plan_call *c = ctx;
    mp_plan_fn fn = c->alone ? c->pl->plan : mp_portfolio_planner;
    if (c->prog->n_entries > 1) { /* several methods: each on its own, shared state in one place */
        c->plan = mp_plan_methods(c->prog, c->opts, fn, c->err);
        return c->plan ? MP_OK : c->err->code;
    }
    c->plan = fn(c->prog, c->opts, c->err);
    if (!c->plan) return c->err->code;
    if (!c->alone) c->plan = mp_portfolio_choose(c->prog, c->opts, c->plan);
    return MP_OK;
}

/* The options checked against the planner's abilities, then the planner
 * run under the allocation guard. */
static mp_plan *plan_checked(const mp_program *prog, const mp_options *opts, bool alone, mp_err *err) {
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
    /* the memory map: the options', else the file's; the plan records it */
    mp_options o = *opts;
    o.banks = *mp_banks_of(prog, opts);
    if (prog->n_entries > 1 && !(pl->caps & MP_CAP_BANKS) && mp_methods_share(prog)) {
        mp_err_limit(err, "planner '%s' cannot keep the state methods share at one place (ExecuTorch plans "
                     "each method on its own): plan it with --algo opt", pl->name);
        return NULL;
    }
    /* ExecuTorch's greedy plans over a memory map since PR #21821 (banked greedy) */
    bool banked = o.et_exact && (o.et_upstream & MP_UPSTREAM_21821) && pl->plan == mp_ref_greedy_plan;
    if (o.banks.n && !(pl->caps & MP_CAP_BANKS) && !banked) { /* first: whatever its other options */
        mp_err_limit(err, "planner '%s' has no memory map (banks); ExecuTorch's planners have none: plan "
                     "it with --algo opt", pl->name);
        return NULL;
    }
    if (o.banks.n && o.per_device) {
        mp_err_set(err, MP_EFORMAT, "a memory map (banks) cannot be combined with --per-device (banks are "
                   "pools of one device)");
        return NULL;
    }
    plan_call c = {prog, &o, pl, err, NULL, alone};
    if (mp_guard_run(err, plan_work, &c) != MP_OK) return NULL;
    return c.plan;
}

mp_plan *mp_plan_program(const mp_program *prog, const mp_options *opts, mp_err *err) {
    mp_options defaults;
    if (!opts) { /* the public default: opt (mp_options_new) */
        mp_options_default(&defaults);
        defaults.algo = MP_ALGO_OPT;
        opts = &defaults;
    }
    return plan_checked(prog, opts, false, err);
}

mp_plan *mp_plan_program_alone(const mp_program *prog, const mp_options *opts, mp_err *err) {
    return plan_checked(prog, opts, true, err);
}
