#!/usr/bin/env bash
# checkpoint_policy as Determined does it: `all` checkpoints after every validation, `best` after
# each validation that beats the experiment's best so far, `none` never because of a validation;
# the end of an op, a pause and min_checkpoint_period checkpoint whatever the policy. Counted on
# scripted_trial.c (score -|batches - peak|, every weight = batches trained), then on the MLP
# with 3 validations. Under `best`, GC keeps the best checkpoint and `export` of it gives the
# best validation's weights. (Before: 1 checkpoint, at the end, under every policy.)
source "$(dirname "$0")/common.bash"
build_scripted

# written EXP — checkpoints the experiment wrote (GC'd ones included), as "batches,batches,...".
written() { sql "SELECT group_concat(batches) FROM (SELECT batches FROM checkpoints WHERE experiment_id=$1 ORDER BY batches)"; }
kept() { sql "SELECT group_concat(batches) FROM (SELECT batches FROM checkpoints WHERE experiment_id=$1 AND state='ACTIVE' ORDER BY batches)"; }

# Validations at 100, 200, 300, 400; the score peaks at 200.
cat > "$WORK/s.yaml" <<Y
name: policy
hyperparameters: {global_batch_size: 1, peak: 200}
searcher: {name: single, metric: score, smaller_is_better: false, max_length: {batches: 400}}
min_validation_period: {batches: 100}
Y
exp=0
for policy in all best none; do
  exp=$((exp + 1))
  expect_exit 0 "$T2EXP" create "$WORK/s.yaml" "$WORK/scripted.so" --plain --config checkpoint_policy=$policy
  case $policy in
    all) want=100,200,300,400 ;;
    best) want=100,200,400 ;;   # 100 and 200 were new bests, 400 ends the op
    none) want=400 ;;
  esac
  [ "$(written $exp)" = "$want" ] || fail "$policy: checkpoints at $(written $exp), wanted $want"
done
# best: GC (save_trial_best 1, save_trial_latest 1) keeps the best (200) and the latest (400).
[ "$(kept 2)" = "200,400" ] || fail "best: kept $(kept 2), wanted 200,400"
BEST=$(sql "SELECT path FROM checkpoints WHERE experiment_id=2 AND state='ACTIVE' ORDER BY metric DESC LIMIT 1")
expect_exit 0 "$T2EXP" export "$BEST" "$WORK/best.bin"
# Two parameters (the dense layer's weight and bias), both 200.0f: 0x43480000 little-endian.
[ "$(od -An -tx1 -v "$WORK/best.bin" | tr -d ' \n')" = "0000484300004843" ] || fail "export of the best checkpoint: $(od -An -tx1 -v "$WORK/best.bin")"

# min_checkpoint_period adds to the policy: every 150 batches, and after the validations.
expect_exit 0 "$T2EXP" create "$WORK/s.yaml" "$WORK/scripted.so" --plain \
  --config checkpoint_policy=none --config min_checkpoint_period.batches=150
[ "$(written 4)" = "150,300,400" ] || fail "none + period 150: checkpoints at $(written 4)"
expect_exit 0 "$T2EXP" create "$WORK/s.yaml" "$WORK/scripted.so" --plain \
  --config checkpoint_policy=all --config min_checkpoint_period.batches=150
[ "$(written 5)" = "100,150,200,300,400" ] || fail "all + period 150: checkpoints at $(written 5)"

# `best` is the experiment's best, as in Determined: two trials one after the other; the second
# beats no validation of the first (peak 100: 0 at best; peak 300: 0 at best), so only its end.
cat > "$WORK/g.yaml" <<Y
name: policy_grid
hyperparameters: {global_batch_size: 1, peak: {type: categorical, vals: [300, 100]}}
searcher: {name: grid, metric: score, smaller_is_better: false, max_length: {batches: 400}, max_concurrent_trials: 1}
min_validation_period: {batches: 100}
Y
expect_exit 0 "$T2EXP" create "$WORK/g.yaml" "$WORK/scripted.so" --plain
first=$(sql "SELECT min(id) FROM trials WHERE experiment_id=6")
peak=$(sql "SELECT json_extract(hparams, '\$.peak') FROM trials WHERE id=$first")
tw() { sql "SELECT group_concat(batches) FROM (SELECT batches FROM checkpoints WHERE trial_id=$1 ORDER BY batches)"; }
if [ "$peak" = 300 ]; then want=100,200,300,400; else want=100,400; fi
[ "$(tw "$first")" = "$want" ] || fail "grid, first trial (peak $peak): checkpoints at $(tw "$first"), wanted $want"
[ "$(tw $((first + 1)))" = "400" ] || fail "grid, second trial: checkpoints at $(tw $((first + 1))), wanted 400 only"

# The MLP with 3 validations (100, 200, 300) and no periodic checkpoints.
if have_fashion_mnist; then
  mlp_config "$WORK/m.yaml" 300
  for policy in all best none; do
    expect_exit 0 "$T2EXP" create "$WORK/m.yaml" "$TRIALS/fashion_mnist_mlp.so" --plain \
      --config checkpoint_policy=$policy --config min_checkpoint_period.batches=1000
    e=$(sql "SELECT max(id) FROM experiments")
    n=$(sql "SELECT count(*) FROM checkpoints WHERE experiment_id=$e")
    # best: the validations that beat every earlier one, plus the end of the op.
    bests=$(sql "SELECT count(*) FROM metrics m JOIN trials t ON t.id=m.trial_id WHERE t.experiment_id=$e
                 AND m.kind='validation' AND m.name='validation_accuracy' AND m.batches < 300 AND m.value >
                 coalesce((SELECT max(p.value) FROM metrics p WHERE p.trial_id=m.trial_id AND p.kind='validation'
                           AND p.name='validation_accuracy' AND p.batches < m.batches), -1)")
    case $policy in all) want=3 ;; best) want=$((bests + 1)) ;; none) want=1 ;; esac
    echo "mlp, checkpoint_policy=$policy: $n checkpoint(s) at $(written "$e")"
    [ "$n" = "$want" ] || fail "mlp $policy: $n checkpoints, wanted $want"
  done
fi
store_ok
