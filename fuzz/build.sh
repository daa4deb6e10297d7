#!/usr/bin/env bash
# fuzz/build.sh — builds the libFuzzer harnesses with clang (ASan + UBSan) straight from the data
# and common sources, and makes a seed corpus. Usage: fuzz/build.sh [outdir, default build-fuzz]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build-fuzz}  # /build* is already git-ignored
mkdir -p "$out"
# Every source is compiled once, instrumented for coverage without libFuzzer's main
# (fuzzer-no-link), as many compiles at a time as there are cores; then each harness links the
# objects it needs. (Each harness compiled its own sources before: the common files five times.)
flags=(-std=c11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
  -I"$src/framework/include" -I"$src/framework/common" -I"$src/framework" -I"$src" -DT2EXP_VERSION_STRING=\"fuzz\")
libs=(-lyaml -larchive -ldeflate -lcsv $(pkg-config --libs openblas) -lpthread -lm)

# The common sources but blas_core.c, which needs the data module and no harness but fuzz_idx reaches.
common=()
for f in "$src"/framework/common/*.c; do [ "$(basename "$f")" = blas_core.c ] || common+=("$f"); done
json=("$src"/configs/value.c "$src"/configs/json.c "$src"/configs/json_double.c "$src"/configs/json_number.c
  "$src"/configs/keyidx.c)
idx_src=("$src"/framework/data/*.c "$src"/framework/common/*.c)
ckpt_src=("$src"/checkpoints/*.c "${json[@]}" "${common[@]}" "$src"/framework/nn/*.c "$src"/framework/optim/*.c)
config_src=("$src"/configs/*.c "$src"/searchers/*.c "${common[@]}")
protocol_src=("$src"/framework/protocol/*.c "$src"/framework/runner/channel.c "$src"/framework/runner/channel_reader.c
  "$src"/framework/runner/channel_writer.c "$src"/framework/runner/channel_auth.c "${json[@]}" "${common[@]}")

# o FILE... — the objects of the sources (their paths under $out/obj).
o() { local f; for f in "$@"; do printf '%s\n' "$out/obj/${f#"$src"/}.o"; done; }
# compile FILE — one source to its object; a failure prints clang's words and fails the build.
compile() {
  local obj; obj=$(o "$1")
  mkdir -p "$(dirname "$obj")" && clang "${flags[@]}" -c "$1" -o "$obj" 2>"$obj.log" || { cat "$obj.log" >&2; return 1; }
}
mapfile -t sources < <(printf '%s\n' "${idx_src[@]}" "${ckpt_src[@]}" "${config_src[@]}" "${protocol_src[@]}" \
  "$src"/fuzz/fuzz_*.c "$src/framework/cli/args.c" | sort -u)
running=0 failed=0 cores=$(nproc)
for f in "${sources[@]}"; do
  if ((running >= cores)); then wait -n || failed=1; running=$((running - 1)); fi
  compile "$f" & running=$((running + 1))
done
while ((running > 0)); do wait -n || failed=1; running=$((running - 1)); done
((failed == 0)) || { echo "fuzz/build.sh: a source did not compile" >&2; exit 1; }
python3 "$src/fuzz/make_seeds.py" "$out/seeds" & seeds=$!

# harness NAME SOURCE... — links fuzz_NAME from its harness and the sources' objects.
harness() {
  local name=$1; shift
  mapfile -t objs < <(o "$src/fuzz/fuzz_$name.c" "$@")
  clang -fsanitize=fuzzer,address,undefined "${objs[@]}" "${libs[@]}" "${extra[@]}" -o "$out/fuzz_$name"
}
extra=()
harness idx "${idx_src[@]}"
harness checkpoint "${ckpt_src[@]}"
harness config "${config_src[@]}"
harness json "${json[@]}" "${common[@]}"
extra=(-lcrypto)
harness protocol "${protocol_src[@]}"
extra=()
harness cli "$src/framework/cli/args.c"

# The checkpoint reader's file built once more as the program that writes real checkpoints of the
# harness's model as seeds (its own main, no libFuzzer).
mapfile -t objs < <(o "${ckpt_src[@]}")
clang -std=c11 -g -O1 -fsanitize=address,undefined -I"$src/framework/include" -I"$src/framework/common" \
  -I"$src/framework" -I"$src" -DT2EXP_VERSION_STRING=\"fuzz\" -DT2_FUZZ_MAKE_SEEDS "$src/fuzz/fuzz_checkpoint.c" \
  "${objs[@]}" "${libs[@]}" -o "$out/make_checkpoint_seeds"
mkdir -p "$out/checkpoint_seeds"
"$out/make_checkpoint_seeds" "$out/checkpoint_seeds"
wait "$seeds"
echo "built in $out: fuzz_idx (seeds in seeds/), fuzz_checkpoint (seeds in checkpoint_seeds/), fuzz_config,"
echo "fuzz_json, fuzz_protocol, fuzz_cli (corpora in $src/fuzz/corpus/NAME)"
