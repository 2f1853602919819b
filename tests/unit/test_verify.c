/* test_verify.c - the verifier: for each rule a valid plan, and the same
 * plan broken in exactly that way, which must be rejected naming the rule. */
#include "helpers.h"
#include "overlap.h" /* the interval tree, the rank set, the sweep's fast path */

#define HDR "memplan-graph 1\n"

static const char CHAIN[] = FIXTURE_CHAIN;
static const char COND[] = FIXTURE_COND;

static const char DEVS[] = HDR
    "graph main\ntensor x 10 device=cuda\ntensor y 20\ntensor d 8 dynamic\ntensor z 30 device=cuda:1\n"
    "node placeholder out=x\nnode call in=x out=y,d\nnode call in=y,d out=z\n"
    "node output in=z\nend\n";

typedef struct verdict {
    int rc;
    uint64_t per_rule[MP_N_RULES];
    char text[8192];
    uint64_t total, lower;
} verdict;

static verdict verify_text(const char *graph, const char *plan_text) {
    verdict v;
    memset(&v, 0, sizeof v);
    mp_program *p = must_parse(graph);
    mp_err err;
    mp_plan *plan = mp_plan_parse(plan_text, strlen(plan_text), "p.mpp", p, &err);
    cr_assert(plan != NULL, "plan unreadable: %s\n%s", err.msg, plan_text);
    mp_verify_report r;
    v.rc = mp_verify(p, plan, &r, &err);
    memcpy(v.per_rule, r.per_rule, sizeof v.per_rule);
    mp_buf b;
    mp_buf_init(&b);
    mp_verify_write_text(&r, &b);
    snprintf(v.text, sizeof v.text, "%s", b.data);
    v.total = r.total_bytes;
    v.lower = r.lower_bound;
    mp_buf_free(&b);
    mp_verify_report_free(&r);
    mp_plan_free(plan);
    mp_program_free(p);
    return v;
}

/* Replace the first occurrence of `from` with `to` (which must exist). */
static char *edit(const char *s, const char *from, const char *to) {
    const char *at = strstr(s, from);
    cr_assert(at != NULL, "'%s' not in\n%s", from, s);
    size_t n = strlen(s) - strlen(from) + strlen(to);
    char *out = mp_xmalloc(n + 1);
    size_t pre = (size_t)(at - s);
    memcpy(out, s, pre);
    strcpy(out + pre, to);
    strcat(out, at + strlen(from));
    return out;
}

static char *valid_plan(const char *graph, bool per_device) {
    mp_options o;
    mp_options_default(&o);
    o.per_device = per_device;
    char *plan = plan_of(graph, &o);
    verdict v = verify_text(graph, plan);
    cr_assert_eq(v.rc, MP_OK, "planner's plan is invalid:\n%s\n%s", v.text, plan);
    return plan;
}

/* Break `plan` by replacing `from` with `to`; expect `rule` among the
 * violations (and a line containing `fragment`). */
static void expect_broken(const char *graph, const char *plan, const char *from,
                          const char *to, uint32_t rule, const char *fragment) {
    char *bad = edit(plan, from, to);
    verdict v = verify_text(graph, bad);
    cr_assert_eq(v.rc, MP_EINVALID, "accepted a broken plan:\n%s", bad);
    cr_assert(v.per_rule[rule] > 0, "rule %s not named for\n%s\nreport:\n%s",
              mp_rule_name(rule), bad, v.text);
    cr_assert(strstr(v.text, fragment), "report lacks '%s':\n%s", fragment, v.text);
    mp_xfree(bad);
}

/* Valid but wasteful: exit code valid, a warning naming the tensor and
 * its bytes, nothing counted as a violation. */
static void expect_wasteful(const char *graph, const char *plan, const char *from, const char *to,
                            const char *fragment) {
    char *bad = edit(plan, from, to);
    verdict v = verify_text(graph, bad);
    cr_assert_eq(v.rc, MP_OK, "a wasteful plan is invalid:\n%s\nreport:\n%s", bad, v.text);
    cr_assert(strstr(v.text, fragment), "report lacks '%s':\n%s", fragment, v.text);
    cr_assert(strstr(v.text, "valid, wasteful: 1 warning, "), "%s", v.text);
    mp_xfree(bad);
}

Test(verify, valid_plans_pass_with_quality) {
    char *p = valid_plan(CHAIN, false);
    verdict v = verify_text(CHAIN, p);
    cr_assert_eq(v.total, 528);
    cr_assert_eq(v.lower, 528); /* node 3: x + a + b = 112 + 208 + 208 */
    ASSERT_CONTAINS(v.text, "valid; total 528 bytes, lower bound 528 bytes, ratio 1.0000");
    mp_xfree(p);
    p = valid_plan(COND, false);
    v = verify_text(COND, p);
    /* at node 2 (cond): a 64 + r 16 live, plus the larger branch bound:
     * f needs m + o = 128 at node 2 -> 208; total 224 */
    cr_assert_eq(v.lower, 208, "%s", v.text);
    cr_assert_eq(v.total, 224);
    mp_xfree(p);
}

Test(verify, rule1_completeness) {
    char *p = valid_plan(CHAIN, false);
    expect_broken(CHAIN, p, "alloc c mem_id=1 obj=1 offset=208 size=64 life=4,5\n", "",
                  MP_RULE_COMPLETENESS, "main: completeness: tensor c is not planned");
    expect_broken(CHAIN, p, "alloc a ", "alloc w mem_id=1 obj=9 offset=0 size=64 life=0,2\nalloc a ",
                  MP_RULE_COMPLETENESS, "w must not be planned: it is a constant");
    expect_wasteful(CHAIN, p, "alloc_inputs=1", "alloc_inputs=0",
                    "main: warning: wasteful: tensor x is planned though it is a graph input and alloc_inputs=0: "
                    "112 bytes the runtime never uses");
    mp_xfree(p);
    /* cond bodies: inputs are not planned; planning one (ExecuTorch's D13)
     * wastes its bytes */
    p = valid_plan(COND, false);
    expect_wasteful(COND, p, "graph t\nbuffers 0 16\ndevices cpu:0 cpu:0\n",
                    "graph t\nbuffers 0 64\ndevices cpu:0 cpu:0\nalloc i mem_id=1 obj=1 offset=16 size=48 life=0,1\n",
                    "t: warning: wasteful: tensor i is planned though it is an input of a graph that only "
                    "cond/while nodes run: 48 bytes");
    mp_xfree(p);
}

Test(verify, rule2_sizes_and_alignment) {
    char *p = valid_plan(CHAIN, false);
    expect_broken(CHAIN, p, "offset=208 size=64", "offset=208 size=48", MP_RULE_SIZE,
                  "size: c has size=48, but 50 bytes rounded up to 16 is 64");
    expect_broken(CHAIN, p, "offset=416 size=112", "offset=408 size=112", MP_RULE_SIZE,
                  "alignment: x at offset 408 in buffer 1 is not a multiple of 16");
    expect_broken(CHAIN, p, "alignment=16", "alignment=32", MP_RULE_SIZE, "rounded up to 32");
    mp_xfree(p);
}

Test(verify, rule3_bounds) {
    char *p = valid_plan(CHAIN, false);
    expect_broken(CHAIN, p, "buffers 0 528", "buffers 0 520", MP_RULE_BOUNDS,
                  "bounds: x [416,528) lies outside buffer 1 of graph main (size 520)");
    expect_broken(CHAIN, p, "buffers 0 528", "buffers 16 528", MP_RULE_BOUNDS,
                  "buffer 0 (constants) has size 16");
    expect_broken(CHAIN, p, "alloc y mem_id=1", "alloc y mem_id=2", MP_RULE_BOUNDS,
                  "y is in buffer 2, but graph main has only buffers 0..1");
    expect_broken(CHAIN, p, "alloc y mem_id=1", "alloc y mem_id=0", MP_RULE_BOUNDS,
                  "holds constants only");
    expect_broken(CHAIN, p, "offset=416 size=112", "offset=18446744073709551600 size=112",
                  MP_RULE_BOUNDS, "lies outside buffer 1");
    mp_xfree(p);
    /* a sub-graph's allocation must fit the entry graph's buffer too */
    p = valid_plan(COND, false);
    expect_broken(COND, p, "buffers 0 224", "buffers 0 100", MP_RULE_BOUNDS,
                  "f: bounds: m [0,112) lies outside buffer 1 of the entry graph");
    mp_xfree(p);
}

Test(verify, rule4_overlap) {
    char *p = valid_plan(CHAIN, false);
    expect_broken(CHAIN, p, "alloc a mem_id=1 obj=1 offset=208", "alloc a mem_id=1 obj=1 offset=192",
                  MP_RULE_OVERLAP,
                  "main: overlap: a [192,400) and b [0,208) in buffer 1, both live at nodes 3..3");
    /* same bytes, disjoint lifetimes: fine (y reuses b's bytes) */
    verdict v = verify_text(CHAIN, p);
    cr_assert_eq(v.rc, MP_OK);
    mp_xfree(p);
}

/* Allocations that start at the same node are swept in the plan's order
 * (the order of its alloc lines, not of the graph's tensors), so the
 * pairs are reported in that order, the earlier one named first. */
Test(verify, rule4_ties_are_swept_in_plan_order) {
    const char *g = HDR
        "graph main\ntensor x 16\ntensor p 32\ntensor q 32\ntensor r 32\ntensor y 16\n"
        "node placeholder out=x\nnode call in=x out=p,q,r\nnode call in=p,q,r out=y\n"
        "node output in=y\nend\n";
    const char *plan = "memplan-plan 1\n"
        "options alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=opt\n"
        "graph main\nbuffers 0 112\ndevices cpu:0 cpu:0\n"
        "alloc x mem_id=1 obj=0 offset=96 size=16 life=0,1\n"
        "alloc r mem_id=1 obj=3 offset=0 size=32 life=1,2\n"
        "alloc p mem_id=1 obj=1 offset=0 size=32 life=1,2\n"
        "alloc q mem_id=1 obj=2 offset=0 size=32 life=1,2\n"
        "alloc y mem_id=1 obj=4 offset=96 size=16 life=2,3\nend\n";
    verdict v = verify_text(g, plan);
    cr_assert_eq(v.rc, MP_EINVALID, "%s", v.text);
    const char *want = "main: overlap: r [0,32) and p [0,32) in buffer 1, both live at nodes 1..2\n"
                       "main: overlap: r [0,32) and q [0,32) in buffer 1, both live at nodes 1..2\n"
                       "main: overlap: p [0,32) and q [0,32) in buffer 1, both live at nodes 1..2\n";
    cr_assert(strncmp(v.text, want, strlen(want)) == 0, "report:\n%s", v.text);
}

Test(verify, rule4_inplace_family_may_share) {
    const char *g = HDR
        "graph main\ntensor x 16\ntensor a 64\ntensor b 64 inplace=a\ntensor b2 32 inplace=b\n"
        "tensor c 16\nnode placeholder out=x\nnode call in=x out=a\nnode call in=a out=b\n"
        "node call in=a,b out=b2\nnode call in=b2 out=c\nnode output in=c\nend\n";
    char *p = valid_plan(g, false);
    verdict v = verify_text(g, p);
    cr_assert_eq(v.rc, MP_OK, "%s", v.text);
    /* the family counts once in the bound (a, b and b2 share 64 bytes; with
     * x or c beside them, 80 at most), and the plan reaches it */
    cr_assert_eq(v.lower, 80, "%s", v.text);
    cr_assert_eq(v.total, 80, "%s", v.text);
    mp_xfree(p);
}

/* A family whose members are not consecutive by start (c starts between
 * a and b, which is in place of a) still counts once: the bound sorts its
 * members by (buffer, family, start).  Ordered by start alone, a and b
 * would count as two families and the bound would be 2,010, more than
 * this valid plan's 1,074. */
Test(verify, a_family_split_by_another_start_counts_once) {
    const char *g = HDR
        "graph main\ntensor x 64\ntensor a 1000\ntensor c 10\ntensor b 1000 inplace=a\ntensor y 64\n"
        "node placeholder out=x\nnode call in=x out=a\nnode call in=x out=c\nnode call in=a,c out=b\n"
        "node call in=b out=y\nnode output in=y\nend\n";
    const char *p = "memplan-plan 1\n"
                    "options alignment=1 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=opt\n"
                    "graph main\nbuffers 0 1074\ndevices cpu:0 cpu:0\n"
                    "alloc x mem_id=1 obj=0 offset=1000 size=64 life=0,2\n"
                    "alloc a mem_id=1 obj=1 offset=0 size=1000 life=1,3\n"
                    "alloc c mem_id=1 obj=2 offset=1064 size=10 life=2,3\n"
                    "alloc b mem_id=1 obj=1 offset=0 size=1000 life=3,4\n"
                    "alloc y mem_id=1 obj=3 offset=1000 size=64 life=4,5\nend\n";
    verdict v = verify_text(g, p);
    cr_assert_eq(v.rc, MP_OK, "%s", v.text);
    cr_assert_eq(v.lower, 1074, "%s", v.text); /* node 2: x, a and c */
    cr_assert_eq(v.total, 1074, "%s", v.text);
}

Test(verify, rule5_control_flow) {
    char *p = valid_plan(COND, false);
    /* r is live at the cond node; put it inside the sub-graph reservation */
    expect_broken(COND, p, "alloc r mem_id=1 obj=1 offset=192", "alloc r mem_id=1 obj=1 offset=96",
                  MP_RULE_CONTROL_FLOW,
                  "main: control-flow: node 2 (cond) runs sub-graph f, whose memory [0,128) in "
                  "buffer 1 overlaps r [96,112), live at node 2");
    mp_xfree(p);
}

/* Two conds with branches of their own; the first one's result y1 is read
 * at node 4, after the second cond, unless `late` is false. */
static char *two_conds(bool late) {
    static const char *const branch = "tensor i 64\ntensor o 64\nnode placeholder out=i\n"
                                      "node call in=i out=o\nnode output in=o\nend\n";
    char *g = mp_xmalloc(2048);
    int n = snprintf(g, 2048,
                     HDR "graph main\ntensor x 64\ntensor p 16\ntensor y1 64\ntensor y2 64\ntensor z 64\n"
                         "node placeholder out=x\nnode call in=x out=p\n"
                         "node cond in=p,x true=t0 false=f0 out=y1\nnode cond in=p,x true=t1 false=f1 out=y2\n"
                         "node call in=%s out=z\nnode output in=z,y1\nend\n",
                     late ? "y1,y2" : "y2");
    const char *names[] = {"t0", "f0", "t1", "f1"};
    for (int k = 0; k < 4; k++) n += snprintf(g + n, 2048 - (size_t)n, "graph %s\n%s", names[k], branch);
    if (!late) memcpy(strstr(g, "node output in=z,y1"), "node output in=z   ", 19);
    return g;
}

/* D14: a cond's result is its branch's value, so those bytes stay until
 * the result's last use; the repaired plan keeps them, ExecuTorch's does
 * not. */
Test(verify, rule5_cond_results_live_in_their_branch) {
    char *g = two_conds(true);
    char *p = valid_plan(g, false);
    ASSERT_CONTAINS(p, "graph t1\nbuffers 0 128\ndevices cpu:0 cpu:0\nalloc o mem_id=1 obj=0 offset=64 ");
    expect_broken(g, p, "graph t1\nbuffers 0 128\ndevices cpu:0 cpu:0\nalloc o mem_id=1 obj=0 offset=64 ",
                  "graph t1\nbuffers 0 128\ndevices cpu:0 cpu:0\nalloc o mem_id=1 obj=0 offset=32 ",
                  MP_RULE_CONTROL_FLOW,
                  "main: control-flow: the result y1 of cond node 2 is o of branch t0, whose bytes "
                  "[0,64) in buffer 1 must stay as they are until node 5 (ExecuTorch moves the branch's "
                  "value into the result), but node 3 (cond) runs sub-graph t1 over them");
    /* the parent's own tensors may not take those bytes either */
    expect_broken(g, p, "alloc z mem_id=1 obj=0 offset=128", "alloc z mem_id=1 obj=0 offset=0",
                  MP_RULE_CONTROL_FLOW, "but z [0,64), live at nodes 4..5, overlaps them");
    mp_xfree(p);
    mp_xfree(g);
}

/* ...but only while the result is used: y1 dead after its cond, the two
 * conds may share their branches' bytes (ExecuTorch's plan is valid). */
Test(verify, rule5_cond_results_bind_only_while_used) {
    char *g = two_conds(false);
    mp_options o;
    mp_options_default(&o);
    o.et_exact = true;
    char *p = plan_of(g, &o);
    ASSERT_CONTAINS(p, "graph t1\nbuffers 0 64\ndevices cpu:0 cpu:0\nalloc o mem_id=1 obj=0 offset=0 ");
    verdict v = verify_text(g, p);
    cr_assert_eq(v.rc, MP_OK, "%s\n%s", v.text, p);
    mp_xfree(p);
    mp_xfree(g);
}

/* A cond (node 2) whose branch t0 returns a nested cond's result: that
 * result, used at node 4, holds all of t0's memory past the second cond
 * (node 3), apart from the memory t1 runs in.  The bound at node 3 is
 * x 64 + p 16 + the slots y1 64 and y2 64 + lb(t1) 576 (w 512 and o 64)
 * + what y1 holds, lb(t0) 1168 (q 16, its slot o 64 and lb(n0) 1088 at
 * its cond), less the slots it may overlap (128): 1824.  It was 1312 (node
 * 2: x, p, y1 and lb(t0)) when held memory counted at its cond alone. */
/* A branch: its input i, `extra` tensors, its value o, and the nodes of
 * `body` between its placeholder and its output. */
#define BRANCH(name, extra, body)                                                                           \
    "graph " name "\ntensor i 64\n" extra "tensor o 64\nnode placeholder out=i\n" body "node output in=o\nend\n"
#define PLAIN_BRANCH(name) BRANCH(name, "", "node call in=i out=o\n")
#define WIDE_BRANCH(name, w) BRANCH(name, "tensor w " w "\n", "node call in=i out=w\nnode call in=w out=o\n")
static const char NESTED[] = HDR
    "graph main\ntensor x 64\ntensor p 16\ntensor y1 64\ntensor y2 64\ntensor z 64\n"
    "node placeholder out=x\nnode call in=x out=p\n"
    "node cond in=p,x true=t0 false=f0 out=y1\nnode cond in=p,x true=t1 false=f1 out=y2\n"
    "node call in=y1,y2 out=z\nnode output in=z\nend\n"
    "graph t0\ntensor i 64\ntensor q 16\ntensor o 64\nnode placeholder out=i\nnode call in=i out=q\n"
    "node cond in=q,i true=n0 false=n1 out=o\nnode output in=o\nend\n"
    PLAIN_BRANCH("f0") WIDE_BRANCH("n0", "1024") PLAIN_BRANCH("n1") WIDE_BRANCH("t1", "512") PLAIN_BRANCH("f1");

Test(verify, cond_results_hold_their_branch_memory_in_the_bound) {
    mp_options o;
    mp_options_default(&o);
    char *p = plan_of(NESTED, &o);
    verdict v = verify_text(NESTED, p);
    cr_assert_eq(v.rc, MP_OK, "%s\n%s", v.text, p);
    cr_assert_eq(v.lower, 1824, "lower bound %llu\n%s", (unsigned long long)v.lower, v.text);
    cr_assert_geq(v.total, v.lower);
    mp_xfree(p);
}

Test(verify, rule6_devices) {
    char *p = valid_plan(DEVS, true);
    cr_assert(strstr(p, "devices cpu:0 cpu:0 cuda:0 cuda:1"));
    expect_broken(DEVS, p, "alloc x mem_id=2", "alloc x mem_id=1", MP_RULE_DEVICE,
                  "device: x (cuda:0) lies in buffer 1, a cpu:0 buffer");
    expect_broken(DEVS, p, "devices cpu:0 cpu:0 cuda:0 cuda:1", "devices cuda:0 cpu:0 cuda:0 cuda:1",
                  MP_RULE_DEVICE, "buffer 0 (constants) is cpu:0");
    expect_broken(DEVS, p, "per_device=1", "per_device=0", MP_RULE_DEVICE,
                  "without per_device every buffer is cpu:0");
    mp_xfree(p);
}

Test(verify, rule7_frees) {
    char *p = valid_plan(DEVS, true);
    ASSERT_CONTAINS(p, "free d after=2\n");
    expect_broken(DEVS, p, "free d after=2\n", "", MP_RULE_FREE,
                  "free: dynamic tensor d is never freed (last use at node 2)");
    expect_broken(DEVS, p, "free d after=2\n", "free d after=1\n", MP_RULE_FREE,
                  "before its last use at node 2");
    expect_broken(DEVS, p, "free d after=2\n", "free d after=2\nfree y after=2\n", MP_RULE_FREE,
                  "free: y is freed, but only dynamic tensors");
    mp_xfree(p);
}

Test(verify, rule8_consistency) {
    char *p = valid_plan(CHAIN, false);
    expect_broken(CHAIN, p, "alloc a ", "alloc ghost mem_id=1 obj=0 offset=0 size=16 life=0,0\nalloc a ",
                  MP_RULE_CONSISTENCY, "alloc for ghost, which is not a tensor of graph main");
    expect_broken(CHAIN, p, "alloc a ", "alloc y mem_id=1 obj=0 offset=0 size=112 life=5,6\nalloc a ",
                  MP_RULE_CONSISTENCY, "second alloc for y");
    expect_broken(CHAIN, p, "life=2,3", "life=2,4", MP_RULE_CONSISTENCY,
                  "a has life=2,4 but is live at nodes 2..3");
    expect_broken(CHAIN, p, "end\n", "end\ngraph main\nbuffers 0 0\ndevices cpu:0 cpu:0\nend\n",
                  MP_RULE_CONSISTENCY, "second block for graph main");
    expect_broken(CHAIN, p, "end\n", "end\ngraph nope\nbuffers 0 0\ndevices cpu:0 cpu:0\nend\n",
                  MP_RULE_CONSISTENCY, "which the graph file does not define");
    expect_broken(CHAIN, p, "devices cpu:0 cpu:0", "devices cpu:0", MP_RULE_CONSISTENCY,
                  "2 buffers but 1 devices");
    expect_broken(CHAIN, p, "alloc_mutable=1", "alloc_mutable=7", MP_RULE_CONSISTENCY,
                  "alloc_mutable=7 is neither 0 nor 1");
    expect_broken(CHAIN, p, "alignment=16", "alignment=0", MP_RULE_CONSISTENCY, "alignment=0 is not in");
    mp_xfree(p);
    p = valid_plan(COND, false);
    char *dropped = edit(p, "graph t\nbuffers 0 16\ndevices cpu:0 cpu:0\nalloc o mem_id=1 obj=0 offset=0 size=16 life=1,2\nend\n", "");
    verdict v = verify_text(COND, dropped);
    cr_assert(v.per_rule[MP_RULE_CONSISTENCY] > 0);
    ASSERT_CONTAINS(v.text, "the plan has no block for graph t");
    mp_xfree(dropped);
    mp_xfree(p);
}

Test(verify, unreadable_plans_are_format_errors) {
    mp_program *p = must_parse(CHAIN);
    static const char *const bad[] = {
        "",
        "memplan-plan 2\n",
        "memplan-plan 1\n",
        "memplan-plan 1\noptions alignment=16\n",
        "memplan-plan 1\noptions alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=g\n"
        "graph main\nbuffers 0 x\n",
        "memplan-plan 1\noptions alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=g\n"
        "graph main\nbuffers 0 1\ndevices cpu:0 gpu:0\nend\n",
        "memplan-plan 1\noptions alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=g\n"
        "graph main\nbuffers 0 1\ndevices cpu:0 cpu:0\nalloc x mem_id=1 obj=0 offset=0 size=1\nend\n",
        "memplan-plan 1\noptions alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=g\n"
        "graph main\nbuffers 0 1\ndevices cpu:0 cpu:0\nalloc x mem_id=1 obj=0 offset=99999999999999999999 size=1 life=0,1\nend\n",
        "memplan-plan 1\noptions alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=g\n"
        "graph main\nbuffers 0 1\ndevices cpu:0 cpu:0\n",
        "memplan-plan 1\noptions alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=g\n"
        "alloc x mem_id=1 obj=0 offset=0 size=1 life=0,1\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mp_err err;
        mp_plan *plan = mp_plan_parse(bad[i], strlen(bad[i]), "p.mpp", p, &err);
        cr_assert_null(plan, "accepted unreadable plan %zu:\n%s", i, bad[i]);
        cr_assert_eq(err.code, MP_EFORMAT);
        cr_assert(strncmp(err.msg, "p.mpp:", 6) == 0, "%s", err.msg);
    }
    mp_program_free(p);
}

/* 200,000 tensors in a chain, two objects reused in turn: the verifier's
 * sweep handles it (speed is the bench's to measure, not a unit test's),
 * gets the quality right, and still finds one overlap among them all. */
Test(verify, a_large_plan_verifies) {
    const size_t n = 200000;
    mp_buf g, pl;
    mp_buf_init(&g);
    mp_buf_init(&pl);
    mp_buf_puts(&g, HDR "graph big\n");
    for (size_t i = 0; i < n; i++) mp_buf_printf(&g, "tensor t%zu 16\n", i);
    mp_buf_puts(&g, "node placeholder out=t0\n");
    for (size_t i = 1; i < n; i++) mp_buf_printf(&g, "node call in=t%zu out=t%zu\n", i - 1, i);
    mp_buf_printf(&g, "node output in=t%zu\nend\n", n - 1);
    mp_buf_puts(&pl, "memplan-plan 1\noptions alignment=16 alloc_inputs=1 alloc_outputs=1 "
                     "alloc_mutable=1 per_device=0 algo=test\ngraph big\nbuffers 0 32\n"
                     "devices cpu:0 cpu:0\n");
    for (size_t i = 0; i < n; i++)
        mp_buf_printf(&pl, "alloc t%zu mem_id=1 obj=%zu offset=%zu size=16 life=%zu,%zu\n", i,
                      i % 2, (i % 2) * 16, i, i + 1);
    mp_buf_puts(&pl, "end\n");
    verdict v = verify_text(g.data, pl.data);
    cr_assert_eq(v.rc, MP_OK, "%.2000s", v.text);
    cr_assert_eq(v.total, 32);
    cr_assert_eq(v.lower, 32);
    /* tensor 123457 moved onto its neighbour's bytes: one overlap */
    char *at = strstr(pl.data, "alloc t123457 mem_id=1 obj=1 offset=16 ");
    cr_assert(at);
    at[strlen("alloc t123457 mem_id=1 obj=1 offset=")] = '0';
    memmove(at + strlen("alloc t123457 mem_id=1 obj=1 offset=0"),
            at + strlen("alloc t123457 mem_id=1 obj=1 offset=16"),
            strlen(at + strlen("alloc t123457 mem_id=1 obj=1 offset=16")) + 1);
    v = verify_text(g.data, pl.data);
    cr_assert_eq(v.rc, MP_EINVALID);
    cr_assert_eq(v.per_rule[MP_RULE_OVERLAP], 2, "%.2000s", v.text); /* t123456 and t123458 */
    mp_buf_free(&g);
    mp_buf_free(&pl);
}

/* A delegate's scratch= is planned by every planner as a tensor live at its
 * node alone: it shares bytes with x (dead there), never with a or b; a
 * plan that puts it over a is an overlap naming both. */
static const char SCRATCH[] = HDR "graph main\ntensor x 1024\ntensor a 4096\ntensor b 4096\ntensor c 1024\n"
                                  "node placeholder out=x\nnode call in=x out=a\n"
                                  "node delegate in=a out=b backend=qnn scratch=8192\nnode call in=b out=c\n"
                                  "node output in=c\nend\n";

Test(verify, delegate_scratch_lives_at_its_node) {
    for (uint32_t algo = 0; algo < mp_planner_count(); algo++) {
        mp_options o;
        mp_options_default(&o);
        o.algo = algo;
        char *plan = plan_of(SCRATCH, &o);
        verdict v = verify_text(SCRATCH, plan);
        cr_assert_eq(v.rc, MP_OK, "%s: %s\n%s", mp_algo_name(algo), v.text, plan);
        cr_assert(strstr(plan, "alloc scratch.2 mem_id=1 ") && strstr(plan, " size=8192 life=2,2\n"), "%s", plan);
        cr_assert_eq(v.lower, 8192 + 4096 + 4096, "%s", v.text); /* scratch, a and b at node 2 */
        if (algo == MP_ALGO_OPT) cr_assert_eq(v.total, 16384, "%s", plan); /* at the bound */
        mp_xfree(plan);
    }
    mp_options o;
    mp_options_default(&o);
    o.algo = MP_ALGO_OPT;
    char *plan = plan_of(SCRATCH, &o);
    const char *at = strstr(plan, "alloc a ");
    cr_assert(at);
    unsigned long long off = strtoull(strstr(at, "offset=") + 7, NULL, 10);
    char from[64], to[64];
    const char *sc = strstr(plan, "alloc scratch.2 ");
    unsigned long long sc_off = strtoull(strstr(sc, "offset=") + 7, NULL, 10);
    snprintf(from, sizeof from, "alloc scratch.2 mem_id=1 obj=4 offset=%llu ", sc_off);
    snprintf(to, sizeof to, "alloc scratch.2 mem_id=1 obj=4 offset=%llu ", off);
    expect_broken(SCRATCH, plan, from, to, MP_RULE_OVERLAP, "scratch.2");
    mp_xfree(plan);
}

/* The overlap rule's interval tree (verify/itree.c) against a plain list:
 * random inserts, removals and queries, with many intervals at one offset
 * (ties broken by id) and enough live at once for a tree of three levels,
 * then drained to empty (every merge, the root shrinking) and refilled.
 * A query's answer is the first `max` overlapping intervals in (lo, id)
 * order, which is the order the sweep reports them in. */
typedef struct span_ref {
    uint64_t lo, hi;
    uint32_t id;
    bool live;
} span_ref;

static uint64_t tree_rand(uint64_t *x) {
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

static const span_ref *brute_spans; /* for the comparison below */

static int cmp_span_key(const void *a, const void *b) {
    const span_ref *x = &brute_spans[*(const uint32_t *)a], *y = &brute_spans[*(const uint32_t *)b];
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* The live spans overlapping [lo, hi), the first `max` by (lo, id). */
static uint32_t brute_query(const span_ref *s, uint32_t n, uint64_t lo, uint64_t hi, uint32_t *ids, uint32_t max) {
    uint32_t *hit = malloc((n + 1) * sizeof *hit), m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (s[i].live && s[i].lo < hi && s[i].hi > lo) hit[m++] = i;
    brute_spans = s;
    qsort(hit, m, sizeof *hit, cmp_span_key);
    uint32_t k = m < max ? m : max;
    for (uint32_t q = 0; q < k; q++) ids[q] = s[hit[q]].id;
    free(hit);
    return k;
}

static void tree_round(v_itree *t, span_ref *s, uint32_t n, uint64_t *seed, int remove_pct) {
    uint32_t got[300], want[300];
    for (uint32_t step = 0; step < 6 * n; step++) {
        uint32_t i = (uint32_t)(tree_rand(seed) % n);
        if (!s[i].live && (int)(tree_rand(seed) % 100) >= remove_pct) {
            s[i].live = true;
            mp_v_itree_insert(t, s[i].lo, s[i].hi, s[i].id);
        } else if (s[i].live && (int)(tree_rand(seed) % 100) < remove_pct) {
            s[i].live = false;
            mp_v_itree_remove(t, s[i].lo, s[i].id);
        }
        if (step % 7) continue;
        uint64_t lo = tree_rand(seed) % 5000, hi = lo + tree_rand(seed) % 700;
        uint32_t max = 1 + (uint32_t)(tree_rand(seed) % 300);
        uint32_t k = mp_v_itree_query(t, lo, hi, got, max), m = brute_query(s, n, lo, hi, want, max);
        cr_assert_eq(k, m, "step %u: query [%llu,%llu) max %u: %u answers, not %u", step, (unsigned long long)lo,
                     (unsigned long long)hi, max, k, m);
        for (uint32_t q = 0; q < k; q++) cr_assert_eq(got[q], want[q], "step %u: answer %u differs", step, q);
    }
}

Test(verify, interval_tree_answers_as_a_list_does) {
    enum { N = 3000 };
    span_ref *s = calloc(N, sizeof *s);
    uint64_t seed = 88172645463325252ull;
    for (uint32_t i = 0; i < N; i++) {
        uint64_t lo = i % 5 == 0 ? 1000 : tree_rand(&seed) % 5000; /* a fifth at one offset */
        s[i] = (span_ref){lo, lo + 1 + tree_rand(&seed) % 400, (i * 7919u) % N, false};
    }
    v_itree *t = mp_v_itree_new();
    tree_round(t, s, N, &seed, 20);  /* mostly inserts: it grows to thousands */
    tree_round(t, s, N, &seed, 50);
    tree_round(t, s, N, &seed, 100); /* removals only: drained */
    for (uint32_t i = 0; i < N; i++)
        if (s[i].live) s[i].live = false, mp_v_itree_remove(t, s[i].lo, s[i].id);
    uint32_t none[1];
    cr_assert_eq(mp_v_itree_query(t, 0, UINT64_MAX, none, 1), 0u, "drained, yet an interval answers");
    tree_round(t, s, N, &seed, 10); /* refilled */
    mp_v_itree_free(t);
    free(s);
}

/* The nearest member of in[0..n) below r (dir -1) or above it (+1), or -1. */
static int64_t brute_neighbour(const bool *in, uint32_t n, uint32_t r, int dir) {
    for (int64_t q = (int64_t)r + dir; q >= 0 && q < (int64_t)n; q += dir)
        if (in[q]) return q;
    return -1;
}

Test(verify, rank_set_finds_neighbours_as_a_list_does) {
    /* sizes around each level's word boundaries: one to four levels */
    static const uint32_t sizes[] = {1, 2, 63, 64, 65, 4095, 4096, 4097, 300000};
    uint64_t seed = 2463534242ull;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        uint32_t n = sizes[z], span = n < 5000 ? n : 5000; /* members stay sparse in the largest */
        bool *in = calloc(n, 1);
        v_rankset *s = mp_v_rankset_new(n);
        for (uint32_t step = 0; step < 4000; step++) {
            /* members clustered in [0, span) and at the far end, so queries cross empty levels */
            uint32_t r = (uint32_t)(tree_rand(&seed) % span);
            if (step % 3 == 0) r = n - 1 - r;
            if (tree_rand(&seed) % 100 < (step < 2000 ? 60u : 30u)) in[r] = true, mp_v_rankset_add(s, r);
            else in[r] = false, mp_v_rankset_remove(s, r);
            uint32_t q = (uint32_t)(tree_rand(&seed) % n);
            cr_assert_eq(mp_v_rankset_below(s, q), brute_neighbour(in, n, q, -1), "n %u step %u: below %u", n,
                         step, q);
            cr_assert_eq(mp_v_rankset_above(s, q), brute_neighbour(in, n, q, +1), "n %u step %u: above %u", n,
                         step, q);
        }
        mp_v_rankset_free(s);
        free(in);
    }
}

/* by_end for it[0..n): by end, then index, as overlap.c orders them. */
static int cmp_ending(const void *a, const void *b) {
    const v_ending *x = a, *y = b;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Whether two items share a byte while both are live in the sweep's sense
 * (the earlier one by start order has not ended before the later starts),
 * other than twins: one in-place family's members on the same bytes. */
static bool brute_meets(const v_item *it, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < i; j++) {
            const v_item *x = &it[i], *y = &it[j];
            bool twins = x->family == y->family && x->lo == y->lo && x->hi == y->hi;
            if (y->end >= x->start && y->lo < x->hi && x->lo < y->hi && !twins) return true;
        }
    return false;
}

/* Items of one buffer in start order, laid out in slots of 64 bytes (each
 * takes the lowest slot free at its start), so no two live ones meet; one
 * in four, where the item before is still live, is its twin instead (an
 * in-place op's output: same family, same bytes). */
static uint32_t slotted_items(v_item *it, uint32_t n, uint64_t *seed) {
    int32_t *slot_end = malloc(n * sizeof *slot_end);
    uint32_t slots = 0, last = 0, n_twins = 0;
    int32_t t = 0;
    for (uint32_t i = 0; i < n; i++) {
        t += (int32_t)(tree_rand(seed) % 3);
        int32_t end = t + (int32_t)(tree_rand(seed) % 40);
        if (i && it[i - 1].end >= t && tree_rand(seed) % 4 == 0) {
            it[i] = it[i - 1];
            it[i].start = t, it[i].end = end, it[i].alloc = (int32_t)i;
            if (end > slot_end[last]) slot_end[last] = end;
            n_twins++;
            continue;
        }
        uint32_t k = 0;
        while (k < slots && slot_end[k] >= t) k++;
        if (k == slots) slots++;
        slot_end[k] = end;
        last = k;
        uint64_t lo = 64 * (uint64_t)k + tree_rand(seed) % 8;
        it[i] = (v_item){0, lo, lo + 1 + tree_rand(seed) % 56, t, end, (int32_t)i, (int32_t)i};
    }
    free(slot_end);
    return n_twins;
}

/* The fast path's answer for it[0..n): false where it does not run. */
static bool fast_path(const v_item *it, uint32_t n, const v_ending *by_end) {
    v_ranks r;
    if (!mp_v_offset_ranks(it, n, &r)) return false;
    for (uint32_t k = 1; k < n; k++) { /* the ranks order the items by (offset, index) */
        const v_item *x = &it[r.who[k - 1]], *y = &it[r.who[k]];
        cr_assert(x->lo < y->lo || (x->lo == y->lo && r.who[k - 1] < r.who[k]), "rank %u out of order", k);
        cr_assert_eq(r.rank[r.who[k]], k, "rank and who disagree at %u", k);
    }
    bool disjoint = mp_v_sweep_disjoint(it, n, by_end, 0, &r);
    mp_v_ranks_free(&r);
    return disjoint;
}

Test(verify, disjoint_fast_path_agrees_with_every_pair) {
    enum { N = 1200 };
    v_item *it = malloc(N * sizeof *it);
    v_ending *by_end = malloc(N * sizeof *by_end);
    uint64_t seed = 1181783497276652981ull;
    uint32_t said_disjoint = 0, said_not = 0, twins_made = 0;
    for (int trial = 0; trial < 80; trial++) {
        uint32_t n = 16 + (uint32_t)(tree_rand(&seed) % (N - 16));
        twins_made += slotted_items(it, n, &seed);
        int mode = trial % 5;
        if (mode == 4) /* a twin one byte longer: one family, yet not the same bytes */
            for (uint32_t i = 1; i < n; i++)
                if (it[i].family == it[i - 1].family) {
                    it[i].hi++;
                    break;
                }
        if (mode >= 1 && mode <= 3) { /* one item moved: it may or may not meet a live one */
            uint32_t i = (uint32_t)(tree_rand(&seed) % n);
            uint64_t size = it[i].hi - it[i].lo;
            it[i].lo = tree_rand(&seed) % (64 * 12), it[i].hi = it[i].lo + size;
        }
        for (uint32_t i = 0; mode == 2 && i < n; i++) { /* the same past 2^40, in steps of 2^20 */
            it[i].lo = (it[i].lo << 20) + (UINT64_C(1) << 40);
            it[i].hi = (it[i].hi << 20) + (UINT64_C(1) << 40);
        }
        for (uint32_t i = 0; i < n; i++) by_end[i] = (v_ending){it[i].end, i};
        qsort(by_end, n, sizeof *by_end, cmp_ending);
        bool meets = brute_meets(it, n), fast = fast_path(it, n, by_end);
        cr_assert_eq(fast, !meets, "trial %d (%u items): fast path says %s, every pair says %s", trial, n,
                     fast ? "disjoint" : "not", meets ? "two meet" : "none meet");
        said_disjoint += fast, said_not += !fast;
        if (mode == 3) { /* offsets too wide for one word with the index: the tree decides */
            for (uint32_t i = 0; i < n; i++) it[i].lo |= UINT64_C(1) << 62 | 1, it[i].hi |= UINT64_C(1) << 62 | 1;
            cr_assert(!fast_path(it, n, by_end), "trial %d: 63-bit offsets taken", trial);
        }
    }
    cr_assert(said_disjoint >= 15 && said_not >= 15 && twins_made > 1000, "%u disjoint, %u not, %u twins",
              said_disjoint, said_not, twins_made);
    /* a run below the fast path's size goes to the tree, disjoint or not */
    slotted_items(it, 15, &seed);
    for (uint32_t i = 0; i < 15; i++) by_end[i] = (v_ending){it[i].end, i};
    qsort(by_end, 15, sizeof *by_end, cmp_ending);
    cr_assert(!fast_path(it, 15, by_end), "15 items took the fast path");
    free(by_end);
    free(it);
}
