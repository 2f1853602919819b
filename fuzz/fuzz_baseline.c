/* fuzz_baseline.c - target "baseline": the gate's baseline reader
 * (store/baseline.c), which runs a baseline file as SQL in a private
 * in-memory database under an authorizer.
 *
 * Any bytes as a baseline file.  A rejected one comes back as MP_EFORMAT
 * (or MP_ENOMEM) with a message naming the file; an accepted one dumps
 * (mp_gate_dump) to a file that reads back as the same rows.  Nothing the
 * file says can reach another database (no ATTACH) or the disk. */
#define _GNU_SOURCE
#include "fuzz.h"
#include "internal.h"
#include "harness.h"
#include "files.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The bytes as a file (an anonymous memory file): its path into `path`. */
static int as_file(const void *data, size_t size, char *path, size_t n) {
    int fd = memfd_create("baseline", 0);
    FUZZ_ASSERT(fd >= 0, "memfd_create failed");
    FUZZ_ASSERT(write(fd, data, size) == (ssize_t)size, "writing the memory file failed");
    snprintf(path, n, "/proc/self/fd/%d", fd);
    return fd;
}

static void same_rows(const mp_gate_rows *a, const mp_gate_rows *b) {
    FUZZ_ASSERT(a->n == b->n && a->seed == b->seed && a->count == b->count, "dump: header or row count changed");
    FUZZ_ASSERT(!strcmp(a->options ? a->options : "", b->options ? b->options : "") &&
                    !strcmp(a->version ? a->version : "", b->version ? b->version : ""),
                "dump: run options or version changed");
    for (size_t i = 0; i < a->n; i++) {
        const mp_gate_row *x = &a->v[i], *y = &b->v[i];
        FUZZ_ASSERT(!strcmp(x->graph, y->graph) && !strcmp(x->algo, y->algo) && x->total == y->total &&
                        x->lower == y->lower && !strcmp(x->verify, y->verify),
                    "dump: row %zu changed", i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64], path2[64];
    int fd = as_file(data, size, path, sizeof path);
    mp_gate_rows rows = {0}, again = {0};
    mp_err err;
    int rc = mp_gate_load_baseline(path, &rows, &err);
    if (rc != MP_OK) {
        FUZZ_ASSERT(rc == MP_EFORMAT || rc == MP_ENOMEM, "baseline: code %d: %s", rc, err.msg);
        FUZZ_ASSERT(strstr(err.msg, path) != NULL, "baseline: the message does not name the file: %s", err.msg);
    } else {
        mp_buf b;
        mp_buf_init(&b);
        mp_gate_dump(&rows, &b);
        int fd2 = as_file(b.data, b.len, path2, sizeof path2);
        rc = mp_gate_load_baseline(path2, &again, &err);
        FUZZ_ASSERT(rc == MP_OK, "baseline: its own dump does not read back: %s", err.msg);
        same_rows(&rows, &again);
        close(fd2);
        mp_buf_free(&b);
    }
    mp_gate_rows_free(&rows);
    mp_gate_rows_free(&again);
    close(fd);
    return 0;
}
