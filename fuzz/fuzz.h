/* fuzz.h - what every fuzz target shares.
 *
 * Each target is one source file, fuzz/fuzz_<target>.c, that defines
 * LLVMFuzzerTestOneInput and nothing with external linkage besides.  The
 * same object links three ways (fuzz/fuzz.mk): with libFuzzer
 * (-fsanitize=fuzzer), with AFL++'s libAFLDriver (afl-clang-fast
 * -fsanitize=fuzzer: persistent mode over shared memory), and with
 * fuzz/replay.c, a plain main() that runs the target over files and
 * directories without any fuzzer, so the corpus replays under gcc too.
 *
 * A target returns 0 for every input it can judge, and calls fuzz_fail()
 * (message on stderr, then abort()) when the library breaks a promise:
 * that is what libFuzzer and AFL++ count as a crash.
 *
 * MEMPLAN_FUZZ_ONLY=PATTERN in the environment makes only the failures
 * whose message matches the shell pattern *PATTERN* count: any other ends
 * the run quietly (exit 0).
 * fuzz/minimize.sh sets it so that minimizing one failure cannot turn the
 * input into another bug's. */
#ifndef MP_FUZZ_H
#define MP_FUZZ_H

#include <fnmatch.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "files.h"
#include "metrics.h"
#include "harness.h"
#include "pictures.h"
#include "api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Does a failure with this message count (MEMPLAN_FUZZ_ONLY)? */
static inline bool fuzz_counts(const char *msg) {
    const char *only = getenv("MEMPLAN_FUZZ_ONLY");
    if (!only || !*only) return true;
    char pat[512];
    snprintf(pat, sizeof pat, "*%s*", only);
    return fnmatch(pat, msg, 0) == 0;
}

__attribute__((noreturn, format(printf, 1, 2))) static inline void
fuzz_fail(const char *fmt, ...) {
    static char msg[32768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!fuzz_counts(msg)) _exit(0);
    fprintf(stderr, "fuzz: %s\n", msg);
    fflush(stderr);
    abort();
}

#define FUZZ_ASSERT(cond, ...)                                                \
    do {                                                                      \
        if (!(cond)) fuzz_fail(__VA_ARGS__);                                  \
    } while (0)

/* The program plan files are checked against when the input carries no
 * graph (the planfile and verify targets): the names the seeds and the
 * dictionaries use, an entry graph with every attribute and a cond. */
static inline const mp_program *fuzz_fixed_program(void) {
    static const char text[] =
        "memplan-graph 1\n"
        "graph main\n"
        "tensor x 40\ntensor w 64 const\ntensor kv 32 mutable\ntensor a 40\ntensor b 24 dynamic\n"
        "tensor v 40 view=a\ntensor c 40 inplace=a\ntensor y 16 device=cuda:0\n"
        "node placeholder out=x\nnode placeholder out=w\nnode placeholder out=kv\n"
        "node call in=x,w out=a\nnode call in=a,kv out=b\nnode call in=v,b out=c\n"
        "node cond in=c,c out=y true=T false=F\nnode output in=y\n"
        "end\n"
        "graph T\ntensor p 40\ntensor q 16\nnode placeholder out=p\nnode call in=p out=q\n"
        "node output in=q\nend\n"
        "graph F\ntensor p 40\ntensor r 16\nnode placeholder out=p\nnode call in=p out=r\n"
        "node output in=r\nend\n";
    static mp_program *p;
    if (!p) {
        mp_err err;
        p = mp_graph_parse(text, sizeof text - 1, "<program>", &err);
        if (!p) fuzz_fail("fixed program does not parse: %s", err.msg);
    }
    return p;
}

/* A structured target's input, read a byte at a time (zeros past its
 * end, so every input decodes). */
typedef struct rd {
    const uint8_t *p;
    size_t n, i;
} rd;

static inline unsigned u8(rd *r) { return r->i < r->n ? r->p[r->i++] : 0; }

static inline uint64_t u64(rd *r) {
    uint64_t v = 0;
    for (int k = 0; k < 8; k++) v = v << 8 | u8(r);
    return v;
}

#endif
