#!/usr/bin/env bash
# `t2exp create CONFIG TRIAL.so --test` (Determined's `det e create --test`): one trial of one batch
# with hyperparameters drawn from the search space, validated and checkpointed, then its checkpoint
# restored into a fresh model in the command's own process and validated again. (1) A search whose
# trial checkpoints all it keeps passes (exit 0) and its test experiment is deleted; (2) one whose
# trial keeps state its checkpoints leave out fails (exit 1) saying so, and its experiment is kept;
# (3) a trial that wraps no model passes with nothing to restore; (4) a failing trial fails the test;
# (5) an invalid config is refused before anything runs (exit 2); (6) --test --detach is refused; and
# (7) two ranks where built with MPI.
source "$(dirname "$0")/common.bash"
build_scripted
config() { # FILE HPARAMS [EXTRA]
  cat > "$1" <<Y
name: tested
hyperparameters: {global_batch_size: 1, peak: {type: double, minval: 2, maxval: 8}, $2}
searcher: {name: adaptive_asha, metric: score, smaller_is_better: false, max_trials: 50, max_length: {batches: 200}}
min_validation_period: {batches: 50}
${3:-}
Y
}

# (1) state saved with save_state: passes; nothing of the test is left in the store.
config "$WORK/ok.yaml" "own_state: 2"
expect_exit 0 "$T2EXP" create "$WORK/ok.yaml" "$WORK/scripted.so" --test --plain
expect_in "$OUT" "test mode: passed: trial 1.0 trained 1 batch"
expect_in "$OUT" "its checkpoint, restored into a fresh model, validates the same"
expect_in "$OUT" "test mode: experiment 1 deleted"
expect_in "$OUT" "[test-mode] tested"
[ "$(sql "SELECT count(*) FROM experiments")" = 0 ] || fail "the passed test's experiment is still in the store"
[ -z "$(ls "$T2EXP_HOME/experiments" 2>/dev/null)" ] || fail "the passed test left $(ls "$T2EXP_HOME/experiments")"
# The run was the test's, not the search's: one trial, one batch (from the run's own summary).
expect_in "$OUT" "1 trial(s) completed, 0 errored"

# (2) state kept but left out of the checkpoints: the restored model validates otherwise.
config "$WORK/bad.yaml" "own_state: 1"
expect_exit 1 "$T2EXP" create "$WORK/bad.yaml" "$WORK/scripted.so" --test --plain
expect_in "$OUT" "test mode: FAILED: its checkpoint"
expect_in "$OUT" "the checkpoint leaves out some of the model's state"
expect_in "$OUT" "experiment 2 is kept: t2exp logs 2.0"
[ "$(sql "SELECT name, num_trials FROM experiments WHERE id = 2")" = "[test-mode] tested|1" ] \
  || fail "the failed test's experiment: $(sql "SELECT name, num_trials FROM experiments")"
[ "$(sql "SELECT batches_trained FROM trials WHERE experiment_id = 2")" = 1 ] || fail "the test trained more than 1 batch"

# (3) a trial that wraps no model: nothing to restore, and it says so.
cat > "$WORK/quad.yaml" <<Y
name: quad
hyperparameters: {global_batch_size: 1, x: {type: double, minval: -3, maxval: 3}, y: -2}
searcher: {name: random, metric: loss, max_trials: 20, max_length: {batches: 5}}
Y
expect_exit 0 "$T2EXP" create "$WORK/quad.yaml" "$TRIALS/quadratic.so" --test --quiet
expect_in "$OUT" "no checkpoint to check: the trial wraps no model"

# (4) a trial that fails.
config "$WORK/fails.yaml" "fail_build: 1"
expect_exit 1 "$T2EXP" create "$WORK/fails.yaml" "$WORK/scripted.so" --test --quiet
expect_in "$OUT" "test mode: FAILED: "
expect_in "$OUT" "failing every time as asked"

# (5) an invalid config: refused as create refuses it, nothing run.
printf 'name: x\nhyperparameters: {global_batch_size: 1}\nsearcher: {name: single, metric: score, max_lenght: {batches: 1}}\n' > "$WORK/typo.yaml"
n=$(sql "SELECT count(*) FROM experiments")
expect_exit 2 "$T2EXP" create "$WORK/typo.yaml" "$WORK/scripted.so" --test
expect_in "$OUT" "max_lenght"
[ "$(sql "SELECT count(*) FROM experiments")" = "$n" ] || fail "an invalid config's test ran"

# (6) the verdict is the output: no --detach.
expect_exit 2 "$T2EXP" create "$WORK/ok.yaml" "$WORK/scripted.so" --test --detach
expect_in "$OUT" "--test runs in the foreground"

# (7) two ranks: the ranks rebuild the config from the file and the overrides, as the controller did.
if with_mpi; then
  config "$WORK/dist.yaml" "own_state: 2" "resources: {slots_per_trial: 2}"
  sed -i 's/global_batch_size: 1/global_batch_size: 2/' "$WORK/dist.yaml"
  expect_exit 0 "$T2EXP" create "$WORK/dist.yaml" "$WORK/scripted.so" --test --quiet
  expect_in "$OUT" "its checkpoint, restored into a fresh model, validates the same"
fi
store_ok
echo "create_test_mode: ok"
