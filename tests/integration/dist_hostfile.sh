#!/usr/bin/env bash
# resources.hostfile is the slot pool for distributed trials: each trial gets slots of its own
# (its own hostfile for mpirun), several multi-slot trials run side by side when the pool allows,
# and a host never runs more ranks than its slots.
source "$(dirname "$0")/common.bash"
have_mpi || { echo "dist_hostfile: skipped (built without MPI)"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"   # Open MPI's own allocations are not ours to check
run_grid() { # SLOTS_IN_HOSTFILE
  echo "localhost slots=$1" > "$WORK/hosts"
  cat > "$WORK/g.yaml" <<Y
name: hostfile_$1
hyperparameters: {global_batch_size: 2, x: {type: categorical, vals: [0.5, 1.5]}, y: -2, sleep_ms: 40}
searcher: {name: grid, metric: loss, max_length: {batches: 20}}
resources: {slots_per_trial: 2, hostfile: $WORK/hosts}
max_restarts: 0
Y
  expect_exit 0 "$T2EXP" create "$WORK/g.yaml" "$TRIALS/quadratic.so" --plain
}
overlap() { # EXPERIMENT -> 1 if its two trials ran at the same time
  sql "SELECT (SELECT max(started_at) FROM trials WHERE experiment_id=$1) < (SELECT min(ended_at) FROM trials WHERE experiment_id=$1)"
}
run_grid 2     # two 2-slot trials, 2 slots: one after the other
[ "$(overlap 1)" = 0 ] || fail "two 2-slot trials overlapped on a 2-slot hostfile"
run_grid 4     # 4 slots: side by side
[ "$(overlap 2)" = 1 ] || fail "two 2-slot trials did not run side by side on a 4-slot hostfile"
for t in $(sql "SELECT id FROM trials WHERE experiment_id=2"); do
  grep -qx "localhost slots=2" "$T2EXP_HOME/experiments/2/trial-$t.log.hosts" || fail "trial $t should hold 2 slots"
done
[ "$(sql "SELECT count(*) FROM trials WHERE state='COMPLETED'")" = 4 ] || fail "all trials complete"
# Every rank splits its batch into the experiment's recorded parts, whatever threads the pool gives
# it: two 2-slot trials on 4 slots (1 thread a rank) run with P = 2, as recorded (they ran with 1);
# and a resume of one on a 2-slot pool keeps P (it took the pool's thread count, 1, and so changed
# the numbers: a continuation that was not bit-identical).
[ "$(sql "SELECT parts FROM experiments WHERE id = 2")" = 2 ] || fail "experiment 2 should record P = 2"
for t in $(sql "SELECT id FROM trials WHERE experiment_id=2"); do
  grep -q "threads 1, parts 2" "$T2EXP_HOME/experiments/2/trial-$t.log" || fail "trial $t did not run with P = 2: $(grep parts "$T2EXP_HOME/experiments/2/trial-$t.log")"
done
echo "localhost slots=4" > "$WORK/hosts4"; echo "localhost slots=2" > "$WORK/hosts2"
cat > "$WORK/one.yaml" <<Y
name: keep_parts
hyperparameters: {global_batch_size: 2, x: 1, y: -2, sleep_ms: 40, model: 1}
searcher: {name: single, metric: loss, max_length: {batches: 60}}
min_checkpoint_period: {batches: 5}
resources: {slots_per_trial: 2, hostfile: $WORK/hosts4}
max_restarts: 0
Y
expect_exit 0 "$T2EXP" create "$WORK/one.yaml" "$TRIALS/quadratic.so" --detach
wait_for "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = 3" 1200
expect_exit 0 "$T2EXP" pause 3
expect_exit 0 "$T2EXP" resume 3 --plain --config resources.hostfile="$WORK/hosts2"
t=$(sql "SELECT id FROM trials WHERE experiment_id = 3") p=$(sql "SELECT parts FROM experiments WHERE id = 3")
log="$T2EXP_HOME/experiments/3/trial-$t.log"
[ "$(grep -c "threads [0-9]*, parts" "$log")" -ge 2 ] || fail "the trial's log should show two runs: $(grep parts "$log")"
[ "$(grep -o "parts [0-9]*" "$log" | sort -u)" = "parts $p" ] || fail "a run of the trial left P = $p: $(grep parts "$log")"
grep -q "threads 1, parts $p" "$log" || fail "the resume on 2 slots should give each rank 1 thread: $(grep parts "$log")"
# Its second run was on the same placement: listed once.
[ "$(sql "SELECT hosts FROM trials WHERE experiment_id = 3")" = "localhost:2" ] ||
  fail "a resume on the same slots should not repeat them: $(sql "SELECT hosts FROM trials WHERE experiment_id = 3")"
# A trial that ran on the pool and then here without one (a Slurm experiment resumed outside its
# job) says so: it kept claiming the pool host alone (probe_L finding 7).
echo "localhost slots=1" > "$WORK/hosts1"
cat > "$WORK/local.yaml" <<Y
name: local_after_pool
hyperparameters: {global_batch_size: 2, x: 1, y: -2, sleep_ms: 40, model: 1}
searcher: {name: single, metric: loss, max_length: {batches: 60}}
min_checkpoint_period: {batches: 5}
resources: {hostfile: $WORK/hosts1}
max_restarts: 0
Y
expect_exit 0 "$T2EXP" create "$WORK/local.yaml" "$TRIALS/quadratic.so" --detach
wait_for "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = 4" 1200
expect_exit 0 "$T2EXP" pause 4
[ "$(sql "SELECT hosts FROM trials WHERE experiment_id = 4")" = "localhost:1" ] || fail "the pool run's hosts: $(sql "SELECT hosts FROM trials WHERE experiment_id = 4")"
expect_exit 0 "$T2EXP" resume 4 --plain --config resources.hostfile=null --config resources.slurm=off
expect_exit 0 "$T2EXP" trials 4 --json
python3 -c "import json,sys; r = json.loads(sys.argv[1]); assert [t['hosts'] for t in r] == ['localhost:1; local'], r" "$OUT" ||
  fail "a trial run on the pool, then here, should say both: $OUT"
# A trial that only ran here has no hosts (docs/distributed.md).
expect_exit 0 "$T2EXP" create "$WORK/local.yaml" "$TRIALS/quadratic.so" --plain --config resources.hostfile=null --config resources.slurm=off
[ -z "$(sql "SELECT hosts FROM trials WHERE experiment_id = 5 AND hosts IS NOT NULL")" ] || fail "a local trial has hosts: $(sql "SELECT hosts FROM trials WHERE experiment_id = 5")"
# A host that does not resolve (a name service hiccup, a typo) costs the pool its slots, not the
# experiment: the listening address comes from the hosts that do (it ended the experiment ERRORED,
# every trial QUEUED, before any ran).
printf 'localhost slots=1\nnosuchhost.invalid slots=1\n' > "$WORK/hbad"
cat > "$WORK/bad.yaml" <<Y
name: bad_host
hyperparameters: {global_batch_size: 1, x: {type: categorical, vals: [0.5, 1.5, 2.5]}, y: -2}
searcher: {name: grid, metric: loss, max_length: {batches: 4}}
resources: {hostfile: $WORK/hbad}
max_restarts: 2
Y
expect_exit 0 "$T2EXP" create "$WORK/bad.yaml" "$TRIALS/quadratic.so" --plain
expect_in "$OUT" "nosuchhost.invalid"
expect_in "$OUT" "3 trial(s) completed"
# resources.controller_address must be one of this machine's interfaces: refused at create, nothing
# recorded (0.0.0.0 listened on every interface; a foreign address ended the recorded experiment).
n=$(sql "SELECT count(*) FROM experiments")
for a in 0.0.0.0 255.255.255.255 224.0.0.1 192.0.2.1; do
  expect_exit 2 "$T2EXP" create "$WORK/bad.yaml" "$TRIALS/quadratic.so" --config resources.controller_address=$a
  expect_in "$OUT" "resources.controller_address: $a is not an address of"
done
[ "$(sql "SELECT count(*) FROM experiments")" = "$n" ] || fail "a refused controller_address recorded an experiment"
# One machine under two names is one node to Open MPI, which refused the launch with an internal
# error after create had accepted the file: refused at create now, naming both lines.
# (The machine's own name where `localhost` has no IPv4 address, as on hosts that map it to ::1 only:
# names are compared by their IPv4 addresses, review R12.)
me=localhost
getent ahostsv4 localhost >/dev/null 2>&1 || me=$(hostname)
getent ahostsv4 "$me" >/dev/null 2>&1 || { echo "dist_hostfile: the alias case skipped (neither localhost nor $(hostname) has an IPv4 address)"; exit 77; }
printf '%s slots=1\n127.0.0.1 slots=1\n' "$me" > "$WORK/halias"
expect_exit 2 "$T2EXP" create "$WORK/bad.yaml" "$TRIALS/quadratic.so" --config resources.hostfile="$WORK/halias"
expect_in "$OUT" "$me and 127.0.0.1 are one host (this machine)"
expect_in "$OUT" "slots=2"
[ "$(sql "SELECT count(*) FROM experiments")" = "$n" ] || fail "a hostfile naming one host twice recorded an experiment"
# A rank's threads come from the slots free on its host, at most 64: a lone trial on a 200-slot
# host was given the pool's whole share, 200 threads, and failed at start (t2_set_num_threads takes
# 1..64; probe_N). (The hostfile claims 200 cores; a real pool's slots are its cores.)
echo "localhost slots=200" > "$WORK/hosts200"
cat > "$WORK/lone.yaml" <<Y
name: lone
hyperparameters: {global_batch_size: 2, x: 0.5, y: -2}
searcher: {name: single, metric: loss, max_length: {batches: 2}}
resources: {hostfile: $WORK/hosts200}
max_restarts: 0
Y
expect_exit 0 "$T2EXP" create "$WORK/lone.yaml" "$TRIALS/quadratic.so" --plain
n=$(sql "SELECT max(id) FROM experiments")
t=$(sql "SELECT id FROM trials WHERE experiment_id = $n")
grep -q "threads 64, parts 64" "$T2EXP_HOME/experiments/$n/trial-$t.log" ||
  fail "a lone trial on a 200-slot host should run 64 threads: $(grep parts "$T2EXP_HOME/experiments/$n/trial-$t.log")"
# A relative hostfile is recorded as an absolute path: a resume from another directory reads the
# same pool (it failed, "No such file", or read another file of that name; probe_N).
sed "s|hostfile: .*}|hostfile: hosts2}|" "$WORK/one.yaml" > "$WORK/rel.yaml"
(cd "$WORK" && expect_exit 0 "$T2EXP" create rel.yaml "$TRIALS/quadratic.so" --detach) || exit 1
n=$(sql "SELECT max(id) FROM experiments")
wait_for "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = $n" 1200
expect_exit 0 "$T2EXP" pause "$n"
(cd / && expect_exit 0 "$T2EXP" resume "$n" --plain) || exit 1
[ "$(sql "SELECT state FROM experiments WHERE id = $n")" = COMPLETED ] || fail "the resume from / did not complete it"
sql "SELECT overrides FROM experiments WHERE id = $n" | grep -qF "resources.hostfile=\\\"$WORK/hosts2\\\"" ||
  fail "the absolute hostfile should be kept: $(sql "SELECT overrides FROM experiments WHERE id = $n")"
# A launcher that cannot start (a typo in OMPI_MCA_plm_rsh_agent) fails every probe: the verdict
# quotes mpirun's own words, which only the trial's log had (probe_N).
echo "nodeA slots=1" > "$WORK/hostsA"
OMPI_MCA_plm_rsh_agent=/nonexistent/agent expect_exit 1 "$T2EXP" create "$WORK/lone.yaml" "$TRIALS/quadratic.so" \
  --plain --config resources.hostfile="$WORK/hostsA" --config max_restarts=1
expect_in "$OUT" 'host nodeA is unreachable (mpirun on it exited with status '
expect_in "$OUT" ': The value of the MCA parameter "plm_rsh_agent" was set to a path that could not be found)'
ls "$WORK"/ompi.t2exp.* >/dev/null 2>&1 && fail "a probe left its files: $(ls "$WORK"/ompi.t2exp.*)"
# It ended within its first batch, and a resume with the launcher mended continues it, as the error
# says (bring the hosts back): the first batch and the searcher's state were committed before the
# first launch (a resume refused it as "ended ERRORED before its searcher's state was first saved").
n=$(sql "SELECT max(id) FROM experiments")
printf '#!/bin/sh\nshift\nexec sh -c "$*"\n' > "$WORK/here-agent"; chmod +x "$WORK/here-agent"
OMPI_MCA_plm_rsh_agent="$WORK/here-agent" expect_exit 0 "$T2EXP" resume "$n" --plain
expect_in "$OUT" "experiment $n COMPLETED"
# A loopback controller_address with a host reached over the network: a warning that says so at the
# first launch (every launch there failed with a bare "mpirun exited"; probe_N). An rsh agent that
# runs the rank here stands in for the host, so the trial itself completes; TEST-NET-3 is routed
# through the default route, where there is one.
if ip route get 203.0.113.77 >/dev/null 2>&1; then
  echo "203.0.113.77 slots=1" > "$WORK/hostsR"
  OMPI_MCA_plm_rsh_agent="$WORK/here-agent" expect_exit 0 "$T2EXP" create "$WORK/lone.yaml" "$TRIALS/quadratic.so" \
    --plain --config resources.hostfile="$WORK/hostsR" --config resources.controller_address=127.0.0.1
  expect_in "$OUT" "warning: the controller listens on 127.0.0.1, a loopback address, which ranks on 203.0.113.77 (other machines) cannot reach"
else
  echo "dist_hostfile: no default route here, the loopback-address warning is not checked"
fi
# A pool of many names says it is looking them up before it does (minutes on a resolver that drops
# bursts, in silence; probe_N). Address literals need no resolver; the slots_per_trial refusal
# comes after the lookups, so nothing runs.
for i in $(seq 1 300); do echo "10.254.$((i / 250)).$((i % 250 + 1)) slots=1"; done > "$WORK/hosts300"
expect_exit 2 "$T2EXP" create "$WORK/lone.yaml" "$TRIALS/quadratic.so" --config resources.hostfile="$WORK/hosts300" \
  --config resources.slots_per_trial=301 --config hyperparameters.global_batch_size=400
expect_in "$OUT" "looking up the pool's 300 host names (at most 24 s; Ctrl-C stops)"
# A checkpoint directory rank 0's host does not share: the refusal says so (it said "no such file"
# alone; probe_N). The agent gives the "host" its own empty experiments directory (a mount
# namespace with a tmpfs there), as a host without the shared file system has.
if unshare -m true 2>/dev/null; then
  n=$(( $(sql "SELECT max(id) FROM experiments") + 1 ))
  cat > "$WORK/noshare-agent" <<A
#!/bin/sh
shift
exec unshare -m sh -c "mount -t tmpfs none $T2EXP_HOME/experiments && mkdir -p $T2EXP_HOME/experiments/$n/checkpoints && exec sh -c \"\\\$0\"" "\$*"
A
  chmod +x "$WORK/noshare-agent"
  sed 's/batches: 60}/batches: 12}/; s/slots_per_trial: 2, //' "$WORK/one.yaml" > "$WORK/ck.yaml"
  OMPI_MCA_plm_rsh_agent="$WORK/noshare-agent" expect_exit 1 "$T2EXP" create "$WORK/ck.yaml" "$TRIALS/quadratic.so" \
    --plain --config resources.hostfile="$WORK/hostsA"
  expect_in "$OUT" "rank 0 on nodeA wrote it where the controller cannot see it; the checkpoint directory (under T2EXP_HOME, or checkpoint_storage) must be on a file system every host of the pool shares"
fi
echo "dist_hostfile: ok"
