/* harness.c - `memplan harness`: generate graphs over a spread of options,
 * run every check on each, record the metrics, write shrunk reproducers.
 *
 * Each graph is checked in a child process of its own (up to --jobs at
 * once), so a crash is a finding, not the end of the run; the child sends
 * its mp_check_result back through a pipe.  The parent records the whole
 * run in one transaction at the end. */
#include "internal.h"
#include "harness.h"
#include "files.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void mp_harness_case(uint64_t seed, uint64_t i, mp_gen_options *g, mp_options *o) {
    uint64_t r = mix(mix(seed) ^ i);
#define TAKE(n) ((r = mix(r)) % (n))
    static const uint32_t aligns[] = {1, 2, 4, 8, 16, 16, 16, 16, 32, 64, 128, 24};
    mp_gen_options_default(g);
    g->seed = mix(r ^ 0x5eed);
    g->pins = true; /* one program in eight pins tensors (a side stream of the seed) */
    uint64_t prof = TAKE(10);
    g->profile = prof < 7 ? MP_PROFILE_MIXED : 1 + (uint32_t)TAKE(MP_PROFILE_DEEP); /* the 1.4 profiles */
    if (mix(r ^ 0x3e7d) % 16 == 0) g->profile = MP_PROFILE_METHODS; /* a side stream: one case in 16 */
    uint64_t big = TAKE(2);
    g->tensors = g->profile == MP_PROFILE_MIXED ? 4 + TAKE(big ? 150 : 40) : 20 + TAKE(300);
    g->depth = (uint32_t)TAKE(4);
    uint64_t devs = TAKE(10);
    g->n_devices = devs < 5 ? 1 : devs < 8 ? 2 : 4;
    g->devices[0] = (mp_device){MP_DEV_CPU, 0};
    g->devices[1] = (mp_device){MP_DEV_CUDA, 0};
    g->devices[2] = (mp_device){MP_DEV_CUDA, 1};
    g->devices[3] = (mp_device){MP_DEV_CPU, 1};
    mp_options_default(o);
    o->alignment = aligns[TAKE(sizeof aligns / sizeof *aligns)];
    o->alloc_inputs = TAKE(5) != 0;
    o->alloc_outputs = TAKE(5) != 0;
    o->alloc_mutable = TAKE(5) != 0;
    o->per_device = TAKE(5) < 2;
    /* one case in eight without --per-device plans over a memory map of
     * three banks (the mixed profile's pools are 2 and 3), drawn from a side
     * stream so that the other cases stay as they were */
    uint64_t q = mix(r ^ 0xba4c5);
    if (!o->per_device && q % 8 == 0) {
        static const char *const maps[] = {"fast=16K,mid=64K,slow=unlimited", "fast=256K,mid=1M,slow=unlimited",
                                           "fast=4M,mid=16M,slow=unlimited", "fast=64M,mid=256M,slow=unlimited"};
        mp_err err;
        mp_banks_parse(maps[(q >> 3) % 4], &o->banks, &err);
        o->spill_order = (q >> 5) % 4 == 0 ? MP_SPILL_PROGRAM : MP_SPILL_VALUE;
    }
#undef TAKE
}

static void case_label(uint64_t seed, uint64_t i, const mp_gen_options *g, const mp_options *o,
                       char *id, size_t idn, char *opts, size_t on) {
    char args[200], dev[24];
    snprintf(id, idn, "h%llu-%llu", (unsigned long long)seed, (unsigned long long)i);
    mp_options_to_args(o, args, sizeof args);
    size_t k = (size_t)snprintf(opts, on, "%s --profile %s --tensors %llu --depth %u --devices ", args,
                                mp_gen_profile_name(g->profile), (unsigned long long)g->tensors, g->depth);
    for (uint32_t d = 0; d < g->n_devices && k < on; d++)
        k += (size_t)snprintf(opts + k, on - k, "%s%s", d ? "," : "", mp_device_str(g->devices[d], dev));
}

/* ----------------------------------------------------------- one graph */

/* The external planners' time limit (0 in the options: 10 s). */
static uint32_t external_timeout(const mp_harness_options *h) {
    return h->external_timeout_ms ? h->external_timeout_ms : 10000;
}

/* Every check of one graph: the table's planners (mp_check_graph), then
 * the external ones (their outcomes follow in r->out, algos[] UINT32_MAX). */
static void check_all(const mp_harness_options *h, const mp_program *p, const char *text, size_t len,
                      const mp_options *o, mp_check_result *r) {
    mp_check_graph(p, o, h->algos, h->n_algos, r);
    uint32_t timeout = external_timeout(h);
    for (uint32_t k = 0; k < h->n_external && r->n_algos < MP_MAX_PLANNERS; k++) {
        r->algos[r->n_algos] = UINT32_MAX;
        mp_check_external(p, text, len, o, &h->external[k], timeout, r, &r->out[r->n_algos]);
        r->n_algos++;
    }
}

static void run_case(const mp_harness_options *h, uint64_t i, mp_check_result *r) {
    mp_gen_options g;
    mp_options o;
    mp_harness_case(h->seed, i, &g, &o);
    mp_buf b;
    mp_buf_init(&b);
    mp_gen(&g, &b);
    mp_err err;
    mp_program *p = mp_graph_parse(b.data, b.len, "<gen>", &err);
    if (!p) {
        memset(r, 0, sizeof *r);
        r->failed = true;
        snprintf(r->kind, sizeof r->kind, "generator");
        snprintf(r->message, sizeof r->message, "generated graph does not parse: %.900s", err.msg);
    } else {
        check_all(h, p, b.data, b.len, &o, r);
    }
    mp_buf_free(&b);
    mp_program_free(p);
}

static bool write_all(int fd, const void *p, size_t n) {
    const char *s = p;
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        s += w;
        n -= (size_t)w;
    }
    return true;
}

static bool read_all(int fd, void *p, size_t n) {
    char *s = p;
    while (n) {
        ssize_t r = read(fd, s, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        s += r;
        n -= (size_t)r;
    }
    return true;
}

typedef struct slot {
    pid_t pid;
    int fd;
    uint64_t index;
} slot;

/* The cases a run checks: every i < count, or with --shard K/N those
 * with i mod N == K (N shards together check the whole run's cases). */
static uint64_t n_cases(const mp_harness_options *h) {
    if (!h->shards) return h->count;
    return h->count > h->shard ? (h->count - h->shard - 1) / h->shards + 1 : 0;
}

/* The case index of the run's j-th case. */
static uint64_t case_at(const mp_harness_options *h, uint64_t j) {
    return h->shards ? h->shard + j * h->shards : j;
}

/* A signal to the harness (SIGTERM, SIGINT, SIGHUP) while cases run: each
 * running case is told (SIGTERM: its external planner's group is killed
 * and its temporary graph removed, external.c) and waited for, then the
 * harness dies of the signal as it would have.  The slots in use now: */
static slot *volatile live_slots;
static volatile uint32_t live_jobs;
static mp_stop_saved before_run; /* the dispositions the cases get back */

static void on_stop(int sig) {
    slot *sl = live_slots;
    for (uint32_t k = 0; sl && k < live_jobs; k++)
        if (sl[k].pid > 0) kill(sl[k].pid, SIGTERM);
    for (uint32_t k = 0; sl && k < live_jobs; k++)
        if (sl[k].pid > 0) waitpid(sl[k].pid, NULL, 0);
    mp_stop_die(sig);
}

/* Case i into results[j]. */
static int spawn(const mp_harness_options *h, uint64_t i, uint64_t j, slot *s) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    fflush(NULL);
    sigset_t mask; /* a stop between the fork and s->pid left the case (and its planner) running */
    mp_stop_block(&mask);
    pid_t pid = fork();
    if (pid < 0) {
        mp_stop_unblock(&mask);
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        mp_stop_restore(&before_run); /* the parent's handler is the parent's */
        mp_stop_unblock(&mask);
        mp_check_result r;
        run_case(h, i, &r);
        _exit(write_all(fds[1], &r, sizeof r) ? 0 : 1);
    }
    close(fds[1]);
    s->pid = pid;
    s->fd = fds[0];
    s->index = j;
    mp_stop_unblock(&mask);
    return 0;
}

/* Collect a child: its result, or a crash finding. */
static void reap(slot *s, mp_check_result *r) {
    bool got = read_all(s->fd, r, sizeof *r);
    close(s->fd);
    int status = 0;
    while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {}
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        memset(r, 0, sizeof *r);
        r->failed = true;
        snprintf(r->kind, sizeof r->kind, "crash");
        if (WIFSIGNALED(status))
            snprintf(r->message, sizeof r->message, "the check died of signal %d", WTERMSIG(status));
        else
            snprintf(r->message, sizeof r->message, "the check exited with status %d",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
}

/* ------------------------------------------------------------ shrinking */

typedef struct repro {
    const mp_harness_options *h;
    mp_options o;
    char kind[32], algo[16];
} repro;

/* Does the failure persist on this text?  Checked in a child, so that a
 * crash reproduces as a crash. */
static bool still_fails(const char *text, size_t len, void *ctx) {
    const repro *rp = ctx;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        mp_err err;
        mp_program *p = mp_graph_parse(text, len, "<shrink>", &err);
        if (!p) _exit(1);
        mp_check_result r;
        check_all(rp->h, p, text, len, &rp->o, &r);
        _exit(r.failed && strcmp(r.kind, rp->kind) == 0 && strcmp(r.algo, rp->algo) == 0 ? 0 : 1);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (strcmp(rp->kind, "crash") == 0) return WIFSIGNALED(status);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* One file of a reproducer; false (and a message) when it was not
 * written. */
static bool save(const char *dir, const char *name, const char *ext, const char *data) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
    mp_err err;
    if (mp_write_file_atomic(path, data, strlen(data), &err) == MP_OK) return true;
    fprintf(stderr, "memplan harness: %s\n", err.msg);
    return false;
}

/* COMMAND as one word of sh: in single quotes, each ' as '\'' (the
 * reproducer's line runs exactly what the harness ran). */
static void shell_quote(const char *s, mp_buf *b) {
    mp_buf_put(b, "'", 1);
    for (; *s; s++) {
        if (*s == '\'') mp_buf_puts(b, "'\\''");
        else mp_buf_put(b, s, 1);
    }
    mp_buf_put(b, "'", 1);
}

static const mp_external_planner *external_named(const mp_harness_options *h, const char *name) {
    for (uint32_t k = 0; k < h->n_external; k++)
        if (strcmp(h->external[k].name, name) == 0) return &h->external[k];
    return NULL;
}

/* The failing plan itself, when there is one: the table's planner run
 * again, or the external command's output on the (shrunk) graph. */
static void save_plan(const mp_harness_options *h, const mp_options *opts, const char *algo, const char *graph,
                      const char *name, bool timed_out) {
    const mp_external_planner *ext = external_named(h, algo);
    mp_buf pb;
    mp_buf_init(&pb);
    if (ext) { /* a command that timed out is not run again: it would cost the whole limit for no plan */
        int st;
        if (!timed_out && mp_run_external(graph, strlen(graph), opts, ext, external_timeout(h), &pb, &st) &&
            pb.len)
            save(h->failures_dir, name, ".mpp", pb.data);
        mp_buf_free(&pb);
        return;
    }
    int a = mp_algo_parse(algo);
    mp_err err;
    mp_program *p = mp_graph_parse(graph, strlen(graph), name, &err);
    if (p && a >= 0) {
        mp_options o = *opts;
        o.algo = (uint32_t)a;
        mp_plan *plan = mp_plan_program(p, &o, &err);
        if (plan) {
            mp_plan_write(plan, &pb);
            save(h->failures_dir, name, ".mpp", pb.data);
            mp_plan_free(plan);
        }
    }
    mp_program_free(p);
    mp_buf_free(&pb);
}

static void write_repro(const mp_harness_options *h, uint64_t i, const mp_check_result *r) {
    mp_gen_options g;
    repro rp = {h, {0}, "", ""};
    mp_harness_case(h->seed, i, &g, &rp.o);
    snprintf(rp.kind, sizeof rp.kind, "%s", r->kind);
    snprintf(rp.algo, sizeof rp.algo, "%s", r->algo);
    mp_buf b;
    mp_buf_init(&b);
    mp_gen(&g, &b);
    /* an external planner costs a process per try, a hang its whole time
     * limit: fewer tries for the one, none for the other */
    bool external = external_named(h, r->algo) != NULL, hang = strcmp(r->kind, "timeout") == 0;
    char *text = h->shrink && !hang ? mp_shrink(b.data, still_fails, &rp, external ? 300 : 4000) : NULL;
    const char *graph = text ? text : b.data;
    mkdir(h->failures_dir, 0777);
    char name[160], args[256], id[64], opts[400];
    case_label(h->seed, i, &g, &rp.o, id, sizeof id, opts, sizeof opts);
    snprintf(name, sizeof name, "%s-%s%s%s", id, r->kind, r->algo[0] ? "-" : "", r->algo);
    mp_options_to_args(&rp.o, args, sizeof args);
    bool saved = save(h->failures_dir, name, ".mpg", graph);
    const mp_external_planner *ext = external_named(h, r->algo);
    mp_buf how, info;
    mp_buf_init(&how);
    mp_buf_init(&info);
    if (ext) { /* the command as the harness ran it */
        mp_buf script;
        mp_buf_init(&script);
        mp_buf_printf(&script, "%s \"$@\"", ext->command);
        mp_buf_puts(&how, "sh -c ");
        shell_quote(script.data, &how);
        mp_buf_printf(&how, " sh %s %s/%s.mpg", args, h->failures_dir, name);
        mp_buf_free(&script);
    } else {
        mp_buf_printf(&how, "memplan plan %s%s%s %s/%s.mpg", args, r->algo[0] ? " --algo " : "", r->algo,
                      h->failures_dir, name);
    }
    mp_buf_printf(&info, "failure: %s%s%s\ncase: %s (%s)\nreproduce: %s\n\n%s\n", r->kind,
                  r->algo[0] ? " with " : "", r->algo, id, opts, how.data, r->message);
    saved = saved && save(h->failures_dir, name, ".txt", info.data);
    char argline[300];
    snprintf(argline, sizeof argline, "%s%s%s\n", args, r->algo[0] && !ext ? " --algo " : "", ext ? "" : r->algo);
    saved = saved && save(h->failures_dir, name, ".args", argline);
    if (saved) save_plan(h, &rp.o, r->algo, graph, name, hang);
    if (saved) fprintf(stderr, "memplan harness: %s: %s -> %s/%s.mpg\n", id, r->kind, h->failures_dir, name);
    else fprintf(stderr, "memplan harness: %s: %s; its reproducer was not written (above)\n", id, r->kind);
    mp_buf_free(&how);
    mp_buf_free(&info);
    mp_xfree(text);
    mp_buf_free(&b);
}

/* -------------------------------------------------------------- the run */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(const mp_harness_options *h, uint64_t done, uint64_t failures, double t0) {
    if (!h->progress) return;
    double dt = now_s() - t0, rate = dt > 0 ? (double)done / dt : 0;
    uint64_t n = n_cases(h);
    double eta = rate > 0 ? (double)(n - done) / rate : 0;
    fprintf(stderr, "\r[harness] %llu/%llu graphs  %.1f/s  %llu failure%s  ETA %.0fs   ",
            (unsigned long long)done, (unsigned long long)n, rate,
            (unsigned long long)failures, failures == 1 ? "" : "s", eta);
    if (done == n) fputc('\n', stderr);
}

/* Wait until some child has written its result (or died). */
static slot *wait_any(slot *slots, uint32_t jobs) {
    struct pollfd pf[64];
    uint32_t map[64], np = 0;
    for (uint32_t k = 0; k < jobs && np < 64; k++)
        if (slots[k].pid) {
            pf[np] = (struct pollfd){slots[k].fd, POLLIN, 0};
            map[np++] = k;
        }
    while (poll(pf, np, -1) < 0 && errno == EINTR) {}
    uint32_t k = 0;
    while (k < np && !pf[k].revents) k++;
    return &slots[map[k < np ? k : 0]];
}

static void add_rows(const mp_harness_options *h, uint64_t i, const mp_check_result *r,
                     mp_result_row *rows, size_t *nr, char **strings, size_t *ns) {
    mp_gen_options g;
    mp_options o;
    mp_harness_case(h->seed, i, &g, &o);
    char id[64], opts[400];
    case_label(h->seed, i, &g, &o, id, sizeof id, opts, sizeof opts);
    char *sid = strings[(*ns)++] = strcpy(mp_xmalloc(strlen(id) + 1), id);
    char *sop = strings[(*ns)++] = strcpy(mp_xmalloc(strlen(opts) + 1), opts);
    for (uint32_t k = 0; k < r->n_algos; k++) {
        const mp_algo_outcome *a = &r->out[k];
        mp_result_row *row = &rows[(*nr)++];
        memset(row, 0, sizeof *row);
        row->graph = sid;
        row->options = sop;
        row->algo = a->name[0] ? a->name : mp_algo_name(r->algos[k]);
        row->profile = mp_gen_profile_name(g.profile);
        row->tensors = r->tensors;
        row->nodes = r->nodes;
        row->lower_bound = a->lower_bound;
        row->total_bytes = a->total_bytes;
        row->buffers = strings[(*ns)++] = strcpy(mp_xmalloc(strlen(a->buffers) + 1), a->buffers);
        row->ratio = a->ratio;
        row->plan_ms = a->plan_ms;
        row->violations = a->violations;
        bool crashed = r->failed && strcmp(r->kind, "crash") == 0;
        row->verify = crashed && !a->name[0] ? "crash" : a->verify[0] ? a->verify : "refused";
    }
}

/* Run every case in children, at most `jobs` at once, into results[]. */
static int run_cases(const mp_harness_options *h, mp_check_result *results, double t0,
                     mp_err *err) {
    uint32_t jobs = h->jobs ? h->jobs : 1;
    slot *slots = mp_xcalloc(jobs, sizeof *slots);
    uint64_t next_j = 0, done = 0, running = 0, failures = 0, n = n_cases(h);
    int rc = MP_OK;
    live_jobs = jobs;
    live_slots = slots;
    mp_stop_catch(on_stop, &before_run);
    while (done < n && rc == MP_OK) {
        while (running < jobs && next_j < n) {
            slot *s = NULL;
            for (uint32_t k = 0; k < jobs; k++)
                if (!slots[k].pid) s = &slots[k];
            if (spawn(h, case_at(h, next_j), next_j, s)) {
                rc = mp_err_set(err, MP_EFORMAT, "memplan harness: fork failed: %s", strerror(errno));
                break;
            }
            next_j++;
            running++;
        }
        if (rc) break;
        slot *sl = wait_any(slots, jobs);
        reap(sl, &results[sl->index]);
        failures += results[sl->index].failed;
        sl->pid = 0;
        running--;
        done++;
        progress(h, done, failures, t0);
    }
    for (uint32_t k = 0; k < jobs; k++)
        if (slots[k].pid) {
            kill(slots[k].pid, SIGKILL);
            waitpid(slots[k].pid, NULL, 0);
            close(slots[k].fd);
        }
    mp_stop_restore(&before_run);
    live_slots = NULL;
    mp_xfree(slots);
    return rc;
}

/* The run's command line, as recorded: "--seed S --count N --algos a,b".
 * A shard's is its whole run's (runs.shard/shards say which part): shards
 * of one run record the same line, and merge and gate compare it. */
static void option_line(const mp_harness_options *h, char *buf, size_t n) {
    size_t k = (size_t)snprintf(buf, n, "--seed %llu --count %llu --algos ",
                                (unsigned long long)h->seed, (unsigned long long)h->count);
    for (uint32_t a = 0; a < h->n_algos && k < n; a++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s", a ? "," : "", mp_algo_name(h->algos[a]));
    for (uint32_t e = 0; e < h->n_external && k < n; e++) /* the name: the gate compares like with like */
        k += (size_t)snprintf(buf + k, n - k, " --planner %s", h->external[e].name);
}

/* Rows for the store, reproducers for the failures, the run recorded. */
static int record(const mp_harness_options *h, mp_db *db, const mp_check_result *results,
                  const char *started, mp_harness_summary *sum, mp_err *err) {
    /* per case: its id and options, and a buffer list per planner (the
     * table's and the external ones) */
    uint64_t per_case = h->n_algos + h->n_external;
    uint64_t n = n_cases(h);
    mp_result_row *rows = mp_xcalloc(n * per_case + 1, sizeof *rows);
    char **strings = mp_xcalloc(n * (2 + per_case) + 1, sizeof *strings);
    size_t nr = 0, ns = 0;
    int rc = MP_OK;
    for (uint64_t j = 0; j < n; j++) {
        add_rows(h, case_at(h, j), &results[j], rows, &nr, strings, &ns);
        if (results[j].failed) {
            sum->failures++;
            write_repro(h, case_at(h, j), &results[j]);
        }
    }
    sum->graphs = n;
    sum->plans = nr;
    if (db) {
        mp_run_info run = {.kind = "harness", .seed = h->seed, .count = h->count, .shard = h->shard, .shards = h->shards};
        snprintf(run.started, sizeof run.started, "%s", started);
        char optline[64 + MP_MAX_PLANNERS * 24];
        option_line(h, optline, sizeof optline);
        run.options = optline;
        rc = mp_db_record(db, &run, rows, nr, NULL, 0, &sum->run_id, err);
    }
    for (size_t k = 0; k < ns; k++) mp_xfree(strings[k]);
    mp_xfree(strings);
    mp_xfree(rows);
    return rc;
}

int mp_harness_run(const mp_harness_options *h, mp_harness_summary *sum, mp_err *err) {
    memset(sum, 0, sizeof *sum);
    mp_db *db = NULL;
    if (h->db && !(db = mp_db_open(h->db, err))) return err->code;
    mp_check_result *results = mp_xcalloc(n_cases(h) + 1, sizeof *results);
    char started[32]; /* runs.started: when the cases began, for report --since */
    mp_db_now(started, sizeof started);
    double t0 = now_s();
    int rc = run_cases(h, results, t0, err);
    sum->seconds = now_s() - t0;
    if (rc == MP_OK) rc = record(h, db, results, started, sum, err);
    mp_xfree(results);
    mp_db_close(db);
    return rc;
}
