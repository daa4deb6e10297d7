#!/usr/bin/env bash
# `t2exp model` (Determined's model registry): versions of checkpoints under a name, usable as
# model:NAME[:V] wherever a CHECKPOINT is taken, and kept: a registered checkpoint survives the
# garbage collection of a resumed run that keeps only each trial's latest, and its experiment
# cannot be deleted until the model is. Errors: a bad name, an unknown checkpoint, model or
# version, a file outside the store.
source "$(dirname "$0")/common.bash"
command -v sqlite3 >/dev/null || { echo "model_registry: skipped (no sqlite3)"; exit 77; }
Q="$TRIALS/quadratic.so"

# One trial of 12 batches that checkpoints every 2 and keeps only its latest checkpoint.
cat > "$WORK/keep.yaml" <<Y
name: keep
hyperparameters: {global_batch_size: 1, x: 2, y: -2, model: 1, sleep_ms: 40}
searcher: {name: single, metric: loss, max_length: {batches: 12}}
min_checkpoint_period: {batches: 2}
checkpoint_policy: none
checkpoint_storage: {save_experiment_best: 0, save_trial_best: 0, save_trial_latest: 1}
Y
"$T2EXP" create "$WORK/keep.yaml" "$Q" --plain > "$WORK/create.log" 2>&1 &
pid=$!
wait_for "SELECT count(*) FROM checkpoints WHERE state = 'ACTIVE' AND batches >= 4" 1200
kill -INT $pid
wait $pid && fail "a paused experiment should exit 1: $(cat "$WORK/create.log")"
uuid=$(sql "SELECT uuid FROM checkpoints WHERE state = 'ACTIVE' ORDER BY batches DESC LIMIT 1")
at=$(sql "SELECT batches FROM checkpoints WHERE uuid = '$uuid'")
expect_exit 0 "$T2EXP" model register keeper "$uuid" --description "the paused trial"
expect_in "$OUT" "model:keeper:1 is checkpoint $uuid"
# Resumed: the trial goes on to 12 batches; every later checkpoint replaces the one before it.
expect_exit 0 "$T2EXP" resume 1 --quiet
[ "$(sql "SELECT state FROM checkpoints WHERE uuid = '$uuid'")" = ACTIVE ] || fail "the registered checkpoint was collected"
[ -f "$(sql "SELECT path FROM checkpoints WHERE uuid = '$uuid'")" ] || fail "the registered checkpoint's file is gone"
[ "$(sql "SELECT count(*) FROM checkpoints WHERE state = 'DELETED' AND batches > $at")" -ge 1 ] ||
  fail "garbage collection never ran after the resume, so the test proves nothing: $("$T2EXP" checkpoints 1 --all)"
echo "checkpoint at batch $at kept through garbage collection"

# A second version from EXP (its best checkpoint), the listing and the description.
expect_exit 0 "$T2EXP" model register keeper 1
expect_in "$OUT" "model:keeper:2 is checkpoint"
expect_exit 0 "$T2EXP" model list --csv
expect_in "$OUT" "keeper,2,2,the paused trial,"
expect_exit 0 "$T2EXP" model describe keeper --json
expect_in "$OUT" "\"checkpoint\":\"$uuid\""
expect_in "$OUT" "\"ref\":\"model:keeper:1\""
# model:NAME[:V] as a CHECKPOINT.
expect_exit 0 "$T2EXP" export model:keeper:1 "$WORK/v1.bin"
[ "$(params_sha "$(sql "SELECT path FROM checkpoints WHERE uuid = '$uuid'")")" = "$(sha256sum < "$WORK/v1.bin" | cut -d' ' -f1)" ] ||
  fail "model:keeper:1 exported other parameters than its checkpoint's"
expect_exit 0 "$T2EXP" evaluate model:keeper "$Q"
expect_in "$OUT" "loss 1"
expect_exit 2 "$T2EXP" evaluate model:keeper:9 "$Q"
expect_in "$OUT" "model 'keeper' has no version 9"
expect_exit 2 "$T2EXP" export model:nobody "$WORK/x.bin"
expect_in "$OUT" "no model 'nobody'"

# Kept: its experiment is not deleted under it; once the model is gone, it is.
expect_exit 2 "$T2EXP" delete 1 --yes
expect_in "$OUT" "experiment 1 has a checkpoint that is model:keeper:"
[ -f "$(sql "SELECT path FROM checkpoints WHERE uuid = '$uuid'")" ] || fail "a refused delete removed a file"
expect_exit 2 "$T2EXP" model delete keeper < /dev/null
expect_in "$OUT" "pass --yes"
expect_exit 0 "$T2EXP" model delete keeper --yes
expect_exit 0 "$T2EXP" delete 1 --yes
[ "$(sql "SELECT count(*) FROM models") $(sql "SELECT count(*) FROM model_versions")" = "0 0" ] || fail "model rows left"

# Registering while garbage collection runs: a checkpoint every batch, only the latest kept; the
# latest ACTIVE one is registered over and over as the trial goes. Every version must name a
# checkpoint that is still ACTIVE, with its file: a registration and a collection never both win.
# A batch lasts about as long as one `t2exp` command takes on this build (25 ms at least; an ASan
# build starts several times slower, and with 25 ms batches there every registration lost), so
# some registrations win and some lose.
cmd_ms=25
for _ in 1 2 3; do
  t0=$(date +%s%N); "$T2EXP" model list > /dev/null 2>&1 || true; t1=$(date +%s%N)
  ms=$(( (t1 - t0) / 1000000 )); [ "$ms" -gt "$cmd_ms" ] && cmd_ms=$ms
done
cat > "$WORK/race.yaml" <<Y
name: race
hyperparameters: {global_batch_size: 1, x: 2, y: -2, model: 1, sleep_ms: $cmd_ms}
searcher: {name: single, metric: loss, max_length: {batches: 200}}
min_checkpoint_period: {batches: 1}
checkpoint_policy: none
checkpoint_storage: {save_experiment_best: 0, save_trial_best: 0, save_trial_latest: 1}
Y
"$T2EXP" create "$WORK/race.yaml" "$Q" --quiet > "$WORK/race.log" 2>&1 &
pid=$!
wait_for "SELECT count(*) FROM experiments WHERE name = 'race'" 1200
e=$(sql "SELECT max(id) FROM experiments WHERE name = 'race'")
wait_for "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = $e" 1200
tries=0
while kill -0 $pid 2>/dev/null && [ $tries -lt 150 ]; do
  u=$(sql "SELECT c.uuid FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = $e
           AND c.state = 'ACTIVE' ORDER BY c.batches DESC LIMIT 1")
  [ -n "$u" ] && { "$T2EXP" model register racer "$u" > /dev/null 2>&1 || true; }
  tries=$((tries + 1))
done
wait $pid || fail "the raced experiment failed: $(cat "$WORK/race.log")"
n=$(sql "SELECT count(*) FROM model_versions")
[ "$tries" -ge 20 ] && [ "$n" -ge 1 ] || fail "$tries tries, $n registrations: the race was not run"
bad=$(sql "SELECT count(*) FROM model_versions v JOIN checkpoints c ON c.uuid = v.checkpoint_uuid WHERE c.state != 'ACTIVE'")
[ "$bad" = 0 ] || fail "$bad of $n versions name a checkpoint garbage collection deleted"
for p in $(sql "SELECT c.path FROM model_versions v JOIN checkpoints c ON c.uuid = v.checkpoint_uuid"); do
  [ -f "$p" ] || fail "a registered checkpoint's file is gone: $p"
done
echo "$n of $tries registrations got in while garbage collection ran ($cmd_ms ms batches); every one names a kept checkpoint"
expect_exit 0 "$T2EXP" model delete racer --yes

# Errors.
expect_exit 0 "$T2EXP" create "$WORK/keep.yaml" "$Q" --quiet --config hyperparameters.sleep_ms=0
expect_exit 2 "$T2EXP" model register "bad name" 2
expect_in "$OUT" "model name 'bad name': only letters, digits"
expect_exit 2 "$T2EXP" model register m 00000000-0000-4000-8000-000000000000
expect_in "$OUT" "00000000-0000-4000-8000-000000000000"
last=$(sql "SELECT path FROM checkpoints WHERE state = 'ACTIVE' LIMIT 1")
cp "$last" "$WORK/copy.tar"
expect_exit 2 "$T2EXP" model register m "$WORK/copy.tar"
expect_in "$OUT" "is a file the store does not know"
expect_exit 2 "$T2EXP" model describe nobody
expect_in "$OUT" "no model 'nobody'"
expect_exit 2 "$T2EXP" model frobnicate
expect_in "$OUT" "unknown subcommand 'frobnicate'"
[ "$(sql "SELECT count(*) FROM models")" = 0 ] || fail "a refused register made a model"
store_ok
echo "model_registry: ok"
