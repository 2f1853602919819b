/* external.c - planners outside memplan in the harness
 * (docs/external-planners.md).  One is a shell command: the harness writes
 * the case's graph to a temporary file and runs
 *     sh -c 'COMMAND "$@"' sh OPTIONS... GRAPH
 * (OPTIONS as `memplan plan` takes them: --alignment N, --no-alloc-*,
 * --per-device), reads the plan (.mpp) from its standard output, and waits
 * at most the time limit, after which the command's whole process group is
 * killed.  Exit 0: planned (the plan is verified like a built-in's); 3: it
 * refuses the graph; anything else, a signal or no exit in time: a crash
 * or a timeout, and a failure of the case. */
#define _DEFAULT_SOURCE /* mkstemps */
#include "internal.h"
#include "memplan_tools.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The child: its own process group (so a timeout kills all it started),
 * stdout to the pipe, stdin and stderr to /dev/null. */
static _Noreturn void exec_child(int out_fd, const char *cmd, const mp_options *o, const char *graph) {
    setpgid(0, 0);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 2);
    dup2(out_fd, 1);
    char args[256], script[4096];
    mp_options_to_args(o, args, sizeof args);
    char *argv[24] = {"sh", "-c", script, "sh"};
    int n = 4;
    snprintf(script, sizeof script, "%s \"$@\"", cmd);
    for (char *tok = strtok(args, " "); tok && n < 22; tok = strtok(NULL, " ")) argv[n++] = tok;
    argv[n++] = (char *)graph;
    argv[n] = NULL;
    execv("/bin/sh", argv);
    _exit(127);
}

/* Read the child's output until it closes or the deadline; -1 on timeout. */
static int collect(int fd, double deadline, mp_buf *out) {
    char chunk[65536];
    for (;;) {
        double left = deadline - now_ms();
        if (left <= 0) return -1;
        struct pollfd pf = {fd, POLLIN, 0};
        int pr = poll(&pf, 1, (int)(left + 1));
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) return -1;
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 0;
        mp_buf_put(out, chunk, (size_t)got);
    }
}

bool mp_run_external(const char *graph_text, size_t len, const mp_options *o, const mp_external_planner *ext,
                     uint32_t timeout_ms, mp_buf *out, int *status) {
    char path[] = "/tmp/memplan-external-XXXXXX.mpg";
    int gfd = mkstemps(path, 4), fds[2];
    *status = -1;
    if (gfd < 0) return false;
    bool wrote = write(gfd, graph_text, len) == (ssize_t)len;
    close(gfd);
    if (!wrote || pipe(fds) != 0) {
        unlink(path);
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        exec_child(fds[1], ext->command, o, path);
    }
    close(fds[1]);
    int rc = pid > 0 ? collect(fds[0], now_ms() + timeout_ms, out) : -1;
    close(fds[0]);
    if (pid > 0 && rc < 0) kill(-pid, SIGKILL); /* the whole group: sh and what it started */
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (pid > 0 && rc == 0) kill(-pid, SIGKILL); /* leftovers of a finished command */
    unlink(path);
    *status = pid < 0 ? -1 : rc < 0 ? -2 : st;
    mp_buf_put(out, "", 1); /* NUL-terminated, len counts it */
    out->len--;
    return pid > 0 && rc == 0;
}

/* A plan the command wrote: parsed and verified against the program. */
static void judge(const mp_program *p, const char *text, const char *name, mp_check_result *r, mp_algo_outcome *out) {
    mp_err err;
    mp_plan *plan = mp_plan_parse(text, strlen(text), name, p, &err);
    if (!plan) {
        snprintf(out->verify, sizeof out->verify, "invalid");
        mp_check_fail(r, "invalid", name, "%s", err.msg);
        return;
    }
    mp_check_verdict(p, plan, name, r, out);
    mp_plan_free(plan);
}

void mp_check_external(const mp_program *p, const char *graph_text, size_t len, const mp_options *o,
                       const mp_external_planner *ext, uint32_t timeout_ms, mp_check_result *r, mp_algo_outcome *out) {
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", ext->name);
    mp_buf b;
    mp_buf_init(&b);
    int st;
    double t0 = now_ms();
    bool done = mp_run_external(graph_text, len, o, ext, timeout_ms, &b, &st);
    out->plan_ms = now_ms() - t0;
    char msg[256];
    if (!done && st == -2) {
        snprintf(out->verify, sizeof out->verify, "timeout");
        snprintf(msg, sizeof msg, "no plan within %u ms: killed", timeout_ms);
        mp_check_fail(r, "timeout", ext->name, "%s", msg);
    } else if (done && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        judge(p, b.data ? b.data : "", ext->name, r, out);
    } else if (done && WIFEXITED(st) && WEXITSTATUS(st) == MP_EPLAN) {
        out->code = MP_EPLAN;
        snprintf(out->verify, sizeof out->verify, "refused");
    } else {
        snprintf(out->verify, sizeof out->verify, "crash");
        if (done && WIFSIGNALED(st)) snprintf(msg, sizeof msg, "the planner died of signal %d", WTERMSIG(st));
        else snprintf(msg, sizeof msg, "the planner exited with status %d", done && WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        mp_check_fail(r, "crash", ext->name, "%s", msg);
    }
    mp_buf_free(&b);
}
