/* clock.c — the monotonic clock every timing in t2exp (runner windows, controller progress,
 * benchmarks) reads. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>
#include "internal.h"

double t2__now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
