#!/usr/bin/env bash
# fuzz/ci.sh — CI's fuzzing: builds every libFuzzer harness (fuzz/build.sh) and runs each for
# FUZZ_SECONDS (default 60) on its committed corpus, fuzz/corpus/NAME, all at once. New inputs go
# to a scratch copy, never into the committed corpus. A crash, leak, sanitizer report or round-trip
# failure fails the script and leaves the input in build-fuzz/findings/NAME/. Exits 77 (skipped)
# when clang or its libFuzzer runtime is missing.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build-fuzz}
mkdir -p "$out" && out=$(cd "$out" && pwd) # absolute: each harness runs from its findings directory
secs=${FUZZ_SECONDS:-60}
if ! command -v clang >/dev/null || ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
    clang -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  echo "fuzz/ci.sh: skipped (needs clang with libFuzzer: apt-get install clang libclang-rt-14-dev)"
  exit 77
fi
t0=$SECONDS
bash "$src/fuzz/build.sh" "$out" > "$out.build.log" 2>&1 || { cat "$out.build.log"; exit 1; }
echo "fuzz/ci.sh: harnesses built in $((SECONDS - t0)) s"
harnesses=()
for d in "$src"/fuzz/corpus/*/; do
  name=$(basename "$d")
  [ -x "$out/fuzz_$name" ] && harnesses+=("$name")
done
run_one() { # NAME
  local name=$1 work="$out/work/$1" findings="$out/findings/$1"
  rm -rf "$work" "$findings" && mkdir -p "$work" "$findings"
  cp "$src/fuzz/corpus/$name"/* "$work"/ 2>/dev/null || true
  (cd "$findings" && "$out/fuzz_$name" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=60 \
    -print_final_stats=1 "$work" > "$out/$name.log" 2>&1)
}
failed=()
# All at once: each gets its full FUZZ_SECONDS of wall time (a share of the cores), and the whole
# step takes FUZZ_SECONDS rather than that much per group.
pids=()
for name in "${harnesses[@]}"; do run_one "$name" & pids+=($!); done
for k in "${!pids[@]}"; do
  name=${harnesses[$k]}
  if wait "${pids[$k]}"; then
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/$name.log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz/ci.sh: $name: $execs executions in ${secs} s, no finding"
  else
    echo "fuzz/ci.sh: $name: FINDING (input in $out/findings/$name/):"
    grep -E 'ERROR|SUMMARY|Test unit written' "$out/$name.log" | head -5
    failed+=("$name")
  fi
done
echo "fuzz/ci.sh: ${#harnesses[@]} harnesses in $((SECONDS - t0)) s"
[ ${#failed[@]} -eq 0 ] || { echo "fuzz/ci.sh: findings in: ${failed[*]}"; exit 1; }
