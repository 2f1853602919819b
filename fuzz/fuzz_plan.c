/* fuzz_plan.c - target "plan": the programs of target "planners" (the
 * same decoder, planners_decode.h) with only the cheap oracle: greedy and
 * opt each plan once or refuse, and every plan verifies.
 *
 * Each planner runs alone (mp_plan_program_alone): the repaired greedy
 * without ExecuTorch's plan made and verified beside it, opt's own layout
 * without its greedy safety net.  That is less work than mp_plan_program
 * (where opt's net plans greedy again and both compare with ExecuTorch's
 * plan: replaying the corpus took a tenth longer) and a stronger oracle: a
 * wrong layout that those additions would have replaced is still
 * verified.  Target "planners" keeps the whole path. */
#include "planners_decode.h"

static void check(const mp_program *p, const mp_options *o, const char *text, size_t len) {
    static const uint32_t algos[2] = {MP_ALGO_GREEDY, MP_ALGO_OPT};
    for (int k = 0; k < 2; k++) {
        mp_options po = *o;
        po.algo = algos[k];
        mp_err err;
        mp_plan *plan = mp_plan_program_alone(p, &po, &err);
        if (!plan) {
            FUZZ_ASSERT(err.code == MP_EPLAN, "plan: %s failed with code %d: %s\n--- graph:\n%.*s",
                        mp_algo_name(algos[k]), err.code, err.msg, (int)(len > 20000 ? 20000 : len), text);
            continue;
        }
        mp_verify_report r;
        FUZZ_ASSERT(mp_verify(p, plan, &r, &err) == MP_OK, "plan: %s's plan is invalid\n--- graph:\n%.*s",
                    mp_algo_name(algos[k]), (int)(len > 20000 ? 20000 : len), text);
        mp_verify_report_free(&r);
        mp_plan_free(plan);
    }
}
