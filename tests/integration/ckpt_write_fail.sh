#!/usr/bin/env bash
# A checkpoint write that fails (here: a file-size limit put on the running trial, so the archive
# cannot be written): the failure is reported, the trial goes on, and the previous checkpoint
# stays valid and is still the latest in the store; no temporary file is left behind; the run's
# last lines say that checkpoint writes failed (it ends COMPLETED, as a run whose trials go on).
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "ckpt_write_fail: skipped (no dataset-fashion-mnist)"; exit 77; }
command -v prlimit >/dev/null || { echo "ckpt_write_fail: skipped (no prlimit)"; exit 77; }
mlp_config "$WORK/c.yaml" 300 "checkpoint_storage: {save_trial_latest: 5}"
sed -i 's/hidden1: 64/hidden1: 256/' "$WORK/c.yaml"   # a checkpoint of ~1.9 MB
"$T2EXP" create "$WORK/c.yaml" "$TRIALS/fashion_mnist_mlp.so" --plain > "$WORK/create.log" 2>&1 &
ctl=$!
wait_for "SELECT count(*) FROM checkpoints"
runner=$(pgrep -P "$ctl" | head -n 1)
prlimit --pid "$runner" --fsize=1000000
first=$(sql "SELECT uuid || ' ' || batches FROM checkpoints ORDER BY batches LIMIT 1")
wait "$ctl" || fail "the experiment failed: $(cat "$WORK/create.log")"
grep -q "checkpoint failed" "$WORK/create.log" || fail "the failed write was not reported: $(cat "$WORK/create.log")"
grep -q "warning: [0-9]* checkpoint write(s) failed in this run" "$WORK/create.log" ||
  fail "the run's end does not say checkpoints failed: $(tail -n 5 "$WORK/create.log")"
grep -q "File too large" <(trial_log 1) || fail "the trial log should name the error"
[ "$(sql "SELECT state FROM trials WHERE id=1")" = COMPLETED ] || fail "the trial should go on and complete"
# The latest checkpoint in the store is still the one written before the limit, and it is valid.
n=$(sql "SELECT count(*) FROM checkpoints WHERE state='ACTIVE'")
latest=$(sql "SELECT uuid || ' ' || batches FROM checkpoints WHERE state='ACTIVE' ORDER BY batches DESC LIMIT 1")
[ "$latest" = "$first" ] || fail "latest checkpoint changed from '$first' to '$latest' ($n active)"
path=$(sql "SELECT path FROM checkpoints WHERE state='ACTIVE' ORDER BY batches DESC LIMIT 1")
expect_exit 0 "$T2EXP" evaluate "$path" "$TRIALS/fashion_mnist_mlp.so"
expect_in "$OUT" "validation_accuracy"
[ "$(ls "$T2EXP_HOME/experiments/1/checkpoints" | wc -l)" = 1 ] || fail "a temporary file was left: $(ls "$T2EXP_HOME/experiments/1/checkpoints")"
store_ok
echo "ckpt_write_fail: ok"
