#!/usr/bin/env bash
# The hostfile's names are looked up before anything is recorded (host_alias.c: two names of one
# machine are refused). With a resolver that never answers, the lookups ran one after another, 10 s
# a name, and Ctrl-C meanwhile only set a flag: create then recorded the experiment and made it
# PAUSED (review R7). Now they run side by side, at most 12 s in all (a name unresolved by then is
# left out, as one that does not resolve), and Ctrl-C ends create at once with nothing recorded.
# The resolver is a UDP and TCP port 53 that reads and never answers, in a network namespace of its
# own (`ip netns exec` gives the namespace its own resolv.conf). Needs root and iproute2.
source "$(dirname "$0")/common.bash"
have_mpi || { echo "host_lookup_stop: skipped (built without MPI)"; exit 77; }
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
  echo "host_lookup_stop: skipped (needs root and iproute2)"; exit 77
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's own allocations are not ours to check
ns="t2dns-$$"
cleanup() { [ -n "${sink:-}" ] && kill "$sink" 2>/dev/null; ip netns del "$ns" 2>/dev/null; rm -rf "/etc/netns/$ns" "$WORK"; }
trap cleanup EXIT
ip netns add "$ns" || { echo "host_lookup_stop: skipped (ip netns add failed)"; exit 77; }
ip -n "$ns" link set lo up
mkdir -p "/etc/netns/$ns"
printf 'nameserver 127.0.0.1\noptions timeout:5 attempts:2\n' > "/etc/netns/$ns/resolv.conf"
ip netns exec "$ns" python3 -c '
import socket, time
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 53))
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); t.bind(("127.0.0.1", 53)); t.listen(64)
print("ready", flush=True)
while True:
    u.recv(4096)
    print("query", flush=True)
' > "$WORK/sink.out" 2>&1 &
sink=$!
for _ in $(seq 50); do grep -q ready "$WORK/sink.out" && break; sleep 0.1; done
grep -q ready "$WORK/sink.out" || fail "the silent resolver did not start: $(cat "$WORK/sink.out")"
printf 'localhost slots=2\nsilent-a.t2exp-test slots=1\nsilent-b.t2exp-test slots=1\nsilent-c.t2exp-test slots=1\n' > "$WORK/hosts"
cat > "$WORK/c.yaml" <<Y
name: lookup_stop
hyperparameters: {global_batch_size: 2, x: 0.5, y: -2, sleep_ms: 20}
searcher: {name: single, metric: loss, max_length: {batches: 20}}
resources: {hostfile: $WORK/hosts}
max_restarts: 0
Y
# Ctrl-C during the lookups: create ends at once and records nothing.
ip netns exec "$ns" "$T2EXP" create "$WORK/c.yaml" "$TRIALS/quadratic.so" --plain > "$WORK/stop.out" 2>&1 &
ctl=$! # (ip netns exec runs it in its own process)
# Ctrl-C once the lookups are under way (the resolver got a query): before create installs its
# handler a background job ignores SIGINT.
for _ in $(seq 100); do grep -q query "$WORK/sink.out" && break; sleep 0.1; done
grep -q query "$WORK/sink.out" || fail "no lookup reached the silent resolver: $(cat "$WORK/stop.out")"
sleep 0.3
kill -INT $ctl
start=$(date +%s%N)
rc=0; wait $ctl || rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "host_lookup_stop: create ended ${ms} ms after Ctrl-C (exit $rc): $(tail -1 "$WORK/stop.out")"
[ "$rc" = 130 ] || fail "create went on after Ctrl-C (exit $rc): $(cat "$WORK/stop.out")"
[ "$ms" -lt 2000 ] || fail "create took ${ms} ms to end after Ctrl-C"
expect_in "$(cat "$WORK/stop.out")" "stopped while looking up the hostfile's hosts: nothing was recorded"
[ ! -e "$T2EXP_HOME/t2exp.db" ] || [ "$(sql "SELECT count(*) FROM experiments")" = 0 ] ||
  fail "an experiment was recorded: $(sql "SELECT id, state FROM experiments")"

# Left alone: the three silent names take 12 s together (30 s one after another), then the trial
# runs on localhost, the controller says why it listens on loopback alone, and the experiment
# completes.
start=$(date +%s)
expect_exit 0 timeout 120 ip netns exec "$ns" "$T2EXP" create "$WORK/c.yaml" "$TRIALS/quadratic.so" --plain
took=$(( $(date +%s) - start ))
echo "host_lookup_stop: create with three silent names took ${took} s"
expect_in "$OUT" "1 trial(s) completed, 0 errored"
expect_in "$OUT" "warning: silent-a.t2exp-test, silent-b.t2exp-test, silent-c.t2exp-test did not resolve when the pool was loaded"
[ "$took" -lt 25 ] || fail "create took ${took} s: the lookups did not run side by side"
echo "host_lookup_stop: ok"
