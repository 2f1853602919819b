/* file.c - the one writer of every output file (inputs: lines.c).
 *
 * An output is written so that a failed command leaves nothing behind and
 * touches nothing it was not asked to write: a regular file (or a new
 * one) through a temporary beside it and a rename, keeping its mode and
 * owner; a symbolic link's target, the link left a link; a device, FIFO or
 * socket (/dev/null, a pipe) in place; "-" is standard output; a path
 * that is one of the command's inputs is refused. */
#include "internal.h"
#include "memplan_tools.h" /* mp_out */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

bool mp_write_all(int fd, const char *data, size_t len) {
    while (len) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        data += w;
        len -= (size_t)w;
    }
    return true;
}

/* The file a path names once symbolic links are followed (the last one
 * may dangle: the file it would create).  Writes into out (PATH_MAX). */
static int resolve_links(const char *path, char *out, size_t n, mp_err *err) {
    snprintf(out, n, "%s", path);
    for (int hops = 0; hops < 40; hops++) {
        struct stat st;
        if (lstat(out, &st) != 0 || !S_ISLNK(st.st_mode)) return MP_OK;
        char target[4096];
        ssize_t k = readlink(out, target, sizeof target - 1);
        if (k < 0) return mp_err_set(err, MP_EIO, "%s: cannot read the link: %s", path, strerror(errno));
        target[k] = 0;
        if (target[0] == '/') {
            snprintf(out, n, "%s", target);
        } else { /* relative to the link's folder */
            char *slash = strrchr(out, '/');
            char dir[4096];
            snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - out + 1) : 0, out);
            if ((size_t)snprintf(out, n, "%s%s", dir, target) >= n)
                return mp_err_set(err, MP_EIO, "%s: link target too long", path);
        }
    }
    return mp_err_set(err, MP_EIO, "%s: too many levels of symbolic links", path);
}

/* Opens an output (mp_out_open): "-" is stdout; a device, FIFO or socket
 * is written in place (no temporary, no rename: /dev/null stays a
 * device); a regular file or a new one goes to a temporary beside it,
 * renamed over it by mp_out_close with the old file's mode (and owner, as
 * root).  Every error path removes the temporary. */
static int open_in_place(mp_out *o, mp_err *err) {
    o->fd = open(o->path, O_WRONLY | O_CLOEXEC);
    if (o->fd < 0) return mp_err_set(err, MP_EIO, "%s: cannot open: %s", o->path, strerror(errno));
    return MP_OK;
}

static int open_temporary(mp_out *o, mp_err *err) {
    size_t plen = strlen(o->path);
    o->tmp = mp_try_realloc(NULL, plen + 16); /* outside a guard too: no abort */
    if (!o->tmp) return mp_err_set(err, MP_ENOMEM, "%s: out of memory", o->path);
    memcpy(o->tmp, o->path, plen);
    memcpy(o->tmp + plen, ".tmp.XXXXXX", 12);
    o->fd = mkstemp(o->tmp);
    if (o->fd < 0) {
        int e = errno;
        mp_xfree(o->tmp);
        o->tmp = NULL;
        return mp_err_set(err, MP_EIO, "%s: cannot create: %s", o->path, strerror(e));
    }
    return MP_OK;
}

int mp_out_open(mp_out *o, const char *path, const char *const *inputs, size_t n_inputs, mp_err *err) {
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->ok = true;
    if (strcmp(path, "-") == 0) {
        o->fd = STDOUT_FILENO;
        o->is_stdout = true;
        snprintf(o->path, sizeof o->path, "stdout");
        return MP_OK;
    }
    if (resolve_links(path, o->path, sizeof o->path, err)) return err->code;
    struct stat st;
    bool exists = stat(o->path, &st) == 0;
    for (size_t i = 0; exists && i < n_inputs; i++) {
        struct stat in;
        if (inputs[i] && strcmp(inputs[i], "-") && stat(inputs[i], &in) == 0 && in.st_dev == st.st_dev &&
            in.st_ino == st.st_ino)
            return mp_err_set(err, MP_EFORMAT, "%s: is the input %s; write the output elsewhere", path,
                              inputs[i]);
    }
    if (exists && S_ISDIR(st.st_mode)) return mp_err_set(err, MP_EIO, "%s: is a folder", path);
    if (exists && !S_ISREG(st.st_mode)) return open_in_place(o, err);
    o->has_old = exists;
    o->old_mode = (unsigned)st.st_mode, o->old_uid = (unsigned)st.st_uid, o->old_gid = (unsigned)st.st_gid;
    return open_temporary(o, err);
}

bool mp_out_write(mp_out *o, const char *data, size_t len) {
    if (!o->ok) return false;
    /* stdout through stdio, in order with whatever else went there */
    bool ok = o->is_stdout ? fwrite(data, 1, len, stdout) == len : mp_write_all(o->fd, data, len);
    if (!ok) o->ok = false, o->error = errno;
    return o->ok;
}

bool mp_out_sink(const char *data, size_t len, void *ctx) { return mp_out_write(ctx, data, len); }

/* The temporary's mode and owner, then its rename over the path. */
static bool commit_temporary(mp_out *o) {
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(o->fd, o->has_old ? (mode_t)o->old_mode & 07777 : 0666 & ~mask) != 0) return false;
    if (o->has_old && geteuid() == 0 && fchown(o->fd, (uid_t)o->old_uid, (gid_t)o->old_gid) != 0) return false;
    return true;
}

int mp_out_close(mp_out *o, bool keep, mp_err *err) {
    if (o->fd < 0) return MP_OK; /* never opened */
    bool ok = o->ok;
    int e = o->error;
    if (o->is_stdout) {
        if (ok && fflush(stdout) != 0) ok = false, e = errno;
        return ok || !keep ? MP_OK : mp_err_set(err, MP_EIO, "stdout: write error: %s", strerror(e));
    }
    if (ok && keep && o->tmp && !commit_temporary(o)) ok = false, e = errno;
    if (close(o->fd) != 0 && ok) ok = false, e = errno;
    o->fd = -1;
    if (o->tmp) {
        if (ok && keep && rename(o->tmp, o->path) != 0) ok = false, e = errno;
        if (!ok || !keep) unlink(o->tmp);
        mp_xfree(o->tmp);
        o->tmp = NULL;
    }
    if (!keep) return MP_OK;
    return ok ? MP_OK : mp_err_set(err, MP_EIO, "%s: write failed: %s", o->path, strerror(e));
}

int mp_write_output(const char *path, const char *data, size_t len, const char *const *inputs,
                    size_t n_inputs, mp_err *err) {
    mp_out o;
    int rc = mp_out_open(&o, path, inputs, n_inputs, err);
    if (rc) return rc;
    mp_out_write(&o, data, len);
    return mp_out_close(&o, true, err);
}

int mp_write_file_atomic(const char *path, const char *data, size_t len, mp_err *err) {
    return mp_write_output(path, data, len, NULL, 0, err);
}

int mp_write_buf(const char *path, const mp_buf *b, const char *const *inputs, size_t n_inputs, mp_err *err) {
    if (b->failed) return mp_err_set(err, MP_ENOMEM, "%s: out of memory while writing it: nothing written", path);
    return mp_write_output(path, b->data ? b->data : "", b->len, inputs, n_inputs, err);
}

int mp_out_finish(mp_out *o, const mp_buf *b, mp_err *err) {
    if (!b->failed || !o->ok) return mp_out_close(o, true, err); /* whole, or a write failed (MP_EIO) */
    bool in_place = o->is_stdout || !o->tmp; /* what went there stays there */
    mp_out_close(o, false, err);
    return mp_err_set(err, MP_ENOMEM, "%s: out of memory while writing it: %s", o->is_stdout ? "stdout" : o->path,
                      in_place ? "the text stops short" : "nothing written");
}
