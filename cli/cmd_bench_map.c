/* cmd_bench_map.c - `memplan bench --map`: planning over a memory map.
 * Each graph gets two banks, a fast one holding half of what the graph
 * needs without a map and an unlimited slow one; it is planned with the
 * plain fill (--spill-order program: the first used stay) and with opt's
 * default (value: the largest size x lifetime stay).  Per graph the table
 * gives the bytes in each bank and the slow traffic: the share of the
 * entry graph's size x lifetime that sits in the slow bank (a stand-in for
 * the accesses that go to slow memory), the figure the value order lowers. */
#include "cli.h"

#include <stdio.h>
#include <time.h>

typedef struct map_run {
    uint64_t fast, slow;
    double traffic; /* percent of size x lifetime in the slow bank */
    double ms;
    int code;
} map_run;


/* The entry graph's share of size x lifetime in buffers 2 and up. */
static double slow_traffic(const mp_plan *plan) {
    const mp_graph_plan *g = &plan->graphs[0];
    double all = 0, slow = 0;
    for (uint32_t k = 0; k < g->n_allocs; k++) {
        const mp_alloc *a = &g->allocs[k];
        double w = (double)a->size * (double)(a->life_end - a->life_start + 1);
        all += w;
        if (a->mem_id >= 2) slow += w;
    }
    return all > 0 ? 100.0 * slow / all : 0;
}

static map_run plan_map(const mp_program *p, const char *map, uint32_t order) {
    map_run r = {0, 0, 0, 0, 0};
    mp_options o;
    mp_options_default(&o);
    o.algo = MP_ALGO_OPT;
    o.spill_order = order;
    mp_err err;
    mp_banks_parse(map, &o.banks, &err);
    double t0 = mp_cli_now_ms();
    mp_plan *plan = mp_plan_program_alone(p, &o, &err); /* the spill orders themselves, no portfolio */
    r.ms = mp_cli_now_ms() - t0;
    if (!plan) {
        r.code = err.code;
        return r;
    }
    const mp_graph_plan *g = &plan->graphs[0];
    r.fast = g->n_buffers > 1 ? g->buffers[1] : 0;
    for (uint32_t b = 2; b < g->n_buffers; b++) r.slow += g->buffers[b];
    r.traffic = slow_traffic(plan);
    mp_plan_free(plan);
    return r;
}

static void print_run(const map_run *r) {
    if (r->code) printf(" refused | | | |");
    else printf(" %llu | %llu | %.1f%% | %.1f |", (unsigned long long)r->fast, (unsigned long long)r->slow,
                r->traffic, r->ms);
}

/* One graph: its own need without a map, then both orders over a map
 * whose fast bank holds half of it.  Returns 1 when the value order sent
 * less traffic to the slow bank than the fill, 0 otherwise, -1 on error. */
static int map_case(const char *label, const mp_program *p) {
    mp_options o;
    mp_options_default(&o);
    o.algo = MP_ALGO_OPT;
    mp_err err;
    mp_plan *plan = mp_plan_program_alone(p, &o, &err); /* the spill orders themselves, no portfolio */
    if (!plan) return -1;
    uint64_t need = plan->graphs[0].n_buffers > 1 ? plan->graphs[0].buffers[1] : 0;
    mp_plan_free(plan);
    uint64_t fast = need / 2 / 16 * 16;
    if (fast < 16) return -1;
    char map[96];
    snprintf(map, sizeof map, "fast=%llu,slow=unlimited,pool3=unlimited", (unsigned long long)fast);
    map_run fill = plan_map(p, map, MP_SPILL_PROGRAM), value = plan_map(p, map, MP_SPILL_VALUE);
    printf("| %s | %llu | %llu |", label, (unsigned long long)need, (unsigned long long)fast);
    print_run(&fill);
    print_run(&value);
    printf("\n");
    fflush(stdout);
    return !fill.code && !value.code && value.traffic < fill.traffic;
}

/* A generated graph of profile `name` without sub-graphs (their memory
 * stays in the fast bank: none here), NULL when it does not parse. */
static mp_program *generated(const char *name, uint64_t tensors, uint64_t seed) {
    mp_gen_options g;
    mp_gen_options_default(&g);
    g.seed = seed;
    g.tensors = tensors;
    g.depth = 0;
    g.profile = (uint32_t)mp_gen_profile_parse(name);
    mp_buf b;
    mp_buf_init(&b);
    mp_gen(&g, &b);
    mp_err err;
    mp_program *p = mp_graph_parse(b.data, b.len, "<gen>", &err);
    mp_buf_free(&b);
    return p;
}

/* --------------------------------------- ExecuTorch's banked greedy */

typedef struct banked_tally {
    int cases, greedy_refused, opt_only, greedy_only, opt_above, opt_below;
    uint64_t greedy_bytes, opt_bytes; /* where both planned and greedy's plan is valid */
} banked_tally;

/* One planning over `map`: the entry's bytes per bank (fast, the rest),
 * and whether it planned and, for banked greedy, verified valid. */
static bool plan_banked(const mp_program *p, const char *map, bool greedy, uint64_t *fast, uint64_t *slow) {
    mp_options o;
    mp_options_default(&o);
    o.algo = greedy ? MP_ALGO_GREEDY : MP_ALGO_OPT;
    o.et_exact = greedy;
    o.et_upstream = greedy ? MP_UPSTREAM_21821 : 0;
    mp_err err;
    mp_banks_parse(map, &o.banks, &err);
    mp_plan *plan = mp_plan_program(p, &o, &err);
    if (!plan) return false;
    mp_verify_report r;
    bool ok = !greedy || (mp_verify(p, plan, &r, &err) == MP_OK && r.n_violations == 0);
    if (greedy) mp_verify_report_free(&r);
    const mp_graph_plan *g = &plan->graphs[0];
    *fast = g->n_buffers > 1 ? g->buffers[1] : 0;
    *slow = 0;
    for (uint32_t b = 2; b < g->n_buffers; b++) *slow += g->buffers[b];
    mp_plan_free(plan);
    return ok;
}

/* Banked greedy and opt over maps whose fast bank holds a quarter or half
 * of the need and whose slow bank the rest and a tenth more. */
static void banked_case(const char *label, const mp_program *p, uint64_t need, banked_tally *t) {
    for (int q = 1; q <= 2; q++) {
        uint64_t fast = need * (uint64_t)q / 4 / 16 * 16 + 16, slow = need - fast + need / 10;
        char map[96];
        snprintf(map, sizeof map, "fast=%llu,slow=%llu", (unsigned long long)fast, (unsigned long long)slow);
        uint64_t gf = 0, gs = 0, of = 0, os = 0;
        bool g = plan_banked(p, map, true, &gf, &gs), o = plan_banked(p, map, false, &of, &os);
        t->cases++;
        t->greedy_refused += !g, t->opt_only += o && !g, t->greedy_only += g && !o;
        if (g && o) {
            t->greedy_bytes += gf + gs, t->opt_bytes += of + os;
            t->opt_above += of + os > gf + gs, t->opt_below += of + os < gf + gs;
        }
        printf("| %s | %d%% |", label, 25 * q);
        if (g) printf(" %llu | %llu |", (unsigned long long)gf, (unsigned long long)gs);
        else printf(" refused or invalid | |");
        if (o) printf(" %llu | %llu |\n", (unsigned long long)of, (unsigned long long)os);
        else printf(" refused | |\n");
    }
}

static void banked_summary(const banked_tally *t) {
    printf("\nBanked greedy refused (or made an invalid plan) on %d of %d maps; opt planned %d of those and "
           "refused %d that banked greedy planned.  Where both planned: opt below banked greedy on %d, above on %d; "
           "%llu against %llu bytes (%.1f%% less).\n\n", t->greedy_refused, t->cases, t->opt_only, t->greedy_only,
           t->opt_below, t->opt_above, (unsigned long long)t->opt_bytes, (unsigned long long)t->greedy_bytes,
           t->greedy_bytes ? 100.0 * (1.0 - (double)t->opt_bytes / (double)t->greedy_bytes) : 0.0);
}

/* ExecuTorch's banked greedy (PR #21821) and opt over the same tight maps,
 * on CPU graphs of every realistic profile (no pools of their own). */
static int bench_banked(uint64_t max_tensors) {
    static const char *const profiles[] = {"mixed", "chain", "wide", "encdec", "transformer"};
    printf("### Memory map: ExecuTorch's banked greedy (PR #21821) and opt over the same map\n\n"
           "| graph | fast bank (share of need) | banked greedy: fast | banked greedy: slow | opt: fast | opt: slow |\n"
           "|---|---:|---:|---:|---:|---:|\n");
    banked_tally t;
    memset(&t, 0, sizeof t);
    for (uint64_t n = 1000; n <= max_tensors && n <= 10000; n *= 10)
        for (uint64_t seed = 1; seed <= 3; seed++)
            for (size_t k = 0; k < sizeof profiles / sizeof *profiles; k++) {
                mp_err err;
                mp_program *p = generated(profiles[k], n, seed);
                if (!p) return 1;
                mp_options o;
                mp_options_default(&o);
                mp_plan *plan = mp_plan_program(p, &o, &err);
                if (plan) {
                    char label[64];
                    snprintf(label, sizeof label, "%s-%llu-s%llu", profiles[k], (unsigned long long)n,
                             (unsigned long long)seed);
                    banked_case(label, p, mp_plan_total_bytes(plan), &t);
                }
                mp_plan_free(plan);
                mp_program_free(p);
            }
    banked_summary(&t);
    return 0;
}

int mp_bench_map(uint64_t max_tensors) {
    static const char *const profiles[] = {"mixed", "chain", "wide", "encdec", "transformer"};
    printf("### Memory map: half of the need in a fast bank, the rest spilled (opt)\n\n"
           "| graph | need (bytes) | fast capacity | fill: fast | fill: slow | fill: slow traffic | fill ms "
           "| value: fast | value: slow | value: slow traffic | value ms |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    int better = 0, cases = 0;
    for (uint64_t n = 1000; n <= max_tensors && n <= 100000; n *= 10)
        for (size_t k = 0; k < sizeof profiles / sizeof *profiles; k++) {
            mp_program *p = generated(profiles[k], n, 1);
            if (!p) return 1;
            char label[64];
            snprintf(label, sizeof label, "%s-%llu", profiles[k], (unsigned long long)n);
            int r = map_case(label, p);
            mp_program_free(p);
            if (r < 0) continue;
            cases++;
            better += r;
        }
    printf("\nThe value order sent less traffic to the slow bank than the fill on %d of %d graphs.\n\n", better,
           cases);
    return bench_banked(max_tensors);
}
