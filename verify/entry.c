/* entry.c - mp_verify, the verifier's front door: one method (verify.c) or
 * several (methods.c), under the allocation guard (alloc.c); a report
 * whose arena the guard freed is emptied. */
#include "verify.h"

typedef struct verify_call {
    const mp_program *prog;
    const mp_plan *plan;
    mp_verify_report *r;
    mp_err *err;
} verify_call;

static int verify_work(void *ctx) {
    verify_call *c = ctx;
    if (c->prog->n_entries > 1) return mp_v_verify_methods(c->prog, c->plan, c->r, c->err);
    return mp_v_verify_one(c->prog, c->plan, c->r, c->err);
}

int mp_verify(const mp_program *prog, const mp_plan *plan, mp_verify_report *r, mp_err *err) {
    verify_call c = {prog, plan, r, err};
    mp_err_clear(err);
    memset(r, 0, sizeof *r);
    int rc = mp_guard_run(err, verify_work, &c);
    if (rc == MP_ENOMEM) memset(r, 0, sizeof *r);
    return rc;
}
