#!/usr/bin/env bash
# A controller killed (SIGKILL) mid-search loses its open batch, and with it the log segments of
# the runs its workers started since the last commit. Each worker also records where each of its
# runs starts (worker-N.log.runs, log_runs.c), so the last segment the store kept in each worker's
# log still ends where the next run began: `t2exp logs` of that trial shows its own run (one BLAS
# line), never the lost runs' output after it (before the record: hundreds of lines). The
# experiment then resumes to completion, and those trials (rerun if their end was lost too) and
# the new last ones show as many runs as the store recorded for them. `t2exp logs 1 --lost` shows
# the lost runs themselves (lost_runs.c), each under its own line, before and after the resume.
source "$(dirname "$0")/common.bash"
cat > "$WORK/search.yaml" <<'Y'
name: worker_log_kill
hyperparameters: {global_batch_size: 1, x: {type: double, minval: -10, maxval: 10}, y: -2}
searcher: {name: random, metric: loss, max_length: {batches: 1}, max_trials: 6000}
resources: {max_slots: 2}
reproducibility: {experiment_seed: 5}
max_restarts: 0
Y
# lost PATH — runs the worker recorded in PATH (16-byte records: trial id, start) that wrote
# something (a run killed with the controller between its record and its first line wrote
# nothing: nothing to show) and whose start the store has no segment of PATH for.
lost() {
  sql "SELECT start FROM trial_log_segments WHERE path = '$1'" > "$WORK/stored"
  od -An -v -t d8 -w16 "$1.runs" | awk -v size="$(stat -c %s "$1")" -v stored="$WORK/stored" '
    BEGIN { while ((getline s < stored) > 0) have[s] = 1 }
    { start[NR] = $2 }
    END { for (i = 1; i <= NR; i++) { end = i < NR ? start[i + 1] : size
            if (start[i] < end && !(start[i] in have)) n++ }
          print n + 0 }'
}
# last_trials — the trial of the last segment the store kept in each worker's log.
last_trials() { sql "SELECT trial_id FROM trial_log_segments WHERE id IN (SELECT max(id) FROM trial_log_segments GROUP BY path)"; }
# runs_each WHEN TRIALS... — each trial's logs show as many runs (BLAS lines, each run's first) as
# the store has segments for it: its own runs, none of another trial's.
runs_each() {
  local when=$1 t n want
  shift
  for t in "$@"; do
    n=$("$T2EXP" logs "$t" | grep -c '^BLAS: ' || true)
    want=$(sql "SELECT count(*) FROM trial_log_segments WHERE trial_id = $t")
    [ "$n" = "$want" ] || fail "$when: trial $t's logs show $n runs' BLAS lines, wanted $want:
$("$T2EXP" logs "$t" | head -n 8)"
  done
}

for attempt in 1 2 3; do
  rm -rf "$T2EXP_HOME"
  "$T2EXP" create "$WORK/search.yaml" "$TRIALS/quadratic.so" --quiet > "$WORK/create.out" 2>&1 &
  pid=$!
  wait_for "SELECT count(*) >= 300 FROM trial_log_segments" 600
  sleep 0.05
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  total=0
  for p in "$T2EXP_HOME"/experiments/1/worker-*.log; do
    [ -f "$p.runs" ] || fail "no run record beside $p"
    total=$((total + $(lost "$p")))
  done
  [ "$total" -gt 0 ] && break
  # The kill came right after a commit, before any worker started another run: nothing to show.
  [ "$attempt" -lt 3 ] || fail "three kills lost no run's segment (the case this test needs)"
done
echo "killed with $total runs' segments uncommitted"
before=$(last_trials)
runs_each "after the kill" $before
# lost_shown WHEN — `logs 1 --lost` lists the $total lost runs, each with its own output (a run's
# first line is its BLAS line).
lost_shown() {
  local out heads blas
  out=$("$T2EXP" logs 1 --lost) || fail "$1: logs 1 --lost failed"
  heads=$(grep -c '^=== lost run of trial id [0-9]* .*worker-[0-9]*\.log bytes [0-9]*-[0-9]* ===$' <<<"$out" || true)
  blas=$(grep -c '^BLAS: ' <<<"$out" || true)
  [ "$heads" = "$total" ] && [ "$blas" = "$total" ] ||
    fail "$1: logs 1 --lost shows $heads runs and $blas BLAS lines, wanted $total:
$(head -n 12 <<<"$out")"
}
lost_shown "after the kill"

expect_exit 0 "$T2EXP" resume 1 --quiet
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = 1 AND state = 'COMPLETED'")" = 6000 ] ||
  fail "the resumed experiment did not complete its 6000 trials"
runs_each "after the resume" $before $(last_trials)
lost_shown "after the resume"
store_ok
echo "worker_log_kill: ok"
