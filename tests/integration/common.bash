# common.bash — shared by the integration tests: paths, a scratch home, and assertions.
set -euo pipefail
: "${T2EXP_BUILD:?set by ctest}" "${T2EXP_SOURCE:?set by ctest}"
T2EXP="$T2EXP_BUILD/t2exp"
TRIALS="$T2EXP_BUILD/trials"
EXAMPLES="$T2EXP_SOURCE/configs/examples"
WORK=$(mktemp -d)
export T2EXP_HOME="$WORK/home"
export TMPDIR="$WORK"
trap 'rm -rf "$WORK"' EXIT

# fail MESSAGE — ends the test; the store's errored trials (up to 4) show their logs' last lines, so
# a failure in CI says what the trial said (a launch that failed once showed only "mpirun exited").
fail() {
  echo "FAIL: $*" >&2
  if [ -n "${T2EXP_HOME:-}" ] && [ -f "$T2EXP_HOME/t2exp.db" ] && command -v sqlite3 >/dev/null; then
    local t
    for t in $(sqlite3 "$T2EXP_HOME/t2exp.db" "SELECT id FROM trials WHERE state = 'ERRORED' LIMIT 4" 2>/dev/null); do
      echo "--- trial $t errored; the end of its log:" >&2
      "$T2EXP" logs "$t" 2>&1 | tail -n 20 >&2 || true
    done
  fi
  exit 1
}

# expect_exit CODE CMD... — runs CMD, captures stdout+stderr in $OUT, checks the exit code.
expect_exit() {
  local want=$1; shift
  set +e
  OUT=$("$@" 2>&1)
  local got=$?
  set -e
  [ "$got" -eq "$want" ] || fail "exit $got (wanted $want) from: $*
$OUT"
}

# expect_in TEXT NEEDLE — TEXT contains NEEDLE (fixed string).
expect_in() { grep -qF -- "$2" <<<"$1" || fail "expected '$2' in:
$1"; }

# sql QUERY — one value from the store. With a busy timeout: while a controller runs, its log
# checkpoints can lock a reader out for a moment ("database is locked" in prepare, seen in
# it_model_registry under ASan with other tests beside it).
sql() { sqlite3 -cmd ".timeout 5000" "$T2EXP_HOME/t2exp.db" "$1"; }

# own_pids PATTERN — the pids of processes whose command line matches PATTERN (pgrep -f) and that
# belong to this test: its T2EXP_HOME in their environment. Tests run side by side (ctest -j2), and
# their trials and ranks look alike on a command line.
own_pids() {
  local p
  for p in $(pgrep -f "$1" || true); do
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qxF "T2EXP_HOME=$T2EXP_HOME" && echo "$p"
  done
  return 0
}

# start_dashboard [PROGRAM] — starts PROGRAM (default $T2EXP) dashboard --port 0 in the background,
# its output in $WORK/dash.log; sets DASH (its pid), DASH_URL (the address it printed, token and
# all), PORT and TOKEN (that address's), or fails. The caller's EXIT trap should kill $DASH.
start_dashboard() {
  "${1:-$T2EXP}" dashboard --port 0 > "$WORK/dash.log" 2>&1 &
  DASH=$!
  PORT=
  for _ in $(seq 100); do
    DASH_URL=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/\?token=[0-9A-Za-z._~-]+' "$WORK/dash.log" | head -n 1 || true)
    PORT=$(grep -oE ':[0-9]+/' <<<"$DASH_URL" | tr -d ':/' || true)
    TOKEN=${DASH_URL##*token=}
    [ -n "$PORT" ] && return 0
    kill -0 "$DASH" 2>/dev/null || fail "the dashboard exited: $(cat "$WORK/dash.log")"
    sleep 0.05
  done
  kill "$DASH" 2>/dev/null || true
  fail "the dashboard printed no address: $(cat "$WORK/dash.log")"
}

# build_scripted — compiles tests/integration/scripted_trial.c to $WORK/scripted.so with the public
# header only, as a user would build a trial; without a C compiler the test is skipped (77).
build_scripted() {
  command -v "${CC:-cc}" >/dev/null || { echo "$(basename "$0" .sh): skipped (no C compiler)"; exit 77; }
  "${CC:-cc}" -std=c11 -Wall -Wextra -Werror -shared -fPIC -I "$T2EXP_SOURCE/framework/include" \
    "$T2EXP_SOURCE/tests/integration/scripted_trial.c" -o "$WORK/scripted.so" -lm
}

# have_mpi — whether this build has MPI and mpirun is at hand (distributed trials can run).
have_mpi() { grep -q "T2EXP_WITH_MPI:BOOL=ON" "$T2EXP_BUILD/CMakeCache.txt" && command -v mpirun >/dev/null; }

# with_mpi — for a test whose distributed cases are some of many: have_mpi, and then Open MPI's own
# allocations are not leak-checked (they are not ours); else it says the cases are not checked.
with_mpi() {
  if have_mpi; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
    return 0
  fi
  echo "$(basename "$0" .sh): no MPI build, distributed trials not checked"
  return 1
}

# waiting_pid GATE CTL LOG — the pid of the trial process waiting for GATE (scripted_trial.c's
# wait_for writes it to GATE.pid); fails, killing the controller CTL, if none comes in 60 s.
waiting_pid() {
  for _ in $(seq 600); do
    [ -s "$1.pid" ] && { cat "$1.pid"; return; }
    sleep 0.1
  done
  kill -KILL "$2"
  fail "no trial started waiting for $1: $(cat "$3")"
}

# pause_reached LOG CTL — waits until the controller CTL, asked to pause, has asked its running
# trials to stop (it says "stopping:" in its --plain output LOG right after). A test that opens a
# trial's gate only then cannot see the trial finish its remaining batches before the pause reaches
# it, which a loaded machine allowed (the trial then COMPLETED instead of PAUSED).
pause_reached() {
  for _ in $(seq 600); do
    grep -q "^stopping: " "$1" && return 0
    kill -0 "$2" 2>/dev/null || return 0 # it ended: nothing is left to reach
    sleep 0.05
  done
  fail "the controller did not start its pause within 30 s: $(cat "$1")"
}

# A trial's output as `t2exp logs` shows it (a worker's trials share the worker's log file).
trial_log() { "$T2EXP" logs "$1"; }
# Every trial's output of experiment $1, in trial order.
exp_logs() { local t; for t in $(sql "SELECT id FROM trials WHERE experiment_id = $1 ORDER BY id"); do "$T2EXP" logs "$t"; done; }

store_ok() { [ "$(sql 'PRAGMA integrity_check')" = "ok" ] || fail "store integrity check failed"; }

# json EXPR — evaluates an SQLite JSON expression over $OUT, available as column j.
json() {
  printf '%s' "$OUT" > "$WORK/out.json"
  sqlite3 :memory: "WITH d(j) AS (SELECT CAST(readfile('$WORK/out.json') AS TEXT)) SELECT $1 FROM d"
}

# have_fashion_mnist — 0 when the dataset package's files are there.
have_fashion_mnist() { [ -e "${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}/train-images-idx3-ubyte.gz" ]; }

# mlp_config FILE BATCHES [EXTRA LINES...] — a checkpointing MLP experiment on Fashion-MNIST:
# checkpoints every 50 batches, validation every 100, training metrics every 25.
mlp_config() {
  local file=$1 batches=$2; shift 2
  cat > "$file" <<Y
name: mlp_ckpt
data: {dir: ""}
hyperparameters: {global_batch_size: 128, learning_rate: 0.05, momentum: 0.9, hidden1: 64, hidden2: 32, dropout: 0.2}
searcher: {name: single, metric: validation_accuracy, smaller_is_better: false, max_length: {batches: $batches}}
min_checkpoint_period: {batches: 50}
min_validation_period: {batches: 100}
scheduling_unit: 25
reproducibility: {experiment_seed: 7}
Y
  printf '%s\n' "$@" >> "$file"
}

# wait_for SQL [TRIES] — polls the store until the query returns a non-empty, non-zero value.
wait_for() {
  local v
  for _ in $(seq "${2:-300}"); do
    v=$(sqlite3 "$T2EXP_HOME/t2exp.db" "$1" 2>/dev/null || true)
    [ -n "$v" ] && [ "$v" != 0 ] && return 0
    sleep 0.05
  done
  fail "timed out waiting for: $1"
}

# pause_resume_matches EXP BEFORE TOTAL CREATE_ARGS... — runs `t2exp create CREATE_ARGS` in the
# background (it must become experiment EXP), pauses it with Ctrl-C once BEFORE of its trials
# completed, resumes it, then runs the same search uninterrupted (experiment EXP+1). Fails unless
# the pause came mid-search (fewer than TOTAL completed) and both runs have the same outcome (the
# calling script's `outcome EXP` function).
pause_resume_matches() {
  local exp=$1 before=$2 total=$3 pid done_before
  shift 3
  "$T2EXP" create "$@" --plain > "$WORK/create.log" 2>&1 &
  pid=$!
  wait_for "SELECT count(*) >= $before FROM trials WHERE experiment_id=$exp AND state='COMPLETED'" 1200
  kill -INT $pid
  wait $pid && fail "a paused experiment should exit 1: $(cat "$WORK/create.log")"
  expect_in "$(cat "$WORK/create.log")" "experiment $exp PAUSED"
  done_before=$(sql "SELECT count(*) FROM trials WHERE experiment_id=$exp AND state='COMPLETED'")
  [ "$done_before" -lt "$total" ] || fail "the pause came after the search ended"
  expect_exit 0 "$T2EXP" resume "$exp" --quiet
  expect_exit 0 "$T2EXP" create "$@" --quiet
  [ "$(outcome "$exp")" = "$(outcome $((exp + 1)))" ] ||
    fail "paused after $done_before trials and resumed, the search chose other trials than an uninterrupted one"
  echo "paused after $done_before completed trials; the resumed search matches the uninterrupted one"
}

# create_kill_trial CONFIG LOG SQL — runs `t2exp create CONFIG fashion_mnist_mlp.so` in the
# background (output in LOG), waits until SQL is true, SIGKILLs the trial process, and waits for
# the experiment, which must still succeed (the trial restarts from its latest checkpoint).
create_kill_trial() {
  local config=$1 log=$2 ctl runner
  "$T2EXP" create "$config" "$TRIALS/fashion_mnist_mlp.so" --plain > "$log" 2>&1 &
  ctl=$!
  wait_for "$3"
  runner=$(pgrep -P "$ctl" | head -n 1)
  [ -n "$runner" ] || fail "no trial process under the controller"
  kill -KILL "$runner"
  wait "$ctl" || fail "the experiment failed after a trial was killed: $(cat "$log")"
}

# export_last EXPERIMENT OUT — `t2exp export`s the parameters of the experiment's latest active
# checkpoint to OUT; LAST is that checkpoint's path.
export_last() {
  LAST=$(sql "SELECT c.path FROM checkpoints c JOIN trials t ON t.id=c.trial_id WHERE t.experiment_id=$1
              AND c.state='ACTIVE' ORDER BY c.batches DESC LIMIT 1")
  [ -n "$LAST" ] || fail "experiment $1 has no checkpoint"
  expect_exit 0 "$T2EXP" export "$LAST" "$2"
}

# params_sha CHECKPOINT — hash of the parameters inside a checkpoint archive.
params_sha() { tar -xOf "$1" params.bin | sha256sum | cut -d' ' -f1; }
