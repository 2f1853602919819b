/* fuzz_verify.c - target "verify": the verifier on arbitrary plan files.
 *
 * The input is a graph file followed by a plan file (cat G.mpg P.mpp): it
 * splits at the first line that starts with "memplan-plan".  An input that
 * is only a plan file is checked against a fixed program.  Inputs whose
 * graph or plan does not parse are uninteresting here (targets "parse" and
 * "planfile" fuzz the parsers).
 *
 * The verifier must never crash, must return MP_OK exactly when it found
 * no violation, and its report must add up.  On small inputs an
 * independent brute-force checker (brute.c) judges the same plan: every
 * rule it finds broken, the verifier must report too (it may report more),
 * so a plan the verifier accepts breaks no rule.  With MEMPLAN_FUZZ_STRICT
 * set in the environment the converse is checked as well: every rule the
 * verifier reports, brute force finds.  MEMPLAN_FUZZ_PRINT prints, per
 * input, the verifier's and brute force's counts per rule. */
#include "brute.h"
#include "fuzz.h"
#include "internal.h"

#include <string.h>


static bool strict(void) {
    static int s = -1;
    if (s < 0) s = getenv("MEMPLAN_FUZZ_STRICT") != NULL;
    return s;
}

/* Offset of the plan part: the first line starting with "memplan-plan". */
static size_t split_at(const uint8_t *d, size_t n) {
    static const char key[] = "memplan-plan";
    const size_t k = sizeof key - 1;
    for (size_t i = 0; i + k <= n; i++) {
        if ((i == 0 || d[i - 1] == '\n') && memcmp(d + i, key, k) == 0) return i;
        const uint8_t *nl = memchr(d + i, '\n', n - i);
        if (!nl) break;
        i = (size_t)(nl - d);
    }
    return n;
}

static void check_report(const mp_verify_report *r, int rc) {
    uint64_t sum = 0;
    for (uint32_t k = 0; k < MP_N_RULES; k++) sum += r->per_rule[k];
    FUZZ_ASSERT(r->per_rule[0] == 0, "violations of rule 0");
    FUZZ_ASSERT(sum == r->n_violations, "per-rule counts add to %llu, not %llu",
                (unsigned long long)sum, (unsigned long long)r->n_violations);
    FUZZ_ASSERT(r->n_v == (r->n_violations < MP_VERIFY_DETAIL ? r->n_violations : MP_VERIFY_DETAIL),
                "%u details for %llu violations", r->n_v, (unsigned long long)r->n_violations);
    FUZZ_ASSERT((rc == MP_OK) == (r->n_violations == 0), "rc %d with %llu violations", rc,
                (unsigned long long)r->n_violations);
    for (uint32_t i = 0; i < r->n_v; i++)
        FUZZ_ASSERT(r->v[i].rule >= 1 && r->v[i].rule < MP_N_RULES && r->v[i].msg && r->v[i].kind &&
                        r->v[i].graph,
                    "malformed violation %u", i);
}

static void judge(const mp_program *prog, const mp_plan *plan) {
    mp_verify_report r;
    mp_err err;
    int rc = mp_verify(prog, plan, &r, &err);
    FUZZ_ASSERT(rc == MP_OK || rc == MP_EINVALID, "verifier failed with code %d: %s", rc, err.msg);
    check_report(&r, rc);
    mp_buf text;
    mp_buf_init(&text);
    mp_verify_write_text(&r, &text);
    mp_verify_write_json(&r, &text);
    bf_result bf;
    bool checked = bf_check(prog, plan, &bf);
    if (getenv("MEMPLAN_FUZZ_PRINT")) { /* triage: what each side found */
        printf("verify: rc=%d violations=%llu brute-force=%s", rc,
               (unsigned long long)r.n_violations, checked ? "" : "skipped (too large)");
        for (uint32_t k = 1; checked && k < MP_N_RULES; k++)
            printf(" %s=%llu/%llu", mp_rule_name(k), (unsigned long long)r.per_rule[k],
                   (unsigned long long)bf.found[k]);
        printf("\n");
    }
    if (checked) {
        if (bf.wasteful != r.n_warnings)
            fuzz_fail("verify: brute force finds %llu wasteful allocation(s), the verifier warns of %llu\n"
                      "--- verifier:\n%.*s", (unsigned long long)bf.wasteful, (unsigned long long)r.n_warnings,
                      (int)(text.len > 6000 ? 6000 : text.len), text.data);
        for (uint32_t k = 1; k < MP_N_RULES; k++) {
            if (bf.found[k] && !r.per_rule[k])
                fuzz_fail("verify: brute force finds %llu violation(s) of rule %u (%s) - first: "
                          "%s - but the verifier reports none%s\n--- verifier:\n%.*s",
                          (unsigned long long)bf.found[k], k, mp_rule_name(k), bf.first[k],
                          rc == MP_OK ? " and accepts the plan" : "",
                          (int)(text.len > 6000 ? 6000 : text.len), text.data);
            if (strict() && r.per_rule[k] && !bf.found[k])
                fuzz_fail("verify (strict): the verifier reports rule %u (%s), brute force does "
                          "not\n--- verifier:\n%.*s",
                          k, mp_rule_name(k), (int)(text.len > 6000 ? 6000 : text.len), text.data);
        }
    }
    mp_buf_free(&text);
    mp_verify_report_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mp_err err;
    size_t at = split_at(data, size);
    if (at == size) return 0;
    mp_program *own = NULL;
    const mp_program *prog;
    if (at == 0) {
        prog = fuzz_fixed_program();
    } else {
        own = mp_graph_parse((const char *)data, at, "<graph>", &err);
        if (!own) return 0;
        prog = own;
    }
    mp_plan *plan = mp_plan_parse((const char *)data + at, size - at, "<plan>", prog, &err);
    if (plan) judge(prog, plan);
    mp_plan_free(plan);
    mp_program_free(own);
    return 0;
}
