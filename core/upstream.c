/* upstream.c - the ExecuTorch pull requests `--et-upstream PR` applies on
 * top of the exact reproduction (docs/deviations.md): their numbers and
 * option bits, one table for the command's flag, the library's option by
 * name and the harness's arguments. */
#include "internal.h"

static const struct {
    uint32_t pr, bit;
} PRS[] = {
    {21494, MP_UPSTREAM_21494},
    {21616, MP_UPSTREAM_21616},
    {21818, MP_UPSTREAM_21818},
    {21821, MP_UPSTREAM_21821},
    {21840, MP_UPSTREAM_21840},
};

#define N_PRS (sizeof PRS / sizeof *PRS)

uint32_t mp_upstream_bit(uint64_t pr) {
    for (size_t k = 0; k < N_PRS; k++)
        if (PRS[k].pr == pr) return PRS[k].bit;
    return 0;
}

void mp_upstream_write(uint32_t set, const char *before, const char *between, mp_buf *out) {
    bool first = true;
    for (size_t k = 0; k < N_PRS; k++) {
        if (!(set & PRS[k].bit)) continue;
        mp_buf_puts(out, first ? before : between);
        mp_buf_u64(out, PRS[k].pr);
        first = false;
    }
}
