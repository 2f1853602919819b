/* cmd_artifact.c - compiled programs, ExecuTorch .pte and TFLite .tflite
 * (issue 49, docs/artifacts.md): `memplan import-pte`, `import-tflite`,
 * `replan`, and `memplan verify MODEL`.  The FlatBuffers work is
 * python/memplan's (readers flatc generates from the upstream schemas,
 * behind FlatBuffers' own verifier, memplan-fbverify): this runs it with
 * Debian's Python and this build's package, and verifies what it imports
 * with the verifier every plan goes through. */
#define _GNU_SOURCE /* mkdtemp */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *mp_artifact_kind(const char *path) {
    FILE *f = fopen(path, "rb");
    char head[8];
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f) fclose(f);
    if (got == 8 && memcmp(head + 4, "ET12", 4) == 0) return "pte";
    if (got == 8 && memcmp(head + 4, "TFL3", 4) == 0) return "tflite";
    return NULL;
}

/* The python folder of the tree this command was built in (build/memplan
 * or build/test/memplan: one or two levels up), put first on PYTHONPATH;
 * an installed memplan finds its package where Python looks anyway. */
static void python_path(void) {
    char exe[PATH_MAX], dir[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = 0;
    static const char *const UP[] = {"/..", "/../.."};
    for (size_t i = 0; i < sizeof UP / sizeof *UP; i++) {
        const char *up = UP[i];
        struct stat st;
        snprintf(dir, sizeof dir, "%s%s/python/memplan/__init__.py", exe, up);
        if (stat(dir, &st) != 0) continue;
        snprintf(dir, sizeof dir, "%s%s/python", exe, up);
        const char *old = getenv("PYTHONPATH");
        char *v = malloc(strlen(dir) + (old ? strlen(old) : 0) + 2);
        if (!v) return;
        sprintf(v, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
        setenv("PYTHONPATH", v, 1);
        free(v);
        return;
    }
}

/* python3 -m memplan ARGS...: its exit status (its messages are its own),
 * 4 when it could not be run. */
static int run_python(char **args, int n, const char *as) {
    const char *py = getenv("MEMPLAN_PYTHON");
    if (!py || !*py) py = "/usr/bin/python3"; /* Debian's: torch, flatbuffers (README) */
    char **argv = calloc((size_t)n + 4, sizeof *argv);
    if (!argv) return MP_EIO;
    argv[0] = (char *)py, argv[1] = "-m", argv[2] = "memplan";
    for (int i = 0; i < n; i++) argv[3 + i] = args[i];
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        python_path();
        if (as) setenv("MEMPLAN_COMMAND", as, 1); /* its messages name the command the user ran */
        execv(py, argv);
        fprintf(stderr, "memplan: cannot run %s: %s (set MEMPLAN_PYTHON)\n", py, strerror(errno));
        _exit(MP_EIO);
    }
    free(argv);
    int st = 0;
    if (pid < 0) return MP_EIO;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(st) ? WEXITSTATUS(st) : MP_EIO;
}

int mp_cmd_artifact(int argc, char **argv) {
    return run_python(argv, argc, NULL);
}

/* memplan verify MODEL: the program and the plan the file carries,
 * imported into a private folder, verified as a graph and a plan are. */
int mp_verify_artifact(const char *path, const char *kind, bool json) {
    char dir[] = "/tmp/memplan-verify-XXXXXX", graph[64], plan[64], cmd[32];
    if (!mkdtemp(dir)) {
        fprintf(stderr, "memplan verify: cannot make a temporary folder: %s\n", strerror(errno));
        return MP_EIO;
    }
    snprintf(graph, sizeof graph, "%s/model.mpg", dir);
    snprintf(plan, sizeof plan, "%s/model.mpp", dir);
    snprintf(cmd, sizeof cmd, "import-%s", kind);
    char *args[] = {cmd, (char *)path, "-o", graph, "--plan", plan};
    int rc = run_python(args, 6, "verify");
    if (rc == 0) {
        mp_err err;
        mp_program *prog = mp_graph_load(graph, &err);
        mp_plan *p = prog ? mp_plan_load(plan, prog, &err) : NULL;
        rc = p ? mp_verify_and_print(prog, p, json, stdout) : mp_cli_fail("memplan verify", &err);
        mp_plan_free(p);
        mp_program_free(prog);
    }
    unlink(graph);
    unlink(plan);
    rmdir(dir);
    return rc;
}
