#!/usr/bin/env bash
# searcher.pruner successive_halving and hyperband (Optuna's SuccessiveHalvingPruner and
# HyperbandPruner) through the real CLI on the quadratic trial, whose loss is the same at every
# batch, so with one trial at a time each decision can be recomputed from the store: trial k
# records its loss at each rung its validations reach (batches unit * rf^r) and goes on only while
# its loss is among the best max(1, floor(n / rf)) of the n losses recorded there so far, its own
# included. Checked in both directions with a bootstrap_count, hyperband's brackets (each pruned
# trial stopped at its bracket's rung), tpe with hyperband, a paused and resumed search deciding as
# the uninterrupted one (the rungs are rebuilt from the store), and config errors.
source "$(dirname "$0")/common.bash"
command -v sqlite3 >/dev/null || { echo "search_halving: skipped (no sqlite3)"; exit 77; }

# config NAME SEARCHER-EXTRA... — $WORK/NAME.yaml: 16 trials of 16 batches, one at a time, a
# validation every 2 batches; each trial checkpoints and sleeps 10 ms a batch (a pause lands
# mid-search).
config() {
  local name=$1; shift
  cat > "$WORK/$name.yaml" <<Y
name: $name
hyperparameters:
  global_batch_size: 1
  x: {type: double, minval: -5, maxval: 5}
  y: {type: double, minval: -5, maxval: 5}
  model: 1
  sleep_ms: 10
searcher:
  name: random
  metric: loss
  max_length: {batches: 16}
  max_trials: 16
  max_concurrent_trials: 1
$(printf '  %s\n' "$@")
min_validation_period: {batches: 2}
reproducibility: {experiment_seed: 11}
max_restarts: 0
Y
}

# check EXP UNIT RF SMALLER(1|0) BOOTSTRAP — every trial of EXP in order is pruned (at the rung's
# batch, with the mark) exactly when the rule says so; prints the number pruned. Rungs at or past
# max_length (16) are reached by the final validation only, which is never judged.
check() {
  sql "SELECT ordinal, best_validation, batches_trained, coalesce(error, '') FROM trials
       WHERE experiment_id = $1 ORDER BY ordinal" |
    awk -F'|' -v unit="$2" -v rf="$3" -v small="$4" -v boot="$5" '
      {
        want = 0
        for (r = 0; unit * rf ^ r < 16; r++) {
          n[r]++; v[r, n[r]] = $2
          for (i = 1; i <= n[r]; i++) s[i] = v[r, i]
          for (i = 2; i <= n[r]; i++) for (j = i; j > 1 && (small ? s[j-1] > s[j] : s[j-1] < s[j]); j--) {
            t = s[j]; s[j] = s[j-1]; s[j-1] = t }
          keep = int(n[r] / rf); if (keep < 1) keep = 1
          if (n[r] <= boot || (small ? $2 > s[keep] : $2 < s[keep])) { want = unit * rf ^ r; break }
        }
        marked = index($4, "pruned at batch " want ":") == 1 && want
        if ((want && (!marked || $3 != want)) || (!want && ($3 != 16 || $4 != ""))) {
          printf "trial %s (loss %s, %s batches, \"%s\"): expected %s\n", $1, $2, $3, $4,
                 want ? "pruned at " want : "to complete" > "/dev/stderr"; bad = 1
        }
        if (want) pruned++
      }
      END { print pruned + 0; exit bad }' || fail "the pruner's decisions in experiment $1 are not the rule's"
}

# Successive halving, rf 2 from 2 batches: rungs at 2, 4 and 8.
config sh "pruner: {name: successive_halving, min_resource: {batches: 2}, reduction_factor: 2}"
expect_exit 0 "$T2EXP" create "$WORK/sh.yaml" "$TRIALS/quadratic.so" --plain
n=$(check 1 2 2 1 0)
[ "$n" -gt 3 ] && [ "$n" -lt 16 ] || fail "expected most trials pruned at some rung, $n pruned"
expect_in "$OUT" "16 trial(s) completed ($n pruned), 0 errored"
expect_in "$OUT" "is not among the best"
expect_in "$("$T2EXP" trials 1)" "pruned at batch"
echo "successive halving, rf 2: $n of 16 pruned as the rule says"

# Bigger is better, rf 2 from 4 batches (rungs 4, 8), bootstrap_count 1: the first trial at a rung
# is pruned there whatever its value.
config shmax "smaller_is_better: false" \
  "pruner: {name: successive_halving, min_resource: {batches: 4}, reduction_factor: 2, bootstrap_count: 1}"
expect_exit 0 "$T2EXP" create "$WORK/shmax.yaml" "$TRIALS/quadratic.so" --quiet
n=$(check 2 4 2 0 1)
[ "$n" -gt 0 ] && [ "$n" -lt 16 ] || fail "expected some trials pruned and some completed, $n pruned"
expect_in "$(sql "SELECT error FROM trials WHERE experiment_id = 2 AND ordinal = 0")" \
  "pruned at batch 4: 1 trial(s) reached rung 0 (batch 4), not more than bootstrap_count 1"
echo "successive halving, bigger is better, rf 2, bootstrap 1: $n pruned"

# Hyperband from 2 batches to max_length 16, rf 2: brackets 0..3, bracket b's rung r at
# 2 * 2^(b + r); each pruned trial stopped exactly there.
config hb "pruner: {name: hyperband, min_resource: {batches: 2}, reduction_factor: 2}"
expect_exit 0 "$T2EXP" create "$WORK/hb.yaml" "$TRIALS/quadratic.so" --quiet
sql "SELECT batches_trained || '|' || coalesce(error, '') FROM trials WHERE experiment_id = 3 ORDER BY ordinal" |
  awk -F'|' '
    $2 == "" { if ($1 != 16) bad = 1; next }
    { pruned++
      if (!match($2, /rung [0-9]+ \(batch [0-9]+\) of bracket [0-9]+/)) { bad = 1; next }
      split(substr($2, RSTART, RLENGTH), w, /[ ()]+/)   # rung R batch S of bracket B
      if (w[4] != 2 * 2 ^ (w[7] + w[2]) || $1 != w[4]) { print "bad rung: " $0 > "/dev/stderr"; bad = 1 } }
    END { if (!pruned) print "hyperband pruned nothing" > "/dev/stderr"; exit bad || !pruned }' ||
  fail "hyperband: $("$T2EXP" trials 3)"
echo "hyperband: each pruned trial stopped at its bracket's rung"

# tpe with hyperband makes its max_trials.
expect_exit 0 "$T2EXP" create "$WORK/hb.yaml" "$TRIALS/quadratic.so" --config searcher.name=tpe \
  --config searcher.n_startup_trials=4 --config hyperparameters.sleep_ms=0 --quiet
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = 4 AND state = 'COMPLETED'")" = 16 ] ||
  fail "tpe with hyperband did not complete 16 trials: $("$T2EXP" trials 4)"

# Paused after 5 trials and resumed: the same decisions as the uninterrupted search (exp 5 / 6).
outcome() {
  sql "SELECT group_concat(ordinal || ':' || state || ':' || batches_trained || ':' || coalesce(error, ''), '|')
       FROM (SELECT * FROM trials WHERE experiment_id = $1 ORDER BY ordinal)"
}
pause_resume_matches 5 5 16 "$WORK/sh.yaml" "$TRIALS/quadratic.so"
check 5 2 2 1 0 > /dev/null
# The same in epochs (the quadratic trial's epoch is 4 batches): min_resource 1 epoch, rungs at
# batches 4 and 8. A resume finds each finished trial's epoch length from its stored validations.
config shep "pruner: {name: successive_halving, min_resource: {epochs: 1}, reduction_factor: 2}"
sed -i 's/max_length: {batches: 16}/max_length: {epochs: 4}/' "$WORK/shep.yaml"
pause_resume_matches 7 5 16 "$WORK/shep.yaml" "$TRIALS/quadratic.so"
n=$(check 7 4 2 1 0)
[ "$n" -gt 0 ] || fail "nothing pruned in epochs"

# A trial pruned at a rung that dies before it says done (SIGKILL in save_state at batch 4, its
# checkpoint there) restarts from its checkpoint at batch 2 and validates batch 4 again: judged
# again there, it is pruned again rather than trained to the end. Trial 0 (peak 6: score -2 at
# batch 4) goes first; trial 1 (peak 0: -4) is not the best 1 of 2.
if command -v "${CC:-cc}" >/dev/null; then
  build_scripted
  touch "$WORK/kill"
  cat > "$WORK/crash.yaml" <<Y
name: crash
hyperparameters: {global_batch_size: 1, peak: {type: categorical, vals: [6, 0]}, kill_marker: "$WORK/kill",
                  kill_at: {type: categorical, vals: [99, 4]}}
searcher: {name: random, metric: score, smaller_is_better: false, max_length: {batches: 12}, max_trials: 2,
           max_concurrent_trials: 1, points_to_evaluate: [{peak: 6, kill_at: 99}, {peak: 0, kill_at: 4}],
           pruner: {name: successive_halving, min_resource: {batches: 4}, reduction_factor: 2}}
min_validation_period: {batches: 2}
min_checkpoint_period: {batches: 2}
checkpoint_policy: none
max_restarts: 1
Y
  expect_exit 0 "$T2EXP" create "$WORK/crash.yaml" "$WORK/scripted.so" --plain
  [ ! -e "$WORK/kill" ] || fail "the trial never died in its checkpoint"
  e=$(sql "SELECT max(id) FROM experiments")
  [ "$(sql "SELECT group_concat(state || ':' || restarts || ':' || batches_trained || ':' || coalesce(error, ''), '|')
            FROM (SELECT * FROM trials WHERE experiment_id = $e ORDER BY ordinal)")" = \
    "COMPLETED:0:12:|COMPLETED:1:4:pruned at batch 4: score -4 is not among the best 1 of 2 trials at rung 0 (batch 4), which reach -2" ] ||
    fail "the restarted pruned trial: $("$T2EXP" trials "$e")"
  echo "a pruned trial killed in its checkpoint restarted and was pruned again at batch 4"
fi

# Config errors, each at its key; nothing made.
before=$(sql "SELECT count(*) FROM experiments")
expect_exit 2 "$T2EXP" create "$WORK/hb.yaml" "$TRIALS/quadratic.so" --config 'searcher.pruner.min_resource={epochs: 1}'
expect_in "$OUT" "searcher.pruner.min_resource: is in epochs and max_resource (max_length) in batches: give both in one unit"
expect_exit 2 "$T2EXP" create "$WORK/sh.yaml" "$TRIALS/quadratic.so" --config searcher.pruner.reduction_factor=1
expect_in "$OUT" "searcher.pruner.reduction_factor: expected an integer in [2, 1000000], got 1"
expect_exit 2 "$T2EXP" create "$WORK/sh.yaml" "$TRIALS/quadratic.so" --config searcher.pruner.min_early_stoping_rate=1
expect_in "$OUT" "did you mean 'min_early_stopping_rate'?"
[ "$(sql "SELECT count(*) FROM experiments")" = "$before" ] || fail "a bad config made an experiment"
echo "search_halving: ok"
