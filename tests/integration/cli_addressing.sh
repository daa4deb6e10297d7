#!/usr/bin/env bash
# One addressing scheme: a checkpoint is a path, a uuid, EXP or EXP.N (the best by the searcher
# metric) in export, evaluate and create --from-checkpoint; a trial is EXP.N or its id; and
# `metrics EXP` is every trial's metrics in one table.
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "cli_addressing: skipped (no dataset-fashion-mnist)"; exit 77; }
MLP="$TRIALS/fashion_mnist_mlp.so"

mlp_config "$WORK/c.yaml" 100
expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$MLP" --quiet # experiment 1
# The best: validation_accuracy, larger is better; checkpoints without a metric come last.
best=$(sql "SELECT uuid FROM checkpoints WHERE experiment_id=1 AND state='ACTIVE'
            ORDER BY metric IS NULL, -metric, created_at DESC LIMIT 1")
bpath=$(sql "SELECT path FROM checkpoints WHERE uuid='$best'")
[ -f "$bpath" ] || fail "experiment 1 left no checkpoint"

expect_exit 0 "$T2EXP" export "$bpath" "$WORK/path.bin"
for ref in "$best" 1 1.0; do
  expect_exit 0 "$T2EXP" export "$ref" "$WORK/ref.bin"
  cmp -s "$WORK/path.bin" "$WORK/ref.bin" || fail "export $ref is not the best checkpoint $bpath"
done
expect_exit 2 "$T2EXP" export 99 "$WORK/x.bin"
expect_in "$OUT" "no experiment 99"
expect_exit 2 "$T2EXP" export 1.5 "$WORK/x.bin"
expect_in "$OUT" "no trial 1.5"
expect_exit 2 "$T2EXP" export not-a-uuid "$WORK/x.bin"
expect_in "$OUT" "not a file, EXPERIMENT, EXPERIMENT.N, nor the uuid"

expect_exit 0 "$T2EXP" evaluate 1.0 "$MLP"
expect_in "$OUT" "validation_accuracy"

expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$MLP" --quiet --from-checkpoint 1 # experiment 2
expect_in "$(exp_logs 2)" "warm start from $bpath"

# Trials: EXP.N and plain ids; metrics EXP is one table over the experiment's trials.
expect_exit 0 "$T2EXP" checkpoints 1.0 --csv
expect_in "$OUT" "$best"
expect_exit 0 "$T2EXP" metrics 2 --csv
expect_in "$OUT" "trial,trial_id,kind,batches,epoch,name,value,time"
expect_in "$OUT" "2.0,2,validation,100,"
tid=$(sql "SELECT id FROM trials WHERE experiment_id=2")
expect_exit 0 "$T2EXP" logs "$tid"
expect_exit 2 "$T2EXP" logs 2.7
expect_in "$OUT" "no trial 2.7"
echo "cli_addressing: ok"
