/* options.c - planning options as a handle (memplan.h, 2.0): made with
 * the one public default (planner opt), set and read by name from text, so
 * that options can be added without changing what a caller links against.
 * The names are the plan file's options line's (core/plan_write.c). */
#include "internal.h"

#include <stdio.h>

mp_options *mp_options_new(mp_err *err) {
    mp_err_clear(err);
    mp_options *o = mp_try_realloc(NULL, sizeof *o);
    if (!o) {
        mp_err_set(err, MP_ENOMEM, "out of memory");
        return NULL;
    }
    mp_options_default(o);
    o->algo = MP_ALGO_OPT;
    return o;
}

void mp_options_free(mp_options *o) { mp_xfree(o); }

static bool boolean(const char *s, bool *v) {
    if (!strcmp(s, "1") || !strcmp(s, "true")) return *v = true, true;
    if (!strcmp(s, "0") || !strcmp(s, "false")) return *v = false, true;
    return false;
}

static int bad(mp_err *err, const char *name, const char *value, const char *want) {
    return mp_err_set(err, MP_EFORMAT, "option %s: '%s' is not %s", name, value, want);
}

/* The options that take a number: where each lives and its range. */
static int set_number(mp_options *o, const char *name, const char *value, mp_err *err) {
    uint64_t v;
    if (!strcmp(name, "alignment")) {
        if (!mp_decimal_in(value, 1, MP_MAX_ALIGNMENT, &v)) return bad(err, name, value, "a number in 1..2^30");
        o->alignment = (uint32_t)v;
    } else if (!strcmp(name, "budget_ms") || !strcmp(name, "exact_ms")) {
        if (!mp_decimal_in(value, !strcmp(name, "exact_ms"), 3600000, &v)) return bad(err, name, value, "a number of ms up to 3600000");
        *(!strcmp(name, "budget_ms") ? &o->budget_ms : &o->exact_ms) = (uint32_t)v;
    } else if (!strcmp(name, "et_upstream")) {
        if (!mp_decimal_in(value, 21494, 21840, &v) || !mp_upstream_bit(v))
            return bad(err, name, value, "an ExecuTorch PR memplan applies (21494, 21616, 21818, 21821, 21840)");
        o->et_exact = true;
        o->et_upstream |= mp_upstream_bit(v);
    } else {
        return mp_err_set(err, MP_EFORMAT, "no option '%s'", name);
    }
    return MP_OK;
}

static bool *switch_of(mp_options *o, const char *name) {
    if (!strcmp(name, "alloc_inputs")) return &o->alloc_inputs;
    if (!strcmp(name, "alloc_outputs")) return &o->alloc_outputs;
    if (!strcmp(name, "alloc_mutable")) return &o->alloc_mutable;
    if (!strcmp(name, "per_device")) return &o->per_device;
    if (!strcmp(name, "et_exact")) return &o->et_exact;
    if (!strcmp(name, "exact")) return &o->exact;
    return NULL;
}

int mp_options_set(mp_options *o, const char *name, const char *value, mp_err *err) {
    mp_err_clear(err);
    if (!o || !name || !value) return mp_err_set(err, MP_EFORMAT, "mp_options_set: a NULL argument");
    bool *sw = switch_of(o, name);
    if (sw) return boolean(value, sw) ? MP_OK : bad(err, name, value, "1, 0, true or false");
    if (!strcmp(name, "algo")) {
        int a = mp_algo_parse(value);
        if (a < 0) return bad(err, name, value, "a planner of the table");
        o->algo = (uint32_t)a;
        return MP_OK;
    }
    if (!strcmp(name, "banks")) {
        mp_banks b;
        int rc = mp_banks_parse(value, &b, err);
        if (rc == MP_OK) o->banks = b;
        return rc;
    }
    if (!strcmp(name, "spill_order")) {
        if (strcmp(value, "value") && strcmp(value, "program")) return bad(err, name, value, "value or program");
        o->spill_order = strcmp(value, "program") ? MP_SPILL_VALUE : MP_SPILL_PROGRAM;
        return MP_OK;
    }
    return set_number(o, name, value, err);
}

int mp_options_get(const mp_options *o, const char *name, mp_buf *out, mp_err *err) {
    mp_err_clear(err);
    if (!o || !name || !out) return mp_err_set(err, MP_EFORMAT, "mp_options_get: a NULL argument");
    bool *sw = switch_of((mp_options *)o, name); /* read only */
    if (sw) mp_buf_puts(out, *sw ? "1" : "0");
    else if (!strcmp(name, "algo")) mp_buf_puts(out, mp_algo_name(o->algo));
    else if (!strcmp(name, "alignment")) mp_buf_u64(out, o->alignment);
    else if (!strcmp(name, "budget_ms")) mp_buf_u64(out, o->budget_ms);
    else if (!strcmp(name, "exact_ms")) mp_buf_u64(out, o->exact_ms);
    else if (!strcmp(name, "spill_order")) mp_buf_puts(out, o->spill_order == MP_SPILL_PROGRAM ? "program" : "value");
    else if (!strcmp(name, "banks")) mp_banks_write(&o->banks, ',', '=', out);
    else if (!strcmp(name, "et_upstream"))
        mp_upstream_write(o->et_upstream, "", ",", out);
    else return mp_err_set(err, MP_EFORMAT, "no option '%s'", name);
    return out->failed ? mp_err_set(err, MP_ENOMEM, "out of memory") : MP_OK;
}
