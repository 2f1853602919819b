/* fuzz_pyapi.c - target "pyapi": the library's entry points as the Python
 * binding calls them (python/memplan, interface 2: parse or build, options,
 * plan, write, verify and its text, the accessors, export, summary), each
 * under an allocator that fails from its Nth
 * call on (issue 45: 1.8.0's export freed the caller's buffer twice, and
 * Python's Plan.export segfaulted).
 *
 * Input: N (two bytes; 0: never fail), a mode byte (planner, export
 * format, whether the program comes from the builder), then a graph's
 * text (at most 4 KiB of it), or the builder's calls decoded from the same
 * bytes.  Every call must succeed, say MP_ENOMEM, or reject its input as
 * it does with memory to spare; the caller's frees must then be safe
 * (ASan), and when all is freed no block may be left. */
#include "fuzz.h"

typedef struct counting {
    long calls, fail_at, live;
} counting;

static counting C;

static void *c_malloc(size_t n, void *ctx) {
    (void)ctx;
    if (C.fail_at && ++C.calls >= C.fail_at) return NULL;
    void *p = malloc(n);
    C.live += p != NULL;
    return p;
}

static void *c_realloc(void *p, size_t n, void *ctx) {
    (void)ctx;
    if (C.fail_at && ++C.calls >= C.fail_at) return NULL;
    void *q = realloc(p, n);
    C.live += q && !p;
    return q;
}

static void c_free(void *p, void *ctx) {
    (void)ctx;
    C.live -= p != NULL;
    free(p);
}

static void expect(int rc, const mp_err *err, const char *what) {
    FUZZ_ASSERT(rc == MP_OK || rc == MP_ENOMEM || rc == MP_EFORMAT || rc == MP_EPLAN || rc == MP_EINVALID,
                "%s: code %d: %s", what, rc, err->msg);
}

/* The builder's calls from the input: tensors in a chain, as Builder.build. */
static mp_program *build(rd *r, mp_err *err) {
    mp_builder *b = mp_builder_new(err);
    if (!b) return NULL;
    unsigned n = 1 + u8(r) % 12;
    int rc = mp_builder_graph(b, "main", err);
    char names[12][4];
    for (unsigned i = 0; i < n && rc == MP_OK; i++) {
        snprintf(names[i], sizeof names[i], "t%u", i);
        mp_tensor_spec t = {sizeof(mp_tensor_spec), names[i], u8(r) * 16u, {MP_DEV_CPU, 0}, u8(r) % 4 == 0 ? MP_T_MUTABLE : 0, 0,
                            NULL, NULL, 0, 0};
        rc = mp_builder_tensor(b, &t, err);
    }
    for (unsigned i = 0; i < n && rc == MP_OK; i++) {
        const char *in[1] = {names[i ? i - 1 : 0]}, *out[1] = {names[i]};
        mp_node_spec s = {sizeof(mp_node_spec), i ? MP_NODE_CALL : MP_NODE_PLACEHOLDER, in, i ? 1 : 0, out, 1, {NULL, NULL}, NULL, NULL, 0};
        rc = mp_builder_node(b, &s, err);
    }
    const char *last[1] = {names[n - 1]};
    mp_node_spec o = {sizeof(mp_node_spec), MP_NODE_OUTPUT, last, 1, NULL, 0, {NULL, NULL}, NULL, NULL, 0};
    if (rc == MP_OK) rc = mp_builder_node(b, &o, err);
    mp_program *p = rc == MP_OK ? mp_builder_finish(b, err) : NULL;
    mp_builder_free(b);
    return p;
}

/* Buffers a writer filled outside any guard: failed, or whole. */
static void write_and_free(mp_buf *b) {
    FUZZ_ASSERT(b->failed || b->len == 0 || (b->data && strlen(b->data) == b->len), "a writer's buffer is torn");
    mp_buf_free(b);
}

/* The accessors Python reads a plan and a report with: every index the
 * counts allow, and one past them (which must answer 0 or NULL). */
static void read_plan(const mp_plan *plan, const mp_report *rep) {
    for (uint32_t b = 0; b <= mp_plan_block_count(plan); b++) {
        FUZZ_ASSERT((b < mp_plan_block_count(plan)) == (mp_plan_block_name(plan, b) != NULL), "block name %u", b);
        for (uint32_t i = 0; i <= mp_plan_alloc_count(plan, b); i++)
            (void)mp_plan_alloc_get(plan, b, i, MP_ALLOC_OFFSET);
        (void)mp_plan_buffer_size(plan, b, mp_plan_buffer_count(plan, b));
    }
    for (uint32_t i = 0; i <= mp_report_finding_count(rep, false); i++)
        FUZZ_ASSERT((i < mp_report_finding_count(rep, false)) ==
                        (mp_report_finding(rep, false, i, MP_FINDING_MESSAGE) != NULL), "finding %u", i);
}

static void plan_and_use(const mp_program *p, unsigned mode) {
    static const char *const formats[] = {"json", "minimalloc-csv", "tflm-offline", "nope"};
    mp_err err;
    mp_options *o = mp_options_new(&err);
    if (!o) return expect(err.code, &err, "options");
    if (mp_options_set(o, "algo", mp_planner_name(mode % mp_planner_count()), &err)) {
        expect(err.code, &err, "options");
        return mp_options_free(o);
    }
    mp_plan *plan = mp_plan_program(p, o, &err);
    mp_options_free(o);
    if (!plan) return expect(err.code, &err, "plan");
    mp_buf b;
    mp_buf_init(&b);
    mp_plan_write(plan, &b);
    write_and_free(&b);
    mp_report *rep = mp_verify_plan(p, plan, &err);
    if (!rep) expect(err.code, &err, "verify");
    mp_buf_init(&b);
    mp_report_write_text(rep, &b);
    write_and_free(&b);
    if (rep) read_plan(plan, rep);
    mp_report_free(rep);
    mp_buf_init(&b);
    int rc = mp_plan_export(p, plan, formats[(mode >> 4) % 4], 0, &b, &err);
    expect(rc, &err, "export");
    mp_buf_free(&b); /* what Python's take_bytes does, whatever rc */
    mp_buf_init(&b);
    rc = (mode & 0x40) ? mp_plan_summary(p, plan, mode & 1, &b, &err) : MP_OK;
    expect(rc, &err, "summary");
    mp_buf_free(&b);
    mp_plan_free(plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rd r = {data, size, 0};
    long fail_at = (long)(u8(&r) << 8 | u8(&r));
    unsigned mode = u8(&r);
    C = (counting){0, fail_at, 0};
    mp_allocator a = {c_malloc, c_realloc, c_free, NULL};
    mp_set_allocator(&a);
    mp_err err;
    mp_program *p;
    if (mode & 0x80) {
        p = build(&r, &err);
    } else {
        size_t len = r.n - r.i > 4096 ? 4096 : r.n - r.i;
        p = mp_graph_parse((const char *)r.p + r.i, len, "<py>", &err);
    }
    if (p) plan_and_use(p, mode);
    else expect(err.code, &err, "program");
    mp_program_free(p);
    mp_set_allocator(NULL);
    FUZZ_ASSERT(C.live == 0, "%ld blocks left (allocator failing from call %ld)", C.live, fail_at);
    return 0;
}
