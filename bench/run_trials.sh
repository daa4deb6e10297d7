#!/usr/bin/env bash
# Trial throughput: random search of TRIALS (default 10000) quadratic trials through `t2exp create`
# — trials in the default resources.isolation (workers: ISOLATION=process_per_trial for a process
# per trial), every trial persisted in the store — against Optuna's random
# search on the same space, in memory and on SQLite (../shared/bench/optuna_trials.py), measured
# in this run. ratio = our trials/s over Optuna in-memory trials/s. Also times `t2exp list` and
# `t2exp describe` on the resulting store. The reference needs Optuna in OPTUNA_PYTHON (default
# /usr/bin/python3, Debian's python3-optuna); without it the Optuna lines say so and `ratio` is n/a,
# the rest still runs (the 16-core device machine has no Debian packages, so no sqlite3 tool either:
# the trials are counted from the store through `t2exp trials --csv`).
#
# SCALING=1 also runs the same search on 2 of the machine's cores (`taskset`: the slot pool follows
# the cores the process may use, performance.md#the-cores) and ends with one more line,
# `trials_scaling: ratio=<all cores' rate / 2 cores' rate> cores=N` (issue 12's 16-core check).
# REPEAT=N (with SCALING) measures N such pairs, the first of each pair alternating, and the ratio
# is the median of the pairs' (the 16-core machine's rate moves by a quarter from run to run with
# the same code, so one pair says little); each pair's lines are printed too.
set -euo pipefail
shared="${T2EXP_SHARED:-$(cd "$(dirname "$0")/../.." && pwd)/shared}"
n="${TRIALS:-10000}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export T2EXP_HOME="$tmp/home" TMPDIR="$tmp"
# The BLAS core probe (blas_core.h: about 0.2 s, once per machine, cached in the home) is paid by
# a user's first run only; a fresh home would charge it to every run of this benchmark.
build/t2exp info >/dev/null
# search [PREFIX...] — runs the search (under PREFIX, e.g. taskset) as the home's next experiment;
# sets $stored (its COMPLETED trials), $rate (their number over the wall time) and $split (the
# controller's CPU per trial, all of it and its main thread's and its store writer thread's apart,
# and the workers', from bench/preload/cpu_split.c, which prints them when the controller ends).
exp=0
search() {
  exp=$((exp + 1))
  local t0 t1 cpu
  t0=$(date +%s.%N)
  LD_PRELOAD="$PWD/build/bench/libcpu_split.so" "$@" build/t2exp create bench/configs/trials_random.yaml \
    build/trials/quadratic.so --quiet --config searcher.max_trials="$n" \
    ${ISOLATION:+--config resources.isolation="$ISOLATION"} 2>"$tmp/create.err" | tail -n 2
  t1=$(date +%s.%N)
  grep -v '^cpu_split: ' "$tmp/create.err" >&2 || true
  stored=$(build/t2exp trials "$exp" --csv | awk -F, 'NR > 1 && $3 == "COMPLETED"' | wc -l)
  rate=$(awk -v a="$t0" -v b="$t1" -v n="$stored" 'BEGIN { printf "%.1f", n / (b - a) }')
  cpu=$(sed -n 's/^cpu_split: //p' "$tmp/create.err")
  split=$(awk -v n="$stored" -v c="$cpu" 'BEGIN { split(c, f, /[= ]/);
    printf "controller_us_per_trial=%.0f main_thread_us_per_trial=%.0f writer_thread_us_per_trial=%.0f worker_us_per_trial=%.0f",
      f[2] / n * 1e6, f[6] / n * 1e6, (f[2] - f[6]) / n * 1e6, f[4] / n * 1e6
    # The most a machine with many more cores can gain over two, from the CPU split of this run (main
    # thread M, writer W, workers K a trial): two cores run at about 2 / (M + W + K) trials a
    # second, many at most 1 / max(M, W), so many / two <= (M + W + K) / (2 max(M, W)). A model,
    # not a measurement: issue 12 asks 4 on 16 cores; the split of this run says what the parts allow.
    mw = f[6] > f[2] - f[6] ? f[6] : f[2] - f[6]
    if (mw > 0) printf " scaling_bound=%.2f", (f[2] + f[4]) / (2 * mw)
    if (f[12] != "") printf " main_sys_us_per_trial=%.0f writer_sys_us_per_trial=%.0f worker_sys_us_per_trial=%.0f",
      f[12] / n * 1e6, (f[8] - f[12]) / n * 1e6, f[10] / n * 1e6 }')
}
search
ours=$rate ours_stored=$stored ours_split=$split
echo "t2exp_trials trials=$stored trials_per_s=$ours cores=$(sed -n 's/^cores  *//p' <<<"$(build/t2exp info)") $split"
if [ -n "${SCALING:-}" ] && ! command -v taskset >/dev/null; then
  echo "trials_scaling: skipped (no taskset)"
  SCALING=
fi
if [ -n "${SCALING:-}" ]; then
  # The first 2 cores of this process's list ("0-3,8" style).
  two=$(taskset -pc $$ | sed 's/.*: *//' | awk -F, '{ for (i = 1; i <= NF; i++) { split($i, r, "-");
    if (r[2] == "") r[2] = r[1]; for (c = r[1]; c <= r[2]; c++) print c } }' | head -n 2 | paste -sd, -)
  on_two() {
    search taskset -c "$two"
    two_rate=$rate two_stored=$stored
    echo "t2exp_trials_2cores trials=$two_stored trials_per_s=$two_rate cores=$two $split"
  }
  on_all() {
    search
    echo "t2exp_trials trials=$stored trials_per_s=$rate cores=$(sed -n 's/^cores  *//p' <<<"$(build/t2exp info)") $split"
    all_rate=$rate
  }
  on_two
  all_rate=$ours alls=$ours twos=$two_rate
  ratios=$(awk -v a="$all_rate" -v b="$two_rate" 'BEGIN { printf "%.2f", a / b }')
  for ((pair = 2; pair <= ${REPEAT:-1}; pair++)); do
    if ((pair % 2 == 0)); then on_two; on_all; else on_all; on_two; fi
    ratios+=",$(awk -v a="$all_rate" -v b="$two_rate" 'BEGIN { printf "%.2f", a / b }')"
    alls+=",$all_rate" twos+=",$two_rate"
  done
fi
py="${OPTUNA_PYTHON:-/usr/bin/python3}"
if "$py" -c 'import optuna' 2>/dev/null; then
  mem=$("$py" "$shared/bench/optuna_trials.py" --trials "${OPTUNA_TRIALS:-2000}")
  sq=$("$py" "$shared/bench/optuna_trials.py" --trials "${OPTUNA_SQLITE_TRIALS:-300}" --sqlite "$tmp/optuna.db")
else
  mem="optuna_trials: skipped ($py has no optuna)" sq=""
fi
echo "$mem"
[ -z "$sq" ] || echo "$sq"
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
list_ms=$(ms build/t2exp list); describe_ms=$(ms build/t2exp describe 1 --top 10)
get() { sed -n "s/.*trials_per_s=\([0-9.]*\).*/\1/p" <<<"$1"; }
awk -v o="$ours" -v m="$(get "$mem")" -v s="$(get "$sq")" -v l="$list_ms" -v d="$describe_ms" -v n="$ours_stored" 'BEGIN {
  if (m == "") { printf "trials: ratio=n/a trials_per_s=%.0f trials=%d list_ms=%d describe_ms=%d", o, n, l, d; exit }
  printf "trials: ratio=%.2f trials_per_s=%.0f optuna_memory_trials_per_s=%.0f optuna_sqlite_trials_per_s=%.0f sqlite_ratio=%.1f trials=%d list_ms=%d describe_ms=%d",
    o / m, o, m, s, o / s, n, l, d }'
echo " $ours_split"
if [ -n "${SCALING:-}" ]; then
  # Medians over the pairs (one pair: its own figures), with every pair's ratio.
  awk -v r="$ratios" -v a="$alls" -v b="$twos" -v c="$(build/t2exp info | sed -n 's/^cores  *//p')" '
    function median(list,   v, n, i, j, t) {
      n = split(list, v, ",")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    BEGIN { printf "trials_scaling: ratio=%.2f trials_per_s=%.0f two_core_trials_per_s=%.0f cores=%d pairs=%d ratios=%s\n",
      median(r), median(a), median(b), c, split(r, x, ","), r }'
fi
