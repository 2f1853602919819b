/* internal.h - everything the library's modules share, by concern:
 * base.h (memory, errors, arithmetic, containers, sorts), model.h (the
 * data behind the public handles), formats.h (the text formats' pieces),
 * problem.h (the planning problem).  A module may include just the ones
 * it needs; this header includes them all. */
#ifndef MP_INTERNAL_H
#define MP_INTERNAL_H

#include "memplan.h"
#include "model.h"
#include "base.h"
#include "formats.h"
#include "problem.h"

#endif
