/* fuzz_shapes.c - target "shapes": large structured graphs, to find what
 * makes a planner slow.
 *
 * The input chooses a generator profile (the adversarial ones included:
 * long in-place and view chains, many devices or pools, one wide node,
 * many or deeply nested conds), a size of up to 20,000 tensors, planner
 * options and a seed; memplan gen builds the graph.  opt (and greedy, up
 * to 5,000 tensors) must plan it or refuse it, and every plan must verify.
 * Slowness is the finding: libFuzzer's -timeout (shapes.options) makes a
 * slow plan a crash and -report_slow_units names slow inputs. */
#include "fuzz.h"
#include "internal.h"
#include "harness.h"
#include "files.h"

#include <string.h>

static void check(const mp_program *p, const mp_options *o, uint32_t algo) {
    mp_options po = *o;
    po.algo = algo;
    mp_err err;
    mp_plan *plan = mp_plan_program(p, &po, &err);
    if (!plan) {
        FUZZ_ASSERT(err.code == MP_EPLAN, "shapes: %s failed with code %d: %s", mp_algo_name(algo), err.code,
                    err.msg);
        return;
    }
    mp_verify_report r;
    int rc = mp_verify(p, plan, &r, &err);
    FUZZ_ASSERT(rc == MP_OK, "shapes: %s's plan is invalid (%llu violations)", mp_algo_name(algo),
                (unsigned long long)r.n_violations);
    mp_verify_report_free(&r);
    mp_plan_free(plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4) return 0;
    mp_gen_options g;
    mp_gen_options_default(&g);
    g.profile = data[0] % MP_N_PROFILES;
    g.tensors = 16 + ((uint32_t)data[1] << 8 | data[2]) % 20000;
    g.depth = 1 + data[3] % 4;
    for (size_t i = 4; i < size && i < 12; i++) g.seed = g.seed << 8 | data[i];
    mp_options o;
    mp_options_default(&o);
    o.per_device = data[3] & 0x10;
    o.alignment = (data[3] & 0x20) ? 1 : 16;
    mp_buf b;
    mp_buf_init(&b);
    mp_gen(&g, &b);
    mp_err err;
    mp_program *p = mp_graph_parse(b.data, b.len, "<shapes>", &err);
    FUZZ_ASSERT(p != NULL, "shapes: the generator made a graph that does not parse: %s", err.msg);
    check(p, &o, MP_ALGO_OPT);
    if (g.tensors <= 5000) check(p, &o, MP_ALGO_GREEDY);
    mp_program_free(p);
    mp_buf_free(&b);
    return 0;
}
