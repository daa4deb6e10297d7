#!/usr/bin/env bash
# Experiments side by side on one home: three controllers write the same store at once (one long
# experiment, two short ones started while it runs). Each must finish (no "database is locked"),
# they must really overlap in time, and the store must hold every row of each.
source "$(dirname "$0")/common.bash"

run() { "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" --config "searcher.max_trials=$1" --quiet "${@:2}"; }
# The long one forks a process per trial: in workers (the default) its trials took about as long
# as the short ones' 75 and ended first. 300 of them took 0.32 s here (schema 12's faster inserts),
# as short as the short ones' start-up, and the check below failed once: 1000.
run 1000 --config resources.isolation=process_per_trial > "$WORK/a.log" 2>&1 & a=$!
# The second and third start once the first is writing (its experiment row exists).
for _ in $(seq 100); do [ -f "$T2EXP_HOME/t2exp.db" ] && [ "$(sql 'SELECT count(*) FROM trials' 2>/dev/null || echo 0)" -gt 5 ] && break; sleep 0.1; done
run 75 > "$WORK/b.log" 2>&1 & b=$!
run 75 > "$WORK/c.log" 2>&1 & c=$!
for p in $a $b $c; do wait "$p" || fail "a controller failed: $(cat "$WORK"/[abc].log)"; done
if grep -l "locked" "$WORK"/[abc].log; then fail "database is locked: $(cat "$WORK"/[abc].log)"; fi
store_ok
[ "$(sql "SELECT group_concat(num_trials || ':' || state, ' ') FROM (SELECT * FROM experiments ORDER BY id)")" = \
  "1000:COMPLETED 75:COMPLETED 75:COMPLETED" ] || fail "experiments: $(sql 'SELECT id, num_trials, state FROM experiments')"
[ "$(sql "SELECT count(*) FROM trials WHERE state = 'COMPLETED'")" = 1150 ] || fail "not every trial completed"
[ "$(sql "SELECT count(*) FROM metrics WHERE kind = 'validation'")" = 1150 ] || fail "validation rows missing"
# Side by side, not one after the other: the short ones started and ended inside the long one.
[ "$(sql 'SELECT count(*) FROM experiments e, experiments l WHERE l.id = 1 AND e.id > 1 AND e.started_at < l.ended_at AND e.ended_at < l.ended_at')" = 2 ] \
  || fail "the experiments did not overlap: $(sql 'SELECT id, started_at, ended_at FROM experiments')"
echo "ok: $(sql "SELECT group_concat(id || ' ' || round(ended_at - started_at, 1) || 's', ', ') FROM experiments")"
