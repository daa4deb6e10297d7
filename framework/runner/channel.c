/* channel.c — length-prefixed JSON frames over a stream socket. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "channel.h"
#include "internal.h"
#include "t2exp/error.h"

/* The header and the body in one system call: two writes were two wake-ups of the reader, and a
 * short trial exchanges eight messages. */
static int write_frame(int fd, const unsigned char hdr[4], const char *body, size_t len)
{
    struct iovec iov[2] = {{(void *)hdr, 4}, {(void *)body, len}};
    int i = 0;
    while (i < 2) {
        ssize_t w = writev(fd, iov + i, 2 - i);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return t2_seterr(T2_EIO, "channel: write failed: %s", strerror(errno));
        size_t n = (size_t)w; /* what was written: skip the whole buffers, then part of the next */
        while (i < 2 && n >= iov[i].iov_len) n -= iov[i++].iov_len;
        if (i < 2) {
            iov[i].iov_base = (char *)iov[i].iov_base + n;
            iov[i].iov_len -= n;
        }
    }
    return T2_OK;
}

/* Waits until fd is readable or the deadline (t2__now() seconds; < 0: none) passes. */
static int wait_readable(int fd, double deadline)
{
    if (deadline < 0) return T2_OK;
    for (;;) {
        double left = deadline - t2__now();
        if (left <= 0) return t2_seterr(T2_EIO, "channel: the peer sent nothing in time");
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int r = poll(&pf, 1, (int)(left * 1000) + 1);
        if (r > 0) return T2_OK;
        if (r < 0 && errno != EINTR) return t2_seterr(T2_EIO, "channel: poll failed: %s", strerror(errno));
    }
}

/* Reads exactly len bytes by the deadline; *eof is set if the stream ended before the first byte. */
static int read_all(int fd, void *buf, size_t len, int *eof, double deadline)
{
    char *p = buf;
    size_t got = 0;
    *eof = 0;
    while (got < len) {
        int rc = wait_readable(fd, deadline);
        if (rc) return rc;
        ssize_t r = read(fd, p + got, len - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return t2_seterr(T2_EIO, "channel: read failed: %s", strerror(errno));
        if (r == 0) {
            if (got == 0) {
                *eof = 1;
                return T2_OK;
            }
            return t2_seterr(T2_EIO, "channel: stream ended inside a frame (%zu of %zu bytes)", got, len);
        }
        got += (size_t)r;
    }
    return T2_OK;
}

int t2__channel_frame_body(const t2__val *v, char **json, size_t *len)
{
    int rc = t2__val_to_json(v, json, len);
    if (rc) return rc;
    if (*len > T2__CHANNEL_MAX_FRAME) {
        free(*json);
        *json = NULL;
        return t2_seterr(T2_EINVAL, "channel: message of %zu bytes exceeds the frame limit", *len);
    }
    return T2_OK;
}

int t2__channel_send(int fd, const t2__val *v)
{
    char *json = NULL;
    size_t len = 0;
    int rc = t2__channel_frame_body(v, &json, &len);
    if (rc) return rc;
    unsigned char hdr[4];
    t2__channel_frame_header(hdr, len);
    rc = write_frame(fd, hdr, json, len);
    free(json);
    return rc;
}

static int recv_frame(int fd, t2__val **out, size_t max_frame, double deadline)
{
    unsigned char hdr[4];
    int eof, rc;
    *out = NULL;
    if ((rc = read_all(fd, hdr, 4, &eof, deadline))) return rc;
    if (eof) return T2_OK;
    uint32_t len = t2__channel_frame_len(hdr);
    if (len > max_frame) return t2_seterr(T2_EFORMAT, "channel: frame of %u bytes is too large", len);
    char *buf = malloc(len + 1);
    if (!buf) return t2_seterr(T2_ENOMEM, "channel: out of memory");
    if ((rc = read_all(fd, buf, len, &eof, deadline)) == T2_OK && eof && len > 0)
        rc = t2_seterr(T2_EIO, "channel: stream ended after a frame header");
    if (rc == T2_OK) {
        buf[len] = '\0';
        size_t off;
        rc = t2__val_from_json(buf, len, out, &off);
    }
    free(buf);
    return rc;
}

int t2__channel_recv(int fd, t2__val **out) { return recv_frame(fd, out, T2__CHANNEL_MAX_FRAME, -1); }

int t2__channel_recv_by(int fd, t2__val **out, size_t max_frame, double deadline)
{
    return recv_frame(fd, out, max_frame < T2__CHANNEL_MAX_FRAME ? max_frame : T2__CHANNEL_MAX_FRAME, deadline);
}
