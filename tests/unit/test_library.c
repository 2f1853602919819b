/* test_library.c - the library's contract: the in-memory builder, the
 * planner table, allocation failures coming back as MP_ENOMEM with
 * nothing left allocated, two threads planning at once, the peer packers,
 * the version. */
#include <pthread.h>

#include "helpers.h"

#include <dirent.h>
#include <unistd.h>
#include "peers.h"

/* ------------------------------------------------------------- builder */

static void add_tensor(mp_builder *b, const char *name, uint64_t size, uint32_t flags) {
    mp_err err;
    mp_tensor_spec t = {.struct_size = sizeof(mp_tensor_spec), .name = name, .size = size, .device = {MP_DEV_CPU, 0}, .flags = flags};
    cr_assert_eq(mp_builder_tensor(b, &t, &err), MP_OK, "%s", err.msg);
}

static void add_node(mp_builder *b, uint32_t kind, const char *in, const char *out,
                     const char *t, const char *f) {
    mp_err err;
    /* a cond's one input is its predicate and its branches' operand */
    const char *ins[2] = {in, in}, *outs[1] = {out};
    uint32_t n_in = in == NULL ? 0 : kind == MP_NODE_COND ? 2 : 1;
    mp_node_spec n = {sizeof(mp_node_spec), kind, ins, n_in, outs, out != NULL, {t, f}, NULL, NULL, 0};
    cr_assert_eq(mp_builder_node(b, &n, &err), MP_OK, "%s", err.msg);
}

static char *written(const mp_program *p) {
    mp_buf b;
    mp_buf_init(&b);
    mp_graph_write(p, &b);
    char *s = strcpy(mp_xmalloc(b.len + 1), b.data);
    mp_buf_free(&b);
    return s;
}

Test(library, builder_makes_the_program_a_file_makes) {
    mp_err err;
    mp_builder *b = mp_builder_new(&err);
    cr_assert_not_null(b);
    cr_assert_eq(mp_builder_graph(b, "main", &err), MP_OK);
    add_tensor(b, "p", 32, 0);
    add_node(b, MP_NODE_PLACEHOLDER, NULL, "p", NULL, NULL);
    add_tensor(b, "a", 64, 0); /* declared after a node: still written first */
    add_tensor(b, "r", 16, 0);
    add_node(b, MP_NODE_CALL, "p", "a", NULL, NULL);
    add_node(b, MP_NODE_COND, "a", "r", "t", "f");
    add_node(b, MP_NODE_OUTPUT, "r", NULL, NULL, NULL);
    const char *branches[2][4] = {{"t", "i", "o", NULL}, {"f", "i", "m", "o"}};
    uint64_t sizes[2][3] = {{48, 16, 0}, {48, 100, 16}};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(mp_builder_graph(b, branches[k][0], &err), MP_OK);
        int n = branches[k][3] ? 3 : 2;
        for (int i = 0; i < n; i++) add_tensor(b, branches[k][1 + i], sizes[k][i], 0);
        add_node(b, MP_NODE_PLACEHOLDER, NULL, "i", NULL, NULL);
        for (int i = 1; i < n; i++) add_node(b, MP_NODE_CALL, branches[k][i], branches[k][i + 1], NULL, NULL);
        add_node(b, MP_NODE_OUTPUT, "o", NULL, NULL, NULL);
    }
    mp_program *built = mp_builder_finish(b, &err);
    cr_assert_not_null(built, "%s", err.msg);
    mp_builder_free(b);
    mp_program *parsed = must_parse(FIXTURE_COND);
    char *x = written(built), *y = written(parsed);
    cr_assert_str_eq(x, y);
    mp_xfree(x);
    mp_xfree(y);
    mp_program_free(built);
    mp_program_free(parsed);
}

Test(library, builder_errors_name_the_call) {
    mp_err err;
    mp_builder *b = mp_builder_new(&err);
    mp_builder_graph(b, "main", &err);
    add_tensor(b, "x", 8, 0);
    add_node(b, MP_NODE_PLACEHOLDER, NULL, "x", NULL, NULL);
    add_node(b, MP_NODE_CALL, "x", "nope", NULL, NULL); /* undeclared tensor */
    add_node(b, MP_NODE_OUTPUT, NULL, NULL, NULL, NULL);
    cr_assert_null(mp_builder_finish(b, &err));
    cr_assert_eq(err.code, MP_EFORMAT);
    cr_assert(strstr(err.msg, "builder: graph 'main', node 1 (call):") == err.msg, "%s", err.msg);
    cr_assert(strstr(err.msg, "nope"), "%s", err.msg);
    mp_builder_free(b);
}

Test(library, builder_refuses_names_the_format_cannot_hold) {
    mp_err err;
    mp_builder *b = mp_builder_new(&err);
    cr_assert_eq(mp_builder_graph(b, "two words", &err), MP_EFORMAT);
    cr_assert_eq(mp_builder_graph(b, "main", &err), MP_OK);
    const char *bad[] = {"x\ntensor y 4", "", "a,b", "a=b"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mp_tensor_spec t = {.struct_size = sizeof(mp_tensor_spec), .name = bad[i], .size = 4, .device = {MP_DEV_CPU, 0}};
        cr_assert_eq(mp_builder_tensor(b, &t, &err), MP_EFORMAT, "%s accepted", bad[i]);
    }
    mp_tensor_spec t = {.struct_size = sizeof(mp_tensor_spec), .name = "ok", .size = 4, .device = {MP_DEV_CPU, 0}, .flags = 1u << 7};
    cr_assert_eq(mp_builder_tensor(b, &t, &err), MP_EFORMAT, "unknown flag accepted");
    add_tensor(b, "x", 4, 0);
    add_node(b, MP_NODE_PLACEHOLDER, NULL, "x", NULL, NULL);
    add_node(b, MP_NODE_OUTPUT, "x", NULL, NULL, NULL);
    mp_program *p = mp_builder_finish(b, &err);
    cr_assert_not_null(p, "%s", err.msg); /* nothing of the refused calls was written */
    cr_assert_eq(p->graphs[0].n_tensors, 1);
    mp_program_free(p);
    mp_builder_free(b);
}

Test(library, builder_keeps_operator_names) {
    mp_err err;
    mp_builder *b = mp_builder_new(&err);
    mp_builder_graph(b, "main", &err);
    add_tensor(b, "x", 8, 0);
    add_tensor(b, "y", 8, 0);
    add_node(b, MP_NODE_PLACEHOLDER, NULL, "x", NULL, NULL);
    const char *ins[1] = {"x"}, *outs[1] = {"y"};
    mp_node_spec bad = {sizeof(mp_node_spec), MP_NODE_CALL, ins, 1, outs, 1, {NULL, NULL}, NULL, "two words", 0};
    cr_assert_eq(mp_builder_node(b, &bad, &err), MP_EFORMAT, "an operator with a space accepted");
    mp_node_spec n = {sizeof(mp_node_spec), MP_NODE_CALL, ins, 1, outs, 1, {NULL, NULL}, NULL, "aten.mul.Tensor", 0};
    cr_assert_eq(mp_builder_node(b, &n, &err), MP_OK, "%s", err.msg);
    add_node(b, MP_NODE_OUTPUT, "y", NULL, NULL, NULL);
    mp_program *p = mp_builder_finish(b, &err);
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert_str_eq(p->graphs[0].nodes[1].op, "aten.mul.Tensor");
    mp_program_free(p);
    mp_builder_free(b);
}

/* A delegate's scratch through the builder: the tensor the parser makes
 * from scratch=; on a call node it is the parser's error, naming the call. */
Test(library, builder_declares_delegate_scratch) {
    mp_err err;
    mp_builder *b = mp_builder_new(&err);
    mp_builder_graph(b, "main", &err);
    add_tensor(b, "x", 8, 0);
    add_tensor(b, "y", 8, 0);
    add_node(b, MP_NODE_PLACEHOLDER, NULL, "x", NULL, NULL);
    const char *ins[1] = {"x"}, *outs[1] = {"y"};
    mp_node_spec n = {sizeof(mp_node_spec), MP_NODE_DELEGATE, ins, 1, outs, 1, {NULL, NULL}, "qnn", NULL, 4096};
    cr_assert_eq(mp_builder_node(b, &n, &err), MP_OK, "%s", err.msg);
    add_node(b, MP_NODE_OUTPUT, "y", NULL, NULL, NULL);
    mp_program *p = mp_builder_finish(b, &err);
    cr_assert_not_null(p, "%s", err.msg);
    const mp_tensor *t = &p->graphs[0].tensors[2];
    cr_assert_str_eq(t->name, "scratch.1");
    cr_assert_eq(t->size, 4096);
    cr_assert_eq(t->flags, MP_T_SCRATCH);
    mp_program_free(p);
    mp_builder_free(b);

    b = mp_builder_new(&err);
    mp_builder_graph(b, "main", &err);
    add_tensor(b, "x", 8, 0);
    add_tensor(b, "y", 8, 0);
    add_node(b, MP_NODE_PLACEHOLDER, NULL, "x", NULL, NULL);
    mp_node_spec call = {sizeof(mp_node_spec), MP_NODE_CALL, ins, 1, outs, 1, {NULL, NULL}, NULL, NULL, 4096};
    cr_assert_eq(mp_builder_node(b, &call, &err), MP_OK, "%s", err.msg);
    add_node(b, MP_NODE_OUTPUT, "y", NULL, NULL, NULL);
    cr_assert_null(mp_builder_finish(b, &err));
    cr_assert(strstr(err.msg, "node 1 (call)") && strstr(err.msg, "scratch= is only for delegate nodes"), "%s",
              err.msg);
    mp_builder_free(b);
}

/* ------------------------------------------------------- planner table */

Test(library, every_planner_is_in_the_table_and_plans) {
    cr_assert_geq(mp_planner_count(), 5);
    mp_program *p = must_parse(FIXTURE_COND);
    for (uint32_t i = 0; i < mp_planner_count(); i++) {
        const mp_planner *pl = mp_planner_get(i);
        cr_assert(pl->name && pl->summary && pl->plan && pl->color);
        cr_assert_eq(mp_algo_parse(pl->name), (int)i);
        cr_assert_str_eq(mp_algo_name(i), pl->name);
        mp_options o;
        mp_options_default(&o);
        o.algo = i;
        mp_err err;
        mp_plan *plan = mp_plan_program(p, &o, &err);
        cr_assert_not_null(plan, "%s: %s", pl->name, err.msg);
        cr_assert_str_eq(plan->algo_name, pl->name);
        mp_verify_report r;
        cr_assert_eq(mp_verify(p, plan, &r, &err), MP_OK, "%s", pl->name);
        mp_verify_report_free(&r);
        mp_plan_free(plan);
        o.et_exact = true;
        plan = mp_plan_program(p, &o, &err);
        cr_assert_eq(plan != NULL, (pl->caps & MP_CAP_ET_EXACT) != 0, "%s et_exact", pl->name);
        if (!plan) cr_assert_eq(err.code, MP_EFORMAT);
        mp_plan_free(plan);
    }
    cr_assert_null(mp_planner_get(mp_planner_count()));
    cr_assert_eq(mp_algo_parse("nope"), -1);
    mp_options o;
    mp_options_default(&o);
    o.algo = mp_planner_count();
    mp_err err;
    cr_assert_null(mp_plan_program(p, &o, &err));
    cr_assert_eq(err.code, MP_EFORMAT);
    mp_program_free(p);
}

/* The library loaded is the one the header describes, and the version
 * string is its three numbers. */
Test(library, version_is_the_header_one) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", MP_VERSION_MAJOR, MP_VERSION_MINOR, MP_VERSION_PATCH);
    cr_assert_str_eq(MEMPLAN_VERSION, want);
    cr_assert_str_eq(mp_version(), want);
}

/* ------------------------------------------------- allocation failures */

/* An allocator that fails from its Nth call on and counts live blocks. */
typedef struct failing {
    long calls, fail_at, live;
} failing;

static void *f_malloc(size_t n, void *ctx) {
    failing *f = ctx;
    if (++f->calls >= f->fail_at) return NULL;
    void *p = malloc(n);
    f->live += p != NULL;
    return p;
}

static void *f_realloc(void *p, size_t n, void *ctx) {
    failing *f = ctx;
    if (++f->calls >= f->fail_at) return NULL;
    void *q = realloc(p, n);
    f->live += q && !p;
    return q;
}

static void f_free(void *p, void *ctx) {
    failing *f = ctx;
    f->live -= p != NULL;
    free(p);
}

/* Parse, plan with every planner and verify, the allocator failing at
 * call n: every step succeeds or says MP_ENOMEM, and whatever failed left
 * nothing allocated.  Returns whether every step succeeded. */
static bool run_failing_at(long n, const char *text) {
    failing f = {0, n, 0};
    mp_allocator a = {f_malloc, f_realloc, f_free, &f};
    mp_set_allocator(&a);
    mp_err err;
    bool all = false;
    mp_program *p = mp_graph_parse(text, strlen(text), "t.mpg", &err);
    if (!p) cr_assert_eq(err.code, MP_ENOMEM, "%s", err.msg);
    for (uint32_t k = 0; p && k < mp_planner_count(); k++) {
        long before = f.live;
        mp_options o;
        mp_options_default(&o);
        o.algo = k;
        mp_plan *plan = mp_plan_program(p, &o, &err);
        if (!plan) {
            cr_assert_eq(err.code, MP_ENOMEM, "%s", err.msg);
            cr_assert_eq(f.live, before, "a failed plan left %ld blocks", f.live - before);
            break;
        }
        mp_verify_report r;
        int rc = mp_verify(p, plan, &r, &err);
        cr_assert(rc == MP_OK || rc == MP_ENOMEM, "%d %s", rc, err.msg);
        mp_verify_report_free(&r);
        mp_plan_free(plan);
        cr_assert_eq(f.live, before, "plan and verify left %ld blocks", f.live - before);
        all = rc == MP_OK && k + 1 == mp_planner_count();
    }
    mp_program_free(p);
    cr_assert_eq(f.live, 0, "%ld blocks left after failing at call %ld", f.live, n);
    mp_set_allocator(NULL);
    return all;
}

Test(library, allocation_failures_come_back_as_errors) {
    long n = 1;
    while (!run_failing_at(n, FIXTURE_COND) && n < 100000) n++;
    cr_assert_lt(n, 100000, "never got through");
    cr_assert_gt(n, 20, "the allocator was hardly used (%ld calls)", n);
}

/* Open file descriptors of this process (/proc/self/fd), less the one
 * reading the directory. */
static int open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    cr_assert_not_null(d);
    int n = 0;
    while (readdir(d)) n++;
    closedir(d);
    return n - 3; /* ".", ".." and the directory's own */
}

/* A call run with the allocator failing at its 1st, 2nd, ... allocation
 * until it succeeds: each failure is MP_ENOMEM with nothing left
 * allocated and no file left open; `check` (may be NULL) looks at what
 * each try left, given its return code.  Returns the allocations the
 * successful run took. */
typedef struct oom_call {
    int (*run)(void *ctx, mp_err *err); /* success frees what it made */
    void (*check)(void *ctx, long n, int rc);
    void *ctx;
} oom_call;

static long fail_until_done(const oom_call *c) {
    int before = open_fds();
    for (long n = 1;; n++) {
        failing f = {0, n, 0};
        mp_allocator a = {f_malloc, f_realloc, f_free, &f};
        mp_set_allocator(&a);
        mp_err err;
        int rc = c->run(c->ctx, &err);
        mp_set_allocator(NULL);
        cr_assert_eq(f.live, 0, "failing at call %ld left %ld blocks", n, f.live);
        cr_assert_eq(open_fds(), before, "failing at call %ld left a file open", n);
        if (c->check) c->check(c->ctx, n, rc);
        if (rc == MP_OK) return n;
        cr_assert_eq(rc, MP_ENOMEM, "%s", err.msg);
    }
}

static int load_and_free(void *path, mp_err *err) {
    mp_program *p = mp_graph_load(path, err);
    mp_program_free(p);
    return p ? MP_OK : err->code;
}

/* A load that runs out of memory halfway closes the file it was reading:
 * a file descriptor is not a block for the guard to free. */
Test(library, a_load_that_runs_out_of_memory_closes_its_file) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/memplan-oom-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, FIXTURE_COND, strlen(FIXTURE_COND)), (ssize_t)strlen(FIXTURE_COND));
    close(fd);
    oom_call c = {load_and_free, NULL, path};
    long n = fail_until_done(&c);
    cr_assert_gt(n, 3, "the load hardly allocated (%ld calls)", n);
    unlink(path);
}

/* The entries of a folder other than . and .. */
static int entries(const char *dir) {
    DIR *d = opendir(dir);
    cr_assert(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

typedef struct gen_out {
    mp_gen_options g;
    char dir[32], path[64];
} gen_out;

static int gen_to_file(void *ctx, mp_err *err) {
    gen_out *o = ctx;
    return mp_gen_write(&o->g, o->path, err);
}

/* After a try: no temporary beside the output, and a failed one left the
 * old file as it was. */
static void gen_left_the_old_file(void *ctx, long n, int rc) {
    gen_out *o = ctx;
    cr_assert_eq(entries(o->dir), 1, "failing at call %ld left a temporary", n);
    char line[8] = "";
    FILE *f = fopen(o->path, "r");
    cr_assert(f && fgets(line, sizeof line, f));
    fclose(f);
    cr_assert_str_eq(line, rc == MP_OK ? "memplan" : "old\n", "failing at call %ld: the file begins %s", n, line);
}

/* `memplan gen` out of memory (10^8 tensors hold some 16 GB while they are
 * written; 1.6.4, its limit raised, gave a 2 GiB file cut short and exit
 * 0): failing at every allocation in turn, it writes the whole graph or
 * leaves the old file as it was, with no temporary, no file open and
 * nothing allocated. */
Test(library, gen_out_of_memory_writes_nothing) {
    gen_out o = {.dir = "/tmp/mp-genXXXXXX"};
    cr_assert(mkdtemp(o.dir));
    snprintf(o.path, sizeof o.path, "%s/g.mpg", o.dir);
    FILE *old = fopen(o.path, "w");
    fputs("old\n", old);
    fclose(old);
    mp_gen_options_default(&o.g);
    o.g.seed = 4;
    o.g.tensors = 3000;
    o.g.profile = MP_PROFILE_TRANSFORMER;
    oom_call c = {gen_to_file, gen_left_the_old_file, &o};
    long n = fail_until_done(&c);
    cr_assert_gt(n, 3, "the generator hardly allocated (%ld calls)", n);
    mp_buf whole;
    mp_buf_init(&whole);
    mp_gen(&o.g, &whole);
    size_t len;
    mp_err err;
    char *got = mp_read_file(o.path, &len, &err);
    cr_assert(got && len == whole.len && memcmp(got, whole.data, len) == 0, "the file is not the graph");
    mp_xfree(got);
    mp_buf_free(&whole);
    unlink(o.path);
    rmdir(o.dir);
}

Test(library, a_failing_writer_marks_its_buffer) {
    mp_program *p = must_parse(FIXTURE_CHAIN);
    failing f = {0, 1, 0};
    mp_allocator a = {f_malloc, f_realloc, f_free, &f};
    mp_set_allocator(&a);
    mp_buf b;
    mp_buf_init(&b);
    mp_graph_write(p, &b); /* outside any guard: no abort, a failed buffer */
    cr_assert(b.failed);
    mp_buf_free(&b);
    mp_set_allocator(NULL);
    mp_program_free(p);
}

/* ------------------------------------------------------------- threads */

typedef struct job {
    const char *text;
    char *plans[MP_MAX_PLANNERS];
} job;

static void plan_all(job *j) {
    mp_err err;
    mp_program *p = mp_graph_parse(j->text, strlen(j->text), "t.mpg", &err);
    for (uint32_t k = 0; p && k < mp_planner_count(); k++) {
        mp_options o;
        mp_options_default(&o);
        o.algo = k;
        mp_plan *plan = mp_plan_program(p, &o, &err);
        mp_buf b;
        mp_buf_init(&b);
        if (plan) mp_plan_write(plan, &b);
        else mp_buf_puts(&b, err.msg);
        j->plans[k] = strcpy(mp_xmalloc(b.len + 1), b.data ? b.data : "");
        mp_buf_free(&b);
        mp_plan_free(plan);
    }
    mp_program_free(p);
}

static void *thread_main(void *arg) {
    job *jobs = arg;
    for (int round = 0; round < 5; round++)
        for (int i = 0; i < 2; i++) {
            job j = {jobs[i].text, {0}};
            plan_all(&j);
            for (uint32_t k = 0; k < mp_planner_count(); k++) {
                if (strcmp(j.plans[k], jobs[i].plans[k]) != 0) return (void *)1;
                mp_xfree(j.plans[k]);
            }
        }
    return NULL;
}

Test(library, two_threads_plan_two_graphs_at_once) {
    mp_gen_options g;
    mp_gen_options_default(&g);
    g.seed = 7;
    g.tensors = 400;
    mp_buf big;
    mp_buf_init(&big);
    mp_gen(&g, &big);
    job jobs[2] = {{big.data, {0}}, {FIXTURE_COND, {0}}};
    for (int i = 0; i < 2; i++) plan_all(&jobs[i]); /* one thread first: the expected bytes */
    pthread_t t[2];
    for (int i = 0; i < 2; i++) cr_assert_eq(pthread_create(&t[i], NULL, thread_main, jobs), 0);
    for (int i = 0; i < 2; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        cr_assert_null(bad, "a thread's plans differ from the single-threaded ones");
    }
    for (int i = 0; i < 2; i++)
        for (uint32_t k = 0; k < mp_planner_count(); k++) mp_xfree(jobs[i].plans[k]);
    mp_buf_free(&big);
}

/* An allocator whose realloc always moves the block, as ASan's and
 * valgrind's do, counting the bytes it copies: an array grown one entry
 * at a time copies O(n^2) bytes there, though glibc mostly grows it in
 * place. */
typedef struct moving {
    uint64_t copied;
    uint32_t big_moves; /* reallocs of blocks from 256 KiB */
} moving;

static void *m_malloc(size_t n, void *ctx) {
    (void)ctx;
    max_align_t *h = malloc(sizeof *h + n);
    if (!h) return NULL;
    *(size_t *)(void *)h = n;
    return h + 1;
}

static void *m_realloc(void *p, size_t n, void *ctx) {
    moving *m = ctx;
    void *q = m_malloc(n, ctx);
    if (!q || !p) return q;
    size_t old = *(size_t *)(void *)((max_align_t *)p - 1), kept = old < n ? old : n;
    memcpy(q, p, kept);
    m->copied += kept;
    m->big_moves += old >= (256u << 10);
    free((max_align_t *)p - 1);
    return q;
}

static void m_free(void *p, void *ctx) {
    (void)ctx;
    if (p) free((max_align_t *)p - 1);
}

/* The generator's options for a program of `profile` (seed 1). */
static mp_gen_options gen_options(int profile, uint32_t tensors) {
    mp_gen_options g;
    mp_gen_options_default(&g);
    g.profile = profile;
    g.tensors = tensors;
    g.seed = 1;
    return g;
}

/* A generated program's text (seed 1). */
static void gen_text(int profile, uint32_t tensors, mp_buf *text) {
    mp_gen_options g = gen_options(profile, tensors);
    mp_buf_init(text);
    mp_gen(&g, text);
}

/* Bytes a moving realloc copies while `algo` plans a generated program of
 * `tensors` tensors of `profile` and verifies the plan (the allocator is
 * set first: every block of the program is its own). */
static uint64_t copied_planning(int profile, uint32_t tensors, uint32_t algo, bool per_device) {
    moving m = {0};
    mp_allocator a = {m_malloc, m_realloc, m_free, &m};
    mp_set_allocator(&a);
    mp_buf text;
    gen_text(profile, tensors, &text);
    mp_err err;
    mp_program *p = mp_graph_parse(text.data, text.len, "shape.mpg", &err);
    cr_assert_not_null(p, "%s", err.msg);
    uint64_t before = m.copied;
    mp_options o;
    mp_options_default(&o);
    o.per_device = per_device;
    o.algo = algo;
    mp_plan *plan = mp_plan_program(p, &o, &err);
    if (plan) {
        mp_verify_report r;
        cr_assert_eq(mp_verify(p, plan, &r, &err), MP_OK, "%s", err.msg);
        cr_assert_eq(r.n_violations, 0);
        mp_verify_report_free(&r);
        mp_plan_free(plan);
    } else {
        cr_assert_eq(err.code, MP_EPLAN, "%s", err.msg); /* naive refuses in-place tensors */
    }
    uint64_t copied = m.copied - before;
    mp_program_free(p);
    mp_buf_free(&text);
    mp_set_allocator(NULL);
    return copied;
}

/* Arrays grow geometrically, so a realloc that moves copies a few times
 * their final bytes (at most 0.9 MB here), not O(n^2).  Found by the
 * `shapes` fuzz target (corpus/shapes/crash-many-devices-table-growth-9abf6c05, 12.7 s
 * under ASan): with 19,809 tensors each on a device of its own, opt's
 * buffer table grew a device at a time (3.1 GB copied; every planner
 * builds that table: 200 MB at 5,000); naive's buffers grew a pool at a
 * time on `many-pools` (4.3 MB at 5,000 tensors). */
Test(library, arrays_grow_geometrically_under_a_moving_realloc) {
    const uint64_t most = UINT64_C(2) << 20;
    uint64_t got = copied_planning(MP_PROFILE_MANY_DEVICES, 19809, MP_ALGO_OPT, true);
    cr_assert_lt(got, most, "opt, 19,809 devices: %llu bytes copied by realloc", (unsigned long long)got);
    for (uint32_t k = 0; k < mp_planner_count(); k++) {
        got = copied_planning(MP_PROFILE_MANY_DEVICES, 5000, k, true);
        cr_assert_lt(got, most, "%s, 5,000 devices: %llu bytes copied", mp_algo_name(k), (unsigned long long)got);
        got = copied_planning(MP_PROFILE_MANY_POOLS, 5000, k, false);
        cr_assert_lt(got, most, "%s, many pools: %llu bytes copied", mp_algo_name(k), (unsigned long long)got);
    }
}

/* Both parsers count a graph's (a block's) lines ahead and size their
 * arrays once, so each large array is resized once, to its exact size,
 * when the program or plan takes it over.  Grown by doubling, the plan's
 * allocs at 10^7 tensors lost their huge pages where the kernel moved
 * them, and the verifier's first pass over them took 380 ms instead of
 * 17 (docs/notes/optimized.md). */
Test(library, parsers_size_their_arrays_once) {
    mp_buf text;
    gen_text(MP_PROFILE_TRANSFORMER, 30000, &text);
    mp_options o;
    mp_options_default(&o);
    char *plan_text = plan_of(text.data, &o);
    moving m = {0};
    mp_allocator a = {m_malloc, m_realloc, m_free, &m};
    mp_set_allocator(&a);
    mp_err err;
    mp_program *p = mp_graph_parse(text.data, text.len, "t.mpg", &err);
    cr_assert_not_null(p, "%s", err.msg);
    uint32_t graph_moves = m.big_moves;
    mp_plan *plan = mp_plan_parse(plan_text, strlen(plan_text), "t.mpp", p, &err);
    cr_assert_not_null(plan, "%s", err.msg);
    uint32_t plan_moves = m.big_moves - graph_moves;
    cr_assert_gt(plan->graphs[0].n_allocs, 4096u, "a plan too small to test");
    mp_plan_free(plan);
    mp_program_free(p);
    mp_set_allocator(NULL);
    cr_assert_leq(graph_moves, 2, "graph: %u reallocs of large blocks (tensors, nodes: one each)", graph_moves);
    cr_assert_leq(plan_moves, 1, "plan: %u reallocs of large blocks (allocs: one)", plan_moves);
    mp_xfree(plan_text);
    mp_buf_free(&text);
}

static bool discard(const char *data, size_t len, void *ctx) {
    (void)data;
    *(size_t *)ctx += len;
    return true;
}

/* The generator sizes a large graph's arrays for its whole budget at
 * once: grown by doubling, they were moved by the kernel and lost their
 * huge pages (1 GB of tensors at 10^7).  Its text goes to a sink in
 * pieces, so no large block is resized at all. */
Test(library, gen_sizes_a_large_graphs_arrays_once) {
    static const int profiles[] = {MP_PROFILE_TRANSFORMER, MP_PROFILE_CHAIN, MP_PROFILE_ENCDEC};
    for (int k = 0; k < 3; k++) {
        moving m = {0};
        mp_allocator a = {m_malloc, m_realloc, m_free, &m};
        mp_set_allocator(&a);
        mp_gen_options g = gen_options(profiles[k], 100000);
        mp_buf b;
        mp_buf_init(&b);
        mp_buf_reserve(&b, 4u << 20); /* the pieces' buffer: its growth is not the graph's */
        size_t written = 0;
        mp_gen_to(&g, &b, discard, &written);
        mp_buf_free(&b);
        mp_set_allocator(NULL);
        cr_assert_gt(written, (size_t)1 << 20, "a graph too small to test");
        cr_assert_eq(m.big_moves, 0, "%s: %u reallocs of large blocks", mp_gen_profile_name(profiles[k]),
                     m.big_moves);
    }
}

/* --------------------------------------------------------------- peers */

/* Three fixed items leave gaps [100,300) and [350,400): first fit takes
 * the lowest that holds 50 bytes, best fit the smallest. */
Test(library, tflm_takes_the_lowest_gap_bestfit_the_smallest) {
    pk_item items[4] = {{100, 0, 9, true, 0}, {50, 0, 9, true, 300}, {100, 0, 9, true, 400},
                        {50, 2, 3, false, 0}};
    cr_assert_eq(mp_tflm_pack(items, 4), 500);
    cr_assert_eq(items[3].offset, 100);
    items[3].offset = 0;
    cr_assert_eq(mp_bestfit_pack(items, 4), 500);
    cr_assert_eq(items[3].offset, 350);
}

/* Largest first, each above what it overlaps: a staircase of three. */
Test(library, peers_place_the_largest_first) {
    pk_item items[3] = {{10, 0, 1, false, 0}, {30, 1, 2, false, 0}, {20, 0, 2, false, 0}};
    for (int k = 0; k < 2; k++) {
        uint64_t peak = k ? mp_bestfit_pack(items, 3) : mp_tflm_pack(items, 3);
        cr_assert_eq(items[1].offset, 0);  /* 30 bytes first */
        cr_assert_eq(items[2].offset, 30); /* then 20 above it */
        cr_assert_eq(items[0].offset, 50); /* then 10 above both */
        cr_assert_eq(peak, 60);
    }
}

/* Inside a guard a large freed block is kept and handed to the next large
 * request of about its size; one much smaller is cut from it; one larger
 * than every kept block gets a block of its own, and the largest kept one
 * is freed: grown, a kept block kept its bytes but the kernel moved its
 * pages, which lost their huge pages (take_kept).  The guard frees what
 * it still keeps (the sanitizers' leak check would see it otherwise). */
typedef struct kept_call {
    void *first, *again, *bigger;
    bool grown; /* the larger request got the kept block's bytes */
} kept_call;

static int kept_work(void *ctx) {
    kept_call *k = ctx;
    const size_t mb = (size_t)1 << 20;
    k->first = mp_xmalloc(40 * mb);
    memset(k->first, 1, 40 * mb);
    mp_xfree(k->first);
    k->again = mp_xcalloc(40 * mb - 1000, 1);
    for (size_t i = 0; i < 40 * mb - 1000; i += 4096) cr_assert_eq(((unsigned char *)k->again)[i], 0);
    memset(k->again, 0xab, 40 * mb - 1000);
    mp_xfree(k->again);
    k->bigger = mp_xmalloc(100 * mb);
    const unsigned char *b = k->bigger;
    k->grown = b[0] == 0xab && b[20 * mb] == 0xab; /* fresh: zero (ASan: its fill pattern) */
    memset(k->bigger, 2, 100 * mb);
    mp_xfree(k->bigger);
    return MP_OK;
}

Test(library, large_blocks_are_reused_inside_a_guard) {
    kept_call k = {0};
    mp_err err;
    cr_assert_eq(mp_guard_run(&err, kept_work, &k), MP_OK);
    cr_assert_eq(k.again, k.first, "a 40 MB request did not reuse the 40 MB block just freed");
    cr_assert(!k.grown, "a 100 MB request grew the kept 40 MB block");
}

/* Putting keys at once (mp_strmap_put_all), below and above the count
 * where they go in by bucket: every new key is found with its value, and
 * of the keys already there the smallest value is reported, with the
 * value there (keys from before the call, and twice within it). */
typedef struct put_all_keys {
    char (*names)[16];
    int32_t base;
} put_all_keys;

static void put_all_key(void *ctx, size_t k, mp_strmap_entry *e) {
    const put_all_keys *keys = ctx;
    const char *s = keys->names[k];
    *e = (mp_strmap_entry){s, mp_strmap_hash(s, strlen(s)), keys->base + (int32_t)k};
}

Test(library, name_map_puts_many_keys_at_once) {
    static char names[9000][16];
    static const size_t counts[2] = {100, 9000};
    for (int c = 0; c < 2; c++) {
        size_t n = counts[c];
        mp_strmap m;
        mp_strmap_init(&m);
        cr_assert_eq(mp_strmap_put(&m, "old", 3, 7), -1);
        for (size_t k = 0; k < n; k++) snprintf(names[k], sizeof names[k], "k%d", (int)k);
        snprintf(names[n - 10], sizeof names[0], "old");   /* there from before */
        snprintf(names[n / 2 + 3], sizeof names[0], "k5"); /* twice in the call: smaller */
        put_all_keys keys = {names, 1000};
        int32_t prev = -2;
        cr_assert_eq(mp_strmap_put_all(&m, n, put_all_key, &keys, &prev), 1000 + (int32_t)(n / 2 + 3));
        cr_assert_eq(prev, 1005, "%zu keys: the first k5 is there", n);
        cr_assert_eq(mp_strmap_get(&m, "old", 3), 7);
        cr_assert_eq(m.count, n - 1, "%zu keys", n);
        for (size_t k = 0; k < n; k++)
            if (k != n - 10 && k != n / 2 + 3) cr_assert_eq(mp_strmap_get(&m, names[k], strlen(names[k])), 1000 + (int32_t)k);
        mp_strmap_free(&m);
    }
}

/* The arena packs names (no padding after a name's NUL), aligns small
 * arrays to their items and everything else for any type; a request
 * larger than a chunk gets its own. */
Test(library, the_arena_packs_names_and_aligns_the_rest) {
    mp_arena *a = mp_arena_new();
    char *x = mp_arena_strndup(a, "abc", 3), *y = mp_arena_strndup(a, "de", 2);
    cr_assert_str_eq(x, "abc");
    cr_assert_str_eq(y, "de");
    cr_assert_eq(y, x + 4, "names are packed");
    int32_t *v = mp_arena_alloc_aligned(a, 3 * sizeof *v, _Alignof(int32_t));
    cr_assert_eq((uintptr_t)v % _Alignof(int32_t), 0);
    cr_assert_leq((char *)v - (y + 3), (ptrdiff_t)_Alignof(int32_t), "at most the padding to an int32_t");
    cr_assert(v[0] == 0 && v[1] == 0 && v[2] == 0, "zeroed");
    (void)mp_arena_strndup(a, "f", 1);
    uint64_t *w = mp_arena_alloc(a, sizeof *w);
    cr_assert_eq((uintptr_t)w % _Alignof(max_align_t), 0);
    char *big = mp_arena_alloc(a, 64u << 20); /* past the largest chunk */
    cr_assert(big[0] == 0 && big[(64u << 20) - 1] == 0);
    char *z = mp_arena_strndup(a, "ghij", 4);
    cr_assert_str_eq(z, "ghij");
    cr_assert_str_eq(x, "abc", "earlier names stay");
    mp_arena_free(a);
}

/* The name map: a reserved map takes that many keys without growing, and
 * the lookup with a given hash finds what the plain one does. */
Test(library, name_map_reserve_and_hashed_lookups) {
    mp_strmap m;
    mp_strmap_init(&m);
    cr_assert_eq(mp_strmap_get_hashed(&m, "a", 1, mp_strmap_hash("a", 1)), -1);
    mp_strmap_reserve(&m, 5000);
    size_t cap = m.cap;
    cr_assert_gt(cap * 3, 5000 * 4, "under 3/4 full with 5000 keys");
    static char names[5000][16];
    for (int i = 0; i < 5000; i++) {
        snprintf(names[i], sizeof names[i], "t%d", i);
        cr_assert_eq(mp_strmap_put(&m, names[i], strlen(names[i]), i), -1);
    }
    cr_assert_eq(m.cap, cap, "the map grew after reserving");
    for (int i = 0; i < 5000; i++) {
        uint32_t h = mp_strmap_hash(names[i], strlen(names[i]));
        cr_assert_eq(mp_strmap_get_hashed(&m, names[i], strlen(names[i]), h), i);
        cr_assert_eq(mp_strmap_get(&m, names[i], strlen(names[i])), i);
    }
    cr_assert_eq(mp_strmap_get(&m, "t5000", 5), -1);
    mp_strmap_free(&m);
}

/* ------------------------------- every public call under allocation failure */

/* Every public function that allocates, run with the allocator failing at
 * its 1st, 2nd, ... call (issue 45, B2): each try says MP_ENOMEM (or, for
 * the writers that run outside a guard, marks its buffer failed) and
 * leaves nothing allocated, and the caller's documented frees are then
 * safe: 1.8.0's mp_plan_export freed the caller's buffer when it unwound,
 * and the caller's mp_buf_free freed it again.  (mp_banks_parse allocates
 * nothing.) */
typedef struct api_fixture {
    mp_program *prog, *chain; /* tflm-offline takes a program of one graph */
    mp_plan *plan, *chain_plan;
    char *plan_text, path[64];
} api_fixture;

/* Into an empty buffer (the bug's case: its first block is made inside
 * the guard) and into one that holds a block already. */
static int api_export(api_fixture *x, const char *format, mp_err *err) {
    bool one = strcmp(format, "tflm-offline") == 0;
    const mp_program *p = one ? x->chain : x->prog;
    const mp_plan *pl = one ? x->chain_plan : x->plan;
    mp_buf b;
    mp_buf_init(&b);
    int rc = mp_plan_export(p, pl, format, 1, &b, err);
    mp_buf_free(&b);
    if (rc != MP_OK) return rc;
    mp_buf_init(&b);
    mp_buf_puts(&b, "kept:");
    rc = b.failed ? MP_ENOMEM : mp_plan_export(p, pl, format, 1, &b, err);
    cr_assert(b.failed || strncmp(b.data, "kept:", 5) == 0, "export lost what the buffer held");
    mp_buf_free(&b);
    return rc;
}
static int api_export_json(void *x, mp_err *err) { return api_export(x, "json", err); }
static int api_export_csv(void *x, mp_err *err) { return api_export(x, "minimalloc-csv", err); }
static int api_export_tflm(void *x, mp_err *err) { return api_export(x, "tflm-offline", err); }

static int api_plan_parse(void *ctx, mp_err *err) {
    api_fixture *x = ctx;
    mp_plan *p = mp_plan_parse(x->plan_text, strlen(x->plan_text), "t.mpp", x->prog, err);
    mp_plan_free(p);
    return p ? MP_OK : err->code;
}

static int api_plan_load(void *ctx, mp_err *err) {
    api_fixture *x = ctx;
    mp_plan *p = mp_plan_load(x->path, x->prog, err);
    mp_plan_free(p);
    return p ? MP_OK : err->code;
}

/* A writer outside any guard: a failed allocation marks its buffer. */
static int writer_rc(mp_buf *b) {
    int rc = b->failed ? MP_ENOMEM : MP_OK;
    mp_buf_free(b);
    return rc;
}

static int api_writers(void *ctx, mp_err *err) {
    api_fixture *x = ctx;
    (void)err;
    mp_buf b;
    mp_buf_init(&b);
    mp_graph_write(x->prog, &b);
    int rc = writer_rc(&b);
    mp_buf_init(&b);
    mp_plan_write(x->plan, &b);
    if (rc == MP_OK) rc = writer_rc(&b);
    else mp_buf_free(&b);
    return rc;
}

static int api_verify_and_write(void *ctx, mp_err *err) {
    api_fixture *x = ctx;
    mp_verify_report r;
    int rc = mp_verify(x->prog, x->plan, &r, err);
    if (rc == MP_OK) {
        mp_buf b;
        mp_buf_init(&b);
        mp_verify_write_text(&r, &b);
        rc = writer_rc(&b);
        mp_buf_init(&b);
        mp_verify_write_json(&r, &b);
        if (rc == MP_OK) rc = writer_rc(&b);
        else mp_buf_free(&b);
    }
    mp_verify_report_free(&r);
    return rc;
}

/* The builder checks its allocations one by one (it lives across calls). */
static int api_builder(void *ctx, mp_err *err) {
    (void)ctx;
    mp_builder *b = mp_builder_new(err);
    if (!b) return err->code;
    mp_tensor_spec x = {.struct_size = sizeof(mp_tensor_spec), .name = "x", .size = 64, .device = {MP_DEV_CPU, 0}};
    mp_tensor_spec y = {.struct_size = sizeof(mp_tensor_spec), .name = "y", .size = 32, .device = {MP_DEV_CPU, 0}};
    const char *xs[1] = {"x"}, *ys[1] = {"y"};
    mp_node_spec nodes[3] = {{sizeof(mp_node_spec), MP_NODE_PLACEHOLDER, NULL, 0, xs, 1, {NULL, NULL}, NULL, NULL, 0},
                             {sizeof(mp_node_spec), MP_NODE_CALL, xs, 1, ys, 1, {NULL, NULL}, NULL, "aten::relu", 0},
                             {sizeof(mp_node_spec), MP_NODE_OUTPUT, ys, 1, NULL, 0, {NULL, NULL}, NULL, NULL, 0}};
    int rc = mp_builder_graph(b, "main", err);
    if (rc == MP_OK) rc = mp_builder_tensor(b, &x, err);
    if (rc == MP_OK) rc = mp_builder_tensor(b, &y, err);
    for (int i = 0; i < 3 && rc == MP_OK; i++) rc = mp_builder_node(b, &nodes[i], err);
    mp_program *p = rc == MP_OK ? mp_builder_finish(b, err) : NULL;
    if (rc == MP_OK && !p) rc = err->code;
    mp_program_free(p);
    mp_builder_free(b);
    return rc;
}

Test(library, every_public_call_survives_allocation_failure) {
    api_fixture x = {0};
    x.prog = must_parse(FIXTURE_COND);
    mp_options o;
    mp_options_default(&o);
    mp_err err;
    x.plan = mp_plan_program(x.prog, &o, &err);
    cr_assert_not_null(x.plan, "%s", err.msg);
    x.chain = must_parse(FIXTURE_CHAIN);
    x.chain_plan = mp_plan_program(x.chain, &o, &err);
    cr_assert_not_null(x.chain_plan, "%s", err.msg);
    mp_buf b;
    mp_buf_init(&b);
    mp_plan_write(x.plan, &b);
    x.plan_text = b.data;
    snprintf(x.path, sizeof x.path, "/tmp/memplan-api-%d.mpp", (int)getpid());
    FILE *f = fopen(x.path, "w");
    cr_assert(f && fwrite(b.data, 1, b.len, f) == b.len);
    fclose(f);
    int (*calls[])(void *, mp_err *) = {api_export_json, api_export_csv, api_export_tflm, api_plan_parse,
                                        api_plan_load, api_writers, api_verify_and_write, api_builder};
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
        oom_call c = {calls[i], NULL, &x};
        long n = fail_until_done(&c);
        cr_assert_gt(n, 1, "call %zu never allocated", i);
    }
    unlink(x.path);
    mp_buf_free(&b);
    mp_plan_free(x.plan);
    mp_program_free(x.prog);
    mp_plan_free(x.chain_plan);
    mp_program_free(x.chain);
}

/* One JSON string writer (issue 47: core's passed invalid UTF-8 through,
 * viz's own wrote '?'; viz now uses core's): every JSON the project writes stays valid whatever
 * bytes a file name or a database string holds. */
Test(library, json_strings_are_valid_utf8_whatever_the_bytes) {
    mp_buf b;
    mp_buf_init(&b);
    mp_buf_put_json_string(&b, "a\"\\\n\xff\xc3\xa9\xed\xa0\x80z");
    cr_assert_str_eq(b.data, "\"a\\\"\\\\\\u000a?\xc3\xa9???z\"");
    b.len = 0;
    mp_buf_put_json_string(&b, "\xc0\xaf");
    cr_assert_str_eq(b.data, "\"??\"");
    mp_buf_free(&b);
}
