/* helpers.h - shared helpers for the Criterion tests. */
#ifndef MP_TEST_HELPERS_H
#define MP_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h" /* white-box tests: the internals too */
#include "files.h"
#include "metrics.h"
#include "harness.h"
#include "pictures.h"
#include "api.h"

#include <stdio.h>

/* Graphs several test files share: a chain with a weight, and a cond whose
 * branches need different memory; a is the cond's predicate and its
 * branches' operand. */
#define FIXTURE_CHAIN                                                                 \
    "memplan-graph 1\n"                                                              \
    "graph main\n"                                                                   \
    "tensor x 100\ntensor w 64 const\ntensor a 200\ntensor b 200\n"                  \
    "tensor c 50\ntensor y 100\n"                                                    \
    "node placeholder out=x\nnode placeholder out=w\nnode call in=x,w out=a\n"       \
    "node call in=a out=b\nnode call in=b,x out=c\nnode call in=c out=y\n"           \
    "node output in=y\nend\n"
#define FIXTURE_COND                                                                  \
    "memplan-graph 1\n"                                                              \
    "graph main\ntensor p 32\ntensor a 64\ntensor r 16\n"                            \
    "node placeholder out=p\nnode call in=p out=a\nnode cond in=a,a true=t false=f out=r\n" \
    "node output in=r\nend\n"                                                        \
    "graph t\ntensor i 48\ntensor o 16\n"                                            \
    "node placeholder out=i\nnode call in=i out=o\nnode output in=o\nend\n"          \
    "graph f\ntensor i 48\ntensor m 100\ntensor o 16\n"                              \
    "node placeholder out=i\nnode call in=i out=m\nnode call in=m out=o\nnode output in=o\nend\n"

/* Parse text that must be a valid graph. */
static inline mp_program *must_parse(const char *text) {
    mp_err err;
    mp_program *p = mp_graph_parse(text, strlen(text), "t.mpg", &err);
    cr_assert(p != NULL, "parse failed: %s\n--- input ---\n%s", err.msg, text);
    return p;
}

/* The program the generator makes with these options. */
static inline mp_program *generated_program(const mp_gen_options *g) {
    mp_buf b;
    mp_buf_init(&b);
    mp_gen(g, &b);
    mp_program *p = must_parse(b.data);
    mp_buf_free(&b);
    return p;
}

/* Plan with options and return the plan text (caller frees), or NULL with
 * *code set. */
static inline char *plan_text(const mp_program *p, const mp_options *o, int *code,
                              char *msg, size_t msgsz) {
    mp_err err;
    mp_plan *plan = mp_plan_program(p, o, &err);
    if (!plan) {
        if (code) *code = err.code;
        if (msg) snprintf(msg, msgsz, "%s", err.msg);
        return NULL;
    }
    mp_buf b;
    mp_buf_init(&b);
    mp_plan_write(plan, &b);
    mp_plan_free(plan);
    if (code) *code = 0;
    return b.data;
}

static inline char *plan_of(const char *graph, const mp_options *o) {
    mp_program *p = must_parse(graph);
    int code;
    char msg[1024];
    char *t = plan_text(p, o, &code, msg, sizeof msg);
    cr_assert(t != NULL, "planning failed (%d): %s", code, msg);
    mp_program_free(p);
    return t;
}

/* The block of graph `name` in a plan text (caller frees). */
static inline char *block_of(const char *plan, const char *name) {
    char head[300];
    snprintf(head, sizeof head, "graph %s\n", name);
    const char *s = strstr(plan, head);
    cr_assert(s != NULL, "no block for graph %s in\n%s", name, plan);
    const char *e = strstr(s, "\nend\n");
    cr_assert(e != NULL);
    size_t n = (size_t)(e - s) + 5;
    char *out = mp_xmalloc(n + 1);
    memcpy(out, s, n);
    out[n] = 0;
    return out;
}

#define ASSERT_CONTAINS(hay, needle)                                           \
    cr_assert(strstr((hay), (needle)) != NULL, "expected to find\n%s\nin\n%s", \
              (needle), (hay))

#endif
