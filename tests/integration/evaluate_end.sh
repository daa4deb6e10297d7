#!/usr/bin/env bash
# A trial's evaluate_end (trial ABI 2): metrics of the whole validation pass, from the reduced ones.
# whole_pass_trial.c reports a summed squared error and sample count per batch (batches of 3 over
# 10 samples, a short last one) and val_rmse = sqrt(sse / n) at the end, the searcher metric:
#  - every stored val_rmse is the RMSE computed here from the data, and val_mse its square;
#  - `t2exp evaluate` prints the same val_rmse;
#  - on two MPI ranks (each a shard of the pass) the values are the same;
#  - a metric one rank did not report in a pass still reaches every rank's evaluate_end;
#  - evaluate_end reporting a name evaluate_batch reported, its own twice, a NaN, or leaving out
#    the searcher metric fails that trial with the reason (but for the NaN not restarted: it would
#    fail again), and the experiment goes on;
#  - an object built for trial ABI 1 still loads, and its vtable is never read past version 1's end.
source "$(dirname "$0")/common.bash"
command -v "${CC:-cc}" >/dev/null || { echo "evaluate_end: skipped (no C compiler)"; exit 77; }
san=""
if grep -q "T2EXP_SANITIZE:BOOL=ON" "$T2EXP_BUILD/CMakeCache.txt"; then san="-fsanitize=address,undefined"; fi
for v in 2 1; do
  "${CC:-cc}" -std=c11 -Wall -Wextra -Werror $san -shared -fPIC -I "$T2EXP_SOURCE/framework/include" \
    $([ $v = 1 ] && echo -DWHOLE_PASS_ABI1) "$T2EXP_SOURCE/tests/integration/whole_pass_trial.c" -o "$WORK/wp$v.so" -lm
done

cat > "$WORK/wp.yaml" <<'Y'
name: whole_pass
hyperparameters: {global_batch_size: 3, w: {type: categorical, vals: [1.5, 2.5, 3]}}
searcher: {name: grid, metric: val_rmse, max_length: {batches: 4}}
min_validation_period: {batches: 2}
max_restarts: 2
Y
# The RMSE of y = w x over samples i = 0..9 with targets 2i + (i mod 3).
rmse() { awk -v w="$1" 'BEGIN { for (i = 0; i < 10; i++) { e = w * i - (2 * i + i % 3); s += e * e } printf "%.15g", sqrt(s / 10) }'; }
check_rmse() { # EXP: every validation of every trial is its w's RMSE, and val_mse its square
  sql "SELECT json_extract(t.hparams, '$.w'), m.name, m.value FROM metrics m JOIN trials t ON t.id = m.trial_id
       WHERE t.experiment_id = $1 AND m.kind = 'validation' AND m.name IN ('val_rmse', 'val_mse')" > "$WORK/vals"
  [ "$(grep -c '|val_rmse|' "$WORK/vals")" = 6 ] || fail "experiment $1: 6 val_rmse values expected: $(cat "$WORK/vals")"
  while IFS='|' read -r w name value; do
    want=$(rmse "$w")
    [ "$name" = val_mse ] && want=$(awk -v r="$want" 'BEGIN { printf "%.15g", r * r }')
    awk -v a="$value" -v b="$want" 'BEGIN { d = a - b; exit !(d < 1e-9 * b && d > -1e-9 * b) }' ||
      fail "experiment $1, w $w: $name $value, want $want"
  done < "$WORK/vals"
}
expect_exit 0 "$T2EXP" create "$WORK/wp.yaml" "$WORK/wp2.so" --quiet
check_rmse 1
best=$(sql "SELECT best_metric FROM experiments WHERE id = 1")
awk -v a="$best" -v b="$(rmse 2.5)" 'BEGIN { exit !(a - b < 1e-9 && b - a < 1e-9) }' || fail "best val_rmse $best, want $(rmse 2.5) (w 2.5)"
echo "evaluate_end: val_rmse of 3 trials as computed from the data, best $best"

# `t2exp evaluate` runs the pass and its evaluate_end too.
expect_exit 0 "$T2EXP" evaluate 1 "$WORK/wp2.so"
got=$(awk '$1 == "val_rmse" { print $2 }' <<<"$OUT")
awk -v a="$got" -v b="$(rmse 2.5)" 'BEGIN { exit !(a - b < 1e-5 && b - a < 1e-5) }' || fail "evaluate printed val_rmse '$got': $OUT"

if have_mpi; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's own allocations
  expect_exit 0 "$T2EXP" create "$WORK/wp.yaml" "$WORK/wp2.so" --quiet --config resources.slots_per_trial=2 \
    --config hyperparameters.global_batch_size=6
  check_rmse 2
  # A metric only rank 0 reports in a later pass (named by every rank in the first) counts as
  # reported on every rank: each rank's evaluate_end reads it (the counts are reduced too).
  expect_exit 0 "$T2EXP" create "$WORK/wp.yaml" "$WORK/wp2.so" --quiet --config resources.slots_per_trial=2 \
    --config hyperparameters.global_batch_size=6 --config hyperparameters.hits_rank0_after=2
  [ "$(sql "SELECT group_concat(m.batches || ':' || m.value) FROM metrics m JOIN trials t ON t.id = m.trial_id
            WHERE t.experiment_id = 3 AND m.name = 'val_hits' AND t.ordinal = 0")" = "2:10.0,4:5.0" ] || # rank 0 sees 5 of the 10 (3, then 2 of the last 4)
    fail "val_hits on two ranks: $(sql "SELECT m.batches, m.value FROM metrics m JOIN trials t ON t.id = m.trial_id
            WHERE t.experiment_id = 3 AND m.name = 'val_hits'") $("$T2EXP" trials 3)"
  echo "evaluate_end: the same on two ranks"
  next=4
else
  echo "evaluate_end: the two-rank part skipped (built without MPI)"
  next=2
fi

# evaluate_end's errors fail their trial with the reason; the other trials complete.
for bad in end_dup end_twice end_nan end_skip_after; do
  expect_exit 0 "$T2EXP" create "$WORK/wp.yaml" "$WORK/wp2.so" --quiet \
    --config "hyperparameters.$bad={type: categorical, vals: [0, 1]}"
  [ "$(sql "SELECT group_concat(state) FROM (SELECT state FROM trials WHERE experiment_id = $next
            ORDER BY json_extract(hparams, '$.$bad'), state)")" = "COMPLETED,COMPLETED,COMPLETED,ERRORED,ERRORED,ERRORED" ] ||
    fail "$bad: the 3 trials with it should error, the 3 without complete: $("$T2EXP" trials $next)"
  case $bad in
  end_dup) want="evaluate_end: t2_metric sse: evaluate_batch reported it; evaluate_end adds metrics of new names" ;;
  end_twice) want="evaluate_end: t2_metric val_rmse: evaluate_end reported it twice" ;;
  end_nan) want="evaluate_end: t2_metric: val_rmse is nan" ;;
  # val_rmse at batch 2, none at 4: missing, never read as the 0 of an empty entry
  *) want="validation did not report the searcher metric 'val_rmse' (reported: sse, count, val_mse)" ;;
  esac
  expect_in "$(sql "SELECT error FROM trials WHERE experiment_id = $next AND state = 'ERRORED' LIMIT 1")" "$want"
  # a mistake in the code fails the same way again: not restarted (a NaN is, as in evaluate_batch)
  [ $bad = end_nan ] || [ "$(sql "SELECT max(restarts) FROM trials WHERE experiment_id = $next")" = 0 ] ||
    fail "$bad: a deterministic failure was restarted"
  next=$((next + 1))
done

# The ABI 1 object: loads, validates by val_mse, and has no val_rmse (its evaluate_end is past
# version 1's vtable: never read).
expect_exit 0 "$T2EXP" create "$WORK/wp.yaml" "$WORK/wp1.so" --quiet --config searcher.metric=val_mse
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = $next AND state = 'COMPLETED'")" = 3 ] ||
  fail "the ABI 1 object's trials did not complete: $("$T2EXP" trials $next)"
[ "$(sql "SELECT count(*) FROM metrics m JOIN trials t ON t.id = m.trial_id WHERE t.experiment_id = $next AND m.name = 'val_rmse'")" = 0 ] ||
  fail "an ABI 1 object's evaluate_end was called"
store_ok
echo "evaluate_end: ok"
