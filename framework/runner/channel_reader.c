/* channel_reader.c — a buffered reader of channel frames, for the controller's event loop.
 *
 * Why: read frame by frame, every message cost two read() calls (header, body) and one poll()
 * round, and a short trial sends five messages; a system call is several microseconds on the
 * VMs the benchmark runs on. One read() takes whatever the peer has written (often several
 * frames: metrics, metrics, done), and the loop handles every complete frame before it polls
 * again. A frame that has not fully arrived waits in the buffer for the next readable event, so
 * a slow or stalled peer never blocks the caller inside a frame. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "channel.h"
#include "internal.h"
#include "t2exp/error.h"

/* What one read() asks for at least: room for many small frames. */
#define READ_CHUNK 65536u

void t2__chan_reader_reset(t2__chan_reader *r)
{
    r->off = r->len = 0;
    r->eof = r->broken = 0;
}

void t2__chan_reader_free(t2__chan_reader *r)
{
    free(r->buf);
    memset(r, 0, sizeof *r);
}

/* The length of the complete frame at the front (header included), or 0 if it is not all here. */
static size_t complete(const t2__chan_reader *r, uint32_t *body)
{
    size_t have = r->len - r->off;
    if (have < 4) return 0;
    *body = t2__channel_frame_len((const unsigned char *)r->buf + r->off);
    return have - 4 >= *body ? 4 + (size_t)*body : 0;
}

int t2__chan_reader_has_frame(const t2__chan_reader *r)
{
    uint32_t body;
    return (r->eof && !r->broken) || (!r->broken && complete(r, &body) > 0);
}

/* Room for at least `need` more bytes after the data (moving the data to the front first). */
static int make_room(t2__chan_reader *r, size_t need)
{
    if (r->off > 0) {
        memmove(r->buf, r->buf + r->off, r->len - r->off);
        r->len -= r->off;
        r->off = 0;
    }
    if (r->cap - r->len >= need) return T2_OK;
    size_t cap = r->cap ? r->cap : READ_CHUNK;
    while (cap - r->len < need) cap *= 2;
    char *g = realloc(r->buf, cap + 1); /* +1: the body is parsed NUL-terminated */
    if (!g) return t2_seterr(T2_ENOMEM, "channel: out of memory");
    r->buf = g;
    r->cap = cap;
    return T2_OK;
}

/* After a frame over the limit the stream cannot be followed: the rest is dropped as it comes
 * (the caller stops the peer) until the end of the stream, which is reported as a clean one. */
static int too_large(t2__chan_reader *r, uint32_t body)
{
    r->broken = 1;
    r->off = r->len = 0;
    return t2_seterr(T2_EFORMAT, "channel: frame of %u bytes is too large", body);
}

/* A peer that closed while data it had not read was queued for it resets the channel
 * (ECONNRESET): a trial that died mid-batch with an op unread, or whose group the controller
 * ended (what it had forked held the channel). Its own writes are still read first (a Unix
 * socket reports the reset only once the queue is empty), so it is an end of stream like any
 * other; as an error it replaced the trial's real end ("killed by signal 6") with "read failed". */
static ssize_t read_chan(int fd, void *buf, size_t len)
{
    ssize_t n;
    do {
        n = read(fd, buf, len);
    } while (n < 0 && errno == EINTR);
    return n < 0 && errno == ECONNRESET ? 0 : n;
}

static int drain(t2__chan_reader *r, int fd, int may_read, int *got)
{
    if (!may_read) return T2_OK;
    char sink[4096];
    ssize_t n = read_chan(fd, sink, sizeof sink);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return T2_OK;
    if (n < 0) return t2_seterr(T2_EIO, "channel: read failed: %s", strerror(errno));
    if (n == 0) r->eof = 1;
    *got = n == 0;
    return T2_OK;
}

int t2__chan_reader_each(t2__chan_reader *r, int fd, int may_read, t2__chan_frame_fn fn, void *ud, int *got)
{
    *got = 0;
    if (r->broken) return drain(r, fd, may_read, got);
    uint32_t body = 0;
    size_t whole = complete(r, &body);
    size_t have = r->len - r->off;
    if (have >= 4 && body > T2__CHANNEL_MAX_FRAME) return too_large(r, body);
    if (!whole && !r->eof && may_read) {
        /* The rest of the frame at the front (when its header says how much), or a chunk. */
        size_t need = have >= 4 ? 4 + (size_t)body - have : READ_CHUNK / 2;
        int rc = make_room(r, need > READ_CHUNK / 2 ? need : READ_CHUNK / 2);
        if (rc) return rc;
        ssize_t n = read_chan(fd, r->buf + r->len, r->cap - r->len);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return T2_OK;
        if (n < 0) return t2_seterr(T2_EIO, "channel: read failed: %s", strerror(errno));
        if (n == 0) r->eof = 1;
        r->len += (size_t)n;
        have = r->len - r->off;
        whole = complete(r, &body);
        if (have >= 4 && body > T2__CHANNEL_MAX_FRAME) return too_large(r, body);
    }
    if (whole) {
        char *p = r->buf + r->off + 4;
        char keep = p[body]; /* the next frame's first byte (or the spare byte past the data) */
        p[body] = '\0';
        int rc = fn(p, body, ud);
        p[body] = keep;
        r->off += whole;
        if (r->off == r->len) r->off = r->len = 0;
        *got = 1;
        return rc;
    }
    if (r->eof) {
        *got = 1; /* the end of the stream: clean between frames, an error inside one */
        if (have == 0) return T2_OK;
        if (have < 4) return t2_seterr(T2_EIO, "channel: stream ended inside a frame header (%zu of 4 bytes)", have);
        return t2_seterr(T2_EIO, "channel: stream ended inside a frame (%zu of %zu bytes)", have - 4, (size_t)body);
    }
    return T2_OK;
}
