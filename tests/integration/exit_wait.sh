#!/usr/bin/env bash
# exit_wait.sh — a runner whose channel closed is awaited as an event of the controller's loop
# (issue 12: the controller never blocks). A trial that closes every descriptor above 2 (its
# runner's channel too) and goes on running gets 5 s before it is ended; the controller waited
# those 5 s inside its loop, and the trial beside it was not heard from meanwhile. Checks that the
# other trial's progress keeps reaching the store while the first is awaited, and that the first
# still ends with the reason and nothing left running.
source "$(dirname "$0")/common.bash"
trap 'touch "$WORK/free"; pkill -KILL -f "$WORK/" 2>/dev/null || true; rm -rf "$WORK"' EXIT
build_scripted
cat > "$WORK/e.yaml" <<Y
name: exit_wait
hyperparameters:
  global_batch_size: 1
  peak: 1
  slow_ms: 50
  close_until: {type: categorical, vals: ["$WORK/free", ""]}
searcher: {name: grid, metric: score, smaller_is_better: false, max_length: {batches: 200}}
scheduling_unit: 5
resources: {max_slots: 2, isolation: process_per_trial}
max_restarts: 0
Y
"$T2EXP" create "$WORK/e.yaml" "$WORK/scripted.so" --plain > "$WORK/out" 2>&1 &
ctl=$!
# The closing trial closes its channel at batch 3 (0.15 s in); the other trains 20 batches a second.
other="SELECT batches_trained FROM trials WHERE hparams NOT LIKE '%$WORK/free%'"
sleep 1.5
b0=$(sql "$other")
sleep 3
b1=$(sql "$other")
echo "exit_wait: the other trial recorded batch '$b0', then '$b1' 3 s later, while the closed one was awaited"
[ -n "$b0" ] && [ "${b1:-0}" -ge $((b0 + 20)) ] || { kill $ctl; cat "$WORK/out"; fail "the controller recorded nothing while it awaited the closed trial: '$b0' -> '$b1'"; }
wait $ctl || true
OUT=$(cat "$WORK/out")
expect_in "$OUT" "its channel to the controller closed while its process still ran"
expect_in "$OUT" "1 trial(s) completed, 1 errored"
# (Its process is a fork of the controller's, without exec: the same command line.)
[ -z "$(own_pids "t2exp create $WORK/e.yaml")" ] || fail "the closed trial's process was left running"
echo "exit_wait: ok"
