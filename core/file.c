/* file.c - whole-file reads and atomic writes (temp file + rename), so a
 * failed command never leaves a partial output file behind. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

char *mp_read_file(const char *path, size_t *len, mp_err *err) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        mp_err_set(err, MP_EFORMAT, "%s: cannot open: %s", path,
                   strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *data = mp_xmalloc(cap);
    for (;;) {
        if (cap - n < 2) data = mp_xrealloc(data, cap *= 2);
        size_t got = fread(data + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    bool bad = ferror(f);
    int saved = errno;
    if (f != stdin) fclose(f);
    if (bad) {
        mp_xfree(data);
        mp_err_set(err, MP_EFORMAT, "%s: read error: %s", path,
                   strerror(saved));
        return NULL;
    }
    data[n] = 0;
    *len = n;
    return data;
}

int mp_write_file_atomic(const char *path, const char *data, size_t len,
                         mp_err *err) {
    if (strcmp(path, "-") == 0) {
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
            return mp_err_set(err, MP_EIO, "stdout: write error: %s",
                              strerror(errno));
        return MP_OK;
    }
    size_t plen = strlen(path);
    char *tmp = mp_xmalloc(plen + 16);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        mp_xfree(tmp);
        return mp_err_set(err, MP_EIO, "%s: cannot create: %s", path,
                          strerror(e));
    }
    FILE *f = fdopen(fd, "wb");
    bool ok = f && fwrite(data, 1, len, f) == len;
    ok = f && fflush(f) == 0 && ok;
    int e = errno;
    if (f) ok = fclose(f) == 0 && ok;
    else close(fd);
    /* mkstemp makes 0600 files; give the result ordinary permissions. */
    if (ok) {
        mode_t mask = umask(0);
        umask(mask);
        chmod(tmp, 0666 & ~mask);
    }
    if (ok && rename(tmp, path) != 0) {
        e = errno;
        ok = false;
    }
    if (!ok) {
        unlink(tmp);
        mp_xfree(tmp);
        return mp_err_set(err, MP_EIO, "%s: write failed: %s", path,
                          strerror(e));
    }
    mp_xfree(tmp);
    return MP_OK;
}
