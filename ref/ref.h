/* ref.h - what the reference planner offers the layers above it: its two
 * algorithms (the planner table's "greedy" and "naive"), ExecuTorch's
 * apply_algo with greedy or naive, reproduced with et_exact and repaired
 * otherwise (docs/deviations.md).  The portfolio (api/portfolio.c) runs
 * the greedy one beside opt. */
#ifndef MP_REF_H
#define MP_REF_H

#include "internal.h" /* the problem model: lifetimes, buffer table */

mp_plan *mp_ref_greedy_plan(const mp_program *prog, const mp_options *o, mp_err *err);
mp_plan *mp_ref_naive_plan(const mp_program *prog, const mp_options *o, mp_err *err);

#endif
