#!/usr/bin/env bash
# fuzz/build.sh — builds the libFuzzer harnesses with clang (ASan + UBSan) straight from the data
# and common sources, and makes a seed corpus. Usage: fuzz/build.sh [outdir, default build-fuzz]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build-fuzz}  # /build* is already git-ignored
mkdir -p "$out"
clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$src/framework/include" -I"$src/framework/common" -I"$src/framework" \
  "$src/fuzz/fuzz_idx.c" "$src"/framework/data/*.c "$src"/framework/common/*.c \
  -larchive $(pkg-config --libs openblas) -lpthread -lm -o "$out/fuzz_idx"
python3 "$src/fuzz/make_seeds.py" "$out/seeds"
echo "built $out/fuzz_idx; seeds in $out/seeds"
