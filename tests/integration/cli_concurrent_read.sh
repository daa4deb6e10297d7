#!/usr/bin/env bash
# `t2exp list` and `t2exp describe` work while an experiment is running: the store is WAL-mode
# SQLite with one writer (the controller) and any number of readers.
source "$(dirname "$0")/common.bash"
cat > "$WORK/slow.yaml" <<Y
name: slow
hyperparameters: {global_batch_size: 1, x: 0.5, y: -1, sleep_ms: 50}
searcher: {name: single, metric: loss, max_length: {batches: 150}}
scheduling_unit: 10
Y
"$T2EXP" create "$WORK/slow.yaml" "$TRIALS/quadratic.so" --quiet > "$WORK/create.log" 2>&1 &
pid=$!
# Wait until the trial has reported some training metrics, then read while it keeps writing.
for _ in $(seq 100); do
  n=$(sqlite3 "$T2EXP_HOME/t2exp.db" "SELECT count(*) FROM metrics" 2>/dev/null || echo 0)
  [ "${n:-0}" -gt 0 ] && break
  sleep 0.1
done
[ "${n:-0}" -gt 0 ] || fail "no metrics appeared while the experiment ran"
for _ in 1 2 3; do
  expect_exit 0 "$T2EXP" list
  expect_in "$OUT" "ACTIVE"
  expect_exit 0 "$T2EXP" describe 1
  expect_in "$OUT" "RUNNING"
  sleep 0.2
done
kill -0 "$pid" 2>/dev/null || fail "the experiment finished before the reads were done; make it slower"
wait "$pid" || fail "the experiment failed: $(cat "$WORK/create.log")"
expect_exit 0 "$T2EXP" list
expect_in "$OUT" "COMPLETED"
[ "$(sql "SELECT count(*) FROM metrics WHERE kind='training' AND name='loss'")" = 15 ] || fail "15 training reports expected"
store_ok
echo "cli_concurrent_read: ok"
