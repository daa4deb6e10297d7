#!/usr/bin/env bash
# Warm starts: searcher.source_checkpoint given as a checkpoint's uuid and searcher.source_trial_id
# find the same archive and give bit-identical runs; --from-checkpoint gives that run too and is
# remembered for `resume`; source_checkpoint_optimizer also restores the momentum, which changes
# the weights; bad sources stop `create` before any trial runs.
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "ckpt_warm_start: skipped (no dataset-fashion-mnist)"; exit 77; }

mlp_config "$WORK/src.yaml" 100
expect_exit 0 "$T2EXP" create "$WORK/src.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet # experiment 1
uuid=$(sql "SELECT uuid FROM checkpoints WHERE trial_id=1 AND state='ACTIVE' ORDER BY batches DESC LIMIT 1")
src=$(sql "SELECT path FROM checkpoints WHERE uuid='$uuid'")
[ -n "$uuid" ] && [ -f "$src" ] || fail "experiment 1 left no checkpoint"

warm_log() { exp_logs "$1"; }

create() { expect_exit "$1" "$T2EXP" create "$WORK/src.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet "${@:2}"; }
create 0 --config searcher.source_checkpoint="$uuid" # 2
expect_in "$(warm_log 2)" "warm start from $src: parameters"
create 0 --config searcher.source_trial_id=1 # 3
expect_in "$(warm_log 3)" "warm start from $src: parameters"
export_last 2 "$WORK/2.bin"
export_last 3 "$WORK/3.bin"
cmp -s "$WORK/2.bin" "$WORK/3.bin" || fail "the uuid and the trial id found the same checkpoint, yet the runs differ"
export_last 1 "$WORK/1.bin"
cmp -s "$WORK/1.bin" "$WORK/2.bin" && fail "the warm-started run did not train"

# --from-checkpoint: the same run, and the stored overrides remember it (absolute) for resume.
(cd "$WORK" && expect_exit 0 "$T2EXP" create src.yaml "$TRIALS/fashion_mnist_mlp.so" --quiet --from-checkpoint "$src") # 4
export_last 4 "$WORK/4.bin"
cmp -s "$WORK/2.bin" "$WORK/4.bin" || fail "--from-checkpoint differs from source_checkpoint"
sql "SELECT value FROM experiments, json_each(experiments.overrides) WHERE experiments.id=4" \
  | grep -qxF "searcher.source_checkpoint=\"$src\"" || fail "--from-checkpoint is not kept in the stored overrides"

# With the optimizer state: same data, same seed, only the momentum differs.
create 0 --config searcher.source_checkpoint="$uuid" --config searcher.source_checkpoint_optimizer=true # 5
expect_in "$(warm_log 5)" "warm start from $src: parameters and optimizer state"
export_last 5 "$WORK/5.bin"
cmp -s "$WORK/2.bin" "$WORK/5.bin" && fail "restoring the momentum changed nothing"

# Bad sources: exit 2, no trial run.
create 2 --config searcher.source_checkpoint=00000000-0000-4000-8000-000000000000
expect_in "$OUT" "searcher.source_checkpoint: checkpoint 00000000-0000-4000-8000-000000000000: not a file, EXPERIMENT, EXPERIMENT.N, nor the uuid of an active checkpoint"
create 2 --config searcher.source_trial_id=99
expect_in "$OUT" "searcher.source_trial_id: this store has no trial 99 (t2exp trials EXP lists the ids)"
create 2 --config searcher.source_checkpoint_uuid=00000000-0000-4000-8000-000000000000
expect_in "$OUT" "searcher.source_checkpoint_uuid: checkpoint 00000000-0000-4000-8000-000000000000: not a file"
create 2 --from-checkpoint "$WORK/src.yaml"
expect_in "$OUT" "--from-checkpoint: checkpoint $WORK/src.yaml:"
[ "$(sql "SELECT count(*) FROM trials")" = 5 ] || fail "a bad warm start ran a trial"
store_ok
echo "ckpt_warm_start: ok"
