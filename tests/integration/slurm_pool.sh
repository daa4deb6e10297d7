#!/usr/bin/env bash
# Inside a real Slurm job the allocation is the slot pool. The test starts its own single-node
# Slurm (munged with a generated key, slurmctld and slurmd with a generated slurm.conf, all in its
# temp dir, on ports of its own), submits a job with `sbatch --wait` that runs `t2exp create` of a
# random search of 2-slot quadratic trials, and checks that the experiment completed, that every
# trial ran on the Slurm node (its hosts column and its own hostfile) and that the log says the
# pool came from the allocation. The same job also checks the two ways out: resources.slurm: off
# runs the trials here (no hosts), and an explicit resources.hostfile wins over the allocation; and
# a trial stopped in the job and resumed outside it has hosts "NODE:1; local".
# Slurm that cannot start here (packages missing, not root, daemons that do not come up) is a
# skip (77) with the reason, never a pass.
source "$(dirname "$0")/common.bash"
skip() { echo "slurm_pool: skipped: $*"; exit 77; }
have_mpi || skip "built without MPI"
# The daemons live in /usr/sbin, which a root shell started without a login (su, some CI
# runners) may not have in its PATH.
export PATH="$PATH:/usr/sbin:/sbin"
for b in munged munge slurmctld slurmd sbatch sinfo squeue scontrol scancel; do
  command -v "$b" >/dev/null || skip "$b is missing (apt-get install munge slurmctld slurmd slurm-client)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs (SlurmUser=root)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"   # Open MPI's own allocations are not ours to check

S="$WORK/slurm"
mkdir -p "$S/munge" "$S/state" "$S/spool"
chmod 700 "$S/munge"
PIDS=()
JOB=
stop_all() {
  # A job still running (the test failed mid-way) goes first, while slurmd can still end it
  # (scancel only asks: the job is gone once squeue no longer lists it).
  local p
  if [ -n "$JOB" ]; then
    timeout 10 scancel "$JOB" 2>/dev/null || true
    for _ in $(seq 100); do
      [ -z "$(timeout 5 squeue -h -j "$JOB" 2>/dev/null || true)" ] && break
      sleep 0.1
    done
  fi
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap stop_all EXIT
# Shows the daemons' logs and skips: Slurm could not run on this machine.
cannot_start() {
  for f in "$S"/munge/log "$S"/*.log "$S"/*.out; do [ -e "$f" ] && { echo "== $f"; tail -n 20 "$f"; }; done
  skip "$*"
}

# munged with a key of its own, in the foreground so $! is its pid.
head -c 1024 /dev/urandom > "$S/munge/key"
chmod 400 "$S/munge/key"
munged -F -f --socket="$S/munge/sock" --key-file="$S/munge/key" --log-file="$S/munge/log" \
  --pid-file="$S/munge/pid" --seed-file="$S/munge/seed" > "$S/munged.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$S/munge/sock" ] && break; sleep 0.1; done
munge -S "$S/munge/sock" -n > /dev/null 2>&1 || cannot_start "munged did not start"

# Two free ports next to each other (slurmctld's and slurmd's), not Slurm's defaults, so a Slurm
# already on the machine is left alone.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=
for _ in $(seq 50); do
  p=$((20000 + RANDOM % 20000))
  port_free "$p" && port_free $((p + 1)) && { PORT=$p; break; }
done
[ -n "$PORT" ] || cannot_start "no free port pair"

H=$(hostname -s)
export SLURM_CONF="$S/slurm.conf"
cat > "$SLURM_CONF" <<C
ClusterName=t2exp
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge/sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
# CPUs=2 whatever the machine has: the node is not drained for differing from its hardware.
SlurmdParameters=config_overrides
NodeName=$H NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
C
slurmctld -D > "$S/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -N "$H" > "$S/slurmd.out" 2>&1 &
PIDS+=($!)
state=
for _ in $(seq 600); do   # a minute at most: slurmd registers within seconds
  state=$(sinfo -h -n "$H" -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null || cannot_start "a Slurm daemon exited"; done
  sleep 0.1
done
[ "$state" = idle ] || cannot_start "node $H is not idle (state '${state:-none}')"

# The job: three experiments of four 2-slot trials in the same 2-task allocation.
cat > "$WORK/q.yaml" <<Y
name: slurm_pool
hyperparameters:
  global_batch_size: 2
  x: {type: double, minval: -5, maxval: 5}
  y: {type: double, minval: -5, maxval: 5}
searcher: {name: random, metric: loss, max_length: {batches: 5}, max_trials: 4}
resources: {slots_per_trial: 2}
reproducibility: {experiment_seed: 3}
max_restarts: 0
Y
echo "localhost slots=2" > "$WORK/hosts"
# Experiment 4: one single-slot trial, stopped (Ctrl-C) in the job once it checkpointed, then
# resumed outside the job.
cat > "$WORK/one.yaml" <<Y
name: slurm_then_here
hyperparameters: {global_batch_size: 2, x: 1, y: -2, sleep_ms: 40, model: 1}
searcher: {name: single, metric: loss, max_length: {batches: 80}}
min_checkpoint_period: {batches: 5}
max_restarts: 0
Y
cat > "$WORK/job.sh" <<J
#!/usr/bin/env bash
set -u
echo "job \$SLURM_JOB_ID on \$SLURM_JOB_NODELIST, tasks per node \$SLURM_TASKS_PER_NODE"
"$T2EXP" create "$WORK/q.yaml" "$TRIALS/quadratic.so" --plain > "$WORK/exp1.log" 2>&1 || exit 11
"$T2EXP" create "$WORK/q.yaml" "$TRIALS/quadratic.so" --plain --config resources.slurm=off \
  > "$WORK/exp2.log" 2>&1 || exit 12
"$T2EXP" create "$WORK/q.yaml" "$TRIALS/quadratic.so" --plain --config resources.hostfile=$WORK/hosts \
  > "$WORK/exp3.log" 2>&1 || exit 13
"$T2EXP" create "$WORK/one.yaml" "$TRIALS/quadratic.so" --plain > "$WORK/exp4.log" 2>&1 &
ctl=\$!
for _ in \$(seq 600); do
  n=\$(sqlite3 -cmd ".timeout 5000" "$T2EXP_HOME/t2exp.db" "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = 4" 2>/dev/null || true)
  [ "\${n:-0}" -ge 1 ] && break
  sleep 0.1
done
kill -INT \$ctl
wait \$ctl
[ "\$(sqlite3 -cmd ".timeout 5000" "$T2EXP_HOME/t2exp.db" "SELECT state FROM experiments WHERE id = 4")" = PAUSED ] || exit 14
J
set +e
JOB=$(sbatch --parsable -N 1 -n 2 -o "$WORK/job.out" "$WORK/job.sh")
rc=$?
set -e
[ $rc = 0 ] && [ -n "$JOB" ] || fail "sbatch failed ($rc): $JOB"
# Waits for the job (sbatch --wait is the same poll, done by hand to keep the job id for the
# trap); a limit so a stuck job fails the test instead of hanging it.
for _ in $(seq 1200); do
  st=$(scontrol show job "$JOB" 2>/dev/null | grep -oE 'JobState=[A-Z_]+' | cut -d= -f2 || true)
  case "$st" in PENDING|RUNNING|CONFIGURING|COMPLETING|"") sleep 0.5 ;; *) break ;; esac
done
exit_code=$(scontrol show job "$JOB" | grep -oE ' ExitCode=[0-9]+:[0-9]+' | cut -d= -f2 || true)
show_logs() { for f in "$WORK"/job.out "$WORK"/exp*.log; do [ -e "$f" ] && { echo "== $f"; cat "$f"; }; done; }
[ "$st" = COMPLETED ] && [ "$exit_code" = 0:0 ] || fail "job $JOB ended $st, exit $exit_code:
$(show_logs)"
JOB=

# 1: the allocation was the pool, and every trial ran on the Slurm node with its own 2 slots.
expect_in "$(cat "$WORK/exp1.log")" "slot pool: 2 slot(s) on 1 host(s) from the allocation of Slurm job"
expect_in "$(cat "$WORK/exp1.log")" "SLURM_JOB_NODELIST=$H, SLURM_TASKS_PER_NODE=2"
[ "$(sql "SELECT state FROM experiments WHERE id=1")" = COMPLETED ] || fail "experiment 1 did not complete: $(show_logs)"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=1 AND state='COMPLETED' AND hosts='$H:2'")" = 4 ] \
  || fail "experiment 1: not all 4 trials completed on $H:2: $(sql "SELECT id, state, hosts FROM trials WHERE experiment_id=1")"
for t in $(sql "SELECT id FROM trials WHERE experiment_id=1"); do
  grep -qx "$H slots=2" "$T2EXP_HOME/experiments/1/trial-$t.log.hosts" || fail "trial $t's hostfile should name $H with 2 slots"
done
expect_exit 0 "$T2EXP" trials 1
expect_in "$OUT" "$H:2"
# 2: resources.slurm: off: trials ran here, outside the pool, and the log says nothing of Slurm.
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=2 AND state='COMPLETED' AND hosts IS NULL")" = 4 ] \
  || fail "experiment 2 (resources.slurm: off): $(sql "SELECT id, state, hosts FROM trials WHERE experiment_id=2")"
grep -q "slot pool" "$WORK/exp2.log" && fail "resources.slurm: off still used the allocation: $(cat "$WORK/exp2.log")"
# 3: an explicit hostfile wins over the allocation.
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=3 AND state='COMPLETED' AND hosts='localhost:2'")" = 4 ] \
  || fail "experiment 3 (hostfile): $(sql "SELECT id, state, hosts FROM trials WHERE experiment_id=3")"
grep -q "slot pool" "$WORK/exp3.log" && fail "a hostfile run still named the allocation: $(cat "$WORK/exp3.log")"
# 4: paused in the job on the pool, resumed here outside it: its hosts say both (they kept claiming
# the Slurm node alone: probe_L finding 7).
[ "$(sql "SELECT hosts FROM trials WHERE experiment_id=4")" = "$H:1" ] || fail "experiment 4 in the job: $(sql "SELECT id, state, hosts FROM trials WHERE experiment_id=4")"
[ -z "${SLURM_JOB_ID:-}" ] || fail "the test itself runs inside Slurm job $SLURM_JOB_ID"
expect_exit 0 "$T2EXP" resume 4 --plain
[ "$(sql "SELECT state || ' ' || hosts FROM trials WHERE experiment_id=4")" = "COMPLETED $H:1; local" ] ||
  fail "experiment 4 resumed outside the job: $(sql "SELECT id, state, hosts FROM trials WHERE experiment_id=4")"
store_ok
echo "slurm_pool: ok (job on $H, slurmctld port $PORT)"
