/* channel_auth.c — the challenge/response handshake of channel_auth.h, HMAC-SHA256 from OpenSSL. */
#define _POSIX_C_SOURCE 200809L /* unsetenv */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "channel.h"
#include "channel_auth.h"
#include "protocol/protocol.h"
#include "internal.h"
#include "t2exp/error.h"

#define NONCE_BYTES 32
#define HEX(n) (2 * (n) + 1)

static void to_hex(const unsigned char *b, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Exactly 2n hex digits into n bytes; -1 otherwise. */
static int from_hex(const char *s, unsigned char *out, size_t n)
{
    if (!s || strlen(s) != 2 * n) return -1;
    for (size_t i = 0; i < n; i++) {
        int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

int t2__auth_key_new(unsigned char key[T2__AUTH_KEY_BYTES], char hex[2 * T2__AUTH_KEY_BYTES + 1])
{
    int rc = t2__random_bytes(key, T2__AUTH_KEY_BYTES);
    if (!rc && hex) to_hex(key, T2__AUTH_KEY_BYTES, hex);
    return rc;
}

int t2__auth_key_from_env(unsigned char key[T2__AUTH_KEY_BYTES])
{
    const char *v = getenv(T2__AUTH_KEY_ENV);
    if (!v || !*v)
        return t2_seterr(T2_EINVAL, "no channel key: $%s is not set (run-trial is started by the t2exp controller)",
                         T2__AUTH_KEY_ENV);
    int bad = from_hex(v, key, T2__AUTH_KEY_BYTES);
    unsetenv(T2__AUTH_KEY_ENV);
    if (bad) return t2_seterr(T2_EINVAL, "$%s is not %d hex digits", T2__AUTH_KEY_ENV, 2 * T2__AUTH_KEY_BYTES);
    return T2_OK;
}

/* HMAC-SHA256(key, "t2exp-WHAT|trial|a|b") as hex. */
static int mac_hex(const unsigned char *key, const char *what, int64_t trial, const char *a, const char *b,
                   char out[HEX(32)])
{
    char msg[256];
    int n = t2__fmt_fit(msg, sizeof msg, "t2exp-%s|%" PRId64 "|%s|%s", what, trial, a, b);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (n < 0 || (size_t)n >= sizeof msg ||
        !HMAC(EVP_sha256(), key, T2__AUTH_KEY_BYTES, (const unsigned char *)msg, (size_t)n, mac, &len) || len != 32)
        return t2_seterr(T2_EIO, "channel: HMAC-SHA256 failed");
    to_hex(mac, 32, out);
    return T2_OK;
}

/* Constant time: how long a wrong MAC takes to be refused says nothing about its bytes. */
static int mac_equal(const char *want, const char *got)
{
    return got && strlen(got) == strlen(want) && CRYPTO_memcmp(want, got, strlen(want)) == 0;
}

/* One handshake message of the given kind, by the deadline (a small frame limit: a peer not yet
 * trusted gets no big allocation out of us). */
static int recv_msg(int fd, t2__msg_kind kind, double deadline, t2__msg *out)
{
    int rc = t2__msg_recv_by(fd, out, T2__AUTH_MAX_FRAME, deadline);
    if (rc) return rc;
    if (out->kind == T2__MSG_NONE) return t2_seterr(T2_EIO, "channel: the peer closed the connection during the handshake");
    if (out->kind != kind) {
        t2__msg_free(out);
        return t2_seterr(T2_EFORMAT, "channel: expected a %s message in the handshake", t2__msg_kind_name(kind));
    }
    return T2_OK;
}

int t2__auth_server_start(t2__auth_server *s, int fd)
{
    unsigned char nonce[NONCE_BYTES];
    memset(s, 0, sizeof *s);
    int rc = t2__random_bytes(nonce, sizeof nonce);
    if (rc) return rc;
    to_hex(nonce, sizeof nonce, s->nc);
    /* A fresh connection's send buffer holds these hundred bytes: on a non-blocking fd a short
     * write means a broken connection, and write_all reports it as one. */
    t2__msg ch = {.kind = T2__MSG_CHALLENGE, .u.challenge.nonce = s->nc};
    return t2__msg_send(fd, &ch);
}

/* Checks the complete hello frame in s->buf and keeps what finish needs. */
static int take_hello(t2__auth_server *s, size_t len)
{
    t2__val *v = NULL;
    size_t off;
    s->buf[4 + len] = '\0';
    int rc = t2__val_from_json((const char *)s->buf + 4, len, &v, &off);
    if (rc) return rc;
    t2__msg m;
    if ((rc = t2__msg_decode(v, &m))) return rc; /* v is its own either way */
    if (m.kind != T2__MSG_HELLO) {
        rc = t2_seterr(T2_EFORMAT, "channel: expected a hello message in the handshake");
    } else if (!m.u.hello.nonce || strlen(m.u.hello.nonce) != 2 * NONCE_BYTES ||
               from_hex(m.u.hello.nonce, (unsigned char[NONCE_BYTES]){0}, NONCE_BYTES)) {
        rc = t2_seterr(T2_EFORMAT, "channel: the caller's nonce is not %d hex digits", 2 * NONCE_BYTES);
    } else if (!m.u.hello.mac || strlen(m.u.hello.mac) >= sizeof s->mac) {
        rc = t2_seterr(T2_EFORMAT, "channel: the caller's mac is not %zu hex digits", sizeof s->mac - 1);
    } else {
        s->trial_id = m.u.hello.trial_id;
        memcpy(s->nr, m.u.hello.nonce, sizeof s->nr);
        snprintf(s->mac, sizeof s->mac, "%s", m.u.hello.mac);
    }
    t2__msg_free(&m);
    return rc;
}

int t2__auth_server_read(t2__auth_server *s, int fd, int64_t *trial_id)
{
    for (;;) {
        size_t need = 4, len = 0;
        if (s->got >= 4) {
            len = t2__channel_frame_len(s->buf);
            /* Refused from the prefix: a 2 GB length costs nothing but these four bytes. */
            if (len > T2__AUTH_MAX_FRAME)
                return t2_seterr(T2_EFORMAT, "channel: a handshake frame of %zu bytes (the limit is %d)", len,
                                 T2__AUTH_MAX_FRAME);
            need = 4 + len;
            if (s->got == need) break;
        }
        ssize_t r = read(fd, s->buf + s->got, need - s->got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return T2__AUTH_AGAIN;
        if (r < 0) return t2_seterr(T2_EIO, "channel: read failed: %s", strerror(errno));
        if (r == 0) return t2_seterr(T2_EIO, "channel: the peer closed the connection during the handshake");
        s->got += (size_t)r;
    }
    int rc = take_hello(s, s->got - 4);
    if (!rc) *trial_id = s->trial_id;
    return rc;
}

int t2__auth_server_finish(const t2__auth_server *s, int fd, const unsigned char key[T2__AUTH_KEY_BYTES])
{
    char want[HEX(32)];
    int rc = mac_hex(key, "hello", s->trial_id, s->nc, s->nr, want);
    if (rc) return rc;
    if (!mac_equal(want, s->mac))
        return t2_seterr(T2_EFORMAT, "channel: the caller for trial %" PRId64 " does not hold this launch's key",
                         s->trial_id);
    if ((rc = mac_hex(key, "welcome", s->trial_id, s->nr, s->nc, want))) return rc;
    t2__msg w = {.kind = T2__MSG_WELCOME, .u.welcome.mac = want};
    return t2__msg_send(fd, &w);
}

/* The state machine above, waited on: the fd is non-blocking while it runs. */
int t2__auth_accept(int fd, const unsigned char key[T2__AUTH_KEY_BYTES], int64_t trial_id, int timeout_ms)
{
    double deadline = t2__now() + timeout_ms / 1000.0;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return t2_seterr(T2_EIO, "channel: fcntl: %s", strerror(errno));
    t2__auth_server *s = malloc(sizeof *s);
    int rc = s ? t2__auth_server_start(s, fd) : t2_seterr(T2_ENOMEM, "channel: out of memory");
    int64_t got = 0;
    while (!rc && (rc = t2__auth_server_read(s, fd, &got)) == T2__AUTH_AGAIN) {
        rc = T2_OK;
        double left = deadline - t2__now();
        if (left <= 0) {
            rc = t2_seterr(T2_EIO, "channel: the peer sent nothing in time");
            break;
        }
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
            rc = t2_seterr(T2_EIO, "channel: poll failed: %s", strerror(errno));
    }
    if (!rc && got != trial_id)
        rc = t2_seterr(T2_EFORMAT, "channel: a caller for another trial (this launch is trial %" PRId64 ")", trial_id);
    if (!rc) rc = t2__auth_server_finish(s, fd, key);
    free(s);
    if (fcntl(fd, F_SETFL, flags) < 0 && !rc) rc = t2_seterr(T2_EIO, "channel: fcntl: %s", strerror(errno));
    return rc;
}

int t2__auth_connect(int fd, const unsigned char key[T2__AUTH_KEY_BYTES], int64_t trial_id, int timeout_ms)
{
    double deadline = t2__now() + timeout_ms / 1000.0;
    unsigned char nonce[NONCE_BYTES], peer[NONCE_BYTES];
    char nr[HEX(NONCE_BYTES)], nc[HEX(NONCE_BYTES)] = "", mac[HEX(32)];
    t2__msg msg;
    memset(&msg, 0, sizeof msg);
    int rc = recv_msg(fd, T2__MSG_CHALLENGE, deadline, &msg);
    if (!rc && from_hex(msg.u.challenge.nonce, peer, sizeof peer))
        rc = t2_seterr(T2_EFORMAT, "channel: the controller's nonce is not %d hex digits", 2 * NONCE_BYTES);
    if (!rc) snprintf(nc, sizeof nc, "%s", msg.u.challenge.nonce);
    t2__msg_free(&msg);
    if (!rc) rc = t2__random_bytes(nonce, sizeof nonce);
    if (!rc) {
        to_hex(nonce, sizeof nonce, nr);
        rc = mac_hex(key, "hello", trial_id, nc, nr, mac);
    }
    char want[HEX(32)];
    if (!rc) rc = mac_hex(key, "welcome", trial_id, nr, nc, want);
    if (rc) return rc;
    t2__msg hello = {.kind = T2__MSG_HELLO, .u.hello = {.trial_id = trial_id, .nonce = nr, .mac = mac}};
    if (!rc) rc = t2__msg_send(fd, &hello);
    memset(&msg, 0, sizeof msg);
    if (!rc) rc = recv_msg(fd, T2__MSG_WELCOME, deadline, &msg);
    if (!rc && !mac_equal(want, msg.u.welcome.mac))
        rc = t2_seterr(T2_EFORMAT, "channel: the controller for trial %" PRId64 " does not hold this launch's key",
                       trial_id);
    t2__msg_free(&msg); /* recv_msg leaves it empty when it fails */
    return rc;
}
