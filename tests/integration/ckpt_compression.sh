#!/usr/bin/env bash
# checkpoint_storage.compression: gzip and zstd archives are written (and named .tar.gz /
# .tar.zst), a trial SIGKILLed mid-training restarts from a compressed checkpoint and ends with
# exactly the weights of an uninterrupted uncompressed run, `t2exp evaluate` reads them, and a
# bad value is refused with its place in the file.
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "ckpt_compression: skipped (no dataset-fashion-mnist)"; exit 77; }

mlp_config "$WORK/plain.yaml" 300
expect_exit 0 "$T2EXP" create "$WORK/plain.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet # experiment 1
export_last 1 "$WORK/plain.bin"

exp=1
for comp in gzip zstd; do
  exp=$((exp + 1))
  ext=$([ "$comp" = gzip ] && echo .tar.gz || echo .tar.zst)
  mlp_config "$WORK/$comp.yaml" 300 "max_restarts: 2" "checkpoint_storage: {compression: $comp}"
  create_kill_trial "$WORK/$comp.yaml" "$WORK/$comp.log" \
    "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id=c.trial_id WHERE t.experiment_id=$exp AND c.batches >= 100"
  trial=$(sql "SELECT id FROM trials WHERE experiment_id=$exp")
  [ "$(sql "SELECT restarts FROM trials WHERE id=$trial")" = 1 ] || fail "$comp: restarts should be 1"
  grep -q "restored .*$ext: batch [1-9]" <(trial_log "$trial") \
    || fail "$comp: the restart did not restore a $ext checkpoint"
  [ "$(sql "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id=c.trial_id WHERE t.experiment_id=$exp
            AND c.path NOT LIKE '%$ext'")" = 0 ] || fail "$comp: every checkpoint should end in $ext"
  export_last $exp "$WORK/$comp.bin"
  cmp -s "$WORK/plain.bin" "$WORK/$comp.bin" || fail "$comp: weights after a restart differ from the uninterrupted run's"
  expect_exit 0 "$T2EXP" evaluate "$LAST" "$TRIALS/fashion_mnist_mlp.so"
  expect_in "$OUT" "validation_accuracy"
done

mlp_config "$WORK/bad.yaml" 300 "checkpoint_storage: {compression: lz4}"
expect_exit 2 "$T2EXP" create "$WORK/bad.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet
expect_in "$OUT" "bad.yaml:9:"
expect_in "$OUT" "checkpoint_storage.compression: must be none, gzip or zstd, got"
store_ok
echo "ckpt_compression: ok"
