/* info.h — `t2exp info`: the facts a run depends on, for bug reports (internal). */
#ifndef T2_CLI_INFO_H
#define T2_CLI_INFO_H

#include <stdio.h>

/* Prints the CPU and its vector extensions, the BLAS library, its core and why, the cores trials
 * share, the versions of the libraries t2exp is built on, and the store path (home: the --home
 * value or NULL). json: one JSON object instead of aligned lines. Returns 0, or a T2_E… code. */
int t2__info_print(FILE *out, const char *home, int json);

#endif
