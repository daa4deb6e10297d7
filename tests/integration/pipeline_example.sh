#!/usr/bin/env bash
# The example flow configs/examples/fashion_mnist_flow.yaml end to end with CI-small lengths:
# prepare (dataset caches) -> ASHA search -> retrain the best hparams -> evaluate -> export. Every
# stage succeeds, the retrain ran the search's best hyperparameters, the exported model is the
# retrained best checkpoint's parameters, and a second `pipeline run` with nothing changed skips
# every stage and creates nothing. Prints each stage's time, the final accuracy and the rerun time.
source "$(dirname "$0")/common.bash"
source "$(dirname "$0")/example_flow.bash"
have_fashion_mnist || { echo "pipeline_example: skipped (no dataset-fashion-mnist)"; exit 77; }
export OPENBLAS_NUM_THREADS=1 # t2exp would re-exec itself to set it
F="$WORK/flow"
copy_flow "$F" 160 4 200

expect_exit 0 "$T2EXP" pipeline run "$F/fashion_mnist_flow.yaml"
echo "$OUT"
expect_in "$OUT" "SUCCEEDED"
expect_in "$OUT" "(5 ran, 0 up to date, 0 not successful)"
expect_exit 0 "$T2EXP" pipelines describe 1 --json
D=$OUT
for s in prepare search retrain evaluate export; do
  [ "$(stage_field "$D" $s '$.state')" = SUCCEEDED ] || fail "stage $s did not succeed: $D"
  printf 'stage %-8s %6.2f s\n' $s "$(stage_field "$D" $s '$.duration')"
done

# prepare wrote two dataset caches; the experiments read them (data.train_cache/test_cache).
for c in train test; do [ -s "$F/fashion_mnist_flow.out/$c.t2c" ] || fail "no $c cache"; done
# Had a trial (or evaluate) decoded the IDX files itself, its own cache would be in HOME/cache.
# (The directory itself may hold the BLAS core decision, blas-core, on CPUs where there is one.)
[ -z "$(find "$T2EXP_HOME/cache" -name '*.t2c' 2>/dev/null)" ] ||
  fail "the trials made their own cache instead of mapping the prepared ones"
[ "$(sql "SELECT count(*) FROM experiments")" = 2 ] || fail "two experiments (search, retrain)"
[ "$(sql "SELECT count(*) FROM trials t JOIN experiments e ON e.id = t.experiment_id
          WHERE e.name = 'fashion_mnist_flow_search'")" = 4 ] || fail "the search ran 4 trials"

# The retrain ran the search's best hyperparameters, as constants stored with the experiment.
best=$(stage_field "$D" search '$.result.best.hparams')
[ -n "$best" ] && [ "$best" = "$(stage_field "$D" retrain '$.result.best.hparams')" ] ||
  fail "retrain's hparams differ from the search's best: $D"
rexp=$(stage_field "$D" retrain '$.experiment')
for h in learning_rate hidden1 dropout; do
  expect_in "$(sql "SELECT overrides FROM experiments WHERE id = $rexp")" "hyperparameters.$h={type: const, val: "
done
[ "$(sql "SELECT hparams FROM trials WHERE experiment_id = $rexp")" = "$best" ] || fail "the retrain trial's hparams"

# evaluate: the retrained model's best checkpoint on the test split.
ckpt=$(stage_field "$D" retrain '$.result.best.checkpoint')
[ -n "$ckpt" ] || fail "retrain has no best checkpoint"
elog=$(cat "$(stage_field "$D" evaluate '$.log')")
acc=$(sed -n 's/^validation_accuracy //p' <<<"$elog")
[ -n "$acc" ] || fail "no accuracy in the evaluate stage's log: $elog"
echo "final accuracy (evaluate stage): $acc"
awk -v a="$acc" 'BEGIN { exit !(a > 0.6 && a <= 1) }' || fail "accuracy $acc after 200 batches (wanted > 0.6)"
# ... the same number the retrain's own validation of that checkpoint recorded.
[ "$(sql "SELECT metric FROM checkpoints WHERE uuid = '$ckpt'")" = "$acc" ] || fail "evaluate's accuracy is not the checkpoint's"

# export: the same bytes `t2exp export` gives for that checkpoint.
expect_exit 0 "$T2EXP" export "$ckpt" "$WORK/direct.bin"
cmp -s "$F/fashion_mnist_flow.out/model.bin" "$WORK/direct.bin" || fail "model.bin is not the retrained checkpoint's export"

# Nothing changed: every stage is up to date, nothing runs, no experiment is made.
t0=$(date +%s.%N)
expect_exit 0 "$T2EXP" pipeline run "$F/fashion_mnist_flow.yaml"
t1=$(date +%s.%N)
expect_in "$OUT" "(0 ran, 5 up to date, 0 not successful)"
[ "$(grep -c 'up to date$' <<<"$OUT")" = 5 ] || fail "every stage up to date: $OUT"
[ "$(sql "SELECT count(*) FROM experiments")" = 2 ] || fail "the second run created an experiment"
dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
echo "second run (all 5 stages up to date): $dt s wall"
# The issue's target is 1 s; this machine may be shared with other builds, so a wide bound.
awk -v d="$dt" 'BEGIN { exit !(d < 5) }' || fail "the second run took $dt s"
expect_exit 0 "$T2EXP" pipeline status "$F/fashion_mnist_flow.yaml"
[ "$(grep -c 'up to date' <<<"$OUT")" -ge 5 ] || fail "status: every stage up to date: $OUT"
store_ok
echo "pipeline_example: ok"
