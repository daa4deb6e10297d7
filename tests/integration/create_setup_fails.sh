#!/usr/bin/env bash
# A create that fails after the experiment's row is written leaves it ERRORED with the reason, as
# every controller error does, never ACTIVE with no controller: checkpoint_storage.host_path
# /dev/null cannot hold the checkpoint directory (mkdir: Not a directory), which is I/O trouble:
# exit 3. Its resume refuses clearly (before, it computed another checkpoint directory and ran). A slot
# pool too small for slots_per_trial, found once the run is recorded, ends it ERRORED too (exit 1,
# as a run that ended ERRORED).
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
  # One core, two slots a trial: the plan fails once the run is recorded (before, it was left ACTIVE).
  expect_exit 1 taskset -c 0 "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" --plain \
    --config resources.slots_per_trial=2 --config hyperparameters.global_batch_size=2
  expect_in "$OUT" "experiment 3 ERRORED before it ran: resources.slots_per_trial = 2, but the slot pool has 1 slot(s)"
  [ "$(state 3)" = ERRORED ] || fail "a failed plan left experiment 3 $(state 3)"
else
  echo "create_setup_fails: the slot-pool case skipped (no MPI or taskset)"
fi
store_ok
echo "create_setup_fails: ok"
