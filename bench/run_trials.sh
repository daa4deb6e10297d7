#!/usr/bin/env bash
# Trial throughput: random search of TRIALS (default 10000) quadratic trials through `t2exp create`
# — trials in the default resources.isolation (workers: ISOLATION=process_per_trial for a process
# per trial), every trial persisted in the store — against Optuna's random
# search on the same space, in memory and on SQLite (../shared/bench/optuna_trials.py), measured
# in this run. ratio = our trials/s over Optuna in-memory trials/s. Also times `t2exp list` and
# `t2exp describe` on the resulting store. Needs python3-optuna for the reference.
set -euo pipefail
shared="${T2EXP_SHARED:-$(cd "$(dirname "$0")/../.." && pwd)/shared}"
n="${TRIALS:-10000}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export T2EXP_HOME="$tmp/home" TMPDIR="$tmp"
# The BLAS core probe (blas_core.h: about 0.2 s, once per machine, cached in the home) is paid by
# a user's first run only; a fresh home would charge it to every run of this benchmark.
build/t2exp info >/dev/null
t0=$(date +%s.%N)
build/t2exp create bench/configs/trials_random.yaml build/trials/quadratic.so --quiet --config searcher.max_trials="$n" \
  ${ISOLATION:+--config resources.isolation="$ISOLATION"} | tail -n 2
t1=$(date +%s.%N)
stored=$(sqlite3 "$tmp/home/t2exp.db" "SELECT count(*) FROM trials WHERE state = 'COMPLETED'")
ours=$(awk -v a="$t0" -v b="$t1" -v n="$stored" 'BEGIN { printf "%.1f", n / (b - a) }')
echo "t2exp_trials trials=$stored trials_per_s=$ours"
mem=$(/usr/bin/python3 "$shared/bench/optuna_trials.py" --trials "${OPTUNA_TRIALS:-2000}")
echo "$mem"
sq=$(/usr/bin/python3 "$shared/bench/optuna_trials.py" --trials "${OPTUNA_SQLITE_TRIALS:-300}" --sqlite "$tmp/optuna.db")
echo "$sq"
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
list_ms=$(ms build/t2exp list); describe_ms=$(ms build/t2exp describe 1 --top 10)
get() { sed -n "s/.*trials_per_s=\([0-9.]*\).*/\1/p" <<<"$1"; }
awk -v o="$ours" -v m="$(get "$mem")" -v s="$(get "$sq")" -v l="$list_ms" -v d="$describe_ms" -v n="$stored" 'BEGIN {
  printf "trials: ratio=%.2f trials_per_s=%.0f optuna_memory_trials_per_s=%.0f optuna_sqlite_trials_per_s=%.0f sqlite_ratio=%.1f trials=%d list_ms=%d describe_ms=%d\n",
    o / m, o, m, s, o / s, n, l, d }'
