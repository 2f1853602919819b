/* planners.c - the planner table: every planner memplan has, one line
 * each.  --algo, the plan file's algo=, the harness's default list, the
 * bench, the report and the pictures' colours all read it.  Adding a
 * planner is one file (its plan function) and one line here. */
#include "internal.h"
#include "api.h"
#include "opt.h"
#include "peers.h"
#include "ref.h"

/* One line per planner; its plan function plans and nothing else (what
 * mp_plan_program adds is api/portfolio.c's).  Invariant: the first three
 * are at the positions enum mp_algo names. */
typedef struct planner_line {
    mp_planner pub;
} planner_line;

static const planner_line TABLE[] = {
    {{"greedy", "ExecuTorch's greedy (apply_algo + greedy): shared objects, best fit by size",
      mp_ref_greedy_plan, MP_CAP_ET_EXACT | MP_CAP_REFERENCE, "#4e79a7"}},
    {{"naive", "ExecuTorch's naive: every tensor at the end of the buffer, no reuse",
      mp_ref_naive_plan, MP_CAP_ET_EXACT | MP_CAP_REFUSES_INPLACE, "#f28e2b"}},
    {{"opt", "the optimized planner: per-tensor offsets, several constructions, exact search",
      mp_opt_plan, MP_CAP_EXACT | MP_CAP_NO_WORSE | MP_CAP_BANKS, "#59a14f"}},
    {{"tflm", "TFLite Micro's greedy by size: largest first, lowest offset that fits",
      mp_tflm_plan, MP_CAP_BANKS, "#b07aa1"}},
    {{"bestfit", "XLA's heap simulator: largest first, into the smallest gap that fits",
      mp_bestfit_plan, MP_CAP_BANKS, "#76b7b2"}},
};

#define N_PLANNERS (sizeof TABLE / sizeof *TABLE)

uint32_t mp_planner_count(void) { return (uint32_t)N_PLANNERS; }

const mp_planner *mp_planner_get(uint32_t i) { return i < N_PLANNERS ? &TABLE[i].pub : NULL; }

const char *mp_algo_name(uint32_t algo) { return algo < N_PLANNERS ? TABLE[algo].pub.name : "?"; }

int mp_algo_parse(const char *name) {
    for (uint32_t i = 0; name && i < N_PLANNERS; i++)
        if (strcmp(name, TABLE[i].pub.name) == 0) return (int)i;
    return -1;
}
