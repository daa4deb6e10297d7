#!/usr/bin/env bash
# chaos.sh — SIGKILL at random moments, then resume: the result must be the uninterrupted run's.
#
#   T2EXP_BUILD=build T2EXP_SOURCE=. ROUNDS=50 SEED=1 bash tests/chaos/chaos.sh
#
# Two experiments, each first run once undisturbed as the reference:
#   A. an adaptive ASHA search of the quadratic trial (one trial at a time, so its decisions do
#      not depend on timing), checkpointing every 4 batches;
#   B. a 2-slot MPI run of the Fashion-MNIST CNN, 240 batches of 32, checkpointing every 40 and
#      validating every 120 (the 10,000 test images: most of its cost, and of CI's time) (skipped
#      with a note when MPI or the dataset is missing; A still runs).
# Then ROUNDS rounds (default 3). A round runs A again, SIGKILLing its controller (then `t2exp
# resume`) and a trial process (the controller restarts the trial from its checkpoint), in random
# order at random moments; then B, killing its controller and one MPI rank. Every run ("episode")
# must end COMPLETED with:
#   - the same trials, hparams, states and lengths, the same final searcher snapshot;
#   - every metric row (the runner's own t2exp.* timings aside) equal to the reference's;
#   - the same final parameters (sha256 of each trial's latest checkpoint's params.bin);
#   - PRAGMA integrity_check ok;
#   - no process of the episode left, no temporary checkpoint file, no checkpoint file on disk
#     that the store does not list as ACTIVE.
# Prints one line per kill and a summary: kills by target, episodes, resumes, restarts.
# SEED (default 1) seeds the moments and targets.
source "${T2EXP_SOURCE:?}/tests/integration/common.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"   # Open MPI's allocations are not ours
ROUNDS=${ROUNDS:-3}
RANDOM=${SEED:-1}
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)

cat > "$WORK/a.yaml" <<Y
name: chaos_asha
hyperparameters:
  global_batch_size: 1
  x: {type: double, minval: -5, maxval: 5}
  y: {type: double, minval: -5, maxval: 5}
  sleep_ms: 25
searcher:
  name: adaptive_asha
  metric: loss
  smaller_is_better: true
  max_length: {batches: 64}
  max_trials: 8
  mode: aggressive
  divisor: 4
  max_rungs: 3
  max_concurrent_trials: 1
min_checkpoint_period: {batches: 4}
reproducibility: {experiment_seed: 11}
max_restarts: 1000
Y
have_mpi=0
if grep -q "T2EXP_WITH_MPI:BOOL=ON" "$T2EXP_BUILD/CMakeCache.txt" && command -v mpirun >/dev/null && have_fashion_mnist; then
  have_mpi=1
  cat > "$WORK/b.yaml" <<Y
name: chaos_mpi
data: {dir: ""}
hyperparameters: {global_batch_size: 32, learning_rate: 0.05, momentum: 0.9, dropout1: 0.25, dropout2: 0.5, n_hidden: 64}
searcher: {name: single, metric: validation_accuracy, smaller_is_better: false, max_length: {batches: 240}}
resources: {slots_per_trial: 2}
min_checkpoint_period: {batches: 40}
min_validation_period: {batches: 120}
scheduling_unit: 20
reproducibility: {experiment_seed: 3}
max_restarts: 1000
Y
else
  echo "chaos: experiment B skipped (needs MPI and dataset-fashion-mnist)"
fi

# descendants PID — every process under PID, recursively.
descendants() {
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do echo "$c"; descendants "$c"; done
}
alive() { [ -r "/proc/$1/stat" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
# gone PIDS... — waits up to 20 s for every listed process to end.
gone() {
  local p
  for _ in $(seq 400); do
    local any=0
    for p in "$@"; do alive "$p" && any=1; done
    [ $any = 0 ] && return 0
    sleep 0.05
  done
  fail "processes left behind after the controller died: $(for p in "$@"; do alive "$p" && ps -o pid=,args= -p "$p"; done)"
}

# The facts an episode must share with its reference. Trials by ordinal, not id.
trials_of() { sql "SELECT ordinal, hparams, state, batches_trained, quote(best_validation), quote(latest_validation)
                   FROM trials WHERE experiment_id=$1 ORDER BY ordinal"; }
metrics_of() { sql "SELECT t.ordinal, m.kind, m.batches, m.name, quote(m.value) FROM metrics m JOIN trials t ON t.id=m.trial_id
                    WHERE t.experiment_id=$1 AND m.name NOT LIKE 't2exp.%' ORDER BY 1, 2, 3, 4"; }
searcher_of() { sql "SELECT state FROM searcher_state WHERE experiment_id=$1"; }
params_of() {
  local o p
  for o in $(sql "SELECT ordinal FROM trials WHERE experiment_id=$1 ORDER BY ordinal"); do
    p=$(sql "SELECT c.path FROM checkpoints c JOIN trials t ON t.id=c.trial_id WHERE t.experiment_id=$1 AND t.ordinal=$o
             AND c.state='ACTIVE' ORDER BY c.batches DESC LIMIT 1")
    echo "$o ${p:+$(params_sha "$p")}"
  done
}
same() { # same WHAT REF EXP
  local a b
  a=$("$1" "$2"); b=$("$1" "$3")
  [ "$a" = "$b" ] || fail "experiment $3 differs from reference $2 in $1:
$(diff <(echo "$a") <(echo "$b") | head -20)"
}

kills_ctl=0 kills_trial=0 kills_rank=0 episodes=0 resumes=0

# victim_of TARGET CTL KIND — the pid to kill now (empty if there is none at this moment). Always
# succeeds: under pipefail a pgrep that finds nothing yet (a resumed controller that has not started
# its trial) would otherwise end the whole test without a word.
victim_of() {
  local mpirun
  case $1 in
    controller) echo "$2" ;;
    trial) { pgrep -P "$2" || true; } | head -n 1 ;;
    rank)
      mpirun=$({ pgrep -P "$2" -x mpirun || true; } | head -n 1)
      if [ -n "$mpirun" ]; then { pgrep -P "$mpirun" || true; } | sed -n "$((RANDOM % 2 + 1))p"; fi
      ;;
  esac
}

# episode CONFIG TRIAL.so [REF TARGET...] — runs one experiment to completion and, at random
# moments (up to $SPAN seconds apart), SIGKILLs each TARGET in turn (controller: then resume it);
# sets EXP to its id.
episode() {
  local config=$1 so=$2 ref=${3:-} ctl status pids victim target delay last=0
  shift $(( $# < 3 ? $# : 3 ))
  [ -e "$T2EXP_HOME/t2exp.db" ] && last=$(sql "SELECT coalesce(max(id), 0) FROM experiments")
  EXP=$((last + 1))
  "$T2EXP" create "$config" "$so" --quiet > "$WORK/ep.log" 2>&1 &
  ctl=$!
  for target in "$@"; do
    # A random moment, 0 .. SPAN s from now, then the first moment the target exists.
    delay=$(printf '%d.%03d' $((RANDOM % SPAN)) $((RANDOM % 1000)))
    sleep "$delay"
    victim=""
    for _ in $(seq 200); do
      alive "$ctl" || break
      victim=$(victim_of "$target" "$ctl")
      [ -n "$victim" ] && break
      sleep 0.05
    done
    [ -n "$victim" ] || { echo "chaos: experiment $EXP: no $target to kill (the experiment ended first)"; continue; }
    pids=$(descendants "$ctl")
    kill -KILL "$victim" 2>/dev/null || continue
    echo "chaos: experiment $EXP: killed the $target (pid $victim) ${delay}s in"
    case $target in
      controller)
        kills_ctl=$((kills_ctl + 1))
        wait "$ctl" 2>/dev/null || true
        # shellcheck disable=SC2086
        gone $pids
        if [ -z "$(sql "SELECT id FROM experiments WHERE id=$EXP" 2>/dev/null)" ]; then
          # Killed before the experiment's row was committed: nothing to resume, start again.
          "$T2EXP" create "$config" "$so" --quiet > "$WORK/ep.log" 2>&1 &
        else
          "$T2EXP" resume "$EXP" --quiet > "$WORK/ep.log" 2>&1 &
          resumes=$((resumes + 1))
        fi
        ctl=$!
        ;;
      trial) kills_trial=$((kills_trial + 1)) ;;
      rank) kills_rank=$((kills_rank + 1)) ;;
    esac
  done
  wait "$ctl" && status=0 || status=$?
  [ "$status" = 0 ] || fail "experiment $EXP ended with exit $status: $(cat "$WORK/ep.log")"
  [ "$(sql "SELECT state FROM experiments WHERE id=$EXP")" = COMPLETED ] || fail "experiment $EXP not COMPLETED"
  if [ -n "$ref" ]; then
    episodes=$((episodes + 1))
    same trials_of "$ref" "$EXP"; same metrics_of "$ref" "$EXP"; same searcher_of "$ref" "$EXP"; same params_of "$ref" "$EXP"
  fi
}

# shuffled A B — the two words in a random order.
shuffled() { if [ $((RANDOM % 2)) = 0 ]; then echo "$1 $2"; else echo "$2 $1"; fi; }

# The references, undisturbed.
t0=$SECONDS
episode "$WORK/a.yaml" "$TRIALS/quadratic.so"; ref_a=$EXP
echo "chaos: reference A (experiment $ref_a) took $((SECONDS - t0)) s"; t0=$SECONDS
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=$ref_a")" -ge 8 ] || fail "reference A ran too few trials"
ref_b=""
[ $have_mpi = 1 ] && { episode "$WORK/b.yaml" "$TRIALS/fashion_mnist_cnn.so"; ref_b=$EXP;
                      echo "chaos: reference B (experiment $ref_b) took $((SECONDS - t0)) s"; }

# A round: the ASHA search with its controller and a trial process killed (random order and
# moments), then the MPI run with its controller and one rank killed.
for round in $(seq "$ROUNDS"); do
  echo "chaos: round $round of $ROUNDS"
  # A lasts ~6 s, B ~20 s (most of it training) on 2 cores.
  # shellcheck disable=SC2046
  SPAN=2 episode "$WORK/a.yaml" "$TRIALS/quadratic.so" "$ref_a" $(shuffled controller trial)
  # shellcheck disable=SC2046
  [ $have_mpi = 1 ] && SPAN=8 episode "$WORK/b.yaml" "$TRIALS/fashion_mnist_cnn.so" "$ref_b" $(shuffled controller rank)
done

store_ok
# Nothing left behind: processes, temporary files, checkpoints the store does not know.
# Only this test's processes (its T2EXP_HOME in their environment): tests running beside it in the
# same build (ctest -j) start trials and ranks of their own.
ours() {
  local p
  for p in $(own_pids "$1"); do ps -o pid=,args= -p "$p" || true; done
}
left=$(ours "$TRIALS/")
[ -z "$left" ] || fail "trial processes left: $left"
left=$(ours "run-trial")
[ -z "$left" ] || fail "ranks left: $left"
tmp=$(find "$T2EXP_HOME" -name '*.tmp-*' | head -5)
[ -z "$tmp" ] || fail "temporary files left: $tmp"
listed=$(sql "SELECT path FROM checkpoints WHERE state='ACTIVE'" | sort)
ondisk=$(find "$T2EXP_HOME" -path '*checkpoints/*' -type f | sort)
extra=$(comm -13 <(echo "$listed") <(echo "$ondisk"))
[ -z "$extra" ] || fail "checkpoint files the store does not list: $extra"
restarts=$(sql "SELECT coalesce(sum(restarts), 0) FROM trials WHERE experiment_id NOT IN ($ref_a${ref_b:+, $ref_b})")
echo "chaos: ok: $ROUNDS rounds, $episodes episodes; kills: controller $kills_ctl, trial $kills_trial, rank $kills_rank; $resumes resumes, $restarts trial restarts; every episode equal to its reference"
