#!/usr/bin/env bash
# bench/run_dashboard.sh — the dashboard on a 100,000-trial store (made by bench/store_query):
#   start_s   from starting `t2exp dashboard` to its first answer (target < 1 s);
#   api_ms    the experiment page's API answer, GET /api/experiments/ID?top=2000 as the page asks
#             it above 5,000 trials, median of 7 (target < 100 ms); full_describe_ms beside it;
#   render_s  the experiment page drawn in headless Chromium (bench/dashboard_render.sh, median of 3
#             fresh tabs; target < 2 s).
# Ends with `dashboard: ratio=<the worst of target/measured over the three; >= 1 meets all> ...`.
# TRIALS (default 100000) and BUILD (default build) can be set.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$src/build}
trials=${TRIALS:-100000}
work=$(mktemp -d)
dash=
trap '[ -z "$dash" ] || kill $dash 2>/dev/null || true; rm -rf "$work"' EXIT
cmake --build "$build" --target bench_store_query t2exp_cli -j"$(nproc)" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
out=$(TMPDIR=$work STORE_QUERY_KEEP=1 "$build/bench/store_query" "$trials")
home=$(echo "$out" | sed -n 's/^kept store: \([^ ]*\) (experiment \([0-9]*\) .*/\1/p')
exp=$(echo "$out" | sed -n 's/^kept store: \([^ ]*\) (experiment \([0-9]*\) .*/\2/p')
[ -n "$home" ] && [ -n "$exp" ] || { echo "$out"; echo "run_dashboard: store_query kept no store" >&2; exit 1; }
t0=$(date +%s%N)
"$build/t2exp" --home "$home" dashboard --port 0 > "$work/dash.log" 2>&1 &
dash=$!
port= first=
for _ in $(seq 1000); do
  first=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/\?token=[0-9A-Za-z._~-]+' "$work/dash.log" | head -n 1 || true)
  port=$(grep -oE ':[0-9]+/' <<<"$first" | tr -d ':/' || true)
  [ -n "$port" ] && curl -s -o /dev/null -H "Authorization: Bearer ${first##*token=}" "http://127.0.0.1:$port/api/version" && break
  sleep 0.005
done
start_s=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
url="http://127.0.0.1:$port"
auth="Authorization: Bearer ${first##*token=}"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
api_ms=$(for _ in $(seq 7); do curl -s -o /dev/null -H "$auth" -w '%{time_total}\n' "$url/api/experiments/$exp?top=2000"; done |
         awk '{ printf "%.1f\n", $1 * 1000 }' | median)
full_ms=$(curl -s -o /dev/null -H "$auth" -w '%{time_total}\n' "$url/api/experiments/$exp" | awk '{ printf "%.1f\n", $1 * 1000 }')
render=$(bash "$src/bench/dashboard_render.sh" "$first" "$exp" 3 | tail -n 1)
echo "$render"
render_s=$(echo "$render" | grep -oE 'render_s=[0-9.]+' | cut -d= -f2)
ratio=$(awk -v s="$start_s" -v a="$api_ms" -v r="$render_s" 'BEGIN {
  x = 1 / s; y = 100 / a; z = 2 / r; m = x < y ? x : y; m = m < z ? m : z; printf "%.2f", m }')
echo "dashboard: ratio=$ratio start_s=$start_s api_ms=$api_ms full_describe_ms=$full_ms render_s=$render_s trials=$trials"
