/* export.c - a plan in the formats other tools read (memplan export):
 *   minimalloc-csv  MiniMalloc's problem with its solution: one row per
 *                   allocation of one buffer of the entry graph,
 *                   id,lower,upper,size,offset, lifetimes end-exclusive
 *                   ([first node, last node + 1)); an in-place family is one
 *                   row (its base's bytes over the hull of its lifetimes),
 *                   as MiniMalloc has no sharing
 *   json            every block: buffers, devices, and per tensor its graph,
 *                   op (the node that makes it), lifetime, mem_id, offset,
 *                   size
 *   tflm-offline    TFLite Micro's offline planning buffer: little-endian
 *                   int32 [version 1, subgraphs 1, n, offset_0..offset_n-1]
 *                   over every tensor of the entry graph in declaration
 *                   order, -1 for those the plan leaves to the runtime; one
 *                   arena, so the entry graph's tensors must all be in
 *                   buffer 1 */
#include "internal.h"

#include <stdio.h>

static const mp_graph_plan *entry_block(const mp_plan *plan) {
    for (uint32_t b = 0; b < plan->n_graphs; b++)
        if (plan->graphs[b].graph == 0) return &plan->graphs[b];
    return NULL;
}

/* The alloc of each tensor of graph g in block gp, -1 when none. */
static int32_t *alloc_index(const mp_graphdef *g, const mp_graph_plan *gp) {
    int32_t *at = mp_xmalloc((g->n_tensors + 1) * sizeof *at);
    for (uint32_t t = 0; t < g->n_tensors; t++) at[t] = -1;
    for (uint32_t a = 0; a < gp->n_allocs; a++)
        if (gp->allocs[a].tensor >= 0 && at[gp->allocs[a].tensor] < 0) at[gp->allocs[a].tensor] = (int32_t)a;
    return at;
}

static void csv_rows(const mp_graphdef *g, const mp_graph_plan *gp, const int32_t *at, uint64_t buffer,
                     bool per_device, mp_buf *out) {
    int64_t *lo = mp_xmalloc((g->n_tensors + 1) * sizeof *lo), *hi = mp_xmalloc((g->n_tensors + 1) * sizeof *hi);
    int32_t *fam = mp_xmalloc((g->n_tensors + 1) * sizeof *fam);
    int32_t *roots = mp_inplace_roots(g, per_device);
    for (uint32_t t = 0; t < g->n_tensors; t++) { /* a family's root: its base's alloc when planned here */
        int32_t r = roots[t];
        fam[t] = r >= 0 && at[r] >= 0 && gp->allocs[at[r]].mem_id == buffer ? r : (int32_t)t;
        lo[t] = INT64_MAX, hi[t] = INT64_MIN;
    }
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        if (at[t] < 0 || gp->allocs[at[t]].mem_id != buffer) continue;
        const mp_alloc *a = &gp->allocs[at[t]];
        int32_t f = fam[t];
        if (a->life_start < lo[f]) lo[f] = a->life_start;
        if (a->life_end > hi[f]) hi[f] = a->life_end;
    }
    mp_buf_puts(out, "id,lower,upper,size,offset\n");
    uint64_t *time = mp_graph_times(g); /* span= nodes: lifetimes in time units (an imported CSV's own) */
    for (uint32_t a = 0; a < gp->n_allocs; a++) {
        const mp_alloc *x = &gp->allocs[a];
        if (x->tensor < 0 || x->mem_id != buffer || fam[x->tensor] != x->tensor || at[x->tensor] != (int32_t)a)
            continue;
        int64_t l = lo[x->tensor], u = hi[x->tensor] + 1;
        if (time && l >= 0 && u <= (int64_t)g->n_nodes) l = (int64_t)time[l], u = (int64_t)time[u];
        mp_buf_printf(out, "%s,%lld,%lld,%llu,%llu\n", x->name, (long long)l, (long long)u,
                      (unsigned long long)x->size, (unsigned long long)x->offset);
    }
    mp_xfree(time);
    mp_xfree(lo);
    mp_xfree(hi);
    mp_xfree(fam);
    mp_xfree(roots);
}


static void json_block(const mp_program *prog, const mp_graph_plan *gp, mp_buf *out) {
    char dev[24];
    const mp_graphdef *g = gp->graph >= 0 ? &prog->graphs[gp->graph] : NULL;
    mp_buf_puts(out, "{\"graph\":");
    mp_buf_put_json_string(out, gp->name);
    mp_buf_puts(out, ",\"buffers\":[");
    for (uint32_t i = 0; i < gp->n_buffers; i++) mp_buf_printf(out, "%s%llu", i ? "," : "", (unsigned long long)gp->buffers[i]);
    mp_buf_puts(out, "],\"devices\":[");
    for (uint32_t i = 0; i < gp->n_devices; i++) {
        if (i) mp_buf_put(out, ",", 1);
        mp_buf_put_json_string(out, mp_device_str(gp->devices[i], dev));
    }
    mp_buf_puts(out, "],\"tensors\":[");
    for (uint32_t a = 0; a < gp->n_allocs; a++) {
        const mp_alloc *x = &gp->allocs[a];
        const mp_tensor *t = g && x->tensor >= 0 ? &g->tensors[x->tensor] : NULL;
        const char *op = t && t->def_node >= 0 ? g->nodes[t->def_node].op : NULL;
        mp_buf_puts(out, a ? ",{\"name\":" : "{\"name\":");
        mp_buf_put_json_string(out, x->name);
        mp_buf_puts(out, ",\"graph\":");
        mp_buf_put_json_string(out, gp->name);
        mp_buf_puts(out, ",\"op\":");
        if (op) mp_buf_put_json_string(out, op);
        else mp_buf_puts(out, "null");
        mp_buf_printf(out, ",\"lifetime\":[%lld,%lld],\"mem_id\":%llu,\"offset\":%llu,\"size\":%llu}",
                      (long long)x->life_start, (long long)x->life_end, (unsigned long long)x->mem_id,
                      (unsigned long long)x->offset, (unsigned long long)x->size);
    }
    mp_buf_puts(out, "]}");
}

static void put_i32(mp_buf *out, int64_t v) {
    uint32_t u = (uint32_t)(int32_t)v;
    char le[4] = {(char)(u & 0xff), (char)((u >> 8) & 0xff), (char)((u >> 16) & 0xff), (char)(u >> 24)};
    mp_buf_put(out, le, 4);
}

static int tflm(const mp_graphdef *g, const mp_graph_plan *gp, const int32_t *at, mp_buf *out, mp_err *err) {
    for (uint32_t t = 0; t < g->n_tensors; t++) {
        if (at[t] < 0) continue;
        const mp_alloc *a = &gp->allocs[at[t]];
        if (a->mem_id != 1)
            return mp_err_set(err, MP_EFORMAT, "tflm-offline: tensor '%s' is in buffer %llu; TFLite Micro's "
                              "offline plan has one arena (plan without --per-device and pools)", a->name,
                              (unsigned long long)a->mem_id);
        if (a->offset > INT32_MAX)
            return mp_err_set(err, MP_EFORMAT, "tflm-offline: tensor '%s' at offset %llu does not fit an int32",
                              a->name, (unsigned long long)a->offset);
    }
    put_i32(out, 1);
    put_i32(out, 1);
    put_i32(out, g->n_tensors);
    for (uint32_t t = 0; t < g->n_tensors; t++) put_i32(out, at[t] < 0 ? -1 : (int64_t)gp->allocs[at[t]].offset);
    return MP_OK;
}

static int export_plan(const mp_program *prog, const mp_plan *plan, const char *format, uint64_t buffer,
                       mp_buf *out, mp_err *err) {
    const mp_graph_plan *gp = entry_block(plan);
    if (!gp) return mp_err_set(err, MP_EFORMAT, "the plan has no block for the entry graph '%s'", prog->graphs[0].name);
    if (strcmp(format, "json") == 0) {
        mp_buf_puts(out, "{\"algo\":");
        mp_buf_put_json_string(out, plan->algo_name ? plan->algo_name : "?"); /* as the plan file says it */
        mp_buf_printf(out, ",\"alignment\":%u,\"blocks\":[", plan->opts.alignment);
        for (uint32_t b = 0; b < plan->n_graphs; b++) {
            if (b) mp_buf_put(out, ",", 1);
            json_block(prog, &plan->graphs[b], out);
        }
        mp_buf_puts(out, "]}\n");
        return out->failed ? mp_err_set(err, MP_ENOMEM, "out of memory") : MP_OK;
    }
    bool csv = strcmp(format, "minimalloc-csv") == 0;
    if (!csv && strcmp(format, "tflm-offline") != 0)
        return mp_err_set(err, MP_EFORMAT, "unknown export format '%s' (minimalloc-csv, json, tflm-offline)", format);
    if (gp->n_buffers < 2) return mp_err_set(err, MP_EFORMAT, "%s: the plan's entry graph has no buffer", format);
    if (!csv && buffer != 1)
        return mp_err_set(err, MP_EFORMAT, "tflm-offline: no buffer %llu: TFLite Micro's offline plan is of "
                          "buffer 1, its one arena", (unsigned long long)buffer);
    if (buffer < 1 || buffer >= gp->n_buffers)
        return mp_err_set(err, MP_EFORMAT, "%s: no buffer %llu: the plan's entry graph has buffers 1 to %u (0 "
                          "holds constants)", format, (unsigned long long)buffer, gp->n_buffers - 1);
    if (!csv && prog->n_graphs > 1) /* its count covers every subgraph's tensors, in one arena */
        return mp_err_set(err, MP_EFORMAT, "tflm-offline: the program has %u graphs; TFLite Micro's offline plan "
                          "gives an offset to every tensor of every subgraph in one arena, and memplan writes it "
                          "for a program of one graph only (no control flow)", prog->n_graphs);
    int32_t *at = alloc_index(&prog->graphs[0], gp);
    int rc = MP_OK;
    if (csv) csv_rows(&prog->graphs[0], gp, at, buffer, plan->opts.per_device, out);
    else rc = tflm(&prog->graphs[0], gp, at, out, err);
    mp_xfree(at);
    if (rc == MP_OK && out->failed) rc = mp_err_set(err, MP_ENOMEM, "out of memory");
    return rc;
}

typedef struct export_call {
    const mp_program *prog;
    const mp_plan *plan;
    const char *format;
    uint64_t buffer;
    mp_err *err;
} export_call;

static int export_work(void *ctx, mp_buf *out) {
    export_call *c = ctx;
    return export_plan(c->prog, c->plan, c->format, c->buffer, out, c->err);
}

/* Under the allocation guard, into a buffer of the guard's (mp_guard_text):
 * out of memory is MP_ENOMEM, not an abort, and out is left as it was. */
int mp_plan_export(const mp_program *prog, const mp_plan *plan, const char *format, uint64_t buffer, mp_buf *out,
                   mp_err *err) {
    mp_err_clear(err);
    export_call c = {prog, plan, format, buffer, err};
    return mp_guard_text(err, export_work, &c, out);
}
