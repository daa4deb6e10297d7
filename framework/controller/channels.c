/* channels.c — the controller's side of the trials' channels, per file descriptor: a buffered
 * reader (runner/channel_reader.c) and a writer that holds what the loop sends until it is about
 * to wait (runner/channel_writer.c), so an assign and its train, or an exit and the next assign,
 * go out as one write and wake the worker once. A worker's channel outlives each trial on it, and
 * a descriptor number is reused after a close: a reader is reset whenever a trial starts on its
 * descriptor, and both are reset when it is closed (t2__ctl_channel_closed). */
#define _XOPEN_SOURCE 700
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
#include "protocol/protocol.h"
#include "runner/channel.h"
#include "internal.h"

/* Room for descriptor fd in the per-descriptor arrays. */
static int grow(t2__ctl *c, int fd)
{
    if (fd < 0) return t2_seterr(T2_EINVAL, "controller: a channel for descriptor %d", fd);
    if (fd < c->nrd) return T2_OK;
    int n = fd + 1 > 2 * c->nrd ? fd + 1 : 2 * c->nrd;
    t2__chan_reader *g = realloc(c->rd, (size_t)n * sizeof *g);
    if (!g) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    c->rd = g;
    t2__chan_writer *gw = realloc(c->wr, (size_t)n * sizeof *gw);
    if (!gw) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    c->wr = gw;
    memset(g + c->nrd, 0, (size_t)(n - c->nrd) * sizeof *g);
    memset(gw + c->nrd, 0, (size_t)(n - c->nrd) * sizeof *gw);
    c->nrd = n;
    return T2_OK;
}

t2__chan_reader *t2__ctl_reader(t2__ctl *c, int fd) { return grow(c, fd) ? NULL : &c->rd[fd]; }

int t2__ctl_reader_has_frame(const t2__ctl *c, int fd)
{
    return fd >= 0 && fd < c->nrd && t2__chan_reader_has_frame(&c->rd[fd]);
}

void t2__ctl_reader_reset(t2__ctl *c, int fd)
{
    if (fd >= 0 && fd < c->nrd) t2__chan_reader_reset(&c->rd[fd]);
}

int t2__ctl_send(t2__ctl *c, int fd, const t2__msg *m)
{
    int rc = grow(c, fd);
    if (rc) return rc;
    if (c->wr[fd].len == 0) { /* first frame since the last flush: fd joins the list to flush */
        int *g = t2__grow_array(c->send_fds, &c->capsend, c->nsend, sizeof *g, 16);
        if (!g) return t2_seterr(T2_ENOMEM, "controller: out of memory");
        c->send_fds = g;
        c->send_fds[c->nsend++] = fd;
    }
    return t2__msg_put(&c->wr[fd], m);
}

void t2__ctl_flush_sends(t2__ctl *c)
{
    for (size_t i = 0; i < c->nsend; i++) {
        int fd = c->send_fds[i];
        /* A failed write means the peer is gone: its end of stream, which poll sees next, settles
         * its trial. A descriptor listed twice (closed and reused) is empty the second time. */
        if (fd < c->nrd && t2__chan_writer_flush(&c->wr[fd], fd)) t2_clearerr();
    }
    c->nsend = 0;
}

void t2__ctl_channel_closed(t2__ctl *c, int fd)
{
    if (fd < 0 || fd >= c->nrd) return;
    t2__chan_reader_reset(&c->rd[fd]);
    t2__chan_writer_reset(&c->wr[fd]);
}

void t2__ctl_readers_free(t2__ctl *c)
{
    for (int i = 0; i < c->nrd; i++) {
        t2__chan_reader_free(&c->rd[i]);
        t2__chan_writer_free(&c->wr[i]);
    }
    free(c->rd);
    free(c->wr);
    free(c->send_fds);
    c->rd = NULL;
    c->wr = NULL;
    c->send_fds = NULL;
    c->nrd = 0;
    c->nsend = c->capsend = 0;
}
