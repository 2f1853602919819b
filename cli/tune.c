/* tune.c - the C library's allocator tuned for memplan, a short batch
 * process that allocates and frees many large arrays.  The library itself
 * leaves the process's allocator alone: only the command does this.
 *
 * Two settings:
 *   - freed memory stays in the heap for the next request (mallopt): glibc
 *     would map each large scratch array afresh and pay a page fault per
 *     page, a fifth of a 10^5-tensor plan's time;
 *   - the heap on 2 MiB pages (glibc's tunable glibc.malloc.hugetlb=1):
 *     where transparent huge pages are given only on request ("madvise",
 *     Debian's default), the heap's small and middling blocks otherwise sit
 *     on 4 KiB pages.  A program of many small graphs (the mixed profile,
 *     10^6 tensors) took 65,000 page faults to plan, 1,300 with it; on
 *     these virtual machines a fault costs some 10 us.
 *
 * A tunable is read only when a process starts, so the command starts
 * itself again (once) with it added to GLIBC_TUNABLES, then puts the
 * variable back as it was: what memplan runs (bench's children, external
 * planners, fuzzers) sees the caller's environment.  Nothing is done where
 * the caller set glibc.malloc.hugetlb already (GLIBC_TUNABLES=
 * glibc.malloc.hugetlb=0 turns this off), where huge pages are off or
 * always on, under a tool that preloads a library (valgrind), or off
 * glibc; a failed restart runs on as it is. */
#define _GNU_SOURCE /* setenv, unsetenv */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h> /* mallopt */
#endif

/* In the restarted process: its pid (an exec keeps it: a variable of this
 * name that the caller set, or that a parent memplan passed on, names
 * another process and is not taken for a restart), then the caller's
 * GLIBC_TUNABLES, "=" and its value when it had one, nothing when it had
 * none. */
#define TUNE_WAS "MEMPLAN_GLIBC_TUNABLES_WAS"
#define TUNE_HUGE "glibc.malloc.hugetlb"

static void keep_freed_memory(void) {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

/* Whether transparent huge pages are given on request only (the setting
 * in brackets is "madvise"). */
static bool huge_pages_on_request(void) {
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return false;
    char line[128];
    bool yes = fgets(line, sizeof line, f) && strstr(line, "[madvise]");
    fclose(f);
    return yes;
}

/* Whether a tool interposes on the process (valgrind, heaptrack: they
 * preload their libraries).  It is left alone: under valgrind,
 * /proc/self/exe is valgrind's own program, which refuses to be started
 * so, and a tool that follows its process across an exec may not. */
static bool interposed(void) {
    const char *pre = getenv("LD_PRELOAD"), *audit = getenv("LD_AUDIT");
    return (pre && *pre) || (audit && *audit);
}

/* The caller's part of TUNE_WAS when it is this process's own (its pid
 * leads), else NULL. */
static const char *restarted_from(const char *was) {
    if (!was) return NULL;
    char *end;
    long pid = strtol(was, &end, 10);
    return end != was && pid == (long)getpid() && (*end == '=' || *end == 0) ? end : NULL;
}

/* GLIBC_TUNABLES as the caller set it (the restarted process). */
static void restore_caller_env(const char *was) {
    if (*was == '=') setenv("GLIBC_TUNABLES", was + 1, 1);
    else unsetenv("GLIBC_TUNABLES");
    unsetenv(TUNE_WAS);
}

/* Start again with the heap on huge pages; returns only where it cannot. */
static void restart_with_huge_heap(char **argv) {
    const char *cur = getenv("GLIBC_TUNABLES");
    if (cur && strstr(cur, TUNE_HUGE)) return; /* the caller's choice */
    if (interposed()) return;
    if (!huge_pages_on_request()) return;
    char was[4096], now[4096 + 32];
    int n = snprintf(was, sizeof was, "%ld%s%s", (long)getpid(), cur ? "=" : "", cur ? cur : "");
    int m = snprintf(now, sizeof now, "%s%s" TUNE_HUGE "=1", cur ? cur : "", cur && *cur ? ":" : "");
    if (n < 0 || (size_t)n >= sizeof was || m < 0 || (size_t)m >= sizeof now) return;
    const char *caller = was + strcspn(was, "=");
    if (setenv(TUNE_WAS, was, 1) || setenv("GLIBC_TUNABLES", now, 1)) {
        restore_caller_env(caller);
        return;
    }
    execv("/proc/self/exe", argv);
    restore_caller_env(caller); /* no /proc, or no exec: run as we are */
}

void mp_cli_tune_process(char **argv) {
#if defined(__GLIBC__) && defined(__linux__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 35)
    const char *was = restarted_from(getenv(TUNE_WAS));
    if (was) restore_caller_env(was);
    else restart_with_huge_heap(argv);
#else
    (void)argv;
#endif
    keep_freed_memory();
}
