#!/usr/bin/env bash
# bench/run_data.sh — the `data` benchmark: Fashion-MNIST load (gzip IDX -> float32 in memory),
# cached (mmap) load, and loader throughput, against the numpy+gzip reference measured in the
# same run (best of 3 each, page cache warm). Ends with the one summary line
#   data: ratio=<numpy_s/load_s> load_s=… numpy_s=… cached_ratio=<numpy_s/cached_s> loader_img_per_s=…
# Needs dataset-fashion-mnist and python3-numpy. BUILD selects the build directory (default build).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$src/build}
ref=${T2EXP_SHARED:-$src/../shared}/bench/numpy_load.py

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release && cmake --build "$build" --target bench_data -j"$(nproc)"; } >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi

ours=$("$build/bench/data" 3)
echo "$ours"
numpy_s=
for _ in 1 2 3; do
  line=$(/usr/bin/python3 "$ref")
  echo "$line"
  s=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$line")
  if [ -z "$numpy_s" ] || awk -v a="$s" -v b="$numpy_s" 'BEGIN{exit !(a<b)}'; then numpy_s=$s; fi
done

get() { sed -n "s/^$1=//p" <<<"$ours"; }
load_s=$(get load_s)
cached_s=$(get cached_s)
awk -v n="$numpy_s" -v l="$load_s" -v c="$cached_s" -v u8="$(get load_u8_s)" -v cf="$(get cached_float_s)" -v co="$(get cached_open_s)" \
    -v r="$(get loader_img_per_s)" -v ra="$(get loader_aug_img_per_s)" 'BEGIN{
  printf "data: ratio=%.2f load_s=%s numpy_s=%s cached_ratio=%.1f loader_img_per_s=%s", n/l, l, n, n/c, r
  printf " load_u8_s=%s cached_s=%s cached_open_s=%s cached_float_s=%s loader_aug_img_per_s=%s\n", u8, c, co, cf, ra }'
