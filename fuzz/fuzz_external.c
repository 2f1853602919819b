/* fuzz_external.c - target "external": the reader of an external
 * planner's output (harness/external.c, mp_external_verdict), the
 * harness's judge of a process it does not trust (issue 45).
 *
 * The input is the planner's exit (one byte: exit code, a signal, or one
 * of the runner's own outcomes: timeout, over the cap, not started), then
 * its output, any bytes, against the fixed program.  The verdict must be:
 *   - one of timeout, invalid, valid, refused, crash, and the runner's
 *     outcomes exactly their verdicts (timeout; over the cap: invalid);
 *   - exit 3: refused, never a failure; exit 0: valid or invalid, and
 *     valid exactly when `memplan verify` accepts the same bytes (parsed
 *     whole: a NUL byte is no end of the plan) with no violation; any
 *     other exit or a signal: crash;
 *   - a failure of the case (r.failed) for every verdict but valid and
 *     refused, named after the planner. */
#include "fuzz.h"

#include <sys/wait.h>

/* What `memplan verify` says of the same bytes: valid or not. */
static bool verify_says_valid(const mp_program *p, const char *text, size_t len) {
    mp_err err;
    mp_plan *plan = mp_plan_parse(text, len, "<out>", p, &err);
    if (!plan) return false;
    mp_verify_report rep;
    int rc = mp_verify(p, plan, &rep, &err);
    bool valid = rc == MP_OK && rep.n_violations == 0;
    mp_verify_report_free(&rep);
    mp_plan_free(plan);
    return valid;
}

/* The exit the first byte stands for (a wait status, or MP_EXTERNAL_*). */
static int status_of(unsigned b) {
    if (b < 8) return b % 2 ? MP_EXTERNAL_TIMEOUT : MP_EXTERNAL_TOO_LONG;
    if (b < 12) return MP_EXTERNAL_FAILED;
    if (b < 24) return (int)(b % 12 + 1) & 0x7f; /* a signal: WIFSIGNALED */
    if (b < 160) return 0;                        /* exit 0 most of the time */
    if (b < 200) return 3 << 8;
    return (int)((b - 200) & 0xff) << 8; /* any exit code */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!size) return 0;
    const mp_program *p = fuzz_fixed_program();
    int st = status_of(data[0]);
    const char *out = (const char *)data + 1;
    size_t len = size - 1, graph_len = 1 + data[0] % 64; /* a tiny graph: the cap is 8x + 64 KiB */
    mp_check_result r;
    memset(&r, 0, sizeof r);
    mp_algo_outcome o;
    mp_external_verdict(p, graph_len, out, len, st, 1000, "ext", &r, &o);
    FUZZ_ASSERT(strcmp(o.name, "ext") == 0, "outcome named '%s'", o.name);
    const char *v = o.verify;
    bool known = !strcmp(v, "timeout") || !strcmp(v, "invalid") || !strcmp(v, "valid") || !strcmp(v, "refused") ||
                 !strcmp(v, "crash");
    FUZZ_ASSERT(known, "unknown verdict '%s'", v);
    FUZZ_ASSERT(r.failed == (strcmp(v, "valid") && strcmp(v, "refused")), "verdict %s, failed %d", v, r.failed);
    FUZZ_ASSERT(!r.failed || strcmp(r.algo, "ext") == 0, "failure named '%s'", r.algo);
    bool over = len > 8 * graph_len + 65536;
    if (st == MP_EXTERNAL_TIMEOUT) FUZZ_ASSERT(!strcmp(v, "timeout"), "a timeout judged %s", v);
    else if (st == MP_EXTERNAL_TOO_LONG || (st >= 0 && over)) FUZZ_ASSERT(!strcmp(v, "invalid"), "over the cap: %s", v);
    else if (st == MP_EXTERNAL_FAILED) FUZZ_ASSERT(!strcmp(v, "crash"), "not started: %s", v);
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 3) FUZZ_ASSERT(!strcmp(v, "refused"), "exit 3 judged %s", v);
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        bool valid = verify_says_valid(p, out, len);
        FUZZ_ASSERT(valid == !strcmp(v, "valid"), "exit 0: judged %s, memplan verify says %s", v,
                    valid ? "valid" : "invalid");
        FUZZ_ASSERT(!memchr(out, 0, len) || strcmp(v, "valid"), "a plan with a NUL byte judged valid");
    } else FUZZ_ASSERT(!strcmp(v, "crash"), "status %#x judged %s", (unsigned)st, v);
    return 0;
}
