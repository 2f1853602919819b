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
 * - The same planner over a memory map: ExecuTorch's banked greedy (PR
 *   #21821) with that map, verified, on a small program wherever it needs
 *   fewer bytes, and at any size where the planner finds the map too small
 *   (issue 48: opt never worse than banked greedy, and plans where it does).
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

/* A candidate handed out as planner pl's, with its options o and `notes`
 * (copied). */
static void relabel(mp_plan *cand, const mp_options *o, const mp_planner *pl, const char *notes) {
    cand->opts = *o;
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

/* ExecuTorch's plan (by planner `algo`) when it is valid and not
 * wasteful, else NULL. */
static mp_plan *valid_et_plan(const mp_program *prog, const mp_options *o, uint32_t algo) {
    mp_options et = *o;
    et.et_exact = true;
    et.algo = algo;
    if (o->banks.n) et.et_upstream |= MP_UPSTREAM_21821; /* over a memory map: ExecuTorch's banked greedy */
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

/* The smaller of plan and cand (cand freed, or plan: ties keep plan),
 * cand handed out as planner pl's with options o and plan's notes. */
static mp_plan *smaller(mp_plan *plan, mp_plan *cand, const mp_options *o, const mp_planner *pl) {
    if (!cand || mp_plan_total_bytes(cand) >= mp_plan_total_bytes(plan)) {
        mp_plan_free(cand);
        return plan;
    }
    relabel(cand, o, pl, plan->notes);
    mp_plan_free(plan);
    return cand;
}

/* The planner of o->algo, and the reference greedy beside a NO_WORSE one:
 * in its place past 64 bits (each of its constructions can overflow where
 * greedy's objects still end by 2^64 - 1, so it never refuses a graph
 * greedy plans), and instead of it where smaller on a small program.  One
 * method at a time (mp_plan_methods calls it for each). */
mp_plan *mp_portfolio_planner(const mp_program *prog, const mp_options *o, mp_err *err) {
    const mp_planner *pl = mp_planner_get(o->algo);
    mp_plan *mine = pl->plan(prog, o, err);
    if ((pl->caps & MP_CAP_NO_WORSE) && o->banks.n && !mine) { /* the map: where banked greedy fits it */
        mp_plan *banked = valid_et_plan(prog, o, MP_ALGO_GREEDY);
        if (!banked) return NULL; /* keep the planner's own message */
        mp_err_clear(err);
        relabel(banked, o, pl, NULL);
        return banked;
    }
    if (!(pl->caps & MP_CAP_NO_WORSE) || o->banks.n) return mine; /* the reference greedy has no memory map */
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
    return smaller(mine, greedy_plan(prog, o), o, pl);
}

/* Planner pl's layout of the banks another plan chose: each tensor of the
 * program that has bytes of its own pinned (mem_id) to the bank it has in
 * `in`, so that pl packs every bank, which it does at or near its bound.
 * NULL when pl refuses it. */
static mp_plan *repack(const mp_program *prog, const mp_options *o, const mp_plan *in, const mp_planner *pl) {
    mp_program *q = mp_program_tensors_copy(prog);
    for (uint32_t b = 0; b < in->n_graphs; b++) {
        const mp_graph_plan *gp = &in->graphs[b];
        if (gp->graph < 0) continue;
        mp_tensor *ts = q->graphs[gp->graph].tensors;
        for (uint32_t a = 0; a < gp->n_allocs; a++) {
            const mp_alloc *x = &gp->allocs[a];
            if (x->tensor >= 0 && ts[x->tensor].inplace_base < 0) ts[x->tensor].mem_id = (uint32_t)x->mem_id;
        }
    }
    mp_err err;
    mp_plan *p = pl->plan(q, o, &err);
    mp_program_tensors_copy_free(q);
    return p;
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
    if (et && o->banks.n && prog->n_entries <= 1) /* the banks greedy chose, packed by the planner */
        plan = smaller(plan, repack(prog, o, et, pl), o, pl);
    return smaller(plan, et, o, pl);
}
