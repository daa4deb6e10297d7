#!/usr/bin/env bash
# resources.hostfile is the slot pool for distributed trials: each trial gets slots of its own
# (its own hostfile for mpirun), several multi-slot trials run side by side when the pool allows,
# and a host never runs more ranks than its slots.
source "$(dirname "$0")/common.bash"
have_mpi || { echo "dist_hostfile: skipped (built without MPI)"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"   # Open MPI's own allocations are not ours to check
run_grid() { # SLOTS_IN_HOSTFILE
  echo "localhost slots=$1" > "$WORK/hosts"
  cat > "$WORK/g.yaml" <<Y
name: hostfile_$1
hyperparameters: {global_batch_size: 2, x: {type: categorical, vals: [0.5, 1.5]}, y: -2, sleep_ms: 40}
searcher: {name: grid, metric: loss, max_length: {batches: 20}}
resources: {slots_per_trial: 2, hostfile: $WORK/hosts}
max_restarts: 0
Y
  expect_exit 0 "$T2EXP" create "$WORK/g.yaml" "$TRIALS/quadratic.so" --plain
}
overlap() { # EXPERIMENT -> 1 if its two trials ran at the same time
  sql "SELECT (SELECT max(started_at) FROM trials WHERE experiment_id=$1) < (SELECT min(ended_at) FROM trials WHERE experiment_id=$1)"
}
run_grid 2     # two 2-slot trials, 2 slots: one after the other
[ "$(overlap 1)" = 0 ] || fail "two 2-slot trials overlapped on a 2-slot hostfile"
run_grid 4     # 4 slots: side by side
[ "$(overlap 2)" = 1 ] || fail "two 2-slot trials did not run side by side on a 4-slot hostfile"
for t in $(sql "SELECT id FROM trials WHERE experiment_id=2"); do
  grep -qx "localhost slots=2" "$T2EXP_HOME/experiments/2/trial-$t.log.hosts" || fail "trial $t should hold 2 slots"
done
[ "$(sql "SELECT count(*) FROM trials WHERE state='COMPLETED'")" = 4 ] || fail "all trials complete"
echo "dist_hostfile: ok"
