/* naive.c - ExecuTorch's `naive` algorithm: every spec gets fresh bytes at
 * the end of its pool, in spec order, after the sub-graph reservation.  It
 * refuses in-place specs.  Shared object ids are always 0. */
#include "ref_internal.h"

int mp_ref_naive(const ref_part *p, ref_result *r, mp_err *err) {
    mp_ref_result_init(r, p->n);
    uint32_t n_bufs = p->n_input, cap = n_bufs + 2;
    uint64_t *bufs = mp_xcalloc(cap, sizeof *bufs);
    if (p->n_input) memcpy(bufs, p->input, p->n_input * sizeof *bufs);
    for (uint32_t i = 0; i < p->n; i++) {
        int32_t ti = p->specs[i];
        const mp_tensor *t = &p->g->tensors[ti];
        if (t->inplace_base >= 0) {
            mp_xfree(bufs);
            return mp_err_set(err, MP_EPLAN,
                              "the naive algorithm does not support in-place "
                              "tensors ('%s' is in-place); use greedy",
                              t->name);
        }
        uint32_t pool = t->mem_id ? t->mem_id : 1;
        p->realigned[ti] = 1;
        uint64_t size = ref_align(p, t->size, p->alignment);
        if (pool >= n_bufs) { /* _allocate_buf extends with zeros */
            if (pool + 1 > cap) { /* doubling: pools come one by one (many-pools) */
                uint32_t ncap = pool + 1 > 2 * cap ? pool + 1 : 2 * cap;
                bufs = mp_xrealloc(bufs, ncap * sizeof *bufs);
                memset(bufs + cap, 0, (ncap - cap) * sizeof *bufs);
                cap = ncap;
            }
            n_bufs = pool + 1;
        }
        r->pool[i] = pool;
        r->obj[i] = 0;
        r->offset[i] = bufs[pool];
        r->size[i] = size;
        if (!mp_add_u64(bufs[pool], size, &bufs[pool])) {
            mp_xfree(bufs);
            return mp_err_limit(err, "graph '%s': buffer %u would not fit in 64 bits",
                              p->g->name, pool);
        }
    }
    r->bufs = bufs;
    r->n_bufs = n_bufs;
    return MP_OK;
}
