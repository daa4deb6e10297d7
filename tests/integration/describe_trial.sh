#!/usr/bin/env bash
# `t2exp describe EXP.N` (Determined's `det trial describe`): one trial's row as key/value lines,
# every metric of its latest validation and its active checkpoints; the same in JSON and the row
# in CSV, each checked against the store; an unknown trial and --top are refused.
source "$(dirname "$0")/common.bash"
command -v sqlite3 >/dev/null || { echo "describe_trial: skipped (no sqlite3)"; exit 77; }
command -v python3 >/dev/null || { echo "describe_trial: skipped (no python3)"; exit 77; }
build_scripted
cat > "$WORK/e.yaml" <<Y
name: described
hyperparameters: {global_batch_size: 1, peak: {type: int, minval: 2, maxval: 3, count: 2}}
searcher: {name: grid, metric: score, smaller_is_better: false, max_length: {batches: 4}}
min_validation_period: {batches: 2}
Y
expect_exit 0 "$T2EXP" create "$WORK/e.yaml" "$WORK/scripted.so" --quiet
uuid=$(sql "SELECT uuid FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = 1 AND t.ordinal = 1 AND c.state = 'ACTIVE' ORDER BY c.batches DESC LIMIT 1")
[ -n "$uuid" ] || fail "trial 1.1 left no checkpoint"
peak=$(sql "SELECT json_extract(hparams, '\$.peak') FROM trials WHERE experiment_id = 1 AND ordinal = 1")

expect_exit 0 "$T2EXP" describe 1.1
for want in "trial              1.1" "experiment_name    described" "state              COMPLETED" "batches            4" \
            "latest validation:" "checkpoints:" "$uuid"; do
  expect_in "$OUT" "$want"
done
# The latest validation is batch 4's: score -|4 - peak|.
grep -Eq "^ +4 +[0-9.]+ +score +-$((4 - peak)) " <<<"$OUT" || fail "no latest validation row of score at batch 4: $OUT"

expect_exit 0 "$T2EXP" describe 1.1 --json
printf '%s' "$OUT" > "$WORK/d.json"
python3 - "$WORK/d.json" "$uuid" "$peak" <<'PY' || fail "describe 1.1 --json: $OUT"
import json, sys
d = json.load(open(sys.argv[1]))
uuid, peak = sys.argv[2], int(sys.argv[3])
t = d["trial"]
assert t["trial"] == "1.1" and t["state"] == "COMPLETED" and t["batches"] == 4 and t["hparams"]["peak"] == peak, t
assert [(v["name"], v["batches"], v["value"]) for v in d["latest_validation"]] == [("score", 4, -(4 - peak))], d
assert uuid in [c["uuid"] for c in d["checkpoints"]], d["checkpoints"]
PY
expect_exit 0 "$T2EXP" describe 1.1 --csv
[ "$(head -n 1 <<<"$OUT" | cut -d, -f1-5)" = "trial,id,experiment,experiment_name,state" ] || fail "describe 1.1 --csv header: $OUT"
[ "$(sed -n 2p <<<"$OUT" | cut -d, -f1,5)" = "1.1,COMPLETED" ] || fail "describe 1.1 --csv row: $OUT"

expect_exit 2 "$T2EXP" describe 1.7
expect_in "$OUT" "no trial 1.7"
expect_exit 2 "$T2EXP" describe 1.1 --top 3
expect_in "$OUT" "--top ranks an experiment's trials"
expect_exit 0 "$T2EXP" describe 1 # a bare number is still the experiment
expect_in "$OUT" "trials ranked by score"
echo "describe_trial: ok"
