#!/usr/bin/env bash
# searcher.name: pbt through the real CLI on the quadratic trial (with model: 1, so that it
# checkpoints): preview's plan is what runs, describe shows the lineage, an exploited trial starts
# from its parent's checkpoint (its first metric row lies past the parent's length at the fork),
# the same seed repeats the search exactly at any max_concurrent_trials, a search paused mid-way
# and resumed ends as an uninterrupted one, and bad configs are refused with located errors.
source "$(dirname "$0")/common.bash"

P="$EXAMPLES/quadratic_pbt.yaml"
outcome() { sql "SELECT group_concat(x, '|') FROM (SELECT t.ordinal || ':' || t.hparams || ':' || coalesce(p.ordinal, '-') || ':' ||
                 t.batches_trained || ':' || coalesce(t.best_validation, 'none') || ':' || t.state AS x
                 FROM trials t LEFT JOIN trials p ON p.id = t.parent_trial_id WHERE t.experiment_id=$1 ORDER BY t.ordinal)"; }

expect_exit 0 "$T2EXP" preview "$P"
expect_in "$OUT" "16 trials, 8 trained to 20, 8 stopped earlier; length trained 160 in total"
expect_in "$OUT" "(from #"

expect_exit 0 "$T2EXP" create "$P" "$TRIALS/quadratic.so" --plain
expect_in "$OUT" "experiment 1 COMPLETED"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=1 AND state='COMPLETED'")" = 16 ] || fail "16 completed trials expected"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=1 AND parent_trial_id IS NOT NULL")" = 8 ] || fail "8 children expected (2 per round for 4 rounds)"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=1 AND batches_trained = 20")" = 8 ] || fail "8 members reach 20 batches"

# Lineage: describe's parent column and lineage table, and the listings.
expect_exit 0 "$T2EXP" describe 1
expect_in "$OUT" "lineage (ancestors first"
expect_in "$OUT" " @4 > "
expect_exit 0 "$T2EXP" trials 1 --csv
expect_in "$(head -1 <<<"$OUT")" ",parent"
expect_exit 0 "$T2EXP" trials 1 --json
expect_in "$OUT" '"parent":'

# Each child starts where its parent's checkpoint was taken: its first metric row is the next
# round's end, past the fork, and the parent's checkpoint is recorded by uuid.
bad=$(sql "SELECT count(*) FROM trials t JOIN checkpoints c ON c.uuid = t.parent_checkpoint AND c.trial_id = t.parent_trial_id
           WHERE t.experiment_id=1 AND (SELECT min(batches) FROM metrics m WHERE m.trial_id = t.id) != c.batches + 4")
[ "$bad" = 0 ] || fail "$bad children do not continue from their parent's checkpoint"
[ "$(sql "SELECT count(*) FROM trials t JOIN checkpoints c ON c.uuid = t.parent_checkpoint WHERE t.experiment_id=1")" = 8 ] ||
    fail "every child's parent checkpoint is recorded"
grep -q "^restored " <(trial_log 9) || fail "trial 9 (a child) did not restore a checkpoint"
# Survivors' losses follow f(x, y) of their own hparams, children's of their explored ones.
bad=$(sql "SELECT count(*) FROM trials WHERE experiment_id=1 AND abs(best_validation - ((json_extract(hparams,'\$.x')-1)*(json_extract(hparams,'\$.x')-1) + (json_extract(hparams,'\$.y')+2)*(json_extract(hparams,'\$.y')+2))) > 1e-9")
[ "$bad" = 0 ] || fail "$bad trials report a loss that is not f(x, y)"

# The same seed repeats exactly, also one trial at a time (the rounds are synchronous).
expect_exit 0 "$T2EXP" create "$P" "$TRIALS/quadratic.so" --quiet
[ "$(outcome 1)" = "$(outcome 2)" ] || fail "pbt did not repeat exactly for the same seed"
expect_exit 0 "$T2EXP" create "$P" "$TRIALS/quadratic.so" --config searcher.max_concurrent_trials=1 --quiet
[ "$(outcome 1)" = "$(outcome 3)" ] || fail "pbt with one trial at a time differs from four at a time"

# Paused mid-search and resumed: the same search as an uninterrupted one.
SLOW=(--config searcher.population_size=4 --config searcher.num_rounds=4 --config searcher.max_concurrent_trials=2
      --config hyperparameters.sleep_ms=40)
"$T2EXP" create "$P" "$TRIALS/quadratic.so" "${SLOW[@]}" --plain > "$WORK/create.log" 2>&1 &
pid=$!
wait_for "SELECT count(*) >= 1 FROM trials WHERE experiment_id=4 AND parent_trial_id IS NOT NULL" 1200
kill -INT $pid
wait $pid && fail "a paused experiment should exit 1: $(cat "$WORK/create.log")"
expect_in "$(cat "$WORK/create.log")" "experiment 4 PAUSED"
[ "$(sql "SELECT state FROM experiments WHERE id=4")" = PAUSED ] || fail "experiment 4 is not paused"
expect_exit 0 "$T2EXP" resume 4 --quiet
expect_exit 0 "$T2EXP" create "$P" "$TRIALS/quadratic.so" "${SLOW[@]}" --quiet
[ "$(outcome 4)" = "$(outcome 5)" ] || fail "pbt paused and resumed differs from an uninterrupted search:
$(outcome 4)
$(outcome 5)"

# A trial that cannot checkpoint (no model): the first exploit has nothing to copy, and the
# experiment errors naming the parent. The trials the controller then stops are not blamed for its
# error (none ERRORED; before, idle runners ignored the stop and were killed a minute later).
expect_exit 1 "$T2EXP" create "$P" "$TRIALS/quadratic.so" --config hyperparameters.model=0 --quiet
expect_in "$OUT" "pbt needs the checkpoint of its parent"
[ "$(sql "SELECT state FROM experiments WHERE id=6")" = ERRORED ] || fail "experiment 6 should be ERRORED"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=6 AND state='ERRORED'")" = 0 ] ||
  fail "trials blamed for the controller's error: $(sql "SELECT ordinal, state, error FROM trials WHERE experiment_id=6")"

# Bad configs: located errors.
expect_exit 2 "$T2EXP" preview "$P" --config searcher.population_size=1
expect_in "$OUT" "searcher.population_size: pbt needs a population of at least 2"
expect_exit 2 "$T2EXP" preview "$P" --config searcher.num_rounds=0
expect_in "$OUT" "searcher.num_rounds: expected a positive integer, got 0"
expect_exit 2 "$T2EXP" preview "$P" --config searcher.populaton_size=4
expect_in "$OUT" "did you mean 'population_size'"
expect_exit 2 "$T2EXP" preview "$P" --config 'hyperparameters.opt={a: {type: double, minval: 0, maxval: 1}}'
expect_in "$OUT" "hyperparameters.opt: pbt does not support nested hyperparameters yet"
store_ok
