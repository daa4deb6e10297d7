#!/usr/bin/env bash
# SIGKILL of `t2exp pipeline run` (the example flow, CI-small) while its search stage runs, once the
# search has a checkpoint: no process of the run survives it (the stage's controller and its
# trials die with the pipeline), and `pipeline run` again resumes the search experiment (the log
# says so; no second search experiment), skips the finished stage, and ends with the results of
# an uninterrupted run: best metric and hyperparameters of search and retrain, the evaluate
# stage's accuracy, and the exported model's sha256.
source "$(dirname "$0")/common.bash"
source "$(dirname "$0")/example_flow.bash"
have_fashion_mnist || { echo "pipeline_example_resume: skipped (no dataset-fashion-mnist)"; exit 77; }
export OPENBLAS_NUM_THREADS=1 # t2exp would re-exec itself to set it
# 4 trials of 80 batches, the best one continued to 320: long enough to be killed mid-search.
copy_flow "$WORK/a" 320 4 200
copy_flow "$WORK/b" 320 4 200
HA="$WORK/home_a" HB="$WORK/home_b"
sqlb() { sqlite3 "$HB/t2exp.db" "$1"; }
SEARCH="SELECT id FROM experiments WHERE name = 'fashion_mnist_flow_search'"

expect_exit 0 "$T2EXP" --home "$HA" pipeline run "$WORK/a/fashion_mnist_flow.yaml" # uninterrupted

"$T2EXP" --home "$HB" pipeline run "$WORK/b/fashion_mnist_flow.yaml" > "$WORK/b1.log" 2>&1 &
pid=$!
T2EXP_HOME=$HB wait_for "SELECT count(*) FROM checkpoints WHERE experiment_id = ($SEARCH)" 1200
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
exp=$(sqlb "$SEARCH")
echo "killed during the search: $(sqlb "SELECT count(*) FROM trials WHERE experiment_id = $exp") trial(s) made," \
     "$(sqlb "SELECT sum(batches_trained) FROM trials WHERE experiment_id = $exp") batches trained"
[ "$(sqlb "SELECT state FROM experiments WHERE id = $exp")" = ACTIVE ] ||
  fail "the search ended before the kill; nothing to resume (make it longer): $(cat "$WORK/b1.log")"
# Every process of the killed run (stage children, the controller, its trials: all share the
# command line) is gone within seconds.
for _ in $(seq 200); do pgrep -f "pipeline run $WORK/b/" >/dev/null || break; sleep 0.05; done
left=$(pgrep -af "pipeline run $WORK/b/" || true)
[ -z "$left" ] || fail "processes left after the pipeline was killed:
$left"

expect_exit 0 "$T2EXP" --home "$HB" pipeline run "$WORK/b/fashion_mnist_flow.yaml"
echo "$OUT"
expect_in "$OUT" "prepare          up to date"
expect_in "$OUT" "SUCCEEDED"
[ "$(sqlb "SELECT count(*) FROM experiments WHERE name = 'fashion_mnist_flow_search'")" = 1 ] ||
  fail "the search was started again instead of resumed"
expect_exit 0 "$T2EXP" --home "$HB" pipelines describe 2 --json
DB=$OUT
slog=$(cat "$(stage_field "$DB" search '$.log')")
expect_in "$slog" "resuming experiment $exp"
expect_in "$slog" "experiment $exp COMPLETED"
[ "$(stage_field "$DB" search '$.experiment')" = "$exp" ] || fail "the search stage's experiment is not $exp"

expect_exit 0 "$T2EXP" --home "$HA" pipelines describe 1 --json
DA=$OUT
for f in search:'$.result.best.metric' search:'$.result.best.hparams' retrain:'$.result.best.metric' \
         retrain:'$.result.best.hparams'; do
  a=$(stage_field "$DA" "${f%%:*}" "${f#*:}") b=$(stage_field "$DB" "${f%%:*}" "${f#*:}")
  [ -n "$a" ] && [ "$a" = "$b" ] || fail "${f%%:*} ${f#*:}: uninterrupted $a, resumed $b"
done
acc() { sed -n 's/^validation_accuracy //p' "$(stage_field "$1" evaluate '$.log')"; }
[ -n "$(acc "$DA")" ] && [ "$(acc "$DA")" = "$(acc "$DB")" ] || fail "evaluate: $(acc "$DA") vs $(acc "$DB")"
sa=$(sha256sum < "$WORK/a/fashion_mnist_flow.out/model.bin") sb=$(sha256sum < "$WORK/b/fashion_mnist_flow.out/model.bin")
[ "$sa" = "$sb" ] || fail "the exported models differ"
echo "resumed = uninterrupted: search best $(stage_field "$DB" search '$.result.best.metric'), retrain best" \
     "$(stage_field "$DB" retrain '$.result.best.metric'), accuracy $(acc "$DB"), model.bin sha256 ${sb%% *}"
T2EXP_HOME=$HB store_ok
echo "pipeline_example_resume: ok"
