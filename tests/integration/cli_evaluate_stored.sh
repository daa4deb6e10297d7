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
# The file alone (given as CONFIG) still points at the missing dir: the override was what made it work.
expect_exit 2 "$T2EXP" evaluate "$ck" "$TRIALS/fashion_mnist_mlp.so" "$WORK/c.yaml"
expect_in "$OUT" "/nonexistent/fashion"
# Overrides on the evaluate command line come last and win over the stored ones.
expect_exit 2 "$T2EXP" evaluate "$ck" "$TRIALS/fashion_mnist_mlp.so" --config data.dir=/nonexistent/again
expect_in "$OUT" "/nonexistent/again"
echo "cli_evaluate_stored: ok"
