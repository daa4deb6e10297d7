#!/usr/bin/env bash
# The real CLI on the quadratic trial: random and grid searches end to end, then the store's
# contents and every listing format.
source "$(dirname "$0")/common.bash"

expect_exit 0 "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" --config searcher.max_trials=12 --plain
expect_in "$OUT" "experiment 1 COMPLETED"
[ "$(sql 'SELECT count(*) FROM trials WHERE experiment_id=1')" = 12 ] || fail "12 trials expected"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=1 AND state='COMPLETED'")" = 12 ] || fail "all completed"
# One training and one validation row per trial (1 batch each), each exactly once.
[ "$(sql "SELECT count(*) FROM metrics m JOIN trials t ON t.id=m.trial_id WHERE t.experiment_id=1 AND kind='validation' AND name='loss'")" = 12 ] || fail "12 validation losses"
# The best metric recorded for the experiment is the minimum over its trials.
best=$(sql "SELECT best_metric = (SELECT min(best_validation) FROM trials WHERE experiment_id=1) FROM experiments WHERE id=1")
[ "$best" = 1 ] || fail "experiment best is not the smallest trial loss"
# Each trial's loss is the quadratic of its own hparams.
bad=$(sql "SELECT count(*) FROM trials WHERE experiment_id=1 AND abs(best_validation - ((json_extract(hparams,'\$.x')-1)*(json_extract(hparams,'\$.x')-1) + (json_extract(hparams,'\$.y')+2)*(json_extract(hparams,'\$.y')+2))) > 1e-9")
[ "$bad" = 0 ] || fail "$bad trials report a loss that is not f(x, y)"

# Same seed, same trials: a second run draws the same hparams in the same order.
expect_exit 0 "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" --config searcher.max_trials=12 --quiet
[ "$(sql "SELECT group_concat(hparams, '|') FROM (SELECT hparams FROM trials WHERE experiment_id=1 ORDER BY ordinal)")" = \
  "$(sql "SELECT group_concat(hparams, '|') FROM (SELECT hparams FROM trials WHERE experiment_id=2 ORDER BY ordinal)")" ] \
  || fail "same seed gave different hparams"

expect_exit 0 "$T2EXP" create "$EXAMPLES/quadratic_grid.yaml" "$TRIALS/quadratic.so" --quiet
[ "$(sql 'SELECT count(*) FROM trials WHERE experiment_id=3')" = 25 ] || fail "grid of 5x5 expected"
# The grid's best point is (0, -2.5): loss (0-1)^2 + (-2.5+2)^2 = 1.25.
[ "$(sql 'SELECT round(best_metric, 9) FROM experiments WHERE id=3')" = 1.25 ] || fail "grid best should be 1.25"

# Determinism: random search gives the same trials, hparams and metrics whatever
# max_concurrent_trials is; ASHA with max_concurrent_trials 1 repeats exactly.
outcome() { sql "SELECT group_concat(t.ordinal || ':' || t.hparams || ':' || t.batches_trained || ':' || t.best_validation, '|')
                 FROM (SELECT * FROM trials WHERE experiment_id=$1 ORDER BY ordinal) t"; }
expect_exit 0 "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" --quiet \
  --config searcher.max_trials=12 --config searcher.max_concurrent_trials=1
[ "$(outcome 1)" = "$(outcome 4)" ] || fail "random search differs between 1 and 2 concurrent trials"
cat > "$WORK/asha.yaml" <<Y
name: asha_quadratic
hyperparameters: {global_batch_size: 1, x: {type: double, minval: -5, maxval: 5}, y: {type: double, minval: -5, maxval: 5}}
searcher: {name: adaptive_asha, metric: loss, max_length: {batches: 64}, max_trials: 16, max_rungs: 3, divisor: 4,
           max_concurrent_trials: 1}
reproducibility: {experiment_seed: 3}
Y
expect_exit 0 "$T2EXP" create "$WORK/asha.yaml" "$TRIALS/quadratic.so" --quiet
expect_exit 0 "$T2EXP" create "$WORK/asha.yaml" "$TRIALS/quadratic.so" --quiet
[ "$(outcome 5)" = "$(outcome 6)" ] || fail "ASHA with one concurrent trial did not repeat exactly"
[ "$(sql "SELECT count(DISTINCT batches_trained) FROM trials WHERE experiment_id=5")" = 3 ] || fail "three rung lengths expected"

expect_exit 0 "$T2EXP" list
expect_in "$OUT" "quadratic_grid"
expect_exit 0 "$T2EXP" list --json
[ "$(json 'json_array_length(j)')" = 6 ] || fail "list --json: 6 experiments"
expect_exit 0 "$T2EXP" list --csv
[ "$(wc -l <<<"$OUT")" = 7 ] || fail "list --csv: header + 6 rows"
expect_exit 0 "$T2EXP" describe 3 --json
[ "$(json "json_array_length(j, '\$.trials')")" = 25 ] || fail "describe --json: 25 trials"
[ "$(json "round(json_extract(j, '\$.trials[0].best_validation'), 9)")" = 1.25 ] || fail "describe --json ranks the best first"
# best_trial is the trial's id (as `t2exp logs ID` takes it and each "started" line gives it), not
# its position in the experiment (create's lines name a trial EXP.N): in experiment 3 the two differ.
[ "$(json "json_extract(j, '\$.experiment.best_trial')")" = "$(json "json_extract(j, '\$.trials[0].id')")" ] \
  || fail "describe: best_trial is not the best trial's id"
[ "$(json "json_extract(j, '\$.trials[0].id')")" != "$(json "json_extract(j, '\$.trials[0].trial')")" ] \
  || fail "experiment 3's best trial should have an id unlike its position"
expect_exit 0 "$T2EXP" trials 1 --csv
[ "$(wc -l <<<"$OUT")" = 13 ] || fail "trials --csv"
expect_exit 0 "$T2EXP" metrics 1.0 --json
expect_in "$OUT" '"name":"loss"'
# Exported values are the stored doubles: each reads back to exactly the store's value (SQLite's
# own text has 15 significant digits; 586 of 10,000 validation values read back, probe_J).
cat > "$WORK/same.py" <<'PY'
import csv, json, sqlite3, sys
fmt, db = sys.argv[1], sqlite3.connect(sys.argv[2])
rows = json.load(sys.stdin) if fmt == "json" else list(csv.DictReader(sys.stdin))
stored = {(k, int(b), n): v for k, b, n, v in db.execute("SELECT kind, batches, name, value FROM metrics WHERE trial_id = 1")}
seen = [r for r in rows if r["value"] not in (None, "") and (r["kind"], int(r["batches"]), r["name"]) in stored]
bad = [r for r in seen if stored[(r["kind"], int(r["batches"]), r["name"])] != float(r["value"])]
print(f"{fmt}: {len(seen) - len(bad)} of {len(seen)} metric values are the stored doubles (t2exp.* timings apart)")
sys.exit(1 if bad or not seen else 0)
PY
python3 "$WORK/same.py" json "$T2EXP_HOME/t2exp.db" <<<"$OUT" || fail "metrics --json does not give the stored doubles"
expect_exit 0 "$T2EXP" metrics 1.0 --csv
python3 "$WORK/same.py" csv "$T2EXP_HOME/t2exp.db" <<<"$OUT" || fail "metrics --csv does not give the stored doubles"
expect_exit 0 "$T2EXP" logs 1.0
expect_in "$OUT" "batches 1:"
expect_exit 0 "$T2EXP" preview "$EXAMPLES/quadratic_grid.yaml" --json
expect_exit 2 "$T2EXP" describe 99
expect_in "$OUT" "no experiment 99"
expect_exit 2 "$T2EXP" frobnicate
expect_exit 0 "$T2EXP" --version
expect_in "$OUT" "t2exp 0."
expect_exit 0 "$T2EXP" create --help
store_ok
echo "cli_quadratic: ok"
