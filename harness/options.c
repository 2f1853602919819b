/* options.c - the planning options as command-line flags: one table that
 * `memplan plan` reads its flags with, that the harness writes its
 * reproducers' flags from, and that the fuzz targets read a seed's
 * "# options:" line with.  Flags without a value set or clear a switch;
 * the others take a number in a range. */
#include "internal.h"
#include "harness.h"
#include "files.h"


enum field { F_ALIGNMENT, F_BUDGET, F_EXACT_MS, F_ET, F_EXACT, F_INPUTS, F_OUTPUTS, F_MUTABLE, F_PER_DEVICE,
             F_UPSTREAM, F_BANKS, F_SPILL };

static const mp_option_flag FLAGS[] = {
    {"--alignment", true, 1, MP_MAX_ALIGNMENT, F_ALIGNMENT},
    {"--budget-ms", true, 0, 3600000, F_BUDGET},
    {"--exact-ms", true, 1, 3600000, F_EXACT_MS},
    {"--et-exact", false, 0, 0, F_ET},
    {"--et-upstream", true, 21494, 21840, F_UPSTREAM}, /* the PRs: core/upstream.c */
    {"--exact", false, 0, 0, F_EXACT},
    {"--no-alloc-inputs", false, 0, 0, F_INPUTS},
    {"--no-alloc-outputs", false, 0, 0, F_OUTPUTS},
    {"--no-alloc-mutable", false, 0, 0, F_MUTABLE},
    {"--per-device", false, 0, 0, F_PER_DEVICE},
    /* text values (lo > hi): a memory map, a spill order */
    {"--banks", true, 1, 0, F_BANKS},
    {"--spill-order", true, 1, 0, F_SPILL},
};

const mp_option_flag *mp_option_find(const char *name, size_t len) {
    for (size_t i = 0; i < sizeof FLAGS / sizeof *FLAGS; i++)
        if (strlen(FLAGS[i].name) == len && !memcmp(FLAGS[i].name, name, len)) return &FLAGS[i];
    return NULL;
}

/* --banks SPEC, --spill-order value|program. */
static int text_option(mp_options *o, const mp_option_flag *f, const char *value, mp_err *err) {
    if (!value) return mp_err_set(err, MP_EFORMAT, "%s wants a value", f->name);
    if (f->field == F_BANKS) return mp_banks_parse(value, &o->banks, err);
    if (strcmp(value, "value") && strcmp(value, "program"))
        return mp_err_set(err, MP_EFORMAT, "--spill-order wants value or program, not '%s'", value);
    o->spill_order = strcmp(value, "program") ? MP_SPILL_VALUE : MP_SPILL_PROGRAM;
    return MP_OK;
}

int mp_option_set(mp_options *o, const mp_option_flag *f, const char *value, mp_err *err) {
    uint64_t v = 0;
    if (f->field == F_BANKS || f->field == F_SPILL) return text_option(o, f, value, err);
    if (f->takes_value && !mp_decimal_in(value, f->lo, f->hi, &v))
        return mp_err_set(err, MP_EFORMAT, "%s wants a number in %llu..%llu, not '%s'", f->name,
                          (unsigned long long)f->lo, (unsigned long long)f->hi, value ? value : "");
    switch (f->field) {
    case F_ALIGNMENT: o->alignment = (uint32_t)v; break;
    case F_BUDGET: o->budget_ms = (uint32_t)v; break;
    case F_EXACT_MS: o->exact_ms = (uint32_t)v; break;
    case F_ET: o->et_exact = true; break;
    case F_UPSTREAM: /* implies --et-exact */
        if (!mp_upstream_bit(v))
            return mp_err_set(err, MP_EFORMAT, "--et-upstream: no fix of ExecuTorch PR #%llu (21494, 21616, 21818, 21821, 21840)",
                              (unsigned long long)v);
        o->et_exact = true;
        o->et_upstream |= mp_upstream_bit(v);
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
    mp_buf up;
    mp_buf_init(&up);
    mp_upstream_write(o->et_upstream, " --et-upstream ", " --et-upstream ", &up);
    int k = snprintf(buf, n, "--alignment %u%s%s%s%s%s%s%s", o->alignment,
                     o->alloc_inputs ? "" : " --no-alloc-inputs", o->alloc_outputs ? "" : " --no-alloc-outputs",
                     o->alloc_mutable ? "" : " --no-alloc-mutable", o->per_device ? " --per-device" : "",
                     o->et_exact ? " --et-exact" : "", up.data && !up.failed ? up.data : "",
                     o->spill_order == MP_SPILL_PROGRAM ? " --spill-order program" : "");
    mp_buf_free(&up);
    if (!o->banks.n || k < 0 || (size_t)k + 9 >= n) return;
    mp_buf b;
    mp_buf_init(&b);
    mp_banks_write(&o->banks, ',', '=', &b);
    snprintf(buf + k, n - (size_t)k, " --banks %s", b.data ? b.data : "");
    mp_buf_free(&b);
}
