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
 * new). Every handshake read has a deadline and a small frame limit, so a caller that says
 * nothing, or garbage, costs the controller at most the deadline and is then dropped.
 *
 * What this does not give: secrecy or integrity of the later frames (no TLS). Against a peer that
 * can rewrite packets on the path, run the cluster's traffic on a trusted network. */
#ifndef T2_RUNNER_CHANNEL_AUTH_H
#define T2_RUNNER_CHANNEL_AUTH_H

#include <stdint.h>

#define T2__AUTH_KEY_BYTES 32
#define T2__AUTH_KEY_ENV "T2EXP_CHANNEL_KEY"

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

/* Rank 0's side on a connected fd: answer the challenge for trial_id, then check the welcome.
 * At most timeout_ms in all. T2_OK when the controller proved the key; errors as above. */
int t2__auth_connect(int fd, const unsigned char key[T2__AUTH_KEY_BYTES], int64_t trial_id, int timeout_ms);

#endif
