/* version.c - the library's version, "MAJOR.MINOR.PATCH" (memplan.h). */
#include "internal.h"

const char *mp_version(void) { return MEMPLAN_VERSION; }
