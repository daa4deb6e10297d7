/* fuzz_protocol.c — libFuzzer harness for the channel's frames and every protocol message
 * (framework/runner/channel.c, framework/protocol/). The input is a byte stream as a peer would
 * send it: it is written to a socketpair and read back frame by frame through t2__msg_recv (frame
 * header, JSON, typed decode), and, the second time, through t2__msg_recv_by with the handshake's
 * small frame limit. Every message that decodes must encode, and the encoding must decode to the
 * same message that encodes to the same bytes (a round trip): a difference aborts, so libFuzzer
 * reports it like a crash. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "configs/value.h"
#include "internal.h"
#include "protocol/protocol.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    read_stream(data, size, 0);
    read_stream(data, size, 1);
    return 0;
}
