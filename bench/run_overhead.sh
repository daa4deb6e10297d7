#!/usr/bin/env bash
# The seeds' CNN through `t2exp create` (validation every 100 batches, metrics every 50) against
# the bare training loop of bench/cnn, same batch and threads, measured in this run. The ratio is
# the experiment's training throughput over the bare loop's (1.0 = no overhead; target >= 0.97).
set -euo pipefail
threads="${THREADS:-2}" batches="${BATCHES:-400}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bare=$(build/bench/cnn --bench "$batches" --threads "$threads")
echo "$bare"
T2EXP_HOME="$tmp/home" TMPDIR="$tmp" build/t2exp create configs/examples/fashion_mnist_cnn.yaml build/trials/fashion_mnist_cnn.so \
  --config searcher.max_length="{batches: $((batches + 100))}" --config min_validation_period="{batches: 100}" \
  --config scheduling_unit=50 --config min_checkpoint_period="{batches: 100}" --quiet
# Throughput over the windows after the first 100 batches (the bare loop skips its warm-up too):
# samples over the sum of each window's duration.
exp=$(sqlite3 "$tmp/home/t2exp.db" "
  SELECT sum(samples_per_s * 50 / batches_per_s) / sum(50 / batches_per_s)
  FROM report_timings WHERE kind = 'training' AND batches > 100")
vals=$(sqlite3 "$tmp/home/t2exp.db" "SELECT count(*) FROM metrics WHERE kind='validation' AND name='validation_accuracy'")
awk -v e="$exp" -v b="$(sed -n 's/.*train_img_per_s=\([0-9.]*\).*/\1/p' <<<"$bare")" -v v="$vals" 'BEGIN {
  printf "overhead: ratio=%.3f experiment_img_per_s=%.0f bare_img_per_s=%.0f overhead_pct=%.1f validations=%d\n", e / b, e, b, 100 * (1 - e / b), v }'
