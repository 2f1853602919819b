/* reorder.c - the front door of the reorder (opt/reorder.c; issue 50):
 * the public mp_program_reorder, its defaults and argument checks. */
#include "internal.h"
#include "api.h"
#include "opt.h"

mp_program *mp_program_reorder(const mp_program *prog, const mp_options *opts, uint32_t effort,
                               uint64_t *peak_before, uint64_t *peak_after, int *optimal, mp_err *err) {
    mp_options defaults;
    if (!opts) {
        mp_options_default(&defaults);
        opts = &defaults;
    }
    if (!prog) {
        mp_err_set(err, MP_EFORMAT, "mp_program_reorder: no program");
        return NULL;
    }
    mp_program *out = NULL;
    if (mp_reorder_run(prog, opts, effort, &out, peak_before, peak_after, optimal, err) != MP_OK) return NULL;
    return out;
}
