#!/usr/bin/env bash
# tsan.sh [BUILD_DIR] — ThreadSanitizer over the code that runs threads: the store's writer and
# checkpoint threads (test_store_async, and a real search through the CLI, whose controller writes
# from both while its workers run trials), the compute pool (test_nn_parts) and the data loader's
# prefetch (test_data_loader) and the hostfile's lookup threads (test_host_alias). Any report fails (halt_on_error, exit code 66). OpenBLAS runs one
# thread: its own synchronisation is not instrumented, so its threads would report false races.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-tsan}
# clang's runtime: GCC 12's (Debian 12) crashed in the dynamic loader here, before main. The test
# packages include clang (the fuzzers need it too).
command -v clang >/dev/null || { echo "tsan: skipped (no clang)"; exit 77; }
CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DT2EXP_TSAN=ON -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >/dev/null
cmake --build "$dir" -j"$(nproc)" --target t2exp_cli trial_quadratic test_store_async test_nn_parts test_data_loader \
  test_host_alias >/dev/null
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" OPENBLAS_NUM_THREADS=1
for t in test_store_async test_nn_parts test_data_loader test_host_alias; do
  "$dir/tests/$t" >"$dir/$t.log" 2>&1 || { tail -40 "$dir/$t.log"; echo "tsan: $t failed"; exit 1; }
  echo "tsan: $t passed"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's/max_trials: 10000/max_trials: 3000/' bench/configs/trials_random.yaml >"$work/search.yaml"
if ! T2EXP_HOME="$work/home" "$dir/t2exp" create "$work/search.yaml" "$dir/trials/quadratic.so" --plain >"$work/out.log" 2>&1 ||
  grep -q ThreadSanitizer "$work/out.log" || ! grep -q "3000 trial(s) completed, 0 errored" "$work/out.log"; then
  tail -40 "$work/out.log"
  echo "tsan: a 3000-trial search through the CLI failed"
  exit 1
fi
echo "tsan: a 3000-trial search passed (controller, writer and checkpoint threads, 2 workers)"
