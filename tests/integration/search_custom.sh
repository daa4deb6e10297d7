#!/usr/bin/env bash
# searcher.name: custom through the real CLI: the example hill_climb.so climbs the quadratic trial
# (loss (x-1)^2 + (y+2)^2) past its random start, keeps every point in the space, and a paused and
# resumed climb makes the trials an uninterrupted one makes (save/load and the adapter's state);
# the library's path is kept absolute for resume. faulty_searcher.c breaks each rule: a length
# past max_length, a point outside the space, a second close, an operation outside an event, a
# failing callback (the experiment ends ERRORED with the library, the callback and the reason, and
# a resume after the fix finishes the search, and tells a missed invalid-hparams failure with its
# flag); and libraries that cannot serve (missing file, missing symbol, missing callback) make no
# experiment.
source "$(dirname "$0")/common.bash"
command -v sqlite3 >/dev/null || { echo "search_custom: skipped (no sqlite3)"; exit 77; }
command -v "${CC:-cc}" >/dev/null || { echo "search_custom: skipped (no C compiler)"; exit 77; }
HILL="$T2EXP_BUILD/searchers/hill_climb.so"
[ -f "$HILL" ] || fail "the example searcher was not built: $HILL"

# config NAME LIBRARY OPTIONS [EXTRA...] — $WORK/NAME.yaml for the quadratic trial.
config() {
  local name=$1 lib=$2 opts=$3; shift 3
  cat > "$WORK/$name.yaml" <<Y
name: $name
hyperparameters:
  global_batch_size: 1
  x: {type: double, minval: -5, maxval: 5}
  y: {type: double, minval: -5, maxval: 5}
  c: {type: categorical, vals: [a, b]}
searcher:
  name: custom
  library: $lib
  metric: loss
  max_length: {batches: 4}
  max_trials: 16
  max_concurrent_trials: 1
  options: $opts
$(printf '%s\n' "$@")
reproducibility: {experiment_seed: 11}
max_restarts: 0
Y
}
best() { sql "SELECT min(best_validation) FROM trials WHERE experiment_id = $1 AND ordinal $2"; }

config hill "$HILL" "{first: 4, step: 0.1}"
expect_exit 0 "$T2EXP" create "$WORK/hill.yaml" "$TRIALS/quadratic.so" --plain
expect_in "$OUT" "experiment 1 COMPLETED"
expect_in "$OUT" "16 trial(s) completed, 0 errored"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = 1 AND batches_trained = 4 AND state = 'COMPLETED'")" = 16 ] ||
  fail "every trial should have trained to max_length: $("$T2EXP" trials 1)"
awk -v a="$(best 1 '< 4')" -v b="$(best 1 '>= 4')" 'BEGIN { exit !(b < a / 4) }' ||
  fail "the climb (best $(best 1 '>= 4')) did not improve on its random start (best $(best 1 '< 4')) fourfold"
sql "SELECT json_extract(hparams, '\$.x') || ' ' || json_extract(hparams, '\$.y') || ' ' || json_extract(hparams, '\$.c')
     FROM trials WHERE experiment_id = 1" |
  awk '$1 < -5 || $1 > 5 || $2 < -5 || $2 > 5 || ($3 != "a" && $3 != "b") { bad = 1 } END { exit bad }' ||
  fail "a trial's point is outside the space"
[ "$(sql "SELECT overrides FROM experiments WHERE id = 1")" = "[\"searcher.library=\\\"$(realpath "$HILL")\\\"\"]" ] ||
  fail "the library's absolute path is not kept for resume: $(sql "SELECT overrides FROM experiments WHERE id = 1")"
echo "hill_climb: best $(best 1 '>= 4') after a random start's $(best 1 '< 4')"

# Paused and resumed (from another directory, the library named relative to the first): the same
# trials as an uninterrupted climb (experiments 2 and 3).
config slow "searchers/hill_climb.so" "{first: 3, step: 0.2}"
sed -i 's/^  c: .*/  c: {type: categorical, vals: [a, b]}\n  sleep_ms: 20/' "$WORK/slow.yaml"
outcome() {
  sql "SELECT group_concat(ordinal || ':' || state || ':' || hparams, '|') FROM
       (SELECT * FROM trials WHERE experiment_id = $1 ORDER BY ordinal)"
}
cd "$T2EXP_BUILD"
"$T2EXP" create "$WORK/slow.yaml" "$TRIALS/quadratic.so" --plain > "$WORK/create.log" 2>&1 &
pid=$!
wait_for "SELECT count(*) >= 5 FROM trials WHERE experiment_id = 2 AND state = 'COMPLETED'" 1200
kill -INT $pid
wait $pid && fail "a paused experiment should exit 1: $(cat "$WORK/create.log")"
cd "$WORK"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = 2 AND state = 'COMPLETED'")" -lt 16 ] ||
  fail "the pause came after the search ended"
expect_exit 0 "$T2EXP" resume 2 --quiet
(cd "$T2EXP_BUILD" && "$T2EXP" create "$WORK/slow.yaml" "$TRIALS/quadratic.so" --quiet) || fail "the uninterrupted climb failed"
[ "$(outcome 2)" = "$(outcome 3)" ] || fail "the resumed climb made other trials than an uninterrupted one"
echo "paused and resumed from another directory: the same 16 trials"

# The rules, broken.
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -shared -fPIC -DWITH_LOAD -I "$T2EXP_SOURCE/framework/include" \
  "$T2EXP_SOURCE/tests/integration/faulty_searcher.c" -o "$WORK/faulty.so"
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -shared -fPIC -I "$T2EXP_SOURCE/framework/include" \
  "$T2EXP_SOURCE/tests/integration/faulty_searcher.c" -o "$WORK/noload.so"
faulty() { # MODE WANT — the experiment ends ERRORED, its error and the output say WANT
  config "f_$1" "$WORK/faulty.so" "{mode: $1}"
  expect_exit 1 "$T2EXP" create "$WORK/f_$1.yaml" "$TRIALS/quadratic.so" --plain
  expect_in "$OUT" "$2"
  expect_in "$(sql "SELECT state || ' ' || error FROM experiments ORDER BY id DESC LIMIT 1")" "ERRORED searcher library faulty.so: $2"
  store_ok
}
faulty past_max "start failed: t2_search_train: trial 0: length 5 is not in (0, 4]"
faulty bad_point "start failed: t2_point_set_double: hyperparameter 'x' takes a number in [-5, 5], not 7"
faulty close_twice "on_validation failed: t2_search_close: trial 0 is closed"
# A callback that fails, then works once the cause is gone: resume finishes the search.
touch "$WORK/refuse"
config fail "$WORK/faulty.so" "{mode: ok, file: $WORK/refuse}"
expect_exit 1 "$T2EXP" create "$WORK/fail.yaml" "$TRIALS/quadratic.so" --plain
expect_in "$OUT" "searcher library faulty.so: on_validation failed: faulty: refusing while $WORK/refuse exists"
e=$(sql "SELECT max(id) FROM experiments")
rm "$WORK/refuse"
expect_exit 0 "$T2EXP" resume "$e" --plain
expect_in "$OUT" "experiment $e COMPLETED"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = $e AND state = 'COMPLETED' AND batches_trained = 4")" = 2 ] ||
  fail "the resumed search did not finish its two trials: $("$T2EXP" trials "$e")"
echo "a failing callback ends the experiment ERRORED; resumed after the fix, it completes"
# The exit of a trial closed before it ran comes inside the event that closed it: when it fails, the
# rest of that event (trial 1 made and trained) still stands, and the resume finishes both.
touch "$WORK/refuse"
config inner "$WORK/faulty.so" "{mode: close_first, file: $WORK/refuse}"
expect_exit 1 "$T2EXP" create "$WORK/inner.yaml" "$TRIALS/quadratic.so" --plain
expect_in "$OUT" "on_trial_exited failed: faulty: no exit while $WORK/refuse exists"
e=$(sql "SELECT max(id) FROM experiments")
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = $e")" = 2 ] ||
  fail "the event's second trial was lost: $("$T2EXP" trials "$e")"
rm "$WORK/refuse"
expect_exit 0 "$T2EXP" resume "$e" --plain
expect_in "$OUT" "experiment $e COMPLETED"
[ "$(sql "SELECT group_concat(ordinal || ':' || state || ':' || batches_trained, ' ') FROM trials WHERE experiment_id = $e")" = \
  "0:COMPLETED:0 1:COMPLETED:4" ] || fail "after the resume: $("$T2EXP" trials "$e")"
echo "an inner event that fails keeps the rest of its event; resumed, the search finishes"
# A trial that calls its hyperparameters invalid (T2_EHPARAM) is not restarted (max_restarts 2),
# and its end reaches the searcher with invalid_hparams, on which faulty.so draws a replacement.
# That flag lived in the controller's memory only: when on_trial_failed fails (undone), the resume
# tells the end again and must tell it with the flag (read back from the row's error), so that
# the resumed search makes the trials an uninterrupted one makes.
invalid_config() { # NAME OPTIONS
  config "$1" "$WORK/faulty.so" "$2"
  sed -i 's/^  c: .*/  c: {type: categorical, vals: [a, b]}\n  invalid_above: 3/; s/^max_restarts: 0$/max_restarts: 2/' \
    "$WORK/$1.yaml"
}
ends() {
  sql "SELECT group_concat(ordinal || ':' || state || ':' || restarts || ':' || batches_trained || ':' || hparams, '|') FROM
       (SELECT * FROM trials WHERE experiment_id = $1 ORDER BY ordinal)"
}
touch "$WORK/refuse"
invalid_config inv "{mode: invalid, file: $WORK/refuse}"
expect_exit 1 "$T2EXP" create "$WORK/inv.yaml" "$TRIALS/quadratic.so" --plain
expect_in "$OUT" "on_trial_failed failed: faulty: no failure while $WORK/refuse exists"
e=$(sql "SELECT max(id) FROM experiments")
[ "$(sql "SELECT ordinal || ':' || state || ':' || restarts || ':' || error FROM trials WHERE experiment_id = $e")" = \
  "0:ERRORED:0:invalid hyperparameters: build_model: quadratic: x = 4 is above invalid_above = 3" ] ||
  fail "the invalid trial's row: $(sql "SELECT * FROM trials WHERE experiment_id = $e")"
rm "$WORK/refuse"
expect_exit 0 "$T2EXP" resume "$e" --plain # COMPLETED, one trial errored: still 0
expect_in "$OUT" "experiment $e COMPLETED"
bad=$(sql "SELECT id FROM trials WHERE experiment_id = $e AND ordinal = 0")
[ "$("$T2EXP" logs "$bad" | grep -c "failed in build_model")" = 1 ] ||
  fail "the resume ran the invalid trial again: $("$T2EXP" logs "$bad")"
invalid_config inv_whole "{mode: invalid}"
expect_exit 0 "$T2EXP" create "$WORK/inv_whole.yaml" "$TRIALS/quadratic.so" --plain
w=$(sql "SELECT max(id) FROM experiments")
[ "$(sql "SELECT group_concat(ordinal || ':' || state || ':' || restarts || ':' || batches_trained, ' ') FROM trials
          WHERE experiment_id = $w")" = "0:ERRORED:0:0 1:COMPLETED:0:4" ] ||
  fail "uninterrupted, the invalid trial should be replaced once: $("$T2EXP" trials "$w")"
[ "$(ends "$e")" = "$(ends "$w")" ] ||
  fail "the resumed search decided otherwise than an uninterrupted one (invalid_hparams lost?):
resumed:       $(ends "$e")
uninterrupted: $(ends "$w")"
store_ok
echo "an invalid-hparams failure whose event failed is told again on resume with its flag: the same trials"

# A saved state that is no UTF-8 (any bytes but NUL may be saved): paused, it resumes.
config bin "$WORK/faulty.so" "{mode: binary}"
sed -i 's/^  c: .*/  c: {type: categorical, vals: [a, b]}\n  sleep_ms: 40/' "$WORK/bin.yaml"
"$T2EXP" create "$WORK/bin.yaml" "$TRIALS/quadratic.so" --plain > "$WORK/bin.log" 2>&1 &
pid=$!
wait_for "SELECT count(*) FROM trials t JOIN experiments e ON e.id = t.experiment_id WHERE e.name = 'bin' AND t.state = 'RUNNING'" 1200
kill -INT $pid
wait $pid && fail "a paused experiment should exit 1: $(cat "$WORK/bin.log")"
e=$(sql "SELECT max(id) FROM experiments WHERE name = 'bin'")
expect_exit 0 "$T2EXP" resume "$e" --plain
expect_in "$OUT" "experiment $e COMPLETED"
echo "a state of bytes that are no UTF-8 is saved and loaded back across a pause"

# Libraries that cannot serve: exit 2, the reason, nothing made.
before=$(sql "SELECT count(*) FROM experiments")
refused() { # LIBRARY OPTIONS WANT
  config refused "$1" "$2"
  expect_exit 2 "$T2EXP" create "$WORK/refused.yaml" "$TRIALS/quadratic.so"
  expect_in "$OUT" "$3"
}
refused "$WORK/none.so" "{}" "searcher library $WORK/none.so: no such file"
refused "$TRIALS/quadratic.so" "{}" "does not export the symbol t2_searcher (define the searcher with T2_SEARCHER(...)"
refused "$WORK/noload.so" "{mode: ok}" "searcher library $WORK/noload.so: the searcher does not set .load"
refused "$WORK/faulty.so" "{mode: outside}" "init failed: t2_search_create: only inside one of the searcher's callbacks"
[ "$(sql "SELECT count(*) FROM experiments")" = "$before" ] || fail "a library that cannot serve made an experiment"
expect_exit 2 "$T2EXP" create "$WORK/hill.yaml" "$TRIALS/quadratic.so" --config 'searcher.library=~'
expect_in "$OUT" "searcher.library: missing required key"
echo "search_custom: ok"
