#!/usr/bin/env bash
# searcher.name: tpe through the real CLI on the quadratic trial (loss (x-1)^2 + (y+2)^2): it
# completes, its first n_startup_trials are random search's trials, it finds a better point than
# random search with the same budget and seed, one trial at a time repeats exactly, several at a
# time complete, and a search paused half-way and resumed makes the choices an uninterrupted one makes.
source "$(dirname "$0")/common.bash"

Q="$EXAMPLES/quadratic_random.yaml"
TPE=(--config searcher.name=tpe --config searcher.max_trials=30)
outcome() { sql "SELECT group_concat(t.ordinal || ':' || t.hparams || ':' || t.batches_trained || ':' || t.best_validation, '|')
                 FROM (SELECT * FROM trials WHERE experiment_id=$1 ORDER BY ordinal) t"; }
hparams_below() { sql "SELECT group_concat(hparams, '|') FROM (SELECT hparams FROM trials WHERE experiment_id=$1 AND ordinal < $2 ORDER BY ordinal)"; }

expect_exit 0 "$T2EXP" preview "$Q" "${TPE[@]}"
expect_in "$OUT" "30 trials, 30 trained to 1, 0 stopped earlier"

expect_exit 0 "$T2EXP" create "$Q" "$TRIALS/quadratic.so" "${TPE[@]}" --config searcher.max_concurrent_trials=1 --plain
expect_in "$OUT" "experiment 1 COMPLETED"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=1 AND state='COMPLETED'")" = 30 ] || fail "30 completed trials expected"
bad=$(sql "SELECT count(*) FROM trials WHERE experiment_id=1 AND abs(best_validation - ((json_extract(hparams,'\$.x')-1)*(json_extract(hparams,'\$.x')-1) + (json_extract(hparams,'\$.y')+2)*(json_extract(hparams,'\$.y')+2))) > 1e-9")
[ "$bad" = 0 ] || fail "$bad trials report a loss that is not f(x, y)"

# One at a time, the same seed repeats the search exactly.
expect_exit 0 "$T2EXP" create "$Q" "$TRIALS/quadratic.so" "${TPE[@]}" --config searcher.max_concurrent_trials=1 --quiet
[ "$(outcome 1)" = "$(outcome 2)" ] || fail "tpe with one trial at a time did not repeat exactly"

# Random search with the same seed and budget: its first 10 trials are tpe's startup trials, and
# tpe's best is better.
expect_exit 0 "$T2EXP" create "$Q" "$TRIALS/quadratic.so" --config searcher.max_trials=30 --quiet
[ "$(hparams_below 1 10)" = "$(hparams_below 3 10)" ] || fail "tpe's startup trials are not random search's"
[ "$(hparams_below 1 11)" != "$(hparams_below 3 11)" ] || fail "tpe's 11th trial is random search's"
tpe_best=$(sql "SELECT best_metric FROM experiments WHERE id=1")
rnd_best=$(sql "SELECT best_metric FROM experiments WHERE id=3")
echo "best loss after 30 trials, seed 42: tpe $tpe_best, random $rnd_best"
awk -v a="$tpe_best" -v b="$rnd_best" 'BEGIN { exit !(a < b) }' || fail "tpe ($tpe_best) did not beat random ($rnd_best)"

# Several at a time (constant liar): completes with every trial.
expect_exit 0 "$T2EXP" create "$Q" "$TRIALS/quadratic.so" "${TPE[@]}" --config searcher.max_concurrent_trials=3 --quiet
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=4 AND state='COMPLETED'")" = 30 ] || fail "3 at a time: 30 trials"

# Paused after some trials and resumed: the same trials as an uninterrupted search. Each trial
# sleeps a little so the pause lands mid-search.
SLOW=("${TPE[@]}" --config searcher.max_concurrent_trials=1 --config searcher.max_length.batches=2
      --config hyperparameters.sleep_ms=40)
pause_resume_matches 5 14 30 "$Q" "$TRIALS/quadratic.so" "${SLOW[@]}"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=5 AND state='COMPLETED'")" = 30 ] || fail "resumed search: 30 trials"
store_ok
