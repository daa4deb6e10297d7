#!/usr/bin/env bash
# resources.isolation: under `worker` (the default) one long-lived process per slot runs trial
# after trial, so what a trial leaves in its globals is there for the next (scripted_trial.c
# counts its build_model calls in a global and prints the count to the trial's log): on one slot
# the four trials see 1, 2, 3, 4. Under `process_per_trial` every trial is a fresh process and
# sees 1. A worker killed mid-trial fails only that trial, which is restarted (max_restarts) on a
# fresh worker, and the experiment completes. Each trial's `t2exp logs` shows its own runs only,
# though a worker's trials share one log file.
source "$(dirname "$0")/common.bash"
command -v "${CC:-cc}" >/dev/null || { echo "trial_isolation: skipped (no C compiler)"; exit 77; }
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -shared -fPIC -I "$T2EXP_SOURCE/framework/include" \
  "$T2EXP_SOURCE/tests/integration/scripted_trial.c" -o "$WORK/scripted.so" -lm

# builds EXP — the build counts the experiment's trials printed, in trial order, one line.
builds() {
  local id out=""
  for id in $(sql "SELECT id FROM trials WHERE experiment_id=$1 ORDER BY id"); do
    out+="$("$T2EXP" logs "$id" | sed -n 's/^scripted: build \([0-9]*\) in this process$/\1/p' | tr '\n' ' ')"
  done
  echo "${out% }"
}

for mode in worker process_per_trial; do
  cat > "$WORK/$mode.yaml" <<Y
name: isolation_$mode
hyperparameters: {global_batch_size: 1, peak: {type: categorical, vals: [1, 2, 3, 4]}}
searcher: {name: grid, metric: score, smaller_is_better: false, max_length: {batches: 20}}
resources: {max_slots: 1, isolation: $mode}
Y
done
expect_exit 0 "$T2EXP" create "$WORK/worker.yaml" "$WORK/scripted.so" --plain
expect_in "$OUT" "4 trial(s) completed, 0 errored"
[ "$(builds 1)" = "1 2 3 4" ] || fail "worker: build counts $(builds 1), wanted 1 2 3 4 (one worker, reused)"

expect_exit 0 "$T2EXP" create "$WORK/process_per_trial.yaml" "$WORK/scripted.so" --plain
expect_in "$OUT" "4 trial(s) completed, 0 errored"
[ "$(builds 2)" = "1 1 1 1" ] || fail "process_per_trial: build counts $(builds 2), wanted 1 1 1 1"

# The default is worker; an unknown mode is an error naming the key and the choices.
sed -i '/^resources:/d' "$WORK/worker.yaml"
cat >> "$WORK/worker.yaml" <<Y
resources: {max_slots: 1, isolation: threads}
Y
expect_exit 2 "$T2EXP" create "$WORK/worker.yaml" "$WORK/scripted.so" --plain
expect_in "$OUT" "resources.isolation"
expect_in "$OUT" "must be worker or process_per_trial"

# A worker killed mid-trial: that trial fails and restarts on a fresh worker; the others complete.
# The trial waits for the file go (hparam wait_for in scripted_trial.c), saying its pid in go.pid.
cat > "$WORK/kill.yaml" <<Y
name: worker_killed
hyperparameters: {global_batch_size: 1, wait_for: "$WORK/go", peak: {type: categorical, vals: [1, 2]}}
searcher: {name: grid, metric: score, smaller_is_better: false, max_length: {batches: 20}}
resources: {max_slots: 1}
max_restarts: 1
Y
"$T2EXP" create "$WORK/kill.yaml" "$WORK/scripted.so" --plain > "$WORK/kill.out" 2>&1 &
ctl=$!
worker=""
for _ in $(seq 600); do
  [ -s "$WORK/go.pid" ] && worker=$(cat "$WORK/go.pid") && break
  sleep 0.1
done
[ -n "$worker" ] || { kill "$ctl"; fail "the trial never started waiting: $(cat "$WORK/kill.out")"; }
kill -KILL "$worker"
touch "$WORK/go"
wait "$ctl" || fail "the experiment failed: $(cat "$WORK/kill.out")"
OUT=$(cat "$WORK/kill.out")
expect_in "$OUT" "trial 9 failed (the trial process killed by signal 9 (Killed)); restart 1 of 1"
expect_in "$OUT" "2 trial(s) completed, 0 errored"
[ "$(sql "SELECT restarts FROM trials WHERE id=9")" = 1 ] || fail "trial 9 should have restarted once"
# Its log holds both runs (the killed worker's part, then the fresh one's), and no other trial's.
runs() { "$T2EXP" logs "$1" | grep -c "^scripted: build"; }
[ "$(runs 9)" = 2 ] && [ "$(runs 10)" = 1 ] || fail "trial logs: trial 9 shows $(runs 9) runs (wanted 2), trial 10 $(runs 10) (wanted 1)"
[ -z "$(own_pids 't2exp create')" ] || fail "a process of the experiment is left"
store_ok
