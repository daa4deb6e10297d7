#!/usr/bin/env bash
# A trial's end is seen even when no end of stream tells it, and a trial that closes its channel
# cannot hold the controller: (1) a trial that forks a helper (which inherits every descriptor,
# its runner's channel too) and then aborts is failed at once, not when the helper ends (a minute
# here; it was as long as the helper lived); (2) a trial that closes its channel and goes on is
# ended within seconds, with a reason that says so, while the controller's loop was held for as
# long as it ran. Each beside a well-behaved trial, which completes, under both isolation modes and
# both on two ranks where built with MPI.
source "$(dirname "$0")/common.bash"
trap 'touch "$WORK/free"; pkill -KILL -f "$WORK/" 2>/dev/null || true; rm -rf "$WORK"' EXIT
build_scripted

cases="orphan_until:worker orphan_until:process_per_trial close_until:worker close_until:process_per_trial"
cases+=" close_go:worker close_go:process_per_trial"
if with_mpi; then cases+=" orphan_until:mpi close_until:mpi"; fi
n=0
for c in $cases; do
  how=${c%:*} mode=${c#*:}
  n=$((n + 1))
  if [ "$mode" = mpi ]; then res="{slots_per_trial: 2}" gbs=2; else res="{max_slots: 2, isolation: $mode}" gbs=1; fi
  vals="[\"$WORK/free\", \"\"]"
  [ "$how" != close_go ] || vals="[1, 0]" # (it closes them and trains on: nothing to wait for)
  cat > "$WORK/e$n.yaml" <<Y
name: ${how}_$mode
hyperparameters: {global_batch_size: $gbs, peak: 1, $how: {type: categorical, vals: $vals}}
searcher: {name: grid, metric: score, smaller_is_better: false, max_length: {batches: 20}}
resources: $res
max_restarts: 0
Y
  start=$(date +%s)
  # COMPLETED with one trial errored: exit 0 (the exit follows the final state, cli.md)
  expect_exit 0 timeout 120 "$T2EXP" create "$WORK/e$n.yaml" "$WORK/scripted.so" --plain
  took=$(($(date +%s) - start))
  # The helper and the closed channel's trial wait a minute for $WORK/free, which nobody makes.
  [ "$took" -lt 40 ] || fail "$how, $mode: the experiment took $took s: its controller waited for the misbehaving trial"
  expect_in "$OUT" "1 trial(s) completed, 1 errored"
  badn=$(sql "SELECT ordinal FROM trials WHERE experiment_id=$n AND (hparams LIKE '%$WORK/free%' OR hparams LIKE '%\"close_go\":1%')")
  bad=$n.$badn # as the controller's lines name a trial
  if [ "$how" = orphan_until ]; then
    if [ "$mode" = mpi ]; then
      expect_in "$OUT" "trial $bad errored: the trial process exited with status"
    else
      expect_in "$OUT" "trial $bad errored: the trial process killed by signal 6 (Aborted)"
    fi
  elif [ "$how" = close_go ]; then
    # Its runner's next report failed on the closed descriptor: said so, not "exited with status 2".
    expect_in "$OUT" "trial $bad errored: its channel to the controller was closed under its runner (did the trial close a file descriptor it had not opened?)"
  else
    expect_in "$OUT" "trial $bad errored: its channel to the controller closed while its process still ran"
    [ -z "$(own_pids "t2exp create .*e$n.yaml")" ] || fail "$how, $mode: the trial's process was left running"
    # Ranks that closed Open MPI's descriptors too once outlived mpirun's teardown as orphans.
    [ "$mode" != mpi ] || [ -z "$(own_pids "run-trial --connect")" ] || fail "$how, $mode: a rank was left running"
  fi
  [ "$(sql "SELECT state FROM trials WHERE experiment_id=$n AND ordinal != $badn")" = COMPLETED ] \
    || fail "$how, $mode: the well-behaved trial did not complete"
  echo "trial_orphan_channel: $how, $mode: ended in $took s"
done
touch "$WORK/free"
store_ok
echo "trial_orphan_channel: ok"
