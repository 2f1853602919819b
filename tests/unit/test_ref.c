/* test_ref.c - the reference planner: lifetimes, filters, control flow,
 * per-device numbering, padding, in-place, naive, and golden plans worked
 * out by hand from ExecuTorch's algorithm (exir/memory_planning.py):
 * each expected plan carries the derivation in a comment. */
#include "helpers.h"
#include "ref_internal.h"

#define HDR "memplan-graph 1\n"

static mp_options opts(void) {
    mp_options o;
    mp_options_default(&o);
    return o;
}

static void expect_plan(const char *graph, const mp_options *o, const char *want) {
    char *got = plan_of(graph, o);
    cr_assert_str_eq(got, want, "\n--- got ---\n%s--- want ---\n%s", got, want);
    mp_xfree(got);
}

static int expect_refusal(const char *graph, const mp_options *o, const char *fragment) {
    mp_program *p = must_parse(graph);
    int code;
    char msg[1024];
    char *t = plan_text(p, o, &code, msg, sizeof msg);
    cr_assert_null(t, "planned a graph that must be refused:\n%s", t ? t : "");
    cr_assert_eq(code, MP_EPLAN, "code %d: %s", code, msg);
    cr_assert(strstr(msg, fragment), "message '%s' lacks '%s'", msg, fragment);
    mp_program_free(p);
    return code;
}

static const char CHAIN[] = HDR
    "graph main\n"
    "tensor x 100\ntensor w 64 const\ntensor a 200\ntensor b 200\n"
    "tensor c 50\ntensor y 100\n"
    "node placeholder out=x\nnode placeholder out=w\nnode call in=x,w out=a\n"
    "node call in=a out=b\nnode call in=b,x out=c\nnode call in=c out=y\n"
    "node output in=y\nend\n";

/* Sizes at 16: x 112, a 208, b 208, c 64, y 112.  Sorted largest first,
 * equal sizes last-inserted first: b, a, y, x, c.
 *   b [3,4] -> new obj0 (208)
 *   a [2,3] overlaps b at 3; 208+208 > 208 -> new obj1 (208)
 *   y [5,6] -> obj0 (b has ended) at 0
 *   x [0,4] overlaps b, y? no; obj0 has b: overlap; obj1 has a: overlap;
 *           second pass: 208+112 > 208 twice -> new obj2 (112)
 *   c [4,5] -> obj0 has b [3,4]: overlap; obj1 has a [2,3]: free -> obj1 at 0
 * Objects at 0, 208, 416; buffer 1 = 528. */
Test(ref, greedy_chain_golden) {
    mp_options o = opts();
    expect_plan(CHAIN, &o,
                "memplan-plan 1\n"
                "options alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=greedy\n"
                "graph main\nbuffers 0 528\ndevices cpu:0 cpu:0\n"
                "alloc x mem_id=1 obj=2 offset=416 size=112 life=0,4\n"
                "alloc a mem_id=1 obj=1 offset=208 size=208 life=2,3\n"
                "alloc b mem_id=1 obj=0 offset=0 size=208 life=3,4\n"
                "alloc c mem_id=1 obj=1 offset=208 size=64 life=4,5\n"
                "alloc y mem_id=1 obj=0 offset=0 size=112 life=5,6\n"
                "end\n");
}

/* naive: spec order x a b c y, one after another, obj 0. */
Test(ref, naive_chain_golden) {
    mp_options o = opts();
    o.algo = MP_ALGO_NAIVE;
    expect_plan(CHAIN, &o,
                "memplan-plan 1\n"
                "options alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=naive\n"
                "graph main\nbuffers 0 704\ndevices cpu:0 cpu:0\n"
                "alloc x mem_id=1 obj=0 offset=0 size=112 life=0,4\n"
                "alloc a mem_id=1 obj=0 offset=112 size=208 life=2,3\n"
                "alloc b mem_id=1 obj=0 offset=320 size=208 life=3,4\n"
                "alloc c mem_id=1 obj=0 offset=528 size=64 life=4,5\n"
                "alloc y mem_id=1 obj=0 offset=592 size=112 life=5,6\n"
                "end\n");
}

Test(ref, lifetimes_follow_executorch) {
    const char *g = HDR
        "graph main\n"
        "tensor w 8 const\ntensor m 8 mutable\ntensor x 8\ntensor a 8\ntensor v 8 view=a\n"
        "tensor vv 8 view=v\ntensor d 8 dynamic\ntensor late 8\n"
        "node placeholder out=w\nnode placeholder out=m\nnode placeholder out=x\n"
        "node call in=x out=a\n"      /* 3 */
        "node call in=late out=d\n"   /* 4: late is used before it is defined */
        "node call out=late\n"        /* 5 */
        "node call in=vv\n"           /* 6: a view of a view extends a */
        "node call in=d\n"            /* 7 */
        "node output in=x\nend\n";    /* 8 */
    mp_program *p = must_parse(g);
    mp_life L;
    mp_life_compute(&p->graphs[0], &L);
    int32_t want[][2] = {{0, 0}, {0, 8}, {0, 8}, {3, 6}, {-1, -1}, {-1, -1}, {4, 7}, {4, 5}};
    for (int t = 0; t < 8; t++) {
        cr_assert_eq(L.start[t], want[t][0], "start of %s", p->graphs[0].tensors[t].name);
        cr_assert_eq(L.end[t], want[t][1], "end of %s", p->graphs[0].tensors[t].name);
    }
    cr_assert(L.is_input[0] && !L.is_input[1] && L.is_input[2], "mutable is no input");
    cr_assert(L.is_output[2] && !L.is_output[3]);
    /* spec order: roots by first appearance among the nodes' own specs */
    int32_t order[] = {0, 1, 2, 3, 6, 7};
    cr_assert_eq(L.n_order, 6);
    for (int i = 0; i < 6; i++) cr_assert_eq(L.order[i], order[i]);
    mp_life_free(&L);
    mp_program_free(p);
}

static const char FILTERS[] = HDR
    "graph main\n"
    "tensor in 16\ntensor buf 16 mutable\ntensor k 16 const\ntensor mid 16\n"
    "tensor dyn 16 dynamic\ntensor out 16\ntensor io 16\n"
    "node placeholder out=in\nnode placeholder out=buf\nnode placeholder out=k\n"
    "node placeholder out=io\nnode call in=in,k out=mid,dyn\nnode call in=mid,dyn out=out\n"
    "node output in=out,io,buf\nend\n";

static char *planned_names(const mp_options *o) {
    char *plan = plan_of(FILTERS, o);
    static char names[256];
    names[0] = 0;
    for (char *s = plan; (s = strstr(s, "alloc ")); s += 6) {
        char name[32];
        sscanf(s + 6, "%31s", name);
        strcat(names, name);
        strcat(names, " ");
    }
    mp_xfree(plan);
    return names;
}

Test(ref, filters_select_the_planned_tensors) {
    mp_options o = opts();
    cr_assert_str_eq(planned_names(&o), "in buf mid out io ");
    o.alloc_inputs = false; /* io is an input that is also an output */
    cr_assert_str_eq(planned_names(&o), "buf mid out ");
    o = opts();
    o.alloc_outputs = false; /* buf is returned too: an output */
    cr_assert_str_eq(planned_names(&o), "in mid ");
    o = opts();
    o.alloc_mutable = false;
    cr_assert_str_eq(planned_names(&o), "in mid out io ");
}

static const char COND[] = HDR
    "graph main\ntensor p 32\ntensor a 64\ntensor r 16\n"
    "node placeholder out=p\nnode call in=p out=a\nnode cond in=a,a true=t false=f out=r\n"
    "node output in=r\nend\n"
    "graph t\ntensor i 48\ntensor o 16\n"
    "node placeholder out=i\nnode call in=i out=o\nnode output in=o\nend\n"
    "graph f\ntensor i 48\ntensor m 100\ntensor o 16\n"
    "node placeholder out=i\nnode call in=i out=m\nnode call in=m out=o\nnode output in=o\nend\n";

/* cond bodies are planned without their inputs:
 *   t: o [1,2] -> [0, 16]
 *   f: m 112 [1,2] obj0; o 16 [2,3] overlaps m, 112+16 > 112 -> obj1: [0, 128]
 * merged reservation [0, 128].  main: a 64 [1,2] obj0; p 32 [0,1] overlaps a
 * -> obj1; r 16 [2,3] -> obj1 (p ended) at 0.  obj0 at 128, obj1 at 192. */
Test(ref, cond_subgraphs_are_reserved_first) {
    mp_options o = opts();
    expect_plan(COND, &o,
                "memplan-plan 1\n"
                "options alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=greedy\n"
                "graph main\nbuffers 0 224\ndevices cpu:0 cpu:0\n"
                "alloc p mem_id=1 obj=1 offset=192 size=32 life=0,1\n"
                "alloc a mem_id=1 obj=0 offset=128 size=64 life=1,2\n"
                "alloc r mem_id=1 obj=1 offset=192 size=16 life=2,3\n"
                "end\n"
                "graph t\nbuffers 0 16\ndevices cpu:0 cpu:0\n"
                "alloc o mem_id=1 obj=0 offset=0 size=16 life=1,2\n"
                "end\n"
                "graph f\nbuffers 0 128\ndevices cpu:0 cpu:0\n"
                "alloc m mem_id=1 obj=0 offset=0 size=112 life=1,2\n"
                "alloc o mem_id=1 obj=1 offset=112 size=16 life=2,3\n"
                "end\n");
}

/* map bodies are planned with their inputs. */
Test(ref, map_bodies_plan_their_inputs) {
    const char *g = HDR
        "graph main\ntensor x 16\ntensor y 16\nnode placeholder out=x\n"
        "node map in=x body=b out=y\nnode output in=y\nend\n"
        "graph b\ntensor i 32\ntensor o 16\nnode placeholder out=i\nnode call in=i out=o\n"
        "node output in=o\nend\n";
    mp_options o = opts();
    char *plan = plan_of(g, &o);
    char *b = block_of(plan, "b");
    ASSERT_CONTAINS(b, "alloc i mem_id=1");
    ASSERT_CONTAINS(b, "buffers 0 48");
    mp_xfree(b);
    mp_xfree(plan);
}

static const char DEVICES[] = HDR
    "graph main\ntensor x 10 device=cuda\ntensor y 20\ntensor z 30 device=cuda:1\n"
    "node placeholder out=x\nnode call in=x out=y\nnode call in=y out=z\n"
    "node output in=z\nend\n";

/* --per-device: CPU:0 first, then cuda:0, cuda:1; each partition alone. */
Test(ref, per_device_numbering) {
    mp_options o = opts();
    o.per_device = true;
    expect_plan(DEVICES, &o,
                "memplan-plan 1\n"
                "options alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=1 algo=greedy\n"
                "graph main\nbuffers 0 32 16 32\ndevices cpu:0 cpu:0 cuda:0 cuda:1\n"
                "alloc x mem_id=2 obj=0 offset=0 size=16 life=0,1\n"
                "alloc y mem_id=1 obj=0 offset=0 size=32 life=1,2\n"
                "alloc z mem_id=3 obj=0 offset=0 size=32 life=2,3\n"
                "end\n");
    o.et_exact = true;
    char *et = plan_of(DEVICES, &o);
    ASSERT_CONTAINS(et, "buffers 0 32 16 32\ndevices cpu:0 cpu:0 cuda:0 cuda:1\n");
    mp_xfree(et);
}

/* Without --per-device every tensor goes to the CPU pools. */
Test(ref, devices_ignored_without_per_device) {
    mp_options o = opts();
    char *plan = plan_of(DEVICES, &o);
    ASSERT_CONTAINS(plan, "devices cpu:0 cpu:0\n");
    ASSERT_CONTAINS(plan, "alloc x mem_id=1");
    ASSERT_CONTAINS(plan, "alloc z mem_id=1");
    mp_xfree(plan);
}

Test(ref, per_device_with_pools_is_refused_only_by_executorch) {
    const char *g = HDR
        "graph main\ntensor x 10 device=cuda\ntensor y 20 mem_id=2\n"
        "node placeholder out=x\nnode call in=x out=y\nnode output in=y\nend\n";
    mp_options o = opts();
    o.per_device = true;
    /* repaired: each device has its own pools (cpu:0 pools 1, 2; cuda 3) */
    char *repaired = plan_of(g, &o);
    ASSERT_CONTAINS(repaired, "buffers 0 0 32 16\ndevices cpu:0 cpu:0 cpu:0 cuda:0\n");
    ASSERT_CONTAINS(repaired, "alloc x mem_id=3 obj=0 offset=0 size=16");
    ASSERT_CONTAINS(repaired, "alloc y mem_id=2 obj=0 offset=0 size=32");
    mp_xfree(repaired);
    o.et_exact = true;
    expect_refusal(g, &o, "pre-assigned mem_id");
    o.per_device = false; /* fine without per-device */
    char *plan = plan_of(g, &o);
    ASSERT_CONTAINS(plan, "alloc y mem_id=2 obj=0 offset=0 size=32");
    mp_xfree(plan);
}

/* --per-device: an in-place tensor on another device than its base is an
 * allocation of its own (repaired); ExecuTorch cannot place it. */
Test(ref, per_device_inplace_across_devices_is_its_own_allocation) {
    const char *g = HDR
        "graph main\ntensor x 64\ntensor a 128\ntensor b 128 device=cuda:0 inplace=a\n"
        "tensor c 128 device=cuda:0 inplace=b\ntensor y 64\nnode placeholder out=x\n"
        "node call in=x out=a\nnode call in=a out=b\nnode call in=b out=c\nnode call in=c out=y\n"
        "node output in=y\nend\n";
    mp_options o = opts();
    o.per_device = true;
    char *plan = plan_of(g, &o);
    ASSERT_CONTAINS(plan, "alloc b mem_id=2 obj=0 offset=0 size=128 life=2,3\n"
                          "alloc c mem_id=2 obj=0 offset=0 size=128 life=3,4\n");
    mp_xfree(plan);
    o.et_exact = true;
    expect_refusal(g, &o, "its base 'b' is not planned here");
}

/* An XNNPACK delegate pads each of the graph's buffers by 64 (greedy). */
Test(ref, xnnpack_padding) {
    const char *g = HDR
        "graph main\ntensor x 10\ntensor y 20\nnode placeholder out=x\n"
        "node delegate in=x out=y backend=XnnpackBackend\nnode output in=y\nend\n";
    mp_options o = opts();
    char *plan = plan_of(g, &o);
    ASSERT_CONTAINS(plan, "buffers 0 112\n"); /* 16 + 32 + 64 */
    mp_xfree(plan);
    o.algo = MP_ALGO_NAIVE;
    plan = plan_of(g, &o);
    ASSERT_CONTAINS(plan, "buffers 0 48\n");
    mp_xfree(plan);
    const char *other = HDR
        "graph main\ntensor x 10\nnode placeholder out=x\n"
        "node delegate in=x backend=qnn\nnode output in=x\nend\n";
    o.algo = MP_ALGO_GREEDY;
    plan = plan_of(other, &o);
    ASSERT_CONTAINS(plan, "buffers 0 16\n");
    mp_xfree(plan);
}

/* In-place: b takes a's offset and object. */
Test(ref, inplace_shares_its_base) {
    const char *g = HDR
        "graph main\ntensor x 16\ntensor a 64\ntensor b 64 inplace=a\ntensor c 16\n"
        "node placeholder out=x\nnode call in=x out=a\nnode call in=a out=b\n"
        "node call in=b out=c\nnode output in=c\nend\n";
    mp_options o = opts();
    char *plan = plan_of(g, &o);
    char a[128], b[128];
    const char *pa = strstr(plan, "alloc a "), *pb = strstr(plan, "alloc b ");
    cr_assert(pa && pb);
    sscanf(pa, "alloc a %127[^l]", a);
    sscanf(pb, "alloc b %127[^l]", b);
    cr_assert_str_eq(a, b, "in-place tensor placed apart from its base:\n%s", plan);
    mp_xfree(plan);
    o.algo = MP_ALGO_NAIVE;
    expect_refusal(g, &o, "naive algorithm does not support in-place");
}

Test(ref, inplace_cycle_and_unplanned_base_are_refused) {
    const char *cycle = HDR
        "graph main\ntensor a 4 inplace=b\ntensor b 4 inplace=a\nnode placeholder out=a\n"
        "node call in=a out=b\nnode output in=b\nend\n";
    mp_options o = opts();
    expect_refusal(cycle, &o, "cycle");
    o.et_exact = true;
    expect_refusal(cycle, &o, "cycle");
    const char *unplanned = HDR
        "graph main\ntensor k 4 const\ntensor b 4 inplace=k\nnode placeholder out=k\n"
        "node call in=k out=b\nnode output in=b\nend\n";
    expect_refusal(unplanned, &o, "not planned");
    o.et_exact = false;
    expect_refusal(unplanned, &o, "not planned");
}

/* An in-place tensor of an unplanned kind needs no planned base. */
Test(ref, inplace_on_unplanned_tensors_is_fine) {
    const char *g = HDR
        "graph main\ntensor k 4 const\ntensor d 4 dynamic inplace=k\ntensor y 4\n"
        "node placeholder out=k\nnode call in=k out=d\nnode call in=d out=y\n"
        "node output in=y\nend\n";
    mp_options o = opts();
    char *plan = plan_of(g, &o);
    ASSERT_CONTAINS(plan, "alloc y ");
    mp_xfree(plan);
}

/* Pre-assigned pools get their own buffers. */
Test(ref, pools) {
    const char *g = HDR
        "graph main\ntensor x 16\ntensor y 16 mem_id=3\nnode placeholder out=x\n"
        "node call in=x out=y\nnode output in=y\nend\n";
    mp_options o = opts();
    char *plan = plan_of(g, &o);
    ASSERT_CONTAINS(plan, "buffers 0 16 0 16\ndevices cpu:0 cpu:0 cpu:0 cpu:0\n");
    ASSERT_CONTAINS(plan, "alloc y mem_id=3 obj=0 offset=0 size=16");
    mp_xfree(plan);
    o.algo = MP_ALGO_NAIVE;
    plan = plan_of(g, &o);
    ASSERT_CONTAINS(plan, "buffers 0 16 0 16\n");
    mp_xfree(plan);
}

Test(ref, alignment_rounds_sizes_and_offsets) {
    mp_options o = opts();
    o.alignment = 64;
    char *plan = plan_of(CHAIN, &o);
    /* x 128, a 256, b 256, c 64, y 128: same packing as at 16 */
    ASSERT_CONTAINS(plan, "buffers 0 640\n");
    ASSERT_CONTAINS(plan, "alloc x mem_id=1 obj=2 offset=512 size=128 life=0,4\n");
    mp_xfree(plan);
}

Test(ref, zero_size_tensors_are_planned) {
    const char *g = HDR
        "graph main\ntensor x 0\ntensor y 0\nnode placeholder out=x\n"
        "node call in=x out=y\nnode output in=y\nend\n";
    mp_options o = opts();
    char *plan = plan_of(g, &o);
    ASSERT_CONTAINS(plan, "buffers 0 0\n");
    ASSERT_CONTAINS(plan, "alloc x mem_id=1 obj=");
    ASSERT_CONTAINS(plan, "size=0");
    mp_xfree(plan);
}

/* Repair D8: dynamic tensors that are neither inputs nor outputs are
 * freed after their last use; --et-exact writes no free (ExecuTorch's
 * insert_calls_to_free is handed the planned specs, never dynamic ones). */
Test(ref, frees_for_dynamic_tensors) {
    const char *g = HDR
        "graph main\ntensor x 4 dynamic\ntensor d 4 dynamic\ntensor e 4 dynamic\ntensor y 4\n"
        "node placeholder out=x\nnode call in=x out=d\nnode call in=d out=e\n"
        "node call in=d,e out=y\nnode output in=y,e\nend\n";
    mp_options o = opts();
    char *plan = plan_of(g, &o);
    ASSERT_CONTAINS(plan, "free d after=3\n");
    cr_assert_null(strstr(plan, "free x"), "inputs are never freed");
    cr_assert_null(strstr(plan, "free e"), "outputs are never freed");
    mp_xfree(plan);
    o.et_exact = true;
    plan = plan_of(g, &o);
    cr_assert_null(strstr(plan, "free "));
    mp_xfree(plan);
}

Test(ref, planning_twice_gives_the_same_bytes) {
    mp_options o = opts();
    char *a = plan_of(COND, &o), *b = plan_of(COND, &o);
    cr_assert_str_eq(a, b);
    mp_xfree(a);
    mp_xfree(b);
}

Test(ref, bad_alignment_is_refused) {
    mp_program *p = must_parse(CHAIN);
    mp_options o = opts();
    o.alignment = 0;
    mp_err err;
    cr_assert_null(mp_ref_greedy_plan(p, &o, &err));
    cr_assert_eq(err.code, MP_EFORMAT);
    mp_program_free(p);
}

/* mp_inplace_roots (one walk per chain) gives what mp_inplace_root (one
 * walk per tensor) gives: chains through views, cycles and chains into a
 * cycle (-1), and --per-device cuts across devices. */
Test(ref, inplace_roots_in_one_pass_match_the_walks) {
    static const char text[] = HDR
        "graph main\n"
        "tensor a 16\ntensor b 16 inplace=a\ntensor v 16 view=b\ntensor c 16 inplace=v\n"
        "tensor x 16 inplace=y\ntensor y 16 inplace=x\ntensor z 16 inplace=x\n"
        "tensor d 16 device=cuda:0 inplace=c\ntensor e 16 device=cuda:0 inplace=d\n"
        "node placeholder out=a\nnode call in=a out=b,v\nnode call in=v out=c,x,y,z,d,e\n"
        "node output in=c,z,e\nend\n";
    mp_program *p = must_parse(text);
    for (int per_device = 0; per_device < 2; per_device++) {
        const mp_graphdef *g = &p->graphs[0];
        int32_t *roots = mp_inplace_roots(g, per_device);
        for (uint32_t t = 0; t < g->n_tensors; t++)
            cr_assert_eq(roots[t], mp_inplace_root(g, (int32_t)t, per_device), "%s (per_device %d)",
                         g->tensors[t].name, per_device);
        mp_xfree(roots);
    }
    const mp_graphdef *g = &p->graphs[0];
    int32_t *roots = mp_inplace_roots(g, true);
    cr_assert_eq(roots[mp_tensor_find(g, "c")], mp_tensor_find(g, "a"));
    cr_assert_eq(roots[mp_tensor_find(g, "z")], -1, "a chain into a cycle");
    cr_assert_eq(roots[mp_tensor_find(g, "e")], mp_tensor_find(g, "d"), "cut at the device change");
    mp_xfree(roots);
    for (uint64_t seed = 1; seed <= 20; seed++) { /* and on generated programs */
        mp_gen_options o;
        mp_gen_options_default(&o);
        o.seed = seed;
        o.tensors = 300;
        mp_program *q = generated_program(&o);
        for (uint32_t gi = 0; gi < q->n_graphs; gi++) {
            const mp_graphdef *h = &q->graphs[gi];
            int32_t *r = mp_inplace_roots(h, seed & 1);
            for (uint32_t t = 0; t < h->n_tensors; t++)
                cr_assert_eq(r[t], mp_inplace_root(h, (int32_t)t, seed & 1));
            mp_xfree(r);
        }
        mp_program_free(q);
    }
    mp_program_free(p);
}

/* Repair D14 moves a node's sub-graphs above an earlier cond's region only
 * where they would reach the bytes that cond's live results are in.  On
 * these harness graphs ExecuTorch's layout was safe, yet the repaired
 * planner alone (without the portfolio, which substitutes ExecuTorch's
 * valid plan) moved them: 3 of 13,000 programs before 2.0.0 (issue 47:
 * narrow the repairs).  It now gives ExecuTorch's plan by itself. */
Test(ref, d14_repair_leaves_a_safe_layout_alone) {
    static const struct {
        const char *file;
        uint32_t algo;
        bool per_device;
    } C[] = {{"corpus/regressions/h1-961-d14-narrow-naive.mpg", MP_ALGO_NAIVE, false},
             {"corpus/regressions/h6-200-d14-narrow-greedy.mpg", MP_ALGO_GREEDY, true},
             {"corpus/regressions/h6-946-d14-narrow-naive.mpg", MP_ALGO_NAIVE, true}};
    for (size_t k = 0; k < sizeof C / sizeof *C; k++) {
        mp_err err;
        mp_program *p = mp_graph_load(C[k].file, &err);
        cr_assert_not_null(p, "%s", err.msg);
        mp_options o;
        mp_options_default(&o);
        o.algo = C[k].algo, o.per_device = C[k].per_device;
        mp_plan *rep = mp_plan_program_alone(p, &o, &err);
        cr_assert_not_null(rep, "%s: %s", C[k].file, err.msg);
        mp_buf rb;
        mp_buf_init(&rb);
        mp_plan_write(rep, &rb);
        mp_plan_free(rep);
        char *repaired = rb.data;
        o.et_exact = true;
        mp_plan *et = mp_plan_program_alone(p, &o, &err);
        cr_assert_not_null(et, "%s: %s", C[k].file, err.msg);
        mp_verify_report r;
        cr_assert_eq(mp_verify(p, et, &r, &err), MP_OK, "%s: ExecuTorch's plan is not valid here", C[k].file);
        cr_assert_eq(r.n_warnings, 0);
        mp_verify_report_free(&r);
        mp_buf b;
        mp_buf_init(&b);
        et->opts.et_exact = false; /* as the portfolio hands it out */
        mp_plan_write(et, &b);
        cr_assert_str_eq(repaired, b.data, "%s: the repaired plan moved a safe layout", C[k].file);
        mp_buf_free(&b);
        mp_plan_free(et);
        mp_xfree(repaired);
        mp_program_free(p);
    }
}
