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
"$T2EXP" create "$Q" "$TRIALS/quadratic.so" "${SLOW[@]}" --plain > "$WORK/create.log" 2>&1 &
pid=$!
wait_for "SELECT count(*) >= 10 FROM trials WHERE experiment_id=4 AND state='COMPLETED'" 1200
kill -INT $pid
wait $pid && fail "a paused experiment should exit 1: $(cat "$WORK/create.log")"
expect_in "$(cat "$WORK/create.log")" "experiment 4 PAUSED"
done_before=$(sql "SELECT count(*) FROM trials WHERE experiment_id=4 AND state='COMPLETED'")
[ "$done_before" -lt 30 ] || fail "the pause came after the search ended"
expect_exit 0 "$T2EXP" resume 4 --quiet
expect_exit 0 "$T2EXP" create "$Q" "$TRIALS/quadratic.so" "${SLOW[@]}" --quiet
[ "$(outcome 4)" = "$(outcome 5)" ] || fail "paused after $done_before trials and resumed, sampler tpe chose other trials than an uninterrupted search"
echo "paused after $done_before completed trials; the resumed search matches the uninterrupted one"
store_ok
