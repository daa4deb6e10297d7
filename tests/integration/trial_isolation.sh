#!/usr/bin/env bash
# resources.isolation: under `worker` (the default) one long-lived process per slot runs trial
# after trial, so what a trial leaves in its globals is there for the next (scripted_trial.c
# counts its build_model calls in a global and prints the count to the trial's log): on one slot
# the four trials see 1, 2, 3, 4. Under `process_per_trial` every trial is a fresh process and
# sees 1. A worker killed mid-trial fails only that trial, which is restarted (max_restarts) on a
# fresh worker, and the experiment completes. Each trial's `t2exp logs` shows its own runs only,
# though a worker's trials share one log file.
source "$(dirname "$0")/common.bash"
build_scripted

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
# Neither kind of process keeps the controller's descriptors of the store's files: a stray write
# of a trial's must not land in the database.
for e in 1 2; do
  fdlines=$(exp_logs "$e" | grep "^scripted: store descriptors" | sort | uniq -c)
  [ "$fdlines" = "      4 scripted: store descriptors 0" ] || fail "experiment $e: trials inherited store descriptors: $fdlines"
done

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
worker=$(waiting_pid "$WORK/go" "$ctl" "$WORK/kill.out") || exit 1
kill -KILL "$worker"
touch "$WORK/go"
wait "$ctl" || fail "the experiment failed: $(cat "$WORK/kill.out")"
OUT=$(cat "$WORK/kill.out")
# Lines name a trial EXP.N (store id 9 is this experiment's trial N).
expect_in "$OUT" "trial $(sql "SELECT experiment_id || '.' || ordinal FROM trials WHERE id=9") failed (the trial process killed by signal 9 (Killed); it had reported no batch); restart 1 of 1"
expect_in "$OUT" "2 trial(s) completed, 0 errored"
[ "$(sql "SELECT restarts FROM trials WHERE id=9")" = 1 ] || fail "trial 9 should have restarted once"
# Its log holds both runs (the killed worker's part, then the fresh one's), and no other trial's.
runs() { "$T2EXP" logs "$1" | grep -c "^scripted: build"; }
[ "$(runs 9)" = 2 ] && [ "$(runs 10)" = 1 ] || fail "trial logs: trial 9 shows $(runs 9) runs (wanted 2), trial 10 $(runs 10) (wanted 1)"
[ -z "$(own_pids 't2exp create')" ] || fail "a process of the experiment is left"

# A trial that ran in a worker and then, after a resume that changed resources.isolation, in its
# own process: its log reads in run order, the worker's run first (the own process's log used to
# come first, whatever the order of the runs).
cat > "$WORK/mixed.yaml" <<Y
name: mixed_isolation
hyperparameters: {global_batch_size: 1, wait_for: "$WORK/go2", peak: 1}
searcher: {name: single, metric: score, smaller_is_better: false, max_length: {batches: 20}}
resources: {max_slots: 1}
Y
"$T2EXP" create "$WORK/mixed.yaml" "$WORK/scripted.so" --plain > "$WORK/mixed.out" 2>&1 &
ctl=$!
worker=$(waiting_pid "$WORK/go2" "$ctl" "$WORK/mixed.out") || exit 1
# The run's segment is in the store once the controller's batch commits (a crash before that would
# lose it, with the rest of the batch).
wait_for "SELECT count(*) FROM trial_log_segments s JOIN trials t ON t.id = s.trial_id JOIN experiments e ON e.id = t.experiment_id WHERE e.name = 'mixed_isolation'"
kill -KILL "$ctl" # the controller dies mid-trial: the experiment stays RUNNING, for resume
kill -KILL "$worker"
wait "$ctl" 2>/dev/null || true
touch "$WORK/go2"
exp=$(sql "SELECT id FROM experiments WHERE name = 'mixed_isolation'")
expect_exit 0 "$T2EXP" resume "$exp" --config resources.isolation=process_per_trial --plain
tid=$(sql "SELECT id FROM trials WHERE experiment_id = $exp")
pids=$("$T2EXP" logs "$tid" | sed -n 's/^scripted: pid //p' | tr '\n' ' ')
set -- $pids
[ $# = 2 ] || fail "the mixed trial's log shows $# runs (pids: $pids), wanted 2"
[ "$1" = "$worker" ] && [ "$2" != "$worker" ] \
  || fail "the mixed trial's log is out of run order: pids $pids, the worker's run ($worker) first wanted"
echo "trial_isolation: a worker run, then one in its own process, read back in that order"

# A worker that dies while idle is found before a trial is given to it (the controller knows its
# workers alive without a waitpid while none of its children has ended): two slots, the first
# trial waits on a gate, the second ends and leaves its worker idle; that idle worker is killed,
# then the busy one. The first trial's restart goes to the first entry with a process, the dead
# idle one, which must be replaced: given to the dead worker, the restart would fail too (ERRORED).
touch "$WORK/open"
cat > "$WORK/idle.yaml" <<Y
name: idle_worker_killed
hyperparameters: {global_batch_size: 1, wait_for: {type: categorical, vals: ["$WORK/go3", "$WORK/open"]}}
searcher: {name: grid, metric: score, smaller_is_better: false, max_length: {batches: 20}}
resources: {max_slots: 2}
max_restarts: 1
Y
"$T2EXP" create "$WORK/idle.yaml" "$WORK/scripted.so" --plain > "$WORK/idle.out" 2>&1 &
ctl=$!
busy=$(waiting_pid "$WORK/go3" "$ctl" "$WORK/idle.out") || exit 1
exp=$(sql "SELECT id FROM experiments WHERE name = 'idle_worker_killed'")
wait_for "SELECT count(*) FROM trials WHERE experiment_id = $exp AND state = 'COMPLETED'"
idle=$(pgrep -P "$ctl" | grep -vx "$busy" || true)
[ "$(wc -w <<<"$idle")" = 1 ] || { kill "$ctl"; fail "wanted one idle worker beside $busy, found: $idle"; }
kill -KILL "$idle"
sleep 0.2
rm -f "$WORK/go3.pid"
kill -KILL "$busy"
waiting_pid "$WORK/go3" "$ctl" "$WORK/idle.out" >/dev/null || exit 1 # the restart is running
touch "$WORK/go3"
wait "$ctl" || fail "the experiment failed: $(cat "$WORK/idle.out")"
OUT=$(cat "$WORK/idle.out")
expect_in "$OUT" "restart 1 of 1"
expect_in "$OUT" "2 trial(s) completed, 0 errored"
echo "trial_isolation: a worker killed while idle was replaced before its next trial"
# What a trial changes of its process beyond its globals (a blocked SIGTERM, an alarm, CPU-time
# timers, a signal's disposition, the umask, the open-files limit) is put back before the worker's next trial: a blocked SIGTERM made every
# later trial on the worker deaf to pause, an alarm killed the next (probe_L). The worker's first
# trial taints; all four trials find the state the first found.
cat > "$WORK/taint.yaml" <<Y
name: isolation_taint
hyperparameters: {global_batch_size: 1, taint: 1, peak: {type: categorical, vals: [1, 2, 3, 4]}}
searcher: {name: grid, metric: score, smaller_is_better: false, max_length: {batches: 20}}
resources: {max_slots: 1, isolation: worker}
Y
expect_exit 0 "$T2EXP" create "$WORK/taint.yaml" "$WORK/scripted.so" --plain
expect_in "$OUT" "4 trial(s) completed, 0 errored"
n=$(sql "SELECT max(id) FROM experiments")
states=$(exp_logs "$n" | grep "^scripted: state" | sort | uniq -c)
[ "$(wc -l <<<"$states")" = 1 ] && grep -q "^ *4 scripted: state term_blocked 0 alarm 0 vtimer 0 proftimer 0 prof_ignored 0 " <<<"$states" ||
  fail "worker: the trials after a tainting one found its process state: $states"
store_ok
