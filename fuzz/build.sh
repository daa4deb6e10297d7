#!/usr/bin/env bash
# fuzz/build.sh — builds the libFuzzer harnesses with clang (ASan + UBSan) straight from the data
# and common sources, and makes a seed corpus. Usage: fuzz/build.sh [outdir, default build-fuzz]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build-fuzz}  # /build* is already git-ignored
mkdir -p "$out"
# The harnesses are independent: each compile runs in the background (every clang is one thread,
# so on a few cores this halves the build), and `finish` waits for all of them, failing if any did.
pids=()
bg() { "$@" & pids+=($!); }
finish() { local p rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done; pids=(); return $rc; }
bg clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$src/framework/include" -I"$src/framework/common" -I"$src/framework" \
  "$src/fuzz/fuzz_idx.c" "$src"/framework/data/*.c "$src"/framework/common/*.c \
  -larchive -ldeflate -lcsv $(pkg-config --libs openblas) -lpthread -lm -o "$out/fuzz_idx"
bg python3 "$src/fuzz/make_seeds.py" "$out/seeds"

# The common sources but blas_core.c, which needs the data module and no harness but fuzz_idx reaches.
common_src=()
for f in "$src"/framework/common/*.c; do [ "$(basename "$f")" = blas_core.c ] || common_src+=("$f"); done

# The checkpoint reader: the same file built twice, as the harness and as the program that writes
# real checkpoints of the harness's model as seeds.
ckpt_src=("$src"/checkpoints/*.c "$src"/configs/value.c "$src"/configs/json.c "$src"/configs/json_double.c "$src"/configs/json_number.c "$src"/configs/keyidx.c "${common_src[@]}"
  "$src"/framework/nn/*.c "$src"/framework/optim/*.c)
ckpt_flags=(-std=c11 -g -O1 -I"$src/framework/include" -I"$src/framework/common" -I"$src/framework" -I"$src"
  -DT2EXP_VERSION_STRING=\"fuzz\")
ckpt_libs=(-larchive -ldeflate $(pkg-config --libs openblas) -lpthread -lm)
bg clang "${ckpt_flags[@]}" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  "$src/fuzz/fuzz_checkpoint.c" "${ckpt_src[@]}" "${ckpt_libs[@]}" -o "$out/fuzz_checkpoint"
make_ckpt_seeds() {
  clang "${ckpt_flags[@]}" -DT2_FUZZ_MAKE_SEEDS "$src/fuzz/fuzz_checkpoint.c" "${ckpt_src[@]}" "${ckpt_libs[@]}" \
    -o "$out/make_checkpoint_seeds" && mkdir -p "$out/checkpoint_seeds" &&
    "$out/make_checkpoint_seeds" "$out/checkpoint_seeds"
}
bg make_ckpt_seeds

# The config loader (YAML, --config overrides, validation, the searcher built from it) and the JSON
# codec.
cfg_flags=(-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -I"$src/framework/include" -I"$src/framework/common" -I"$src/framework" -I"$src" -DT2EXP_VERSION_STRING=\"fuzz\")
cfg_libs=(-lyaml -larchive -ldeflate $(pkg-config --libs openblas) -lpthread -lm)
bg clang "${cfg_flags[@]}" "$src/fuzz/fuzz_config.c" "$src"/configs/*.c "$src"/searchers/*.c "${common_src[@]}" \
  "${cfg_libs[@]}" -o "$out/fuzz_config"
bg clang "${cfg_flags[@]}" "$src/fuzz/fuzz_json.c" "$src"/configs/value.c "$src"/configs/json.c "$src"/configs/json_double.c "$src"/configs/json_number.c "$src"/configs/keyidx.c \
  "${common_src[@]}" "${cfg_libs[@]}" -o "$out/fuzz_json"

# Channel frames and protocol messages: the frame reader, the JSON codec, the typed decoder and the
# controller's side of the handshake.
bg clang "${cfg_flags[@]}" "$src/fuzz/fuzz_protocol.c" "$src"/framework/protocol/*.c "$src"/framework/runner/channel.c \
  "$src"/framework/runner/channel_reader.c \
  "$src"/framework/runner/channel_writer.c \
  "$src"/framework/runner/channel_auth.c \
  "$src"/configs/value.c "$src"/configs/json.c "$src"/configs/json_double.c "$src"/configs/json_number.c "$src"/configs/keyidx.c "${common_src[@]}" "${cfg_libs[@]}" -lcrypto \
  -o "$out/fuzz_protocol"

# The command line's argument parsing (getopt_long over each command's options).
bg clang "${cfg_flags[@]}" "$src/fuzz/fuzz_cli.c" "$src/framework/cli/args.c" -o "$out/fuzz_cli"
finish
echo "built in $out: fuzz_idx (seeds in seeds/), fuzz_checkpoint (seeds in checkpoint_seeds/), fuzz_config,"
echo "fuzz_json, fuzz_protocol, fuzz_cli (corpora in $src/fuzz/corpus/NAME)"
