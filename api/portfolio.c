/* portfolio.c - what mp_plan_program adds around a planner, in one place:
 * the candidates beside the planner's own plan, their verification, and
 * the choice.  Planners stay pure (the table's functions plan and nothing
 * else); mp_plan_program_alone is a planner without this.
 *
 * - A planner that reproduces ExecuTorch (greedy, naive), in its repaired
 *   mode: ExecuTorch's own plan, verified, wins wherever it is valid and
 *   wastes nothing.  That keeps the repaired mode's contract by
 *   construction (docs/deviations.md): a plan ExecuTorch got right comes
 *   out unchanged even where a repair reaches further than its defect
 *   (D3's kept reservations, corpus/regressions/).
 * - A planner that promises never to need more than the reference
 *   (MP_CAP_NO_WORSE: opt) and has no memory map (the reference has none):
 *   where it refuses a layout past 64 bits, the reference greedy's plan;
 *   up to PORTFOLIO_TENSORS tensors, the repaired greedy's plan and
 *   ExecuTorch's valid one, whichever is smallest (ties: the planner's).
 *   Past the threshold the promise rests on the planner alone (the
 *   harness checks it at every size).
 *
 * A candidate chosen for another planner carries that planner's name,
 * options and notes: the plan says who was asked, not who answered. */
#include "internal.h"
#include "api.h"
#include "ref.h"

#include <stdio.h>

/* Up to this many tensors (all graphs) a NO_WORSE planner's plan is
 * compared with the reference's candidates: they cost a plan and a
 * verification each, which the small programs afford. */
#define PORTFOLIO_TENSORS 3000

static uint64_t tensors_of(const mp_program *prog) {
    uint64_t n = 0;
    for (uint32_t gi = 0; gi < prog->n_graphs; gi++) n += prog->graphs[gi].n_tensors;
    return n;
}

/* A candidate handed out as planner pl's, with `notes` (copied). */
static void relabel(mp_plan *cand, const mp_options *o, const mp_planner *pl, const char *notes) {
    cand->opts.algo = o->algo;
    cand->algo_name = pl->name;
    cand->notes = notes ? mp_arena_strndup(cand->arena, notes, strlen(notes)) : NULL;
}

/* The reference greedy's plan (repaired mode) with the same options, or
 * NULL when it refuses the program. */
static mp_plan *greedy_plan(const mp_program *prog, const mp_options *o) {
    mp_options go = *o;
    go.algo = MP_ALGO_GREEDY;
    go.et_exact = false;
    mp_err err;
    return mp_ref_greedy_plan(prog, &go, &err);
}

/* The planner of o->algo, and the reference greedy beside a NO_WORSE one:
 * in its place past 64 bits (each of its constructions can overflow where
 * greedy's objects still end by 2^64 - 1, so it never refuses a graph
 * greedy plans), and instead of it where smaller on a small program.  One
 * method at a time (mp_plan_methods calls it for each). */
mp_plan *mp_portfolio_planner(const mp_program *prog, const mp_options *o, mp_err *err) {
    const mp_planner *pl = mp_planner_get(o->algo);
    mp_plan *mine = pl->plan(prog, o, err);
    if (!(pl->caps & MP_CAP_NO_WORSE) || o->banks.n) return mine; /* greedy has no memory map */
    if (!mine) {
        if (!err->limit) return NULL;
        mp_plan *greedy = greedy_plan(prog, o);
        if (!greedy) return NULL; /* keep the planner's own message */
        mp_err_clear(err);
        char note[160];
        snprintf(note, sizeof note, "exact: not attempted: %s's layout would pass 64 bits; the plan is the "
                 "reference greedy's\n", pl->name);
        relabel(greedy, o, pl, o->exact ? note : NULL);
        return greedy;
    }
    if (tensors_of(prog) > PORTFOLIO_TENSORS) return mine;
    mp_plan *greedy = greedy_plan(prog, o);
    if (!greedy || mp_plan_total_bytes(greedy) >= mp_plan_total_bytes(mine)) {
        mp_plan_free(greedy);
        return mine;
    }
    relabel(greedy, o, pl, mine->notes);
    mp_plan_free(mine);
    return greedy;
}

/* ExecuTorch's plan (by planner `algo`) when it is valid and not
 * wasteful, else NULL. */
static mp_plan *valid_et_plan(const mp_program *prog, const mp_options *o, uint32_t algo) {
    mp_options et = *o;
    et.et_exact = true;
    et.algo = algo;
    mp_err err;
    mp_plan *plan = mp_planner_get(algo)->plan(prog, &et, &err);
    if (!plan) return NULL;
    mp_verify_report r;
    bool keep = mp_verify(prog, plan, &r, &err) == MP_OK && r.n_warnings == 0;
    mp_verify_report_free(&r);
    if (!keep) {
        mp_plan_free(plan);
        return NULL;
    }
    plan->opts.et_exact = false;
    return plan;
}

/* The whole program's candidates after the planner's plan: ExecuTorch's
 * own in the repaired mode of a planner that reproduces it; beside a
 * NO_WORSE planner, on a small program, the reference's ExecuTorch plan
 * (which the reference greedy above may not be: found by the harness,
 * corpus/regressions/). */
mp_plan *mp_portfolio_choose(const mp_program *prog, const mp_options *o, mp_plan *plan) {
    const mp_planner *pl = mp_planner_get(o->algo);
    if ((pl->caps & MP_CAP_ET_EXACT) && !o->et_exact) {
        mp_plan *et = valid_et_plan(prog, o, o->algo);
        if (et) {
            mp_plan_free(plan);
            plan = et;
        }
    }
    if (!(pl->caps & MP_CAP_NO_WORSE) || o->et_exact || tensors_of(prog) > PORTFOLIO_TENSORS) return plan;
    uint32_t ref = 0;
    while (ref < mp_planner_count() && !(mp_planner_get(ref)->caps & MP_CAP_REFERENCE)) ref++;
    if (ref == mp_planner_count() || !(mp_planner_get(ref)->caps & MP_CAP_ET_EXACT)) return plan;
    mp_plan *et = valid_et_plan(prog, o, ref);
    if (!et || mp_plan_total_bytes(et) >= mp_plan_total_bytes(plan)) {
        mp_plan_free(et);
        return plan;
    }
    et->opts = *o;
    relabel(et, o, pl, plan->notes);
    mp_plan_free(plan);
    return et;
}
