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
 * guard, without what it adds around the planner (ExecuTorch's plan in
 * place of the repaired one where valid; opt's greedy safety net and its
 * fallback past 64 bits).  Fuzz target "plan" verifies these, so that a
 * wrong layout the additions would have replaced is still seen. */
mp_plan *mp_plan_program_alone(const mp_program *prog, const mp_options *opts, mp_err *err);
/* The plan summary with the options it was planned with (api/summary.c;
 * the command's --summary). */
int mp_summary_write(const mp_program *prog, const mp_plan *plan, const mp_options *o, bool json, mp_buf *out,
                     mp_err *err);
/* The planner table's bare plan function of planner i (its `plan` where it
 * adds nothing around itself), NULL past the end (api/planners.c). */
mp_plan_fn mp_planner_alone(uint32_t i);

#endif
