/* align.c - rounding a tensor's byte count up to the alignment.
 *
 * ExecuTorch computes TensorSpec.allocated_memory as
 *     math.ceil(nbytes / alignment) * alignment
 * in Python, where `/` is true division: the quotient is the double nearest
 * to the exact rational (ties to even), so above 2^53 bytes the result can
 * fall below nbytes.  mp_ref_align_et reproduces that exactly with integer
 * arithmetic (no floating point, so it is the same on every machine);
 * mp_ref_align_exact is the repaired rounding (repair D9). */
#include "internal.h"

uint64_t mp_ref_align_exact(uint64_t n, uint64_t a) { return mp_align_up(n, a); }

/* ceil(round_to_double(n / a)), for n < 2^62 and 1 <= a <= 2^30. */
static uint64_t ceil_of_rounded_quotient(uint64_t n, uint64_t a) {
    uint64_t q = n / a, r = n % a;
    if (q == 0) return r ? 1 : 0; /* 0 < r/a < 1 rounds to a value in (0,1] */
    int bits = 64 - __builtin_clzll(q);
    if (bits > 53) {
        /* q itself is not representable: round q + r/a to a multiple of
         * u = 2^(bits-53).  Comparing (q mod u) + r/a with u/2 in integers:
         * (q mod u) * a + r  vs  (u/2) * a; both stay below 2^40. */
        int sh = bits - 53;
        uint64_t u = UINT64_C(1) << sh, lo = q & (u - 1), hi = q - lo;
        uint64_t lhs = lo * a + r, half = (u / 2) * a;
        bool up = lhs > half || (lhs == half && ((hi >> sh) & 1));
        return up ? hi + u : hi;
    }
    if (r == 0) return q;
    /* q is exact and q + r/a < q + 1.  The double nearest is q exactly when
     * r/a is below half an ulp of q, 2^(bits-54): r * 2^(54-bits) < a. */
    int e = 54 - bits;
    if (e >= 34) return q + 1; /* r * 2^e >= 2^34 > a */
    uint64_t lhs = r << e;
    if (lhs < a) return q;
    if (lhs == a) /* a tie goes to the even mantissa */
        return (bits < 53 || (q & 1) == 0) ? q : q + 1;
    return q + 1;
}

uint64_t mp_ref_align_et(uint64_t n, uint64_t a) {
    return ceil_of_rounded_quotient(n, a) * a;
}

bool mp_ref_et_rounding_differs(const mp_program *p, uint32_t alignment) {
    for (uint32_t g = 0; g < p->n_graphs; g++)
        for (uint32_t t = 0; t < p->graphs[g].n_tensors; t++) {
            uint64_t n = p->graphs[g].tensors[t].size;
            if (mp_ref_align_et(n, 16) != mp_ref_align_exact(n, 16) ||
                mp_ref_align_et(n, alignment) != mp_ref_align_exact(n, alignment))
                return true;
        }
    return false;
}
