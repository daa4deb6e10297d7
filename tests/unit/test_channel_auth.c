/* test_channel_auth.c — the distributed channel's handshake (framework/runner/channel_auth.c):
 * both ends must prove this launch's key, for this trial, with fresh nonces; a stranger, a wrong
 * key, a replayed hello, silence and garbage are all refused, and the controller's side never
 * waits past its deadline. Each case runs the two ends in two processes over a socketpair; the
 * resumable server side (what the controller's loop drives) also runs in one process, byte by byte. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "runner/channel.h"
#include "runner/channel_auth.h"

typedef int (*side_fn)(int fd, const void *arg);

/* Runs peer(fd1) in a child and returns its exit status (0: its side succeeded); mine(fd0) runs
 * here and its status goes to *mine_rc. The child's end is closed here once it is forked. */
static int run_pair(side_fn mine, const void *mine_arg, side_fn peer, const void *peer_arg, int *mine_rc)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return -1;
    pid_t p = fork();
    if (p == 0) {
        close(sv[0]);
        int rc = peer(sv[1], peer_arg);
        close(sv[1]);
        _exit(rc ? 1 : 0);
    }
    close(sv[1]);
    *mine_rc = mine(sv[0], mine_arg);
    close(sv[0]);
    int status = 0;
    waitpid(p, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

typedef struct {
    const unsigned char *key;
    int64_t trial;
    int timeout_ms;
} side;

static int accept_side(int fd, const void *arg)
{
    const side *s = arg;
    return t2__auth_accept(fd, s->key, s->trial, s->timeout_ms);
}

static int connect_side(int fd, const void *arg)
{
    const side *s = arg;
    return t2__auth_connect(fd, s->key, s->trial, s->timeout_ms);
}

/* A peer that says nothing until the other end closes. */
static int silent_side(int fd, const void *arg)
{
    (void)arg;
    char b[64];
    while (read(fd, b, sizeof b) > 0) {}
    return 0;
}

/* A peer that writes the given bytes (len first as size_t), then waits for the close. */
static int raw_side(int fd, const void *arg)
{
    const unsigned char *p = arg;
    size_t len;
    memcpy(&len, p, sizeof len);
    if (write(fd, p + sizeof len, len) != (ssize_t)len) return 1;
    return silent_side(fd, NULL);
}

/* A fake controller that always sends the same challenge and keeps the hello it gets. */
static t2__val *recorded_hello;
static int fixed_challenge_side(int fd, const void *arg)
{
    (void)arg;
    t2__val *m = t2__val_map();
    char zeros[65];
    memset(zeros, '0', 64);
    zeros[64] = '\0';
    t2__val_map_set(m, "type", t2__val_string("challenge"));
    t2__val_map_set(m, "nonce", t2__val_string(zeros));
    int rc = t2__channel_send(fd, m);
    t2__val_free(m);
    if (!rc) rc = t2__channel_recv(fd, &recorded_hello);
    return rc;
}

/* A peer that answers any challenge with the recorded hello (a replay). */
static int replay_side(int fd, const void *arg)
{
    (void)arg;
    t2__val *challenge = NULL;
    int rc = t2__channel_recv(fd, &challenge);
    t2__val_free(challenge);
    if (!rc) rc = t2__channel_send(fd, recorded_hello);
    if (!rc) silent_side(fd, NULL);
    return rc;
}

/* The controller's resumable side (t2__auth_server), in this process over a non-blocking
 * socketpair: a hello that arrives one byte at a time is T2__AUTH_AGAIN until its last byte, never
 * a wait; then it names its trial, and only the right key passes. The hello is the one recorded
 * for the all-zero challenge, so the server's nonce is set to that. A 2 GB length prefix is
 * refused from the prefix alone. */
static void resumable_server(const t2__val *hello, const unsigned char *key, const unsigned char *other)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
    t2__auth_server *s = calloc(1, sizeof *s);
    CHECK(s != NULL);
    if (!s) return;
    CHECK_OK(t2__auth_server_start(s, sv[0]));
    memset(s->nc, '0', 64);
    char *json = NULL;
    size_t len = 0;
    CHECK_OK(t2__val_to_json(hello, &json, &len));
    unsigned char *frame = malloc(len + 4);
    CHECK(frame != NULL);
    if (!frame || !json) return;
    frame[0] = (unsigned char)(len & 0xff), frame[1] = (unsigned char)(len >> 8 & 0xff);
    frame[2] = (unsigned char)(len >> 16 & 0xff), frame[3] = (unsigned char)(len >> 24 & 0xff);
    memcpy(frame + 4, json, len);
    int64_t trial = -1;
    int again = 0;
    CHECK(t2__auth_server_read(s, sv[0], &trial) == T2__AUTH_AGAIN); /* nothing yet: no wait */
    for (size_t i = 0; i < len + 4; i++) {
        CHECK(write(sv[1], frame + i, 1) == 1);
        int rc = t2__auth_server_read(s, sv[0], &trial);
        if (i + 1 < len + 4) again += rc == T2__AUTH_AGAIN;
        else CHECK_OK(rc);
    }
    CHECK(again == (int)(len + 3));
    CHECK(trial == 7);
    CHECK_RC(t2__auth_server_finish(s, sv[0], other), T2_EFORMAT);
    CHECK_OK(t2__auth_server_finish(s, sv[0], key));
    free(frame);
    free(json);

    /* 2 GB announced: refused at once, nothing allocated or awaited. */
    CHECK_OK(t2__auth_server_start(s, sv[0]));
    unsigned char big[4] = {0, 0, 0, 0x80};
    CHECK(write(sv[1], big, 4) == 4);
    CHECK_RC(t2__auth_server_read(s, sv[0], &trial), T2_EFORMAT);
    CHECK(strstr(t2_errmsg(), "2147483648 bytes") != NULL);
    free(s);
    close(sv[0]);
    close(sv[1]);
}

int main(void)
{
    unsigned char key[T2__AUTH_KEY_BYTES], other[T2__AUTH_KEY_BYTES];
    char hex[2 * T2__AUTH_KEY_BYTES + 1];
    CHECK_OK(t2__auth_key_new(other, NULL));
    CHECK_OK(t2__auth_key_new(key, hex));
    CHECK(strlen(hex) == 64);
    CHECK(memcmp(key, other, sizeof key) != 0);

    /* The key travels in the environment and is removed from it once read. */
    unsigned char got[T2__AUTH_KEY_BYTES];
    unsetenv(T2__AUTH_KEY_ENV);
    CHECK_RC(t2__auth_key_from_env(got), T2_EINVAL);
    setenv(T2__AUTH_KEY_ENV, "abc", 1);
    CHECK_RC(t2__auth_key_from_env(got), T2_EINVAL);
    setenv(T2__AUTH_KEY_ENV, hex, 1);
    CHECK_OK(t2__auth_key_from_env(got));
    CHECK(memcmp(got, key, sizeof key) == 0);
    CHECK(getenv(T2__AUTH_KEY_ENV) == NULL);

    side ctl = {key, 7, 5000}, rank = {key, 7, 5000};
    int rc = 0;

    /* The same key and trial: both ends succeed. */
    CHECK(run_pair(accept_side, &ctl, connect_side, &rank, &rc) == 0);
    CHECK_OK(rc);

    /* A rank with another key: the controller refuses it, and the rank learns nothing. */
    side wrong_key = {other, 7, 5000};
    CHECK(run_pair(accept_side, &ctl, connect_side, &wrong_key, &rc) != 0);
    CHECK_RC(rc, T2_EFORMAT);
    CHECK(strstr(t2_errmsg(), "does not hold this launch's key") != NULL);

    /* A controller with another key: the rank refuses the welcome. */
    side wrong_ctl = {other, 7, 5000};
    CHECK(run_pair(connect_side, &rank, accept_side, &wrong_ctl, &rc) != 0);
    CHECK(rc != T2_OK);

    /* The right key for another trial (an earlier launch's rank) is refused. */
    side trial8 = {key, 8, 5000};
    CHECK(run_pair(accept_side, &ctl, connect_side, &trial8, &rc) != 0);
    CHECK_RC(rc, T2_EFORMAT);
    CHECK(strstr(t2_errmsg(), "another trial") != NULL);

    /* A hello recorded from one session is refused in the next (the challenge is fresh). */
    CHECK(run_pair(fixed_challenge_side, NULL, connect_side, &rank, &rc) != 0); /* no welcome came */
    CHECK(recorded_hello != NULL);
    if (recorded_hello) {
        CHECK(run_pair(accept_side, &ctl, replay_side, NULL, &rc) == 0);
        CHECK_RC(rc, T2_EFORMAT);
    }
    if (recorded_hello) resumable_server(recorded_hello, key, other);
    t2__val_free(recorded_hello);

    /* Silence costs the controller its deadline, no more. */
    side quick = {key, 7, 200};
    CHECK(run_pair(accept_side, &quick, silent_side, NULL, &rc) == 0);
    CHECK_RC(rc, T2_EIO);

    /* Garbage: a frame header announcing 100 MB is refused before anything is read or allocated;
     * a small frame that is not JSON, and JSON that is not a hello, are refused too. */
    struct {
        size_t len;
        unsigned char b[64];
    } huge = {4, {0x00, 0x00, 0x40, 0x06}}, junk = {9, {5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'}},
      other_type = {4 + 15, {15, 0, 0, 0, '{', '"', 't', 'y', 'p', 'e', '"', ':', '"', 'd', 'o', 'n', 'e', '"', '}'}};
    CHECK(run_pair(accept_side, &ctl, raw_side, &huge, &rc) == 0);
    CHECK_RC(rc, T2_EFORMAT);
    CHECK(run_pair(accept_side, &ctl, raw_side, &junk, &rc) == 0);
    CHECK(rc != T2_OK);
    CHECK(run_pair(accept_side, &ctl, raw_side, &other_type, &rc) == 0);
    CHECK_RC(rc, T2_EFORMAT);

    return check_report("test_channel_auth");
}
