#!/usr/bin/env bash
# Threads follow the freed slots (docs/performance.md#threads): two trials share 2 slots at 1
# thread each; when the short one ends, the long one (threads_trial.c, stall: 2, which waits 50 ms
# a batch until it has 2 threads) goes to 2 threads mid-trial, and its log says so. Its parameters
# must be bit-identical to the same trial run alone on 2 threads throughout (max_concurrent_trials:
# 1): the trial's parts (2, the most threads it could get) fix the numbers, the threads only the
# speed. With resources.max_threads_per_trial: 1 the parts and the threads stay 1, and the
# parameters differ (so the parts do matter to this model, and the identity above means
# something). The same under isolation: process_per_trial. The experiment records its parts and a
# resume on fewer slots keeps them. A bad max_threads_per_trial is an error naming the key and where it is.
source "$(dirname "$0")/common.bash"
command -v "${CC:-cc}" >/dev/null || { echo "threads_follow_slots: skipped (no C compiler)"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "threads_follow_slots: skipped (fewer than 2 cores)"; exit 77; }
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -shared -fPIC -I "$T2EXP_SOURCE/framework/include" \
  "$T2EXP_SOURCE/tests/integration/threads_trial.c" -o "$WORK/threads.so" -lm

# config FILE CONCURRENT [RESOURCES...] — the two-trial grid: stall 2 (the long one) first.
config() {
  cat > "$1" <<Y
name: threads_follow_slots
hyperparameters: {global_batch_size: 32, stall: {type: categorical, vals: [2, 0]}}
searcher: {name: grid, metric: validation_loss, smaller_is_better: true, max_length: {batches: 200},
           max_concurrent_trials: $2}
resources: {max_slots: 2${3:-}}
reproducibility: {experiment_seed: 7}
Y
}
# trial EXP STALL — the id of the experiment's trial with that stall.
trial() { sql "SELECT id FROM trials WHERE experiment_id=$1 AND json_extract(hparams, '\$.stall')=$2"; }
final() {
  sql "SELECT c.path FROM checkpoints c WHERE c.trial_id=$(trial "$1" "$2") AND c.batches=200 AND c.state='ACTIVE'"
}
logs() { "$T2EXP" logs "$(trial "$1" "$2")"; }

config "$WORK/shared.yaml" 2
expect_exit 0 "$T2EXP" create "$WORK/shared.yaml" "$WORK/threads.so" --plain   # experiment 1
expect_in "$OUT" "2 trial(s) completed, 0 errored"
long=$(logs 1 2)
expect_in "$long" "parts 2"
grep -qE "^threads 1 -> 2 at batch [0-9]+$" <<<"$long" || fail "the long trial never went to 2 threads: $long"

config "$WORK/alone.yaml" 1
expect_exit 0 "$T2EXP" create "$WORK/alone.yaml" "$WORK/threads.so" --plain    # experiment 2
expect_in "$OUT" "2 trial(s) completed, 0 errored"
alone=$(logs 2 2)
expect_in "$alone" "threads 2, parts 2"
! grep -qE "^threads [0-9]+ -> " <<<"$alone" || fail "a trial alone on 2 slots changed its thread count: $alone"

for s in 2 0; do
  a=$(final 1 $s); b=$(final 2 $s)
  [ -n "$a" ] && [ -n "$b" ] || fail "final checkpoints of the stall $s trials missing"
  [ "$(params_sha "$a")" = "$(params_sha "$b")" ] ||
    fail "stall $s: the parameters differ between 1 -> 2 threads and 2 threads throughout"
done

config "$WORK/one.yaml" 2 ", max_threads_per_trial: 1"
expect_exit 0 "$T2EXP" create "$WORK/one.yaml" "$WORK/threads.so" --plain      # experiment 3
expect_in "$OUT" "2 trial(s) completed, 0 errored"
for s in 2 0; do
  one=$(logs 3 $s)
  expect_in "$one" "threads 1, parts 1"
  ! grep -qE "^threads [0-9]+ -> " <<<"$one" || fail "max_threads_per_trial: 1, yet the thread count changed: $one"
done
[ "$(params_sha "$(final 3 0)")" != "$(params_sha "$(final 2 0)")" ] ||
  fail "1 part and 2 parts gave the same parameters: this model does not test the parts"

# The same with a forked process per trial (no worker between the controller and the runner).
config "$WORK/forked.yaml" 2 ", isolation: process_per_trial"
expect_exit 0 "$T2EXP" create "$WORK/forked.yaml" "$WORK/threads.so" --plain   # experiment 4
expect_in "$OUT" "2 trial(s) completed, 0 errored"
grep -qE "^threads 1 -> 2 at batch [0-9]+$" <<<"$(logs 4 2)" || fail "process_per_trial: no 1 -> 2: $(logs 4 2)"
[ "$(params_sha "$(final 4 2)")" = "$(params_sha "$(final 2 2)")" ] ||
  fail "process_per_trial: the parameters differ between 1 -> 2 threads and 2 threads throughout"

# The parts are the experiment's: recorded at create, kept by a resume with another max_slots.
[ "$(sql 'SELECT parts FROM experiments WHERE id=2')" = 2 ] || fail "experiment 2 did not record 2 parts"
[ "$(sql 'SELECT parts FROM experiments WHERE id=3')" = 1 ] || fail "max_threads_per_trial: 1 did not record 1 part"
# describe shows them, since they fix the numbers (table and JSON).
expect_exit 0 "$T2EXP" describe 2
grep -qE "^parts +2$" <<<"$OUT" || fail "describe does not show the experiment's 2 parts: $OUT"
expect_exit 0 "$T2EXP" describe 3 --json
expect_in "$OUT" '"parts":1'
# One trial that waits 50 ms a batch (stall 3: never that many threads), paused after 10 batches
# and resumed on 1 slot: still 2 parts, and the parameters of the same trial run uninterrupted.
cat > "$WORK/pause.yaml" <<Y
name: parts_kept
hyperparameters: {global_batch_size: 32, stall: 3}
searcher: {name: single, metric: validation_loss, smaller_is_better: true, max_length: {batches: 60}}
min_validation_period: {batches: 10}
min_checkpoint_period: {batches: 10}
resources: {max_slots: 2}
reproducibility: {experiment_seed: 7}
Y
"$T2EXP" create "$WORK/pause.yaml" "$WORK/threads.so" --plain > "$WORK/pause.log" 2>&1 &   # experiment 5
pid=$!
wait_for "SELECT batches_trained >= 10 FROM trials WHERE experiment_id=5" 600
kill -INT $pid
wait $pid && fail "a paused experiment should exit 1: $(cat "$WORK/pause.log")"
expect_in "$(cat "$WORK/pause.log")" "experiment 5 PAUSED"
[ "$(sql "SELECT batches_trained < 60 FROM trials WHERE experiment_id=5")" = 1 ] || fail "the pause came after the trial ended"
expect_exit 0 "$T2EXP" resume 5 --config resources.max_slots=1 --plain
expect_exit 0 "$T2EXP" create "$WORK/pause.yaml" "$WORK/threads.so" --plain         # experiment 6
p5=$(sql "SELECT c.path FROM checkpoints c JOIN trials t ON t.id=c.trial_id WHERE t.experiment_id=5 AND c.batches=60 AND c.state='ACTIVE'")
p6=$(sql "SELECT c.path FROM checkpoints c JOIN trials t ON t.id=c.trial_id WHERE t.experiment_id=6 AND c.batches=60 AND c.state='ACTIVE'")
[ -n "$p5" ] && [ -n "$p6" ] || fail "final checkpoints of experiments 5 and 6 missing"
[ "$(params_sha "$p5")" = "$(params_sha "$p6")" ] ||
  fail "paused and resumed on 1 slot, the trial's parameters differ from an uninterrupted run's (P changed?)"
expect_in "$("$T2EXP" logs "$(sql 'SELECT id FROM trials WHERE experiment_id=5')")" "threads 1, parts 2"

# Bad values: located errors naming the key.
config "$WORK/bad.yaml" 2 ", max_threads_per_trial: 0"
expect_exit 2 "$T2EXP" create "$WORK/bad.yaml" "$WORK/threads.so" --plain
expect_in "$OUT" "bad.yaml:5:"
expect_in "$OUT" "resources.max_threads_per_trial"
config "$WORK/bad.yaml" 2 ", max_threads_per_trial: 65"
expect_exit 2 "$T2EXP" create "$WORK/bad.yaml" "$WORK/threads.so" --plain
expect_in "$OUT" "resources.max_threads_per_trial: must be at most 64, got 65"
config "$WORK/bad.yaml" 2 ", max_thread_per_trial: 1"
expect_exit 2 "$T2EXP" create "$WORK/bad.yaml" "$WORK/threads.so" --plain
expect_in "$OUT" "max_threads_per_trial"
store_ok
echo "threads_follow_slots: ok"
