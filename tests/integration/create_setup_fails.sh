#!/usr/bin/env bash
# A create that fails after the experiment's row is written leaves it ERRORED with the reason, as
# every controller error does, never ACTIVE with no controller: checkpoint_storage.host_path
# /dev/null cannot hold the checkpoint directory (mkdir: Not a directory), which is I/O trouble:
# exit 3. Its resume refuses clearly (before, it computed another checkpoint directory and ran). A slot
# pool too small for slots_per_trial is refused before anything is recorded (exit 2), at create and
# at resume, where it left a paused experiment ERRORED with the override kept, so that every later
# resume failed the same way.
source "$(dirname "$0")/common.bash"
state() { sql "SELECT state FROM experiments WHERE id = $1"; }
err() { sql "SELECT error FROM experiments WHERE id = $1"; }

expect_exit 3 "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" --plain \
  --config 'checkpoint_storage={host_path: /dev/null}'
expect_in "$OUT" "experiment 1 ERRORED before it ran: mkdir /dev/null/"
expect_in "$OUT" "Not a directory"
[ "$(state 1)" = ERRORED ] || fail "the failed create left experiment 1 $(state 1)"
[[ "$(err 1)" == "mkdir /dev/null/"*": Not a directory" ]] || fail "experiment 1's error: $(err 1)"
[ -z "$(sql "SELECT controller_pid FROM experiments WHERE id = 1")" ] || fail "experiment 1 still names a controller"
expect_exit 2 "$T2EXP" resume 1 --plain
expect_in "$OUT" "experiment 1 cannot be resumed: its create failed before it recorded a checkpoint directory"
[ "$(state 1)" = ERRORED ] || fail "the refused resume left experiment 1 $(state 1)"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = 1")" = 0 ] || fail "a trial of experiment 1 ran"
# The same with --detach: the background controller fails before it is recorded, create says so.
expect_exit 3 "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" --detach \
  --config 'checkpoint_storage={host_path: /dev/null}'
[ "$(state 2)" = ERRORED ] || fail "the failed detached create left experiment 2 $(state 2)"

if have_mpi && command -v taskset >/dev/null; then
  # One core, two slots a trial: refused before the experiment is recorded.
  expect_exit 2 taskset -c 0 "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" --plain \
    --config resources.slots_per_trial=2 --config hyperparameters.global_batch_size=2
  expect_in "$OUT" "resources.slots_per_trial = 2, but the slot pool has 1 slot(s)"
  [ "$(sql "SELECT count(*) FROM experiments")" = 2 ] || fail "the refused create recorded an experiment"
  # A bad T2EXP_CONTROLLER_ADDR is refused before anything is recorded too, as the config's key is
  # (it left an ERRORED experiment: probe_L).
  expect_exit 2 env T2EXP_CONTROLLER_ADDR=garbage "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" \
    --plain --config resources.slots_per_trial=2 --config hyperparameters.global_batch_size=2
  expect_in "$OUT" "T2EXP_CONTROLLER_ADDR: not an IPv4 address: garbage"
  [ "$(sql "SELECT count(*) FROM experiments")" = 2 ] || fail "the refused create recorded an experiment"
  # A paused two-slot experiment resumed on one core: refused, and it stays PAUSED and resumable.
  cat > "$WORK/two.yaml" <<Y
name: two_slots
hyperparameters: {global_batch_size: 2, x: 0.5, y: -2, model: 1, sleep_ms: 30}
searcher: {name: single, metric: loss, max_length: {batches: 100}}
resources: {slots_per_trial: 2}
Y
  taskset -c 0,1 "$T2EXP" create "$WORK/two.yaml" "$TRIALS/quadratic.so" --plain > "$WORK/two.out" 2>&1 &
  ctl=$!
  wait_for "SELECT batches_trained >= 10 FROM trials WHERE experiment_id = 3"
  kill -INT $ctl
  wait $ctl || true
  [ "$(state 3)" = PAUSED ] || fail "Ctrl-C left experiment 3 $(state 3)"
  expect_exit 2 taskset -c 0 "$T2EXP" resume 3 --plain
  expect_in "$OUT" "resources.slots_per_trial = 2, but the slot pool has 1 slot(s)"
  [ "$(state 3)" = PAUSED ] && [ -z "$(err 3)" ] || fail "the refused resume left experiment 3 $(state 3): $(err 3)"
  expect_exit 0 taskset -c 0,1 "$T2EXP" resume 3 --plain
  [ "$(state 3)" = COMPLETED ] || fail "experiment 3 did not complete after the refused resume: $(state 3)"
else
  echo "create_setup_fails: the slot-pool case skipped (no MPI or taskset)"
fi
store_ok
echo "create_setup_fails: ok"
