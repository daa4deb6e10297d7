#!/usr/bin/env bash
# A controller killed outright (SIGKILL, the OOM killer) takes its trials with it: a forked trial
# or worker at once (PR_SET_PDEATHSIG), mpirun by its teardown of the ranks. Before, a trial went
# on until its batch ended and its report found no reader, which could be long after `t2exp
# resume` had started it again beside itself. What the trial started goes too (scripted_trial.c's
# helper_pids: the trial guardian ends a local trial's group, a rank's guardian a rank's). Then
# the resume finishes the experiment. Each with a trial whose batch does not end by itself
# (scripted_trial.c's wait_for), under both isolation modes and, where built with MPI, on two
# ranks.
source "$(dirname "$0")/common.bash"
trap 'touch "$WORK"/gate* 2>/dev/null; pkill -KILL -f "$WORK/" 2>/dev/null || true
      for p in $(cat "$WORK"/helpers* 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
build_scripted

# running PID... — the pids among PID... that still run (a zombie nobody reaps does not).
running() { local p; for p in "$@"; do [ -n "$(ps -o stat= -p "$p" | grep -v '^Z' || true)" ] && echo "$p"; done; return 0; }

modes="worker process_per_trial"
if with_mpi; then modes+=" mpi"; fi
n=0
for mode in $modes; do
  n=$((n + 1))
  gate="$WORK/gate$n"
  if [ "$mode" = mpi ]; then res="{slots_per_trial: 2}" gbs=2; else res="{max_slots: 1, isolation: $mode}" gbs=1; fi
  cat > "$WORK/e$n.yaml" <<Y
name: death_$mode
hyperparameters: {global_batch_size: $gbs, wait_for: "$gate", helper_pids: "$WORK/helpers$n", peak: 1}
searcher: {name: single, metric: score, smaller_is_better: false, max_length: {batches: 20}}
resources: $res
Y
  "$T2EXP" create "$WORK/e$n.yaml" "$WORK/scripted.so" --plain > "$WORK/e$n.out" 2>&1 &
  ctl=$!
  waiting_pid "$gate" "$ctl" "$WORK/e$n.out" >/dev/null || exit 1
  procs=$(own_pids "t2exp create .*e$n.yaml|run-trial|mpirun|orted" | grep -vx "$ctl" || true)
  [ -n "$procs" ] || fail "$mode: no trial process found"
  [ -s "$WORK/helpers$n" ] || fail "$mode: the trial started no helper"
  procs="$procs $(cat "$WORK/helpers$n")"
  expect_exit 0 "$T2EXP" describe "$n" --json
  [ "$(json "json_extract(j, '\$.experiment.controller_running')")" = 1 ] || fail "$mode: describe --json does not say a controller runs $n"
  kill -KILL "$ctl"
  wait "$ctl" 2>/dev/null || true
  left=
  for _ in $(seq 150); do
    left=$(running $procs)
    [ -z "$left" ] && break
    sleep 0.1
  done
  [ -z "$left" ] || fail "$mode: 15 s after the controller was killed its trial's processes (or their helpers) still run: $(ps -o pid,stat,args -p "$(echo $left | tr " " ,)")"
  # The views say that no controller runs it (they said ACTIVE as if it ran; probe_J).
  expect_exit 0 "$T2EXP" describe "$n"
  expect_in "$OUT" "no controller runs it: it was killed or crashed before it recorded an end; \`t2exp resume $n\` continues it"
  expect_exit 1 "$T2EXP" follow "$n"
  expect_in "$OUT" "experiment $n is ACTIVE, but no controller runs it"
  expect_exit 0 "$T2EXP" list
  grep -qE "^ *$n .*ACTIVE \(no controller\)" <<<"$OUT" || fail "$mode: list does not say no controller runs $n: $OUT"
  expect_exit 0 "$T2EXP" list --json
  ! grep -q "no controller" <<<"$OUT" || fail "$mode: list --json changed the stored state"
  # JSON (the dashboard's API) keeps the stored state and says no controller runs it.
  [ "$(json "(SELECT json_extract(value, '\$.state') || '/' || json_extract(value, '\$.controller_running') FROM json_each(j) WHERE json_extract(value, '\$.id') = $n)")" = ACTIVE/0 ] \
    || fail "$mode: list --json does not say no controller runs $n (state/controller_running): $OUT"
  expect_exit 0 "$T2EXP" describe "$n" --json
  [ "$(json "json_extract(j, '\$.experiment.state') || '/' || json_extract(j, '\$.experiment.controller_running')")" = ACTIVE/0 ] \
    || fail "$mode: describe --json does not say no controller runs $n: $OUT"
  # Its durations end at its last sign of life, not now: they do not grow while nothing runs.
  d1=$(json "json_extract(j, '\$.experiment.duration')")
  expect_exit 0 "$T2EXP" trials "$n" --json
  t1=$(json "json_extract(j, '\$[0].duration')")
  sleep 1.2
  expect_exit 0 "$T2EXP" trials "$n" --json
  t2=$(json "json_extract(j, '\$[0].duration')")
  expect_exit 0 "$T2EXP" describe "$n" --json
  d2=$(json "json_extract(j, '\$.experiment.duration')")
  [ -n "$d1" ] && [ "$d1" = "$d2" ] && [ "$t1" = "$t2" ] \
    || fail "$mode: the dead experiment's durations grew: experiment $d1 -> $d2, trial $t1 -> $t2"
  touch "$gate"
  expect_exit 0 timeout 120 "$T2EXP" resume "$n" --plain
  expect_in "$OUT" "1 trial(s) completed, 0 errored"
  echo "controller_death: $mode: the trial's processes ended with the controller; the resume completed"
done
store_ok
echo "controller_death: ok"
