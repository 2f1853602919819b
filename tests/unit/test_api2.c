/* test_api2.c - interface 2 from a caller's side (only memplan.h's
 * handles and accessors): options by name, the accessors' answers out of
 * range, the builder's sized specs, the report and the summary. */
#include <criterion/criterion.h>

#include "memplan.h"

#include <stddef.h>

#include <string.h>

static const char *GRAPH = "memplan-graph 1\ngraph main\ntensor x 64\ntensor y 32\ntensor z 16\n"
                           "node placeholder out=x\nnode call in=x out=y op=aten.relu.default\n"
                           "node call in=y out=z\nnode output in=z\nend\n";

static mp_program *parsed(void) {
    mp_err err;
    mp_program *p = mp_graph_parse(GRAPH, strlen(GRAPH), "g.mpg", &err);
    cr_assert_not_null(p, "%s", err.msg);
    return p;
}

static const char *option(const mp_options *o, const char *name, mp_buf *b) {
    mp_err err;
    b->len = 0;
    cr_assert_eq(mp_options_get(o, name, b, &err), MP_OK, "%s", err.msg);
    return b->data;
}

Test(api2, options_by_name_default_to_opt_and_refuse_bad_values_unchanged) {
    mp_err err;
    mp_buf b;
    mp_buf_init(&b);
    mp_options *o = mp_options_new(&err);
    cr_assert_str_eq(option(o, "algo", &b), "opt");
    cr_assert_str_eq(option(o, "alignment", &b), "16");
    cr_assert_eq(mp_options_set(o, "alignment", "64", &err), MP_OK);
    /* any alignment the command and the plan file take, as 1.x's Python did */
    cr_assert_eq(mp_options_set(o, "alignment", "48", &err), MP_OK, "%s", err.msg);
    cr_assert_str_eq(option(o, "alignment", &b), "48");
    cr_assert_eq(mp_options_set(o, "alignment", "1073741825", &err), MP_EFORMAT); /* past 2^30 */
    cr_assert(strstr(err.msg, "alignment"), "%s", err.msg);
    cr_assert_eq(mp_options_set(o, "alignment", "0", &err), MP_EFORMAT);
    cr_assert_str_eq(option(o, "alignment", &b), "48");
    cr_assert_eq(mp_options_set(o, "alignment", "64", &err), MP_OK);
    cr_assert_eq(mp_options_set(o, "alloc_inputs", "maybe", &err), MP_EFORMAT);
    cr_assert_str_eq(option(o, "alloc_inputs", &b), "1");
    cr_assert_eq(mp_options_set(o, "alloc_inputs", "false", &err), MP_OK);
    cr_assert_str_eq(option(o, "alloc_inputs", &b), "0");
    cr_assert_eq(mp_options_set(o, "banks", "sram=1K,dram=unlimited", &err), MP_OK, "%s", err.msg);
    cr_assert_str_eq(option(o, "banks", &b), "sram=1024,dram=unlimited");
    cr_assert_eq(mp_options_set(o, "banks", "sram=lots", &err), MP_EFORMAT);
    cr_assert_str_eq(option(o, "banks", &b), "sram=1024,dram=unlimited");
    cr_assert_eq(mp_options_set(o, "et_upstream", "21840", &err), MP_OK);
    cr_assert_str_eq(option(o, "et_exact", &b), "1");
    cr_assert_eq(mp_options_set(o, "no_such_option", "1", &err), MP_EFORMAT);
    cr_assert_eq(mp_options_get(o, "no_such_option", &b, &err), MP_EFORMAT);
    cr_assert_eq(mp_options_set(o, "algo", "nope", &err), MP_EFORMAT);
    mp_options_free(o);
    mp_options_free(NULL);
    mp_buf_free(&b);
}

Test(api2, accessors_read_the_program_and_answer_zero_out_of_range) {
    mp_program *p = parsed();
    cr_assert_eq(mp_program_graph_count(p), 1);
    cr_assert_str_eq(mp_program_graph_name(p, 0), "main");
    cr_assert_null(mp_program_graph_name(p, 1));
    cr_assert_eq(mp_program_method_count(p), 1);
    cr_assert_eq(mp_program_method(p, 0), 0);
    cr_assert_eq(mp_program_method(p, 1), -1);
    cr_assert_eq(mp_program_tensor_count(p, 0), 3);
    cr_assert_eq(mp_program_tensor_find(p, 0, "y"), 1);
    cr_assert_eq(mp_program_tensor_get(p, 0, 1, MP_TENSOR_SIZE), 32);
    cr_assert_eq(mp_program_tensor_get(p, 0, 1, MP_TENSOR_DEF_NODE), 2); /* node 1, + 1 */
    cr_assert_eq(mp_program_tensor_get(p, 0, 9, MP_TENSOR_SIZE), 0);
    cr_assert_eq(mp_program_tensor_get(p, 0, 1, 999), 0);
    cr_assert_eq(mp_program_node_count(p, 0), 4);
    cr_assert_eq(mp_program_node_get(p, 0, 1, MP_NODE_KIND), MP_NODE_CALL);
    cr_assert_str_eq(mp_program_node_op(p, 0, 1), "aten.relu.default");
    cr_assert_eq(mp_program_node_input(p, 0, 1, 0), 0);
    cr_assert_eq(mp_program_node_input(p, 0, 1, 1), -1);
    cr_assert_eq(mp_program_node_output(p, 0, 1, 0), 1);
    cr_assert_null(mp_program_node_op(p, 3, 0));
    cr_assert_eq(mp_program_tensor_count(NULL, 0), 0);
    mp_program_free(p);
}

Test(api2, plan_report_and_summary_through_handles) {
    mp_err err;
    mp_program *p = parsed();
    mp_plan *plan = mp_plan_program(p, NULL, &err); /* NULL: the defaults, opt */
    cr_assert_not_null(plan, "%s", err.msg);
    cr_assert_str_eq(mp_plan_algo(plan), "opt");
    cr_assert_eq(mp_plan_block_count(plan), 1);
    cr_assert_eq(mp_plan_buffer_count(plan, 0), 2);
    cr_assert_eq(mp_plan_buffer_size(plan, 0, 1), mp_plan_total_bytes(plan));
    cr_assert_eq(mp_plan_alloc_count(plan, 0), 3);
    cr_assert_eq(mp_plan_alloc_get(plan, 0, 0, MP_ALLOC_SIZE), 64);
    cr_assert_eq(mp_plan_alloc_get(plan, 0, 0, MP_ALLOC_FIRST), 1); /* node 0, + 1 */
    cr_assert_null(mp_plan_alloc_name(plan, 0, 3));
    cr_assert_eq(mp_plan_buffer_size(plan, 1, 0), 0);
    mp_report *r = mp_verify_plan(p, plan, &err);
    cr_assert_not_null(r, "%s", err.msg);
    cr_assert(mp_report_valid(r));
    cr_assert_eq(mp_report_get(r, MP_REPORT_TOTAL_BYTES), mp_plan_total_bytes(plan));
    uint64_t bytes, lower;
    int64_t peak;
    cr_assert_eq(mp_report_buffer(r, 1, &bytes, &lower, &peak), MP_OK);
    cr_assert_eq(lower, 96); /* x and y live together at node 1 */
    cr_assert_eq(mp_report_buffer(r, 9, &bytes, &lower, &peak), MP_EFORMAT);
    cr_assert_null(mp_report_finding(r, false, 0, MP_FINDING_MESSAGE));
    mp_buf b;
    mp_buf_init(&b);
    cr_assert_eq(mp_plan_summary(p, plan, false, &b, &err), MP_OK, "%s", err.msg);
    cr_assert(strstr(b.data, "summary: g.mpg, graph main, algo opt"), "%s", b.data);
    mp_buf_free(&b);
    mp_report_free(r);
    mp_plan_free(plan);
    mp_program_free(p);
}

Test(api2, builder_specs_carry_their_size) {
    mp_err err;
    mp_builder *b = mp_builder_new(&err);
    cr_assert_eq(mp_builder_graph(b, "main", &err), MP_OK);
    mp_tensor_spec t = {.struct_size = sizeof t, .name = "x", .size = 8};
    cr_assert_eq(mp_builder_tensor(b, &t, &err), MP_OK, "%s", err.msg);
    t.struct_size = 4; /* a caller that never set it */
    t.name = "y";
    cr_assert_eq(mp_builder_tensor(b, &t, &err), MP_EFORMAT);
    cr_assert(strstr(err.msg, "struct_size"), "%s", err.msg);
    /* a newer caller's bigger spec: fine while its extra fields are zero */
    struct {
        mp_tensor_spec s;
        uint64_t newer;
    } big = {{.struct_size = sizeof big, .name = "z", .size = 8}, 0};
    cr_assert_eq(mp_builder_tensor(b, &big.s, &err), MP_OK, "%s", err.msg);
    big.newer = 1;
    big.s.name = "w";
    cr_assert_eq(mp_builder_tensor(b, &big.s, &err), MP_EFORMAT);
    cr_assert(strstr(err.msg, "does not have"), "%s", err.msg);
    mp_builder_free(b);
}

/* A caller built against 2.0's header passes 2.0's smaller spec (no
 * offset): the library reads that many bytes and takes offset as 0, even
 * when the caller's memory past it holds garbage. */
Test(api2, builder_takes_a_2_0_tensor_spec) {
    mp_err err;
    mp_builder *b = mp_builder_new(&err);
    cr_assert_eq(mp_builder_graph(b, "main", &err), MP_OK);
    mp_tensor_spec base = {.struct_size = sizeof base, .name = "b", .size = 64};
    mp_tensor_spec old = {.struct_size = offsetof(mp_tensor_spec, offset), .name = "c", .size = 16,
                          .inplace = "b", .offset = 0xdead0}; /* not the caller's: past its struct */
    mp_tensor_spec now = {.struct_size = sizeof now, .name = "d", .size = 16, .inplace = "b", .offset = 32};
    cr_assert_eq(mp_builder_tensor(b, &base, &err), MP_OK, "%s", err.msg);
    cr_assert_eq(mp_builder_tensor(b, &old, &err), MP_OK, "%s", err.msg);
    cr_assert_eq(mp_builder_tensor(b, &now, &err), MP_OK, "%s", err.msg);
    old.struct_size = offsetof(mp_tensor_spec, at); /* smaller than any release's */
    old.name = "e";
    cr_assert_eq(mp_builder_tensor(b, &old, &err), MP_EFORMAT);
    mp_tensor_spec lone = {.struct_size = sizeof lone, .name = "f", .size = 16, .offset = 8};
    cr_assert_eq(mp_builder_tensor(b, &lone, &err), MP_EFORMAT); /* an offset needs a base */
    cr_assert(strstr(err.msg, "needs an in-place or a view base"), "%s", err.msg);
    const char *outs[] = {"b", "c", "d"};
    mp_node_spec n = {.struct_size = sizeof n, .kind = MP_NODE_CALL, .out = outs, .n_out = 3};
    mp_node_spec o = {.struct_size = sizeof o, .kind = MP_NODE_OUTPUT, .in = outs + 1, .n_in = 2};
    cr_assert_eq(mp_builder_node(b, &n, &err), MP_OK, "%s", err.msg);
    cr_assert_eq(mp_builder_node(b, &o, &err), MP_OK, "%s", err.msg);
    mp_program *p = mp_builder_finish(b, &err);
    cr_assert(p, "%s", err.msg);
    cr_assert_eq(mp_program_tensor_get(p, 0, 1, MP_TENSOR_OFFSET), 0);
    cr_assert_eq(mp_program_tensor_get(p, 0, 2, MP_TENSOR_OFFSET), 32);
    mp_program_free(p);
    mp_builder_free(b);
}
