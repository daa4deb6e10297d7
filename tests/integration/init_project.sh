#!/usr/bin/env bash
# t2exp init, as a new user meets it: install t2exp into a prefix (the README's install step),
# `t2exp init demo` with the installed program, build the project with its own CMakeLists.txt
# through find_package(t2exp), run its experiment (shortened with --config, which also replaces the
# config's epochs by batches), and open the dashboard on the result. Then what init refuses.
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "init_project: skipped (no dataset-fashion-mnist)"; exit 77; }
command -v curl >/dev/null || { echo "init_project: skipped (no curl)"; exit 77; }
prefix="$WORK/prefix"
cmake --install "$T2EXP_BUILD" --prefix "$prefix" >/dev/null
T2="$prefix/bin/t2exp"
[ -x "$T2" ] || fail "the install put no t2exp in $prefix/bin"
san=()
if grep -q "T2EXP_SANITIZE:BOOL=ON" "$T2EXP_BUILD/CMakeCache.txt"; then
  san=(-DCMAKE_C_FLAGS="-fsanitize=address,undefined" -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined")
fi

cd "$WORK"
expect_exit 0 "$T2" init demo
expect_in "$OUT" "wrote demo/"
for f in trial.c const.yaml CMakeLists.txt README.md; do [ -s "demo/$f" ] || fail "init wrote no demo/$f"; done
grep -q 'find_package(t2exp' demo/CMakeLists.txt || fail "CMakeLists.txt does not use find_package(t2exp)"
grep -q '^name: demo$' demo/const.yaml || fail "const.yaml is not named demo"
grep -q '\.name = "demo"' demo/trial.c || fail "trial.c is not named demo"
! grep -q tutorial_trial demo/const.yaml demo/trial.c || fail "the scaffold still says tutorial_trial"
# The trial uses every callback of the vtable.
for cb in prepare_data build_model build_training_loader build_validation_loader train_batch evaluate_batch destroy; do
  grep -q "\.$cb = $cb" demo/trial.c || fail "trial.c does not set .$cb"
done
# The README's three commands are the ones that work below.
for c in "cmake -S . -B build" "t2exp create const.yaml build/trial.so" "t2exp dashboard"; do
  grep -qF "$c" demo/README.md || fail "README.md lacks '$c'"
done

cmake -S demo -B demo/build -DCMAKE_PREFIX_PATH="$prefix" "${san[@]}" > "$WORK/cmake.log" 2>&1 ||
  fail "configuring the project failed: $(tail -n 20 "$WORK/cmake.log")"
cmake --build demo/build > "$WORK/build.log" 2>&1 || fail "building the project failed: $(tail -n 20 "$WORK/build.log")"
[ -f demo/build/trial.so ] || fail "the build made no demo/build/trial.so"

# Built from source and not installed: the build directory is a package too (on PATH, as for a user
# who runs build/t2exp; find_package searches PATH's directories). Its config once named a targets
# file only the install had.
PATH="$T2EXP_BUILD:$PATH" cmake -S demo -B demo/build-tree "${san[@]}" > "$WORK/cmake2.log" 2>&1 ||
  fail "configuring the project against the build tree failed: $(tail -n 20 "$WORK/cmake2.log")"
grep -q "t2exp_DIR:PATH=$T2EXP_BUILD\$" demo/build-tree/CMakeCache.txt || fail "find_package took another t2exp: $(grep t2exp_DIR demo/build-tree/CMakeCache.txt)"
cmake --build demo/build-tree > "$WORK/build2.log" 2>&1 || fail "building against the build tree failed: $(tail -n 20 "$WORK/build2.log")"
[ -f demo/build-tree/trial.so ] || fail "the build-tree build made no trial.so"

expect_exit 0 "$T2" create demo/const.yaml demo/build/trial.so --quiet \
  --config searcher.max_length.batches=60 --config min_validation_period.batches=30
expect_exit 0 "$T2" describe 1 --json
[ "$(json "json_extract(j, '$.experiment.name')")" = demo ] || fail "the experiment is not named demo: $OUT"
[ "$(json "json_extract(j, '$.experiment.state')")" = COMPLETED ] || fail "the experiment did not complete: $OUT"
n=$(sql "SELECT count(DISTINCT batches) FROM metrics WHERE kind = 'validation'")
[ "$n" -eq 2 ] || fail "expected validations at batches 30 and 60, got $n"
acc=$(sql "SELECT printf('%.4f', value) FROM metrics WHERE kind = 'validation' AND name = 'validation_accuracy' AND batches = 60")

start_dashboard "$T2"
trap 'kill $DASH 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT
port=$PORT
page=$(curl -s -L -c "$WORK/cookies" -b "$WORK/cookies" --max-time 10 "$DASH_URL") # as a browser: cookie, then /
grep -qi "<html" <<<"$page" || fail "the dashboard's first page is not HTML: ${page:0:200}"
OUT=$(curl -s --max-time 10 -b "$WORK/cookies" "http://127.0.0.1:$port/api/experiments")
[ "$(json "json_extract(j, '\$[0].name')")" = demo ] || fail "the dashboard does not list demo: $OUT"

# What init refuses, losing nothing.
echo keep > "$WORK/demo/mine.txt"
expect_exit 2 "$T2" init demo
expect_in "$OUT" "demo already exists"
[ "$(cat "$WORK/demo/mine.txt")" = keep ] || fail "init touched an existing directory"
expect_exit 2 "$T2" init 1bad
expect_in "$OUT" "'1bad' is not a project name"
expect_exit 2 "$T2" init
expect_exit 2 "$T2" init a b
expect_exit 2 "$T2" init --force x
expect_in "$OUT" "unknown option --force"
chmod 0555 "$WORK" 2>/dev/null
if ! touch "$WORK/probe" 2>/dev/null; then
  expect_exit 1 "$T2" init "$WORK/nowrite"
  [ ! -e "$WORK/nowrite" ] || fail "a failed init left $WORK/nowrite"
fi
chmod 0755 "$WORK"
echo "init_project: ok (demo built with find_package, ran 60 batches, best validation_accuracy ${acc:-?}, listed by the dashboard)"
