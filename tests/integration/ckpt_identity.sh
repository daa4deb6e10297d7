#!/usr/bin/env bash
# A checkpoint file is the checkpoint its name says: another trial's checkpoint copied over it is
# refused by export, evaluate and the resume that would continue from it, each naming both uuids
# (they used it silently: another trial's weights under this one's name). And `model register`
# takes the store's own checkpoint by the path `t2exp checkpoints` lists (it said "a file the
# store does not know").
source "$(dirname "$0")/common.bash"
Q="$TRIALS/quadratic.so"
cat > "$WORK/c.yaml" <<Y
name: identity
hyperparameters: {global_batch_size: 1, x: {type: categorical, vals: [1, 3]}, y: -2, model: 1}
searcher: {name: grid, metric: loss, max_length: {batches: 2}}
checkpoint_storage: {save_trial_latest: 1, save_trial_best: 0, save_experiment_best: 0}
Y
expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$Q" --quiet
ck() { sql "SELECT c.$2 FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = 1
            AND t.ordinal = $1 AND c.state = 'ACTIVE'"; }
p0=$(ck 0 path) u0=$(ck 0 uuid) p1=$(ck 1 path) u1=$(ck 1 uuid)
[ -f "$p0" ] && [ -f "$p1" ] || fail "no checkpoints: $p0 $p1"

# The store's path is the store's checkpoint: registered by it, the version names its uuid.
expect_exit 0 "$T2EXP" model register byname "$p1"
[ "$(sql "SELECT checkpoint_uuid FROM model_versions")" = "$u1" ] || fail "the version names another checkpoint"

cp "$p0" "$WORK/good0.tar"
cp "$p1" "$p0"
for cmd in "export 1.0 $WORK/out.bin" "export $u0 $WORK/out.bin" "evaluate $p0 $Q"; do
  expect_exit 2 "$T2EXP" $cmd
  expect_in "$OUT" "its name says checkpoint $u0, but it holds checkpoint $u1"
done
[ ! -e "$WORK/out.bin" ] || fail "export wrote the other trial's weights"
# A copy under another name is just a file: it is what it holds.
expect_exit 0 "$T2EXP" export "$WORK/good0.tar" "$WORK/out.bin"

# Resume: a paused trial whose latest checkpoint was replaced does not continue from it.
expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$Q" --detach --config searcher.max_length.batches=400 \
  --config hyperparameters.sleep_ms=20 --config min_checkpoint_period.batches=1 --config searcher.name=single \
  --config 'hyperparameters.x=1' --config max_restarts=0
wait_for "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = 2" 1200
expect_exit 0 "$T2EXP" pause 2
p2=$(sql "SELECT c.path FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = 2
          AND c.state = 'ACTIVE' ORDER BY c.batches DESC LIMIT 1")
cp "$p1" "$p2"
expect_exit 1 "$T2EXP" resume 2 --plain
[ "$(sql "SELECT state FROM experiments WHERE id = 2")" = ERRORED ] || fail "experiment 2 should end ERRORED"
expect_in "$(sql "SELECT error FROM trials WHERE experiment_id = 2")" "but it holds checkpoint $u1"
store_ok
echo "ckpt_identity: a replaced checkpoint is refused by export, evaluate and resume; model register takes the store's path"
