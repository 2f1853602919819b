/* revision.c - the git revision memplan was built from, recorded with
 * every run (set by the Makefile; "unknown" outside a git checkout). */
#include "internal.h"
#include "metrics.h"
#include "files.h"

#ifndef MP_GIT_REV
#define MP_GIT_REV "unknown"
#endif

const char *mp_git_revision(void) { return MP_GIT_REV; }
