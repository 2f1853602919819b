/* plan_write.c - the .mpp (memplan-plan 1) writer. */
#include "internal.h"

void mp_plan_write(const mp_plan *plan, mp_buf *b) { mp_plan_write_to(plan, b, NULL, NULL); }

/* The longest line but its name: words, six numbers and their signs. */
#define LINE_ROOM (64 + 6 * (MP_U64_DIGITS + 1))

/* Room for a line (a 10^7-tensor plan has 10^7 of them: two printf calls
 * a line were 6% of its time, a call per field later most of the
 * writer's), its first word ("alloc ", "free ") and name written: where
 * its fields go, NULL when the buffer failed. */
static char *line_begin(mp_buf *b, const char *word, const char *name) {
    size_t w = strlen(word), n = strlen(name);
    char *p = mp_buf_room(b, w + n + LINE_ROOM);
    return p ? mp_put_text(mp_put_text(p, word, w), name, n) : NULL;
}

/* " key=N" */
static char *field(char *p, const char *key, uint64_t v) { return mp_put_u64(mp_put_key(p, key), v); }

static void put_alloc(mp_buf *b, const mp_alloc *a) {
    char *p = line_begin(b, "alloc ", a->name);
    if (!p) return;
    p = field(p, "mem_id", a->mem_id);
    p = field(p, "obj", a->obj);
    p = field(p, "offset", a->offset);
    p = field(p, "size", a->size);
    p = mp_put_i64(mp_put_key(p, "life"), a->life_start);
    *p++ = ',';
    p = mp_put_i64(p, a->life_end);
    *p++ = '\n';
    mp_buf_done(b, p);
}

static void put_free(mp_buf *b, const mp_free *f) {
    char *p = line_begin(b, "free ", f->name);
    if (!p) return;
    p = mp_put_i64(mp_put_key(p, "after"), f->after);
    *p++ = '\n';
    mp_buf_done(b, p);
}

void mp_plan_write_to(const mp_plan *plan, mp_buf *b, mp_sink_fn sink, void *ctx) {
    const mp_options *o = &plan->opts;
    char dev[24];
    /* A line is under 160 bytes unless its name is long: a 10^7-tensor
     * plan (0.7 GB) is written in place, not copied at each doubling. */
    size_t lines = 0;
    for (uint32_t gi = 0; gi < plan->n_graphs; gi++)
        lines += (size_t)plan->graphs[gi].n_allocs + plan->graphs[gi].n_frees + plan->graphs[gi].n_buffers;
    if (lines >= (1u << 16)) mp_buf_reserve(b, sink ? MP_BUF_PIECE + 4096 : lines * 160);
    mp_buf_puts(b, "memplan-plan 1\n");
    mp_buf_printf(b,
                  "options alignment=%u alloc_inputs=%d alloc_outputs=%d "
                  "alloc_mutable=%d per_device=%d algo=%s",
                  o->alignment, o->alloc_inputs, o->alloc_outputs,
                  o->alloc_mutable, o->per_device,
                  plan->algo_name ? plan->algo_name : "?");
    if (o->banks.n) { /* the memory map the plan was made for (since 1.5) */
        mp_buf_puts(b, " banks=");
        mp_banks_write(&o->banks, ',', ':', b);
    }
    mp_buf_put(b, "\n", 1);
    for (uint32_t gi = 0; gi < plan->n_graphs; gi++) {
        const mp_graph_plan *g = &plan->graphs[gi];
        mp_buf_printf(b, "graph %s\nbuffers", g->name);
        for (uint32_t i = 0; i < g->n_buffers; i++) {
            mp_buf_put(b, " ", 1);
            mp_buf_u64(b, g->buffers[i]);
        }
        mp_buf_puts(b, "\ndevices");
        for (uint32_t i = 0; i < g->n_devices; i++)
            mp_buf_printf(b, " %s", mp_device_str(g->devices[i], dev));
        mp_buf_put(b, "\n", 1);
        for (uint32_t i = 0; i < g->n_allocs; i++) {
            put_alloc(b, &g->allocs[i]);
            if (!mp_buf_drain(b, sink, ctx, false)) return;
        }
        for (uint32_t i = 0; i < g->n_frees; i++) {
            put_free(b, &g->frees[i]);
            if (!mp_buf_drain(b, sink, ctx, false)) return;
        }
        mp_buf_puts(b, "end\n");
    }
    mp_buf_drain(b, sink, ctx, true);
}

mp_plan *mp_plan_new(const mp_options *o, const char *algo_name) {
    mp_arena *A = mp_arena_new();
    mp_plan *plan = mp_arena_alloc(A, sizeof *plan);
    plan->arena = A;
    plan->opts = *o;
    plan->algo_name = algo_name;
    plan->raw_alignment = o->alignment;
    plan->raw_flags[0] = o->alloc_inputs;
    plan->raw_flags[1] = o->alloc_outputs;
    plan->raw_flags[2] = o->alloc_mutable;
    plan->raw_flags[3] = o->per_device;
    return plan;
}

void mp_block_start(mp_graph_plan *gp, const mp_program *prog, uint32_t gi, const uint64_t *bufs,
                    const mp_device *devs, uint32_t n_bufs, uint32_t n_allocs, mp_arena *A) {
    gp->name = prog->graphs[gi].name;
    gp->graph = (int32_t)gi;
    gp->n_buffers = gp->n_devices = n_bufs;
    gp->buffers = mp_arena_memdup(A, bufs, n_bufs * sizeof *bufs);
    gp->devices = mp_arena_memdup(A, devs, n_bufs * sizeof *devs);
    gp->allocs = mp_arena_alloc(A, ((size_t)n_allocs + 1) * sizeof *gp->allocs);
    gp->n_allocs = 0;
}

void mp_block_add(mp_graph_plan *gp, const mp_graphdef *g, int32_t t, uint64_t mem_id, uint64_t obj,
                  uint64_t offset, uint64_t size, const mp_life *L) {
    mp_alloc *a = &gp->allocs[gp->n_allocs++];
    a->name = g->tensors[t].name;
    a->tensor = t;
    a->mem_id = mem_id;
    a->obj = obj;
    a->offset = offset;
    a->size = size;
    a->life_start = L->start[t];
    a->life_end = L->end[t];
}

void mp_plan_free(mp_plan *plan) {
    if (plan) mp_arena_free(plan->arena);
}

uint64_t mp_plan_total_bytes(const mp_plan *plan) {
    for (uint32_t gi = 0; gi < plan->n_graphs; gi++) {
        if (plan->graphs[gi].graph != 0) continue;
        uint64_t total = 0;
        for (uint32_t i = 0; i < plan->graphs[gi].n_buffers; i++)
            if (!mp_add_u64(total, plan->graphs[gi].buffers[i], &total))
                return UINT64_MAX;
        return total;
    }
    return 0;
}
