/* verify.c - the verifier's driver: resolve the plan's blocks against the
 * program, run every rule, collect violations and the quality figures. */
#include "verify.h"

#include <math.h>
#include <stdio.h>

const char *mp_rule_name(uint32_t rule) {
    static const char *const names[] = {"",        "completeness", "size",
                                        "bounds",  "overlap",      "control-flow",
                                        "device",  "free",         "consistency"};
    return rule < MP_N_RULES ? names[rule] : "?";
}

static void check_options(vctx *c) {
    const mp_plan *p = c->plan;
    static const char *const flag_names[] = {"alloc_inputs", "alloc_outputs",
                                             "alloc_mutable", "per_device"};
    if (!mp_alignment_ok(p->raw_alignment)) {
        mp_v_violation(c, "", MP_RULE_CONSISTENCY, "options", NULL,
                    "options: alignment=%llu is not in 1..%u; sizes and offsets "
                    "are not checked", (unsigned long long)p->raw_alignment,
                    (unsigned)MP_MAX_ALIGNMENT);
        c->alignment = 0;
    } else {
        c->alignment = (uint32_t)p->raw_alignment;
    }
    for (int i = 0; i < 4; i++) {
        if (p->raw_flags[i] > 1)
            mp_v_violation(c, "", MP_RULE_CONSISTENCY, "options", NULL,
                        "options: %s=%llu is neither 0 nor 1", flag_names[i],
                        (unsigned long long)p->raw_flags[i]);
        c->flags[i] = p->raw_flags[i] != 0;
    }
}

/* Map blocks to graphs; report unknown, unreachable, duplicate and missing
 * blocks.  Then index each block's allocs by tensor, dropping duplicates. */
static void index_blocks(vctx *c) {
    const mp_program *prog = c->prog;
    const mp_plan *p = c->plan;
    for (uint32_t b = 0; b < p->n_graphs; b++) {
        const mp_graph_plan *gp = &p->graphs[b];
        int32_t gi = gp->graph;
        if (gi < 0) {
            mp_v_violation(c, gp->name, MP_RULE_CONSISTENCY, "block", NULL,
                        "consistency: the plan has a block for graph %s, which "
                        "the graph file does not define", gp->name);
        } else if (!c->reach[gi]) {
            mp_v_violation(c, gp->name, MP_RULE_CONSISTENCY, "block", NULL,
                        "consistency: the plan has a block for graph %s, which "
                        "the entry graph does not reach", gp->name);
        } else if (c->block_of[gi] >= 0) {
            mp_v_violation(c, gp->name, MP_RULE_CONSISTENCY, "duplicate", NULL,
                        "consistency: second block for graph %s", gp->name);
        } else {
            c->block_of[gi] = (int32_t)b;
        }
    }
    for (uint32_t gi = 0; gi < prog->n_graphs; gi++)
        if (c->reach[gi] && c->block_of[gi] < 0)
            mp_v_violation(c, prog->graphs[gi].name, MP_RULE_CONSISTENCY, "block", NULL,
                        "consistency: the plan has no block for graph %s",
                        prog->graphs[gi].name);
    c->entry = c->block_of[0] >= 0 ? &p->graphs[c->block_of[0]] : NULL;
    for (uint32_t gi = 0; gi < prog->n_graphs; gi++) {
        if (c->block_of[gi] < 0) continue;
        const mp_graphdef *g = &prog->graphs[gi];
        const mp_graph_plan *gp = &p->graphs[c->block_of[gi]];
        int32_t *of = c->alloc_of[gi] = mp_xmalloc((g->n_tensors + 1) * sizeof *of);
        c->usable[gi] = mp_xcalloc(gp->n_allocs + 1, 1);
        for (uint32_t t = 0; t < g->n_tensors; t++) of[t] = -1;
        if (gp->n_devices != gp->n_buffers)
            mp_v_violation(c, g->name, MP_RULE_CONSISTENCY, "devices", NULL,
                        "consistency: %u buffers but %u devices", gp->n_buffers,
                        gp->n_devices);
        for (uint32_t a = 0; a < gp->n_allocs; a++) {
            const mp_alloc *x = &gp->allocs[a];
            if (x->tensor < 0) {
                mp_v_violation(c, g->name, MP_RULE_CONSISTENCY, "unknown", NULL,
                            "consistency: alloc for %s, which is not a tensor of "
                            "graph %s (plan line %d)", x->name, g->name, x->line);
            } else if (of[x->tensor] >= 0) {
                mp_v_violation(c, g->name, MP_RULE_CONSISTENCY, "duplicate", NULL,
                            "consistency: second alloc for %s (plan line %d)",
                            x->name, x->line);
            } else {
                of[x->tensor] = (int32_t)a;
                c->usable[gi][a] = x->mem_id >= 1 && x->mem_id < gp->n_buffers;
            }
        }
    }
}


static int verify(const mp_program *prog, const mp_plan *plan, mp_verify_report *r,
                  mp_err *err) {
    mp_err_clear(err);
    memset(r, 0, sizeof *r);
    r->arena = mp_arena_new();
    uint32_t ng = prog->n_graphs;
    vctx c = {0};
    c.prog = prog;
    c.plan = plan;
    c.r = r;
    c.A = r->arena;
    c.reach = mp_xcalloc(ng, sizeof *c.reach);
    c.vg = mp_xcalloc(ng, sizeof *c.vg);
    c.block_of = mp_xmalloc(ng * sizeof *c.block_of);
    c.alloc_of = mp_xcalloc(ng, sizeof *c.alloc_of);
    c.usable = mp_xcalloc(ng, sizeof *c.usable);
    mp_graph_reachable(prog, c.reach);
    for (uint32_t gi = 0; gi < ng; gi++) {
        c.block_of[gi] = -1;
        if (c.reach[gi]) mp_v_graph_facts(&prog->graphs[gi], plan->raw_flags[3] != 0, &c.vg[gi]);
    }
    for (uint32_t gi = 0; gi < ng; gi++) {
        const mp_graphdef *g = &prog->graphs[gi];
        if (!c.reach[gi]) continue;
        for (uint32_t i = 0; i < g->n_nodes; i++)
            if (g->nodes[i].kind == MP_NODE_MAP || g->nodes[i].kind == MP_NODE_SCAN)
                c.vg[g->nodes[i].sub[0]].map_body = true;
    }
    check_options(&c);
    index_blocks(&c);
    mp_v_rules_structure(&c);
    mp_v_rules_overlap(&c);
    mp_v_quality(&c);
    for (uint32_t gi = 0; gi < ng; gi++) {
        if (c.reach[gi]) mp_v_graph_free(&c.vg[gi]);
        mp_xfree(c.alloc_of[gi]);
        mp_xfree(c.usable[gi]);
    }
    mp_xfree(c.reach);
    mp_xfree(c.vg);
    mp_xfree(c.block_of);
    mp_xfree(c.alloc_of);
    mp_xfree(c.usable);
    return r->n_violations ? MP_EINVALID : MP_OK;
}

void mp_verify_report_free(mp_verify_report *r) {
    if (!r) return;
    mp_xfree(r->buf_bytes);
    mp_xfree(r->buf_lower);
    mp_xfree(r->buf_peak);
    mp_arena_free(r->arena);
    memset(r, 0, sizeof *r);
}

int mp_v_verify_one(const mp_program *prog, const mp_plan *plan, mp_verify_report *r, mp_err *err) {
    return verify(prog, plan, r, err);
}
