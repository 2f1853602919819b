/* files.h - reading and writing the files a command names (core/lines.c,
 * core/file.c): whole or in pieces, through a temporary, nothing left
 * behind on failure.  Moved from memplan_tools.h in 2.0. */
#ifndef MP_FILES_H
#define MP_FILES_H

#include "memplan.h"

#include <stdbool.h>
#include <stddef.h>

/* ------------------------------------------------------------------ files */

/* Read a whole file (core/lines.c; a NUL-terminated copy, freed with
 * mp_xfree).  Returns NULL with MP_EFORMAT. */
char *mp_read_file(const char *path, size_t *len, mp_err *err);
/* Write an output file (core/file.c): a regular or new file through a
 * temporary beside it and a rename, keeping its mode and owner; a
 * symbolic link's target (the link stays a link); a device, FIFO or
 * socket in place; "-" is stdout.  On failure nothing is left behind
 * (MP_EIO).  mp_write_output also refuses (MP_EFORMAT) a path that is the
 * same file as one of `inputs`. */
int mp_write_file_atomic(const char *path, const char *data, size_t len, mp_err *err);
/* The same output written in pieces, for a text too large to hold whole
 * (a 10^7-tensor plan is 0.7 GB): mp_out_open makes the checks and opens
 * the temporary (or the device, or stdout); mp_out_write appends (false
 * once a write failed: later ones are skipped); mp_out_close with keep
 * renames the temporary over the path, or reports the first failure
 * (MP_EIO), and without keep removes it.  Close every output opened. */
typedef struct mp_out {
    int fd;
    char *tmp; /* the temporary, NULL when written in place */
    char path[4096];
    bool is_stdout, has_old, ok;
    unsigned old_mode, old_uid, old_gid;
    int error; /* errno of the first failed write */
    int temp_slot; /* its place among the temporaries a signal removes, or -1 */
} mp_out;
int mp_out_open(mp_out *o, const char *path, const char *const *inputs, size_t n_inputs, mp_err *err);
/* Every byte of data to fd (EINTR retried); false with errno set. */
bool mp_write_all(int fd, const char *data, size_t len);
bool mp_out_write(mp_out *o, const char *data, size_t len);
/* mp_out_write as a writer's sink (ctx: the mp_out), for mp_gen_to and the
 * plan writer's pieces. */
bool mp_out_sink(const char *data, size_t len, void *ctx);
int mp_out_close(mp_out *o, bool keep, mp_err *err);
/* Remove every temporary an mp_out has open now: for a signal handler
 * (async-signal-safe; the command installs it, cli/main.c). */
void mp_out_remove_temporaries(void);
/* Whether two output paths name one file (links followed; a new file by
 * its folder and name): two outputs of one command on one path are
 * refused, as an output that is an input is. */
bool mp_same_output(const char *a, const char *b);
int mp_write_output(const char *path, const char *data, size_t len, const char *const *inputs,
                    size_t n_inputs, mp_err *err);
/* A writer's text in b (mp_buf), to path as mp_write_output does, only when
 * it is whole: when b failed (an allocation ran out, so its text stops
 * short), MP_ENOMEM and no file touched. */
int mp_write_buf(const char *path, const struct mp_buf *b, const char *const *inputs, size_t n_inputs,
                 mp_err *err);
/* mp_out_close for a text a writer handed through mp_out_write from b,
 * a piece at a time: kept only when whole.  MP_EIO when a write failed,
 * MP_ENOMEM when b failed on an allocation; either way nothing is left
 * behind. */
int mp_out_finish(mp_out *o, const struct mp_buf *b, mp_err *err);

#endif
