/* cmd_verify.c - `memplan verify`: prove a plan safe, whoever made it. */
#include "cli.h"

#include <stdio.h>

static const char VERIFY_HELP[] =
    "usage: memplan verify [--json] GRAPH.mpg PLAN.mpp\n"
    "       memplan verify [--json] MODEL.pte|MODEL.tflite\n"
    "       memplan verify --order ORIGINAL.mpg REORDERED.mpg [PLAN.mpp]\n"
    "\n"
    "Check every rule a plan must hold against its graph, independently of\n"
    "how the plan was made: completeness, sizes and alignment, bounds, no\n"
    "overlap, control flow, devices, free points, consistency.  Prints each\n"
    "violation on its own line, then a summary with the plan's total bytes,\n"
    "the lower bound and their ratio.  A compiled program (an ExecuTorch\n"
    "program or a TFLite model, known by its file identifier) is checked\n"
    "with the plan it carries (docs/artifacts.md).\n"
    "\n"
    "options:\n"
    "  --json       the same report as JSON\n"
    "  --order ORIGINAL.mpg  check first that the graph is a valid schedule of\n"
    "               ORIGINAL (memplan reorder): the same nodes, every dependency\n"
    "               kept (docs/reorder.md); then the plan, when one is given\n"
    "  -h, --help   this text\n"
    "\n"
    "exit status: 0 valid; 1 invalid; 2 bad usage or unreadable input.\n";

int mp_verify_and_print(const mp_program *prog, const mp_plan *plan, bool json,
                        FILE *out) {
    mp_verify_report r;
    mp_err err;
    int rc = mp_verify(prog, plan, &r, &err);
    if (rc != MP_OK && rc != MP_EINVALID) {
        mp_verify_report_free(&r);
        return mp_cli_fail("memplan verify", &err);
    }
    mp_buf b;
    mp_buf_init(&b);
    if (json) mp_verify_write_json(&r, &b);
    else mp_verify_write_text(&r, &b);
    fwrite(b.data, 1, b.len, out);
    fflush(out);
    mp_buf_free(&b);
    mp_verify_report_free(&r);
    return rc;
}

/* memplan verify --order: the reordered graph against the original. */
static int check_order(const char *original, const char *reordered) {
    mp_err err;
    mp_program *a = mp_graph_load(original, &err), *b = a ? mp_graph_load(reordered, &err) : NULL;
    int rc = b ? mp_verify_order(a, b, &err) : err.code;
    if (rc == MP_OK) printf("order: valid: %s is a schedule of %s\n", reordered, original);
    else if (rc == MP_EINVALID) printf("order: INVALID: %s\n", err.msg);
    else rc = mp_cli_fail("memplan verify", &err);
    fflush(stdout);
    mp_program_free(a);
    mp_program_free(b);
    return rc;
}

int mp_cmd_verify(int argc, char **argv) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan verify");
    const char *files[2] = {NULL, NULL}, *arg, *original = NULL;
    int nf = 0;
    bool json = false, opt;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) {
            if (nf == 2) return mp_usage_error(a.cmd, "too many files");
            files[nf++] = arg;
        } else if (mp_args_is(&a, arg, "-h") || mp_args_is(&a, arg, "--help")) {
            fputs(VERIFY_HELP, stdout);
            return 0;
        } else if (mp_args_is(&a, arg, "--json")) {
            if (!mp_args_flag_ok(&a, "--json")) return MP_EFORMAT;
            json = true;
        } else if (mp_args_is(&a, arg, "--order")) {
            if (!(original = mp_args_value(&a, "--order"))) return MP_EFORMAT;
        } else {
            return mp_usage_error(a.cmd, "unknown option '%s'", arg);
        }
    }
    if (original) {
        if (nf == 0) return mp_usage_error(a.cmd, "--order needs the reordered graph file");
        int orc = check_order(original, files[0]);
        if (orc != MP_OK || nf == 1) return orc;
    }
    const char *kind = nf == 1 ? mp_artifact_kind(files[0]) : NULL;
    if (kind) return mp_verify_artifact(files[0], kind, json);
    if (nf != 2) return mp_usage_error(a.cmd, "need a graph file and a plan file (or one .pte or .tflite)");
    mp_err err;
    mp_program *prog = mp_graph_load(files[0], &err);
    if (!prog) return mp_cli_fail(a.cmd, &err);
    mp_plan *plan = mp_plan_load(files[1], prog, &err);
    if (!plan) {
        mp_program_free(prog);
        return mp_cli_fail(a.cmd, &err);
    }
    int rc = mp_verify_and_print(prog, plan, json, stdout);
    mp_plan_free(plan);
    mp_program_free(prog);
    return rc;
}
