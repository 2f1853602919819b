/* cmd_bench.c - `memplan bench` (`make bench`): plan quality, planning
 * time and memory of every algorithm, side by side, on
 *   - generated graphs of 10^2 .. 10^6 tensors in every profile,
 *   - MiniMalloc's eleven challenging instances (default and --exact),
 *   - idealloc's real-model instances,
 *   - the models in corpus/ (examples, and those recorded from ExecuTorch),
 * printed as a table and recorded in the metrics store (kind "bench").
 * Every plan runs in a fresh process of its own, `memplan bench --child`,
 * started with the graph text on its standard input: its time is measured
 * around the planner alone; its memory is its peak resident set less the
 * resident set it had once the text was read: the parsed graph and the
 * planner's peak, as a program that reads the graph and plans it would
 * need.  (A forked child of the bench inherited the bench's heap: its
 * first writes to it were copy-on-write faults, which made a plan of
 * 0.4 ms show as 1-3 ms.)  A plan of under a second runs three times and
 * keeps its fastest time.  A plan that runs past the time limit is
 * reported as such rather than waited for. */
#define _GNU_SOURCE /* wait4: the rusage of one child; memfd_create */
#include "cli.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h> /* memfd_create */
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct outcome {
    int status; /* 0 planned, 1 refused, 2 timeout, 3 crashed */
    bool valid;
    uint64_t bytes, lower;
    double ratio, ms;
    uint64_t peak_kb;
    uint64_t tensors, nodes;
    bool fresh; /* planned in a fresh process, not in a fork of the bench */
} outcome;

typedef struct bcase {
    char name[64], family[32];
    char *text; /* the graph file */
    uint32_t alignment;
    int fd; /* the text in an anonymous file for the child's stdin; -1: none */
} bcase;


/* A "VmRSS:"-style line of /proc/self/status in KiB, or -1. */
static long status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, n)) {
            v = strtol(line + n, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* Reset the peak resident set (VmHWM) to the current one: Linux's
 * clear_refs "5".  Returns the current resident set, or -1. */
static long reset_peak_kb(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return -1;
    bool ok = fputs("5", f) >= 0;
    if (fclose(f) || !ok) return -1;
    return status_kb("VmRSS:");
}

/* Parse and plan `text` as a bench child, and write the outcome to fd. */
static _Noreturn void child_run(const char *text, const char *name, uint32_t algo, uint32_t alignment,
                                bool exact, bool fresh, int fd) {
    outcome o = {0};
    o.fresh = fresh;
    mp_err err;
    long base = reset_peak_kb();
    mp_program *p = mp_graph_parse(text, strlen(text), name, &err);
    if (!p) _exit(3);
    for (uint32_t g = 0; g < p->n_graphs; g++) o.tensors += p->graphs[g].n_tensors, o.nodes += p->graphs[g].n_nodes;
    mp_options opts;
    mp_options_default(&opts);
    opts.algo = algo;
    opts.alignment = alignment;
    opts.exact = exact;
    double t0 = mp_cli_now_ms();
    mp_plan *plan = mp_plan_program(p, &opts, &err);
    o.ms = mp_cli_now_ms() - t0;
    long hwm = base >= 0 ? status_kb("VmHWM:") : -1;
    /* without clear_refs the parent reports the child's whole peak */
    o.peak_kb = hwm >= base && base >= 0 ? (uint64_t)(hwm - base) : UINT64_MAX;
    if (!plan) {
        o.status = 1;
    } else {
        mp_verify_report r;
        o.valid = mp_verify(p, plan, &r, &err) == MP_OK;
        o.bytes = r.total_bytes;
        o.lower = r.lower_bound;
        o.ratio = r.ratio;
        mp_verify_report_free(&r);
    }
    ssize_t w = write(fd, &o, sizeof o);
    _exit(w == (ssize_t)sizeof o ? 0 : 3);
}

/* `memplan bench --child ALGO ALIGNMENT EXACT NAME`: the graph text on
 * stdin (the bench's anonymous file, read from its start), the outcome on stdout
 * as the bench's own binary struct: the parent is this same program. */
static int bench_child(int argc, char **argv) {
    if (argc != 6) return MP_EFORMAT;
    int algo = mp_algo_parse(argv[2]);
    char *end;
    unsigned long alignment = strtoul(argv[3], &end, 10);
    if (algo < 0 || *end || !alignment || alignment > UINT32_MAX) return MP_EFORMAT;
    (void)lseek(0, 0, SEEK_SET); /* the file the bench's children share, or a pipe */
    size_t len;
    mp_err err;
    char *text = mp_read_file("-", &len, &err);
    if (!text) return err.code;
    child_run(text, argv[5], (uint32_t)algo, (uint32_t)alignment, !strcmp(argv[4], "1"), true, 1);
}

/* The child's side of fork: this program again, as `bench --child` with
 * the case's text on stdin and the pipe as stdout; where that cannot be
 * (no anonymous file, no /proc/self/exe), the plan runs in the fork
 * itself, its inherited heap trimmed first. */
static _Noreturn void child_start(const bcase *c, uint32_t algo, bool exact, int fd) {
    if (c->fd >= 0 && dup2(c->fd, 0) == 0 && dup2(fd, 1) == 1) {
        char align[16];
        snprintf(align, sizeof align, "%u", c->alignment);
        execl("/proc/self/exe", "memplan", "bench", "--child", mp_algo_name(algo), align, exact ? "1" : "0",
              c->name, (char *)NULL);
    }
#ifdef __GLIBC__
    /* the heap inherited from the bench holds freed pages that are still
     * resident: give them back, or the plan would reuse them unseen */
    malloc_trim(0);
#endif
    child_run(c->text, c->name, algo, c->alignment, exact, false, fd);
}

static outcome run_one(const bcase *c, uint32_t algo, bool exact, unsigned limit_s) {
    outcome o = {0};
    int fds[2];
    if (pipe(fds)) {
        o.status = 3;
        return o;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        alarm(limit_s); /* kept across exec */
        child_start(c, algo, exact, fds[1]);
    }
    close(fds[1]);
    ssize_t got = 0;
    while (got < (ssize_t)sizeof o) {
        ssize_t r = read(fds[0], (char *)&o + got, sizeof o - (size_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += r;
    }
    close(fds[0]);
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {}
    if (got != (ssize_t)sizeof o) {
        memset(&o, 0, sizeof o);
        o.status = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? 2 : 3;
        o.ms = (double)limit_s * 1e3;
    }
    if (o.peak_kb == UINT64_MAX || got != (ssize_t)sizeof o) o.peak_kb = (uint64_t)ru.ru_maxrss;
    static bool warned;
    if (got == (ssize_t)sizeof o && !o.fresh && !warned) {
        warned = true;
        fprintf(stderr, "memplan bench: cannot start a fresh process for each plan: plans run in forks of the "
                        "bench, whose small times are inflated\n");
    }
    return o;
}

/* Plans of under a second run `repeat` times, each in a fresh child, and
 * keep the fastest: a timing of a few milliseconds moves by half with
 * the machine's load, and the fastest run is the planner's own cost.
 * Every run must give the same bytes (the planners are deterministic); a
 * run that does not counts as invalid. */
static outcome run_best(const bcase *c, uint32_t algo, bool exact, unsigned limit_s, unsigned repeat) {
    outcome best = run_one(c, algo, exact, limit_s);
    for (unsigned r = 1; r < repeat && best.status == 0 && best.ms < 1000; r++) {
        outcome o = run_one(c, algo, exact, limit_s);
        if (o.status != 0 || o.bytes != best.bytes || !o.valid) {
            best.valid = false;
            break;
        }
        if (o.peak_kb > best.peak_kb) best.peak_kb = o.peak_kb; /* memory: the most any run took */
        if (o.ms < best.ms) best.ms = o.ms;
    }
    return best;
}

/* ------------------------------------------------------------ results */

typedef struct brow {
    char graph[64], family[32];
    const char *algo;
    outcome o;
} brow;

typedef struct bstate {
    brow *rows;
    size_t n, cap;
    unsigned limit_s, repeat;
    /* per profile and planner: it ran out of time at a smaller size, so
     * a larger one is not tried (it would only wait out the limit) */
    bool timed_out[MP_N_PROFILES + 1][MP_MAX_PLANNERS];
} bstate;

static void print_header(const char *title) {
    printf("\n### %s\n\n| case | tensors | algo | bytes | lower bound | ratio | plan ms | peak MiB | speed-up |\n"
           "|---|---:|---|---:|---:|---:|---:|---:|---:|\n", title);
}

static void print_row(const brow *r, double speedup) {
    const outcome *o = &r->o;
    printf("| %s | %llu | %s | ", r->graph, (unsigned long long)o->tensors, r->algo);
    if (o->status == 2) printf("- | - | - | > %.0f | - | |\n", o->ms);
    else if (o->status == 1) printf("refused | | | %.1f | %.1f | |\n", o->ms, (double)o->peak_kb / 1024);
    else if (o->status == 3) printf("CRASHED | | | | | |\n");
    else {
        printf("%llu | %llu | %.4f%s | %.1f | %.1f | ", (unsigned long long)o->bytes,
               (unsigned long long)o->lower, o->ratio, o->valid ? "" : " INVALID", o->ms,
               (double)o->peak_kb / 1024);
        /* negative: greedy ran out of time, so the speed-up is at least */
        if (speedup < 0) printf("> %.0fx |\n", -speedup);
        else if (speedup > 0) printf(speedup < 0.1 ? "%.2fx |\n" : speedup < 10 ? "%.1fx |\n" : "%.0fx |\n", speedup);
        else printf(" |\n");
    }
    fflush(stdout);
}

static brow *add(bstate *s, const bcase *c, const char *algo, outcome o) {
    brow r;
    memset(&r, 0, sizeof r);
    snprintf(r.graph, sizeof r.graph, "%s", c->name);
    snprintf(r.family, sizeof r.family, "%s", c->family);
    r.algo = algo;
    r.o = o;
    MP_VEC_PUSH(s->rows, s->n, s->cap, r);
    return &s->rows[s->n - 1];
}

/* One planner on one case; `prof` is the generator profile (or
 * MP_N_PROFILES) whose earlier timeouts it skips. */
static outcome bench_one(bstate *s, const bcase *c, uint32_t algo, bool exact, uint32_t prof) {
    if (s->timed_out[prof][algo]) { /* a timeout at 10x fewer tensors */
        outcome o = {0};
        o.status = 2;
        o.ms = (double)s->limit_s * 1e3;
        return o;
    }
    outcome o = run_best(c, algo, exact, s->limit_s, s->repeat);
    if (o.status == 2 && prof < MP_N_PROFILES) s->timed_out[prof][algo] = true;
    return o;
}

/* The text in an anonymous in-memory file (children read it as their
 * stdin; nothing on disk), or -1. */
static int text_file(const char *text) {
    int fd = memfd_create("memplan-bench", MFD_CLOEXEC);
    if (fd < 0 || mp_write_all(fd, text, strlen(text))) return fd;
    close(fd);
    return -1;
}

/* Every planner of the table on one case, the reference (greedy) first
 * and each other one with its speed-up over it; opt --exact too when
 * asked. */
static void bench_case(bstate *s, const bcase *in, uint32_t prof, bool exact) {
    bcase cc = *in, *c = &cc;
    c->fd = text_file(c->text);
    outcome g = bench_one(s, c, MP_ALGO_GREEDY, false, prof);
    print_row(add(s, c, mp_algo_name(MP_ALGO_GREEDY), g), 0);
    for (uint32_t k = 0; k < mp_planner_count(); k++) {
        if (k == MP_ALGO_GREEDY) continue;
        outcome o = bench_one(s, c, k, false, prof);
        double speedup = o.ms > 0 && (g.status == 0 || g.status == 2) && o.status == 0 ? g.ms / o.ms : 0;
        if (g.status == 2) speedup = -speedup;
        print_row(add(s, c, mp_algo_name(k), o), speedup);
    }
    if (exact) print_row(add(s, c, "opt-exact", bench_one(s, c, MP_ALGO_OPT, true, prof)), 0);
    if (c->fd >= 0) close(c->fd);
}

static bool load_csv(bcase *c, const char *dir, const char *file, const char *family) {
    char path[1100]; /* dir (< 1024) / file (< 64) */
    snprintf(path, sizeof path, "%s/%s", dir, file);
    mp_err err;
    size_t len;
    char *data = mp_read_file(path, &len, &err);
    if (!data) {
        fprintf(stderr, "memplan bench: %s\n", err.msg);
        return false;
    }
    mp_buf b;
    mp_buf_init(&b);
    int rc = mp_import_csv(data, len, path, &b, &err);
    mp_xfree(data);
    if (rc) {
        fprintf(stderr, "memplan bench: %s\n", err.msg);
        mp_buf_free(&b);
        return false;
    }
    snprintf(c->name, sizeof c->name, "%.*s", (int)strcspn(file, "."), file);
    snprintf(c->family, sizeof c->family, "%s", family);
    c->text = b.data;
    c->alignment = 1;
    return true;
}

/* -------------------------------------------------------------- summary */

/* The row of planner `algo` on the case of row i (rows of one case are
 * adjacent), or NULL. */
static const brow *row_of(const bstate *s, size_t i, const char *algo) {
    size_t lo = i, hi = i;
    while (lo > 0 && !strcmp(s->rows[lo - 1].graph, s->rows[i].graph)) lo--;
    while (hi + 1 < s->n && !strcmp(s->rows[hi + 1].graph, s->rows[i].graph)) hi++;
    for (size_t k = lo; k <= hi; k++)
        if (!strcmp(s->rows[k].algo, algo)) return &s->rows[k];
    return NULL;
}

/* Per realistic profile, each planner's mean ratio over the sizes that
 * greedy and opt both planned. */
static void profile_means(const bstate *s, const char *family) {
    double sum[MP_MAX_PLANNERS] = {0};
    int n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const brow *g = &s->rows[i], *o = row_of(s, i, "opt");
        if (strcmp(g->family, family) || strcmp(g->algo, "greedy") || !o || g->o.status || o->o.status) continue;
        for (uint32_t k = 0; k < mp_planner_count(); k++) {
            const brow *r = row_of(s, i, mp_algo_name(k));
            sum[k] += r && r->o.status == 0 ? r->o.ratio : NAN;
        }
        n++;
    }
    if (!n) return;
    printf("- %s: mean ratio opt %.4f, greedy %.4f (%d sizes both planned)", family, sum[MP_ALGO_OPT] / n,
           sum[MP_ALGO_GREEDY] / n, n);
    for (uint32_t k = 0; k < mp_planner_count(); k++)
        if (k != MP_ALGO_OPT && k != MP_ALGO_GREEDY && isfinite(sum[k]))
            printf("; %s %.4f", mp_algo_name(k), sum[k] / n);
    printf("\n");
}

static void summary(const bstate *s) {
    printf("\n### Targets\n\n");
    static const char *const real[] = {"chain", "wide", "encdec", "transformer"};
    for (int f = 0; f < 4; f++) profile_means(s, real[f]);
    unsigned worse = 0, pairs = 0;
    for (size_t i = 0; i < s->n; i++) {
        const brow *a = &s->rows[i], *b = row_of(s, i, "opt");
        if (strcmp(a->algo, "greedy") || !b || a->o.status || b->o.status) continue;
        pairs++;
        worse += b->o.bytes > a->o.bytes;
    }
    printf("- opt above greedy: %u of %u cases\n", worse, pairs);
    unsigned invalid = 0;
    for (size_t i = 0; i < s->n; i++) invalid += s->rows[i].o.status == 0 && !s->rows[i].o.valid;
    printf("- invalid plans: %u\n", invalid);
}

static void record(const bstate *s, const char *db_path, const char *opts, const char *started) {
    mp_err err;
    mp_db *db = mp_db_open(db_path, &err);
    if (!db) {
        fprintf(stderr, "memplan bench: %s\n", err.msg);
        return;
    }
    mp_result_row *rows = mp_xcalloc(s->n + 1, sizeof *rows);
    for (size_t i = 0; i < s->n; i++) {
        const brow *r = &s->rows[i];
        mp_result_row *x = &rows[i];
        x->graph = r->graph;
        x->algo = r->algo;
        x->options = "";
        x->profile = r->family;
        x->tensors = r->o.tensors;
        x->nodes = r->o.nodes;
        x->lower_bound = r->o.lower;
        x->total_bytes = r->o.bytes;
        x->buffers = "";
        x->ratio = r->o.ratio;
        x->plan_ms = r->o.ms;
        x->peak_kb = r->o.peak_kb;
        x->verify = r->o.status == 1 ? "refused" : r->o.status == 2 ? "timeout" : r->o.status == 3 ? "crash"
                    : r->o.valid ? "valid" : "invalid";
    }
    mp_run_info run = {.kind = "bench", .options = opts, .count = s->n};
    snprintf(run.started, sizeof run.started, "%s", started);
    int64_t id;
    if (mp_db_record(db, &run, rows, s->n, NULL, 0, &id, &err)) fprintf(stderr, "memplan bench: %s\n", err.msg);
    else printf("\nrecorded as bench run %lld in %s\n", (long long)id, db_path);
    mp_xfree(rows);
    mp_db_close(db);
}

/* Generated graphs of 10^2 .. max_tensors tensors in every profile of one
 * method (the reference plans each method alone: no methods profile),
 * the shapes where few are live (plain-chain ... scratch-chain: 1.8.0's
 * greedy, tflm and bestfit were quadratic there) included. */
static void bench_generated(bstate *s, uint64_t max_tensors) {
    print_header("Generated graphs (alignment 16)");
    for (uint64_t n = 100; n <= max_tensors; n *= 10)
        for (uint32_t prof = 0; prof < MP_N_PROFILES; prof++) {
            /* concat: the bound counts an in-place family by its largest
             * live member, below what storage offsets make every planner
             * reserve, so its ratios would not say how good a plan is */
            if (prof == MP_PROFILE_METHODS || prof == MP_PROFILE_CONCAT) continue;
            bcase c;
            memset(&c, 0, sizeof c);
            mp_gen_options g;
            mp_gen_options_default(&g);
            g.seed = 2026;
            g.tensors = n;
            g.profile = prof;
            mp_buf b;
            mp_buf_init(&b);
            mp_gen(&g, &b);
            c.text = b.data;
            c.alignment = 16;
            snprintf(c.name, sizeof c.name, "%s-%llu", mp_gen_profile_name(prof), (unsigned long long)n);
            snprintf(c.family, sizeof c.family, "%s", mp_gen_profile_name(prof));
            bench_case(s, &c, prof, false);
            mp_xfree(c.text);
        }
}

/* The instances of one family (data/<family>/<name><suffix>). */
static void bench_family(bstate *s, const char *data, const char *family, const char *const *names,
                         int n, const char *suffix, bool exact) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", data, family);
    for (int i = 0; i < n; i++) {
        bcase c;
        memset(&c, 0, sizeof c);
        char file[64];
        snprintf(file, sizeof file, "%s%s", names[i], suffix);
        if (!load_csv(&c, dir, file, family)) continue;
        snprintf(c.name, sizeof c.name, "%s", names[i]);
        bench_case(s, &c, MP_N_PROFILES, exact);
        mp_xfree(c.text);
    }
}

/* MiniMalloc's challenging instances (also --exact) and idealloc's. */
static void bench_instances(bstate *s, const char *data) {
    print_header("MiniMalloc challenging instances (alignment 1, capacity 1048576)");
    static const char *const mm[] = {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"};
    bench_family(s, data, "minimalloc", mm, 11, ".1048576.csv", true);
    print_header("idealloc real-model instances (alignment 1)");
    static const char *const ia[] = {"resnet50", "pangu_2.6B", "G_1", "S_1", "Y_1"};
    bench_family(s, data, "idealloc", ia, 5, ".csv", false);
}

/* The models in the corpus (corpus/examples, and the graphs recorded from
 * ExecuTorch in corpus/et), default options: what users' programs look
 * like, next to the generated ones.  glob() sorts the names, so the rows
 * come in the same order on every machine. */
static void bench_corpus(bstate *s, const char *corpus) {
    print_header("Models in corpus/ (alignment 16, default options)");
    static const char *const dirs[] = {"examples", "et"};
    for (int d = 0; d < 2; d++) {
        char pattern[1100];
        snprintf(pattern, sizeof pattern, "%s/%s/*.mpg", corpus, dirs[d]);
        glob_t gl;
        if (glob(pattern, 0, NULL, &gl)) continue;
        for (size_t i = 0; i < gl.gl_pathc; i++) {
            mp_err err;
            size_t len;
            bcase c;
            memset(&c, 0, sizeof c);
            if (!(c.text = mp_read_file(gl.gl_pathv[i], &len, &err))) {
                fprintf(stderr, "memplan bench: %s\n", err.msg);
                continue;
            }
            const char *base = strrchr(gl.gl_pathv[i], '/') + 1;
            snprintf(c.name, sizeof c.name, "%s/%.*s", dirs[d], (int)strcspn(base, "."), base);
            snprintf(c.family, sizeof c.family, "corpus-%s", dirs[d]);
            c.alignment = 16;
            bench_case(s, &c, MP_N_PROFILES, false);
            mp_xfree(c.text);
        }
        globfree(&gl);
    }
}

static const char BENCH_HELP[] =
    "usage: memplan bench [--db FILE] [--data DIR] [--corpus DIR] [--max-tensors N]\n"
    "                     [--limit S] [--repeat N]\n"
    "       memplan bench --history [--runs N] [--cases N] [--keep N]\n"
    "       memplan bench --map [--max-tensors N]\n"
    "       memplan bench --stages [--max-tensors N] [--repeat N] [--db FILE]\n"
    "\n"
    "Plan quality, planning time, peak memory and speed-up over greedy of\n"
    "every planner in the table, side by side: generated graphs of 10^2 ..\n"
    "10^6 tensors in every profile (a planner that ran out of time on a\n"
    "profile is not tried on its larger sizes),\n"
    "MiniMalloc's challenging instances (also with --exact), idealloc's\n"
    "real-model instances and the models in corpus/.  Prints Markdown tables\n"
    "and records the run.\n"
    "\n"
    "options:\n"
    "  --db FILE         metrics database (default results/metrics.db; 'none')\n"
    "  --data DIR        benchmark instances (default bench/data)\n"
    "  --corpus DIR      the models planned too: DIR/examples/*.mpg and\n"
    "                    DIR/et/*.mpg (default corpus)\n"
    "  --max-tensors N   largest generated graph (default 1000000)\n"
    "  --limit S         seconds one plan may take (default 120)\n"
    "  --repeat N        runs of each plan under a second, the fastest kept\n"
    "                    (default 3; every run must give the same bytes); with\n"
    "                    --stages, runs of each stage, the fastest kept\n"
    "  --history         instead: the metrics store on a long history, --runs\n"
    "                    synthetic harness runs (default 1000) of --cases cases\n"
    "                    (default 1000) for every planner in a scratch database:\n"
    "                    the time of each report form, the gate and prune --keep\n"
    "                    (default 100)\n"
    "  --map             instead: planning over a memory map, generated graphs of\n"
    "                    10^3 .. 10^5 tensors (up to --max-tensors) with a fast\n"
    "                    bank of half their need: bytes per bank and the share of\n"
    "                    size x lifetime spilled, plain fill against opt's order\n"
    "  --stages          instead: `memplan gen`, `plan` (opt) and `verify` run as\n"
    "                    processes on transformer graphs of 10^4 .. --max-tensors\n"
    "                    tensors: wall time and peak resident set of each, and\n"
    "                    its growth over the size 10x smaller; recorded (kind\n"
    "                    \"stages\") unless --db none\n";

int mp_cmd_bench(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--child")) return bench_child(argc, argv);
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan bench");
    const char *db = "results/metrics.db", *data = "bench/data", *corpus = "corpus", *arg;
    uint64_t max_tensors = 1000000, limit = 120, repeat = 3, runs = 1000, cases = 1000, keep = 100;
    bool opt, history = false, map = false, stages = false;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) return mp_usage_error(a.cmd, "unexpected argument '%s'", arg);
        if (mp_args_is(&a, arg, "-h") || mp_args_is(&a, arg, "--help")) {
            fputs(BENCH_HELP, stdout);
            return 0;
        } else if (mp_args_is(&a, arg, "--db")) {
            if (!(db = mp_args_value(&a, "--db"))) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--data")) {
            if (!(data = mp_args_value(&a, "--data"))) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--corpus")) {
            if (!(corpus = mp_args_value(&a, "--corpus"))) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--max-tensors")) {
            if (!mp_args_u64(&a, "--max-tensors", 100, 10000000, &max_tensors)) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--limit")) {
            if (!mp_args_u64(&a, "--limit", 1, 86400, &limit)) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--repeat")) {
            if (!mp_args_u64(&a, "--repeat", 1, 100, &repeat)) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--history")) {
            history = true;
        } else if (mp_args_is(&a, arg, "--map")) {
            map = true;
        } else if (mp_args_is(&a, arg, "--stages")) {
            stages = true;
        } else if (mp_args_is(&a, arg, "--runs")) {
            if (!mp_args_u64(&a, "--runs", 1, 1000000, &runs)) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--cases")) {
            if (!mp_args_u64(&a, "--cases", 1, 1000000, &cases)) return MP_EFORMAT;
        } else if (mp_args_is(&a, arg, "--keep")) {
            if (!mp_args_u64(&a, "--keep", 1, 1000000, &keep)) return MP_EFORMAT;
        } else {
            return mp_usage_error(a.cmd, "unknown option '%s'", arg);
        }
    }
    if (history) return mp_bench_history(runs, cases, keep) ? MP_EIO : 0;
    if (map) return mp_bench_map(max_tensors) ? MP_EIO : 0;
    if (stages) return mp_bench_stages(max_tensors, repeat, db) ? MP_EIO : 0;
    bstate s = {NULL, 0, 0, (unsigned)limit, (unsigned)repeat, {{false}}};
    char started[32];
    mp_db_now(started, sizeof started);
    printf("# memplan bench (memplan %s, git %s)\n", MEMPLAN_VERSION, mp_git_revision());
    bench_generated(&s, max_tensors);
    bench_instances(&s, data);
    bench_corpus(&s, corpus);
    summary(&s);
    if (strcmp(db, "none")) {
        char opts[128];
        snprintf(opts, sizeof opts, "bench --max-tensors %llu --limit %llu --repeat %llu",
                 (unsigned long long)max_tensors, (unsigned long long)limit, (unsigned long long)repeat);
        record(&s, db, opts, started);
    }
    mp_xfree(s.rows);
    return 0;
}
