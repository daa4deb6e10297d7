/* channel.h — framed JSON messages between the controller and a trial runner (internal).
 *
 * A frame is a 4-byte little-endian length followed by that many bytes of JSON (one t2__val map
 * with a "type" key). What the messages are: protocol/protocol.h, which alone builds and reads them. Frames over a socketpair (local trials) or a TCP socket (MPI rank 0). */
#ifndef T2_RUNNER_CHANNEL_H
#define T2_RUNNER_CHANNEL_H

#include "configs/value.h"

#define T2__CHANNEL_MAX_FRAME (16u << 20)

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

#endif
