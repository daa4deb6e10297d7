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
store_ok
echo "cli_overrides_resume: ok"
