/* cmd_export.c - `memplan export`: a plan in another tool's format
 * (core/export.c), written through the one output writer. */
#include "cli.h"

#include <stdio.h>

static const char EXPORT_HELP[] =
    "usage: memplan export --format minimalloc-csv|json|tflm-offline [--buffer N] [-o FILE]\n"
    "                      GRAPH.mpg PLAN.mpp\n"
    "\n"
    "Write the plan for another tool (docs/formats.md):\n"
    "  minimalloc-csv  MiniMalloc's CSV with its solution: id,lower,upper,size,offset\n"
    "                  for the entry graph's allocations of one buffer (lifetimes\n"
    "                  end-exclusive; an in-place family is one row); memplan\n"
    "                  import-csv reads it back as the same problem\n"
    "  json            every block: buffers, devices, and per tensor its graph,\n"
    "                  op, lifetime, mem_id, offset and size\n"
    "  tflm-offline    TFLite Micro's offline planning buffer: little-endian int32\n"
    "                  [1, 1, n, offset of each tensor of the entry graph or -1]\n"
    "\n"
    "options:\n"
    "  --format F         the format (required)\n"
    "  --buffer N         minimalloc-csv: the buffer (default 1)\n"
    "  -o, --output FILE  write to FILE (default stdout; atomically)\n"
    "\n"
    "exit status: 0 written; 2 bad usage, unreadable input, or a plan the\n"
    "format cannot hold (tflm-offline: one arena, int32 offsets).\n";

typedef struct export_args {
    const char *files[2], *out, *format;
    uint64_t buffer;
} export_args;

static int parse(int argc, char **argv, export_args *ea) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan export");
    const char *arg;
    bool opt;
    int nf = 0;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) {
            if (nf == 2) return mp_usage_error(a.cmd, "too many files ('%s')", arg);
            ea->files[nf++] = arg;
        } else if (mp_args_is(&a, arg, "-h") || mp_args_is(&a, arg, "--help")) {
            fputs(EXPORT_HELP, stdout);
            return -1;
        } else if (mp_args_is(&a, arg, "--format")) {
            if (!(ea->format = mp_args_value(&a, "--format"))) return MP_EFORMAT;
            if (strcmp(ea->format, "minimalloc-csv") && strcmp(ea->format, "json") && strcmp(ea->format, "tflm-offline"))
                return mp_usage_error(a.cmd, "unknown format '%s' (minimalloc-csv, json, tflm-offline)", ea->format);
        } else if (mp_args_is(&a, arg, "--buffer")) {
            if (!mp_args_u64(&a, "--buffer", 1, UINT32_MAX, &ea->buffer)) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "-o") || mp_args_is(&a, arg, "--output")) {
            if (!(ea->out = mp_args_value(&a, "-o"))) return MP_EFORMAT;
            if (!*ea->out) return mp_usage_error(a.cmd, "empty output file name");
        } else {
            return mp_usage_error(a.cmd, "unknown option '%s'", arg);
        }
    }
    if (!ea->format) return mp_usage_error(a.cmd, "--format is required");
    if (nf != 2) return mp_usage_error(a.cmd, "need a graph file and a plan file");
    return MP_OK;
}

int mp_cmd_export(int argc, char **argv) {
    export_args ea = {{NULL, NULL}, "-", NULL, 1};
    int rc = parse(argc, argv, &ea);
    if (rc) return rc < 0 ? 0 : rc;
    const char *cmd = "memplan export";
    mp_err err;
    mp_program *prog = mp_graph_load(ea.files[0], &err);
    if (!prog) return mp_cli_fail(cmd, &err);
    mp_plan *plan = mp_plan_load(ea.files[1], prog, &err);
    if (!plan) {
        mp_program_free(prog);
        return mp_cli_fail(cmd, &err);
    }
    mp_buf b;
    mp_buf_init(&b);
    rc = mp_plan_export(prog, plan, ea.format, ea.buffer, &b, &err);
    if (rc == MP_OK) rc = mp_write_buf(ea.out, &b, ea.files, 2, &err);
    mp_buf_free(&b);
    mp_plan_free(plan);
    mp_program_free(prog);
    return rc ? mp_cli_fail(cmd, &err) : 0;
}
