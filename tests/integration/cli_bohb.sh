#!/usr/bin/env bash
# adaptive_asha with sampler: tpe through the real CLI on the quadratic trial: preview shows its
# trials, it completes, one trial at a time repeats exactly, its first trials are sampler random's
# (same seed) and later ones are not, and a search paused half-way and resumed makes the choices an
# uninterrupted one makes (the trials' points come back from the searcher's saved state).
source "$(dirname "$0")/common.bash"

Q="$EXAMPLES/quadratic_bohb.yaml"
SMALL=(--config searcher.max_trials=30)
outcome() { sql "SELECT group_concat(t.ordinal || ':' || t.hparams || ':' || t.batches_trained || ':' || t.best_validation, '|')
                 FROM (SELECT * FROM trials WHERE experiment_id=$1 ORDER BY ordinal) t"; }
hparams_below() { sql "SELECT group_concat(hparams, '|') FROM (SELECT hparams FROM trials WHERE experiment_id=$1 AND ordinal < $2 ORDER BY ordinal)"; }

expect_exit 0 "$T2EXP" preview "$Q" "${SMALL[@]}"
expect_in "$OUT" "30 trials,"

expect_exit 0 "$T2EXP" create "$Q" "$TRIALS/quadratic.so" "${SMALL[@]}" --plain
expect_in "$OUT" "experiment 1 COMPLETED"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=1")" = 30 ] || fail "30 trials expected"

# One at a time (the example's max_concurrent_trials), the same seed repeats the search exactly.
expect_exit 0 "$T2EXP" create "$Q" "$TRIALS/quadratic.so" "${SMALL[@]}" --quiet
[ "$(outcome 1)" = "$(outcome 2)" ] || fail "sampler tpe with one trial at a time did not repeat exactly"

# sampler random with the same seed: the same first trials (no rung has n_startup_trials results
# yet), then the model's.
expect_exit 0 "$T2EXP" create "$Q" "$TRIALS/quadratic.so" "${SMALL[@]}" --config searcher.sampler=random --quiet
[ "$(hparams_below 1 5)" = "$(hparams_below 3 5)" ] || fail "sampler tpe's first trials are not sampler random's"
[ "$(hparams_below 1 30)" != "$(hparams_below 3 30)" ] || fail "sampler tpe chose sampler random's trials throughout"

# Paused mid-search and resumed: the same trials as an uninterrupted search.
SLOW=("${SMALL[@]}" --config hyperparameters.sleep_ms=20)
pause_resume_matches 4 10 30 "$Q" "$TRIALS/quadratic.so" "${SLOW[@]}"
store_ok
