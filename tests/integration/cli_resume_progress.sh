#!/usr/bin/env bash
# What create/resume print around a pause: the pause names the real experiment id ("continue
# with: t2exp resume 1", was "resume ID"); after resume a trial's target is known at once (was
# "626/0 batches" until its runner had restored), the first throughput after the restore counts
# only batches trained since it (was "43236.7 batches/s"), and the completed line and the
# summary say which value is the latest and which the best of all validations.
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "cli_resume_progress: skipped (no dataset-fashion-mnist)"; exit 77; }
cat > "$WORK/e.yaml" <<Y
name: mlp_resume
data: {dir: ""}
hyperparameters: {global_batch_size: 64, learning_rate: 0.05, momentum: 0.9, hidden1: 256, hidden2: 128, dropout: 0.2}
searcher: {name: single, metric: validation_accuracy, smaller_is_better: false, max_length: {epochs: 2}}
min_validation_period: {epochs: 1}
scheduling_unit: 25
reproducibility: {experiment_seed: 7}
Y
"$T2EXP" create "$WORK/e.yaml" "$TRIALS/fashion_mnist_mlp.so" --plain > "$WORK/create.log" 2>&1 &
pid=$!
wait_for "SELECT batches_trained >= 200 FROM trials WHERE experiment_id=1" 600
kill -INT $pid
wait $pid && fail "a paused experiment should exit 1"
OUT=$(cat "$WORK/create.log")
expect_in "$OUT" "experiment 1 PAUSED"
expect_in "$OUT" "continue with: t2exp resume 1"
grep -qF "resume ID" <<<"$OUT" && fail "the pause message still says 'resume ID'"

target=$(sql "SELECT target_length_batches FROM trials WHERE experiment_id=1")
expect_exit 0 "$T2EXP" resume 1 --plain
grep -E "^  trial 1\.0 .* [0-9]+/0 batches" <<<"$OUT" && fail "a resumed trial's target is unknown: $OUT"
expect_in "$OUT" "/$target batches"
expect_in "$OUT" "trial 1.0 completed: $target batches, latest validation_accuracy"
expect_in "$OUT" "(trial 1.0, best of all validations)"

# The first rate after the restore, against the fastest before the pause: the same machine, the
# same model; counting the batches of the window before the pause made it hundreds of times more.
restored=$(grep -m1 -oE "^restored .*: batch [0-9]+" <(trial_log 1) | grep -oE "[0-9]+$")
[ -n "$restored" ] || fail "the trial never restored"
before=$(sql "SELECT max(batches_per_s) FROM report_timings WHERE trial_id=1 AND batches <= $restored")
after=$(sql "SELECT batches_per_s FROM report_timings WHERE trial_id=1 AND batches > $restored ORDER BY batches LIMIT 1")
awk -v a="$after" -v b="$before" 'BEGIN { exit !(a < 20 * b) }' ||
  fail "first rate after the restore $after batches/s, fastest before $before"
store_ok
