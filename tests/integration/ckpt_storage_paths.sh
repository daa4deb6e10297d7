#!/usr/bin/env bash
# Where checkpoints go, as config-reference.md says: an absolute storage_path without host_path is
# the base directory itself, and with host_path (equal to it or below it) the same; a relative one
# is under the home, or under host_path. Each base is followed by the store id and experiment-N.
# (An absolute storage_path landed under the home before: HOME/abs/path/<id>/experiment-N.) And a
# relative searcher.source_checkpoint is recorded as the absolute path of the file create used, so
# a resume from another directory, even one with another file of that name, warm-starts from it.
source "$(dirname "$0")/common.bash"
Q="$TRIALS/quadratic.so"
cat > "$WORK/c.yaml" <<Y
name: paths
hyperparameters: {global_batch_size: 1, x: 2, y: -2, model: 1}
searcher: {name: single, metric: loss, max_length: {batches: 2}}
checkpoint_storage: {save_trial_latest: 1, save_trial_best: 0, save_experiment_best: 0}
Y
"$T2EXP" info > /dev/null # makes the home and its store
id() { sql "SELECT store_id FROM store_info"; }
# check N DIR: experiment N's checkpoint_dir is DIR/<store id>/experiment-N and holds its checkpoint.
check() {
  local want="$2/$(id)/experiment-$1" got
  got=$(sql "SELECT checkpoint_dir FROM experiments WHERE id = $1")
  [ "$got" = "$want" ] || fail "experiment $1: checkpoint_dir $got, wanted $want"
  [ "$(sql "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id = c.trial_id
            WHERE t.experiment_id = $1 AND c.state = 'ACTIVE' AND c.path LIKE '$want/%'")" = 1 ] ||
    fail "experiment $1: no ACTIVE checkpoint under $want"
  ls "$want"/*.tar > /dev/null || fail "experiment $1: no checkpoint file in $want"
}
expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$Q" --quiet --config checkpoint_storage.storage_path="$WORK/abs"
check 1 "$WORK/abs"
expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$Q" --quiet --config checkpoint_storage.host_path="$WORK/host" \
  --config checkpoint_storage.storage_path="$WORK/host/sub"
check 2 "$WORK/host/sub"
expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$Q" --quiet --config checkpoint_storage.host_path="$WORK/host" \
  --config checkpoint_storage.storage_path=rel
check 3 "$WORK/host/rel"
expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$Q" --quiet --config checkpoint_storage.storage_path=rel
check 4 "$T2EXP_HOME/rel"
[ ! -e "$T2EXP_HOME$WORK" ] || fail "something was written under the home at $T2EXP_HOME$WORK"

# source_checkpoint=ck.tar from $WORK/a: paused, then resumed from $WORK/b, which has another ck.tar.
mkdir -p "$WORK/a" "$WORK/b"
cp "$(sql "SELECT path FROM checkpoints WHERE state = 'ACTIVE' LIMIT 1")" "$WORK/a/ck.tar"
echo "not a checkpoint" > "$WORK/b/ck.tar"
(cd "$WORK/a" && expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$Q" --detach --config searcher.source_checkpoint=ck.tar \
  --config hyperparameters.sleep_ms=20 --config searcher.max_length.batches=30)
wait_for "SELECT count(*) FROM trials WHERE experiment_id = 5" 600
expect_exit 0 "$T2EXP" pause 5
expect_in "$(sql "SELECT overrides FROM experiments WHERE id = 5")" "searcher.source_checkpoint=\\\"$WORK/a/ck.tar\\\""
(cd "$WORK/b" && expect_exit 0 "$T2EXP" resume 5 --quiet)
[ "$(sql "SELECT state FROM experiments WHERE id = 5")" = COMPLETED ] || fail "experiment 5 did not complete"
store_ok
echo "ckpt_storage_paths: absolute and relative storage_path, with and without host_path, land where the docs say; a relative source_checkpoint is kept absolute"
