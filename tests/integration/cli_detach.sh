#!/usr/bin/env bash
# Detached experiments and their lifecycle, as Determined's det e create (without --follow),
# pause/activate/kill/delete: create --detach returns at once and `follow` shows the run to its
# end; pause leaves it PAUSED and activate continues it; kill ends it CANCELED with no process
# left; commands on an experiment that isn't running exit 2; a stale or recycled controller pid
# is never signalled; delete refuses a running experiment, needs --yes without a terminal, and
# removes rows, directory and checkpoint files but nothing else.
source "$(dirname "$0")/common.bash"
Q="$TRIALS/quadratic.so"
# quadratic_config FILE BATCHES SLEEP_MS
quadratic_config() {
  cat > "$1" <<Y
name: q_detach
hyperparameters: {global_batch_size: 1, x: 0.5, y: 0.5, sleep_ms: $3}
searcher: {name: single, metric: loss, smaller_is_better: true, max_length: {batches: $2}}
min_validation_period: {batches: 10}
scheduling_unit: 5
max_restarts: 0
Y
}
# ctl_gone PID — no process of the controller's session (it, its trials) is left, zombies aside.
ctl_gone() {
  local left
  left=$(ps -e -o sid=,pid=,stat= | awk -v s="$1" '$1 == s && $3 !~ /^Z/')
  [ -z "$left" ] || fail "processes of controller $1 still alive: $left"
}
quadratic_config "$WORK/fast.yaml" 20 0
quadratic_config "$WORK/slow.yaml" 100000 20

# 1. detach -> follow -> COMPLETED.
expect_exit 0 timeout 60 "$T2EXP" create "$WORK/fast.yaml" "$Q" --detach
expect_in "$OUT" "experiment 1 started in the background; follow with: t2exp follow 1"
expect_exit 0 timeout 120 "$T2EXP" follow 1
expect_in "$OUT" "experiment 1 COMPLETED"
[ "$(sql 'SELECT state FROM experiments WHERE id=1')" = COMPLETED ] || fail "experiment 1 not COMPLETED"
[ -z "$(sql 'SELECT controller_pid FROM experiments WHERE id=1')" ] || fail "the controller record was not cleared"

# A home given by --home is in every command t2exp prints for its user to run (shell-quoted), so
# that the command finds the experiment from a plain shell (it printed `t2exp follow 1`, probe_M).
H="$WORK/a home's dir"
expect_exit 0 timeout 60 env -u T2EXP_HOME "$T2EXP" create "$WORK/fast.yaml" "$Q" --detach --home "$H"
expect_in "$OUT" "follow with: t2exp --home '$WORK/a home'\\''s dir' follow 1"
printed=$(sed -n 's/.*follow with: //p' <<<"$OUT")
expect_exit 0 timeout 120 env -u T2EXP_HOME PATH="$(dirname "$T2EXP"):$PATH" bash -c "$printed" # t2exp: $T2EXP
expect_in "$OUT" "experiment 1 COMPLETED"
expect_in "$OUT" "see: t2exp --home '$WORK/a home'\\''s dir' describe 1"

# A search where one trial fails still COMPLETES, and every way of running it says so alike:
# exit 0 in the foreground and from `follow` of the detached run (create once exited 1, follow 0).
cat > "$WORK/grid.yaml" <<Y
name: q_one_fails
hyperparameters: {global_batch_size: 1, x: 0.5, y: 0.5, fail_at_batch: {type: categorical, vals: [2, 1000]}}
searcher: {name: grid, metric: loss, max_length: {batches: 5}}
max_restarts: 0
Y
( # a home of its own: the numbering below stays
export T2EXP_HOME="$WORK/home-grid"
expect_exit 0 timeout 120 "$T2EXP" create "$WORK/grid.yaml" "$Q" --plain
expect_in "$OUT" "experiment 1 COMPLETED"
expect_in "$OUT" "1 trial(s) completed, 1 errored"
[ "$(sql "SELECT state FROM experiments WHERE id=1")" = COMPLETED ] || fail "the grid with a failed trial should be COMPLETED"
expect_exit 0 timeout 60 "$T2EXP" create "$WORK/grid.yaml" "$Q" --detach
expect_exit 0 timeout 120 "$T2EXP" follow 2
expect_in "$OUT" "experiment 2 COMPLETED"
expect_in "$OUT" "1 trial(s) completed, 1 errored"
)

# A config error is the parent's, before anything is detached; a bad trial object is the child's,
# reported before the experiment exists.
expect_exit 2 "$T2EXP" create "$WORK/fast.yaml" "$Q" --detach --config searcher.max_lenght=3
expect_exit 2 timeout 60 "$T2EXP" create "$WORK/fast.yaml" "$WORK/nope.so" --detach
[ "$(sql 'SELECT count(*) FROM experiments')" = 1 ] || fail "a failed detach left an experiment"

# 2. detach -> pause -> PAUSED -> activate -> follow -> COMPLETED.
expect_exit 0 timeout 60 "$T2EXP" create "$WORK/slow.yaml" "$Q" --detach
wait_for "SELECT batches_trained >= 10 FROM trials WHERE experiment_id=2" 1200
expect_exit 0 timeout 300 "$T2EXP" pause 2
expect_in "$OUT" "experiment 2 is PAUSED"
[ "$(sql 'SELECT state FROM experiments WHERE id=2')" = PAUSED ] || fail "experiment 2 not PAUSED"
done=$(sql 'SELECT batches_trained FROM trials WHERE experiment_id=2')
# Continue with a short target. activate takes no --config (resume --config would), so the stored
# config's length and the trial's target are edited in the store.
sqlite3 "$T2EXP_HOME/t2exp.db" "UPDATE experiments SET config_yaml = replace(config_yaml, 'batches: 100000', 'batches: $((done + 20))') WHERE id=2"
sqlite3 "$T2EXP_HOME/t2exp.db" "UPDATE trials SET target_length_batches = $((done + 20)) WHERE experiment_id=2"
expect_exit 0 timeout 60 "$T2EXP" activate 2
expect_in "$OUT" "experiment 2 started in the background"
expect_exit 0 timeout 300 "$T2EXP" follow 2
expect_in "$OUT" "experiment 2 COMPLETED"
[ "$(sql 'SELECT state FROM experiments WHERE id=2')" = COMPLETED ] || fail "experiment 2 not COMPLETED"

# 3. detach -> kill -> CANCELED, nothing left running.
expect_exit 0 timeout 60 "$T2EXP" create "$WORK/slow.yaml" "$Q" --detach
wait_for "SELECT batches_trained >= 5 FROM trials WHERE experiment_id=3" 1200
ctl=$(sql 'SELECT controller_pid FROM experiments WHERE id=3')
[ -n "$ctl" ] || fail "no controller recorded for experiment 3"
# delete refuses a running experiment.
expect_exit 2 "$T2EXP" delete 3 --yes
expect_in "$OUT" "experiment 3 is running"
expect_exit 0 timeout 300 "$T2EXP" kill 3
expect_in "$OUT" "experiment 3 is CANCELED"
[ "$(sql 'SELECT state FROM experiments WHERE id=3')" = CANCELED ] || fail "experiment 3 not CANCELED"
[ "$(sql "SELECT group_concat(state) FROM trials WHERE experiment_id=3")" = CANCELED ] || fail "its trial is not CANCELED"
ctl_gone "$ctl"
expect_exit 1 timeout 60 "$T2EXP" follow 3
expect_in "$OUT" "experiment 3 is CANCELED"
# The log says the trial was canceled, and the summary counts it (it said "0 errored" and no more).
expect_in "$OUT" "trial 3.0 canceled: the experiment was killed"
expect_in "$OUT" "experiment 3 CANCELED in"
expect_in "$OUT" "0 trial(s) completed, 0 errored, 1 canceled"

# 4. Not running: pause/kill exit 2, and so does anything on an unknown experiment.
expect_exit 2 "$T2EXP" pause 1
expect_in "$OUT" "experiment 1 is not running"
expect_exit 2 "$T2EXP" kill 3
expect_in "$OUT" "experiment 3 is not running"
expect_exit 2 "$T2EXP" kill 99
expect_exit 2 "$T2EXP" follow 99
# A record naming a live process with another token (a recycled pid): not running, never signalled.
sleep 300 & victim=$!
sqlite3 "$T2EXP_HOME/t2exp.db" "UPDATE experiments SET controller_pid=$victim, controller_token='1@not-this-boot' WHERE id=1"
expect_exit 2 "$T2EXP" kill 1
kill -0 "$victim" 2>/dev/null || fail "kill signalled a process whose token did not match"
kill "$victim"; wait "$victim" 2>/dev/null || true

# 5. delete: --yes without a terminal, then rows, directory and checkpoint files go, nothing else.
expect_exit 2 "$T2EXP" delete 1 < /dev/null
expect_in "$OUT" "pass --yes"
[ "$(sql 'SELECT count(*) FROM experiments WHERE id=1')" = 1 ] || fail "delete without --yes deleted"
expect_exit 2 "$T2EXP" delete 99 --yes
have_fashion_mnist || { echo "cli_detach: delete with checkpoints skipped (no dataset-fashion-mnist)"; exit 77; }
mlp_config "$WORK/mlp.yaml" 100 "checkpoint_storage: {host_path: $WORK/ckpts}"
expect_exit 0 timeout 600 "$T2EXP" create "$WORK/mlp.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet
id=$(sql "SELECT max(id) FROM experiments")
cdir=$(sql "SELECT checkpoint_dir FROM experiments WHERE id=$id")
[ "$(sql "SELECT count(*) FROM checkpoints WHERE experiment_id=$id AND state='ACTIVE'")" -ge 1 ] || fail "no checkpoint to delete"
ls "$cdir"/*.tar* > /dev/null || fail "no checkpoint file in $cdir"
echo mine > "$cdir/notes.txt"
echo outside > "$WORK/outside.txt"
ln -s "$WORK/outside.txt" "$T2EXP_HOME/experiments/$id/link"
mkdir "$WORK/outdir" && echo keep > "$WORK/outdir/keep" && ln -s "$WORK/outdir" "$T2EXP_HOME/experiments/$id/dirlink"
expect_exit 0 "$T2EXP" delete "$id" --yes
expect_in "$OUT" "experiment $id deleted"
for t in experiments "trials WHERE experiment_id=$id" "checkpoints WHERE experiment_id=$id" \
         "searcher_state WHERE experiment_id=$id"; do
  case $t in experiments) q="SELECT count(*) FROM experiments WHERE id=$id" ;; *) q="SELECT count(*) FROM $t" ;; esac
  [ "$(sql "$q")" = 0 ] || fail "rows left: $q"
done
[ "$(sql "SELECT count(*) FROM metrics")" = "$(sql "SELECT count(*) FROM metrics m JOIN trials t ON t.id=m.trial_id")" ] ||
  fail "metric rows of deleted trials left"
[ ! -e "$T2EXP_HOME/experiments/$id" ] || fail "experiment directory left"
ls "$cdir"/*.tar* 2>/dev/null && fail "checkpoint files left in $cdir"
[ "$(cat "$cdir/notes.txt")" = mine ] || fail "delete removed a file that is not a checkpoint"
[ "$(cat "$WORK/outside.txt")" = outside ] && [ "$(cat "$WORK/outdir/keep")" = keep ] || fail "delete followed a symlink"
[ "$(sql 'SELECT count(*) FROM experiments')" = 3 ] || fail "delete removed other experiments"
store_ok
