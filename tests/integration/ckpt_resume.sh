#!/usr/bin/env bash
# SIGKILL the controller mid-experiment, then `t2exp resume`: the experiment completes, its final
# weights equal an uninterrupted run's bit for bit, and every step's metrics appear exactly once
# with the uninterrupted run's values.
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "ckpt_resume: skipped (no dataset-fashion-mnist)"; exit 77; }
mlp_config "$WORK/c.yaml" 300 "checkpoint_storage: {save_trial_latest: 1, save_trial_best: 0}"

expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet   # experiment 1: uninterrupted

"$T2EXP" create "$WORK/c.yaml" "$TRIALS/fashion_mnist_mlp.so" --plain > "$WORK/create2.log" 2>&1 &
ctl=$!
wait_for "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = 2 AND c.batches >= 100"
kill -KILL "$ctl"
wait "$ctl" 2>/dev/null || true
for _ in $(seq 100); do [ -n "$(own_pids fashion_mnist_mlp.so)" ] || break; sleep 0.05; done
[ "$(sql "SELECT state FROM experiments WHERE id=2")" = ACTIVE ] || fail "a killed controller leaves the experiment ACTIVE"

expect_exit 0 "$T2EXP" resume 2 --plain
expect_in "$OUT" "experiment 2 COMPLETED"
[ "$(sql "SELECT batches_trained FROM trials WHERE experiment_id=2")" = 300 ] || fail "300 batches"

final() { sql "SELECT c.path FROM checkpoints c JOIN trials t ON t.id=c.trial_id WHERE t.experiment_id=$1 AND c.batches=300 AND c.state='ACTIVE'"; }
a=$(final 1); b=$(final 2)
[ -n "$a" ] && [ -n "$b" ] || fail "final checkpoints missing"
[ "$(params_sha "$a")" = "$(params_sha "$b")" ] || fail "resumed weights differ from the uninterrupted run's"

# The same metrics, each exactly once (the runner's own timings aside).
q="SELECT m.kind || ' ' || m.batches || ' ' || m.name || ' ' || m.value FROM metrics m JOIN trials t ON t.id=m.trial_id
   WHERE t.experiment_id=%d AND m.name NOT LIKE 't2exp.%%' ORDER BY 1"
[ "$(sql "$(printf "$q" 1)")" = "$(sql "$(printf "$q" 2)")" ] || fail "metrics differ between the runs"
[ "$(sql "SELECT count(*) FROM metrics m JOIN trials t ON t.id=m.trial_id WHERE t.experiment_id=2 AND m.name='loss'")" = 12 ] || fail "12 loss reports"
# Garbage collection kept exactly the latest checkpoint of each run.
[ "$(ls "$T2EXP_HOME"/experiments/2/checkpoints | wc -l)" = 1 ] || fail "one checkpoint file should remain"
store_ok
echo "ckpt_resume: ok"
