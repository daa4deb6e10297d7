#!/usr/bin/env bash
# A trial's processes are a process group of their own, apart from the controller's:
# - What a trial starts and leaves running (scripted_trial.c's helper_pids: a shell's background
#   `sleep`, as a data server would) ends with the trial: when the experiment completes and when
#   it is killed or crashes, under both isolation modes and, where built with MPI, on two ranks
#   (Open MPI makes each rank a group leader: a guardian ends the rank's group).
# - A terminal's Ctrl-C (SIGINT to the controller's whole group) is the controller's alone: the
#   trial finishes its batch and checkpoints. mpirun caught it and aborted the job at once (no
#   checkpoint) when it was in the controller's group.
# - A terminal's Ctrl-Z (SIGTSTP to the group) stops the trials too (the controller passes it on),
#   and continuing the controller's group continues them; the experiment then completes.
# The controller runs in a process group of its own here, as a shell's job does.
source "$(dirname "$0")/common.bash"
trap 'pkill -KILL -f "$WORK/" 2>/dev/null || true; for p in $(cat "$WORK"/*.helpers 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
build_scripted

# job OUT CMD... — runs CMD in the background in a process group of its own, as a shell's job is,
# its output in OUT; ctl is its pid. Job control only for the start: a script that has it on when a
# job stops leaves (bash ends it).
job() { local out=$1; shift; set -m; "$@" > "$out" 2>&1 & ctl=$!; set +m; }

# running PID — whether PID is a live process (a zombie that nobody reaped yet is not).
running() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null || true); [ -n "$s" ] && [[ $s != Z* ]]; }
# state_of PID — its ps state letter(s).
state_of() { ps -o stat= -p "$1" 2>/dev/null || true; }

modes="worker process_per_trial"
if with_mpi; then modes+=" mpi"; fi
n=0
# config NAME MODE EXTRA_HPARAMS SEARCHER — writes $WORK/NAME.yaml
config() {
  local res gbs=1
  # One slot: a trial of one thread, as the other stop tests run theirs. With two, the forked
  # trial starts a pool thread for its checkpoint, and under the ASan build about one run in twenty
  # hung there: GCC 12's ASan leaves its allocator mutex locked in a child forked while another
  # thread (the store's writer) held it. Release builds use glibc's malloc, which is fork-safe.
  if [ "$2" = mpi ]; then res="{slots_per_trial: 2}" gbs=2; else res="{max_slots: 1, isolation: $2}"; fi
  cat > "$WORK/$1.yaml" <<Y
name: $1
hyperparameters: {global_batch_size: $gbs, peak: {type: int, minval: 1, maxval: 4}$3}
searcher: $4
resources: $res
Y
}
# helpers_gone FILE WHAT — every pid in FILE has ended (within 5 s), and there is at least one.
helpers_gone() {
  [ -s "$1" ] || fail "$2: no helper was started ($1 is empty)"
  local p
  for p in $(cat "$1"); do
    for _ in $(seq 50); do running "$p" || break; sleep 0.1; done
    running "$p" && fail "$2: the trial's helper $p still runs after the trial ended ($(ps -o pid,pgid,args -p "$p" | tail -n 1))"
  done
  return 0
}
single="{name: single, metric: score, smaller_is_better: false, max_length: {batches: 5}}"
# start_waiting NAME MODE [HPARAMS [LINE]] — starts experiment NAME_MODE (the home's next) as a
# job: one trial that waits in its first batch for $gate; LINE is added to its config. Sets n,
# gate, ctl and trial (the waiting process).
start_waiting() {
  n=$((n + 1))
  gate="$WORK/$1_$2.gate"
  config "$1_$2" "$2" ", wait_for: \"$gate\"${3:-}" "$single"
  [ -z "${4:-}" ] || echo "$4" >> "$WORK/$1_$2.yaml"
  job "$WORK/$1_$2.out" "$T2EXP" create "$WORK/$1_$2.yaml" "$WORK/scripted.so" --plain
  trial=$(waiting_pid "$gate" "$ctl" "$WORK/$1_$2.out") || exit 1
}

for mode in $modes; do
  # 1. Helpers end with trials that complete.
  n=$((n + 1))
  config "done_$mode" "$mode" ", helper_pids: \"$WORK/done_$mode.helpers\"" \
    "{name: random, metric: score, smaller_is_better: false, max_length: {batches: 3}, max_trials: 3}"
  expect_exit 0 timeout 120 "$T2EXP" create "$WORK/done_$mode.yaml" "$WORK/scripted.so" --quiet
  [ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = $n AND state = 'COMPLETED'")" = 3 ] ||
    fail "$mode: the experiment did not complete its 3 trials: $OUT"
  helpers_gone "$WORK/done_$mode.helpers" "$mode, completed"

  # 2. And with a trial that is killed (`t2exp kill`) in the middle of a batch.
  start_waiting kill "$mode" ", helper_pids: \"$WORK/kill_$mode.helpers\""
  expect_exit 0 timeout 60 "$T2EXP" kill "$n"
  wait "$ctl" || true
  expect_in "$(cat "$WORK/kill_$mode.out")" "experiment $n CANCELED"
  helpers_gone "$WORK/kill_$mode.helpers" "$mode, killed"

  # 2b. And with a trial whose process crashes (for two ranks: rank 0, the one that waits; mpirun
  # then ends the other rank, and its group, itself, but not the group of the rank that died).
  start_waiting crash "$mode" ", helper_pids: \"$WORK/crash_$mode.helpers\"" "max_restarts: 0"
  kill -SEGV "$trial"
  wait "$ctl" || true
  [ "$(sql "SELECT state FROM trials WHERE experiment_id = $n")" = ERRORED ] ||
    fail "$mode: the crashed trial is not ERRORED: $(cat "$WORK/crash_$mode.out")"
  helpers_gone "$WORK/crash_$mode.helpers" "$mode, crashed"

  # 3. A terminal's Ctrl-C: the controller's whole group gets SIGINT; the trial still finishes its
  # batch (the gate opens a second later) and checkpoints it.
  start_waiting int "$mode"
  [ "$(ps -o pgid= -p "$ctl" | tr -d ' ')" = "$ctl" ] || fail "the controller leads no group of its own (job control)"
  [ "$(ps -o pgid= -p "$trial" | tr -d ' ')" != "$ctl" ] || fail "$mode: the trial is in the controller's process group"
  kill -INT -- "-$ctl"
  sleep 1
  touch "$gate"
  for _ in $(seq 300); do kill -0 "$ctl" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$ctl" 2>/dev/null && fail "$mode: the controller still runs 30 s after Ctrl-C: $(cat "$WORK/int_$mode.out")"
  wait "$ctl" || true
  OUT=$(cat "$WORK/int_$mode.out")
  expect_in "$OUT" "experiment $n PAUSED"
  [ "$(sql "SELECT restarts FROM trials WHERE experiment_id = $n")" = 0 ] || fail "$mode: Ctrl-C counted as a failure: $OUT"
  ck=$(sql "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = $n AND c.batches >= 1")
  [ "$ck" -ge 1 ] || fail "$mode: no checkpoint of the batch the trial was in when Ctrl-C came (mpirun aborted the job?): $OUT
$(exp_logs "$n" | tail -n 15)"
  expect_exit 0 timeout 120 "$T2EXP" resume "$n" --plain
  expect_in "$OUT" "1 trial(s) completed, 0 errored"

  # 4. A terminal's Ctrl-Z stops the trial too, and continuing the controller's group continues it.
  start_waiting tstp "$mode"
  kill -TSTP -- "-$ctl"
  for _ in $(seq 50); do [[ $(state_of "$trial") == T* && $(state_of "$ctl") == T* ]] && break; sleep 0.1; done
  [[ $(state_of "$ctl") == T* ]] || fail "$mode: the controller was not stopped by Ctrl-Z (state $(state_of "$ctl"))"
  [[ $(state_of "$trial") == T* ]] || fail "$mode: Ctrl-Z stopped the controller but not its trial (state $(state_of "$trial"))"
  kill -CONT -- "-$ctl"
  for _ in $(seq 50); do [[ $(state_of "$trial") != T* ]] && break; sleep 0.1; done
  [[ $(state_of "$trial") != T* ]] || fail "$mode: the trial stayed stopped after the controller was continued"
  touch "$gate"
  for _ in $(seq 600); do kill -0 "$ctl" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$ctl" 2>/dev/null && fail "$mode: the experiment did not end within 60 s of being continued: $(cat "$WORK/tstp_$mode.out")"
  wait "$ctl" || fail "$mode: the controller exited non-zero after Ctrl-Z and fg: $(cat "$WORK/tstp_$mode.out")"
  expect_in "$(cat "$WORK/tstp_$mode.out")" "1 trial(s) completed, 0 errored"
done
left=$(own_pids "t2exp create|run-trial|mpirun|orted")
[ -z "$left" ] || fail "processes of the experiments are left: $(ps -o pid,args -p "$(echo $left | tr " " ,)")"
echo "trial_process_group: ok ($modes)"
