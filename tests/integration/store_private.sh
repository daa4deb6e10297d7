#!/usr/bin/env bash
# A fresh home after a run is private under the usual umask 022: directories 0700, the store,
# its WAL and the trial logs 0600. A relative T2EXP_HOME is made absolute, so `t2exp logs` works
# from another directory. User text with escape sequences (an experiment name, a label, a
# metric name) reaches the terminal escaped from create, resume's summary, the progress lines
# and describe.
source "$(dirname "$0")/common.bash"
umask 022
esc=$'\e'
cat > "$WORK/q.yaml" <<Y
name: "evil\\e]0;owned\\a\\e[2J"
labels: ["\\e[31mred"]
hyperparameters: {global_batch_size: 1, x: 0.5, y: -1.5}
searcher: {name: single, metric: loss, max_length: {batches: 4}}
Y
mkdir -p "$WORK/cwd" "$WORK/elsewhere"
cd "$WORK/cwd"
T2EXP_HOME=relhome expect_exit 0 "$T2EXP" create "$WORK/q.yaml" "$TRIALS/quadratic.so" --plain
expect_in "$OUT" "experiment 1 COMPLETED"
expect_in "$OUT" "(evil ]0;owned  [2J)"
[[ "$OUT" != *"$esc"* ]] || fail "create printed a raw ESC: $(printf '%s' "$OUT" | od -c | head)"
H="$WORK/cwd/relhome"
mode() { stat -c %a "$1"; }
[ "$(mode "$H")" = 700 ] || fail "home is $(mode "$H")"
[ "$(mode "$H/experiments")" = 700 ] && [ "$(mode "$H/experiments/1")" = 700 ] \
  && [ "$(mode "$H/experiments/1/checkpoints")" = 700 ] || fail "experiment dirs are not 0700: $(ls -lR "$H")"
[ "$(mode "$H/t2exp.db")" = 600 ] || fail "t2exp.db is $(mode "$H/t2exp.db")"
for f in "$H/t2exp.db-wal" "$H/t2exp.db-shm"; do [ ! -e "$f" ] || [ "$(mode "$f")" = 600 ] || fail "$f is $(mode "$f")"; done
log=$(ls "$H"/experiments/1/worker-*.log | head -n 1)
[ -n "$log" ] && [ "$(mode "$log")" = 600 ] || fail "the worker log is $(mode "$log")"
# The store recorded absolute paths, so another directory sees the same files.
cd "$WORK/elsewhere"
T2EXP_HOME="$H" expect_exit 0 "$T2EXP" logs 1.0
expect_in "$OUT" "batches 4"
[ "$(sqlite3 "$H/t2exp.db" "SELECT substr(log_path, 1, 1) FROM trials")" = / ] || fail "log path is relative"
T2EXP_HOME="$H" expect_exit 0 "$T2EXP" describe 1
[[ "$OUT" != *"$esc"* ]] || fail "describe printed a raw ESC"
T2EXP_HOME="$H" expect_exit 0 "$T2EXP" list
[[ "$OUT" != *"$esc"* ]] || fail "list printed a raw ESC"
echo "store_private: ok"
