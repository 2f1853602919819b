/* check.c - the differential checks the harness runs on one graph.
 *
 * For each algorithm: plan (default, repaired mode), verify the plan,
 * plan again and compare bytes, write-parse-write the plan; then compare
 * algorithms (opt never needs more bytes than greedy; both refuse the
 * graphs that break a rule, and opt plans every graph greedy plans, but it
 * may plan one that is past greedy's limits) and modes (where ExecuTorch's
 * own plan, --et-exact, is valid, the repaired mode must be identical to
 * it, unless float rounding, D9, changed ExecuTorch's sizes).  The first failure found is
 * returned; the metrics of every plan go into rows. */
#include "internal.h"
#include "harness.h"
#include "files.h"
#include "internal.h"

#include <stdio.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static char *plan_bytes(const mp_program *p, const mp_options *o, mp_plan **keep, int *code,
                        bool *limit, char *msg, size_t msgsz) {
    mp_err err;
    mp_plan *plan = mp_plan_program(p, o, &err);
    if (limit) *limit = false;
    if (!plan) {
        *code = err.code;
        if (limit) *limit = err.limit;
        snprintf(msg, msgsz, "%s", err.msg);
        return NULL;
    }
    mp_buf b;
    mp_buf_init(&b);
    mp_plan_write(plan, &b);
    *code = 0;
    if (keep) *keep = plan;
    else mp_plan_free(plan);
    return b.data;
}

void mp_check_fail(mp_check_result *r, const char *kind, const char *algo, const char *fmt, ...) {
    if (r->failed) return; /* keep the first */
    r->failed = true;
    snprintf(r->kind, sizeof r->kind, "%s", kind);
    snprintf(r->algo, sizeof r->algo, "%s", algo);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

static uint64_t count_tensors(const mp_program *p) {
    uint64_t n = 0;
    for (uint32_t g = 0; g < p->n_graphs; g++) n += p->graphs[g].n_tensors;
    return n;
}

static uint64_t count_nodes(const mp_program *p) {
    uint64_t n = 0;
    for (uint32_t g = 0; g < p->n_graphs; g++) n += p->graphs[g].n_nodes;
    return n;
}

/* The plan text parses back to the same text and verifies; its figures
 * go into the row. */
static void check_text(const mp_program *p, const char *text, const char *name, mp_check_result *r,
                       mp_algo_outcome *out) {
    mp_err err;
    mp_plan *back = mp_plan_parse(text, strlen(text), "<plan>", p, &err);
    if (!back) {
        mp_check_fail(r, "unreadable-plan", name, "the plan does not parse back: %s", err.msg);
        return;
    }
    mp_buf again;
    mp_buf_init(&again);
    mp_plan_write(back, &again);
    if (strcmp(again.data, text) != 0) mp_check_fail(r, "roundtrip", name, "write(parse(plan)) differs from the plan");
    mp_buf_free(&again);
    mp_check_verdict(p, back, name, r, out);
    mp_plan_free(back);
}

void mp_check_verdict(const mp_program *p, const mp_plan *plan, const char *name, mp_check_result *r,
                      mp_algo_outcome *out) {
    mp_err err;
    mp_verify_report vr;
    int vrc = mp_verify(p, plan, &vr, &err);
    out->total_bytes = vr.total_bytes;
    out->lower_bound = vr.lower_bound;
    out->ratio = vr.ratio;
    out->violations = vr.n_violations;
    snprintf(out->verify, sizeof out->verify, "%s", vrc == MP_OK ? "valid" : "invalid");
    if (vrc != MP_OK) {
        mp_buf b;
        mp_buf_init(&b);
        mp_verify_write_text(&vr, &b);
        mp_check_fail(r, "invalid", name, "%.900s", b.data ? b.data : "");
        mp_buf_free(&b);
    }
    /* the bound is one no valid plan beats, buffer by buffer: a valid plan
     * below it is the bound's bug */
    for (uint32_t b = 0; vrc == MP_OK && b < vr.n_buffers; b++)
        if (vr.buf_bytes[b] < vr.buf_lower[b]) {
            mp_check_fail(r, "below-bound", name, "buffer %u: %llu bytes, below its lower bound %llu", b,
                          (unsigned long long)vr.buf_bytes[b], (unsigned long long)vr.buf_lower[b]);
            break;
        }
    mp_verify_report_free(&vr);
}

/* The entry graph's buffer sizes, space separated, into the row. */
static void entry_buffers(const mp_plan *plan, mp_algo_outcome *out) {
    size_t bl = 0;
    for (uint32_t g = 0; g < plan->n_graphs; g++) {
        if (plan->graphs[g].graph != 0) continue;
        for (uint32_t i = 0; i < plan->graphs[g].n_buffers && bl + 24 < sizeof out->buffers; i++)
            bl += (size_t)snprintf(out->buffers + bl, sizeof out->buffers - bl, "%s%llu", i ? " " : "",
                                   (unsigned long long)plan->graphs[g].buffers[i]);
    }
}

/* Where ExecuTorch's plan (et_exact) is valid and not wasteful, the
 * repaired one must equal it (a wasteful one, D13, the repair improves). */
static void check_et(const mp_program *p, mp_options o, const char *text, const char *name,
                     mp_check_result *r) {
    char msg[1024];
    int code;
    mp_err err;
    o.et_exact = true;
    char *et = plan_bytes(p, &o, NULL, &code, NULL, msg, sizeof msg);
    if (et) {
        mp_plan *ep = mp_plan_parse(et, strlen(et), "<et>", p, &err);
        mp_verify_report vr;
        if (ep && mp_verify(p, ep, &vr, &err) == MP_OK && !vr.n_warnings && strcmp(et, text) != 0)
            mp_check_fail(r, "et-divergence", name, "ExecuTorch's plan (--et-exact) is valid but the repaired plan differs");
        if (ep) mp_verify_report_free(&vr);
        mp_plan_free(ep);
    }
    mp_xfree(et);
}

/* Plan with one algorithm, verify, re-plan, round-trip; fill its row.
 * compare_et: whether ExecuTorch's plan, where valid, must equal this one
 * (not where float rounding, D9, changes a size). */
static void check_algo(const mp_program *p, const mp_options *base, uint32_t algo, bool compare_et,
                       mp_check_result *r, mp_algo_outcome *out) {
    mp_options o = *base;
    o.algo = algo;
    const char *name = mp_algo_name(algo);
    char msg[1024];
    int code;
    mp_plan *plan = NULL;
    double t0 = now_ms();
    char *text = plan_bytes(p, &o, &plan, &code, &out->limit, msg, sizeof msg);
    out->plan_ms = now_ms() - t0;
    out->code = code;
    if (!text) {
        snprintf(out->verify, sizeof out->verify, "refused");
        if (code != MP_EPLAN) mp_check_fail(r, "error", name, "planning failed with code %d: %s", code, msg);
        return;
    }
    check_text(p, text, name, r, out);
    entry_buffers(plan, out);
    mp_plan_free(plan);
    char *second = plan_bytes(p, &o, NULL, &code, NULL, msg, sizeof msg);
    if (!second || strcmp(second, text) != 0) mp_check_fail(r, "nondeterministic", name, "planning twice gave different plans");
    mp_xfree(second);
    if ((mp_planner_get(algo)->caps & MP_CAP_ET_EXACT) && compare_et) check_et(p, o, text, name, r);
    mp_xfree(text);
}

/* A planner that promises never to need more than the reference: it plans
 * what the reference plans (and may plan a valid graph past the
 * reference's limits; its plan was verified), in no more bytes. */
static void check_no_worse(mp_check_result *r, const mp_algo_outcome *ref, const mp_algo_outcome *o,
                           const char *name) {
    bool beyond = ref->code && ref->limit && !o->code;
    if ((ref->code == 0) != (o->code == 0) && !beyond)
        mp_check_fail(r, "refusal-mismatch", name, "greedy %s but %s %s", ref->code ? "refuses" : "plans",
             name, o->code ? "refuses" : "plans");
    else if (!ref->code && o->total_bytes > ref->total_bytes)
        mp_check_fail(r, "opt-worse", name, "%s needs %llu bytes, greedy %llu", name,
             (unsigned long long)o->total_bytes, (unsigned long long)ref->total_bytes);
}

/* The reorder (issue 50) on every case: a valid schedule of the program
 * (verify --order), no higher peak, and opt's plan of it verifies. */
static void check_reorder(const mp_program *p, const mp_options *base, mp_check_result *r) {
    mp_err err;
    uint64_t before = 0, after = 0;
    mp_program *q = mp_program_reorder(p, base, 2, &before, &after, NULL, &err);
    if (!q) {
        if (err.code != MP_ENOMEM) mp_check_fail(r, "reorder", "reorder", "%s", err.msg);
        return;
    }
    if (mp_verify_order(p, q, &err) != MP_OK) mp_check_fail(r, "reorder", "reorder", "not a valid order: %s", err.msg);
    else if (after > before)
        mp_check_fail(r, "reorder", "reorder", "peak %llu bytes after, %llu before", (unsigned long long)after,
                      (unsigned long long)before);
    mp_options o = *base;
    o.algo = MP_ALGO_OPT;
    mp_plan *plan = mp_plan_program(q, &o, &err);
    if (plan) {
        mp_algo_outcome out;
        memset(&out, 0, sizeof out);
        mp_check_verdict(q, plan, "reorder", r, &out);
        mp_plan_free(plan);
    }
    mp_program_free(q);
}

void mp_check_graph(const mp_program *p, const mp_options *base, const uint32_t *algos,
                    uint32_t n_algos, mp_check_result *r) {
    memset(r, 0, sizeof *r);
    r->tensors = count_tensors(p);
    r->nodes = count_nodes(p);
    r->n_algos = n_algos;
    bool compare_et = !mp_ref_et_rounding_differs(p, base->alignment);
    for (uint32_t k = 0; k < n_algos; k++) {
        r->algos[k] = algos[k];
        check_algo(p, base, algos[k], compare_et, r, &r->out[k]);
    }
    const mp_algo_outcome *ref = NULL;
    for (uint32_t k = 0; k < n_algos; k++)
        if (mp_planner_get(algos[k])->caps & MP_CAP_REFERENCE) ref = &r->out[k];
    for (uint32_t k = 0; ref && k < n_algos; k++)
        if (mp_planner_get(algos[k])->caps & MP_CAP_NO_WORSE)
            check_no_worse(r, ref, &r->out[k], mp_algo_name(algos[k]));
    if (!r->failed) check_reorder(p, base, r);
}


