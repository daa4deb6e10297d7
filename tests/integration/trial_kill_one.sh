#!/usr/bin/env bash
# `t2exp kill EXP.N` (Determined's `det trial kill`): one trial ends CANCELED, for good, and the
# search goes on. For each way a trial runs (a worker, its own process, two ranks under mpirun):
# (1) the running trial is killed mid-batch: CANCELED with the reason, no restart (max_restarts
# is 2), its process gone; a QUEUED trial is canceled before it ever starts; the rest complete and
# the experiment COMPLETES with exit 0, "2 canceled" in its summary; a second kill says the trial
# has already ended (exit 2). (2) A killed trial stays killed across a pause and a resume, and a
# trial of the PAUSED experiment is killed with no controller (the resume's searcher learns it);
# a `t2exp kill EXP`'s CANCELED trials run again on resume, but not one killed by `kill EXP.N`.
# (3) ASHA, whose rungs wait on their trials, finishes its search with a killed trial.
source "$(dirname "$0")/common.bash"
command -v sqlite3 >/dev/null || { echo "trial_kill_one: skipped (no sqlite3)"; exit 77; }
trap 'for g in "$WORK"/*.yaml; do touch "${g%.yaml}".{a,b,c}.gate; done 2>/dev/null; pkill -KILL -f "$WORK/" 2>/dev/null || true; rm -rf "$WORK"' EXIT
build_scripted
modes="worker process_per_trial"
if with_mpi; then modes+=" mpi"; fi

# running PID — whether PID is a live process (a zombie that nobody reaped yet is not).
running() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null || true); [ -n "$s" ] && [[ $s != Z* ]]; }
# config NAME MODE SEARCHER — writes $WORK/NAME.yaml: three trials, each waiting at its own gate
# ($WORK/NAME.a|b|c.gate) in its first batch; one at a time.
config() {
  local res gbs=1
  if [ "$2" = mpi ]; then res="{slots_per_trial: 2, max_slots: 2}" gbs=2; else res="{max_slots: 1, isolation: $2}"; fi
  cat > "$WORK/$1.yaml" <<Y
name: $1
hyperparameters:
  global_batch_size: $gbs
  peak: 3
  wait_for: {type: categorical, vals: ["$WORK/$1.a.gate", "$WORK/$1.b.gate", "$WORK/$1.c.gate"]}
searcher: $3
resources: $res
max_restarts: 2
Y
}
grid="{name: grid, metric: score, smaller_is_better: false, max_length: {batches: 3}}"
# state EXP N — trial EXP.N's state
state() { sql "SELECT state FROM trials WHERE experiment_id = $1 AND ordinal = $2"; }
# waiting EXP NAME — waits until EXP's RUNNING trial waits at its gate; sets k (its ordinal), gate
# and pid (the waiting process: scripted_trial.c writes it to GATE.pid).
waiting() {
  local r
  for _ in $(seq 600); do
    r=$(sql "SELECT ordinal || ' ' || json_extract(hparams, '$.wait_for') FROM trials WHERE experiment_id = $1 AND state = 'RUNNING' LIMIT 1" 2>/dev/null || true)
    if [ -n "$r" ]; then
      k=${r%% *} gate=${r#* }
      if [ -s "$gate.pid" ] && pid=$(cat "$gate.pid") && running "$pid"; then return; fi
    fi
    sleep 0.1
  done
  fail "no trial of experiment $1 waits at its gate: $(cat "$WORK/$2.out")"
}

# start NAME MODE SEARCHER — experiment NAME (the home's next: n) created in the background (its
# controller ctl), until its first trial waits at its gate (waiting's k, gate, pid).
start() {
  n=$((n + 1))
  name=$1
  config "$name" "$2" "$3"
  "$T2EXP" create "$WORK/$name.yaml" "$WORK/scripted.so" --plain > "$WORK/$name.out" 2>&1 &
  ctl=$!
  waiting $n "$name"
}

n=0
for mode in $modes; do
  # (1) Kill the running trial, then a queued one; the third completes.
  start "one_$mode" "$mode" "$grid"
  first=$k first_pid=$pid first_gate=$gate
  expect_exit 0 timeout 120 "$T2EXP" kill "$n.$first"
  expect_in "$OUT" "trial $n.$first is CANCELED"
  [ "$(state $n "$first")" = CANCELED ] || fail "$mode: $n.$first is $(state $n "$first") after its kill"
  [ "$(sql "SELECT error FROM trials WHERE experiment_id = $n AND ordinal = $first")" = "killed by the user (t2exp kill $n.$first)" ] ||
    fail "$mode: the killed trial's error should say who killed it: $(sql "SELECT error FROM trials WHERE experiment_id = $n AND ordinal = $first")"
  for _ in $(seq 50); do running "$first_pid" || break; sleep 0.1; done
  running "$first_pid" && fail "$mode: the killed trial's process $first_pid still runs"
  # A QUEUED one: the other trial not yet started.
  queued=$(sql "SELECT ordinal FROM trials WHERE experiment_id = $n AND state = 'QUEUED' ORDER BY ordinal DESC LIMIT 1")
  [ -n "$queued" ] || queued=$(sql "SELECT ordinal FROM trials WHERE experiment_id = $n AND state = 'RUNNING' LIMIT 1")
  qgate=$(sql "SELECT json_extract(hparams, '$.wait_for') FROM trials WHERE experiment_id = $n AND ordinal = $queued")
  expect_exit 0 timeout 120 "$T2EXP" kill "$n.$queued"
  [ "$(state $n "$queued")" = CANCELED ] || fail "$mode: $n.$queued is $(state $n "$queued") after its kill"
  expect_exit 2 "$T2EXP" kill "$n.$queued"
  expect_in "$OUT" "has already ended: CANCELED"
  touch "$WORK/$name".{a,b,c}.gate
  wait "$ctl" || fail "$mode: the experiment exited $? with two trials killed: $(cat "$WORK/$name.out")"
  expect_in "$(cat "$WORK/$name.out")" "1 trial(s) completed, 0 errored, 2 canceled"
  [ "$(sql "SELECT state FROM experiments WHERE id = $n")" = COMPLETED ] || fail "$mode: experiment $n is not COMPLETED"
  [ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = $n AND state = 'COMPLETED'")" = 1 ] ||
    fail "$mode: the trial nobody killed did not complete"
  [ "$(sql "SELECT sum(restarts) FROM trials WHERE experiment_id = $n")" = 0 ] || fail "$mode: a killed trial was restarted"
  [ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = $n")" = 3 ] || fail "$mode: the search made more than its 3 trials"
  # A killed trial that was running may have reached its gate's .pid; the queued one never ran
  # (unless it had started when its kill came, which with one slot it could not).
  [ ! -e "$qgate.pid" ] || [ "$qgate" = "$first_gate" ] || fail "$mode: the trial killed while QUEUED ran anyway"
done

# (2) A kill survives a pause and a resume; a trial of the PAUSED experiment is killed with no
# controller running: its row is marked, and the resume's searcher takes it as ended.
start resume worker "$grid"
killed=$k
expect_exit 0 timeout 120 "$T2EXP" kill "$n.$killed"
waiting $n "$name" # the next trial took the slot
[ "$k" != "$killed" ] || fail "the killed trial $n.$killed still RUNNING"
paused=$k
kill -INT "$ctl"
pause_reached "$WORK/$name.out" "$ctl"
touch "$gate" # its batch ends, and the pause's checkpoint follows
wait "$ctl" || true
[ "$(sql "SELECT state FROM experiments WHERE id = $n")" = PAUSED ] || fail "experiment $n should be PAUSED"
[ "$(state $n "$paused")" = PAUSED ] || fail "$n.$paused should be PAUSED, is $(state $n "$paused")"
expect_exit 0 "$T2EXP" kill "$n.$paused"
expect_in "$OUT" "trial $n.$paused is CANCELED (its experiment is not running"
[ "$(state $n "$paused")" = CANCELED ] || fail "the offline kill left $n.$paused $(state $n "$paused")"
touch "$WORK/$name".{a,b,c}.gate
expect_exit 0 timeout 120 "$T2EXP" resume "$n" --plain
expect_in "$OUT" "1 trial(s) completed, 0 errored, 2 canceled"
for t in "$killed" "$paused"; do
  [ "$(state $n "$t")" = CANCELED ] || fail "the killed trial $n.$t is $(state $n "$t") after the resume"
  ! grep -q "trial $n\.$t started" <<<"$OUT" ||
    fail "the resume ran the killed trial $n.$t again: $OUT"
done
[ "$(sql "SELECT state FROM experiments WHERE id = $n")" = COMPLETED ] || fail "experiment $n did not complete"
expect_exit 2 "$T2EXP" kill "$n.$paused"
expect_in "$OUT" "has already ended: CANCELED"

# (2b) The trials a `t2exp kill EXP` canceled run again on resume; one of them killed by
# `t2exp kill EXP.N` meanwhile does not.
start expkill worker "$grid"
expect_exit 0 timeout 60 "$T2EXP" kill "$n"
wait "$ctl" || true
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = $n AND state = 'CANCELED'")" = 3 ] || fail "kill $n should cancel its 3 trials"
expect_exit 0 "$T2EXP" kill "$n.1"
touch "$WORK/$name".{a,b,c}.gate
expect_exit 0 timeout 120 "$T2EXP" resume "$n" --plain
expect_in "$OUT" "2 trial(s) completed, 0 errored, 1 canceled"
[ "$(state $n 1)" = CANCELED ] || fail "$n.1, killed by kill $n.1, is $(state $n 1) after the resume"

# (3) ASHA goes on without the killed trial's result and finishes.
start asha worker "{name: adaptive_asha, metric: score, smaller_is_better: false, max_length: {batches: 4}, max_trials: 3, max_rungs: 2, divisor: 2, mode: aggressive, stop_once: false}"
expect_exit 0 timeout 120 "$T2EXP" kill "$n.$k"
touch "$WORK/$name".{a,b,c}.gate
wait "$ctl" || fail "the ASHA experiment exited $? with a killed trial: $(cat "$WORK/$name.out")"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = $n AND state IN ('QUEUED', 'RUNNING', 'PAUSED')")" = 0 ] ||
  fail "the ASHA experiment ended with trials left: $("$T2EXP" trials $n)"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = $n AND state = 'CANCELED'")" = 1 ] || fail "ASHA: not one CANCELED trial"
store_ok
echo "trial_kill_one: ok ($modes)"
