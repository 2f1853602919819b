/* test_pins.c - fixed places: pinned offsets (at=), the overlap test of fixed regions
 * against the obvious quadratic one, opt and the peers placing every pin
 * exactly (with in-place members, devices and --exact), the refusals
 * (conflicts, alignment, the reference planners), the verifier's rule and
 * the builder; and several methods' shared state, pinned in each method. */
#include "helpers.h"

#define HDR "memplan-graph 1\n"

static uint64_t xs(uint64_t *x) {
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

static bool meet(const mp_rect *a, const mp_rect *b) {
    return a->lo < a->hi && b->lo < b->hi && a->start <= b->end && b->start <= a->end && a->lo < b->hi && b->lo < a->hi;
}

Test(pins, overlap_test_agrees_with_every_pair) {
    uint64_t seed = 88172645463325252ull;
    unsigned hits = 0;
    for (int trial = 0; trial < 3000; trial++) {
        uint32_t n = 1 + (uint32_t)(xs(&seed) % 12);
        mp_rect r[12];
        for (uint32_t i = 0; i < n; i++) {
            int32_t s = (int32_t)(xs(&seed) % 20), len = (int32_t)(xs(&seed) % 6);
            uint64_t lo = xs(&seed) % 40, sz = xs(&seed) % 9; /* size 0: no bytes */
            r[i] = (mp_rect){s, s + len, lo, lo + sz};
        }
        bool want = false;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = i + 1; j < n; j++) want |= meet(&r[i], &r[j]);
        uint32_t a = 99, b = 99;
        bool got = mp_rects_overlap(r, n, &a, &b);
        cr_assert_eq(got, want, "trial %d: overlap %d, want %d", trial, got, want);
        if (got) {
            cr_assert(a < b && b < n && meet(&r[a], &r[b]), "trial %d: pair %u,%u does not meet", trial, a, b);
            hits++;
        }
    }
    cr_assert_gt(hits, 300, "too few overlapping trials (%u) to mean anything", hits);
}

/* A chain with an in-place member of a pinned base, two devices under
 * --per-device and a pin in each device's buffer. */
static const char PINNED[] = HDR
    "graph main\n"
    "tensor x 100 at=512\ntensor a 300\ntensor b 300 inplace=a\ntensor c 64 device=cuda:0 at=128\n"
    "tensor d 200 device=cuda:0\ntensor y 100\n"
    "node placeholder out=x\nnode call in=x out=a\nnode call in=a out=b\nnode call in=b out=c\n"
    "node call in=c out=d\nnode call in=d,x out=y\nnode output in=y\nend\n";

/* Tensor `name`'s allocation in graph `graph`'s block, or NULL. */
static const mp_alloc *alloc_in(const mp_plan *plan, const char *graph, const char *name) {
    for (uint32_t i = 0; i < plan->n_graphs; i++)
        if (!strcmp(plan->graphs[i].name, graph))
            for (uint32_t k = 0; k < plan->graphs[i].n_allocs; k++)
                if (!strcmp(plan->graphs[i].allocs[k].name, name)) return &plan->graphs[i].allocs[k];
    return NULL;
}

Test(pins, every_placing_planner_keeps_the_pins_and_the_plan_verifies) {
    mp_program *p = must_parse(PINNED);
    const uint32_t algos[] = {MP_ALGO_OPT, (uint32_t)mp_algo_parse("tflm"), (uint32_t)mp_algo_parse("bestfit")};
    for (int per_device = 0; per_device < 2; per_device++)
        for (int exact = 0; exact < 2; exact++)
            for (size_t k = 0; k < sizeof algos / sizeof *algos; k++) {
                mp_options o;
                mp_options_default(&o);
                o.algo = algos[k];
                o.per_device = per_device;
                o.exact = exact;
                mp_err err;
                mp_plan *plan = mp_plan_program(p, &o, &err);
                cr_assert(plan, "%s: %s", mp_algo_name(algos[k]), err.msg);
                cr_assert_eq(alloc_in(plan, "main", "x")->offset, 512, "%s per_device=%d exact=%d: x at %llu",
                             mp_algo_name(algos[k]), per_device, exact,
                             (unsigned long long)alloc_in(plan, "main", "x")->offset);
                cr_assert_eq(alloc_in(plan, "main", "c")->offset, 128);
                mp_verify_report r;
                cr_assert_eq(mp_verify(p, plan, &r, &err), MP_OK, "%s per_device=%d: %s", mp_algo_name(algos[k]),
                             per_device, r.n_v ? r.v[0].msg : err.msg);
                mp_verify_report_free(&r);
                mp_plan_free(plan);
            }
    mp_program_free(p);
}

Test(pins, the_reference_planners_refuse_as_a_limit) {
    mp_program *p = must_parse(PINNED);
    for (int et = 0; et < 2; et++)
        for (uint32_t algo = MP_ALGO_GREEDY; algo <= MP_ALGO_NAIVE; algo++) {
            mp_options o;
            mp_options_default(&o);
            o.algo = algo;
            o.et_exact = et;
            mp_err err;
            cr_assert_null(mp_plan_program(p, &o, &err));
            cr_assert_eq(err.code, MP_EPLAN);
            cr_assert(err.limit, "another planner may plan it: a limit refusal");
            cr_assert(strstr(err.msg, "t.mpg:3: tensor 'x' is pinned (at=512)"), "%s", err.msg);
        }
    mp_program_free(p);
}

static void expect_refusal(const char *text, uint32_t alignment, const char *fragment) {
    mp_program *p = must_parse(text);
    mp_options o;
    mp_options_default(&o);
    o.algo = MP_ALGO_OPT;
    o.alignment = alignment;
    mp_err err;
    cr_assert_null(mp_plan_program(p, &o, &err), "planned: %s", text);
    cr_assert_eq(err.code, MP_EPLAN);
    cr_assert_not(err.limit, "a broken pin is the file's fault, not a limit");
    cr_assert(strstr(err.msg, fragment), "message '%s' lacks '%s'", err.msg, fragment);
    mp_program_free(p);
}

Test(pins, conflicts_and_misalignment_are_refused_with_file_and_line) {
    /* both live at node 2 on bytes [64, 100) */
    expect_refusal(HDR "graph main\ntensor x 100 at=0\ntensor y 100 at=64\ntensor z 4\nnode placeholder out=x\n"
                       "node call in=x out=y\nnode call in=x,y out=z\nnode output in=z\nend\n",
                   16, "t.mpg:3: tensor 'x' pinned at 0: bytes [0,112) overlap tensor 'y' (line 4)");
    expect_refusal(HDR "graph main\ntensor x 100 at=8\nnode placeholder out=x\nnode output in=x\nend\n", 16,
                   "t.mpg:3: tensor 'x' pinned at 8: not a multiple of the alignment 16");
    /* the same bytes at different times are no conflict */
    mp_program *p = must_parse(HDR "graph main\ntensor x 16 at=0\ntensor y 16\ntensor z 16 at=0\n"
                                   "node placeholder out=x\nnode call in=x out=y\nnode call in=y out=z\n"
                                   "node output in=z\nend\n");
    mp_options o;
    mp_options_default(&o);
    o.algo = MP_ALGO_OPT;
    mp_err err;
    mp_plan *plan = mp_plan_program(p, &o, &err);
    cr_assert(plan, "%s", err.msg);
    cr_assert_eq(alloc_in(plan, "main", "z")->offset, 0);
    mp_plan_free(plan);
    mp_program_free(p);
}

Test(pins, the_verifier_holds_a_plan_to_its_pins) {
    mp_program *p = must_parse(PINNED);
    mp_options o;
    mp_options_default(&o);
    o.algo = MP_ALGO_OPT;
    mp_err err;
    mp_plan *plan = mp_plan_program(p, &o, &err);
    cr_assert(plan, "%s", err.msg);
    mp_alloc *x = (mp_alloc *)alloc_in(plan, "main", "x");
    x->offset += 1024; /* still inside nothing else: only the pin is broken */
    mp_verify_report r;
    mp_verify(p, plan, &r, &err);
    bool pin = false;
    for (uint32_t i = 0; i < r.n_v; i++) pin |= !strcmp(r.v[i].kind, "pin") && r.v[i].rule == MP_RULE_CONSISTENCY;
    cr_assert(pin, "no pin violation among %u", r.n_v);
    mp_verify_report_free(&r);
    mp_plan_free(plan);
    mp_program_free(p);
}

Test(pins, the_builder_writes_pins) {
    mp_err err;
    mp_builder *b = mp_builder_new(&err);
    cr_assert(b);
    cr_assert_eq(mp_builder_graph(b, "main", &err), MP_OK);
    mp_tensor_spec x = {.struct_size = sizeof(mp_tensor_spec), .name = "x", .size = 64, .device = {MP_DEV_CPU, 0}, .flags = MP_T_PINNED, .at = 256};
    cr_assert_eq(mp_builder_tensor(b, &x, &err), MP_OK, "%s", err.msg);
    const char *out[] = {"x"}, *in[] = {"x"};
    mp_node_spec ph = {sizeof(mp_node_spec), MP_NODE_PLACEHOLDER, NULL, 0, out, 1, {NULL, NULL}, NULL, NULL, 0};
    mp_node_spec o = {sizeof(mp_node_spec), MP_NODE_OUTPUT, in, 1, NULL, 0, {NULL, NULL}, NULL, NULL, 0};
    cr_assert_eq(mp_builder_node(b, &ph, &err), MP_OK, "%s", err.msg);
    cr_assert_eq(mp_builder_node(b, &o, &err), MP_OK, "%s", err.msg);
    mp_program *p = mp_builder_finish(b, &err);
    cr_assert(p, "%s", err.msg);
    cr_assert(p->graphs[0].tensors[0].flags & MP_T_PINNED);
    cr_assert_eq(p->graphs[0].tensors[0].at, 256);
    mp_program_free(p);
    mp_builder_free(b);
}

/* Several methods: the shared state has one place in every method, each
 * method's activations go around it, the verifier agrees and catches a
 * shared tensor moved in one method. */
static const char METHODS[] = HDR
    "entry pre dec\n"
    "graph pre\ntensor t 4096\ntensor kv 1024 mutable shared\ntensor h 8192\ntensor o 64\n"
    "node placeholder out=t\nnode placeholder out=kv\nnode call in=t,kv out=h\nnode call in=h out=o\n"
    "node output in=o\nend\n"
    "graph dec\ntensor t 16\ntensor kv 1024 mutable shared\ntensor h 32\ntensor o 64\n"
    "node placeholder out=t\nnode placeholder out=kv\nnode call in=t,kv out=h\nnode call in=h out=o\n"
    "node output in=o\nend\n";

Test(pins, methods_keep_shared_state_at_one_place) {
    mp_program *p = must_parse(METHODS);
    mp_options o;
    mp_options_default(&o);
    o.algo = MP_ALGO_OPT;
    mp_err err;
    mp_plan *plan = mp_plan_program(p, &o, &err);
    cr_assert(plan, "%s", err.msg);
    cr_assert_eq(plan->n_graphs, 2);
    const mp_alloc *a = alloc_in(plan, "pre", "kv"), *b = alloc_in(plan, "dec", "kv");
    cr_assert(a && b);
    cr_assert_eq(a->offset, b->offset);
    cr_assert_eq(plan->graphs[0].buffers[1], plan->graphs[1].buffers[1], "one arena for both methods");
    mp_verify_report r;
    cr_assert_eq(mp_verify(p, plan, &r, &err), MP_OK, "%s", r.n_v ? r.v[0].msg : err.msg);
    mp_verify_report_free(&r);
    ((mp_alloc *)b)->offset += 4096 + 1024; /* past everything of dec: only the agreement breaks */
    cr_assert_eq(mp_verify(p, plan, &r, &err), MP_EINVALID);
    bool shared = false;
    for (uint32_t i = 0; i < r.n_v; i++) shared |= !strcmp(r.v[i].kind, "shared");
    cr_assert(shared, "no shared violation among %u", r.n_v);
    mp_verify_report_free(&r);
    mp_plan_free(plan);
    o.algo = MP_ALGO_GREEDY;
    cr_assert_null(mp_plan_program(p, &o, &err));
    cr_assert(err.limit, "%s", err.msg);
    mp_program_free(p);
}
