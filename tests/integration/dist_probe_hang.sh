#!/usr/bin/env bash
# dist_probe_hang.sh — a pool host that hangs (issue 12: the controller never blocks; nothing of an
# experiment outlives it). The pool is this machine plus 192.0.2.7, reached through an Open MPI
# launcher agent that plays a broken host: the first connection fails at once (the trial's launch
# fails), every later one hangs the way ssh does on a host that accepts TCP and says nothing (the
# host probe that follows gets no answer; the agent is set in the config's environment_variables,
# which the probe must use as the trials' launches do). Checks that:
#  - while the probe waits its 15 s, the trial on this machine goes on being recorded (the probe
#    ran inside the loop and held every report, and Ctrl-C, for its whole time);
#  - while the first launch waits on the host, its trial is RUNNING there;
#  - the host leaves the pool with that reason, its trial restarts here (its hosts name both), the
#    experiment completes;
#  - no launcher process is left hanging afterwards (they outlived the probe's mpirun), and no
#    Open MPI session directory is left in TMPDIR.
source "$(dirname "$0")/common.bash"
have_mpi || { echo "dist_probe_hang: skipped (no MPI build or no mpirun)"; exit 77; }
command -v sqlite3 >/dev/null || { echo "dist_probe_hang: skipped (no sqlite3)"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's own allocations are not ours to check

hang=$((4000 + $$ % 1000)) # a sleep length of this run's own, to find its hanging launchers by
cat > "$WORK/agent" <<EOF
#!/bin/sh
# Called as ssh would be: AGENT HOST CMD...
if [ -e "$WORK/first-done" ]; then
  touch "$WORK/probe-started"
  exec sleep $hang
fi
touch "$WORK/first-done"
touch "$WORK/launch-started"
sleep 3 # (a slow host: the launch waits on it)
echo "ssh: connect to host \$1 port 22: Connection refused" >&2
exit 255
EOF
chmod +x "$WORK/agent"
printf 'localhost slots=1\n192.0.2.7 slots=1\n' > "$WORK/hosts"
cat > "$WORK/hang.yaml" <<Y
name: probe_hang
hyperparameters: {global_batch_size: 2, x: {type: categorical, vals: [0.5, 1.5]}, y: -2, sleep_ms: 100}
searcher: {name: grid, metric: loss, max_length: {batches: 150}}
scheduling_unit: 5
resources: {hostfile: $WORK/hosts, controller_address: 127.0.0.1}
# The launcher as the config sets it: the probe must go through it too (it went through ssh, and a
# healthy host reached only through the agent left the pool after any trial failure).
environment: {environment_variables: ["OMPI_MCA_plm_rsh_agent=$WORK/agent"]}
max_restarts: 1
Y
"$T2EXP" create "$WORK/hang.yaml" "$TRIALS/quadratic.so" --plain > "$WORK/out" 2>&1 &
ctl=$!
# While its launch waits on the host, the trial is RUNNING there (as a local trial is from its
# fork), not QUEUED with no hosts (probe_L finding 7).
for _ in $(seq 600); do [ -e "$WORK/launch-started" ] && break; sleep 0.1; done
# (Polled: the row reaches the store with the writer's next batch; the agent holds the launch 3 s.)
for _ in $(seq 25); do
  launching=$(sql "SELECT state || ' ' || hosts FROM trials WHERE hosts LIKE '192.0.2.7%'")
  [ "$launching" = "RUNNING 192.0.2.7:1" ] && break
  sleep 0.1
done
[ "$launching" = "RUNNING 192.0.2.7:1" ] ||
  { kill $ctl; cat "$WORK/out"; fail "a trial launching on 192.0.2.7 should be RUNNING there: '$launching' ($(sql "SELECT state, hosts FROM trials"))"; }
for _ in $(seq 600); do [ -e "$WORK/probe-started" ] && break; sleep 0.1; done
[ -e "$WORK/probe-started" ] || { kill $ctl; cat "$WORK/out"; fail "the host probe did not start"; }
# The other trial runs here (the pool's first host) at about 10 batches a second, for 15 s.
sleep 2 # (its row may not be committed yet at the probe's start)
here="SELECT batches_trained FROM trials WHERE hosts = 'localhost:1' AND state = 'RUNNING'"
b0=$(sql "$here")
sleep 6
b1=$(sql "$here")
running=$(sql "SELECT count(*) FROM trials WHERE hosts = 'localhost:1' AND state = 'RUNNING'")
echo "dist_probe_hang: the trial here recorded at batch $b0, then $b1 six seconds later, the probe still waiting"
# (An old controller, blocked in the probe, had not even committed the trial's row: both empty.)
[ "$running" = 1 ] && [ -n "$b0" ] && [ "${b1:-0}" -ge $((b0 + 20)) ] ||
  { kill $ctl; cat "$WORK/out"; fail "the controller recorded nothing while the probe waited: '$b0' -> '$b1' ($running)"; }
wait $ctl || { cat "$WORK/out"; fail "the experiment failed"; }
OUT=$(cat "$WORK/out")
expect_in "$OUT" "host 192.0.2.7 is unreachable (no answer within 15 s)"
expect_in "$OUT" "2 trial(s) completed, 0 errored"
# Its hosts keep where it was launched first (probe_L finding 7: only the last host was kept).
sql "SELECT restarts || ' ' || hosts FROM trials WHERE error LIKE '%192.0.2.7 is unreachable%'" | grep -qx "1 192.0.2.7:1; localhost:1" ||
  fail "the trial on 192.0.2.7 did not restart on this machine: $(sql "SELECT id, restarts, hosts, error FROM trials")"
sleep 0.5
left=$(pgrep -f "^sleep $hang\$" || true)
[ -z "$left" ] || { pkill -f "^sleep $hang\$" || true; fail "launcher processes outlived the experiment: $left"; }
sessions=$(find "$WORK" -maxdepth 1 -name 'ompi.t2exp.*' | wc -l)
[ "$sessions" = 0 ] || fail "$sessions Open MPI session director(ies) left in TMPDIR: $(ls -d "$WORK"/ompi.t2exp.*)"
echo "dist_probe_hang: ok"
