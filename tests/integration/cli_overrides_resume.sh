#!/usr/bin/env bash
# --config values are kept as data: values with a newline, quotes and '#', and more than 256 of
# them, are stored exactly by create and applied again exactly by resume (they were YAML comment
# lines, capped at 256, and a newline made every resume fail with a YAML syntax error). An
# experiment recorded the old way (comment lines, no overrides column value) still resumes with
# its overrides.
source "$(dirname "$0")/common.bash"
cat > "$WORK/q.yaml" <<Y
name: overrides
hyperparameters: {global_batch_size: 1, x: 0.5, y: -1.5, sleep_ms: 20}
searcher: {name: single, metric: loss, max_length: {batches: 90}}
min_validation_period: {batches: 10}
max_restarts: 0
Y
args=(--config searcher.max_length.batches=60 --config 'labels=[a,
 b]' --config 'description="it'"'"'s \"quoted\" # not a comment"')
for i in $(seq -w 0 299); do args+=(--config "hyperparameters.h$i=$i"); done
want=$(printf '%s\n' searcher.max_length.batches=60 "labels=[a,
 b]" "description=\"it's \\\"quoted\\\" # not a comment\"" $(for i in $(seq -w 0 299); do echo "hyperparameters.h$i=$i"; done))

# kill_after_start N — runs create (experiment N) in the background and SIGKILLs its controller
# once the trial has trained a few batches, leaving the experiment ACTIVE.
kill_after_start() {
  "$T2EXP" create "$WORK/q.yaml" "$TRIALS/quadratic.so" --plain "${args[@]}" > "$WORK/create$1.log" 2>&1 &
  local ctl=$!
  wait_for "SELECT batches_trained >= 10 FROM trials WHERE experiment_id = $1"
  kill -KILL "$ctl"
  wait "$ctl" 2>/dev/null || true
  for _ in $(seq 100); do [ -n "$(own_pids quadratic.so)" ] || break; sleep 0.05; done
}

kill_after_start 1
[ "$(sql "SELECT state FROM experiments WHERE id=1")" = ACTIVE ] || fail "the killed experiment should be ACTIVE"
[ "$(sql "SELECT group_concat(value, char(10)) FROM (SELECT value FROM experiments, json_each(overrides) WHERE experiments.id=1 ORDER BY key)")" = "$want" ] \
  || fail "create did not store the overrides exactly"
expect_exit 0 "$T2EXP" resume 1 --plain
expect_in "$OUT" "experiment 1 COMPLETED"
[ "$(sql "SELECT labels FROM experiments WHERE id=1")" = '["a","b"]' ] || fail "labels"
[ "$(sql "SELECT description FROM experiments WHERE id=1")" = "it's \"quoted\" # not a comment" ] || fail "description"
[ "$(sql "SELECT json_extract(hparams, '\$.h299') || ' ' || json_extract(hparams, '\$.h000') FROM trials WHERE experiment_id=1")" = "299 0" ] \
  || fail "the 300 hparam overrides"
# max_length 60 (not the file's 90): resume applied the overrides again.
[ "$(sql "SELECT batches_trained FROM trials WHERE experiment_id=1")" = 60 ] || fail "60 batches after resume"

# The old way: overrides as comment lines after the config, no overrides column value.
args=(--config hyperparameters.x=1 --config searcher.max_length.batches=40)
kill_after_start 2
sql "UPDATE experiments SET overrides = NULL, checkpoint_dir = NULL,
     config_yaml = config_yaml || char(10) || '# overridden on the command line:' || char(10) ||
     '#   --config hyperparameters.x=1' || char(10) || '#   --config searcher.max_length.batches=40' || char(10) WHERE id = 2"
expect_exit 0 "$T2EXP" resume 2 --plain
expect_in "$OUT" "experiment 2 COMPLETED"
[ "$(sql "SELECT json_extract(hparams, '\$.x') || ' ' || batches_trained || ' ' || best_validation FROM trials WHERE experiment_id=2")" = "1 40 0.25" ] \
  || fail "the comment-line overrides of an old experiment were not applied on resume"

# A resume's own --config values are stored after the earlier ones, so the next resume applies
# them all again and describe shows them (a plain resume once went back to create's max_length: a
# trial COMPLETED at 19 batches with target 10).
cat > "$WORK/s.yaml" <<Y
name: resumed_overrides
hyperparameters: {global_batch_size: 1, x: 0.5, y: -1.5, sleep_ms: 10}
searcher: {name: single, metric: loss, max_length: {batches: 1000}}
scheduling_unit: 1
max_restarts: 0
Y
# run_until EXP SQL — a resume (or create: args after) in the background, paused once SQL holds.
run_until() {
  local e=$1 cond=$2; shift 2
  "$T2EXP" "$@" --quiet > "$WORK/run.log" 2>&1 &
  local ctl=$!
  wait_for "SELECT $cond FROM trials WHERE experiment_id = $e" 1200
  expect_exit 0 timeout 120 "$T2EXP" pause "$e"
  wait "$ctl" || true
  [ "$(sql "SELECT state FROM experiments WHERE id = $e")" = PAUSED ] || fail "experiment $e not PAUSED: $(cat "$WORK/run.log")"
}
run_until 3 "batches_trained >= 3" create "$WORK/s.yaml" "$TRIALS/quadratic.so" --config searcher.max_length.batches=30 \
  --config hyperparameters.sleep_ms=15
run_until 3 "batches_trained >= 32" resume 3 --config searcher.max_length.batches=100 --config max_restarts=1
[ "$(sql "SELECT overrides FROM experiments WHERE id = 3")" = \
  '["searcher.max_length.batches=30","hyperparameters.sleep_ms=15","searcher.max_length.batches=100","max_restarts=1"]' ] ||
  fail "the resume's overrides were not stored after create's: $(sql "SELECT overrides FROM experiments WHERE id = 3")"
expect_exit 0 "$T2EXP" describe 3
expect_in "$OUT" '"searcher.max_length.batches=100","max_restarts=1"'
expect_exit 0 timeout 120 "$T2EXP" resume 3 --quiet
[ "$(sql "SELECT state || ' ' || batches_trained || ' ' || target_length_batches FROM trials WHERE experiment_id = 3")" = \
  "COMPLETED 100 100" ] || fail "the plain resume did not apply the earlier resume's max_length: $("$T2EXP" trials 3)"

# A change a resume cannot honour is refused, naming the key and why (exit 2), and nothing is
# stored; a value as stored is no change. A paused random search of 4 resumed with max_trials=6
# once exited 0 after 4 trials (its searcher came back from its snapshot).
cat > "$WORK/r.yaml" <<Y
name: resumed_refused
hyperparameters: {global_batch_size: 1, x: {type: double, minval: -1, maxval: 1}, y: -2, sleep_ms: 20}
searcher: {name: random, metric: loss, max_length: {batches: 20}, max_trials: 4, max_concurrent_trials: 1}
scheduling_unit: 1
max_restarts: 0
Y
run_until 4 "batches_trained >= 2" create "$WORK/r.yaml" "$TRIALS/quadratic.so"
refused() { # WANT CONFIG... — resume 4 with CONFIG is refused saying WANT, and changes nothing
  local want=$1; shift
  expect_exit 2 "$T2EXP" resume 4 --quiet "$@"
  expect_in "$OUT" "$want"
  [ "$(sql "SELECT state || ' ' || overrides FROM experiments WHERE id = 4")" = "PAUSED []" ] ||
    fail "a refused resume changed the experiment: $(sql "SELECT state, overrides FROM experiments WHERE id = 4")"
}
refused "--config searcher.max_trials=6: searcher.max_trials cannot change on resume: the searcher planned" \
  --config searcher.max_trials=6
refused "searcher.max_trials cannot change on resume" --config max_restarts=2 --config searcher.max_trials=5
refused "hyperparameters.y cannot change on resume" --config hyperparameters.y=1
refused "checkpoint_storage.host_path cannot change on resume: the checkpoint directory was decided at create" \
  --config "checkpoint_storage.host_path=$WORK"
refused "searcher.max_length.epochs cannot change on resume: its unit cannot change" --config searcher.max_length.epochs=1
expect_exit 0 timeout 120 "$T2EXP" resume 4 --quiet --config searcher.max_trials=4
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = 4 AND state = 'COMPLETED'")" = 4 ] || fail "4 trials"
store_ok
echo "cli_overrides_resume: ok"
