#!/usr/bin/env bash
# resources.hostfile is read and checked when the experiment starts, whatever slots_per_trial is:
# a bad one is exit 2 with "resources.hostfile PATH:LINE: problem" before an experiment is
# recorded or a trial runs (it used to be read only for distributed trials, with a 512-byte line
# buffer and an int sum that overflowed); a good one with a 600-character comment is fine.
source "$(dirname "$0")/common.bash"
QT="$TRIALS/quadratic.so"
# qcfg SLOTS_PER_TRIAL — a one-trial quadratic experiment over $WORK/hosts.
qcfg() {
  cat > "$WORK/c.yaml" <<Y
name: q
hyperparameters: {global_batch_size: 2, x: 0.5, y: -1}
searcher: {name: single, metric: loss, max_length: {batches: 2}}
resources: {slots_per_trial: $1, hostfile: $WORK/hosts}
max_restarts: 0
Y
}
experiments() { sql "SELECT count(*) FROM experiments" 2>/dev/null || echo 0; }

qcfg 1
printf 'localhost slots=2\nnode2 slots=x\n' > "$WORK/hosts"
expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$QT" --plain
expect_in "$OUT" "resources.hostfile $WORK/hosts:2: slots=x is not a whole number"
[ "$(experiments)" = 0 ] || fail "an experiment was recorded for a bad hostfile"

printf 'a slots=2147483647\nb slots=2147483647\n' > "$WORK/hosts"
expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$QT" --plain
expect_in "$OUT" "resources.hostfile $WORK/hosts:2: the slots add up to more than 2147483647"

printf 'localhost\n-oProxyCommand=x\n' > "$WORK/hosts"
expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$QT" --plain
expect_in "$OUT" "resources.hostfile $WORK/hosts:2: expected a host name first"

expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$QT" --config resources.hostfile="$WORK/none" --plain
expect_in "$OUT" "resources.hostfile $WORK/none: No such file"
[ "$(experiments)" = 0 ] || fail "an experiment was recorded for a bad hostfile"

# A long comment is one line: not split into a host named by its tail.
{ printf 'localhost slots=2 # '; head -c 600 /dev/zero | tr '\0' x; printf '\n'; } > "$WORK/hosts"
expect_exit 0 "$T2EXP" create "$WORK/c.yaml" "$QT" --plain
expect_in "$OUT" "COMPLETED"

# Resume reads it again: a hostfile broken since is refused before the experiment is touched.
sqlite3 "$T2EXP_HOME/t2exp.db" "UPDATE experiments SET state='PAUSED' WHERE id=1"
printf 'localhost slots=0\n' > "$WORK/hosts"
expect_exit 2 "$T2EXP" resume 1 --plain
expect_in "$OUT" "resources.hostfile $WORK/hosts:1: slots=0: a host needs at least 1 slot"
[ "$(sql "SELECT state FROM experiments WHERE id=1")" = PAUSED ] || fail "resume changed the experiment's state"

# Distributed trials (with MPI): the overflowing pool used to read as "-2 slot(s)".
if grep -q "T2EXP_WITH_MPI:BOOL=ON" "$T2EXP_BUILD/CMakeCache.txt"; then
  qcfg 2
  printf 'a slots=2147483647\nb slots=2147483647\n' > "$WORK/hosts"
  expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$QT" --plain
  expect_in "$OUT" "resources.hostfile $WORK/hosts:2: the slots add up to more than 2147483647"
fi
echo "hostfile_check: ok"
