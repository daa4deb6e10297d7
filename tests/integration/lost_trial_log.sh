#!/usr/bin/env bash
# A controller that dies before its batch commits gives the lost trials' ids out again; a trial in
# its own process (resources.isolation: process_per_trial, or mpirun) writes trial-<id>.log, so
# the new trial with that id found the lost one's output in its log, and `t2exp logs` showed it as
# an earlier run of the new trial. The controller now sets a log it finds at a new trial's path
# aside as trial-<id>.log.lost-K (kept, not deleted) before the trial's first run. The lost trial
# is made here by hand (its log written where experiment 1's first trial will write), which is
# what a killed controller leaves. A trial that fails and restarts keeps both its runs' output.
source "$(dirname "$0")/common.bash"
build_scripted

D="$T2EXP_HOME/experiments/1"
mkdir -p "$D"
echo "output of a lost trial" > "$D/trial-1.log"
echo "an older lost trial" > "$D/trial-1.log.lost-1"
touch "$WORK/fail-once"
cat > "$WORK/exp.yaml" <<Y
name: lost_trial_log
hyperparameters: {global_batch_size: 1, peak: {type: categorical, vals: [1, 2]}, fail_marker: "$WORK/fail-once"}
searcher: {name: grid, metric: score, smaller_is_better: false, max_length: {batches: 5}}
resources: {max_slots: 1, isolation: process_per_trial}
max_restarts: 1
Y
expect_exit 0 "$T2EXP" create "$WORK/exp.yaml" "$WORK/scripted.so" --plain
expect_in "$OUT" "2 trial(s) completed, 0 errored"
first=$(sql "SELECT min(id) FROM trials WHERE experiment_id = 1")
[ "$first" = 1 ] || fail "the experiment's first trial is $first, not 1: the test's lost log is not in its way"
log=$("$T2EXP" logs 1)
! grep -q "lost trial" <<<"$log" || fail "trial 1's log shows a lost trial's output: $log"
[ "$(cat "$D/trial-1.log.lost-2")" = "output of a lost trial" ] || fail "the lost trial's log was not kept as trial-1.log.lost-2"
[ "$(cat "$D/trial-1.log.lost-1")" = "an older lost trial" ] || fail "an earlier set-aside log was overwritten"
# Trial 1 failed once (fail_marker) and ran again: both runs are its own, in its log.
[ "$(sql 'SELECT restarts FROM trials WHERE id = 1')" = 1 ] || fail "trial 1 did not restart: $(sql 'SELECT restarts FROM trials')"
[ "$(grep -c '^scripted: pid ' <<<"$log")" = 2 ] || fail "trial 1's log does not hold both its runs: $log"
[ ! -e "$D/trial-1.log.lost-3" ] || fail "the restart set trial 1's own first run aside"
# `logs 1 --lost` shows both set-aside logs, under lines that name them, and no run of its own trials.
lost=$("$T2EXP" logs 1 --lost)
[ "$(grep -c '^=== lost run of trial id 1 .*trial-1\.log\.lost-[12] ===$' <<<"$lost")" = 2 ] || fail "logs 1 --lost: $lost"
grep -qx "an older lost trial" <<<"$lost" && grep -qx "output of a lost trial" <<<"$lost" || fail "logs 1 --lost: $lost"
! grep -q '^scripted: pid ' <<<"$lost" || fail "logs 1 --lost shows a stored trial's run: $lost"
# A trial log no trial of the experiment owns (its trial lost, its id not given out again) is lost too.
echo "a lost trial never replaced" > "$D/trial-99.log"
grep -qx "a lost trial never replaced" <<<"$("$T2EXP" logs 1 --lost)" || fail "trial-99.log is not shown as lost"
expect_exit 2 "$T2EXP" logs 7 --lost
expect_in "$OUT" "experiment 7"
echo "ok: the lost log kept beside trial 1's, which shows its own two runs; logs --lost shows the lost ones"
