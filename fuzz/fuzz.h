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

#endif
