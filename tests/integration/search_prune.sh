#!/usr/bin/env bash
# searcher.pruner (Optuna's Median, Percentile, Patient and Threshold pruners, and Patient around another) through
# the real CLI on the quadratic
# trial, whose loss is the same at every batch, so each decision can be recomputed from the store:
# one trial at a time, trial k is pruned at its first judged validation exactly when its loss is
# worse than the percentile (numpy's linear interpolation) of the losses of the trials before it
# that completed their work, once there are n_startup_trials of them. Checked for random (median),
# a bigger-is-better percentile pruner with a warmup, tpe, a search paused and resumed (the
# resumed pruner must decide as the uninterrupted one: it is rebuilt from the store), two ranks per
# trial (the answer reaches every rank), patient and threshold rules on a single trial's own
# curve, and config errors.
source "$(dirname "$0")/common.bash"
command -v sqlite3 >/dev/null || { echo "search_prune: skipped (no sqlite3)"; exit 77; }

# config NAME SEARCHER-EXTRA... — writes $WORK/NAME.yaml: 12 trials of 10 batches, one at a time,
# a validation every 2 batches; each trial checkpoints (model: 1) and sleeps 15 ms a batch so that
# a pause lands mid-search.
config() {
  local name=$1; shift
  cat > "$WORK/$name.yaml" <<Y
name: $name
hyperparameters:
  global_batch_size: 1
  x: {type: double, minval: -5, maxval: 5}
  y: {type: double, minval: -5, maxval: 5}
  model: 1
  sleep_ms: 15
searcher:
  name: random
  metric: loss
  max_length: {batches: 10}
  max_trials: 12
  max_concurrent_trials: 1
$(printf '  %s\n' "$@")
min_validation_period: {batches: 2}
reproducibility: {experiment_seed: 7}
max_restarts: 0
Y
}

# check EXP PERCENTILE SMALLER(1|0) STARTUP AT — every trial of EXP, in order: pruned (at batch AT,
# with the mark) exactly when the pruner rule says so against the trials before it; prints the
# number pruned.
check() {
  sql "SELECT ordinal, best_validation, batches_trained, coalesce(error, '') FROM trials
       WHERE experiment_id = $1 ORDER BY ordinal" |
    awk -F'|' -v q="$2" -v small="$3" -v startup="$4" -v at="$5" '
      function pct(   i, j, t, h, lo) {   # numpy percentile of ref[1..n], linear interpolation
        for (i = 1; i <= n; i++) s[i] = ref[i]
        for (i = 2; i <= n; i++) for (j = i; j > 1 && s[j-1] > s[j]; j--) { t = s[j]; s[j] = s[j-1]; s[j-1] = t }
        h = (n - 1) * (small ? q : 100 - q) / 100; lo = int(h)
        return lo + 1 < n + 0 ? s[lo+1] + (h - lo) * (s[lo+2] - s[lo+1]) : s[lo+1]
      }
      {
        marked = index($4, "pruned at batch " at ":") == 1
        want = 0
        if (n >= startup && n > 0) { p = pct(); want = small ? $2 > p : $2 < p }
        if (marked != want || (marked && $3 != at) || (!marked && $3 != 10)) {
          printf "trial %s (loss %s, %s batches, \"%s\"): expected %s with %d references\n", $1, $2, $3, $4,
                 want ? "pruned at " at : "to complete", n > "/dev/stderr"; bad = 1
        }
        if (marked) pruned++; else ref[++n] = $2
      }
      END { print pruned + 0; exit bad }' || fail "the pruner's decisions in experiment $1 are not the rule's"
}

# random + median, the defaults but the startup count.
config med "pruner: {name: median, n_startup_trials: 3}"
expect_exit 0 "$T2EXP" create "$WORK/med.yaml" "$TRIALS/quadratic.so" --plain
n=$(check 1 50 1 3 2)
[ "$n" -gt 0 ] && [ "$n" -lt 9 ] || fail "expected some trials pruned and some completed, $n pruned"
expect_in "$OUT" "experiment 1 COMPLETED"
expect_in "$OUT" "12 trial(s) completed ($n pruned), 0 errored"
expect_in "$OUT" "pruned at batch 2: best loss"
expect_in "$("$T2EXP" trials 1)" "pruned at batch 2: best loss"
# A pruned trial's last checkpoint is its state where it stopped.
k=$(sql "SELECT ordinal FROM trials WHERE experiment_id = 1 AND error LIKE 'pruned at%' LIMIT 1")
expect_exit 0 "$T2EXP" describe "1.$k"
expect_in "$OUT" "pruned at batch 2"
[ "$(sql "SELECT max(c.batches) FROM checkpoints c JOIN trials t ON t.id = c.trial_id
          WHERE t.experiment_id = 1 AND t.ordinal = $k")" = 2 ] || fail "pruned trial 1.$k has no checkpoint at batch 2"
# ... and its training metrics up to there are reported, as a completed trial's last window is
# (a trial pruned before its scheduling_unit had no training row at all, probe_J).
[ "$(sql "SELECT count(*) FROM metrics m JOIN trials t ON t.id = m.trial_id WHERE t.experiment_id = 1
          AND t.ordinal = $k AND m.kind = 'training' AND m.batches = 2 AND m.name = 'loss'")" = 1 ] ||
  fail "pruned trial 1.$k has no training loss at batch 2: $("$T2EXP" metrics "1.$k")"
echo "random, median: $n of 12 pruned as the rule says"

# The 25th percentile of a bigger-is-better metric (q = 75), no pruning before batch 4.
config pct "smaller_is_better: false" \
  "pruner: {name: percentile, percentile: 25, n_startup_trials: 2, warmup: {batches: 4}}"
expect_exit 0 "$T2EXP" create "$WORK/pct.yaml" "$TRIALS/quadratic.so" --quiet
n=$(check 2 25 0 2 4)
[ "$n" -gt 0 ] || fail "the percentile pruner pruned nothing"
echo "percentile 25, bigger is better, warmup 4: $n pruned at batch 4"

# tpe takes pruned trials as results (ranked after the completed ones) and still makes max_trials.
expect_exit 0 "$T2EXP" create "$WORK/med.yaml" "$TRIALS/quadratic.so" --config searcher.name=tpe \
  --config searcher.n_startup_trials=4 --config hyperparameters.sleep_ms=0 --quiet
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = 3 AND state = 'COMPLETED'")" = 12 ] ||
  fail "tpe with a pruner did not complete 12 trials: $("$T2EXP" trials 3)"
n=$(check 3 50 1 3 2)
echo "tpe, median: $n pruned"

# Paused after 4 trials and resumed: the same decisions as the uninterrupted search (exp 4 / 5).
outcome() {
  sql "SELECT group_concat(ordinal || ':' || state || ':' || batches_trained || ':' || coalesce(error, ''), '|')
       FROM (SELECT * FROM trials WHERE experiment_id = $1 ORDER BY ordinal)"
}
pause_resume_matches 4 4 12 "$WORK/med.yaml" "$TRIALS/quadratic.so"
check 4 50 1 3 2 > /dev/null

# Two ranks a trial: rank 0 hears the answer, both stop at the same batch.
if with_mpi; then
  expect_exit 0 "$T2EXP" create "$WORK/med.yaml" "$TRIALS/quadratic.so" --config resources.slots_per_trial=2 \
    --config hyperparameters.global_batch_size=2 --config searcher.pruner.n_startup_trials=2 --quiet
  n=$(check 6 50 1 2 2)
  [ "$n" -gt 0 ] || fail "no trial of two ranks was pruned"
  echo "two ranks a trial: $n of 12 pruned"
fi

# The rules on a trial's own curve, for a single trial: scripted_trial's score -|batches - 3| rises
# to 0 at batch 3 and falls. patient 2: at batch 6 the best of the last 3 (-1) is not better than
# the best before them (0); threshold lower -1.5 with a warmup of 2 batches: batch 5's -2.
if command -v "${CC:-cc}" >/dev/null; then
  build_scripted
  single() { # PRUNER [EXTRA-LINE]
    cat > "$WORK/single.yaml" <<Y
name: single
hyperparameters: {global_batch_size: 1, peak: 3}
searcher: {name: single, metric: score, smaller_is_better: false, max_length: {batches: 12}, pruner: $1}
min_validation_period: {batches: 1}
${2:-}
Y
    expect_exit 0 "$T2EXP" create "$WORK/single.yaml" "$WORK/scripted.so" --plain
  }
  single "{name: patient, patience: 2}"
  expect_in "$OUT" "1 trial(s) completed (1 pruned), 0 errored"
  e=$(sql "SELECT max(id) FROM experiments")
  [ "$(sql "SELECT batches_trained || '|' || error FROM trials WHERE experiment_id = $e")" = \
    "6|pruned at batch 6: best score -1 in the last 3 validations is not better than 0 before them" ] ||
    fail "the patient pruner: $("$T2EXP" trials "$e")"
  single "{name: threshold, lower: -1.5, warmup: {batches: 2}}"
  e=$(sql "SELECT max(id) FROM experiments")
  [ "$(sql "SELECT batches_trained || '|' || error FROM trials WHERE experiment_id = $e")" = \
    "5|pruned at batch 5: score -2 is below the lower bound -1.5" ] || fail "the threshold pruner: $("$T2EXP" trials "$e")"
  # The initial validation (batch 0, score -3) is never judged, though checkpoint_policy best has
  # the runner wait for an answer there: the threshold stops the trial at batch 1 (-2).
  single "{name: threshold, lower: -1.5}" "perform_initial_validation: true"
  e=$(sql "SELECT max(id) FROM experiments")
  [ "$(sql "SELECT batches_trained || '|' || error FROM trials WHERE experiment_id = $e")" = \
    "1|pruned at batch 1: score -2 is below the lower bound -1.5" ] ||
    fail "the initial validation was judged: $("$T2EXP" trials "$e")"
  # A patient pruner around the threshold (Optuna's PatientPruner(ThresholdPruner(lower=-1.5),
  # patience=1)): batch 1's -2 is below the bound, but the score still rises; from batch 5 the best
  # of the last 2 (-1) is worse than the 0 before them, and the threshold is asked: -2.
  single "{name: patient, patience: 1, wrapped_pruner: {name: threshold, lower: -1.5}}"
  e=$(sql "SELECT max(id) FROM experiments")
  [ "$(sql "SELECT batches_trained || '|' || error FROM trials WHERE experiment_id = $e")" = \
    "5|pruned at batch 5: no better than -1 in the last 2 validations (0 before them), and score -2 is below the lower bound -1.5" ] ||
    fail "the patient pruner around the threshold: $("$T2EXP" trials "$e")"
  echo "single trial: patient pruned at batch 6, threshold (warmup 2) at batch 5, never at the initial validation," \
    "patient around threshold at batch 5"
fi

# Config errors: each at its place, nothing made.
before=$(sql "SELECT count(*) FROM experiments")
config bad "pruner:" "    name: median" "    n_startup_trial: 3"
sed -i '/^min_validation_period/d' "$WORK/bad.yaml"
expect_exit 2 "$T2EXP" create "$WORK/bad.yaml" "$TRIALS/quadratic.so"
expect_in "$OUT" "bad.yaml:16:7: searcher.pruner.n_startup_trial: unknown key (did you mean 'n_startup_trials'?)"
expect_in "$OUT" "bad.yaml:14:3: searcher.pruner: needs min_validation_period"
expect_exit 2 "$T2EXP" create "$WORK/med.yaml" "$TRIALS/quadratic.so" --config searcher.pruner=percentile
expect_in "$OUT" "a percentile pruner needs its settings, e.g. {name: percentile, percentile: 25}"
expect_exit 0 "$T2EXP" preview "$WORK/med.yaml" --config searcher.name=adaptive_asha
expect_in "$OUT" "key 'searcher.pruner' does not apply to the adaptive_asha searcher (ignored)"
[ "$(sql "SELECT count(*) FROM experiments")" = "$before" ] || fail "a bad config made an experiment"
echo "search_prune: ok"
