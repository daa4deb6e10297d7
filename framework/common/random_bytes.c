/* random_bytes.c — bytes from the kernel's random source, for what must be unique or secret
 * (checkpoint uuids, channel keys and nonces), never from a trial's seeded generator: drawing
 * them must not perturb the seeded streams. */
#define _GNU_SOURCE /* getrandom */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include "internal.h"

int t2__random_bytes(void *buf, size_t n)
{
    unsigned char *b = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(b + got, n - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return t2_seterr(T2_EIO, "getrandom: %s", strerror(errno));
        got += (size_t)r;
    }
    return T2_OK;
}
