/* external.c - planners outside memplan in the harness
 * (docs/external-planners.md).  One is a shell command: the harness writes
 * the case's graph to a temporary file and runs
 *     sh -c 'COMMAND "$@"' sh OPTIONS... GRAPH
 * (OPTIONS as `memplan plan` takes them: --alignment N, --no-alloc-*,
 * --per-device), reads the plan (.mpp) from its standard output, and waits
 * at most the time limit, after which the command's whole process group is
 * killed.  Exit 0: planned (the plan is verified like a built-in's); 3: it
 * refuses the graph; anything else, a signal or no exit in time: a crash
 * or a timeout, and a failure of the case.
 *
 * The command is hostile input (issue 45): it gets descriptors 0-2 only
 * (no pipe of the harness's to hold open or write into), its output is
 * capped (output_cap), the time limit holds until it has exited,
 * not just until it closed its output, and a signal to the harness
 * (SIGTERM, SIGINT, SIGHUP, unless ignored: core/signals.c) kills its
 * process group and removes the temporary graph before the harness dies
 * of it.  What it starts in a
 * session of its own (setsid) is out of reach: see the doc. */
#define _GNU_SOURCE /* mkstemps, close_range */
#include "internal.h"
#include "harness.h"
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------ a signal while it runs */

/* The command running now (its process group) and its temporary graph:
 * what the signal handler cleans up.  One at a time per process. */
static volatile sig_atomic_t running_group;
static char running_graph[64];
static mp_stop_saved before_run; /* what the command gets back */

static void on_signal(int sig) {
    if (running_group > 0) kill(-(pid_t)running_group, SIGKILL);
    if (running_graph[0]) unlink(running_graph);
    mp_stop_die(sig); /* die of it, as without the handler */
}

/* -------------------------------------------------------------- the child */

/* Descriptors 3 and up closed: the harness's result pipe, its other
 * pipes and files stay the harness's (a planner's helper holding one
 * made a false timeout, a write into one a false crash). */
static void close_from_3(void) {
#ifdef CLOSE_RANGE_CLOEXEC
    if (close_range(3, ~0u, 0) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < (max > 0 && max < 1 << 20 ? max : 1 << 16); fd++) close((int)fd);
}

/* The child: its own process group (so a timeout kills all it started),
 * stdout to the pipe, stdin and stderr to /dev/null, nothing else open.
 * argv was made before the fork. */
static _Noreturn void exec_child(int out_fd, char **argv, const sigset_t *mask) {
    setpgid(0, 0);
    mp_stop_restore(&before_run); /* the harness's handler is the harness's; what it ignores, ignored */
    mp_stop_unblock(mask);
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 2) < 0 || dup2(out_fd, 1) < 0) _exit(127);
    close_from_3();
    execv("/bin/sh", argv);
    _exit(127);
}

/* sh -c 'COMMAND "$@"' sh OPTIONS... GRAPH, in blocks of the caller's
 * (freed with mp_xfree: argv[2] is the script, argv itself). */
static char **command_argv(const mp_external_planner *ext, const mp_options *o, const char *graph, char *args,
                           size_t args_n) {
    size_t n = strlen(ext->command);
    char *script = mp_xmalloc(n + 8);
    memcpy(script, ext->command, n);
    memcpy(script + n, " \"$@\"", 6);
    mp_options_to_args(o, args, args_n);
    char **argv = mp_xcalloc(8 + args_n / 2, sizeof *argv);
    size_t k = 0;
    argv[k++] = "sh", argv[k++] = "-c", argv[k++] = script, argv[k++] = "sh";
    for (char *save, *tok = strtok_r(args, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) argv[k++] = tok;
    argv[k++] = (char *)graph;
    argv[k] = NULL;
    return argv;
}

/* ------------------------------------------------------------- the parent */

/* What a plan may be at most: 8 bytes for each of the graph's, and 64 KiB
 * (a plan has a line per allocation, a graph one per tensor and node; the
 * largest ratio seen is under 1). */
static size_t output_cap(size_t graph_len) {
    return graph_len > (SIZE_MAX - 65536) / 8 ? SIZE_MAX : 8 * graph_len + 65536;
}

enum { RUN_DONE = 0, RUN_TIMEOUT = -1, RUN_TOO_LONG = -2 };

/* A descriptor that becomes readable when pid exits (Linux's pidfd), or
 * -1: then the loop below looks every 5 ms. */
static int exit_fd(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* Whatever is left in the pipe once the command exited (a helper it left
 * may hold the pipe open: its output does not count). */
static int drain(int fd, size_t cap, mp_buf *out) {
    char chunk[65536];
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    for (;;) {
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return RUN_DONE;
        if ((size_t)got > cap - out->len) return RUN_TOO_LONG;
        mp_buf_put(out, chunk, (size_t)got);
    }
}

/* Read the command's output until the command (the shell) has exited,
 * the deadline or the cap; *st its wait status.  Its exit decides, not
 * the pipe's end: a command that closed its output and went on sleeping
 * is still under the time limit (it was waited for without one), and one
 * that left a helper holding the pipe is done when it exits. */
static int collect(pid_t pid, int fd, double deadline, size_t cap, mp_buf *out, int *st) {
    char chunk[65536];
    int xfd = exit_fd(pid), rc = RUN_TIMEOUT;
    bool eof = false;
    for (;;) {
        pid_t w = waitpid(pid, st, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR)) {
            rc = eof ? RUN_DONE : drain(fd, cap, out);
            break;
        }
        double left = deadline - now_ms();
        if (left <= 0) break;
        struct pollfd pf[2] = {{eof ? -1 : fd, POLLIN, 0}, {xfd, POLLIN, 0}};
        int wait_ms = xfd >= 0 ? (int)(left + 1) : left < 5 ? (int)left + 1 : 5;
        if (poll(pf, 2, wait_ms) <= 0 || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) eof = true;
        else if ((size_t)got > cap - out->len) {
            rc = RUN_TOO_LONG;
            break;
        } else mp_buf_put(out, chunk, (size_t)got);
    }
    if (xfd >= 0) close(xfd);
    return rc;
}

/* Fork and run the command on the graph file; the plan into out.  status:
 * the wait status, or MP_EXTERNAL_* below zero. */
static bool run_command(const char *path, size_t graph_len, const mp_options *o, const mp_external_planner *ext,
                        uint32_t timeout_ms, mp_buf *out, int *status) {
    char args[256];
    char **argv = command_argv(ext, o, path, args, sizeof args);
    int fds[2];
    bool ok = false;
    *status = MP_EXTERNAL_FAILED;
    if (pipe2(fds, O_CLOEXEC) == 0) {
        fflush(NULL);
        double deadline = now_ms() + timeout_ms;
        sigset_t mask; /* a stop between the fork and running_group left the command running (CI, B11) */
        mp_stop_block(&mask);
        pid_t pid = fork();
        if (pid == 0) exec_child(fds[1], argv, &mask);
        close(fds[1]);
        if (pid > 0) {
            setpgid(pid, pid); /* as the child does: a kill before it ran reaches it */
            running_group = pid;
        }
        mp_stop_unblock(&mask);
        if (pid > 0) {
            int st = 0, rc = collect(pid, fds[0], deadline, output_cap(graph_len), out, &st);
            kill(-pid, SIGKILL); /* the whole group: what overran, or what a finished command left */
            while (rc != RUN_DONE && waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
            running_group = 0;
            *status = rc == RUN_DONE ? st : rc == RUN_TIMEOUT ? MP_EXTERNAL_TIMEOUT : MP_EXTERNAL_TOO_LONG;
            ok = rc == RUN_DONE;
        }
        close(fds[0]);
    }
    mp_xfree(argv[2]);
    mp_xfree(argv);
    return ok;
}

bool mp_run_external(const char *graph_text, size_t len, const mp_options *o, const mp_external_planner *ext,
                     uint32_t timeout_ms, mp_buf *out, int *status) {
    mp_stop_catch(on_signal, &before_run);
    snprintf(running_graph, sizeof running_graph, "%s", "/tmp/memplan-external-XXXXXX.mpg");
    int gfd = mkstemps(running_graph, 4);
    *status = MP_EXTERNAL_FAILED;
    bool done = false;
    if (gfd >= 0) {
        bool wrote = mp_write_all(gfd, graph_text, len);
        close(gfd);
        done = wrote && run_command(running_graph, len, o, ext, timeout_ms, out, status);
        unlink(running_graph);
    }
    running_graph[0] = 0;
    mp_stop_restore(&before_run);
    mp_buf_put(out, "", 1); /* NUL-terminated, len does not count it */
    out->len--;
    return done;
}

/* A plan the command wrote: parsed (every byte: one past a NUL too, as
 * `memplan verify` reads the file) and verified against the program. */
static void judge(const mp_program *p, const char *text, size_t len, const char *name, mp_check_result *r,
                  mp_algo_outcome *out) {
    mp_err err;
    mp_plan *plan = mp_plan_parse(text, len, name, p, &err);
    if (!plan) {
        snprintf(out->verify, sizeof out->verify, "invalid");
        mp_check_fail(r, "invalid", name, "%s", err.msg);
        return;
    }
    mp_check_verdict(p, plan, name, r, out);
    mp_plan_free(plan);
}

void mp_external_verdict(const mp_program *p, size_t graph_len, const char *output, size_t out_len, int status,
                         uint32_t timeout_ms, const char *name, mp_check_result *r, mp_algo_outcome *out) {
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    char msg[256];
    bool exited = status >= 0;
    if (status == MP_EXTERNAL_TIMEOUT) {
        snprintf(out->verify, sizeof out->verify, "timeout");
        snprintf(msg, sizeof msg, "no plan within %u ms: killed", timeout_ms);
        mp_check_fail(r, "timeout", name, "%s", msg);
    } else if (status == MP_EXTERNAL_TOO_LONG || (exited && out_len > output_cap(graph_len))) {
        snprintf(out->verify, sizeof out->verify, "invalid");
        mp_check_fail(r, "invalid", name, "the planner wrote more than %zu bytes (8 times the graph's, and 64 KiB): "
                      "killed", output_cap(graph_len));
    } else if (exited && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        judge(p, output ? output : "", output ? out_len : 0, name, r, out);
    } else if (exited && WIFEXITED(status) && WEXITSTATUS(status) == MP_EPLAN) {
        out->code = MP_EPLAN;
        snprintf(out->verify, sizeof out->verify, "refused");
    } else {
        snprintf(out->verify, sizeof out->verify, "crash");
        if (exited && WIFSIGNALED(status)) snprintf(msg, sizeof msg, "the planner died of signal %d", WTERMSIG(status));
        else if (exited) snprintf(msg, sizeof msg, "the planner exited with status %d", WEXITSTATUS(status));
        else snprintf(msg, sizeof msg, "the planner could not be started");
        mp_check_fail(r, "crash", name, "%s", msg);
    }
}

void mp_check_external(const mp_program *p, const char *graph_text, size_t len, const mp_options *o,
                       const mp_external_planner *ext, uint32_t timeout_ms, mp_check_result *r, mp_algo_outcome *out) {
    mp_buf b;
    mp_buf_init(&b);
    int st;
    double t0 = now_ms();
    mp_run_external(graph_text, len, o, ext, timeout_ms, &b, &st);
    double ms = now_ms() - t0;
    mp_external_verdict(p, len, b.data, b.len, st, timeout_ms, ext->name, r, out);
    out->plan_ms = ms;
    mp_buf_free(&b);
}
