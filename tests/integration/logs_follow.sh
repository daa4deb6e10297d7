#!/usr/bin/env bash
# `t2exp logs TRIAL --follow` (-f): a trial's output as it is written, until the trial ends. (1) A
# trial still QUEUED behind another on the one worker is followed until it completes, exit 0, with
# its own output only (the worker's log holds its neighbour's too), the same bytes `logs` prints
# after; (2) a trial that fails once and restarts is followed across both runs; (3) one that fails
# for good ends the follow with exit 1; (4) a pause ends it (exit 1) with the controller.
source "$(dirname "$0")/common.bash"
trap 'touch "$WORK/g1" "$WORK/g2" "$WORK/gate4"; pkill -KILL -f "$WORK/" 2>/dev/null || true; rm -rf "$WORK"' EXIT
build_scripted
config() { # FILE HPARAMS [EXTRA]
  cat > "$1" <<Y
name: follow
hyperparameters: {global_batch_size: 1, peak: 3, $2}
searcher: {name: grid, metric: score, smaller_is_better: false, max_length: {batches: 5}}
resources: {max_slots: 1}
${3:-max_restarts: 0}
Y
}
# running PID — whether PID still runs (not a zombie).
running() { [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status"; }

# (1) Each trial waits at a gate of its own; the first to start holds the one slot, the other
# waits for it (its gate opened in advance, so it only waits for the slot).
config "$WORK/e1.yaml" "wait_for: {type: categorical, vals: [\"$WORK/g1\", \"$WORK/g2\"]}"
"$T2EXP" create "$WORK/e1.yaml" "$WORK/scripted.so" --plain > "$WORK/c1.log" 2>&1 &
ctl=$!
for _ in $(seq 600); do [ -s "$WORK/g1.pid" ] || [ -s "$WORK/g2.pid" ] && break; sleep 0.1; done
if [ -s "$WORK/g1.pid" ]; then first=g1 other=g2; else first=g2 other=g1; fi
[ -s "$WORK/$first.pid" ] || fail "no trial started: $(cat "$WORK/c1.log")"
touch "$WORK/$other"
wait_for "SELECT count(*) FROM trials WHERE experiment_id = 1 AND hparams LIKE '%/$first\"%' AND state = 'RUNNING'"
q=$(sql "SELECT ordinal FROM trials WHERE experiment_id = 1 AND hparams LIKE '%/$other\"%'")
[ "$(sql "SELECT state FROM trials WHERE experiment_id = 1 AND ordinal = $q")" = QUEUED ] || fail "1.$q should be queued"
"$T2EXP" logs "1.$q" --follow > "$WORK/f1.out" 2> "$WORK/f1.err" &
fol=$!
sleep 1
running "$fol" || fail "the follow of a queued trial ended at once: $(cat "$WORK/f1.err")"
[ ! -s "$WORK/f1.out" ] || fail "a queued trial's follow printed: $(cat "$WORK/f1.out")"
touch "$WORK/$first"
wait "$ctl" || fail "experiment 1 failed: $(cat "$WORK/c1.log")"
wait "$fol" || fail "the follow of a completed trial exited $?: $(cat "$WORK/f1.err")"
[ "$(sql "SELECT state FROM trials WHERE experiment_id = 1 AND ordinal = $q")" = COMPLETED ] || fail "1.$q did not complete"
"$T2EXP" logs "1.$q" > "$WORK/l1.out"
cmp -s "$WORK/f1.out" "$WORK/l1.out" || fail "follow and logs differ: $(diff "$WORK/f1.out" "$WORK/l1.out" | head)"
grep -q "scripted: build 2 in this process" "$WORK/f1.out" || fail "1.$q's own output is missing: $(cat "$WORK/f1.out")"
! grep -q "scripted: build 1 in this process" "$WORK/f1.out" || fail "the gate trial's output (the same worker) was followed too"
grep -q "checkpoint .* at batch 5:" "$WORK/f1.out" || fail "the follow ended before the trial's last line"

# (2) A failure, then a restart that completes: one follow, both runs. Right after `create
# --detach` the trial's row may not be there yet: the follow waits for it while the run lives.
touch "$WORK/marker"
config "$WORK/e2.yaml" "fail_marker: \"$WORK/marker\"" "max_restarts: 1"
"$T2EXP" create "$WORK/e2.yaml" "$WORK/scripted.so" --plain --detach > "$WORK/c2.log" 2>&1
expect_exit 0 "$T2EXP" logs 2.0 -f
[ "$(grep -c "scripted: build" <<<"$OUT")" = 2 ] || fail "the follow should hold both runs: $OUT"
[ "$(sql "SELECT restarts FROM trials WHERE experiment_id = 2")" = 1 ] || fail "2.0 should have restarted once"

# (3) A trial that fails for good: exit 1.
config "$WORK/e3.yaml" "fail_build: 1"
"$T2EXP" create "$WORK/e3.yaml" "$WORK/scripted.so" --plain --detach > "$WORK/c3.log" 2>&1
expect_exit 1 "$T2EXP" logs 3.0 -f
expect_in "$OUT" "scripted: build 1 in this process"

# (4) A pause ends the follow of its running trial with the controller.
config "$WORK/e4.yaml" "wait_for: \"$WORK/gate4\""
"$T2EXP" create "$WORK/e4.yaml" "$WORK/scripted.so" --plain > "$WORK/c4.log" 2>&1 &
ctl=$!
waiting_pid "$WORK/gate4" "$ctl" "$WORK/c4.log" > /dev/null
"$T2EXP" logs 4.0 -f > "$WORK/f4.out" 2>&1 &
fol=$!
sleep 0.5
running "$fol" || fail "the follow of a running trial ended at once: $(cat "$WORK/f4.out")"
kill -TERM "$ctl"
pause_reached "$WORK/c4.log" "$ctl"
touch "$WORK/gate4"
wait "$ctl" || true
set +e
wait "$fol"
got=$?
set -e
[ "$got" = 1 ] || fail "the follow of a paused trial exited $got, not 1: $(cat "$WORK/f4.out")"
[ "$(sql "SELECT state FROM trials WHERE experiment_id = 4")" = PAUSED ] || fail "4.0 should be paused"

expect_exit 2 "$T2EXP" logs 1 --lost --follow
expect_in "$OUT" "--follow follows one trial's output"
store_ok
echo "logs_follow: ok"
