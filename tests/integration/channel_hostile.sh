#!/usr/bin/env bash
# Hostile callers on the controller's distributed-trial port (issue 12): while an experiment's
# two-rank trials run through mpirun, channel_hostile.py connects with a bogus MAC, a wrong key, a
# hello that never ends, a 2 GB length prefix and a caller that says nothing. Each is closed by the
# controller; a probe gets its challenge while the silent caller is still open (the launch's
# handshakes are events of the loop, not a blocking wait of 5 s per caller); and the experiment
# completes with the same metric rows as the same experiment without the attack. Then SIGTERM
# during a launch stops it cleanly.
source "$(dirname "$0")/common.bash"
have_mpi || { echo "channel_hostile: skipped (built without MPI)"; exit 77; }
[ -x /usr/bin/python3 ] || { echo "channel_hostile: skipped (no /usr/bin/python3)"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"   # Open MPI's own allocations are not ours to check

# Six short two-rank trials one after the other: launches keep coming while the attack runs.
cat > "$WORK/g.yaml" <<Y
name: hostile
hyperparameters: {global_batch_size: 2, x: {type: categorical, vals: [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]}, y: -2, sleep_ms: 100}
searcher: {name: grid, metric: loss, max_length: {batches: 20}, max_concurrent_trials: 1}
resources: {slots_per_trial: 2}
max_restarts: 0
Y
rows() { # EXPERIMENT -> its metric rows, by hparams but sleep_ms (not the t2exp.* timings: they differ run to run)
  sql "SELECT json_remove(t.hparams, '\$.sleep_ms'), m.kind, m.batches, m.name, m.value FROM metrics m JOIN trials t ON t.id = m.trial_id
       WHERE t.experiment_id = $1 AND m.name NOT LIKE 't2exp.%' ORDER BY 1, 2, 3, 4"
}
all_completed() { # EXPERIMENT
  [ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=$1 AND state='COMPLETED'")" = 6 ] \
    && [ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=$1")" = 6 ] \
    || fail "experiment $1: not every trial COMPLETED: $(sql "SELECT id, state, error FROM trials WHERE experiment_id=$1")"
}

# Without the attack (and without the sleep that only makes the attacked run last).
expect_exit 0 "$T2EXP" create "$WORK/g.yaml" "$TRIALS/quadratic.so" --plain --config hyperparameters.sleep_ms=0
all_completed 1

# With it: the port comes from the controller's "distributed trials call back to" line.
# The log exists before the loop reads it: the background shell may open it after the first read
# (sed then failed, and set -e ended the test: seen once under ASan in CI).
: > "$WORK/create2.log"
"$T2EXP" create "$WORK/g.yaml" "$TRIALS/quadratic.so" --plain >> "$WORK/create2.log" 2>&1 &
ctl=$!
addr=
for _ in $(seq 600); do
  addr=$(sed -n 's/^distributed trials call back to \([0-9.]*:[0-9]*\)$/\1/p' "$WORK/create2.log")
  [ -n "$addr" ] && break
  kill -0 "$ctl" 2>/dev/null || break
  sleep 0.05
done
[ -n "$addr" ] || fail "no call-back address in the controller's output: $(cat "$WORK/create2.log")"
version=$(sed -n 's/^#define T2__PROTOCOL_VERSION \([0-9]*\)$/\1/p' "$T2EXP_SOURCE/framework/protocol/protocol.h")
# A trial id of this experiment, for the hellos (the first trial's: its launch is done by now).
wait_for "SELECT max(id) FROM trials WHERE experiment_id=2"
trial=$(sql "SELECT max(id) FROM trials WHERE experiment_id=2")
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=2 AND state='COMPLETED'")" -lt 6 ] \
  || fail "the experiment ended before the attack (make its trials longer)"
/usr/bin/python3 "$T2EXP_SOURCE/tests/integration/channel_hostile.py" "$addr" "$trial" "$version" > "$WORK/attack.log" 2>&1 \
  || fail "attack: $(cat "$WORK/attack.log")
controller: $(cat "$WORK/create2.log")"
cat "$WORK/attack.log"
wait "$ctl" || fail "the attacked experiment failed: $(cat "$WORK/create2.log")"
all_completed 2
grep -q "refused a caller" "$WORK/create2.log" || fail "the controller did not say it refused the callers"
# Six callers were refused; one line each for the first 5 of a minute, the rest counted.
shown=$(grep -c "refused a caller" "$WORK/create2.log")
hidden=$(sed -n 's/.*refused \([0-9]*\) more callers on .*/\1/p' "$WORK/create2.log" | awk '{ n += $1 } END { print n + 0 }')
[ "$shown" -le 6 ] && [ $((shown + hidden)) -eq 6 ] ||
  fail "refused callers: $shown shown and $hidden counted (wanted 6 in all, at most 5 a minute shown): $(grep refused "$WORK/create2.log")"
[ "$(rows 1)" = "$(rows 2)" ] || fail "the attacked experiment's metric rows differ from the plain run's"
[ -n "$(rows 2)" ] || fail "no metric rows"

# SIGTERM while a launch waits for its rank 0 stops it cleanly: an mpirun that signals the
# controller and never starts a rank; the launch's mpirun is stopped and reaped, the experiment
# and its trial are PAUSED (not errored), and a resume with the real mpirun completes the trial.
mkdir -p "$WORK/fakebin"
cat > "$WORK/fakebin/mpirun" <<'SH'
#!/usr/bin/env bash
kill -TERM "$PPID"   # the controller, which forked this launch
exec sleep 120
SH
chmod +x "$WORK/fakebin/mpirun"
sed 's/vals: \[0.5, 1.5, 2.5, 3.5, 4.5, 5.5\]/vals: [0.5]/' "$WORK/g.yaml" > "$WORK/one.yaml"
set +e
PATH="$WORK/fakebin:$PATH" "$T2EXP" create "$WORK/one.yaml" "$TRIALS/quadratic.so" --plain > "$WORK/create3.log" 2>&1
set -e
[ "$(sql "SELECT state FROM experiments WHERE id=3")" = PAUSED ] \
  || fail "SIGTERM during a launch should pause the experiment: $(cat "$WORK/create3.log")"
[ "$(sql "SELECT state || ':' || coalesce(error, '') FROM trials WHERE experiment_id=3")" = "PAUSED:" ] \
  || fail "the launching trial should be PAUSED without an error: $(sql "SELECT state, error FROM trials WHERE experiment_id=3")"
[ -z "$(own_pids "sleep 120")" ] || fail "the launch's mpirun was left running"
expect_exit 0 "$T2EXP" resume 3 --plain
[ "$(sql "SELECT state FROM trials WHERE experiment_id=3")" = COMPLETED ] || fail "the resumed trial should complete"
store_ok
echo "channel_hostile: ok"
