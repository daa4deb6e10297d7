#!/usr/bin/env bash
# The record example's trial (trials/fashion_mnist_record.c), shrunk to width 8 and 40 batches:
# it trains on the training images less the holdout and validates on the holdout
# (data.holdout images), `evaluate` with data.validation=test judges a checkpoint on the 10,000
# test images, data.tta=flip changes the validation (the mean of each image's and its mirror's
# logits), and bad data keys and hparams fail with what is wrong. A constant hparam the trial
# refuses makes every draw invalid: the search stops after 100 replacements in a row.
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "record_trial: skipped (no dataset-fashion-mnist)"; exit 77; }

so="$TRIALS/fashion_mnist_record.so"
expect_exit 0 "$T2EXP" create "$EXAMPLES/fashion_mnist_record.yaml" "$so" --quiet \
  --config searcher.max_trials=1 --config searcher.max_length.batches=40 --config data.holdout=2000 \
  --config hyperparameters.width=8 --config hyperparameters.epochs=1 --config hyperparameters.warmup_epochs=0
[ "$(sql "SELECT state || ' ' || batches_trained FROM trials")" = "COMPLETED 40" ] ||
  fail "the trial should complete 40 batches: $(sql 'SELECT state, batches_trained, error FROM trials')"
acc=$(sql "SELECT best_validation FROM trials")
awk -v a="$acc" 'BEGIN { exit !(a > 0.3) }' || fail "holdout accuracy $acc after 40 batches (chance is 0.1)"
ck=$(sql "SELECT path FROM checkpoints WHERE state='ACTIVE' ORDER BY batches DESC LIMIT 1")
[ -f "$ck" ] || fail "no checkpoint"

# export writes the batchnorm statistics after the parameters, and lists them (it wrote params.bin
# alone: the net evaluated as another model outside t2exp).
expect_exit 0 "$T2EXP" export "$ck" "$WORK/rec.bin"
cat <(tar -xOf "$ck" params.bin) <(tar -xOf "$ck" buffers.bin) | cmp -s - "$WORK/rec.bin" ||
  fail "export is not params.bin then buffers.bin"
np=$(( $(tar -xOf "$ck" params.bin | wc -c) / 4 ))
grep -E '^1\.batchnorm\.running_mean,8,[0-9]+,8$' <<<"$OUT" | awk -F, -v np="$np" '$3 >= np { ok = 1 } END { exit !ok }' ||
  fail "export does not list 1.batchnorm.running_mean after the $np parameters: $(head -5 <<<"$OUT")"
expect_in "$OUT" "buffer floats"

# The stored config validates on the 2000 held-out images; data.validation=test on the test set.
expect_exit 0 "$T2EXP" evaluate "$ck" "$so"
expect_in "$OUT" "samples 2000 "
plain=$(awk '$1 == "validation_loss" { print $2 }' <<<"$OUT")
expect_exit 0 "$T2EXP" evaluate "$ck" "$so" --config data.validation=test
expect_in "$OUT" "samples 10000 "
# (flip on the holdout: on the test set it was 15 of the sanitized test's 32 s.)
expect_exit 0 "$T2EXP" evaluate "$ck" "$so" --config data.tta=flip
expect_in "$OUT" "samples 2000 "
mirrored=$(awk '$1 == "validation_loss" { print $2 }' <<<"$OUT")
[ -n "$plain" ] && [ -n "$mirrored" ] && [ "$plain" != "$mirrored" ] ||
  fail "tta=flip should change the validation loss (plain '$plain', flip '$mirrored')"

expect_exit 2 "$T2EXP" evaluate "$ck" "$so" --config data.validation=tset
expect_in "$OUT" "data.validation is 'tset'; expected holdout or test"
expect_exit 2 "$T2EXP" evaluate "$ck" "$so" --config data.tta=rotate
expect_in "$OUT" "data.tta is 'rotate'; expected none or flip"
expect_exit 2 "$T2EXP" evaluate "$ck" "$so" --config data.holdout=0
expect_in "$OUT" "data.holdout 0 not in 1..30000"
expect_exit 1 "$T2EXP" create "$EXAMPLES/fashion_mnist_record.yaml" "$so" --quiet \
  --config searcher.max_trials=1 --config searcher.max_length.batches=4 --config hyperparameters.blocks=4
expect_in "$(exp_logs 2)" "blocks 4 not 2 or 3"
# Every draw is invalid (blocks is a constant): 100 replacements in a row end the search.
expect_in "$OUT" "100 trials in a row called their hyperparameters invalid"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = 2")" = 100 ] ||
  fail "the search should stop at 100 invalid trials: $(sql "SELECT count(*) FROM trials WHERE experiment_id = 2")"
store_ok
echo "record_trial: ok"
