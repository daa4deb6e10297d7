#!/usr/bin/env bash
# trials/testfn.c (the functions of `bench/run search`, SEARCH_FNS=extra's too) at their known
# minima: one trial of each bench/configs/search_FN.yaml with searcher single and the minimiser as
# const hparams reports the function's minimum as its validation `value`.
source "$(dirname "$0")/common.bash"

n=0
# at FN WANT TOL HPARAM=VALUE... — one trial at that point; its value is WANT within TOL.
at() {
  local fn=$1 want=$2 tol=$3; shift 3
  local args=() kv
  for kv in "$@"; do args+=(--config "hyperparameters.$kv"); done
  expect_exit 0 "$T2EXP" create "$T2EXP_SOURCE/bench/configs/search_$fn.yaml" "$TRIALS/testfn.so" --quiet \
    --config searcher.name=single "${args[@]}"
  n=$((n + 1))
  local got
  got=$(sql "SELECT printf('%.17g', best_validation) FROM trials WHERE experiment_id=$n AND state='COMPLETED'")
  awk -v g="$got" -v w="$want" -v t="$tol" 'BEGIN { d = g - w; exit !(g != "" && d <= t && d >= -t) }' ||
    fail "$fn at $*: value '$got', wanted $want ± $tol"
  echo "$fn at $*: $got"
}

pi=3.14159265358979323846
for p in "-$pi 12.275" "$pi 2.275" "9.42477796076938 2.475"; do
  set -- $p
  at branin 0.39788735772973816 1e-12 x0="$1" x1="$2"
done
at hartmann6 -3.3223680114155147 1e-9 x0=0.20168952 x1=0.15001069 x2=0.47687398 x3=0.27533243 \
  x4=0.31165162 x5=0.65730054
st=()
for i in 0 1 2 3 4 5 6 7 8 9; do st+=("x$i=-2.903534018185960"); done
at styblinski_tang10 -391.66165703771412 1e-9 "${st[@]}"
at mixed 0 1e-12 c=a lr=0.001 x=1
at mixed 2 1e-12 c=c lr=0.001 x=1
at mixed 4.75 1e-12 c=b lr=0.1 x=0.5
# SEARCH_FNS=extra's nine (minimisers from the literature: Surjanovic & Bingham's library).
xs() { local v=$1 n=$2 i; for ((i = 0; i < n; i++)); do echo "x$i=$v"; done; }
# shellcheck disable=SC2046
at rosenbrock4 0 1e-12 $(xs 1 4)
# shellcheck disable=SC2046
at ackley5 0 1e-12 $(xs 0 5)
# shellcheck disable=SC2046
at levy5 0 1e-12 $(xs 1 5)
# shellcheck disable=SC2046
at rastrigin5 0 1e-12 $(xs 0 5)
at six_hump_camel -1.0316284534898774 1e-8 x0=0.0898420131003 x1=-0.7126564030207
at six_hump_camel -1.0316284534898774 1e-8 x0=-0.0898420131003 x1=0.7126564030207
at goldstein_price 3 1e-9 x0=0 x1=-1
at hartmann3 -3.8627797869493365 1e-6 x0=0.114614 x1=0.555649 x2=0.852547
at michalewicz5 -4.687658179 1e-6 x0=2.202905520 x1=1.570796327 x2=1.284991560 x3=1.923058470 x4=1.720469994
at int_mix 0 1e-12 a=3 b=-7 lr=0.01 k=relu
at int_mix 2.8 1e-12 a=5 b=-9 lr=0.1 k=tanh
store_ok
