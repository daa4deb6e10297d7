#!/usr/bin/env bash
# `t2exp importance EXP`: fANOVA over a random search of the quadratic trial, whose answer is known.
# loss = (x - 1)^2 + (y + 2)^2 + lr is additive, so each hyperparameter's share of the variance is
# its own term's variance over its range: x ~ U[-10, 10] gives Var (x - 1)^2 = 1022.2, y ~ U[-5, 5]
# gives Var (y + 2)^2 = 188.9, so x 0.844 and y 0.156; lr (log-uniform, at most 0.1) and c (which
# the trial ignores) next to nothing. Then the formats, and what it refuses.
source "$(dirname "$0")/common.bash"
cat > "$WORK/q.yaml" <<'Y'
name: importance
hyperparameters:
  global_batch_size: 1
  x: {type: double, minval: -10, maxval: 10}
  y: {type: double, minval: -5, maxval: 5}
  lr: {type: log, minval: -5, maxval: -1, base: 10}
  c: {type: categorical, vals: [a, b, c]}
  fixed: 3
searcher: {name: random, metric: loss, max_trials: 600, max_length: {batches: 1}}
reproducibility: {experiment_seed: 4}
Y
expect_exit 0 "$T2EXP" create "$WORK/q.yaml" "$TRIALS/quadratic.so" --quiet
expect_exit 0 "$T2EXP" importance 1
expect_in "$OUT" "fit to 600 completed trials' best loss"
[ "$(sed -n 2p <<<"$OUT" | awk '{print $1}')" = x ] || fail "x is not ranked first: $OUT"
imp() { awk -v n="$1" '$1 == n { print $2 }' <<<"$OUT"; }
awk -v v="$(imp x)" 'BEGIN { exit !(v > 0.79 && v < 0.89) }' || fail "x's importance $(imp x), wanted 0.844 +- 0.05"
awk -v v="$(imp y)" 'BEGIN { exit !(v > 0.11 && v < 0.21) }' || fail "y's importance $(imp y), wanted 0.156 +- 0.05"
awk -v a="$(imp lr)" -v b="$(imp c)" 'BEGIN { exit !(a < 0.01 && b < 0.01) }' || fail "lr or c matter: $OUT"
! grep -q "^fixed" <<<"$OUT" || fail "a const hyperparameter was ranked: $OUT"

# The same numbers, as JSON and CSV (and the same again: the forest is seeded by the experiment).
expect_exit 0 "$T2EXP" importance 1 --json
[ "$(json "json_extract(j, '$.trials')")" = 600 ] || fail "json trials: $OUT"
[ "$(json "json_extract(j, '$.importance[0].hyperparameter')")" = x ] || fail "json order: $OUT"
sum=$(json "(SELECT sum(json_extract(value, '$.importance')) FROM json_each(json_extract(j, '$.importance')))")
awk -v s="$sum" 'BEGIN { exit !(s > 0.999999 && s < 1.000001) }' || fail "the importances sum to $sum"
first=$(json "json_extract(j, '$.importance[0].importance')")
expect_exit 0 "$T2EXP" importance 1 --csv
[ "$(head -n 1 <<<"$OUT")" = "hyperparameter,importance" ] || fail "csv header: $OUT"
[ "$(wc -l <<<"$OUT")" = 5 ] || fail "csv rows: $OUT"
# Each value the JSON's text exactly (the shortest that reads back; CSV had 6 decimals, probe_M).
csv=$OUT
expect_exit 0 "$T2EXP" importance 1 --json
for h in x y lr c; do
  want=$(grep -o "\"hyperparameter\":\"$h\",\"importance\":[^}]*" <<<"$OUT" | sed 's/.*"importance"://')
  [ -n "$want" ] && [ "$(awk -F, -v h="$h" '$1 == h { print $2 }' <<<"$csv")" = "$want" ] ||
    fail "$h: csv $(grep "^$h," <<<"$csv"), json $want"
  [[ $want == *[.e]* ]] || fail "$h: json $want has no '.0'"
done
expect_exit 0 "$T2EXP" importance 1 --json
[ "$(json "json_extract(j, '$.importance[0].importance')")" = "$first" ] || fail "a second run differs"

# More than 10,000 trials: a uniform sample of 10,000 of them (a reservoir), said so. Not under the
# sanitizers, where the forest alone takes half a minute.
if ! grep -q "T2EXP_SANITIZE:BOOL=ON" "$T2EXP_BUILD/CMakeCache.txt"; then
  expect_exit 0 "$T2EXP" create "$WORK/q.yaml" "$TRIALS/quadratic.so" --quiet --config searcher.max_trials=12000
  expect_exit 0 "$T2EXP" importance 2
  expect_in "$OUT" "fit to 10000 of 12000 completed trials, drawn at random"
  awk -v v="$(imp x)" 'BEGIN { exit !(v > 0.79 && v < 0.89) }' || fail "x's importance over the sample $(imp x)"
  expect_exit 0 "$T2EXP" delete 2 --yes
fi

# Names as the formats need them: a comma and a quote quoted in CSV, an escape sequence (a config
# key may hold one) never reaching the terminal from the table.
printf 'hyperparameters:\n  global_batch_size: 1\n  y: -2\n  x: {type: double, minval: -10, maxval: 10}\n  "a,b\\"c": {type: double, minval: 0, maxval: 1}\n  "esc\\e[31mred": {type: int, minval: 0, maxval: 3}\nsearcher: {name: random, metric: loss, max_trials: 40, max_length: {batches: 1}}\n' > "$WORK/odd.yaml"
expect_exit 0 "$T2EXP" create "$WORK/odd.yaml" "$TRIALS/quadratic.so" --quiet
e=$(sql "SELECT max(id) FROM experiments")
expect_exit 0 "$T2EXP" importance "$e"
! grep -q $'\e' <<<"$OUT" || fail "an escape character reached the table: $(cat -v <<<"$OUT")"
expect_in "$OUT" "esc [31mred"
expect_exit 0 "$T2EXP" importance "$e" --csv
expect_in "$OUT" '"a,b""c",'
# The searcher's metric is the config's text too: describe's ranking heading printed it raw (probe_J).
printf 'hyperparameters: {global_batch_size: 1, x: 1, y: -2}\nsearcher: {name: single, metric: "esc\\e[31mred", max_length: {batches: 1}}\n' > "$WORK/esc.yaml"
expect_exit 1 "$T2EXP" create "$WORK/esc.yaml" "$TRIALS/quadratic.so" --quiet # (quadratic reports no such metric)
expect_exit 0 "$T2EXP" describe "$(sql "SELECT max(id) FROM experiments")"
! grep -q $'\e' <<<"$OUT" || fail "an escape character reached describe: $(cat -v <<<"$OUT" | grep ranked)"
expect_in "$OUT" "trials ranked by esc [31mred"

# Refused: an unknown experiment (exit 2), one with nothing searched, one with one trial.
expect_exit 2 "$T2EXP" importance 9
cat > "$WORK/const.yaml" <<'Y'
hyperparameters: {global_batch_size: 1, x: 2, y: -2}
searcher: {name: single, metric: loss, max_length: {batches: 1}}
Y
expect_exit 0 "$T2EXP" create "$WORK/const.yaml" "$TRIALS/quadratic.so" --quiet
e=$(sql "SELECT max(id) FROM experiments")
expect_exit 1 "$T2EXP" importance "$e"
expect_in "$OUT" "experiment $e searched no hyperparameter (all are const)"
expect_exit 0 "$T2EXP" create "$WORK/q.yaml" "$TRIALS/quadratic.so" --quiet --config searcher.max_trials=1
e=$(sql "SELECT max(id) FROM experiments")
expect_exit 1 "$T2EXP" importance "$e"
expect_in "$OUT" "experiment $e has 1 completed trial(s) with a validation of loss; importance needs 2"
store_ok
echo "importance: ok"
