#!/usr/bin/env bash
# Checkpoint garbage collection through a real experiment: with save_trial_latest 2,
# save_trial_best 1 and save_experiment_best 0, the files left are exactly the store's ACTIVE
# checkpoints, which are the 2 newest plus the best by validation metric.
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "ckpt_gc: skipped (no dataset-fashion-mnist)"; exit 77; }
mlp_config "$WORK/c.yaml" 400 "checkpoint_storage: {save_trial_latest: 2, save_trial_best: 1, save_experiment_best: 0}"
expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet
[ "$(sql "SELECT count(*) FROM checkpoints")" = 8 ] || fail "8 checkpoints written (every 50 of 400 batches)"
active=$(sql "SELECT group_concat(batches) FROM (SELECT batches FROM checkpoints WHERE state='ACTIVE' ORDER BY batches)")
best=$(sql "SELECT batches FROM checkpoints WHERE metric IS NOT NULL ORDER BY metric DESC, batches DESC LIMIT 1")
want=$(printf '%s\n' 350 400 "$best" | sort -n | uniq | paste -sd,)
[ "$active" = "$want" ] || fail "kept $active, wanted $want"
[ "$(ls "$T2EXP_HOME/experiments/1/checkpoints" | sort)" = "$(sql "SELECT path FROM checkpoints WHERE state='ACTIVE'" | xargs -n1 basename | sort)" ] \
  || fail "files on disk differ from the store's ACTIVE checkpoints"
expect_exit 0 "$T2EXP" checkpoints 1 --csv
[ "$(wc -l <<<"$OUT")" = "$(( $(sql "SELECT count(*) FROM checkpoints WHERE state='ACTIVE'") + 1 ))" ] || fail "t2exp checkpoints lists the active ones"
echo "ckpt_gc: ok"
