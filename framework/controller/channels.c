/* channels.c — the buffered readers of the trials' channels (runner/channel_reader.c), one per
 * file descriptor: a worker's channel outlives each trial on it, and a descriptor number is reused
 * after a close, so a reader is reset whenever a trial starts on its descriptor or it is closed. */
#define _XOPEN_SOURCE 700
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
#include "runner/channel.h"
#include "internal.h"

t2__chan_reader *t2__ctl_reader(t2__ctl *c, int fd)
{
    if (fd < 0) {
        t2_seterr(T2_EINVAL, "controller: a channel reader for descriptor %d", fd);
        return NULL;
    }
    if (fd >= c->nrd) {
        int n = fd + 1 > 2 * c->nrd ? fd + 1 : 2 * c->nrd;
        t2__chan_reader *g = realloc(c->rd, (size_t)n * sizeof *g);
        if (!g) {
            t2_seterr(T2_ENOMEM, "controller: out of memory");
            return NULL;
        }
        memset(g + c->nrd, 0, (size_t)(n - c->nrd) * sizeof *g);
        c->rd = g;
        c->nrd = n;
    }
    return &c->rd[fd];
}

int t2__ctl_reader_has_frame(const t2__ctl *c, int fd)
{
    return fd >= 0 && fd < c->nrd && t2__chan_reader_has_frame(&c->rd[fd]);
}

void t2__ctl_reader_reset(t2__ctl *c, int fd)
{
    if (fd >= 0 && fd < c->nrd) t2__chan_reader_reset(&c->rd[fd]);
}

void t2__ctl_readers_free(t2__ctl *c)
{
    for (int i = 0; i < c->nrd; i++) t2__chan_reader_free(&c->rd[i]);
    free(c->rd);
    c->rd = NULL;
    c->nrd = 0;
}
