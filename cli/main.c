/* main.c - the memplan command: dispatch to a subcommand. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>

static const char MAIN_HELP[] =
    "usage: memplan COMMAND [options] ...\n"
    "\n"
    "memplan plans, checks and measures the static memory layout of tensor\n"
    "programs (ExecuTorch's memory planning, reproduced and repaired).\n"
    "\n"
    "commands:\n"
    "  plan      plan a graph file (.mpg) and write the plan (.mpp)\n"
    "  verify    check a plan against its graph, whoever made it\n"
    "  gen       write a random, valid graph file\n"
    "  import-csv  a MiniMalloc-style CSV allocation problem as a graph file\n"
    "  import-pte  an ExecuTorch program (.pte) as a graph file, and its plan\n"
    "  import-tflite  a TFLite model (.tflite) as a graph file, and its plan\n"
    "  replan    a .pte or .tflite again, with memplan's plan written into it\n"
    "  reorder   a graph in an operator order of lower peak live bytes\n"
    "  harness   differential checks on random graphs, metrics into SQLite\n"
    "  report    the metrics history: quality over time, worst graphs, changes\n"
    "  gate      compare the latest harness run with a committed baseline\n"
    "  merge     the shards of a harness run (--shard K/N) as one run\n"
    "  prune     drop old runs' per-case rows, keep their summaries\n"
    "  bench     plan quality, time and memory of every algorithm side by side\n"
    "  trace     a plan as a Chrome trace / Perfetto JSON file\n"
    "  svg       a plan as a standalone SVG picture\n"
    "  export    a plan for other tools: MiniMalloc CSV, JSON, TFLite Micro\n"
    "  record-campaign  record a fuzzing campaign in the metrics store\n"
    "\n"
    "'memplan COMMAND --help' documents each command.  memplan --version\n"
    "prints the version.\n"
    "\n"
    "exit status (every command):\n"
    "  0  success\n"
    "  1  a check failed (a plan is invalid, the gate found regressions)\n"
    "  2  bad usage or a malformed input (FILE:LINE: what is wrong)\n"
    "  3  a graph that cannot be planned\n"
    "  4  an I/O or database error (permission, disk full, locked), or out\n"
    "     of memory\n"
    "\n"
    "An output file (-o) is written whole or not at all: through a temporary\n"
    "and a rename (a symbolic link's target is written, the link stays; a\n"
    "device or FIFO such as /dev/null is written in place; '-' is stdout).\n"
    "An output that is one of the command's inputs is refused.\n";

/* A command stopped while it writes leaves no temporary behind: the
 * handler removes them, then the command dies of the signal as it would
 * have (the harness installs its own while cases run, and restores this). */
static void on_stop(int sig) {
    mp_out_remove_temporaries();
    mp_stop_die(sig);
}

int main(int argc, char **argv) {
    mp_cli_tune_process(argv); /* first: it may start the command again */
    mp_stop_catch(on_stop, NULL); /* core/signals.c: an ignored signal stays ignored */
    /* a file past the size limit (ulimit -f) is a write error (EFBIG) that
     * the writer cleans up after, not a signal that kills it mid-write */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        fputs(MAIN_HELP, stderr);
        return MP_EFORMAT;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        fputs(MAIN_HELP, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("memplan %s\n", MEMPLAN_VERSION);
        return 0;
    }
    if (strcmp(cmd, "plan") == 0) return mp_cmd_plan(argc - 1, argv + 1);
    if (strcmp(cmd, "verify") == 0) return mp_cmd_verify(argc - 1, argv + 1);
    if (strcmp(cmd, "gen") == 0) return mp_cmd_gen(argc - 1, argv + 1);
    if (strcmp(cmd, "import-pte") == 0 || strcmp(cmd, "import-tflite") == 0 || strcmp(cmd, "replan") == 0)
        return mp_cmd_artifact(argc - 1, argv + 1);
    if (strcmp(cmd, "reorder") == 0) return mp_cmd_reorder(argc - 1, argv + 1);
    if (strcmp(cmd, "import-csv") == 0) return mp_cmd_import_csv(argc - 1, argv + 1);
    if (strcmp(cmd, "harness") == 0) return mp_cmd_harness(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0) return mp_cmd_report(argc - 1, argv + 1);
    if (strcmp(cmd, "gate") == 0) return mp_cmd_gate(argc - 1, argv + 1);
    if (strcmp(cmd, "merge") == 0) return mp_cmd_merge(argc - 1, argv + 1);
    if (strcmp(cmd, "prune") == 0) return mp_cmd_prune(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0) return mp_cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "trace") == 0) return mp_cmd_trace(argc - 1, argv + 1);
    if (strcmp(cmd, "svg") == 0) return mp_cmd_svg(argc - 1, argv + 1);
    if (strcmp(cmd, "export") == 0) return mp_cmd_export(argc - 1, argv + 1);
    if (strcmp(cmd, "record-campaign") == 0) return mp_cmd_record_campaign(argc - 1, argv + 1);
    fprintf(stderr, "memplan: unknown command '%s' (see 'memplan --help')\n", cmd);
    return MP_EFORMAT;
}
