#!/usr/bin/env bash
# pipeline_failure.sh — command stages only: located graph errors before anything runs, a failed
# stage stopping only what depends on it, independent stages running in parallel within the
# slot pool (and not beyond it), one run per flow at a time, SIGTERM and SIGKILL of
# `pipeline run`, and a stage under mpirun.
source "$(dirname "$0")/common.bash"
export OPENBLAS_NUM_THREADS=1
P="$WORK/proj"
mkdir -p "$P"

# 1. A cycle and a dangling reference: exit 2, located, nothing run or recorded.
cat > "$P/cycle.yaml" <<'Y'
name: cyc
stages:
  a: {run: [touch, a.ran], after: [c]}
  b: {run: [touch, b.ran], after: [a]}
  c: {run: [touch, c.ran], after: [b]}
Y
expect_exit 2 "$T2EXP" pipeline run "$P/cycle.yaml"
echo "cycle: $OUT"
expect_in "$OUT" "cycle.yaml:4:3: stages form a cycle: b -> c -> a -> b"
cat > "$P/dangling.yaml" <<'Y'
name: dangling
stages:
  search:
    experiment: {config: search.yaml, trial: t.so}
  export:
    run: [t2exp, export, "${serch.best.checkpoint}", model.bin]
    after: [search]
Y
expect_exit 2 "$T2EXP" pipeline run "$P/dangling.yaml"
echo "dangling: $OUT"
expect_in "$OUT" "dangling.yaml:6:26: stages.export.run[2]: \${serch.best.checkpoint}: no stage 'serch' (did you mean 'search'?)"
expect_exit 2 "$T2EXP" pipeline status "$P/dangling.yaml"
# Both at once: a cycle does not hide the reference errors that need no run order.
cat > "$P/both.yaml" <<'Y'
name: both
stages:
  a: {run: [touch, a.ran], after: [c]}
  c: {run: [touch, c.ran], after: [a]}
  search: {experiment: {config: search.yaml, trial: t.so}}
  export: {after: [search], run: [echo, "${serch.best.checkpoint}"]}
  plain: {after: [a], run: [echo, "${a.best.metric}"]}
Y
expect_exit 2 "$T2EXP" pipeline status "$P/both.yaml"
expect_in "$OUT" "stages form a cycle: c -> a -> c"
expect_in "$OUT" "both.yaml:6:41: stages.export.run[1]: \${serch.best.checkpoint}: no stage 'serch' (did you mean 'search'?)"
expect_in "$OUT" "\${a.best.metric}: stage 'a' is a command stage"
expect_in "$OUT" "3 errors; nothing was run"
ls "$P"/*.ran >/dev/null 2>&1 && fail "a stage of an invalid flow ran"
[ ! -e "$T2EXP_HOME/t2exp.db" ] || [ "$(sql "SELECT count(*) FROM pipeline_runs")" = 0 ] || fail "an invalid flow was recorded"

# 2. bad fails: its dependent is blocked; the independent branch finishes; exit 1.
cat > "$P/fail.yaml" <<'Y'
name: failing
stages:
  bad: {run: [sh, -c, "echo broken >&2; exit 3"]}
  after_bad: {run: [touch, after_bad.ran], after: [bad]}
  good: {run: [sh, -c, "sleep 0.3; touch good.ran"]}
  after_good: {run: [touch, after_good.ran], after: [good], outputs: [after_good.ran]}
Y
expect_exit 1 "$T2EXP" pipeline run "$P/fail.yaml" --jobs 2
expect_in "$OUT" "blocked (bad failed)"
# The summary and `pipelines` count alike: ran (and succeeded), up to date, unsuccessful.
expect_in "$OUT" "(2 ran, 0 up to date, 2 not successful)"
[ -e "$P/good.ran" ] && [ -e "$P/after_good.ran" ] || fail "the independent branch did not finish: $OUT"
[ ! -e "$P/after_bad.ran" ] || fail "a dependent of the failed stage ran"
st() { sql "SELECT state || ':' || coalesce(exit_code, '') FROM stage_runs WHERE run_id = $1 AND stage = '$2'"; }
run=$(sql "SELECT max(id) FROM pipeline_runs")
[ "$(st "$run" bad)" = FAILED:3 ] && [ "$(st "$run" after_bad)" = BLOCKED: ] && [ "$(st "$run" after_good)" = SUCCEEDED:0 ] ||
  fail "stage records: $(sql "SELECT stage, state, exit_code, error FROM stage_runs WHERE run_id = $run") $OUT"
[ "$(sql "SELECT state || ' ' || error FROM pipeline_runs WHERE id = $run")" = "FAILED stage failed: bad" ] || fail "run record"
expect_exit 0 "$T2EXP" pipelines --csv
grep -q "^$run,failing,FAILED,2,0,2," <<<"$OUT" || fail "pipelines' counts of run $run: $OUT"
grep -q broken "$(sql "SELECT log_path FROM stage_runs WHERE run_id = $run AND stage = 'bad'")" || fail "bad's log"
expect_exit 0 "$T2EXP" pipeline status "$P/fail.yaml"
grep -E '^bad +command +failed last time' <<<"$OUT" >/dev/null || fail "status of bad: $OUT"
grep -E '^good +command +up to date' <<<"$OUT" >/dev/null || fail "status of good: $OUT"
# Fixed: only the failed stage and its dependent run now.
sed -i 's/exit 3/exit 0/' "$P/fail.yaml"
rm -f "$P"/*.ran
expect_exit 0 "$T2EXP" pipeline run "$P/fail.yaml"
[ -e "$P/after_bad.ran" ] && [ ! -e "$P/good.ran" ] || fail "after the fix: $OUT"

# 3. Parallel: x and y each wait (5 s at most) for the other's marker, so both succeed only
# when they overlap. With --jobs 1 they cannot: the first one waits in vain.
cat > "$P/par.yaml" <<'Y'
name: parallel
stages:
  x: {run: [sh, -c, "touch x.mark; for i in $(seq 100); do [ -e y.mark ] && exit 0; sleep 0.05; done; exit 1"]}
  y: {run: [sh, -c, "touch y.mark; for i in $(seq 100); do [ -e x.mark ] && exit 0; sleep 0.05; done; exit 1"]}
Y
expect_exit 0 "$T2EXP" pipeline run "$P/par.yaml" --jobs 2
rm -f "$P"/*.mark
expect_exit 1 "$T2EXP" pipeline run "$P/par.yaml" --jobs 1 --force x --force y
run=$(sql "SELECT max(id) FROM pipeline_runs")
[ "$(st "$run" x)" = FAILED:1 ] && [ "$(st "$run" y)" = SUCCEEDED:0 ] || fail "--jobs 1 overlapped x and y: $OUT"

# 4. SIGTERM while a stage runs: its process is stopped, the run and the stage are INTERRUPTED,
# what had not started is CANCELED; a second run of the same flow meanwhile is refused.
cat > "$P/long.yaml" <<'Y'
name: long
stages:
  slow: {run: [sh, -c, "[ -e fast ] || { sleep 60 & echo $! > slow.pid; wait; }"]}
  next: {run: [touch, next.ran], after: [slow]}
Y
"$T2EXP" pipeline run "$P/long.yaml" > "$WORK/long.out" 2>&1 &
pipe=$!
for _ in $(seq 200); do [ -s "$P/slow.pid" ] && break; sleep 0.05; done
[ -s "$P/slow.pid" ] || fail "the slow stage did not start: $(cat "$WORK/long.out")"
child=$(cat "$P/slow.pid")
expect_exit 1 "$T2EXP" pipeline run "$P/long.yaml"
expect_in "$OUT" "pipeline long is already running"
kill -TERM "$pipe"
set +e
wait "$pipe"
rc=$?
set -e
[ "$rc" = 130 ] || fail "pipeline run ended with $rc after SIGTERM: $(cat "$WORK/long.out")"
for _ in $(seq 100); do kill -0 "$child" 2>/dev/null || break; sleep 0.05; done
kill -0 "$child" 2>/dev/null && fail "the stage's process outlived the stopped run"
run=$(sql "SELECT max(id) FROM pipeline_runs")
[ "$(sql "SELECT state FROM pipeline_runs WHERE id = $run")" = INTERRUPTED ] || fail "run not INTERRUPTED"
[ "$(st "$run" slow)" = INTERRUPTED: ] && [ "$(st "$run" next)" = CANCELED: ] ||
  fail "stage records after SIGTERM: $(sql "SELECT stage, state FROM stage_runs WHERE run_id = $run")"

# 5. SIGKILL of `pipeline run`: the stage dies with it (PR_SET_PDEATHSIG), the command's own
# child processes too (slow.pid is sh's background child); the next run records the killed one
# INTERRUPTED and runs the stage again.
rm -f "$P/slow.pid"
"$T2EXP" pipeline run "$P/long.yaml" > "$WORK/long.out" 2>&1 &
pipe=$!
for _ in $(seq 200); do [ -s "$P/slow.pid" ] && break; sleep 0.05; done
child=$(cat "$P/slow.pid")
killed=$(sql "SELECT max(id) FROM pipeline_runs")
kill -KILL "$pipe"
wait "$pipe" 2>/dev/null || true
for _ in $(seq 100); do kill -0 "$child" 2>/dev/null || break; sleep 0.05; done
kill -0 "$child" 2>/dev/null && fail "the stage's process outlived the SIGKILLed run"
[ "$(sql "SELECT state FROM pipeline_runs WHERE id = $killed")" = RUNNING ] || fail "the killed run recorded its end?"
touch "$P/fast"
expect_exit 0 "$T2EXP" pipeline run "$P/long.yaml"
expect_in "$OUT" "an earlier run of it was interrupted"
[ "$(sql "SELECT state FROM pipeline_runs WHERE id = $killed")" = INTERRUPTED ] || fail "the killed run is not INTERRUPTED"
[ "$(st "$killed" slow)" = INTERRUPTED: ] || fail "the killed run's stage: $(st "$killed" slow)"
[ -e "$P/next.ran" ] || fail "next did not run: $OUT"

# 5b. Ctrl-Z (SIGTSTP to the process group of `pipeline run`, started as a shell's job is): the
# stage, in a group of its own, stops too, and continuing the pipeline's group continues it. It ran
# on while the pipeline was stopped.
cat > "$P/tick.yaml" <<'Y'
name: tick
stages:
  tick: {run: [sh, -c, "for i in $(seq 300); do echo $i > tick.count; sleep 0.01; done"]}
Y
set -m; "$T2EXP" pipeline run "$P/tick.yaml" > "$WORK/tick.out" 2>&1 & pipe=$!; set +m
for _ in $(seq 200); do [ -s "$P/tick.count" ] && break; sleep 0.05; done
kill -TSTP -- "-$pipe"
sleep 0.5
a=$(cat "$P/tick.count"); sleep 0.5; b=$(cat "$P/tick.count")
[[ $(ps -o stat= -p "$pipe") == T* ]] || fail "pipeline run was not stopped by Ctrl-Z: $(ps -o stat= -p "$pipe")"
[ "$a" = "$b" ] || fail "the stage ran on while the pipeline was stopped (count $a, then $b)"
kill -CONT -- "-$pipe"
sleep 0.5
c=$(cat "$P/tick.count")
[ "$c" != "$b" ] || fail "the stage stayed stopped after the pipeline was continued (count $c)"
wait "$pipe" || fail "pipeline run failed after Ctrl-Z and fg: $(cat "$WORK/tick.out")"
expect_in "$(cat "$WORK/tick.out")" "run $(sql "SELECT max(id) FROM pipeline_runs") SUCCEEDED"

# 6. resources.slots: the command runs under mpirun -np 2.
if command -v mpirun >/dev/null; then
  cat > "$P/mpi.yaml" <<'Y'
name: mpi
stages:
  ranks:
    run: [sh, -c, "echo rank-$OMPI_COMM_WORLD_RANK-of-$OMPI_COMM_WORLD_SIZE"]
    resources: {slots: 2}
Y
  expect_exit 0 "$T2EXP" pipeline run "$P/mpi.yaml" --jobs 2
  log=$(sql "SELECT log_path FROM stage_runs s JOIN pipeline_runs p ON p.id = s.run_id WHERE p.name = 'mpi'")
  grep -q rank-0-of-2 "$log" && grep -q rank-1-of-2 "$log" || fail "mpirun stage log: $(cat "$log")"
else
  echo "note: no mpirun, the resources.slots stage is not tried"
fi
store_ok
echo ok
