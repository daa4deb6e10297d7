#!/usr/bin/env bash
# The ResNet example (trials/resnet_fashion_mnist.c: residual blocks with batchnorm, two stride-2
# stages with 1x1 projections, global average pooling) on Fashion-MNIST through `t2exp create`,
# short: width 8 for 300 batches of 64 (a third of an epoch, ~20k images), then one validation over
# the 10000 test images, which must clear 0.50 (chance is 0.10). After a third of an epoch at a constant rate, with
# batchnorm's running statistics still settling, the figure moves a lot with float-level changes:
# 0.746 with an avgpool2d head and 0.632 with t2_net_global_avgpool (the same math), so the floor
# only catches a net that does not learn; the full config reaches ~0.9.
# Also: the projections are in the checkpoint's tensors. Skipped without the dataset package.
source "$(dirname "$0")/common.bash"
if [ ! -e "${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}/train-images-idx3-ubyte.gz" ]; then
  echo "resnet_fashion_mnist: skipped (apt-get install dataset-fashion-mnist)"; exit 77
fi
expect_exit 0 "$T2EXP" create "$EXAMPLES/resnet_fashion_mnist.yaml" "$TRIALS/resnet_fashion_mnist.so" --quiet \
  --config 'searcher.max_length={batches: 300}' --config hyperparameters.width=8 \
  --config hyperparameters.global_batch_size=64 --config hyperparameters.cosine_epochs=0 \
  --config hyperparameters.learning_rate=0.05
[ "$(sql "SELECT state FROM trials WHERE id=1")" = COMPLETED ] || fail "the trial did not complete"
[ "$(sql "SELECT batches_trained FROM trials WHERE id=1")" = 300 ] || fail "300 batches expected"
acc=$(sql "SELECT best_metric FROM experiments WHERE id=1")
echo "resnet_fashion_mnist: validation_accuracy $acc after 300 batches of 64 (floor 0.50)"
awk -v a="$acc" 'BEGIN { exit !(a > 0.50) }' || fail "validation accuracy $acc (wanted > 0.50)"
# Stage 2 and 3 project their skip input: 1x1 convolutions 8->16 and 16->32 with biases.
export_last 1 "$WORK/params.bin"
grep -q '^[0-9]*\.residual\.proj_weight,16x8x1x1,' <<<"$OUT" || fail "export lacks the 8->16 projection: $OUT"
grep -q '^[0-9]*\.residual\.proj_weight,32x16x1x1,' <<<"$OUT" || fail "export lacks the 16->32 projection: $OUT"
echo "resnet_fashion_mnist: ok"
