/* plan.c - mp_plan_program: checks the options against the planner's
 * abilities (planner table) and runs it under the allocation guard.
 *
 * The repaired mode of a planner that reproduces ExecuTorch is, by its
 * contract, ExecuTorch's own plan wherever that plan is valid (and wastes
 * nothing): the repairs change only what would be wrong.  Each repair is
 * written to leave valid plans alone, but one that reaches further than
 * the defect (D3's kept reservations, corpus/regressions/) would break the
 * contract, so here it is kept by construction: ExecuTorch's plan is made
 * and verified too, and wins wherever it is valid and wastes nothing.  The
 * repaired planner still decides whether a graph can be planned at all: a
 * graph that breaks a rule of the format (an in-place tensor larger than
 * its base) is refused even where ExecuTorch's plan happens to be valid. */
#include "internal.h"
#include "api.h"

/* The programs up to this size get the reference's ExecuTorch plan as a
 * candidate too (opt's own safety net goes as far). */
#define MP_NO_WORSE_TENSORS 3000

typedef struct plan_call {
    const mp_program *prog;
    const mp_options *opts;
    const mp_planner *pl;
    mp_err *err;
    mp_plan *plan;
    mp_plan_fn fn; /* the planner's plan function: its `plan`, or its bare one */
    bool alone;    /* mp_plan_program_alone: nothing added around fn */
} plan_call;

/* ExecuTorch's plan (by planner `algo`) when it is valid and not
 * wasteful, else NULL. */
static mp_plan *valid_et_plan(const plan_call *c, uint32_t algo) {
    mp_options et = *c->opts;
    et.et_exact = true;
    et.algo = algo;
    mp_err err;
    mp_plan *plan = mp_planner_get(algo)->plan(c->prog, &et, &err);
    if (!plan) return NULL;
    mp_verify_report r;
    bool keep = mp_verify(c->prog, plan, &r, &err) == MP_OK && r.n_warnings == 0;
    mp_verify_report_free(&r);
    if (!keep) {
        mp_plan_free(plan);
        return NULL;
    }
    plan->opts.et_exact = false;
    return plan;
}

/* A planner that promises never to need more than the reference (opt)
 * compares itself with the repaired greedy inside (its safety net); the
 * reference's answer here can also be ExecuTorch's own plan (above), which
 * the net does not see: where that one is smaller, it is the answer, under
 * the planner's name (found by the harness: corpus/regressions). */
static void no_worse_than_et(plan_call *c) {
    uint32_t ref = 0;
    while (ref < mp_planner_count() && !(mp_planner_get(ref)->caps & MP_CAP_REFERENCE)) ref++;
    uint64_t n = 0;
    for (uint32_t gi = 0; gi < c->prog->n_graphs; gi++) n += c->prog->graphs[gi].n_tensors;
    if (ref == mp_planner_count() || !(mp_planner_get(ref)->caps & MP_CAP_ET_EXACT) || c->opts->et_exact ||
        n > MP_NO_WORSE_TENSORS)
        return;
    mp_plan *et = valid_et_plan(c, ref);
    if (!et || mp_plan_total_bytes(et) >= mp_plan_total_bytes(c->plan)) {
        mp_plan_free(et);
        return;
    }
    et->opts = *c->opts;
    et->algo_name = c->pl->name;
    et->notes = c->plan->notes ? mp_arena_strndup(et->arena, c->plan->notes, strlen(c->plan->notes)) : NULL;
    mp_plan_free(c->plan);
    c->plan = et;
}

static int plan_work(void *ctx) {
    plan_call *c = ctx;
    if (c->prog->n_entries > 1) { /* several methods: each on its own, shared state in one place */
        c->plan = mp_plan_methods(c->prog, c->opts, c->fn, c->err);
        return c->plan ? MP_OK : c->err->code;
    }
    c->plan = c->fn(c->prog, c->opts, c->err);
    if (!c->plan) return c->err->code;
    if (c->alone) return MP_OK;
    bool et_mode = (c->pl->caps & MP_CAP_ET_EXACT) && !c->opts->et_exact;
    mp_plan *et = et_mode ? valid_et_plan(c, c->opts->algo) : NULL;
    if (et) {
        mp_plan_free(c->plan);
        c->plan = et;
    }
    if (c->pl->caps & MP_CAP_NO_WORSE) no_worse_than_et(c);
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
    if (o.banks.n && !(pl->caps & MP_CAP_BANKS)) { /* first: whatever its other options */
        mp_err_limit(err, "planner '%s' has no memory map (banks); ExecuTorch's planners have none: plan "
                     "it with --algo opt", pl->name);
        return NULL;
    }
    if (o.banks.n && o.per_device) {
        mp_err_set(err, MP_EFORMAT, "a memory map (banks) cannot be combined with --per-device (banks are "
                   "pools of one device)");
        return NULL;
    }
    plan_call c = {prog, &o, pl, err, NULL, alone ? mp_planner_alone(opts->algo) : pl->plan, alone};
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
