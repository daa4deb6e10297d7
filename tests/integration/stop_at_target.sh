#!/usr/bin/env bash
# A trial stopped on its op's last batch (SIGTERM there, as a pause that lands on it: the runner
# checkpoints after the batch and leaves before validating) validates at that length once it goes
# on. Its checkpoint carries no metric, and restoring it must not count as a validation: before,
# the continued trial said "done" at the target with no validation at all, and a pbt round that
# was paused there went on without that member's result (it_cli_pbt failed in CI that way).
source "$(dirname "$0")/common.bash"

expect_exit 0 "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" --quiet \
  --config searcher.max_trials=1 --config searcher.max_length.batches=4 --config max_restarts=1 \
  --config hyperparameters.model=1 --config hyperparameters.term_at_batch=3 # the 4th batch
[ "$(sql "SELECT state || ' ' || batches_trained FROM trials")" = "COMPLETED 4" ] ||
  fail "the trial should complete at 4 batches: $(sql 'SELECT state, restarts, batches_trained, error FROM trials')"
grep -q "checkpoint .* at batch 4" <(trial_log 1) || fail "the trial did not stop at batch 4"
grep -q "restored" <(trial_log 1) || fail "the trial did not continue from its checkpoint"
[ "$(sql "SELECT count(*) FROM metrics WHERE kind = 'validation' AND batches = 4 AND name = 'loss'")" = 1 ] ||
  fail "no validation at the target after the stop: $(sql "SELECT kind, batches, name, value FROM metrics")"
[ "$(sql "SELECT best_validation IS NOT NULL FROM trials")" = 1 ] || fail "the trial has no best validation"
store_ok
echo "stop_at_target: ok"
