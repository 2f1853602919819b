/* file.c - the one writer of every output file (inputs: lines.c).
 *
 * An output is written so that a failed command leaves nothing behind and
 * touches nothing it was not asked to write: a regular file (or a new
 * one) through a temporary beside it and a rename, keeping its mode and
 * owner; a symbolic link's target, the link left a link; a device, FIFO or
 * socket (/dev/null, a pipe) in place; "-" is standard output; a path
 * that is one of the command's inputs is refused. */
#define _DEFAULT_SOURCE /* realpath */
#include "internal.h"
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
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

/* ---------------------------------------- temporaries a signal removes
 *
 * The temporaries open now, for mp_out_remove_temporaries: a command
 * stopped by SIGTERM, SIGINT or SIGHUP while it writes (a 10^7-tensor
 * plan is 0.7 GB) leaves no OUT.tmp.XXXXXX behind (cli/main.c installs
 * the handler).  A fixed table claimed with atomics, so that the handler
 * reads it safely; an output that finds it full is written as before,
 * without that clean-up. */
#define TEMPS 8
static char temp_paths[TEMPS][4200];
static atomic_int temp_used[TEMPS]; /* 0 free, 1 claimed, 2 its path is there */

static int claim_temp(const char *path) {
    for (int i = 0; i < TEMPS; i++) {
        int free_slot = 0;
        if (strlen(path) >= sizeof temp_paths[i] ||
            !atomic_compare_exchange_strong(&temp_used[i], &free_slot, 1))
            continue;
        memcpy(temp_paths[i], path, strlen(path) + 1);
        atomic_store(&temp_used[i], 2);
        return i;
    }
    return -1;
}

static void release_temp(int i) {
    if (i >= 0) atomic_store(&temp_used[i], 0);
}

/* Async-signal-safe: unlink every temporary open now. */
void mp_out_remove_temporaries(void) {
    for (int i = 0; i < TEMPS; i++)
        if (atomic_load(&temp_used[i]) == 2) unlink(temp_paths[i]);
}

static int open_temporary(mp_out *o, mp_err *err) {
    size_t plen = strlen(o->path);
    o->tmp = mp_try_realloc(NULL, plen + 16); /* outside a guard too: no abort */
    if (!o->tmp) return mp_err_set(err, MP_ENOMEM, "%s: out of memory", o->path);
    memcpy(o->tmp, o->path, plen);
    memcpy(o->tmp + plen, ".tmp.XXXXXX", 12);
    sigset_t mask; /* a stop between the two left the temporary behind (CI, outputs.sh B18) */
    mp_stop_block(&mask);
    o->fd = mkstemp(o->tmp);
    o->temp_slot = o->fd >= 0 ? claim_temp(o->tmp) : -1;
    mp_stop_unblock(&mask);
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
    o->temp_slot = -1;
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

/* The temporary's owner, then its mode (in that order: a change of owner
 * clears the setuid and setgid bits), then its rename over the path. */
static bool commit_temporary(mp_out *o) {
    mode_t mask = umask(0);
    umask(mask);
    if (o->has_old && geteuid() == 0 && fchown(o->fd, (uid_t)o->old_uid, (gid_t)o->old_gid) != 0) return false;
    if (fchmod(o->fd, o->has_old ? (mode_t)o->old_mode & 07777 : 0666 & ~mask) != 0) return false;
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
        release_temp(o->temp_slot);
        mp_xfree(o->tmp);
        o->tmp = NULL;
    }
    if (!keep) return MP_OK;
    return ok ? MP_OK : mp_err_set(err, MP_EIO, "%s: write failed: %s", o->path, strerror(e));
}

/* The file a path would write: the same as another output's?  By name
 * once links are followed, or by inode where both exist. */
bool mp_same_output(const char *a, const char *b) {
    if (strcmp(a, b) == 0) return true;
    if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0) return false;
    char ra[4096], rb[4096];
    mp_err err;
    if (resolve_links(a, ra, sizeof ra, &err) || resolve_links(b, rb, sizeof rb, &err)) return false;
    struct stat sa, sb;
    if (stat(ra, &sa) == 0 && stat(rb, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (strcmp(ra, rb) == 0) return true;
    /* one is new: the same folder, resolved, and the same name */
    const char *na = strrchr(ra, '/'), *nb = strrchr(rb, '/');
    char pa[4096], pb[4096];
    snprintf(pa, sizeof pa, "%.*s", na ? (int)(na - ra + 1) : 2, na ? ra : "./");
    snprintf(pb, sizeof pb, "%.*s", nb ? (int)(nb - rb + 1) : 2, nb ? rb : "./");
    char *da = realpath(pa, NULL), *db = realpath(pb, NULL);
    bool same = da && db && strcmp(da, db) == 0 && strcmp(na ? na + 1 : ra, nb ? nb + 1 : rb) == 0;
    free(da);
    free(db);
    return same;
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
