#!/usr/bin/env bash
# prepare_data_crash.sh — prepare_data runs in a process of its own (probe_H H4). It ran inside the
# controller: a crash in it ended `t2exp create` with no word (139), an exit() in it with exit 0,
# and the experiment stayed ACTIVE with no reason; a resume then ran the trials without
# prepare_data ever having succeeded. Checks that a crash, an exit() and an error each leave the
# experiment ERRORED with the reason; that a resume of such an experiment runs prepare_data first;
# and that Ctrl-C during prepare_data pauses the experiment, whose resume runs it again.
source "$(dirname "$0")/common.bash"
build_scripted
cat > "$WORK/p.yaml" <<Y
name: prep
data: {prepared: "$WORK/prepared", fail_while: "$WORK/no-data", sleep_while: "$WORK/slow"}
hyperparameters: {global_batch_size: 1, peak: 2}
searcher: {name: single, metric: score, smaller_is_better: false, max_length: {batches: 4}}
Y
state() { sql "SELECT state || ' ' || coalesce(error, '') FROM experiments WHERE id = $1"; }

expect_exit 1 "$T2EXP" create "$WORK/p.yaml" "$WORK/scripted.so" --plain --config data.prepare=segv
expect_in "$OUT" "experiment 1 errored: prepare_data: its process killed by signal 11"
state 1 | grep -q "^ERRORED prepare_data: its process killed by signal 11" || fail "experiment 1: $(state 1)"

expect_exit 1 "$T2EXP" create "$WORK/p.yaml" "$WORK/scripted.so" --plain --config data.prepare=exit
expect_in "$OUT" "prepare_data: its process exited with status 0 before prepare_data returned (an exit() in it"
state 2 | grep -q "^ERRORED prepare_data: its process exited with status 0" || fail "experiment 2: $(state 2)"

touch "$WORK/no-data"
expect_exit 1 "$T2EXP" create "$WORK/p.yaml" "$WORK/scripted.so" --plain
expect_in "$OUT" "experiment 3 errored: prepare_data: scripted: no data here"
[ ! -e "$WORK/prepared" ] || fail "prepare_data said it succeeded"
# Fixed: the resume of the experiment that never started runs prepare_data, then the search.
rm "$WORK/no-data"
expect_exit 0 "$T2EXP" resume 3 --plain
expect_in "$OUT" "1 trial(s) completed, 0 errored"
[ "$(wc -l < "$WORK/prepared")" = 1 ] || fail "the resume did not run prepare_data once: $(cat "$WORK/prepared" 2>&1)"

# Ctrl-C while prepare_data runs: the experiment pauses; its resume runs prepare_data again.
touch "$WORK/slow"
"$T2EXP" create "$WORK/p.yaml" "$WORK/scripted.so" --plain > "$WORK/out4" 2>&1 &
ctl=$!
wait_for "SELECT count(*) FROM experiments WHERE id = 4"
sleep 0.5
kill -INT $ctl
wait $ctl || true
OUT=$(cat "$WORK/out4")
expect_in "$OUT" "experiment 4 paused during prepare_data; t2exp resume 4 runs it again"
state 4 | grep -q "^PAUSED" || fail "experiment 4: $(state 4)"
rm "$WORK/slow"
expect_exit 0 "$T2EXP" resume 4 --plain
expect_in "$OUT" "1 trial(s) completed, 0 errored"
[ "$(wc -l < "$WORK/prepared")" = 2 ] || fail "the resume after Ctrl-C did not run prepare_data: $(cat "$WORK/prepared")"

# A process prepare_data leaves running (it forks without exec, so it holds the result's pipe)
# neither holds the controller (it waited the helper's whole 60 s, Ctrl-C and kill included) nor
# outlives prepare_data.
start=$(date +%s)
expect_exit 0 timeout 50 "$T2EXP" create "$WORK/p.yaml" "$WORK/scripted.so" --plain --config data.prepare=helper
took=$(( $(date +%s) - start ))
[ "$took" -lt 20 ] || fail "the experiment waited $took s for the helper prepare_data left"
expect_in "$OUT" "1 trial(s) completed, 0 errored"
[ -z "$(own_pids "t2exp create $WORK/p.yaml")" ] || fail "the helper prepare_data forked outlived it"

# A prepare_data that ignores SIGTERM: a second Ctrl-C ends it; `t2exp kill EXP` cancels.
touch "$WORK/slow"
"$T2EXP" create "$WORK/p.yaml" "$WORK/scripted.so" --plain --config data.prepare=ignore_term > "$WORK/out6" 2>&1 &
ctl=$!
wait_for "SELECT count(*) FROM experiments WHERE id = 6"
sleep 0.5
kill -INT $ctl
sleep 0.5
kill -INT $ctl
for _ in $(seq 50); do kill -0 $ctl 2>/dev/null || break; sleep 0.1; done
! kill -0 $ctl 2>/dev/null || { kill -KILL $ctl; fail "a second Ctrl-C did not end a prepare_data that ignores SIGTERM"; }
state 6 | grep -q "^PAUSED" || fail "experiment 6: $(state 6)"
"$T2EXP" create "$WORK/p.yaml" "$WORK/scripted.so" --plain > "$WORK/out7" 2>&1 &
ctl=$!
wait_for "SELECT count(*) FROM experiments WHERE id = 7"
sleep 0.5
expect_exit 0 timeout 20 "$T2EXP" kill 7
wait $ctl || true
state 7 | grep -q "^CANCELED killed during prepare_data" || fail "t2exp kill during prepare_data left experiment 7 $(state 7)"
rm "$WORK/slow"
[ -z "$(own_pids "t2exp create $WORK/p.yaml")" ] || fail "a prepare_data process was left running"
echo "prepare_data_crash: ok"
