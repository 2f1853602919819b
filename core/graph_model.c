/* graph_model.c - small queries over the graph model shared by every module. */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>

const char *mp_node_kind_name(uint32_t kind) {
    static const char *const names[] = {"placeholder", "call", "delegate",
                                        "cond",        "while", "map",
                                        "scan",        "output"};
    return kind < 8 ? names[kind] : "?";
}

const char *mp_device_str(mp_device dev, char *buf) {
    snprintf(buf, 24, "%s:%u", dev.type == MP_DEV_CUDA ? "cuda" : "cpu",
             dev.index);
    return buf;
}

bool mp_device_eq(mp_device a, mp_device b) {
    return a.type == b.type && a.index == b.index;
}

/* ExecuTorch's device order: CPU:0 first, then by (type value, index). */
int mp_device_cmp(mp_device a, mp_device b) {
    bool a0 = a.type == MP_DEV_CPU && a.index == 0;
    bool b0 = b.type == MP_DEV_CPU && b.index == 0;
    if (a0 != b0) return a0 ? -1 : 1;
    if (a.type != b.type) return a.type < b.type ? -1 : 1;
    if (a.index != b.index) return a.index < b.index ? -1 : 1;
    return 0;
}

int32_t mp_graph_find(const mp_program *prog, const char *name) {
    for (uint32_t i = 0; i < prog->n_graphs; i++)
        if (strcmp(prog->graphs[i].name, name) == 0) return (int32_t)i;
    return -1;
}

int32_t mp_tensor_find(const mp_graphdef *g, const char *name) {
    for (uint32_t i = 0; i < g->n_tensors; i++)
        if (strcmp(g->tensors[i].name, name) == 0) return (int32_t)i;
    return -1;
}

void mp_graph_reachable(const mp_program *prog, bool *reach) {
    memset(reach, 0, prog->n_graphs * sizeof *reach);
    if (!prog->n_graphs) return;
    int32_t *stack = mp_xmalloc(prog->n_graphs * sizeof *stack);
    size_t sp = 0;
    reach[0] = true;
    stack[sp++] = 0;
    while (sp) {
        const mp_graphdef *g = &prog->graphs[stack[--sp]];
        for (uint32_t i = 0; i < g->n_nodes; i++)
            for (int s = 0; s < 2; s++) {
                int32_t c = g->nodes[i].sub[s];
                if (c >= 0 && !reach[c]) {
                    reach[c] = true;
                    stack[sp++] = c;
                }
            }
    }
    mp_xfree(stack);
}

uint32_t mp_graphs_children_first(const mp_program *prog, const bool *reach, int32_t *order, uint32_t *height) {
    uint32_t n = prog->n_graphs, k = 0;
    uint8_t *seen = mp_xcalloc(n + 1, 1);
    struct frame {
        int32_t g;
        uint32_t node;
        int slot;
    } *st = mp_xmalloc((n + 1) * sizeof *st);
    for (uint32_t root = 0; root < n; root++) {
        if (!reach[root] || seen[root]) continue;
        size_t sp = 0;
        st[sp++] = (struct frame){(int32_t)root, 0, 0};
        seen[root] = 1;
        while (sp) {
            struct frame *f = &st[sp - 1];
            const mp_graphdef *g = &prog->graphs[f->g];
            if (f->node == g->n_nodes) { /* every sub-graph written: this one */
                uint32_t h = 0;
                for (uint32_t i = 0; height && i < g->n_nodes; i++)
                    for (int s = 0; s < 2; s++)
                        if (g->nodes[i].sub[s] >= 0 && height[g->nodes[i].sub[s]] > h) h = height[g->nodes[i].sub[s]];
                if (height) height[f->g] = h + 1;
                order[k++] = f->g;
                sp--;
                continue;
            }
            int32_t child = g->nodes[f->node].sub[f->slot];
            if (++f->slot == 2) f->slot = 0, f->node++;
            if (child >= 0 && !seen[child]) {
                seen[child] = 1;
                st[sp++] = (struct frame){child, 0, 0};
            }
        }
    }
    mp_xfree(seen);
    mp_xfree(st);
    return k;
}

bool mp_graph_has_xnnpack(const mp_graphdef *g) {
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const char *b = g->nodes[i].backend;
        if (g->nodes[i].kind != MP_NODE_DELEGATE || !b) continue;
        for (const char *s = b; *s; s++) {
            static const char key[] = "xnnpack";
            size_t k = 0;
            while (key[k] && s[k] && tolower((unsigned char)s[k]) == key[k]) k++;
            if (!key[k]) return true;
        }
    }
    return false;
}

bool mp_graph_has_inplace(const mp_graphdef *g) {
    for (uint32_t t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].inplace_base >= 0) return true;
    return false;
}

void mp_options_default(mp_options *o) {
    memset(o, 0, sizeof *o);
    o->alignment = 16;
    o->alloc_inputs = o->alloc_outputs = o->alloc_mutable = true;
    o->algo = MP_ALGO_GREEDY;
    o->budget_ms = 20;
    o->exact_ms = 10000;
}

uint64_t *mp_graph_times(const mp_graphdef *g) {
    bool spans = false;
    for (uint32_t i = 0; i < g->n_nodes && !spans; i++) spans = g->nodes[i].span > 1;
    if (!spans) return NULL;
    uint64_t *t = mp_xmalloc(((size_t)g->n_nodes + 1) * sizeof *t);
    t[0] = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) t[i + 1] = t[i] + (g->nodes[i].span ? g->nodes[i].span : 1);
    return t;
}

mp_program *mp_program_tensors_copy(const mp_program *prog) {
    mp_program *q = mp_xcalloc(1, sizeof *q);
    *q = *prog;
    q->arena = NULL;
    q->graphs = mp_xcalloc((size_t)prog->n_graphs + 1, sizeof *q->graphs);
    for (uint32_t gi = 0; gi < prog->n_graphs; gi++) {
        const mp_graphdef *g = &prog->graphs[gi];
        mp_tensor *t = mp_xmalloc(((size_t)g->n_tensors + 1) * sizeof *t);
        memcpy(t, g->tensors, g->n_tensors * sizeof *t);
        q->graphs[gi] = *g;
        q->graphs[gi].tensors = t;
    }
    return q;
}

void mp_program_tensors_copy_free(mp_program *q) {
    if (!q) return;
    for (uint32_t gi = 0; gi < q->n_graphs; gi++) mp_xfree(q->graphs[gi].tensors);
    mp_xfree(q->graphs);
    mp_xfree(q);
}
