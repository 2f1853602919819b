/* report.c - the verifier's report as a handle (memplan.h, 2.0):
 * mp_verify_plan makes one, the accessors read it, mp_report_free frees
 * it.  The report is verify/'s mp_verify_report; only its address is
 * handed out. */
#include "internal.h"

mp_report *mp_verify_plan(const mp_program *prog, const mp_plan *plan, mp_err *err) {
    mp_err_clear(err);
    if (!prog || !plan) {
        mp_err_set(err, MP_EFORMAT, "mp_verify_plan: a NULL program or plan");
        return NULL;
    }
    mp_verify_report *r = mp_try_realloc(NULL, sizeof *r);
    if (!r) {
        mp_err_set(err, MP_ENOMEM, "out of memory");
        return NULL;
    }
    int rc = mp_verify(prog, plan, r, err);
    if (rc != MP_OK && rc != MP_EINVALID) {
        mp_verify_report_free(r);
        mp_xfree(r);
        return NULL;
    }
    mp_err_clear(err); /* an invalid plan is a report, not an error */
    return r;
}

void mp_report_free(mp_report *r) {
    if (!r) return;
    mp_verify_report_free(r);
    mp_xfree(r);
}

bool mp_report_valid(const mp_report *r) { return r && r->n_violations == 0; }

uint64_t mp_report_get(const mp_report *r, int field) {
    if (!r) return 0;
    switch (field) {
    case MP_REPORT_VIOLATIONS: return r->n_violations;
    case MP_REPORT_WARNINGS: return r->n_warnings;
    case MP_REPORT_WASTED_BYTES: return r->wasted_bytes;
    case MP_REPORT_TOTAL_BYTES: return r->total_bytes;
    case MP_REPORT_LOWER_BOUND: return r->lower_bound;
    case MP_REPORT_BUFFERS: return r->n_buffers;
    default: return 0;
    }
}

double mp_report_ratio(const mp_report *r) { return r ? r->ratio : 0; }

uint64_t mp_report_rule_count(const mp_report *r, uint32_t rule) {
    return r && rule < MP_N_RULES ? r->per_rule[rule] : 0;
}

int mp_report_buffer(const mp_report *r, uint32_t i, uint64_t *bytes, uint64_t *lower, int64_t *peak_node) {
    if (!r || i >= r->n_buffers) return MP_EFORMAT;
    if (bytes) *bytes = r->buf_bytes[i];
    if (lower) *lower = r->buf_lower[i];
    if (peak_node) *peak_node = r->buf_peak ? r->buf_peak[i] : -1;
    return MP_OK;
}

static const mp_violation *finding_at(const mp_report *r, bool warning, uint32_t i) {
    if (!r) return NULL;
    if (warning) return i < r->n_w ? &r->w[i] : NULL;
    return i < r->n_v ? &r->v[i] : NULL;
}

uint32_t mp_report_finding_count(const mp_report *r, bool warning) {
    return !r ? 0 : warning ? r->n_w : r->n_v;
}

const char *mp_report_finding(const mp_report *r, bool warning, uint32_t i, int field) {
    const mp_violation *v = finding_at(r, warning, i);
    if (!v) return NULL;
    switch (field) {
    case MP_FINDING_GRAPH: return v->graph;
    case MP_FINDING_KIND: return v->kind;
    case MP_FINDING_MESSAGE: return v->msg;
    case MP_FINDING_TENSOR0: return v->tensors[0];
    case MP_FINDING_TENSOR1: return v->tensors[1];
    default: return NULL;
    }
}

uint32_t mp_report_finding_rule(const mp_report *r, bool warning, uint32_t i) {
    const mp_violation *v = finding_at(r, warning, i);
    return v ? v->rule : 0;
}

void mp_report_write_text(const mp_report *r, mp_buf *out) {
    if (r && out) mp_verify_write_text(r, out);
}

void mp_report_write_json(const mp_report *r, mp_buf *out) {
    if (r && out) mp_verify_write_json(r, out);
}
