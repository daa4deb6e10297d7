#!/usr/bin/env bash
# Checkpoint garbage collection through a real experiment: with save_trial_latest 2,
# save_trial_best 1 and save_experiment_best 0, the files left are exactly the store's ACTIVE
# checkpoints, which are the 2 newest plus the best by validation metric.
#
# Then GC when trials and runs end (quadratic, model: 1, always runs): it once ran only after a
# new checkpoint, so the last trial's last checkpoint outlived a policy that keeps none of it.
source "$(dirname "$0")/common.bash"
Q="$TRIALS/quadratic.so"
# active EXP — the experiment's ACTIVE checkpoints as "x@batches", in that order; on_disk EXP —
# whether its checkpoint directory holds exactly their files.
active() {
  sql "SELECT group_concat(x || '@' || batches, ' ') FROM (SELECT json_extract(t.hparams, '\$.x') AS x, c.batches
       FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = $1 AND c.state = 'ACTIVE'
       ORDER BY x, c.batches)"
}
on_disk() {
  local dir
  dir=$(sql "SELECT checkpoint_dir FROM experiments WHERE id = $1")
  [ "$(ls "$dir" | sort)" = "$(sql "SELECT c.path FROM checkpoints c JOIN trials t ON t.id = c.trial_id
      WHERE t.experiment_id = $1 AND c.state = 'ACTIVE'" | xargs -rn1 basename | sort)" ] ||
    fail "experiment $1: files in $dir ($(ls "$dir" | tr '\n' ' ')) are not its ACTIVE checkpoints"
}
# 1. A completed grid with save_experiment_best 1 and nothing per trial keeps exactly the best
#    trial's newest checkpoint (x = 1: loss 0; ties go to the newest). The trials run one at a time,
#    a worse one last (checked): its checkpoint at 6 batches was left.
cat > "$WORK/g.yaml" <<Y
name: gc_end
hyperparameters: {global_batch_size: 1, y: -2, model: 1, x: {type: categorical, vals: [3, 0, 1]}}
searcher: {name: grid, metric: loss, max_length: {batches: 6}, max_concurrent_trials: 1}
min_validation_period: {batches: 2}
min_checkpoint_period: {batches: 2}
checkpoint_storage: {save_experiment_best: 1, save_trial_best: 0, save_trial_latest: 0}
max_restarts: 0
Y
expect_exit 0 "$T2EXP" create "$WORK/g.yaml" "$Q" --quiet
[ "$(sql "SELECT count(*) FROM checkpoints WHERE state = 'DELETED'")" -ge 6 ] || fail "each trial checkpointed"
[ "$(sql "SELECT json_extract(hparams, '\$.x') FROM trials WHERE experiment_id = 1 ORDER BY id DESC LIMIT 1")" != 1 ] ||
  fail "the best trial ran last: this test then shows nothing"
[ "$(active 1)" = "1@6" ] || fail "experiment 1 kept $(active 1), wanted 1@6"
on_disk 1
# 2. Paused, the trial keeps the checkpoint its resume continues from, whatever the policy (here
#    none at all); completed, nothing is left.
cat > "$WORK/p.yaml" <<Y
name: gc_pause
hyperparameters: {global_batch_size: 1, x: 1, y: -2, model: 1, sleep_ms: 20}
searcher: {name: single, metric: loss, max_length: {batches: 60}}
min_validation_period: {batches: 2}
min_checkpoint_period: {batches: 2}
checkpoint_storage: {save_experiment_best: 0, save_trial_best: 0, save_trial_latest: 0}
max_restarts: 0
Y
"$T2EXP" create "$WORK/p.yaml" "$Q" --quiet > "$WORK/p.log" 2>&1 &
ctl=$!
wait_for "SELECT count(*) >= 2 FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = 2" 600
expect_exit 0 timeout 120 "$T2EXP" pause 2
wait "$ctl" || true
[ "$(sql "SELECT state FROM experiments WHERE id = 2")" = PAUSED ] || fail "experiment 2 should be PAUSED"
latest=$(sql "SELECT max(c.batches) FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = 2")
[ "$(active 2)" = "1@$latest" ] || fail "paused, experiment 2 kept $(active 2), wanted its latest 1@$latest"
on_disk 2
expect_exit 0 timeout 120 "$T2EXP" resume 2 --quiet
[ "$(sql "SELECT state || ' ' || batches_trained FROM trials WHERE experiment_id = 2")" = "COMPLETED 60" ] ||
  fail "the resumed trial: $(sql "SELECT * FROM trials WHERE experiment_id = 2")"
[ -z "$(active 2)" ] || fail "completed with a keep-nothing policy, experiment 2 kept $(active 2)"
on_disk 2
store_ok

have_fashion_mnist || { echo "ckpt_gc: skipped (no dataset-fashion-mnist)"; exit 77; }
mlp_config "$WORK/c.yaml" 400 "checkpoint_storage: {save_trial_latest: 2, save_trial_best: 1, save_experiment_best: 0}"
expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet
[ "$(sql "SELECT count(*) FROM checkpoints WHERE trial_id IN (SELECT id FROM trials WHERE experiment_id = 3)")" = 8 ] || fail "8 checkpoints written (every 50 of 400 batches)"
mine="trial_id IN (SELECT id FROM trials WHERE experiment_id = 3)"
active=$(sql "SELECT group_concat(batches) FROM (SELECT batches FROM checkpoints WHERE state='ACTIVE' AND $mine ORDER BY batches)")
best=$(sql "SELECT batches FROM checkpoints WHERE metric IS NOT NULL AND $mine ORDER BY metric DESC, batches DESC LIMIT 1")
want=$(printf '%s\n' 350 400 "$best" | sort -n | uniq | paste -sd,)
[ "$active" = "$want" ] || fail "kept $active, wanted $want"
on_disk 3
expect_exit 0 "$T2EXP" checkpoints 3 --csv
[ "$(wc -l <<<"$OUT")" = "$(( $(sql "SELECT count(*) FROM checkpoints WHERE state='ACTIVE' AND $mine") + 1 ))" ] || fail "t2exp checkpoints lists the active ones"
echo "ckpt_gc: ok"
