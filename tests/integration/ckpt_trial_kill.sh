#!/usr/bin/env bash
# SIGKILL a trial mid-training: the controller restarts it from its latest checkpoint and it
# finishes; restarts = 1, and it did not start over (it resumed past batch 0).
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "ckpt_trial_kill: skipped (no dataset-fashion-mnist)"; exit 77; }
mlp_config "$WORK/c.yaml" 400 "max_restarts: 2"
create_kill_trial "$WORK/c.yaml" "$WORK/create.log" "SELECT count(*) FROM checkpoints WHERE batches >= 100"
grep -q "killed by signal 9" "$WORK/create.log" || fail "the kill was not reported: $(cat "$WORK/create.log")"
[ "$(sql "SELECT restarts FROM trials WHERE id=1")" = 1 ] || fail "restarts should be 1"
[ "$(sql "SELECT state FROM trials WHERE id=1")" = COMPLETED ] || fail "the trial should complete"
[ "$(sql "SELECT batches_trained FROM trials WHERE id=1")" = 400 ] || fail "400 batches expected"
grep -q "restored .* batch [1-9]" <(trial_log 1) || fail "the restart did not restore a checkpoint"
# Every training report once: 400 / 25 = 16 loss values.
[ "$(sql "SELECT count(*) FROM metrics WHERE trial_id=1 AND kind='training' AND name='loss'")" = 16 ] || fail "16 loss reports"
store_ok
echo "ckpt_trial_kill: ok"
