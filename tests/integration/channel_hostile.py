"""channel_hostile.py HOST:PORT TRIAL_ID PROTOCOL_VERSION -- hostile callers on a controller's
distributed-trial port (tests/integration/channel_hostile.sh runs it while trials run).

All at once: (e) a caller that says nothing and stays open, a probe that only waits for the
challenge, (a) a hello with a bogus MAC, (b) a hello MACed with a wrong key, (c) a hello whose frame
never ends (held open), (d) a 2 GB length prefix. Asserts:
  - every hostile caller is closed by the controller (EOF or reset) within LIMIT seconds;
  - the probe gets its challenge while (e) is still open: the controller did not sit on the
    silent caller before turning to the next one (the blocking handshake of old did, 5 s each).
Prints one line per caller; exits 1 with the reason on a failed assertion."""
import hashlib
import hmac
import json
import os
import select
import socket
import struct
import sys
import time

LIMIT = 30.0  # far above the controller's 5 s handshake deadline: only "closed at all" is asserted


def frame(obj):
    body = json.dumps(obj).encode()
    return struct.pack("<I", len(body)) + body


def read_frame(s, deadline):
    """One frame (a dict), or None on EOF/reset; raises TimeoutError past the deadline."""
    buf = b""
    need = 4
    while len(buf) < need:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        r, _, _ = select.select([s], [], [], left)
        if not r:
            continue
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return None
        if not chunk:
            return None
        buf += chunk
        if need == 4 and len(buf) >= 4:
            need = 4 + struct.unpack("<I", buf[:4])[0]
    return json.loads(buf[4:need])


def closed_by_peer(s, deadline):
    """True once the controller closes s (EOF or reset) before the deadline; data is discarded."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([s], [], [], left)
        if not r:
            continue
        try:
            if not s.recv(65536):
                return True
        except (ConnectionResetError, BrokenPipeError):
            return True


def hello(trial, nonce_c, key, version):
    nr = os.urandom(32).hex()
    msg = "t2exp-hello|%d|%s|%s" % (trial, nonce_c, nr)
    mac = hmac.new(key, msg.encode(), hashlib.sha256).hexdigest() if key else "00" * 32
    return {"type": "hello", "trial_id": trial, "nonce": nr, "mac": mac, "version": version}


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    trial, version = int(sys.argv[2]), int(sys.argv[3])
    addr = (host, int(port))
    t0 = time.monotonic()
    deadline = t0 + LIMIT
    silent = socket.create_connection(addr)          # (e)
    probe = socket.create_connection(addr)
    callers = {name: socket.create_connection(addr) for name in ("bogus_mac", "wrong_key", "endless", "huge")}

    # The silent caller's challenge, then the probe's, while the silent caller is still open.
    for name, s in (("silent", silent), ("probe", probe)):
        ch = read_frame(s, deadline)
        if not ch or ch.get("type") != "challenge":
            sys.exit("FAIL: the %s caller got no challenge: %r" % (name, ch))
    r, _, _ = select.select([silent], [], [], 0)
    if r:  # nothing but its end can be there: the challenge was read
        sys.exit("FAIL: the silent caller was closed before the probe got its challenge "
                 "(the controller sat on it)")
    print("probe: challenge after %.2f s, the silent caller still open" % (time.monotonic() - t0))
    probe.close()

    for name, s in callers.items():
        ch = read_frame(s, deadline)
        if not ch or ch.get("type") != "challenge":
            sys.exit("FAIL: %s: no challenge: %r" % (name, ch))
        if name == "bogus_mac":
            s.sendall(frame(hello(trial, ch["nonce"], None, version)))
        elif name == "wrong_key":
            s.sendall(frame(hello(trial, ch["nonce"], os.urandom(32), version)))
        elif name == "endless":  # a length that promises more than is ever sent
            s.sendall(struct.pack("<I", 900) + b'{"type":"hello","trial_id":')
        elif name == "huge":
            s.sendall(struct.pack("<I", 2 << 30) + b"{" * 64)
    for name, s in list(callers.items()) + [("silent", silent)]:
        if not closed_by_peer(s, deadline):
            sys.exit("FAIL: %s: still open after %.0f s" % (name, LIMIT))
        print("%s: closed by the controller after %.2f s" % (name, time.monotonic() - t0))
        s.close()


if __name__ == "__main__":
    main()
