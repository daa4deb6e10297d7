#!/usr/bin/env bash
# `t2exp evaluate CKPT TRIAL.so` without a CONFIG uses the config as the experiment ran it: the
# stored file AND its --config overrides (here the file names a data dir that does not exist and
# the override the real one, so evaluating with the file alone fails).
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "cli_evaluate_stored: skipped (no dataset-fashion-mnist)"; exit 77; }

mlp_config "$WORK/c.yaml" 50
sed -i 's|^data: {dir: ""}|data: {dir: /nonexistent/fashion}|' "$WORK/c.yaml"
grep -q "/nonexistent/fashion" "$WORK/c.yaml" || fail "the config's data line was not rewritten"
real="${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}"
expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet --config "data.dir=$real"
ck=$(sql "SELECT path FROM checkpoints WHERE state='ACTIVE' ORDER BY batches DESC LIMIT 1")
[ -f "$ck" ] || fail "no checkpoint"

expect_exit 0 "$T2EXP" evaluate "$ck" "$TRIALS/fashion_mnist_mlp.so"
expect_in "$OUT" "validation_accuracy"
# The config's warnings are said, as create says them (evaluate said nothing: probe_M).
expect_exit 0 "$T2EXP" evaluate "$ck" "$TRIALS/fashion_mnist_mlp.so" --config resources.slots=1
expect_in "$OUT" "warning: --config resources.slots=1: key 'resources.slots' is accepted but ignored"
# The file alone (given as CONFIG) still points at the missing dir: the override was what made it work.
expect_exit 2 "$T2EXP" evaluate "$ck" "$TRIALS/fashion_mnist_mlp.so" "$WORK/c.yaml"
expect_in "$OUT" "/nonexistent/fashion"
# Overrides on the evaluate command line come last and win over the stored ones.
expect_exit 2 "$T2EXP" evaluate "$ck" "$TRIALS/fashion_mnist_mlp.so" --config data.dir=/nonexistent/again
expect_in "$OUT" "/nonexistent/again"
# A checkpoint another store wrote is never evaluated with this store's experiment of the same
# number: every store numbers from 1, and another home that ran the very same config has the same
# experiment 1, trial 1 and hparams (matching those was not enough). Its data dir is then moved
# away, as another home's config would differ: without a CONFIG the checkpoint is refused, naming
# its trial; with one it runs.
other="$WORK/other-home"
expect_exit 0 "$T2EXP" --home "$other" create "$WORK/c.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet --config "data.dir=$real"
[ "$(sqlite3 "$other/t2exp.db" "SELECT hparams FROM trials WHERE id = 1")" = "$(sql "SELECT hparams FROM trials WHERE id = 1")" ] ||
  fail "the other home's trial 1 should have the same hparams"
expect_exit 2 "$T2EXP" --home "$other" evaluate "$ck" "$TRIALS/fashion_mnist_mlp.so"
expect_in "$OUT" "is not in the store $other/t2exp.db"
expect_in "$OUT" "give a CONFIG"
expect_exit 0 "$T2EXP" --home "$other" evaluate "$ck" "$TRIALS/fashion_mnist_mlp.so" "$WORK/c.yaml" --config "data.dir=$real"
expect_in "$OUT" "validation_accuracy"
# Its own checkpoints, even one garbage collection has deleted since a copy was made, are its own.
own=$(sqlite3 "$other/t2exp.db" "SELECT path FROM checkpoints ORDER BY batches LIMIT 1")
cp "$own" "$WORK/copy.tar"
sqlite3 "$other/t2exp.db" "UPDATE checkpoints SET state = 'DELETED' WHERE path = '$own'"
expect_exit 0 "$T2EXP" --home "$other" evaluate "$WORK/copy.tar" "$TRIALS/fashion_mnist_mlp.so"
expect_in "$OUT" "validation_accuracy"
echo "cli_evaluate_stored: ok"
