#!/usr/bin/env bash
# bench/run_checkpoint.sh — the `checkpoint` benchmark: writing (CRC-32C, tar, fsync, rename) and
# restoring (read, validate, copy into a live net + optimizer) the seeds' CNN with SGD momentum,
# against raw write+fsync / read of the same bytes in the same directory, same run (medians of
# ITERS alternating rounds). Ends with the summary line
#   checkpoint: ratio=<our write bandwidth / raw> restore_ratio=<our restore bandwidth / raw read> …
# and then the cost of checkpointing at the example config's period (once an epoch):
#   checkpoint_period: epoch_s=<60000 images at bench/cnn's training rate> cost_pct=<write_ms / epoch>
# DIR selects the directory (default $TMPDIR, else /tmp); extra arguments go to build/bench/checkpoint
# (--compression gzip|zstd, --cold). BUILD selects the build directory (default build).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$src/build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release &&
       cmake --build "$build" --target bench_checkpoint bench_cnn -j"$(nproc)"; } >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
line=$("$build/bench/checkpoint" --iters "${ITERS:-20}" --dir "${DIR:-${TMPDIR:-/tmp}}" "$@")
echo "$line"
cnn=$("$build/bench/cnn" --bench 50 --threads 2)
awk -v w="$(sed -n 's/.* write_ms=\([0-9.]*\).*/\1/p' <<<"$line")" \
    -v r="$(sed -n 's/.*train_img_per_s=\([0-9.]*\).*/\1/p' <<<"$cnn")" 'BEGIN {
  e = 60000 / r; printf "checkpoint_period: epoch_s=%.1f write_ms=%s cost_pct=%.3f\n", e, w, 100 * w / 1000 / e }'

