/* brute.h - an independent, brute-force checker of the plan rules.
 *
 * Written from the rules' text, for small inputs, sharing no code with
 * verify/: it re-derives storage roots, placeholders, lifetimes, in-place
 * families and name resolution from the graph model itself and checks every
 * pair of allocations directly (quadratic), so a bug in the verifier's
 * sweep, interval tree or indexing cannot hide in shared code. */
#ifndef MP_FUZZ_BRUTE_H
#define MP_FUZZ_BRUTE_H

#include "internal.h"

#define BF_MAX_ALLOCS 64 /* allocs (and frees) in the whole plan */
#define BF_MAX_TENSORS 256 /* per graph */
#define BF_MAX_NODES 128   /* per graph */
#define BF_MAX_GRAPHS 16

typedef struct bf_result {
    uint64_t found[MP_N_RULES];     /* violations found per rule */
    char first[MP_N_RULES][256];    /* the first one of each rule, in words */
    uint64_t wasteful;              /* tensors planned that need not be (warnings) */
} bf_result;

/* Check `plan` against `prog`.  Returns false (and checks nothing) when the
 * input is larger than the limits above. */
bool bf_check(const mp_program *prog, const mp_plan *plan, bf_result *out);

#endif
