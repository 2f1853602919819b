/* fuzz_planfile.c - target "planfile": the .mpp parser and writer.
 *
 * Any bytes, parsed twice: without a program and against a fixed one.
 * The parser judges syntax only, so both parses must accept or reject the
 * same input (MP_EFORMAT with "FILE:LINE: message" when they reject).
 * Names must resolve exactly to the program's graphs and tensors (-1 when
 * unknown).  An accepted plan must write back to text that parses to the
 * same plan (options clamped to legal values), and writing that again must
 * give the same bytes. */
#include "fuzz.h"
#include "internal.h"

#include <string.h>


static const mp_program *program(void) { return fuzz_fixed_program(); }

static void check_names(const mp_plan *pl, const mp_program *prog) {
    for (uint32_t b = 0; b < pl->n_graphs; b++) {
        const mp_graph_plan *g = &pl->graphs[b];
        int32_t want = prog ? mp_graph_find(prog, g->name) : -1;
        FUZZ_ASSERT(g->graph == want, "block %s resolved to graph %d, want %d", g->name, g->graph,
                    want);
        const mp_graphdef *gd = want >= 0 ? &prog->graphs[want] : NULL;
        FUZZ_ASSERT(g->n_buffers == 0 || g->buffers, "buffers missing");
        FUZZ_ASSERT(g->n_devices == 0 || g->devices, "devices missing");
        for (uint32_t i = 0; i < g->n_allocs; i++) {
            const mp_alloc *a = &g->allocs[i];
            int32_t t = gd ? mp_tensor_find(gd, a->name) : -1;
            FUZZ_ASSERT(a->tensor == t, "alloc %s resolved to %d, want %d", a->name, a->tensor, t);
            FUZZ_ASSERT(a->line > 0, "alloc without a line");
            FUZZ_ASSERT(a->life_start >= 0 && a->life_start <= INT32_MAX && a->life_end >= 0 &&
                            a->life_end <= INT32_MAX,
                        "life out of range");
        }
        for (uint32_t i = 0; i < g->n_frees; i++) {
            const mp_free *f = &g->frees[i];
            int32_t t = gd ? mp_tensor_find(gd, f->name) : -1;
            FUZZ_ASSERT(f->tensor == t, "free %s resolved to %d, want %d", f->name, f->tensor, t);
            FUZZ_ASSERT(f->after >= 0 && f->after <= INT32_MAX, "free point out of range");
        }
    }
}

/* b is parse(write(a)): the same plan, with a's options clamped. */
static void check_same(const mp_plan *a, const mp_plan *b) {
    FUZZ_ASSERT(b->raw_alignment == a->opts.alignment, "alignment %llu written as %llu",
                (unsigned long long)a->opts.alignment, (unsigned long long)b->raw_alignment);
    FUZZ_ASSERT(a->opts.alignment >= 1 && a->opts.alignment <= MP_MAX_ALIGNMENT,
                "clamped alignment out of range");
    for (int i = 0; i < 4; i++)
        FUZZ_ASSERT(b->raw_flags[i] == (a->raw_flags[i] != 0), "flag %d not kept", i);
    FUZZ_ASSERT(strcmp(a->algo_name, b->algo_name) == 0, "algo name changed");
    FUZZ_ASSERT(a->n_graphs == b->n_graphs, "round trip: %u blocks became %u", a->n_graphs,
                b->n_graphs);
    for (uint32_t k = 0; k < a->n_graphs; k++) {
        const mp_graph_plan *x = &a->graphs[k], *y = &b->graphs[k];
        FUZZ_ASSERT(strcmp(x->name, y->name) == 0 && x->graph == y->graph, "block name");
        FUZZ_ASSERT(x->n_buffers == y->n_buffers && x->n_devices == y->n_devices &&
                        x->n_allocs == y->n_allocs && x->n_frees == y->n_frees,
                    "round trip: block %s changed shape", x->name);
        for (uint32_t i = 0; i < x->n_buffers; i++)
            FUZZ_ASSERT(x->buffers[i] == y->buffers[i], "buffer %u changed", i);
        for (uint32_t i = 0; i < x->n_devices; i++)
            FUZZ_ASSERT(mp_device_eq(x->devices[i], y->devices[i]), "device %u changed", i);
        for (uint32_t i = 0; i < x->n_allocs; i++) {
            const mp_alloc *s = &x->allocs[i], *u = &y->allocs[i];
            FUZZ_ASSERT(strcmp(s->name, u->name) == 0 && s->tensor == u->tensor &&
                            s->mem_id == u->mem_id && s->obj == u->obj && s->offset == u->offset &&
                            s->size == u->size && s->life_start == u->life_start &&
                            s->life_end == u->life_end,
                        "round trip: alloc %s changed", s->name);
        }
        for (uint32_t i = 0; i < x->n_frees; i++)
            FUZZ_ASSERT(strcmp(x->frees[i].name, y->frees[i].name) == 0 &&
                            x->frees[i].tensor == y->frees[i].tensor &&
                            x->frees[i].after == y->frees[i].after,
                        "round trip: free %s changed", x->frees[i].name);
    }
}

static void round_trip(const mp_plan *p, const mp_program *prog) {
    mp_err err;
    mp_buf w1, w2;
    mp_buf_init(&w1);
    mp_buf_init(&w2);
    mp_plan_write(p, &w1);
    FUZZ_ASSERT(!w1.failed, "writer ran out of memory");
    mp_plan *q = mp_plan_parse(w1.data, w1.len, "<written>", prog, &err);
    if (!q) fuzz_fail("written plan does not parse: %s\n--- written:\n%.*s", err.msg,
                      (int)(w1.len > 4000 ? 4000 : w1.len), w1.data);
    check_same(p, q);
    check_names(q, prog);
    mp_plan_write(q, &w2);
    FUZZ_ASSERT(w1.len == w2.len && memcmp(w1.data, w2.data, w1.len) == 0,
                "writing the parsed written plan gives other bytes");
    mp_buf_free(&w1);
    mp_buf_free(&w2);
    mp_plan_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const mp_program *prog = program();
    mp_err e1, e2;
    mp_plan *bare = mp_plan_parse((const char *)data, size, "<fuzz>", NULL, &e1);
    mp_plan *named = mp_plan_parse((const char *)data, size, "<fuzz>", prog, &e2);
    FUZZ_ASSERT(!bare == !named, "accepted %s a program but not %s: %s",
                bare ? "without" : "with", bare ? "with" : "without", bare ? e2.msg : e1.msg);
    if (!bare) {
        FUZZ_ASSERT(e1.code == MP_EFORMAT && e2.code == MP_EFORMAT, "rejected with code %d",
                    e1.code);
        FUZZ_ASSERT(strcmp(e1.msg, e2.msg) == 0, "messages differ: '%s' vs '%s'", e1.msg, e2.msg);
        FUZZ_ASSERT(strncmp(e1.msg, "<fuzz>:", 7) == 0 && strlen(e1.msg) > 9,
                    "message without FILE:LINE: '%s'", e1.msg);
        return 0;
    }
    check_names(bare, NULL);
    check_names(named, prog);
    round_trip(bare, NULL);
    round_trip(named, prog);
    (void)mp_plan_total_bytes(named);
    mp_plan_free(bare);
    mp_plan_free(named);
    return 0;
}
