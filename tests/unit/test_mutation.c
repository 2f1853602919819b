/* test_mutation.c - the verifier against damaged plans.
 *
 * Valid plans of many generated graphs (every algorithm, with and without
 * per-device planning) are damaged in every way the issue lists: an offset
 * shifted into a live neighbour, a misaligned offset, a wrong size, a
 * tensor moved to another buffer or to another device's buffer, a shrunk
 * buffer, a dropped or duplicated alloc, a broken control-flow
 * reservation, a wrong device line, a dropped free.  Each mutant must be
 * rejected naming the rule that its damage breaks.  The test reports how
 * many mutants it made and killed; all must be killed. */
#include "helpers.h"

#include <stdio.h>

typedef struct tally {
    unsigned made, killed;
    unsigned per_kind[16];
} tally;

static const char *const KIND[] = {"shift-into-neighbour", "misalign",      "resize",
                                   "other-buffer",         "other-device",  "shrink-buffer",
                                   "drop-alloc",           "dup-alloc",     "break-reservation",
                                   "wrong-device-line",    "drop-free"};

static void check(const mp_program *p, const mp_plan *plan, uint32_t rule, int kind, tally *t,
                  const char *what) {
    mp_verify_report r;
    mp_err err;
    int rc = mp_verify(p, plan, &r, &err);
    t->made++;
    bool killed = rc == MP_EINVALID && r.per_rule[rule] > 0;
    if (killed) {
        t->killed++;
        t->per_kind[kind]++;
    } else {
        mp_buf b;
        mp_buf_init(&b);
        mp_verify_write_text(&r, &b);
        cr_log_error("mutant %s (%s) survived or named the wrong rule (want %s):\n%s", KIND[kind], what,
                     mp_rule_name(rule), b.data);
        mp_buf_free(&b);
    }
    mp_verify_report_free(&r);
}

static bool overlaps(const mp_alloc *a, const mp_alloc *b) {
    return a->mem_id == b->mem_id && a->life_start <= b->life_end && b->life_start <= a->life_end;
}

static mp_graph_plan *block(mp_plan *plan, int32_t g) {
    for (uint32_t i = 0; i < plan->n_graphs; i++)
        if (plan->graphs[i].graph == g) return &plan->graphs[i];
    return NULL;
}

/* Parent tensors live at a control-flow node, and that node's sub-graph
 * memory: put the parent tensor on the sub-graph's first allocation. */
static void break_reservation(const mp_program *p, mp_plan *plan, tally *t) {
    for (uint32_t gi = 0; gi < p->n_graphs; gi++) {
        mp_graph_plan *gp = block(plan, (int32_t)gi);
        if (!gp) continue;
        const mp_graphdef *g = &p->graphs[gi];
        for (uint32_t n = 0; n < g->n_nodes; n++) {
            int32_t s = g->nodes[n].sub[0];
            mp_graph_plan *sp = s >= 0 ? block(plan, s) : NULL;
            if (!sp) continue;
            for (uint32_t a = 0; a < sp->n_allocs; a++) {
                const mp_alloc *inner = &sp->allocs[a];
                if (!inner->size) continue;
                for (uint32_t k = 0; k < gp->n_allocs; k++) {
                    mp_alloc *outer = &gp->allocs[k];
                    if (!outer->size || outer->mem_id != inner->mem_id) continue;
                    if (outer->life_start > (int64_t)n || outer->life_end < (int64_t)n) continue;
                    uint64_t save = outer->offset;
                    outer->offset = inner->offset;
                    check(p, plan, MP_RULE_CONTROL_FLOW, 8, t, outer->name);
                    outer->offset = save;
                    return;
                }
            }
        }
    }
}

/* 1. shift an offset into a live neighbour (not within an in-place
 * family, whose members may share) */
static void shift_into_neighbour(const mp_program *p, mp_plan *plan, mp_graph_plan *gp, tally *t) {
    uint32_t n = gp->n_allocs;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            mp_alloc *a = &gp->allocs[i], *b = &gp->allocs[j];
            if (i == j || !a->size || !b->size || !overlaps(a, b)) continue;
            const mp_tensor *ta = &p->graphs[gp->graph].tensors[a->tensor];
            const mp_tensor *tb = &p->graphs[gp->graph].tensors[b->tensor];
            if (ta->inplace_base >= 0 || tb->inplace_base >= 0) continue;
            uint64_t save = a->offset;
            a->offset = b->offset;
            check(p, plan, MP_RULE_OVERLAP, 0, t, a->name);
            a->offset = save;
            return;
        }
}

/* 2-5. one alloc misaligned, resized, moved past the buffers, moved to
 * another device's buffer */
static void damage_one_alloc(const mp_program *p, mp_plan *plan, mp_graph_plan *gp, mp_alloc *a, tally *t) {
    uint32_t align = plan->opts.alignment;
    if (align > 1) {
        a->offset += 1;
        check(p, plan, MP_RULE_SIZE, 1, t, a->name);
        a->offset -= 1;
    }
    a->size += align;
    check(p, plan, MP_RULE_SIZE, 2, t, a->name);
    a->size -= align;
    uint64_t m = a->mem_id;
    a->mem_id = gp->n_buffers;
    check(p, plan, MP_RULE_BOUNDS, 3, t, a->name);
    a->mem_id = m;
    if (plan->opts.per_device)
        for (uint32_t b = 1; b < gp->n_devices; b++) {
            if (mp_device_eq(gp->devices[b], gp->devices[m])) continue;
            a->mem_id = b;
            check(p, plan, MP_RULE_DEVICE, 4, t, a->name);
            a->mem_id = m;
            break;
        }
}

/* 6. shrink the buffer under the allocation reaching highest */
static void shrink_buffer(const mp_program *p, mp_plan *plan, mp_graph_plan *gp, tally *t) {
    mp_alloc *top = NULL;
    for (uint32_t i = 0; i < gp->n_allocs; i++)
        if (gp->allocs[i].size &&
            (!top || gp->allocs[i].offset + gp->allocs[i].size > top->offset + top->size))
            top = &gp->allocs[i];
    if (!top) return;
    uint64_t save = gp->buffers[top->mem_id];
    gp->buffers[top->mem_id] = top->offset + top->size - 1;
    check(p, plan, MP_RULE_BOUNDS, 5, t, top->name);
    gp->buffers[top->mem_id] = save;
}

/* 7, 8. drop an alloc; duplicate one */
static void drop_and_duplicate(const mp_program *p, mp_plan *plan, mp_graph_plan *gp, tally *t) {
    uint32_t n = gp->n_allocs;
    mp_alloc saved = gp->allocs[n - 1];
    gp->n_allocs--;
    check(p, plan, MP_RULE_COMPLETENESS, 6, t, saved.name);
    gp->n_allocs++;
    mp_alloc *orig = gp->allocs, *more = mp_xmalloc((n + 1) * sizeof *more);
    memcpy(more, orig, n * sizeof *more);
    more[n] = more[0];
    gp->allocs = more;
    gp->n_allocs = n + 1;
    check(p, plan, MP_RULE_CONSISTENCY, 7, t, more[0].name);
    gp->allocs = orig;
    gp->n_allocs = n;
    mp_xfree(more);
}

/* 10, 11. a wrong device line; a dropped free */
static void damage_lines(const mp_program *p, mp_plan *plan, mp_graph_plan *gp, tally *t) {
    if (gp->n_devices > 1) {
        mp_device d = gp->devices[1];
        gp->devices[1] = (mp_device){MP_DEV_CUDA, 7};
        check(p, plan, MP_RULE_DEVICE, 9, t, "devices");
        gp->devices[1] = d;
    }
    if (gp->n_frees) {
        gp->n_frees--;
        check(p, plan, MP_RULE_FREE, 10, t, gp->frees[gp->n_frees].name);
        gp->n_frees++;
    }
}

static void mutate_all(const mp_program *p, mp_plan *plan, tally *t) {
    for (uint32_t bi = 0; bi < plan->n_graphs; bi++) {
        mp_graph_plan *gp = &plan->graphs[bi];
        shift_into_neighbour(p, plan, gp, t);
        if (!gp->n_allocs) continue;
        damage_one_alloc(p, plan, gp, &gp->allocs[gp->n_allocs / 2], t);
        shrink_buffer(p, plan, gp, t);
        drop_and_duplicate(p, plan, gp, t);
        damage_lines(p, plan, gp, t);
    }
    break_reservation(p, plan, t); /* 9 */
}

Test(mutation, every_damaged_plan_is_rejected_with_the_right_rule) {
    tally t = {0};
    unsigned plans = 0;
    for (uint64_t i = 0; i < 120; i++) {
        mp_gen_options g;
        mp_options o;
        mp_harness_case(77, i, &g, &o);
        mp_program *p = generated_program(&g);
        for (uint32_t k = 0; k < mp_planner_count(); k++) { /* every planner's plans */
            o.algo = k;
            mp_err err;
            mp_plan *plan = mp_plan_program(p, &o, &err);
            if (!plan) continue; /* a refusal: nothing to damage */
            mp_buf pb;
            mp_buf_init(&pb);
            mp_plan_write(plan, &pb);
            mp_plan_free(plan);
            mp_plan *back = mp_plan_parse(pb.data, pb.len, "p.mpp", p, &err);
            mp_buf_free(&pb);
            cr_assert(back, "%s", err.msg);
            mp_verify_report r;
            cr_assert_eq(mp_verify(p, back, &r, &err), MP_OK, "an undamaged plan is invalid");
            mp_verify_report_free(&r);
            mutate_all(p, back, &t);
            mp_plan_free(back);
            plans++;
        }
        mp_program_free(p);
    }
    printf("mutation: %u plans, %u mutants, %u killed (", plans, t.made, t.killed);
    for (int k = 0; k < 11; k++) printf("%s%s %u", k ? ", " : "", KIND[k], t.per_kind[k]);
    printf(")\n");
    for (int k = 0; k < 11; k++) cr_assert_gt(t.per_kind[k], 0, "no mutant of kind %s was made", KIND[k]);
    cr_assert_eq(t.killed, t.made, "%u of %u mutants survived", t.made - t.killed, t.made);
}
