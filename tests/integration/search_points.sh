#!/usr/bin/env bash
# searcher.points_to_evaluate through the real CLI on the quadratic trial (loss (x-1)^2 + (y+2)^2,
# minimum 0 at (1, -2)): a random search tries the given points first (a partial point draws the
# rest), so the known optimum given as a point is its best trial; tpe tries its points before and
# past its startup trials; a point outside the space stops `create` with its place in the file and
# runs nothing.
source "$(dirname "$0")/common.bash"
command -v sqlite3 >/dev/null || { echo "search_points: skipped (no sqlite3)"; exit 77; }

Q="$EXAMPLES/quadratic_random.yaml"
hp() { sql "SELECT json_extract(hparams, '\$.$3') FROM trials WHERE experiment_id = $1 AND ordinal = $2"; }

expect_exit 0 "$T2EXP" create "$Q" "$TRIALS/quadratic.so" --config searcher.max_trials=6 \
  --config 'searcher.points_to_evaluate=[{x: 3.5}, {x: 1, y: -2}]' --plain
expect_in "$OUT" "experiment 1 COMPLETED"
[ "$(hp 1 0 x)" = 3.5 ] || fail "trial 1.0 should have x 3.5, has $(hp 1 0 x)"
[ "$(hp 1 1 x)" = 1.0 ] && [ "$(hp 1 1 y)" = -2.0 ] || fail "trial 1.1 should be the point (1, -2): $(hp 1 1 x), $(hp 1 1 y)"
# The partial point's y is the draw trial 0 has without points (the same seed).
expect_exit 0 "$T2EXP" create "$Q" "$TRIALS/quadratic.so" --config searcher.max_trials=6 --quiet
[ "$(hp 1 0 y)" = "$(hp 2 0 y)" ] || fail "the partial point's y ($(hp 1 0 y)) is not the plain search's draw ($(hp 2 0 y))"
[ "$(sql "SELECT group_concat(hparams, '|') FROM trials WHERE experiment_id = 1 AND ordinal >= 2")" = \
  "$(sql "SELECT group_concat(hparams, '|') FROM trials WHERE experiment_id = 2 AND ordinal >= 2")" ] ||
  fail "the trials after the points differ from the plain search's"
[ "$(sql "SELECT ordinal || ':' || best_validation FROM trials WHERE experiment_id = 1 ORDER BY best_validation LIMIT 1")" = "1:0.0" ] ||
  fail "the optimum given as a point is not the best trial: $("$T2EXP" trials 1)"

# tpe: three startup trials, four points: the fourth point comes where the model would propose.
expect_exit 0 "$T2EXP" create "$Q" "$TRIALS/quadratic.so" --config searcher.name=tpe --config searcher.max_trials=6 \
  --config searcher.n_startup_trials=3 --config searcher.max_concurrent_trials=1 \
  --config 'searcher.points_to_evaluate=[{x: 0}, {x: 1}, {x: 2}, {x: -4.5, y: 4.5}]' --quiet
for k in 0 1 2; do [ "$(hp 3 $k x)" = "$k.0" ] || fail "tpe trial 3.$k should have x $k, has $(hp 3 $k x)"; done
[ "$(hp 3 3 x)" = -4.5 ] && [ "$(hp 3 3 y)" = 4.5 ] || fail "tpe trial 3.3 should be the fourth point"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = 3 AND state = 'COMPLETED'")" = 6 ] || fail "tpe did not complete 6 trials"

# Outside the space: exit 2, the place and the range, nothing made.
cat > "$WORK/bad.yaml" <<Y
name: bad
hyperparameters: {global_batch_size: 1, x: {type: double, minval: -5, maxval: 5}}
searcher:
  name: random
  metric: loss
  max_length: {batches: 1}
  max_trials: 2
  points_to_evaluate:
    - {x: 7}
Y
expect_exit 2 "$T2EXP" create "$WORK/bad.yaml" "$TRIALS/quadratic.so"
expect_in "$OUT" "bad.yaml:9:11: searcher.points_to_evaluate.0.x: expected a number in [-5, 5], got 7"
[ "$(sql "SELECT count(*) FROM experiments")" = 3 ] || fail "a config with a bad point made an experiment"
echo "search_points: ok"
