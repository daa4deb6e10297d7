#!/usr/bin/env bash
# A pause waits for the running trials to finish their batch and checkpoint, at most a minute. A
# second stop meanwhile ends them at once: a second Ctrl-C (SIGINT) leaves the experiment PAUSED,
# resumable from the latest checkpoints, and `t2exp kill` leaves it CANCELED; another SIGTERM (a
# second `t2exp pause`) does not. Each is checked with a trial whose batch never ends by itself
# (scripted_trial.c's wait_for), under both isolation modes and, where built with MPI, on two
# ranks (mpirun's teardown), and must end in seconds, not the minute; the first Ctrl-C says how to
# stop now.
source "$(dirname "$0")/common.bash"
# Whatever a failed check leaves running goes with the test.
trap 'pkill -KILL -f "$WORK/" 2>/dev/null || true; rm -rf "$WORK"' EXIT
build_scripted

# ended_within CTL SECONDS LOG — waits for the controller CTL to end; fails after SECONDS.
ended_within() {
  local i
  for i in $(seq $(($2 * 10))); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$1"
  fail "the controller did not end within $2 s of the second stop: $(cat "$3")"
}

cases="worker:INT worker:kill process_per_trial:INT process_per_trial:kill"
if with_mpi; then cases+=" mpi:INT mpi:kill"; fi
n=0
for c in $cases; do
    mode=${c%:*} second=${c#*:}
    n=$((n + 1))
    gate="$WORK/gate$n"
    if [ "$mode" = mpi ]; then res="{slots_per_trial: 2}" gbs=2; else res="{max_slots: 1, isolation: $mode}" gbs=1; fi
    cat > "$WORK/e$n.yaml" <<Y
name: stop_${mode}_$second
hyperparameters: {global_batch_size: $gbs, wait_for: "$gate", peak: 1}
searcher: {name: single, metric: score, smaller_is_better: false, max_length: {batches: 20}}
resources: $res
Y
    "$T2EXP" create "$WORK/e$n.yaml" "$WORK/scripted.so" --plain > "$WORK/e$n.out" 2>&1 &
    ctl=$!
    trial=$(waiting_pid "$gate" "$ctl" "$WORK/e$n.out") || exit 1
    kill -INT "$ctl"
    # The first stop waits for the batch, which does not end: after 2 s the trial still runs.
    sleep 2
    kill -0 "$trial" 2>/dev/null || fail "$mode: the trial ended on the first Ctrl-C: $(cat "$WORK/e$n.out")"
    kill -0 "$ctl" 2>/dev/null || fail "$mode: the controller ended on the first Ctrl-C: $(cat "$WORK/e$n.out")"
    expect_in "$(cat "$WORK/e$n.out")" "stopping: 1 running trial(s) finish their batch and checkpoint (at most 60 s); Ctrl-C again or \`t2exp kill $n\` stops them now"
    # Another SIGTERM (what `t2exp pause` sends) is no second Ctrl-C: the checkpoint is still waited for.
    kill -TERM "$ctl"
    sleep 1
    kill -0 "$trial" 2>/dev/null || fail "$mode: a SIGTERM during the pause killed the trial: $(cat "$WORK/e$n.out")"
    if [ "$second" = INT ]; then
      kill -INT "$ctl"
    else
      expect_exit 0 timeout 30 "$T2EXP" kill "$n"
    fi
    ended_within "$ctl" 15 "$WORK/e$n.out"
    wait "$ctl" 2>/dev/null || true
    OUT=$(cat "$WORK/e$n.out")
    expect_in "$OUT" "stopping now: 1 running trial(s) killed without a checkpoint"
    # A rank mpirun's teardown killed may be reaped (by init) a moment after mpirun is gone.
    for _ in $(seq 50); do [ -z "$(ps -o stat= -p "$trial" | grep -v '^Z')" ] && break; sleep 0.1; done
    [ -z "$(ps -o stat= -p "$trial" | grep -v '^Z')" ] || fail "$mode, $second: the trial process $trial is still there: $(ps -o pid,stat,args -p "$trial")"
    left=$(own_pids "t2exp create|run-trial|mpirun|orted")
    [ -z "$left" ] || fail "$mode, $second: processes of the experiment are left: $(ps -o pid,args -p "$(echo $left | tr " " ,)")"
    if [ "$second" = INT ]; then
      expect_in "$OUT" "experiment $n PAUSED"
      [ "$(sql "SELECT state FROM experiments WHERE id=$n")" = PAUSED ] || fail "$mode: experiment $n not PAUSED"
      [ "$(sql "SELECT restarts FROM trials WHERE experiment_id=$n")" = 0 ] || fail "$mode: the stop counted as a failure"
      # Resumable: the trial runs again (its batch can end now) and completes.
      touch "$gate"
      expect_exit 0 timeout 120 "$T2EXP" resume "$n" --plain
      expect_in "$OUT" "1 trial(s) completed, 0 errored"
    else
      expect_in "$OUT" "experiment $n CANCELED"
      [ "$(sql "SELECT state FROM trials WHERE experiment_id=$n")" = CANCELED ] || fail "$mode: the trial is not CANCELED"
    fi
    echo "stop_escalate: $mode, second stop by $second: ended in time"
done
store_ok
echo "stop_escalate: ok"
