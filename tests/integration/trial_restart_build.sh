#!/usr/bin/env bash
# max_restarts applies to a trial that fails at start, as in Determined: a build_model that
# fails once (scripted_trial.c's fail_marker, T2_ENOTFOUND) is restarted and completes; one that
# always fails (T2_EINVAL) is restarted max_restarts times, then errored, while the experiment
# goes on with its other trial; invalid hyperparameters (T2_EHPARAM) are never restarted.
# (Before, build_model's T2_ENOTFOUND/T2_EINVAL/T2_ESHAPE were never restarted.)
source "$(dirname "$0")/common.bash"
build_scripted

touch "$WORK/marker"
cat > "$WORK/once.yaml" <<Y
name: fails_once
hyperparameters: {global_batch_size: 1, fail_marker: "$WORK/marker"}
searcher: {name: single, metric: score, smaller_is_better: false, max_length: {batches: 50}}
max_restarts: 1
Y
expect_exit 0 "$T2EXP" create "$WORK/once.yaml" "$WORK/scripted.so" --plain
expect_in "$OUT" "trial 1.0 failed (build_model: scripted: failing once as asked ($WORK/marker)); restart 1 of 1"
expect_in "$OUT" "trial 1.0 started again (id 1, "
expect_in "$OUT" "trial 1.0 completed"
[ ! -e "$WORK/marker" ] || fail "the first attempt did not run build_model"
[ "$(sql "SELECT state || ' ' || restarts || ' ' || batches_trained FROM trials WHERE id=1")" = "COMPLETED 1 50" ] ||
  fail "trial 1: $(sql "SELECT state, restarts, batches_trained FROM trials WHERE id=1")"

cat > "$WORK/always.yaml" <<Y
name: fails_always
hyperparameters: {global_batch_size: 1, fail_build: {type: categorical, vals: [0, 1]}}
searcher: {name: grid, metric: score, smaller_is_better: false, max_length: {batches: 50}}
max_restarts: 2
Y
expect_exit 0 "$T2EXP" create "$WORK/always.yaml" "$WORK/scripted.so" --plain # COMPLETED with a trial errored
bad=$(sql "SELECT id FROM trials WHERE experiment_id=2 AND json_extract(hparams, '\$.fail_build')=1")
good=$(sql "SELECT ordinal FROM trials WHERE experiment_id=2 AND json_extract(hparams, '\$.fail_build')=0")
badn=$(sql "SELECT ordinal FROM trials WHERE id=$bad")
expect_in "$OUT" "trial 2.$badn failed (build_model: scripted: failing every time as asked); restart 2 of 2"
expect_in "$OUT" "trial 2.$badn errored: build_model: scripted: failing every time as asked"
expect_in "$OUT" "trial 2.$good completed"
expect_in "$OUT" "1 trial(s) completed, 1 errored"
[ "$(sql "SELECT state || ' ' || restarts FROM trials WHERE id=$bad")" = "ERRORED 2" ] || fail "the failing trial's row"
[ "$(sql "SELECT state FROM experiments WHERE id=2")" = COMPLETED ] || fail "the experiment should complete"

cat > "$WORK/invalid.yaml" <<Y
name: invalid
hyperparameters: {global_batch_size: 1, invalid: 1}
searcher: {name: single, metric: score, smaller_is_better: false, max_length: {batches: 50}}
max_restarts: 3
Y
expect_exit 1 "$T2EXP" create "$WORK/invalid.yaml" "$WORK/scripted.so" --plain
grep -qF "restart 1 of" <<<"$OUT" && fail "invalid hyperparameters were restarted: $OUT"
t=$(sql "SELECT id FROM trials WHERE experiment_id=3")
expect_in "$OUT" "trial 3.0 errored: invalid hyperparameters: build_model: scripted: these hyperparameters are invalid as asked"
[ "$(sql "SELECT restarts FROM trials WHERE id=$t")" = 0 ] || fail "invalid hyperparameters: restarts should be 0"
store_ok
