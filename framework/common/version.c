/* version.c — the library's version, set by the build. */
#include "t2exp.h"

#ifndef T2EXP_VERSION_STRING
#define T2EXP_VERSION_STRING "unknown"
#endif

const char *t2_version(void) { return T2EXP_VERSION_STRING; }
