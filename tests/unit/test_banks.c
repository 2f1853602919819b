/* test_banks.c - the memory map: parsing it, carrying it through graph and
 * plan files, and planning over it on generated graphs (every plan within
 * every capacity, or a refusal that names a bank). */
#include "helpers.h"

Test(banks, parse_accepts_sizes_suffixes_and_unlimited) {
    mp_banks b;
    mp_err err;
    cr_assert_eq(mp_banks_parse("sram=256K,dram:64M,ext=2G,huge=1T,tail=unlimited", &b, &err), MP_OK, "%s", err.msg);
    cr_assert_eq(b.n, 5);
    cr_assert_str_eq(b.bank[0].name, "sram");
    cr_assert_eq(b.bank[0].capacity, 262144);
    cr_assert_eq(b.bank[1].capacity, UINT64_C(64) << 20);
    cr_assert_eq(b.bank[2].capacity, UINT64_C(2) << 30);
    cr_assert_eq(b.bank[3].capacity, UINT64_C(1) << 40);
    cr_assert_eq(b.bank[4].capacity, MP_UNLIMITED);
    cr_assert_eq(mp_banks_parse("one=unlimited", &b, &err), MP_OK);
    cr_assert_eq(b.n, 0, "one unlimited bank is no map");
    cr_assert_eq(mp_banks_parse("one=1", &b, &err), MP_OK);
    cr_assert_eq(b.n, 1, "one bounded bank is a map");
}

Test(banks, parse_refuses_bad_maps) {
    static const char *const bad[][2] = {
        {"", "bad bank"},           {"sram", "want NAME=SIZE"},       {"=1K", "want NAME=SIZE"},
        {"s ram=1K", "bad bank name"}, {"sram=0", "bad size '0'"},  {"sram=1x", "bad size '1x'"},
        {"sram=", "bad size ''"},   {"sram=16777216T", "bad size"}, {"sram=18446744073709551615", "bad size"},
        {"a=1,a=2", "bank 'a' given twice"}, {"a=1,", "bad bank"},
        {"a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1", "more than 8 banks"},
        {"abcdefghijklmnopqrstuvwxyz0123456=1", "want NAME=SIZE"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mp_banks b;
        mp_err err;
        cr_assert_eq(mp_banks_parse(bad[i][0], &b, &err), MP_EFORMAT, "'%s' accepted", bad[i][0]);
        cr_assert(strstr(err.msg, bad[i][1]), "'%s': message '%s' lacks '%s'", bad[i][0], err.msg, bad[i][1]);
    }
}

Test(banks, graph_and_plan_files_carry_the_map) {
    mp_program *p = must_parse("memplan-graph 1\nbanks sram=64K dram=unlimited\ngraph main\ntensor x 100\n"
                               "tensor y 100000\nnode placeholder out=x\nnode call in=x out=y\nnode output in=y\nend\n");
    cr_assert_eq(p->banks.n, 2);
    mp_buf b;
    mp_buf_init(&b);
    mp_graph_write(p, &b);
    cr_assert(strstr(b.data, "\nbanks sram=65536 dram=unlimited\n"), "%s", b.data);
    mp_buf_free(&b);
    mp_options o;
    mp_options_default(&o);
    o.algo = MP_ALGO_OPT;
    mp_err err;
    mp_plan *plan = mp_plan_program(p, &o, &err); /* the file's map, as no option gives one */
    cr_assert(plan, "%s", err.msg);
    mp_buf_init(&b);
    mp_plan_write(plan, &b);
    cr_assert(strstr(b.data, " banks=sram:65536,dram:unlimited\n"), "%s", b.data);
    mp_plan *back = mp_plan_parse(b.data, b.len, "p.mpp", p, &err);
    cr_assert(back, "%s", err.msg);
    cr_assert_eq(back->opts.banks.n, 2);
    cr_assert_eq(back->opts.banks.bank[0].capacity, 65536);
    cr_assert_eq(plan->graphs[0].buffers[1] <= 65536, true);
    mp_buf_free(&b);
    mp_plan_free(back);
    mp_plan_free(plan);
    mp_program_free(p);
}

/* On generated graphs with a fast bank of a third of their need: every
 * planner with a map plans within every capacity (the verifier agrees) or
 * refuses naming a bank. */
Test(banks, plans_stay_within_capacities_on_generated_graphs) {
    const uint32_t algos[] = {MP_ALGO_OPT, (uint32_t)mp_algo_parse("tflm"), (uint32_t)mp_algo_parse("bestfit")};
    unsigned planned = 0, refused = 0;
    for (uint64_t i = 0; i < 60; i++) {
        mp_gen_options g;
        mp_options o;
        mp_harness_case(77, i, &g, &o);
        if (o.per_device) continue;
        mp_program *p = generated_program(&g);
        o.algo = MP_ALGO_OPT;
        o.banks.n = 0;
        mp_err err;
        mp_plan *free_plan = mp_plan_program(p, &o, &err);
        if (!free_plan) {
            mp_program_free(p);
            continue;
        }
        uint64_t need = free_plan->graphs[0].n_buffers > 1 ? free_plan->graphs[0].buffers[1] : 0;
        mp_plan_free(free_plan);
        char map[96];
        snprintf(map, sizeof map, "fast=%llu,mid=%llu,slow=unlimited", (unsigned long long)(need / 3 + 1),
                 (unsigned long long)(need / 3 + 1));
        cr_assert_eq(mp_banks_parse(map, &o.banks, &err), MP_OK, "%s", err.msg);
        for (int order = 0; order < 2; order++)
            for (size_t k = 0; k < 3; k++) {
                o.algo = algos[k];
                o.spill_order = (uint32_t)order;
                mp_plan *plan = mp_plan_program(p, &o, &err);
                if (!plan) {
                    cr_assert_eq(err.code, MP_EPLAN, "case %llu: %s", (unsigned long long)i, err.msg);
                    cr_assert(strstr(err.msg, "bank '") || strstr(err.msg, "mem_id="), "%s", err.msg);
                    refused++;
                    continue;
                }
                const mp_graph_plan *e = &plan->graphs[0];
                for (uint32_t b = 1; b < e->n_buffers && b <= 3; b++)
                    cr_assert_leq(e->buffers[b], o.banks.bank[b - 1].capacity, "case %llu bank %u", (unsigned long long)i, b);
                mp_verify_report r;
                cr_assert_eq(mp_verify(p, plan, &r, &err), MP_OK, "case %llu %s: %s", (unsigned long long)i,
                             mp_algo_name(algos[k]), r.n_v ? r.v[0].msg : err.msg);
                mp_verify_report_free(&r);
                mp_plan_free(plan);
                planned++;
            }
        mp_program_free(p);
    }
    cr_assert_gt(planned, 100, "only %u plans (%u refused)", planned, refused);
}
