#!/usr/bin/env bash
# pipeline_cache.sh — command stages only: the first run runs every stage; a second run with
# nothing changed skips every stage (timed); changing one stage's input reruns it and what
# depends on it, and only that; a missing output makes its stage stale; --force reruns a stage
# and what follows; `pipeline status`, `pipelines` and `pipelines describe` show it all.
source "$(dirname "$0")/common.bash"
export OPENBLAS_NUM_THREADS=1
P="$WORK/proj"
mkdir -p "$P/data"
echo "3 1 2" > "$P/data/raw.txt"
echo "unrelated" > "$P/other.txt"
# prep -> sum -> report; side is independent. Each stage appends its name to runs.log, so the
# test sees exactly which stages ran.
cat > "$P/flow.yaml" <<'Y'
name: cache_demo
stages:
  prep:
    run: [sh, -c, "tr ' ' '\n' < data/raw.txt | sort -n > sorted.txt && echo prep >> runs.log"]
    inputs: [data]
    outputs: [sorted.txt]
  sum:
    run: "awk '{s+=$1} END {print s}' sorted.txt > sum.txt && echo sum >> runs.log"
    shell: true
    inputs: [sorted.txt]
    outputs: [sum.txt]
  report:
    after: [sum]
    run: [sh, -c, "echo total $(cat sum.txt) > report.txt && echo report >> runs.log"]
    outputs: [report.txt]
  side:
    run: [sh, -c, "cp other.txt side.txt && echo side >> runs.log"]
    inputs: [other.txt]
    outputs: [side.txt]
Y
ran() { sort "$P/runs.log" | paste -sd' '; }

# 1. Never run: status says so; the first run runs all four.
expect_exit 0 "$T2EXP" pipeline status "$P/flow.yaml"
[ "$(grep -c 'never run' <<<"$OUT")" -eq 4 ] || fail "status before any run: $OUT"
expect_exit 0 "$T2EXP" pipeline run "$P/flow.yaml"
[ "$(ran)" = "prep report side sum" ] || fail "first run ran: $(ran)"
[ "$(cat "$P/report.txt")" = "total 6" ] || fail "report: $(cat "$P/report.txt")"
[ "$(sql "SELECT state FROM pipeline_runs WHERE id = 1")" = SUCCEEDED ] || fail "run 1 not SUCCEEDED"
# Logs are private, under HOME/pipelines/RUN/.
log=$(sql "SELECT log_path FROM stage_runs WHERE run_id = 1 AND stage = 'prep'")
[ "$log" = "$T2EXP_HOME/pipelines/1/prep.log" ] || fail "log path $log"
[ "$(stat -c %a "$log")" = 600 ] || fail "log mode $(stat -c %a "$log")"

# 2. Nothing changed: every stage skipped, quickly (measured; asserted generously).
: > "$P/runs.log"
t0=$(date +%s.%N)
expect_exit 0 "$T2EXP" pipeline run "$P/flow.yaml"
t1=$(date +%s.%N)
secs=$(echo "$t1 - $t0" | bc)
echo "no-change rerun: ${secs} s (4 stages skipped)"
[ "$(echo "$secs < 5" | bc)" = 1 ] || fail "the no-change rerun took $secs s"
[ ! -s "$P/runs.log" ] || fail "a stage ran although nothing changed: $(ran)"
[ "$(grep -cE '^ +[a-z]+ +up to date$' <<<"$OUT")" -eq 4 ] || fail "run 2 output: $OUT"
[ "$(sql "SELECT count(*) FROM stage_runs WHERE run_id = 2 AND state = 'SKIPPED'")" = 4 ] || fail "run 2 rows"
expect_exit 0 "$T2EXP" pipeline status "$P/flow.yaml"
[ "$(grep -c 'up to date' <<<"$OUT")" -eq 4 ] || fail "status after run 2: $OUT"

# 3. A touch alone changes nothing (contents are hashed, not times).
touch "$P/data/raw.txt"
expect_exit 0 "$T2EXP" pipeline status "$P/flow.yaml"
[ "$(grep -c 'up to date' <<<"$OUT")" -eq 4 ] || fail "a touch made a stage stale: $OUT"

# 4. prep's input changes: status names it; the run reruns prep, sum, report and not side.
echo "4 5" > "$P/data/more.txt"
expect_exit 0 "$T2EXP" pipeline status "$P/flow.yaml"
expect_in "$OUT" "input data changed"
grep -E '^sum +command +stale +upstream prep is stale' <<<"$OUT" >/dev/null || fail "sum status: $OUT"
grep -E '^side +command +up to date' <<<"$OUT" >/dev/null || fail "side status: $OUT"
: > "$P/runs.log"
expect_exit 0 "$T2EXP" pipeline run "$P/flow.yaml"
[ "$(ran)" = "prep report sum" ] || fail "after changing prep's input, ran: $(ran)"
# Same contents again in the input: the sorted output is identical, but prep ran, so sum and
# report run as well (a dependency that ran reruns what follows it).
rm "$P/data/more.txt"
: > "$P/runs.log"
expect_exit 0 "$T2EXP" pipeline run "$P/flow.yaml"
[ "$(ran)" = "prep report sum" ] || fail "after restoring prep's input, ran: $(ran)"

# 5. The definition changes (side's command): only side reruns.
sed -i 's/cp other.txt side.txt/cp other.txt side.txt; true/' "$P/flow.yaml"
expect_exit 0 "$T2EXP" pipeline status "$P/flow.yaml"
grep -E '^side +command +stale +definition changed' <<<"$OUT" >/dev/null || fail "side status: $OUT"
: > "$P/runs.log"
expect_exit 0 "$T2EXP" pipeline run "$P/flow.yaml"
[ "$(ran)" = "side" ] || fail "after changing side's command, ran: $(ran)"

# 6. An output is gone: its stage is stale and reruns, with what follows.
rm "$P/sum.txt"
expect_exit 0 "$T2EXP" pipeline status "$P/flow.yaml"
grep -E '^sum +command +stale +output sum.txt is missing' <<<"$OUT" >/dev/null || fail "sum status: $OUT"
: > "$P/runs.log"
expect_exit 0 "$T2EXP" pipeline run "$P/flow.yaml"
[ "$(ran)" = "report sum" ] || fail "after removing sum.txt, ran: $(ran)"

# 7. --force sum: sum and report rerun although up to date; prep and side do not.
: > "$P/runs.log"
expect_exit 0 "$T2EXP" pipeline run "$P/flow.yaml" --force sum
[ "$(ran)" = "report sum" ] || fail "--force sum ran: $(ran)"
expect_exit 2 "$T2EXP" pipeline run "$P/flow.yaml" --force summ
expect_in "$OUT" "has no stage 'summ'"

# 8. Listing and describing runs.
expect_exit 0 "$T2EXP" pipelines --json
[ "$(json "json_array_length(j)")" = 7 ] || fail "pipelines --json: $OUT" # the bad --force recorded no run
[ "$(json "json_extract(j, '\$[1].up_to_date')")" = 4 ] || fail "run 2 counts: $OUT"
expect_exit 0 "$T2EXP" pipelines describe 1 --json
[ "$(json "json_extract(j, '\$.run.name')")" = cache_demo ] || fail "describe: $OUT"
[ "$(json "json_array_length(json_extract(j, '\$.stages'))")" = 4 ] || fail "describe stages: $OUT"
[ "$(json "json_extract(j, '\$.stages[0].exit_code')")" = 0 ] || fail "describe exit code: $OUT"
expect_exit 0 "$T2EXP" pipelines describe 1
expect_in "$OUT" "$T2EXP_HOME/pipelines/1/prep.log"
expect_exit 2 "$T2EXP" pipelines describe 99
expect_in "$OUT" "no pipeline run 99"
store_ok
echo "ok"
