/* channel_writer.c — frames held for one channel until the caller's event loop is about to wait,
 * then written with one write(). The controller's sends to a worker come in bursts (an assign and
 * its train, an exit and the next assign); each write wakes the peer, and a system call and a
 * wake-up are dear on the VMs the benchmark runs on. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "channel.h"
#include "internal.h"
#include "t2exp/error.h"

int t2__chan_writer_put(t2__chan_writer *w, const t2__val *v)
{
    char *json = NULL;
    size_t len = 0;
    int rc = t2__channel_frame_body(v, &json, &len);
    if (rc) return rc;
    char *g = t2__grow_array(w->buf, &w->cap, w->len + 4 + len - 1, 1, 4096); /* room for the frame */
    if (!g) {
        free(json);
        return t2_seterr(T2_ENOMEM, "channel: out of memory");
    }
    w->buf = g;
    if (w->len == 0) w->since = t2__now();
    t2__channel_frame_header((unsigned char *)w->buf + w->len, len);
    memcpy(w->buf + w->len + 4, json, len);
    w->len += 4 + len;
    free(json);
    return T2_OK;
}

int t2__chan_writer_flush(t2__chan_writer *w, int fd)
{
    size_t off = 0;
    int rc = T2_OK;
    while (off < w->len) {
        ssize_t n = write(fd, w->buf + off, w->len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            rc = t2_seterr(T2_EIO, "channel: write failed: %s", strerror(errno));
            break;
        }
        off += (size_t)n;
    }
    w->len = 0;
    return rc;
}

void t2__chan_writer_reset(t2__chan_writer *w) { w->len = 0; }

void t2__chan_writer_free(t2__chan_writer *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}
