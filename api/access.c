/* access.c - the accessors of the public interface (memplan.h, 2.0): what a
 * caller reads from a program, a plan, a report and the planner table
 * through their opaque handles.  Every index is checked: out of range (or
 * a NULL handle) gives 0, -1 or NULL, never a read past an array. */
#include "internal.h"

/* ------------------------------------------------------------- programs */

static const mp_graphdef *graph_at(const mp_program *p, uint32_t g) {
    return p && g < p->n_graphs ? &p->graphs[g] : NULL;
}

static const mp_tensor *tensor_at(const mp_program *p, uint32_t g, uint32_t t) {
    const mp_graphdef *gd = graph_at(p, g);
    return gd && t < gd->n_tensors ? &gd->tensors[t] : NULL;
}

static const mp_node *node_at(const mp_program *p, uint32_t g, uint32_t n) {
    const mp_graphdef *gd = graph_at(p, g);
    return gd && n < gd->n_nodes ? &gd->nodes[n] : NULL;
}

uint32_t mp_program_graph_count(const mp_program *p) { return p ? p->n_graphs : 0; }

const char *mp_program_graph_name(const mp_program *p, uint32_t g) {
    const mp_graphdef *gd = graph_at(p, g);
    return gd ? gd->name : NULL;
}

int32_t mp_program_graph_find(const mp_program *p, const char *name) {
    return p && name ? mp_graph_find(p, name) : -1;
}

uint32_t mp_program_method_count(const mp_program *p) {
    return !p ? 0 : p->n_entries ? p->n_entries : 1;
}

int32_t mp_program_method(const mp_program *p, uint32_t m) {
    if (!p || m >= mp_program_method_count(p)) return -1;
    return p->n_entries ? p->entries[m] : 0;
}

uint32_t mp_program_tensor_count(const mp_program *p, uint32_t g) {
    const mp_graphdef *gd = graph_at(p, g);
    return gd ? gd->n_tensors : 0;
}

const char *mp_program_tensor_name(const mp_program *p, uint32_t g, uint32_t t) {
    const mp_tensor *x = tensor_at(p, g, t);
    return x ? x->name : NULL;
}

int32_t mp_program_tensor_find(const mp_program *p, uint32_t g, const char *name) {
    const mp_graphdef *gd = graph_at(p, g);
    return gd && name ? mp_tensor_find(gd, name) : -1;
}

uint64_t mp_program_tensor_get(const mp_program *p, uint32_t g, uint32_t t, int field) {
    const mp_tensor *x = tensor_at(p, g, t);
    if (!x) return 0;
    switch (field) {
    case MP_TENSOR_SIZE: return x->size;
    case MP_TENSOR_FLAGS: return x->flags;
    case MP_TENSOR_MEM_ID: return x->mem_id;
    case MP_TENSOR_AT: return x->at;
    case MP_TENSOR_DEVICE_TYPE: return x->device.type;
    case MP_TENSOR_DEVICE_INDEX: return x->device.index;
    case MP_TENSOR_INPLACE_BASE: return (uint64_t)(x->inplace_base + 1);
    case MP_TENSOR_VIEW_BASE: return (uint64_t)(x->view_base + 1);
    case MP_TENSOR_DEF_NODE: return (uint64_t)(x->def_node + 1);
    case MP_TENSOR_OFFSET: return x->offset;
    default: return 0;
    }
}

uint32_t mp_program_node_count(const mp_program *p, uint32_t g) {
    const mp_graphdef *gd = graph_at(p, g);
    return gd ? gd->n_nodes : 0;
}

uint64_t mp_program_node_get(const mp_program *p, uint32_t g, uint32_t n, int field) {
    const mp_node *x = node_at(p, g, n);
    if (!x) return 0;
    switch (field) {
    case MP_NODE_KIND: return x->kind;
    case MP_NODE_N_IN: return x->n_in;
    case MP_NODE_N_OUT: return x->n_out;
    case MP_NODE_SUB0: return (uint64_t)(x->sub[0] + 1);
    case MP_NODE_SUB1: return (uint64_t)(x->sub[1] + 1);
    case MP_NODE_SPAN: return x->span;
    default: return 0;
    }
}

int32_t mp_program_node_input(const mp_program *p, uint32_t g, uint32_t n, uint32_t i) {
    const mp_node *x = node_at(p, g, n);
    return x && i < x->n_in ? x->in[i] : -1;
}

int32_t mp_program_node_output(const mp_program *p, uint32_t g, uint32_t n, uint32_t i) {
    const mp_node *x = node_at(p, g, n);
    return x && i < x->n_out ? x->out[i] : -1;
}

const char *mp_program_node_op(const mp_program *p, uint32_t g, uint32_t n) {
    const mp_node *x = node_at(p, g, n);
    return x ? x->op : NULL;
}

const char *mp_program_node_backend(const mp_program *p, uint32_t g, uint32_t n) {
    const mp_node *x = node_at(p, g, n);
    return x ? x->backend : NULL;
}

/* ----------------------------------------------------------------- plans */

static const mp_graph_plan *block_at(const mp_plan *p, uint32_t b) {
    return p && b < p->n_graphs ? &p->graphs[b] : NULL;
}

const char *mp_plan_algo(const mp_plan *p) { return p ? p->algo_name : NULL; }
const char *mp_plan_notes(const mp_plan *p) { return p ? p->notes : NULL; }
uint32_t mp_plan_block_count(const mp_plan *p) { return p ? p->n_graphs : 0; }

const char *mp_plan_block_name(const mp_plan *p, uint32_t b) {
    const mp_graph_plan *gp = block_at(p, b);
    return gp ? gp->name : NULL;
}

uint32_t mp_plan_buffer_count(const mp_plan *p, uint32_t b) {
    const mp_graph_plan *gp = block_at(p, b);
    return gp ? gp->n_buffers : 0;
}

uint64_t mp_plan_buffer_size(const mp_plan *p, uint32_t b, uint32_t i) {
    const mp_graph_plan *gp = block_at(p, b);
    return gp && i < gp->n_buffers ? gp->buffers[i] : 0;
}

mp_device mp_plan_buffer_device(const mp_plan *p, uint32_t b, uint32_t i) {
    const mp_graph_plan *gp = block_at(p, b);
    return gp && i < gp->n_devices ? gp->devices[i] : (mp_device){MP_DEV_CPU, 0};
}

uint32_t mp_plan_alloc_count(const mp_plan *p, uint32_t b) {
    const mp_graph_plan *gp = block_at(p, b);
    return gp ? gp->n_allocs : 0;
}

static const mp_alloc *alloc_at(const mp_plan *p, uint32_t b, uint32_t a) {
    const mp_graph_plan *gp = block_at(p, b);
    return gp && a < gp->n_allocs ? &gp->allocs[a] : NULL;
}

const char *mp_plan_alloc_name(const mp_plan *p, uint32_t b, uint32_t a) {
    const mp_alloc *x = alloc_at(p, b, a);
    return x ? x->name : NULL;
}

uint64_t mp_plan_alloc_get(const mp_plan *p, uint32_t b, uint32_t a, int field) {
    const mp_alloc *x = alloc_at(p, b, a);
    if (!x) return 0;
    switch (field) {
    case MP_ALLOC_MEM_ID: return x->mem_id;
    case MP_ALLOC_OBJ: return x->obj;
    case MP_ALLOC_OFFSET: return x->offset;
    case MP_ALLOC_SIZE: return x->size;
    case MP_ALLOC_FIRST: return x->life_start < 0 ? 0 : (uint64_t)x->life_start + 1;
    case MP_ALLOC_LAST: return x->life_end < 0 ? 0 : (uint64_t)x->life_end + 1;
    default: return 0;
    }
}

uint32_t mp_plan_release_count(const mp_plan *p, uint32_t b) {
    const mp_graph_plan *gp = block_at(p, b);
    return gp ? gp->n_frees : 0;
}

const char *mp_plan_release_name(const mp_plan *p, uint32_t b, uint32_t i) {
    const mp_graph_plan *gp = block_at(p, b);
    return gp && i < gp->n_frees ? gp->frees[i].name : NULL;
}

int64_t mp_plan_release_after(const mp_plan *p, uint32_t b, uint32_t i) {
    const mp_graph_plan *gp = block_at(p, b);
    return gp && i < gp->n_frees ? gp->frees[i].after : -1;
}

/* --------------------------------------------------------- planner table */

const char *mp_planner_name(uint32_t i) {
    const mp_planner *p = mp_planner_get(i);
    return p ? p->name : NULL;
}

const char *mp_planner_summary(uint32_t i) {
    const mp_planner *p = mp_planner_get(i);
    return p ? p->summary : NULL;
}

uint32_t mp_planner_caps(uint32_t i) {
    const mp_planner *p = mp_planner_get(i);
    return p ? p->caps : 0;
}
