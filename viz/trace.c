/* trace.c - a plan as a Chrome trace event file (JSON object format), for
 * Perfetto (ui.perfetto.dev) and chrome://tracing.
 *
 * Mapping (docs/visualisation.md):
 *   time     node index * VIZ_US (1000 us, so one node is 1 ms)
 *   process  one per plan block (graph), pid = block index + 1
 *   thread   per buffer: its tensors, spread over as many lanes as their
 *            largest overlap (viewers need the slices of a thread to nest),
 *            then the lanes of its sub-graph reservations; tids count up
 *            from 1 in that order, thread_sort_index keeps it
 *   slice    ("X") one per allocation: name = tensor, args = size, offset,
 *            end, mem_id, obj, life, device, graph; one per (control-flow
 *            node, sub-graph, buffer): the byte range the sub-graph's
 *            memory spans, transitively, at that node
 *   counter  ("C") "live bytes buffer B" per buffer: bytes covered by the
 *            graph's live tensors and reservations at each node
 *   metadata ("M") process and thread names and sort indices
 * Every event has name, ph, ts, pid, tid and args. */
#include "viz.h"

#define VIZ_US 1000

typedef struct slice {
    uint64_t buffer;
    int64_t s, e;            /* inclusive node range */
    const mp_alloc *a;       /* a tensor, or NULL for a reservation */
    int32_t sub, node, role; /* reservation: sub-graph, node, which of its sub[] */
    uint64_t lo, hi;
    uint32_t lane;
} slice;

static int cmp_slice(const void *a, const void *b) {
    const slice *x = a, *y = b;
    if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
    if ((x->a == NULL) != (y->a == NULL)) return x->a ? -1 : 1; /* tensors first */
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    if (x->e != y->e) return x->e < y->e ? -1 : 1;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    if (x->role != y->role) return x->role < y->role ? -1 : 1;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi) return x->hi < y->hi ? -1 : 1;
    return x->a && y->a ? (x->a > y->a) - (x->a < y->a) : 0; /* file order */
}

typedef struct tctx {
    const mp_program *prog;
    const mp_plan *plan;
    viz_hulls hulls;
    mp_buf *b;
    bool first;
} tctx;

static void ev_head(tctx *c, const char *name, const char *ph, int64_t ts, uint32_t pid,
                    uint32_t tid) {
    mp_buf_puts(c->b, c->first ? "\n" : ",\n");
    c->first = false;
    mp_buf_puts(c->b, "{\"name\":");
    mp_buf_put_json_string(c->b, name);
    mp_buf_printf(c->b, ",\"ph\":\"%s\",\"ts\":%lld,\"pid\":%u,\"tid\":%u", ph, (long long)ts,
                  pid, tid);
}

static void meta(tctx *c, const char *what, uint32_t pid, uint32_t tid, const char *name,
                 int64_t sort) {
    ev_head(c, what, "M", 0, pid, tid);
    if (name) {
        mp_buf_puts(c->b, ",\"args\":{\"name\":");
        mp_buf_put_json_string(c->b, name);
        mp_buf_puts(c->b, "}}");
    } else {
        mp_buf_printf(c->b, ",\"args\":{\"sort_index\":%lld}}", (long long)sort);
    }
}

static void tensor_slice(tctx *c, const mp_graph_plan *gp, const slice *s, uint32_t pid,
                         uint32_t tid) {
    char dev[24];
    int32_t node;
    const char *op = mp_viz_alloc_op(c->prog, gp->graph, s->a, &node);
    mp_buf name;
    mp_buf_init(&name);
    mp_buf_printf(&name, op ? "%s (%s)" : "%s", s->a->name, op);
    ev_head(c, name.data, "X", s->s * VIZ_US, pid, tid);
    mp_buf_free(&name);
    mp_buf_printf(c->b, ",\"dur\":%lld,\"cat\":\"tensor\",\"args\":{\"size\":",
                  (long long)((s->e - s->s + 1) * VIZ_US));
    mp_buf_u64(c->b, s->a->size);
    mp_buf_puts(c->b, ",\"offset\":");
    mp_buf_u64(c->b, s->lo);
    mp_buf_puts(c->b, ",\"end\":");
    mp_buf_u64(c->b, s->hi);
    mp_buf_puts(c->b, ",\"mem_id\":");
    mp_buf_u64(c->b, s->a->mem_id);
    mp_buf_puts(c->b, ",\"obj\":");
    mp_buf_u64(c->b, s->a->obj);
    mp_buf_printf(c->b, ",\"life_start\":%lld,\"life_end\":%lld,\"device\":",
                  (long long)s->a->life_start, (long long)s->a->life_end);
    mp_buf_put_json_string(c->b, mp_device_str(mp_viz_alloc_device(c->prog, gp, s->a), dev));
    mp_buf_puts(c->b, ",\"graph\":");
    mp_buf_put_json_string(c->b, gp->name);
    if (op) {
        mp_buf_printf(c->b, ",\"node\":%d,\"op\":", node);
        mp_buf_put_json_string(c->b, op);
    }
    mp_buf_puts(c->b, "}}");
}

static void reserve_slice(tctx *c, const mp_graphdef *g, const slice *s, uint32_t pid,
                          uint32_t tid) {
    const char *sub = c->prog->graphs[s->sub].name;
    uint32_t kind = g->nodes[s->node].kind;
    const char *role = mp_viz_sub_role(kind, s->role);
    mp_buf name;
    mp_buf_init(&name);
    const char *op = g->nodes[s->node].op;
    mp_buf_printf(&name, "%s (%s of %s node %d%s%s)", sub, role, mp_node_kind_name(kind), s->node, op ? ", " : "",
                  op ? op : "");
    ev_head(c, name.data, "X", s->s * VIZ_US, pid, tid);
    mp_buf_free(&name);
    mp_buf_printf(c->b, ",\"dur\":%d,\"cat\":\"sub-graph\",\"args\":{\"graph\":", VIZ_US);
    mp_buf_put_json_string(c->b, sub);
    mp_buf_printf(c->b, ",\"node\":%d,\"kind\":\"%s\",\"role\":\"%s\",\"offset\":", s->node,
                  mp_node_kind_name(kind), role);
    mp_buf_u64(c->b, s->lo);
    mp_buf_puts(c->b, ",\"end\":");
    mp_buf_u64(c->b, s->hi);
    mp_buf_puts(c->b, ",\"bytes\":");
    mp_buf_u64(c->b, s->hi - s->lo);
    mp_buf_puts(c->b, ",\"mem_id\":");
    mp_buf_u64(c->b, s->buffer);
    if (op) {
        mp_buf_puts(c->b, ",\"op\":");
        mp_buf_put_json_string(c->b, op);
    }
    mp_buf_puts(c->b, "}}");
}

/* "live bytes buffer B": one counter event per node where the value
 * changes (the cover's steps already are), starting from 0 at node 0. */
static void counter(tctx *c, const slice *v, size_t n, uint32_t pid) {
    viz_box *bx = mp_xmalloc((n + 1) * sizeof *bx);
    for (size_t i = 0; i < n; i++)
        bx[i] = (viz_box){(double)v[i].s, (double)v[i].e + 1, v[i].lo, v[i].hi};
    viz_steps st;
    mp_viz_cover(bx, n, &st);
    char name[64];
    snprintf(name, sizeof name, "live bytes buffer %llu", (unsigned long long)v[0].buffer);
    for (size_t k = 0; k <= st.n; k++) {
        if (k == 0 && st.n && st.x[0] <= 0) continue; /* the first step is at 0 */
        int64_t t = k ? (int64_t)st.x[k - 1] : 0;
        ev_head(c, name, "C", t * VIZ_US, pid, 0);
        mp_buf_puts(c->b, ",\"args\":{\"bytes\":");
        mp_buf_u64(c->b, k ? st.v[k - 1] : 0);
        mp_buf_puts(c->b, "}}");
    }
    mp_viz_steps_free(&st);
    mp_xfree(bx);
}

/* The block's slices: a tensor slice per alloc, a reservation slice per
 * sub-graph region at the node that runs it.  Returns how many (*out). */
static size_t block_slices(const tctx *c, const mp_graph_plan *gp, const mp_graphdef *g, slice **out) {
    uint32_t n_nodes = g ? g->n_nodes : UINT32_MAX;
    slice *v = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t i = 0; i < gp->n_allocs; i++) {
        const mp_alloc *a = &gp->allocs[i];
        slice s = {a->mem_id, 0, 0, a, -1, -1, 0, a->offset, 0, 0};
        int32_t ls, le;
        mp_viz_alloc_life(a, n_nodes, &ls, &le);
        s.s = ls;
        s.e = le;
        if (!mp_add_u64(a->offset, a->size, &s.hi)) s.hi = UINT64_MAX;
        MP_VEC_PUSH(v, n, cap, s);
    }
    for (uint32_t i = 0; g && i < g->n_nodes; i++)
        for (int j = 0; j < 2; j++) {
            int32_t sg = g->nodes[i].sub[j];
            if (sg < 0 || (uint32_t)sg >= c->prog->n_graphs) continue;
            for (uint32_t q = 0; q < c->hulls.n[sg]; q++) {
                const viz_span *sp = &c->hulls.of[sg][q];
                slice s = {sp->buffer, i, i, NULL, sg, (int32_t)i, j, sp->lo, sp->hi, 0};
                MP_VEC_PUSH(v, n, cap, s);
            }
        }
    if (n) qsort(v, n, sizeof *v, cmp_slice);
    *out = v;
    return n;
}

/* One group of a buffer's slices (tensors, or sub-graph reservations:
 * `reserves`) on lanes of their own from thread tid; returns the lanes. */
static uint32_t lane_group(tctx *c, const mp_graph_plan *gp, const mp_graphdef *g, const slice *v,
                           size_t cnt, bool reserves, const char *dev, uint32_t pid, uint32_t tid) {
    int64_t *s = mp_xmalloc(cnt * sizeof *s), *e = mp_xmalloc(cnt * sizeof *e);
    uint32_t *lane = mp_xmalloc(cnt * sizeof *lane);
    for (size_t q = 0; q < cnt; q++) {
        s[q] = v[q].s;
        e[q] = v[q].e;
    }
    uint32_t lanes = mp_viz_lanes(s, e, cnt, lane);
    char label[MP_MAX_NAME + 64];
    for (uint32_t l = 0; l < lanes; l++) {
        snprintf(label, sizeof label, "buffer %llu %s lane %u", (unsigned long long)v[0].buffer,
                 reserves ? "sub-graphs" : dev, l);
        meta(c, "thread_name", pid, tid + l, label, 0);
        meta(c, "thread_sort_index", pid, tid + l, NULL, tid + l);
    }
    for (size_t q = 0; q < cnt; q++) {
        if (!reserves) tensor_slice(c, gp, &v[q], pid, tid + lane[q]);
        else reserve_slice(c, g, &v[q], pid, tid + lane[q]);
    }
    mp_xfree(s);
    mp_xfree(e);
    mp_xfree(lane);
    return lanes;
}

static void block(tctx *c, uint32_t k) {
    const mp_graph_plan *gp = &c->plan->graphs[k];
    const mp_graphdef *g = gp->graph >= 0 && (uint32_t)gp->graph < c->prog->n_graphs
                               ? &c->prog->graphs[gp->graph] : NULL;
    uint32_t pid = k + 1;
    char label[MP_MAX_NAME + 64];
    snprintf(label, sizeof label, "graph %s%s", gp->name, g ? "" : " (not in the graph file)");
    meta(c, "process_name", pid, 0, label, 0);
    meta(c, "process_sort_index", pid, 0, NULL, k);
    slice *v;
    size_t n = block_slices(c, gp, g, &v);
    uint32_t tid = 1;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && v[j].buffer == v[i].buffer) j++;
        char dev[24] = "?";
        if (v[i].buffer < gp->n_devices) mp_device_str(gp->devices[v[i].buffer], dev);
        /* tensors [i, r), reservations [r, j): each group gets its lanes */
        size_t r = i;
        while (r < j && v[r].a) r++;
        if (r > i) tid += lane_group(c, gp, g, v + i, r - i, false, dev, pid, tid);
        if (j > r) tid += lane_group(c, gp, g, v + r, j - r, true, dev, pid, tid);
        counter(c, v + i, j - i, pid);
        i = j;
    }
    mp_xfree(v);
}

int mp_viz_trace(const mp_program *prog, const mp_plan *plan, mp_buf *out, mp_err *err) {
    mp_err_clear(err);
    tctx c = {prog, plan, {0}, out, true};
    int32_t *bo = mp_viz_block_index(prog, plan);
    mp_viz_hulls_build(prog, plan, bo, &c.hulls);
    mp_buf_printf(out, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"memplan %s\","
                       "\"time\":\"node index * %d us\",\"algo\":",
                  MEMPLAN_VERSION, VIZ_US);
    mp_buf_put_json_string(out, plan->algo_name ? plan->algo_name : mp_algo_name(plan->opts.algo));
    mp_buf_puts(out, ",\"graph_file\":");
    mp_buf_put_json_string(out, prog->filename ? prog->filename : "");
    mp_buf_puts(out, ",\"total_bytes\":");
    mp_buf_u64(out, mp_plan_total_bytes(plan));
    mp_buf_puts(out, "},\"traceEvents\":[");
    for (uint32_t k = 0; k < plan->n_graphs; k++) block(&c, k);
    mp_buf_puts(out, "\n]}\n");
    mp_viz_hulls_free(&c.hulls, prog->n_graphs);
    mp_xfree(bo);
    if (out->failed) return mp_err_set(err, MP_EIO, "out of memory writing the trace");
    return MP_OK;
}
