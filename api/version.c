/* version.c - the library's version, "MAJOR.MINOR.PATCH". */
#include "internal.h"

#define MP_STR(x) #x
#define MP_XSTR(x) MP_STR(x)

const char *mp_version(void) {
    return MP_XSTR(MP_VERSION_MAJOR) "." MP_XSTR(MP_VERSION_MINOR) "." MP_XSTR(MP_VERSION_PATCH);
}
