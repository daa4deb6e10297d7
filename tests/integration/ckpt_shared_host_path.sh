#!/usr/bin/env bash
# Two homes whose configs share checkpoint_storage.host_path, each with an experiment 1: each
# home's checkpoints live in a directory named by its own store id, and resuming one never
# deletes the other's checkpoints (resume used to delete every file in host_path/experiment-1 its
# own store did not know). A file that is not a checkpoint survives resume; a checkpoint file the
# resumed store's own runner wrote but never recorded is swept as before.
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "ckpt_shared_host_path: skipped (no dataset-fashion-mnist)"; exit 77; }
mlp_config "$WORK/c.yaml" 300 "checkpoint_storage: {host_path: $WORK/shared, save_trial_latest: 1, save_trial_best: 0}"
H1="$WORK/home1" H2="$WORK/home2"
sql1() { sqlite3 "$H1/t2exp.db" "$1"; }
sql2() { sqlite3 "$H2/t2exp.db" "$1"; }

# create_in_home2_killed LOG SQL: an experiment in home 2 whose controller is SIGKILLed once SQL
# holds (it stays ACTIVE), waiting until its trial process is gone too.
create_in_home2_killed() {
  T2EXP_HOME=$H2 "$T2EXP" create "$WORK/c.yaml" "$TRIALS/fashion_mnist_mlp.so" --plain > "$1" 2>&1 &
  local ctl=$!
  T2EXP_HOME=$H2 wait_for "$2"
  kill -KILL "$ctl"
  wait "$ctl" 2>/dev/null || true
  for _ in $(seq 100); do [ -n "$(own_pids fashion_mnist_mlp.so)" ] || break; sleep 0.05; done
}

# Home 1: a completed experiment 1 with its final checkpoint.
T2EXP_HOME=$H1 expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet
ck1=$(sql1 "SELECT path FROM checkpoints WHERE state='ACTIVE'")
[ -f "$ck1" ] || fail "home 1's checkpoint is missing: $ck1"

# Home 2: experiment 1 too, its controller killed after a checkpoint (the experiment stays ACTIVE).
create_in_home2_killed "$WORK/create2.log" "SELECT count(*) FROM checkpoints WHERE batches >= 100"
dir2=$(dirname "$(sql2 "SELECT path FROM checkpoints LIMIT 1")")
dir1=$(dirname "$ck1")
[ "$dir1" != "$dir2" ] || fail "both homes write checkpoints to $dir1"
# Things in the directories that resume must leave alone, and an orphan it must sweep.
echo "notes" > "$dir2/notes.txt"
echo "notes" > "$dir1/notes.txt"
orphan="$dir2/0f8fad5b-d9cb-469f-a165-70867728950e.tar"
echo "unrecorded" > "$orphan"

T2EXP_HOME=$H2 expect_exit 0 "$T2EXP" resume 1 --plain
expect_in "$OUT" "experiment 1 COMPLETED"
[ -f "$ck1" ] || fail "resuming home 2 deleted home 1's checkpoint $ck1"
[ -f "$dir2/notes.txt" ] && [ -f "$dir1/notes.txt" ] || fail "resume deleted a file that is not a checkpoint"
[ ! -e "$orphan" ] || fail "resume left its own unrecorded checkpoint file"
# Home 1 still lists its checkpoint ACTIVE and can export it; home 2's files are what its store says.
T2EXP_HOME=$H1 expect_exit 0 "$T2EXP" checkpoints 1 --csv
expect_in "$OUT" "$(basename "$ck1" .tar)"
[ "$(sql1 "SELECT count(*) FROM checkpoints WHERE state='ACTIVE'")" = 1 ] || fail "home 1 lost its ACTIVE checkpoint"
T2EXP_HOME=$H1 expect_exit 0 "$T2EXP" export "$ck1" "$WORK/p1.bin"
[ "$(ls "$dir2" | grep -c '\.tar$')" = "$(sql2 "SELECT count(*) FROM checkpoints WHERE state='ACTIVE'")" ] \
  || fail "home 2's checkpoint files differ from its store's ACTIVE checkpoints"
# The directories are named by each store's id, under the shared path.
for h in "$H1" "$H2"; do
  id=$(sqlite3 "$h/t2exp.db" "SELECT store_id FROM store_info")
  [ "$(sqlite3 "$h/t2exp.db" "SELECT checkpoint_dir FROM experiments WHERE id=1")" = "$WORK/shared/$id/experiment-1" ] \
    || fail "$h: checkpoint_dir is not host_path/<store id>/experiment-1"
done

# An experiment recorded before stores had ids (no checkpoint_dir; its checkpoints in the old
# shared host_path/experiment-<id>): resume continues from its recorded checkpoint there and,
# since that directory may be another store's too, deletes no file in it that it did not record.
create_in_home2_killed "$WORK/create3.log" \
  "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = 2 AND c.batches >= 100"
new=$(sql2 "SELECT checkpoint_dir FROM experiments WHERE id=2")
old="$WORK/shared//experiment-2"   # the old spelling, "//" and all
mkdir -p "$old"
mv "$new"/* "$old"/
# Such a row has neither a checkpoint_dir nor overrides (both came with schema 2; a row of a later
# create without a checkpoint_dir is one whose create failed, which resume refuses).
sql2 "UPDATE experiments SET checkpoint_dir = NULL, overrides = NULL WHERE id = 2;
      UPDATE checkpoints SET path = replace(path, '$new', '$old') WHERE experiment_id = 2"
foreign="$old/1b4e28ba-2fa1-41d2-883f-0016d3cca427.tar"
echo "another store's" > "$foreign"
T2EXP_HOME=$H2 expect_exit 0 "$T2EXP" resume 2 --plain
expect_in "$OUT" "experiment 2 COMPLETED"
[ -f "$foreign" ] || fail "resume deleted an unrecorded file in an old shared checkpoint dir"
[ "$(sql2 "SELECT batches_trained FROM trials WHERE experiment_id=2")" = 300 ] || fail "the old experiment did not finish"
[ "$(sql2 "SELECT count(*) FROM checkpoints WHERE experiment_id=2 AND state='ACTIVE' AND path LIKE '$old/%'")" = 1 ] \
  || fail "the old experiment's checkpoints should stay in its old directory"
echo "ckpt_shared_host_path: ok"
