#!/usr/bin/env bash
# test.sh — the README's second command (and CI's): install what is missing, then build and run
# the whole suite twice: a plain Release build and an ASan+UBSan build; then ThreadSanitizer over
# the threaded code, and the fuzzers.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
t2exp_install_deps "${T2EXP_TEST_PACKAGES[@]}"
jobs=$(nproc)
# Warnings are errors here (not in users' builds): the code is -Wall -Wextra clean and stays so.
t2exp_build build -DCMAKE_COMPILE_WARNING_AS_ERROR=ON
(cd build && ctest --output-on-failure -j"$jobs")
t2exp_build build-asan -DT2EXP_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_COMPILE_WARNING_AS_ERROR=ON
# Without the plain_only tests (tests/CMakeLists.txt says which and why).
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs" -LE plain_only)
# ThreadSanitizer over the threaded code (the store's writer and checkpoint threads, the compute
# pool, the loader's prefetch) and a real search; about half a minute.
bash scripts/tsan.sh build-tsan || [ $? = 77 ]
# Every parser fuzzed for a minute on its committed corpus (clang is installed above, so this never
# skips here).
bash fuzz/ci.sh build-fuzz
echo "all tests passed (plain, sanitized, thread-sanitized and fuzzed)"
