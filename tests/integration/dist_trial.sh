#!/usr/bin/env bash
# Distributed trials through the real CLI: slots_per_trial 2 runs the MLP on two MPI ranks;
# killing one rank makes the trial restart from its checkpoint and finish; and the experiment
# stopped mid-way resumes on ONE slot from the two-rank checkpoint (elastic restart, same global
# batch). Skipped without MPI or without the dataset.
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "dist_trial: skipped (no dataset-fashion-mnist)"; exit 77; }
have_mpi || { echo "dist_trial: skipped (built without MPI)"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"   # Open MPI's own allocations are not ours to check

mlp_config "$WORK/c.yaml" 300 "resources: {slots_per_trial: 2}" "max_restarts: 2"
expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$TRIALS/fashion_mnist_mlp.so" --plain
acc=$(sql "SELECT best_metric FROM experiments WHERE id=1")
awk -v a="$acc" 'BEGIN { exit !(a > 0.75) }' || fail "two-rank validation accuracy $acc"
grep -q "mpirun\|rank" "$T2EXP_HOME/experiments/1/trial-1.log" || true
# mpirun's log is private like a forked trial's (issue 18: files are created 0600).
[ "$(stat -c %a "$T2EXP_HOME/experiments/1/trial-1.log")" = 600 ] || fail "distributed trial log is not 0600"
[ "$(sql "SELECT count(*) FROM metrics WHERE trial_id=1 AND kind='validation' AND name='validation_accuracy'")" = 3 ] \
  || fail "3 validations expected"

# The kill and the pause below land once a checkpoint at 100 batches exists; 1200 batches leave
# them room to land mid-training (with 300, a fast machine finished the trial first).
mlp_config "$WORK/long.yaml" 1200 "resources: {slots_per_trial: 2}" "max_restarts: 2"

# Kill one rank (not rank 0's mpirun) mid-training: the trial restarts from its checkpoint.
"$T2EXP" create "$WORK/long.yaml" "$TRIALS/fashion_mnist_mlp.so" --plain > "$WORK/create2.log" 2>&1 &
ctl=$!
wait_for "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id=c.trial_id WHERE t.experiment_id=2 AND c.batches >= 100"
rank=$(own_pids "run-trial --connect .* --trial $(sql "SELECT id FROM trials WHERE experiment_id=2")" | tail -n 1)
[ -n "$rank" ] || fail "no rank process found"
# Each launch has an Open MPI session directory of its own (two mpiruns sharing the default
# $TMPDIR/ompi.<host>.<uid> race to create it and one fails), and it is gone when mpirun ends.
tr '\0' '\n' < "/proc/$rank/environ" | grep -q "^OMPI_MCA_orte_jobfam_session_dir=$TMPDIR/ompi\.t2exp\.[0-9a-f]\{16\}/" \
  || fail "the rank's session directory is not its launch's own: $(tr '\0' '\n' < "/proc/$rank/environ" | grep session)"
kill -KILL "$rank"
wait "$ctl" || fail "the experiment failed after a rank was killed: $(cat "$WORK/create2.log")"
left=$(find "$TMPDIR" -maxdepth 1 -name 'ompi.*')
[ -z "$left" ] || fail "Open MPI session directories left behind: $left"
[ "$(sql "SELECT restarts FROM trials WHERE experiment_id=2")" = 1 ] || fail "the trial should have restarted once"
[ "$(sql "SELECT state FROM trials WHERE experiment_id=2")" = COMPLETED ] || fail "the trial should complete"
id2=$(sql "SELECT id FROM trials WHERE experiment_id=2")
grep -q "restored .* batch [1-9]" <(trial_log "$id2") || fail "the restart did not restore a checkpoint"

# Elastic: stop a two-rank experiment, resume it on one slot from the two-rank checkpoint.
# The pause reaches rank 0 over its channel, not through mpirun's forwarding of a signal, which is
# a site setting: with none forwarded, the SIGUSR1 that paused before killed mpirun (its ranks
# then checkpointed on its teardown's SIGTERM, and their log's last lines were lost with it).
OMPI_MCA_ess_base_forward_signals=none \
  "$T2EXP" create "$WORK/long.yaml" "$TRIALS/fashion_mnist_mlp.so" --plain > "$WORK/create3.log" 2>&1 &
ctl=$!
wait_for "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id=c.trial_id WHERE t.experiment_id=3 AND c.batches >= 100"
kill -TERM "$ctl"
wait "$ctl" || true
[ "$(sql "SELECT state FROM experiments WHERE id=3")" = PAUSED ] || fail "SIGTERM should pause the experiment"
paused_at=$(sql "SELECT batches_trained FROM trials WHERE experiment_id=3")
grep -q "checkpoint .* at batch $paused_at:" <(trial_log "$(sql "SELECT id FROM trials WHERE experiment_id=3")") \
  || fail "the pause's checkpoint (batch $paused_at) is not in the trial's log: mpirun did not end cleanly"
expect_exit 0 "$T2EXP" resume 3 --config resources.slots_per_trial=1 --plain
[ "$(sql "SELECT batches_trained FROM trials WHERE experiment_id=3")" = 1200 ] || fail "1200 batches after the elastic resume"
id3=$(sql "SELECT id FROM trials WHERE experiment_id=3")
grep -q "restored .* batch [1-9]" <(trial_log "$id3") || fail "the one-slot run did not restore"

# A pause in the middle of a training-metrics window: each rank goes on summing into its own open
# window, so the window's report is the uninterrupted run's. Every rank had rank 0's restored, and
# a metric that differs between ranks (quadratic's rank_share) came out 7.2 where it is 8.25.
cat > "$WORK/pw.yaml" <<Y
name: pause_window
hyperparameters: {global_batch_size: 2, x: 0.5, y: -2, model: 1, rank_metric: 1, term_at_batch: 5}
searcher: {name: single, metric: loss, max_length: {batches: 20}}
scheduling_unit: 10
resources: {slots_per_trial: 2}
max_restarts: 0
Y
expect_exit 0 "$T2EXP" create "$WORK/pw.yaml" "$TRIALS/quadratic.so" --plain
paused=$(sql "SELECT max(id) FROM experiments")
grep -q "restored .* batch 6" <(exp_logs "$paused") || fail "the trial did not pause mid-window and restore"
expect_exit 0 "$T2EXP" create "$WORK/pw.yaml" "$TRIALS/quadratic.so" --plain --config hyperparameters.term_at_batch=-1
window() { sql "SELECT batches || ' ' || value FROM metrics m JOIN trials t ON t.id = m.trial_id
                WHERE t.experiment_id = $1 AND m.name = 'rank_share' ORDER BY batches"; }
[ "$(window "$paused")" = "$(window $((paused + 1)))" ] && [ "$(window "$paused" | head -n 1)" = "10 8.25" ] ||
  fail "the window across the distributed pause differs: $(window "$paused" | tr '\n' ' ') against $(window $((paused + 1)) | tr '\n' ' ')"
store_ok
echo "dist_trial: ok"
