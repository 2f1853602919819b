/* cmd_bench_stages.c - `memplan bench --stages`: the time and peak memory
 * of each stage a user runs on one large graph, run as the user runs it:
 * `memplan gen`, `memplan plan` (opt) and `memplan verify`, each a process
 * of its own (this same binary), measured by its wall time (the fastest
 * of --repeat runs), the CPU time of that run in user space and in the
 * kernel (wait4's rusage), and its peak resident set (ru_maxrss, the
 * largest of the runs).  The kernel's share is mostly the zeroing of fresh
 * pages, whose cost per byte on a virtual machine grows with the memory
 * touched: the user time's growth is the program's own.
 * Transformer graphs of 10^4 tensors up to --max-tensors, each stage with
 * its growth over the graph ten times smaller (near-linear is 10x),
 * printed and recorded in the metrics store
 * (kind "stages": the graph, the stage as the algorithm, plan_ms, peak_kb;
 * the stage's CPU times as stages "<stage> user" and "<stage> kernel";
 * `memplan report` lists their history). */
#define _DEFAULT_SOURCE /* wait4, mkdtemp */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_STAGES 3
static const char *const STAGES[N_STAGES] = {"gen", "plan", "verify"};

typedef struct stage_run {
    double ms, user_ms, kernel_ms; /* wall; CPU in user space, in the kernel */
    uint64_t peak_kb;
    int rc; /* the exit status; 128 + N for signal N; -1 not run */
} stage_run;

static double ms_of(struct timeval t) { return (double)t.tv_sec * 1e3 + (double)t.tv_usec / 1e3; }

/* This binary run with argv, its output to /dev/null, its errors shown. */
static stage_run run_stage(const char *exe, char *const argv[]) {
    stage_run r = {0, 0, 0, 0, -1};
    fflush(NULL);
    double t0 = mp_cli_now_ms();
    pid_t pid = fork();
    if (pid < 0) return r;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) dup2(fd, STDOUT_FILENO);
        execv(exe, argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) return r;
    r.ms = mp_cli_now_ms() - t0;
    r.user_ms = ms_of(ru.ru_utime);
    r.kernel_ms = ms_of(ru.ru_stime);
    r.peak_kb = (uint64_t)ru.ru_maxrss;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

/* A stage run `repeat` times: the fastest wall time (a shared machine's
 * noise only ever adds time) with that run's CPU times, and the largest
 * peak; the first failure ends it. */
static stage_run run_repeated(const char *exe, char *const argv[], uint64_t repeat) {
    stage_run best = run_stage(exe, argv);
    for (uint64_t i = 1; i < repeat && best.rc == 0; i++) {
        stage_run r = run_stage(exe, argv);
        if (r.rc) return r;
        uint64_t peak = r.peak_kb > best.peak_kb ? r.peak_kb : best.peak_kb;
        if (r.ms < best.ms) best = r;
        best.peak_kb = peak;
    }
    return best;
}

/* The three stages on a transformer graph of n tensors in dir. */
static void run_size(const char *exe, const char *dir, uint64_t n, uint64_t repeat, stage_run out[N_STAGES]) {
    char tensors[24], graph[4224], plan[4224];
    snprintf(tensors, sizeof tensors, "%llu", (unsigned long long)n);
    snprintf(graph, sizeof graph, "%s/g.mpg", dir);
    snprintf(plan, sizeof plan, "%s/p.mpp", dir);
    char *gen[] = {"memplan", "gen", "--profile", "transformer", "--tensors", tensors, "--seed", "2026",
                   "-o", graph, NULL};
    char *pl[] = {"memplan", "plan", "--algo", "opt", graph, "-o", plan, NULL};
    char *ver[] = {"memplan", "verify", graph, plan, NULL};
    char *const *argv[N_STAGES] = {gen, pl, ver};
    for (int k = 0; k < N_STAGES; k++) {
        out[k] = k && out[k - 1].rc ? (stage_run){0, 0, 0, 0, -1} : run_repeated(exe, argv[k], repeat);
        if (out[k].rc > 0) fprintf(stderr, "memplan bench: %s of %s tensors exited with %d\n", STAGES[k], tensors,
                                   out[k].rc);
    }
    remove(graph);
    remove(plan);
}

static void print_row(uint64_t n, int k, const stage_run *r, const stage_run *smaller) {
    printf("| transformer | %llu | %s | ", (unsigned long long)n, STAGES[k]);
    if (r->rc) {
        printf("%s | | | | | |\n", r->rc < 0 ? "not run" : "failed");
        return;
    }
    printf("%.2f | %.2f | %.2f | %.0f | ", r->ms / 1e3, r->user_ms / 1e3, r->kernel_ms / 1e3,
           (double)r->peak_kb / 1024);
    bool grow = smaller && !smaller->rc;
    if (grow && smaller->ms > 0) printf("%.1fx | ", r->ms / smaller->ms);
    else printf("| ");
    if (grow && smaller->user_ms > 0) printf("%.1fx |\n", r->user_ms / smaller->user_ms);
    else printf("|\n");
}

static void record_stages(const char *db_path, const mp_result_row *rows, size_t n, uint64_t max,
                          uint64_t repeat, const char *started) {
    mp_err err;
    mp_db *db = mp_db_open(db_path, &err);
    if (!db) {
        fprintf(stderr, "memplan bench: %s\n", err.msg);
        return;
    }
    char opts[64];
    snprintf(opts, sizeof opts, "bench --stages --max-tensors %llu --repeat %llu", (unsigned long long)max,
             (unsigned long long)repeat);
    mp_run_info run = {.kind = "stages", .options = opts, .count = n};
    snprintf(run.started, sizeof run.started, "%s", started);
    int64_t id;
    if (mp_db_record(db, &run, rows, n, NULL, 0, &id, &err)) fprintf(stderr, "memplan bench: %s\n", err.msg);
    else printf("\nrecorded as stages run %lld in %s\n", (long long)id, db_path);
    mp_db_close(db);
}

int mp_bench_stages(uint64_t max_tensors, uint64_t repeat, const char *db) {
    char exe[4096], dir[4200];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/memplan-stages-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0 || !mkdtemp(dir)) {
        fprintf(stderr, "memplan bench: cannot find this binary or make a scratch directory\n");
        return 1;
    }
    exe[len] = 0;
    char started[32];
    mp_db_now(started, sizeof started);
    printf("## Stages, as run by a user (memplan %s): wall time (the fastest of %llu runs), that run's CPU "
           "time in user space and in the kernel, and peak resident set\n\n"
           "| profile | tensors | stage | seconds | user s | kernel s | peak MiB | x the size 10x smaller | "
           "user x the size 10x smaller |\n|---|---:|---|---:|---:|---:|---:|---:|---:|\n",
           MEMPLAN_VERSION, (unsigned long long)repeat);
    mp_result_row rows[8 * N_STAGES * 3];
    char names[8][40], cpu_names[N_STAGES][2][24];
    for (int k = 0; k < N_STAGES; k++) {
        snprintf(cpu_names[k][0], sizeof cpu_names[k][0], "%s user", STAGES[k]);
        snprintf(cpu_names[k][1], sizeof cpu_names[k][1], "%s kernel", STAGES[k]);
    }
    stage_run prev[N_STAGES], cur[N_STAGES];
    size_t nr = 0;
    int failed = 0;
    for (uint64_t n = 10000, i = 0; n <= max_tensors && i < 8; n *= 10, i++) {
        run_size(exe, dir, n, repeat, cur);
        snprintf(names[i], sizeof names[i], "transformer-%llu", (unsigned long long)n);
        for (int k = 0; k < N_STAGES; k++) {
            print_row(n, k, &cur[k], i ? &prev[k] : NULL);
            failed |= cur[k].rc != 0;
            rows[nr++] = (mp_result_row){.graph = names[i], .algo = STAGES[k], .options = "",
                                         .profile = "transformer", .tensors = n, .buffers = "",
                                         .plan_ms = cur[k].ms, .peak_kb = cur[k].peak_kb,
                                         .verify = cur[k].rc ? "failed" : "ok"};
            const mp_result_row *wall = &rows[nr - 1];
            for (int u = 0; u < 2; u++) { /* the CPU times, as stages of their own */
                rows[nr] = *wall;
                rows[nr].algo = cpu_names[k][u];
                rows[nr++].plan_ms = u ? cur[k].kernel_ms : cur[k].user_ms;
            }
            prev[k] = cur[k];
        }
        fflush(stdout);
    }
    rmdir(dir);
    if (strcmp(db, "none")) record_stages(db, rows, nr, max_tensors, repeat, started);
    return failed;
}
