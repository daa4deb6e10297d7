#!/usr/bin/env bash
# SIGKILL a raw-buffer trial (trials/raw_mlp.c: four t2_wrap_params arrays, two optimizers) in
# mid-training: the controller restarts it from its latest checkpoint and it ends with exactly the
# weights of an uninterrupted run (the exported parameters compared byte for byte), which needs
# the arrays, both optimizers' moments and step counts, the loader position and the RNG back.
source "$(dirname "$0")/common.bash"
GEN="$T2EXP_SOURCE/tests/tools/regression_csv.awk"
# 12 distractor columns and 256 hidden units: slow enough (ms per batch) to be caught mid-run.
awk -v n=2048 -v seed=3 -v noise=0.1 -v wide=12 -f "$GEN" > "$WORK/train.csv"
awk -v n=256 -v seed=4 -v noise=0.1 -v wide=12 -f "$GEN" > "$WORK/val.csv"
ARGS=(--config "data.train_csv=$WORK/train.csv" --config "data.val_csv=$WORK/val.csv" --config hyperparameters.hidden=256
      --config hyperparameters.global_batch_size=64 --config searcher.max_length="{batches: 3000}" --config min_checkpoint_period="{batches: 100}"
      --config min_validation_period="{batches: 1000}" --config max_restarts=2 --quiet)

expect_exit 0 "$T2EXP" create "$EXAMPLES/raw_mlp.yaml" "$TRIALS/raw_mlp.so" "${ARGS[@]}" # experiment 1
export_last 1 "$WORK/straight.bin"

"$T2EXP" create "$EXAMPLES/raw_mlp.yaml" "$TRIALS/raw_mlp.so" "${ARGS[@]}" > "$WORK/create.log" 2>&1 &
ctl=$!
wait_for "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id=c.trial_id WHERE t.experiment_id=2 AND c.batches >= 200"
runner=$(pgrep -P "$ctl" | head -n 1)
[ -n "$runner" ] || fail "no trial process under the controller (finished already?)"
kill -KILL "$runner"
wait "$ctl" || fail "the experiment failed after its trial was killed: $(cat "$WORK/create.log")"
[ "$(sql "SELECT restarts FROM trials WHERE experiment_id=2")" = 1 ] || fail "the trial should have restarted once"
[ "$(sql "SELECT batches_trained FROM trials WHERE experiment_id=2")" = 3000 ] || fail "3000 batches expected"
grep -q "restored .* batch [1-9]" <(exp_logs 2) || fail "the restart did not restore a checkpoint"
export_last 2 "$WORK/killed.bin"
cmp "$WORK/straight.bin" "$WORK/killed.bin" || fail "the killed and restarted run ended with other weights"
at=$(grep -o "restored .* batch [0-9]*" <(exp_logs 2) | grep -o "[0-9]*$")
echo "raw_mlp_kill: killed, restarted from batch $at, final weights identical (sha256 $(sha256sum < "$WORK/killed.bin" | cut -c1-16))"
store_ok
echo "raw_mlp_kill: ok"
