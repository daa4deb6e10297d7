/* fuzz_protocol.c — libFuzzer harness for the channel's frames and every protocol message
 * (framework/runner/channel.c, framework/protocol/). The input is a byte stream as a peer would
 * send it: it is written to a socketpair and read back frame by frame through t2__msg_recv (frame
 * header, JSON, typed decode), and, the second time, through t2__msg_recv_by with the handshake's
 * small frame limit, and the third time through the controller's resumable handshake
 * (t2__auth_server, framework/runner/channel_auth.c) in pieces of 7 bytes, as a stranger on the
 * call-back port would send it. Every message that decodes must encode, and the encoding must decode to the
 * same message that encodes to the same bytes (a round trip): a difference aborts, so libFuzzer
 * reports it like a crash. The input is also a frame's body to the tree-free decode of a runner's
 * per-trial messages (protocol/msg_fast.c): what it takes, the tree's decode must take too, giving
 * a message that encodes to the same bytes. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "configs/value.h"
#include "internal.h"
#include "protocol/protocol.h"
#include "runner/channel.h"
#include "runner/channel_auth.h"

static char *encoded(const t2__msg *m, size_t *len)
{
    t2__val *v = NULL;
    char *json = NULL;
    if (t2__msg_encode(m, &v) != 0) abort(); /* a decoded message always encodes */
    if (t2__val_to_json(v, &json, len) != 0) abort();
    t2__val_free(v);
    return json;
}

static void round_trip(const t2__msg *m)
{
    size_t na, nb, off;
    char *a = encoded(m, &na);
    t2__val *doc = NULL;
    t2__msg again;
    if (t2__val_from_json(a, na, &doc, &off) != 0) abort();
    if (t2__msg_decode(doc, &again) != 0 || again.kind != m->kind) abort();
    char *b = encoded(&again, &nb);
    if (na != nb || memcmp(a, b, na) != 0) abort();
    free(a);
    free(b);
    t2__msg_free(&again);
}

static void fast_agrees(const uint8_t *data, size_t size)
{
    t2__msg fast, tree;
    if (!t2__msg_decode_fast((const char *)data, size, &fast)) {
        if (fast.kind != T2__MSG_NONE || fast.doc) abort(); /* declined: nothing held */
        return;
    }
    t2__val *doc = NULL;
    size_t off, na, nb;
    if (t2__val_from_json((const char *)data, size, &doc, &off) != 0) abort();
    if (t2__msg_decode(doc, &tree) != 0 || tree.kind != fast.kind) abort();
    char *a = encoded(&fast, &na), *b = encoded(&tree, &nb);
    if (na != nb || memcmp(a, b, na) != 0) abort();
    free(a);
    free(b);
    t2__msg_free(&fast);
    t2__msg_free(&tree);
    t2_clearerr();
}

static void read_stream(const uint8_t *data, size_t size, int untrusted)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return;
    /* The whole input fits the socket buffer (-max_len keeps it at 64 KiB), so the write never
     * waits for the reader. */
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(sv[0], data + done, size - done);
        if (w <= 0) break;
        done += (size_t)w;
    }
    close(sv[0]);
    for (int k = 0; k < 1000; k++) {
        t2__msg m;
        int rc = untrusted ? t2__msg_recv_by(sv[1], &m, 1024, t2__now() + 1.0) : t2__msg_recv(sv[1], &m);
        if (rc || m.kind == T2__MSG_NONE) break;
        round_trip(&m);
        t2__msg_free(&m);
    }
    close(sv[1]);
    t2_clearerr();
}

/* The bytes as a caller's side of the handshake, fed in pieces with a read after each (every
 * point where the state machine resumes), then the end of stream: it must end in a verdict, never
 * "again" once the peer is gone. A complete hello is checked against an all-zero key. */
static void handshake(const uint8_t *data, size_t size)
{
    static const unsigned char key[T2__AUTH_KEY_BYTES];
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0) return;
    t2__auth_server s;
    int64_t trial = 0;
    int rc = t2__auth_server_start(&s, sv[1]);
    if (rc == T2_OK) rc = T2__AUTH_AGAIN;
    for (size_t done = 0; rc == T2__AUTH_AGAIN && done < size;) {
        size_t n = size - done < 7 ? size - done : 7;
        ssize_t w = write(sv[0], data + done, n);
        if (w <= 0) break;
        done += (size_t)w;
        rc = t2__auth_server_read(&s, sv[1], &trial);
    }
    close(sv[0]);
    if (rc == T2__AUTH_AGAIN && t2__auth_server_read(&s, sv[1], &trial) == T2__AUTH_AGAIN) abort();
    if (rc == T2_OK) (void)t2__auth_server_finish(&s, sv[1], key); /* the peer is gone: EPIPE */
    close(sv[1]);
    t2_clearerr();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    signal(SIGPIPE, SIG_IGN); /* the handshake's welcome goes to a closed peer */
    fast_agrees(data, size);
    for (size_t at = 0; size - at >= 4;) { /* and each frame's body of the stream */
        uint32_t body = t2__channel_frame_len(data + at);
        if (body > size - at - 4) break;
        fast_agrees(data + at + 4, body);
        at += 4 + (size_t)body;
    }
    read_stream(data, size, 0);
    read_stream(data, size, 1);
    handshake(data, size);
    return 0;
}
