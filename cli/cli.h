/* cli.h - the memplan command line: one function per subcommand, and the
 * small argument reader they share. */
#ifndef MP_CLI_H
#define MP_CLI_H

#include "internal.h"
#include "files.h"
#include "metrics.h"
#include "harness.h"
#include "pictures.h"
#include "api.h"

#include <stdio.h>

/* Argument reader: walks argv; options may be "--key value" or
 * "--key=value"; "--" ends options. */
typedef struct mp_args {
    int argc, i;
    char **argv;
    const char *cmd;  /* "memplan plan" */
    const char *val;  /* value of the last option taken with a value */
    char *eq;         /* inline "=value" of the current option, if any */
    bool done;        /* "--" seen */
} mp_args;

void mp_args_init(mp_args *a, int argc, char **argv, const char *cmd);
/* Next argument: returns it, sets *is_opt.  NULL at the end. */
const char *mp_args_next(mp_args *a, bool *is_opt);
/* Option name match ("--alignment" against "--alignment=16" too). */
bool mp_args_is(mp_args *a, const char *arg, const char *name);
/* Value of the current option; prints a usage error and returns NULL. */
const char *mp_args_value(mp_args *a, const char *name);
bool mp_args_u64(mp_args *a, const char *name, uint64_t lo, uint64_t hi,
                 uint64_t *out);
/* Reject an inline "=value" given to a flag that takes none. */
bool mp_args_flag_ok(mp_args *a, const char *name);
int mp_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The planner table, one line each, for --help. */
void mp_cli_print_planners(FILE *f);

/* Map a library error code to the exit status and print the message. */
int mp_cli_fail(const char *cmd, const mp_err *err);
/* A monotonic clock in milliseconds (benchmarks). */
double mp_cli_now_ms(void);
/* The allocator tuned for a batch process (tune.c); may start the command
 * again, with the same arguments, before it returns. */
void mp_cli_tune_process(char **argv);

int mp_cmd_plan(int argc, char **argv);
int mp_cmd_verify(int argc, char **argv);
/* cmd_reorder.c: memplan reorder; and the reorder of plan --reorder, which
 * frees prog and returns the reordered program (a note on stderr), or NULL */
int mp_cmd_reorder(int argc, char **argv);
mp_program *mp_cli_reorder(mp_program *prog, const mp_options *o, uint32_t effort, const char *name, mp_err *err);
/* cmd_plan.c: a planning option of harness/options.c's table, with its value */
bool mp_cli_planning_option(mp_args *a, const mp_option_flag *f, mp_options *o);
/* cmd_artifact.c: .pte and .tflite through python/memplan */
const char *mp_artifact_kind(const char *path); /* "pte", "tflite" or NULL */
int mp_cmd_artifact(int argc, char **argv);     /* argv[0]: import-pte, import-tflite, replan */
int mp_verify_artifact(const char *path, const char *kind, bool json);
int mp_cmd_gen(int argc, char **argv);
int mp_cmd_import_csv(int argc, char **argv);
int mp_cmd_harness(int argc, char **argv);
int mp_cmd_report(int argc, char **argv);
int mp_cmd_gate(int argc, char **argv);
int mp_cmd_merge(int argc, char **argv);
int mp_cmd_prune(int argc, char **argv);
/* bench --history: the metrics store on RUNS runs of CASES cases (cmd_bench_history.c) */
int mp_bench_history(uint64_t runs, uint64_t cases, uint64_t keep);
/* memplan bench --map: the memory map's table (cmd_bench_map.c). */
int mp_bench_map(uint64_t max_tensors);
/* memplan bench --stages: gen, plan and verify as processes, their time
 * and peak memory per size, recorded unless db is "none"
 * (cmd_bench_stages.c).  Non-zero when a stage failed. */
int mp_bench_stages(uint64_t max_tensors, uint64_t repeat, const char *db);
int mp_cmd_bench(int argc, char **argv);
/* cmd_viz.c: pictures of a plan */
int mp_cmd_trace(int argc, char **argv);
int mp_cmd_svg(int argc, char **argv);
int mp_cmd_export(int argc, char **argv);
/* cmd_campaign.c: record a fuzzing campaign in the metrics store */
int mp_cmd_record_campaign(int argc, char **argv);
int mp_parse_algos(const char *list, uint32_t *algos, uint32_t *n);
/* Verify and print the report (text or JSON); returns 0, 1 or 2. */
int mp_verify_and_print(const mp_program *prog, const mp_plan *plan, bool json,
                        FILE *out);

/* YYYY-MM-DD, optionally THH:MM[:SS] (or a space for the T) and Z. */
bool mp_args_is_time(const char *s);

#endif
