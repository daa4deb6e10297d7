#!/usr/bin/env bash
# dist_leave_hang.sh — a distributed trial whose ranks do not end after it left (issue 12: the
# controller keeps up; probe_G G7). mpirun is stopped (SIGSTOP) mid-trial: the ranks finish their
# work, rank 0 reports it, and then they sit in MPI_Finalize, which needs mpirun. The trial and
# the experiment waited for good. Now mpirun is ended 30 s after the trial left, and the trial,
# whose work was all done, stays completed.
source "$(dirname "$0")/common.bash"
have_mpi || { echo "dist_leave_hang: skipped (no MPI build or no mpirun)"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's own allocations are not ours to check
cat > "$WORK/leave.yaml" <<Y
name: leave_hang
hyperparameters: {global_batch_size: 4, x: 0.5, y: -2, sleep_ms: 100}
searcher: {name: single, metric: loss, max_length: {batches: 20}}
resources: {slots_per_trial: 2}
max_restarts: 0
Y
"$T2EXP" create "$WORK/leave.yaml" "$TRIALS/quadratic.so" --plain > "$WORK/out" 2>&1 &
ctl=$!
(sleep 120 && kill -TERM $ctl 2>/dev/null) & # a controller that waits for good fails the test
watchdog=$!
mpirun_pid=
for _ in $(seq 300); do
  mpirun_pid=$(pgrep -P $ctl -x mpirun || true) # this controller's own (tests run side by side)
  [ -n "$mpirun_pid" ] && grep -q "trial 1.0 started" "$WORK/out" && break
  sleep 0.1
done
[ -n "$mpirun_pid" ] || { kill $ctl; cat "$WORK/out"; fail "no mpirun for trial 1"; }
sleep 0.5
kill -STOP "$mpirun_pid"
start=$(date +%s)
wait $ctl || { rc=$?; kill -CONT "$mpirun_pid" 2>/dev/null || true; cat "$WORK/out"; fail "the experiment did not end (exit $rc)"; }
pkill -P $watchdog 2>/dev/null || true # its sleep, then itself
kill $watchdog 2>/dev/null || true
echo "dist_leave_hang: the experiment ended $(( $(date +%s) - start )) s after mpirun was stopped"
OUT=$(cat "$WORK/out")
expect_in "$OUT" "its ranks have not ended 30 s after it left; mpirun is ended"
expect_in "$OUT" "1 trial(s) completed, 0 errored"
[ "$(sql "SELECT state || ' ' || batches_trained FROM trials WHERE id = 1")" = "COMPLETED 20" ] ||
  fail "trial 1: $(sql "SELECT state, batches_trained, error FROM trials WHERE id = 1")"
! kill -0 "$mpirun_pid" 2>/dev/null || fail "mpirun $mpirun_pid outlived the experiment"
echo "dist_leave_hang: ok"
