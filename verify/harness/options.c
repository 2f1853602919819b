/* options.c - the planning options as command-line flags: one table that
 * `memplan plan` reads its flags with, that the harness writes its
 * reproducers' flags from, and that the fuzz targets read a seed's
 * "# options:" line with.  Flags without a value set or clear a switch;
 * the others take a number in a range. */
#include "internal.h"
#include "memplan_tools.h"

#include <errno.h>

enum field { F_ALIGNMENT, F_BUDGET, F_EXACT_MS, F_ET, F_EXACT, F_INPUTS, F_OUTPUTS, F_MUTABLE, F_PER_DEVICE,
             F_UPSTREAM };

static const mp_option_flag FLAGS[] = {
    {"--alignment", true, 1, MP_MAX_ALIGNMENT, F_ALIGNMENT},
    {"--budget-ms", true, 0, 3600000, F_BUDGET},
    {"--exact-ms", true, 1, 3600000, F_EXACT_MS},
    {"--et-exact", false, 0, 0, F_ET},
    {"--et-upstream", true, 21616, 21840, F_UPSTREAM},
    {"--exact", false, 0, 0, F_EXACT},
    {"--no-alloc-inputs", false, 0, 0, F_INPUTS},
    {"--no-alloc-outputs", false, 0, 0, F_OUTPUTS},
    {"--no-alloc-mutable", false, 0, 0, F_MUTABLE},
    {"--per-device", false, 0, 0, F_PER_DEVICE},
};

const mp_option_flag *mp_option_find(const char *name, size_t len) {
    for (size_t i = 0; i < sizeof FLAGS / sizeof *FLAGS; i++)
        if (strlen(FLAGS[i].name) == len && !memcmp(FLAGS[i].name, name, len)) return &FLAGS[i];
    return NULL;
}

/* A whole decimal number within [lo, hi]. */
static bool number(const char *s, uint64_t lo, uint64_t hi, uint64_t *v) {
    char *end;
    if (!s || *s < '0' || *s > '9') return false;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end || x < lo || x > hi) return false;
    *v = x;
    return true;
}

int mp_option_set(mp_options *o, const mp_option_flag *f, const char *value, mp_err *err) {
    uint64_t v = 0;
    if (f->takes_value && !number(value, f->lo, f->hi, &v))
        return mp_err_set(err, MP_EFORMAT, "%s wants a number in %llu..%llu, not '%s'", f->name,
                          (unsigned long long)f->lo, (unsigned long long)f->hi, value ? value : "");
    switch (f->field) {
    case F_ALIGNMENT: o->alignment = (uint32_t)v; break;
    case F_BUDGET: o->budget_ms = (uint32_t)v; break;
    case F_EXACT_MS: o->exact_ms = (uint32_t)v; break;
    case F_ET: o->et_exact = true; break;
    case F_UPSTREAM: /* implies --et-exact */
        if (v != 21616 && v != 21840)
            return mp_err_set(err, MP_EFORMAT, "--et-upstream: no fix of ExecuTorch PR #%llu (21616, 21840)",
                              (unsigned long long)v);
        o->et_exact = true;
        o->et_upstream |= v == 21616 ? MP_UPSTREAM_21616 : MP_UPSTREAM_21840;
        break;
    case F_EXACT: o->exact = true; break;
    case F_INPUTS: o->alloc_inputs = false; break;
    case F_OUTPUTS: o->alloc_outputs = false; break;
    case F_MUTABLE: o->alloc_mutable = false; break;
    default: o->per_device = true; break;
    }
    return MP_OK;
}

void mp_options_to_args(const mp_options *o, char *buf, size_t n) {
    snprintf(buf, n, "--alignment %u%s%s%s%s%s%s%s", o->alignment,
             o->alloc_inputs ? "" : " --no-alloc-inputs", o->alloc_outputs ? "" : " --no-alloc-outputs",
             o->alloc_mutable ? "" : " --no-alloc-mutable", o->per_device ? " --per-device" : "",
             o->et_exact ? " --et-exact" : "", o->et_upstream & MP_UPSTREAM_21616 ? " --et-upstream 21616" : "",
             o->et_upstream & MP_UPSTREAM_21840 ? " --et-upstream 21840" : "");
}
