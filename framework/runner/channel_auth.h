/* channel_auth.h — mutual authentication of a distributed trial's TCP channel (internal).
 *
 * A distributed trial's rank 0 calls the controller back over TCP, on a port that anyone who can
 * reach the host may connect to. Each launch therefore gets its own 256-bit key: the controller
 * draws it, hands it to that launch's mpirun in the environment (T2EXP_CHANNEL_KEY, forwarded to
 * the ranks with -x; an environment is readable only by its owner, a command line by everybody),
 * and both ends prove that they hold it before anything else crosses:
 *
 *   controller -> rank 0   {"type":"challenge","nonce":NC}
 *   rank 0 -> controller   {"type":"hello","trial_id":T,"nonce":NR,"mac":HMAC(K,"t2exp-hello|T|NC|NR")}
 *   controller -> rank 0   {"type":"welcome","mac":HMAC(K,"t2exp-welcome|T|NR|NC")}
 *
 * NC and NR are fresh 256-bit random nonces (hex), the MACs HMAC-SHA256 (hex), compared in
 * constant time. The controller so learns that the caller was started by this launch for trial T
 * (no replay: NC is new), and rank 0 that the controller is the one that launched it before it
 * loads the trial object or touches the checkpoint directory the spec names (no replay: NR is
 * new). Every handshake read has a deadline and a small frame limit (T2__AUTH_MAX_FRAME), so a
 * caller that says nothing, or garbage, is dropped by the deadline; the controller's side is also
 * a resumable state machine (t2__auth_server) that its event loop drives with non-blocking reads,
 * so such a caller never stalls the controller while it waits.
 *
 * What this does not give: secrecy or integrity of the later frames (no TLS). Against a peer that
 * can rewrite packets on the path, run the cluster's traffic on a trusted network. */
#ifndef T2_RUNNER_CHANNEL_AUTH_H
#define T2_RUNNER_CHANNEL_AUTH_H

#include <stdint.h>

#define T2__AUTH_KEY_BYTES 32
#define T2__AUTH_KEY_ENV "T2EXP_CHANNEL_KEY"
/* A handshake message is a few hundred bytes; a frame longer than this is not one. */
#define T2__AUTH_MAX_FRAME 1024
/* t2__auth_server_read: the hello is not complete yet (wait for fd to be readable again). */
#define T2__AUTH_AGAIN 1

/* A new random key, also written as 64 lowercase hex digits and a NUL into hex (may be NULL).
 * T2_EIO if the system's random source fails. */
int t2__auth_key_new(unsigned char key[T2__AUTH_KEY_BYTES], char hex[2 * T2__AUTH_KEY_BYTES + 1]);

/* Reads the key from $T2EXP_CHANNEL_KEY (64 hex digits) and removes it from the environment, so
 * that processes the trial starts do not inherit it. T2_EINVAL if it is missing or malformed. */
int t2__auth_key_from_env(unsigned char key[T2__AUTH_KEY_BYTES]);

/* The controller's side on a freshly accepted connection fd: challenge, check the hello (its MAC
 * and that it is for trial_id), answer with the welcome. At most timeout_ms in all. T2_OK when
 * the caller proved the key; T2_EPERM (wrong key, wrong trial, malformed hello) or T2_EIO
 * (silence past the deadline, a closed or broken connection) otherwise, with the reason set. */
int t2__auth_accept(int fd, const unsigned char key[T2__AUTH_KEY_BYTES], int64_t trial_id, int timeout_ms);

/* The controller's side as a resumable state machine, one per accepted connection: start writes
 * the challenge; read takes what the (non-blocking) fd has of the hello and returns T2__AUTH_AGAIN
 * until the frame is complete; the complete hello names its trial (*trial_id), which picks the
 * launch and so the key; finish checks the MAC in constant time and writes the welcome. Nothing
 * here waits: a peer's silence is the caller's deadline to enforce. Errors as t2__auth_accept;
 * a frame over T2__AUTH_MAX_FRAME is refused from its length prefix, before it is read. */
typedef struct t2__auth_server {
    char nc[2 * 32 + 1];                        /* the challenge's nonce, hex */
    char nr[2 * 32 + 1];                        /* the hello's nonce, hex */
    char mac[2 * 32 + 1];                       /* the hello's MAC, hex */
    int64_t trial_id;                           /* the trial the hello is for */
    unsigned char buf[4 + T2__AUTH_MAX_FRAME + 1]; /* the hello's frame so far (and a NUL) */
    size_t got;                                 /* bytes of buf read */
} t2__auth_server;
int t2__auth_server_start(t2__auth_server *s, int fd);
int t2__auth_server_read(t2__auth_server *s, int fd, int64_t *trial_id);
int t2__auth_server_finish(const t2__auth_server *s, int fd, const unsigned char key[T2__AUTH_KEY_BYTES]);

/* Rank 0's side on a connected fd: answer the challenge for trial_id, then check the welcome.
 * At most timeout_ms in all. T2_OK when the controller proved the key; errors as above. */
int t2__auth_connect(int fd, const unsigned char key[T2__AUTH_KEY_BYTES], int64_t trial_id, int timeout_ms);

#endif
