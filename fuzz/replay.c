/* replay.c - run a fuzz target over files without a fuzzer.
 *
 *   fuzz-replay-TARGET [-q] [--fork] [--timeout S] FILE|DIR...
 *
 * Links with one fuzz/fuzz_<target>.c (its LLVMFuzzerTestOneInput) instead
 * of libFuzzer or AFL++, so the corpus replays with any compiler, under the
 * sanitizers, in `make test`: the model is zstd's tests/fuzz regression
 * driver and SQLite's test/fuzzcheck.c.  Directories are walked
 * recursively in name order (dot files skipped); each input is handed over
 * in a buffer of exactly its size, so reading past it is an ASan report.
 *
 * Without --fork every input runs in this process and the first failure
 * ends the run (the sanitizer's report, or the target's abort).  With
 * --fork each input runs in a child of its own, killed after --timeout
 * seconds (default 60), so one run reports every failing input.  The last
 * line is always "replay: N passed, M failed"; the exit status is 0 only
 * when M is 0. */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct paths {
    char **v;
    size_t n, cap;
} paths;

static void push(paths *p, char *s) {
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 64;
        p->v = mp_xrealloc(p->v, p->cap * sizeof *p->v);
        if (!p->v) {
            perror("replay");
            exit(2);
        }
    }
    p->v[p->n++] = s;
}

static char *join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *s = mp_xmalloc(a + b + 2);
    if (!s) {
        perror("replay");
        exit(2);
    }
    memcpy(s, dir, a);
    s[a] = '/';
    memcpy(s + a + 1, name, b + 1);
    return s;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Regular files under `path` (itself, when it is one), in name order. */
static int collect(const char *path, paths *out) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (S_ISREG(st.st_mode)) {
        char *copy = strcpy(mp_xmalloc(strlen(path) + 1), path);
        if (!copy) {
            perror("replay");
            exit(2);
        }
        push(out, copy);
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) return 0;
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    paths names = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') push(&names, join(path, e->d_name));
    closedir(d);
    qsort(names.v, names.n, sizeof *names.v, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < names.n; i++) {
        if (collect(names.v[i], out)) rc = -1;
        mp_xfree(names.v[i]);
    }
    mp_xfree(names.v);
    return rc;
}

static int run_one(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = mp_xmalloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) buf = mp_xrealloc(buf, cap *= 2);
    }
    int err = ferror(f);
    fclose(f);
    if (!buf || err) {
        fprintf(stderr, "replay: %s: read error\n", path);
        mp_xfree(buf);
        return -1;
    }
    /* exactly n bytes, so that an over-read is an ASan report */
    uint8_t *exact = mp_xmalloc(n ? n : 1);
    if (!exact) {
        mp_xfree(buf);
        return -1;
    }
    if (n) memcpy(exact, buf, n);
    mp_xfree(buf);
    LLVMFuzzerTestOneInput(exact, n);
    mp_xfree(exact);
    return 0;
}

static int run_forked(const char *path, unsigned timeout) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("replay: fork");
        return -1;
    }
    if (pid == 0) {
        alarm(timeout);
        /* exit(), not _exit(): coverage and leak checks run at exit */
        exit(run_one(path) ? 3 : 0);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    if (WIFSIGNALED(status))
        fprintf(stderr, "replay: FAIL %s (%s)\n", path,
                WTERMSIG(status) == SIGALRM ? "timeout" : strsignal(WTERMSIG(status)));
    else
        fprintf(stderr, "replay: FAIL %s (exit %d)\n", path, WEXITSTATUS(status));
    return -1;
}

static void usage(void) {
    fputs("usage: fuzz-replay-TARGET [-q] [--fork] [--timeout S] FILE|DIR...\n", stderr);
    exit(2);
}

int main(int argc, char **argv) {
    int quiet = 0, forked = 0;
    unsigned timeout = 60;
    paths files = {0};
    int i = 1, bad_path = 0;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "-q") == 0) {
            quiet = 1;
        } else if (strcmp(argv[i], "--fork") == 0) {
            forked = 1;
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            timeout = (unsigned)strtoul(argv[++i], NULL, 10);
            if (!timeout) usage();
        } else {
            usage();
        }
    }
    if (i == argc) usage();
    for (; i < argc; i++)
        if (collect(argv[i], &files)) bad_path = 1;
    size_t passed = 0, failed = 0;
    for (size_t k = 0; k < files.n; k++) {
        if (!quiet) fprintf(stderr, "replay: %s\n", files.v[k]);
        int rc = forked ? run_forked(files.v[k], timeout) : run_one(files.v[k]);
        if (rc == 0) passed++;
        else failed++;
        mp_xfree(files.v[k]);
    }
    mp_xfree(files.v);
    failed += (size_t)bad_path;
    printf("replay: %zu passed, %zu failed\n", passed, failed);
    return failed ? 1 : 0;
}
