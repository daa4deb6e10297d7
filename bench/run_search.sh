#!/usr/bin/env bash
# Search quality: our TPE against Optuna's TPESampler (its defaults, seed = the seed) on standard
# test functions (trials/testfn.c: branin, hartmann6, styblinski_tang10, mixed — a categorical, a
# log-scaled and a double hparam), with random search as the floor. For each function and seeds
# 1..SEEDS (default 10), `t2exp create` runs TRIALS (default 200) trials one at a time with searcher
# tpe and with random (experiment seed = the seed); bench/search_optuna.py runs Optuna on the same
# space in /usr/bin/python3. Regret = best value - the function's minimum (floor 1e-12). Prints the
# median best after 50 and after TRIALS trials per function and searcher; ratio = geometric mean
# over the functions of (Optuna's median regret at TRIALS / ours); target >= 1.0.
# tpe_wins: on how many seeds our best at TRIALS is at least Optuna's. SEARCH_RESULTS=DIR keeps the
# per-seed results (DIR/FN.{tpe,optuna,random}: `SEED BEST_AFTER_50 BEST_AFTER_TRIALS`).
# JOBS (default nproc) runs are done side by side, each experiment in its own T2EXP_HOME.
set -euo pipefail
seeds="${SEEDS:-10}" n="${TRIALS:-200}" jobs="${JOBS:-$(nproc)}"
# SEARCH_FNS: the functions (default the four above; "extra": nine others, for a searcher checked
# beyond the functions it was tuned on: rosenbrock4 ackley5 levy5 rastrigin5 six_hump_camel
# goldstein_price hartmann3 michalewicz5 int_mix; or any list of trials/testfn.c's names).
case "${SEARCH_FNS:-}" in
  "") fns=(branin hartmann6 styblinski_tang10 mixed) ;;
  extra) fns=(rosenbrock4 ackley5 levy5 rastrigin5 six_hump_camel goldstein_price hartmann3 michalewicz5 int_mix) ;;
  *) read -r -a fns <<<"$SEARCH_FNS" ;;
esac
[ "$n" -ge 50 ] || { echo "TRIALS must be at least 50" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export TMPDIR="$tmp"
mkdir -p "$tmp/res"
t0=$(date +%s.%N)

# One experiment: FN SEARCHER SEED -> res/FN.SEARCHER.SEED holding `SEED BEST_AFTER_50 BEST_AFTER_N`.
one() {
  local fn=$1 s=$2 seed=$3 home="$tmp/home.$1.$2.$3"
  if ! T2EXP_HOME="$home" build/t2exp create "bench/configs/search_$fn.yaml" build/trials/testfn.so --quiet \
      --config searcher.name="$s" --config searcher.max_trials="$n" \
      --config reproducibility.experiment_seed="$seed" > "$home.log" 2>&1; then
    echo "search: $fn $s seed $seed failed: $(tail -n 5 "$home.log")" >&2; return 1
  fi
  sqlite3 "$home/t2exp.db" "SELECT best_validation FROM trials WHERE state = 'COMPLETED' ORDER BY ordinal" |
    awk -v seed="$seed" -v n="$n" -v what="$fn $s seed $seed" '
      { v = $1 + 0; if (NR == 1 || v < best) best = v; if (NR == 50) b50 = best }
      END { if (NR != n) { printf "search: %s: %d completed trials, not %d\n", what, NR, n > "/dev/stderr"; exit 1 }
            printf "%d %.17g %.17g\n", seed, b50, best }' > "$tmp/res/$fn.$s.$seed"
  rm -rf "$home" "$home.log"
}
export -f one; export tmp n

# Optuna, one process per function, beside our runs.
pids=()
for fn in "${fns[@]}"; do
  /usr/bin/python3 bench/search_optuna.py --fn "$fn" --seeds "$seeds" --trials "$n" > "$tmp/res/$fn.optuna" &
  pids+=($!)
done
for fn in "${fns[@]}"; do for seed in $(seq "$seeds"); do for s in tpe random; do echo "$fn $s $seed"; done; done; done |
  xargs -P "$jobs" -L 1 bash -c 'one "$@"' _
for p in "${pids[@]}"; do wait "$p"; done
for fn in "${fns[@]}"; do cat "$tmp/res/$fn".tpe.* > "$tmp/res/$fn.tpe"; cat "$tmp/res/$fn".random.* > "$tmp/res/$fn.random"; done
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')

# Minimum of each function (trials/testfn.c's header).
declare -A opt=([branin]=0.39788735772973816 [hartmann6]=-3.3223680114155147
                [styblinski_tang10]=-391.66165703771412 [mixed]=0 [rosenbrock4]=0 [ackley5]=0 [levy5]=0
                [rastrigin5]=0 [six_hump_camel]=-1.0316284534898774 [goldstein_price]=3
                [hartmann3]=-3.8627797869493365 [michalewicz5]=-4.687658179 [int_mix]=0)
med() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
line="" logsum=0
for fn in "${fns[@]}"; do
  out="$fn:"
  for s in tpe optuna random; do
    f="$tmp/res/$fn.$s"
    [ "$(wc -l < "$f")" -eq "$seeds" ] || { echo "search: $fn $s: $(wc -l < "$f") seeds, not $seeds" >&2; exit 1; }
    b50=$(cut -d' ' -f2 "$f" | med) bn=$(cut -d' ' -f3 "$f" | med)
    r=$(cut -d' ' -f3 "$f" | awk -v o="${opt[$fn]}" '{ r = $1 - o; print (r < 1e-12) ? 1e-12 : r }' | med)
    printf -v "r_$s" '%s' "$r"
    out+=$(printf ' %s best50=%.6g best%d=%.6g regret%d=%.3g' "$s" "$b50" "$n" "$bn" "$n" "$r")
  done
  # Paired by seed: on how many seeds our best at TRIALS is at least as good as Optuna's.
  wins=$(join <(sort -k1,1 "$tmp/res/$fn.tpe") <(sort -k1,1 "$tmp/res/$fn.optuna") | awk '$3 <= $5 { w++ } END { print w + 0 }')
  echo "$out tpe_wins=$wins/$seeds"
  [ -z "${SEARCH_RESULTS:-}" ] || { mkdir -p "$SEARCH_RESULTS"; cp "$tmp/res/$fn".{tpe,optuna,random} "$SEARCH_RESULTS/"; }
  fr=$(awk -v o="$r_optuna" -v t="$r_tpe" 'BEGIN { printf "%.3g", o / t }')
  logsum=$(awk -v s="$logsum" -v f="$fr" 'BEGIN { printf "%.17g", s + log(f) }')
  line+=$(printf ' %s=%s %s_wins=%s %s_regret_tpe=%.3g %s_regret_optuna=%.3g %s_regret_random=%.3g' \
    "$fn" "$fr" "$fn" "$wins/$seeds" "$fn" "$r_tpe" "$fn" "$r_optuna" "$fn" "$r_random")
done
awk -v s="$logsum" -v k="${#fns[@]}" -v rest="$line" -v seeds="$seeds" -v n="$n" -v secs="$secs" 'BEGIN {
  printf "search: ratio=%.3f seeds=%d trials=%d%s seconds=%d\n", exp(s / k), seeds, n, rest, secs }'
