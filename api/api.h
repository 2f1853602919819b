/* api.h - the library front door's entry points that the command, the
 * fuzz targets and the tests call beside the public ones: several
 * methods, a planner alone (without the portfolio around it), the summary
 * with explicit options, the table's bare plan functions. */
#ifndef MP_API_INTERNAL_H
#define MP_API_INTERNAL_H

#include "model.h"

/* mp_plan_program of several methods (api/plan_methods.c): each planned by
 * `plan` as its view's entry, shared tensors pinned at one place. */
mp_plan *mp_plan_methods(const mp_program *p, const mp_options *o,
                         mp_plan *(*plan)(const mp_program *, const mp_options *, mp_err *), mp_err *err);

/* A planner's own plan: mp_plan_program's checks of the options and its
 * guard, without the portfolio around the planner (ExecuTorch's plan in
 * place of the repaired one where valid; the reference greedy beside opt
 * and in its place past 64 bits).  Fuzz target "plan" verifies these, so that a
 * wrong layout the additions would have replaced is still seen. */
mp_plan *mp_plan_program_alone(const mp_program *prog, const mp_options *opts, mp_err *err);
/* The plan summary with the options it was planned with (api/summary.c;
 * the command's --summary). */
int mp_summary_write(const mp_program *prog, const mp_plan *plan, const mp_options *o, bool json, mp_buf *out,
                     mp_err *err);
/* The portfolio (api/portfolio.c): the planner of o->algo with the
 * reference greedy beside it where the planner promises to be no worse
 * (one method at a time); then the whole program's candidates, the
 * planner's plan given up (freed) where one wins. */
mp_plan *mp_portfolio_planner(const mp_program *prog, const mp_options *o, mp_err *err);
mp_plan *mp_portfolio_choose(const mp_program *prog, const mp_options *o, mp_plan *plan);

#endif
