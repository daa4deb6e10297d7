#!/usr/bin/env bash
# The real thing, small: the MLP example trial on Fashion-MNIST for one epoch through `t2exp
# create`, the data prepared once by prepare_data, metrics in the store. Skipped (exit 0 with a
# note) when the dataset package is not installed.
source "$(dirname "$0")/common.bash"
if [ ! -e "${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}/train-images-idx3-ubyte.gz" ]; then
  echo "fashion_mnist_mlp: skipped (apt-get install dataset-fashion-mnist)"; exit 77
fi
expect_exit 0 "$T2EXP" create "$EXAMPLES/fashion_mnist_mlp.yaml" "$TRIALS/fashion_mnist_mlp.so" \
  --config searcher.max_length.epochs=1 --plain
acc=$(sql "SELECT best_metric FROM experiments WHERE id=1")
awk -v a="$acc" 'BEGIN { exit !(a > 0.80) }' || fail "validation accuracy $acc after one epoch (wanted > 0.80)"
# 469 batches of 128 make the epoch; one validation at its end over the 10000 test images.
[ "$(sql "SELECT batches_trained FROM trials WHERE id=1")" = 469 ] || fail "469 batches expected"
[ "$(sql "SELECT count(*) FROM metrics WHERE kind='validation' AND name='validation_accuracy'")" = 1 ] || fail "one validation"
ls "$T2EXP_HOME"/cache/train-images-idx3-ubyte-*.t2c >/dev/null || fail "prepare_data did not write the cache"
echo "fashion_mnist_mlp: ok (validation_accuracy $acc)"
