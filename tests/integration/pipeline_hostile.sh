#!/usr/bin/env bash
# pipeline_hostile.sh — hostile values and inputs for `pipeline run`:
# 1. a reference in a `shell: true` command reaches the shell as exactly its value, one word,
#    never run: an hparam "$(touch PWNED)" runs nothing and JSON keeps its quotes, unquoted, in
#    "...", in '...', in $(...) and in a here-document; a place where that cannot be exact is
#    refused before anything runs; the stage's hash (up to date on a rerun) is unchanged by this;
# 2. an empty directory as an input (qsort of no names: undefined behaviour, caught by the
#    sanitized build, which then left the run RUNNING);
# 3. Ctrl-C while a large input is hashed stops the run within seconds, INTERRUPTED; a /proc file
#    (its size says 0, it reads on) is refused, naming it.
source "$(dirname "$0")/common.bash"
export OPENBLAS_NUM_THREADS=1
P="$WORK/proj"
mkdir -p "$P"
cd "$P"

# 1. Shell references.
NOTE='$(touch PWNED) it'"'"'s \"q\" *  `touch PWNED2` ${HOME}'
cat > s.yaml <<Y
name: s
hyperparameters: {global_batch_size: 1, x: 0.5, y: -1, model: 1, note: "$NOTE"}
searcher: {name: single, metric: loss, max_length: {batches: 2}}
Y
cat > flow.yaml <<Y
name: fl
stages:
  search:
    experiment: {config: s.yaml, trial: $TRIALS/quadratic.so}
  show:
    after: [search]
    shell: true
    run: |
      printf '%s' \${search.best.hparams} > out1.txt
      printf '%s' "\${search.best.hparams}" > out2.txt
      printf '%s' '\${search.best.hparams}' > out3.txt
      printf '%s' "\$(printf '%s' \${search.best.hparams})" > out4.txt
      cat <<EOF > out5.txt
      \${search.best.hparams}
      EOF
      set -- \${search.best.hparams}; printf '%s' \$# > words.txt
    outputs: [out1.txt]
Y
expect_exit 0 "$T2EXP" pipeline run flow.yaml
echo "$OUT" | tail -n 1
want='{"global_batch_size":1,"x":0.5,"y":-1,"model":1,"note":"$(touch PWNED) it'"'"'s \"q\" *  `touch PWNED2` ${HOME}"}'
for f in out1 out2 out3 out4; do
  [ "$(cat $f.txt)" = "$want" ] || fail "$f.txt: $(cat $f.txt)
wanted: $want"
done
[ "$(cat out5.txt)" = "$want" ] || fail "out5.txt (here-document): $(cat out5.txt)"
[ "$(cat words.txt)" = 1 ] || fail "an unquoted reference was split into $(cat words.txt) words"
[ ! -e PWNED ] && [ ! -e PWNED2 ] || fail "a reference's value ran as a command"
log=$(sql "SELECT log_path FROM stage_runs WHERE run_id = 1 AND stage = 'show'")
expect_in "$(cat "$log")" 't2exp pipeline: stage show: T2EXP_REF_1 = ${search.best.hparams}'
expect_in "$(cat "$log")" "printf '%s' \"\${T2EXP_REF_1}\" > out1.txt"
# A rerun with nothing changed: the hash over the references is stable, both stages are up to date.
expect_exit 0 "$T2EXP" pipeline run flow.yaml
[ "$(grep -cE '^ +(search|show) +up to date$' <<<"$OUT")" -eq 2 ] || fail "rerun: $OUT"
# A place where no quoting can hand the value over exactly: refused before anything runs, located.
cat > bad.yaml <<Y
name: bad
stages:
  search:
    experiment: {config: s.yaml, trial: $TRIALS/quadratic.so}
  show:
    after: [search]
    shell: true
    run: "echo \`echo \${search.best.hparams}\`"
Y
expect_exit 2 "$T2EXP" pipeline run bad.yaml
expect_in "$OUT" 'bad.yaml:8:10: stages.show.run: ${search.best.hparams}: it is inside `...`'

# 2. An empty directory as an input (and one inside an input).
mkdir -p empty data/sub
cat > f4.yaml <<'Y'
name: f4
stages:
  a: {run: [touch, a.ran], inputs: [empty, data]}
Y
expect_exit 0 "$T2EXP" pipeline run f4.yaml
[ -e a.ran ] || fail "the stage with empty input directories did not run: $OUT"
[ "$(sql "SELECT state FROM pipeline_runs WHERE name = 'f4'")" = SUCCEEDED ] || fail "f4 not SUCCEEDED"

# 3. Ctrl-C while a large (sparse) input is hashed: reading 64 GiB of zeros takes far longer than
#    the few seconds allowed here (30 GB took 30-48 s before hashing checked for a stop).
truncate -s 64G big.bin
cat > f5.yaml <<'Y'
name: f5
stages:
  a: {run: [touch, never.ran], inputs: [big.bin]}
  b: {run: [touch, never2.ran], after: [a]}
Y
"$T2EXP" pipeline run f5.yaml > f5.out 2>&1 &
pid=$!
# Once the run is recorded its signal handlers follow at once (before them, a background job's
# SIGINT is ignored); half a second later it is hashing big.bin.
for _ in $(seq 100); do [ "$(sql "SELECT count(*) FROM pipeline_runs WHERE name = 'f5'" 2>/dev/null)" = 1 ] && break; sleep 0.05; done
sleep 0.5
kill -INT "$pid"
t0=$(date +%s.%N)
for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
  kill -KILL "$pid"
  wait "$pid" || true
  fail "pipeline run still hashing 6 s after SIGINT: $(cat f5.out)"
fi
rc=0
wait "$pid" || rc=$?
secs=$(echo "$(date +%s.%N) - $t0" | bc)
echo "SIGINT while hashing: exit $rc after ${secs} s"
[ "$rc" = 130 ] || fail "exit $rc (wanted 130): $(cat f5.out)"
[ "$(sql "SELECT state FROM pipeline_runs WHERE name = 'f5'")" = INTERRUPTED ] || fail "f5 not INTERRUPTED"
[ "$(sql "SELECT group_concat(x, ' ') FROM (SELECT stage || '=' || state AS x FROM stage_runs WHERE run_id =
      (SELECT id FROM pipeline_runs WHERE name = 'f5') ORDER BY stage)")" = "a=CANCELED b=CANCELED" ] ||
  fail "f5 stages: $(sql "SELECT stage, state, error FROM stage_runs WHERE run_id = (SELECT id FROM pipeline_runs WHERE name = 'f5')")"
[ ! -e never.ran ] || fail "a stage ran after the stop"
rm -f big.bin

# A /proc file: regular by its mode, but its size (0) lies; refused, naming it.
cat > f6.yaml <<'Y'
name: f6
stages:
  a: {run: [touch, a6.ran], inputs: [/proc/self/stat]}
Y
expect_exit 1 "$T2EXP" pipeline run f6.yaml
expect_in "$OUT" "input /proc/self/stat: reads more than its size of 0 bytes"
[ ! -e a6.ran ] || fail "a stage with a /proc input ran"
echo "pipeline_hostile: ok"
