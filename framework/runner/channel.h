/* channel.h — framed JSON messages between the controller and a trial runner (internal).
 *
 * A frame is a 4-byte little-endian length followed by that many bytes of JSON (one t2__val map
 * with a "type" key). What the messages are: protocol/protocol.h, which alone builds and reads them. Frames over a socketpair (local trials) or a TCP socket (MPI rank 0). */
#ifndef T2_RUNNER_CHANNEL_H
#define T2_RUNNER_CHANNEL_H

#include <stdint.h>
#include "configs/value.h"

#define T2__CHANNEL_MAX_FRAME (16u << 20)

/* The body length a frame's 4-byte header says (little-endian). */
static inline uint32_t t2__channel_frame_len(const unsigned char h[4])
{
    return (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
}

/* The 4-byte header of a frame of len bytes. */
static inline void t2__channel_frame_header(unsigned char h[4], size_t len)
{
    h[0] = (unsigned char)(len & 0xff);
    h[1] = (unsigned char)(len >> 8 & 0xff);
    h[2] = (unsigned char)(len >> 16 & 0xff);
    h[3] = (unsigned char)(len >> 24 & 0xff);
}

/* v as a frame's body: its JSON (malloc'd) and length. T2_EINVAL over T2__CHANNEL_MAX_FRAME, else
 * as t2__val_to_json. */
int t2__channel_frame_body(const t2__val *v, char **json, size_t *len);

/* Writes one message. T2_EIO (peer gone, with errno's text), T2_ENOMEM, T2_ENUMERIC (NaN in v). */
int t2__channel_send(int fd, const t2__val *v);

/* Reads one message into *out. Returns T2_OK with *out = NULL on a clean end of stream (peer
 * closed between frames); T2_EIO for a read error or a stream cut inside a frame; T2_EFORMAT for
 * an oversized frame or bad JSON. */
int t2__channel_recv(int fd, t2__val **out);

/* As t2__channel_recv, for a peer not yet trusted: a frame over max_frame bytes is T2_EFORMAT
 * before anything is allocated, and T2_EIO when the whole frame has not arrived by deadline
 * (t2__now() seconds). */
int t2__channel_recv_by(int fd, t2__val **out, size_t max_frame, double deadline);

/* A buffered reader of one channel (channel_reader.c): zero-initialised, reset when its channel
 * is closed or handed to another trial, freed with t2__chan_reader_free. */
typedef struct t2__chan_reader {
    char *buf;
    size_t off, len, cap; /* the unread data is buf[off, len) */
    int eof;              /* the peer closed its end: what is buffered is all there is */
    int broken;           /* a frame over the limit came: the rest is dropped until the end */
} t2__chan_reader;

/* The next complete frame, its body to fn (text NUL-terminated for the length of the call, len its
 * bytes; the frame is consumed) and fn's result returned: the caller decodes it (msg_decode.c,
 * some frames without a tree). With may_read (fd is readable: poll said so), one read() takes what
 * fd has first if no complete frame is buffered; without, only buffered frames come out. *got = 1
 * for a frame or a clean end of stream (fn not called); *got = 0: no complete frame yet (wait for fd
 * to be readable). Errors as t2__channel_recv, *got then 1, fn not called: the stream ended inside
 * a frame (T2_EIO), a frame over the limit (T2_EFORMAT). */
typedef int (*t2__chan_frame_fn)(char *text, size_t len, void *ud);
int t2__chan_reader_each(t2__chan_reader *r, int fd, int may_read, t2__chan_frame_fn fn, void *ud, int *got);
/* 1 if t2__chan_reader_each would give something without reading. */
int t2__chan_reader_has_frame(const t2__chan_reader *r);
void t2__chan_reader_reset(t2__chan_reader *r);
void t2__chan_reader_free(t2__chan_reader *r);

/* Frames held for one channel until flushed (channel_writer.c): zero-initialised, reset when its
 * channel is closed, freed with t2__chan_writer_free. */
typedef struct t2__chan_writer {
    char *buf;
    size_t len, cap;
    double since; /* t2__now() when the oldest frame held was put */
} t2__chan_writer;

/* Appends v as one frame. T2_ENOMEM, or T2_EINVAL for a message over the frame limit. */
int t2__chan_writer_put(t2__chan_writer *w, const t2__val *v);
/* Writes every held frame to fd (blocking until all is written) and empties the writer, also
 * when a write fails (T2_EIO: the peer is gone; its end of stream tells the rest). */
int t2__chan_writer_flush(t2__chan_writer *w, int fd);
void t2__chan_writer_reset(t2__chan_writer *w);
void t2__chan_writer_free(t2__chan_writer *w);

#endif
