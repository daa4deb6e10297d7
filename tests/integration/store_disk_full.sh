#!/usr/bin/env bash
# A store that runs out of space mid-experiment (a file-size limit, as a full disk): the experiment
# ends PAUSED with the reason, no committed row is lost, and once there is space `resume` finishes
# the same search an uninterrupted run does (same trials, same results).
source "$(dirname "$0")/common.bash"
command -v prlimit >/dev/null || { echo "SKIP: prlimit (util-linux) missing"; exit 77; }

create() { "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" --config searcher.max_trials=3000 "$@"; }
# 1.5 MB: the first batches (10,000 writes or 200 ms each) fit; the store (its write-ahead log
# first) outgrows it a few hundred trials in. With 300 trials the whole run was one batch, whose
# only commit, at the end, was the one that failed.
expect_exit 1 prlimit --fsize=1500000 "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" \
  --config searcher.max_trials=3000 --plain
expect_in "$OUT" "experiment 1 PAUSED"
expect_in "$OUT" "the store ran out of space"
expect_in "$OUT" "t2exp resume 1"
store_ok
[ "$(sql 'SELECT state FROM experiments WHERE id = 1')" = PAUSED ] || fail "not PAUSED"
expect_in "$(sql 'SELECT error FROM experiments WHERE id = 1')" "ran out of space"
done1=$(sql "SELECT count(*) FROM trials WHERE experiment_id = 1 AND state = 'COMPLETED'")
[ "$done1" -gt 0 ] && [ "$done1" -lt 3000 ] || fail "expected a pause mid-run, $done1 trials completed"
# What was committed before the pause.
sql "SELECT t.ordinal, m.kind, m.batches, m.name, m.value FROM metrics m JOIN trials t ON t.id = m.trial_id
     WHERE t.experiment_id = 1" | LC_ALL=C sort > "$WORK/before.txt"

# Space is back.
expect_exit 0 "$T2EXP" resume 1 --quiet
expect_in "$OUT" "experiment 1 COMPLETED"
store_ok
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = 1 AND state = 'COMPLETED'")" = 3000 ] || fail "not all 3000 trials completed"
sql "SELECT t.ordinal, m.kind, m.batches, m.name, m.value FROM metrics m JOIN trials t ON t.id = m.trial_id
     WHERE t.experiment_id = 1" | LC_ALL=C sort > "$WORK/after.txt"
missing=$(LC_ALL=C comm -23 "$WORK/before.txt" "$WORK/after.txt" | wc -l)
[ "$missing" = 0 ] || fail "$missing committed metric rows are gone after resume"

# The same search uninterrupted: the same trials with the same results.
expect_exit 0 create --quiet
same=$(sql "SELECT count(*) FROM trials a JOIN trials b ON a.ordinal = b.ordinal
            WHERE a.experiment_id = 1 AND b.experiment_id = 2 AND a.hparams = b.hparams
            AND a.best_validation = b.best_validation AND a.state = b.state")
[ "$same" = 3000 ] || fail "only $same of 3000 trials match the uninterrupted run"
echo "ok: paused after $done1 of 3000 trials; resumed to 3000, identical to an uninterrupted run"
