#!/usr/bin/env bash
# The dashboard in a real headless Chromium (Debian's /usr/bin/chromium, driven over the DevTools
# protocol by dashboard_browser.py): a finished ASHA experiment whose name, description, labels,
# hparam values and log lines hold markup, and a running experiment. Every page loads with no
# console error and runs none of the stored markup; the trials table has one row per trial; the
# learning-curve chart has one series per picked trial with the stored point counts; the running
# experiment's page changes by itself as metrics arrive; a pruned trial's page says "pruned". Trials
# are named EXP.N as the CLI names them; durations read as `t2exp list` writes them; an unknown
# trial's page says so and stops polling; once the running experiment's controller is killed (-9)
# the API says no controller runs it and the pages say `ACTIVE (no controller)`, as `t2exp list`
# does, and its running trial's page `RUNNING (no controller)`, as `t2exp trials` does; marked
# ERRORED by hand then, its QUEUED trial reads `QUEUED (experiment ERRORED)` in the table and page. Screenshots: $T2EXP_BUILD/dashboard-*.png.
source "$(dirname "$0")/common.bash"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || { echo "dashboard_browser: skipped ($CHROMIUM missing; scripts/deps.sh installs chromium)"; exit 77; }
command -v python3 >/dev/null || { echo "dashboard_browser: skipped (no python3)"; exit 77; }
command -v "${CC:-cc}" >/dev/null || { echo "dashboard_browser: skipped (no C compiler)"; exit 77; }
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -shared -fPIC -I "$T2EXP_SOURCE/framework/include" \
  "$T2EXP_SOURCE/tests/integration/dashboard_trial.c" -o "$WORK/dash.so"

# Experiment 1: finished ASHA, markup in every user string (each would set window.__xss if it ran).
cat > "$WORK/asha.yaml" <<'Y'
name: "asha <script>window.__xss='name'</script><img src=x onerror=\"window.__xss='img'\">"
description: "<script>window.__xss='description'</script>"
labels: ["<script>window.__xss='label'</script>", "<b onmouseover=\"window.__xss='b'\">bold</b>"]
hyperparameters:
  global_batch_size: 1
  x: {type: double, minval: -2, maxval: 4}
  tag: {type: categorical, vals: ["<script>window.__xss='hparam'</script>", "<img src=x onerror=\"window.__xss='hp-img'\">"]}
searcher: {name: adaptive_asha, metric: loss, max_length: {batches: 32}, max_trials: 12, max_rungs: 3, divisor: 4,
           max_concurrent_trials: 2}
min_validation_period: {batches: 2}
scheduling_unit: 2
reproducibility: {experiment_seed: 5}
Y
expect_exit 0 "$T2EXP" create "$WORK/asha.yaml" "$WORK/dash.so" --quiet
[ "$(sql "SELECT state FROM experiments WHERE id=1")" = COMPLETED ] || fail "the ASHA experiment did not complete"
# A model of the registry, its description markup too (the list shows the registry below).
expect_exit 0 "$T2EXP" model register best 1 --description "<script>window.__xss='model'</script>"

# Experiment 2: two trials of 50 ms batches, running while the browser watches (killed at the end).
cat > "$WORK/running.yaml" <<'Y'
name: running_random
hyperparameters: {global_batch_size: 1, x: {type: double, minval: -2, maxval: 4}, sleep_ms: 50,
                  tag: "<script>window.__xss='running'</script>"}
searcher: {name: random, metric: loss, max_length: {batches: 2000}, max_trials: 2, max_concurrent_trials: 2}
min_validation_period: {batches: 4}
scheduling_unit: 2
reproducibility: {experiment_seed: 9}
Y
"$T2EXP" create "$WORK/running.yaml" "$WORK/dash.so" --quiet > "$WORK/running.log" 2>&1 &
running=$!
"$T2EXP" dashboard --port 0 > "$WORK/dashboard.log" 2>&1 &
dash=$!
cleanup() {
  kill "$dash" 2>/dev/null || true
  "$T2EXP" kill 2 >/dev/null 2>&1 || true
  wait "$running" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
wait_for "SELECT count(*) FROM metrics m JOIN trials t ON t.id = m.trial_id WHERE t.experiment_id = 2 AND m.kind = 'validation'"
# Experiment 3: a random search the median pruner cuts short, one trial at a time (a pruned trial's
# page labels its error column "pruned"), with a nested hparam group (its page shows opt.lr).
cat > "$WORK/pruned.yaml" <<'Y'
name: pruned_random
hyperparameters: {global_batch_size: 1, x: {type: double, minval: -2, maxval: 4},
                  opt: {lr: {type: log, minval: -4, maxval: -1}, momentum: 0.9}}
searcher: {name: random, metric: loss, max_length: {batches: 8}, max_trials: 8, max_concurrent_trials: 1,
           pruner: {name: median, n_startup_trials: 2}}
min_validation_period: {batches: 2}
reproducibility: {experiment_seed: 3}
Y
expect_exit 0 "$T2EXP" create "$WORK/pruned.yaml" "$WORK/dash.so" --quiet
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = 3 AND error LIKE 'pruned at batch %'")" -gt 0 ] ||
  fail "the median pruner pruned nothing in experiment 3: $("$T2EXP" trials 3)"

# The address as printed, token and all: the browser opens it as a user would (its first answer
# sets the token's cookie and sends it on to the page).
url=
for _ in $(seq 100); do
  url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]+' "$WORK/dashboard.log" | head -n 1 || true)
  [ -n "$url" ] && break
  kill -0 "$dash" 2>/dev/null || fail "t2exp dashboard exited: $(cat "$WORK/dashboard.log")"
  sleep 0.05
done
[ -n "$url" ] || fail "t2exp dashboard printed no http://127.0.0.1:PORT/?token= address: $(cat "$WORK/dashboard.log")"

# The importance the page must rank first: the CLI's (the same function answers the page's /api).
expect_exit 0 "$T2EXP" importance 1 --json
export T2EXP_IMPORTANCE_TOP=$(json "json_extract(j, '$.importance[0].hyperparameter')")
# The finished experiments' durations as the CLI's table writes them (the list page must agree).
expect_exit 0 "$T2EXP" list
export T2EXP_LIST_DURATIONS=$(awk '$1 == 1 || $1 == 3 {printf "%s=%s ", $1, $NF}' <<<"$OUT")
python3 "$T2EXP_SOURCE/tests/integration/dashboard_browser.py" "$url" "$T2EXP_HOME/t2exp.db" "$T2EXP_BUILD" 1 2 \
  || fail "the browser checks failed (screenshots in $T2EXP_BUILD/dashboard-*.png)"
kill -0 "$dash" || fail "the dashboard died during the test"
# (The browser checks end by marking it ERRORED by hand, its controller dead.)
[ "$(sql "SELECT state FROM experiments WHERE id=2")" = ERRORED ] || fail "the running experiment's state changed during the test"
echo "dashboard_browser: ok (screenshots: $T2EXP_BUILD/dashboard-*.png)"
