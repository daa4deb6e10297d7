#!/usr/bin/env bash
# Strict configs through the CLI: a file with typo'd keys is refused (exit 2) by preview and create
# with every problem listed, each naming the key it resembles, and no experiment is made;
# --lenient turns the unknown keys into warnings. Determined's config forms preview cleanly, and
# environment.environment_variables reaches the trial process (hostile_trial.c needs two variables
# that only the config sets).
source "$(dirname "$0")/common.bash"

cat > "$WORK/typos.yaml" <<Y
name: typos
hyperparameters:
  global_batch_size: 8
  x: {type: double, minval: -1, maxval: 1}
  y: 0.5
searcher:
  name: random
  metric: loss
  smaller_is_beter: true
  max_trails: 2
  max_trials: 2
  max_length: {batches: 10}
min_validation_perod: {batches: 5}
Y
for cmd in preview create; do
  args=("$WORK/typos.yaml"); [ "$cmd" = create ] && args+=("$TRIALS/quadratic.so" --plain)
  expect_exit 2 "$T2EXP" "$cmd" "${args[@]}"
  expect_in "$OUT" "t2exp $cmd: $WORK/typos.yaml:9:3: searcher.smaller_is_beter: unknown key (did you mean 'smaller_is_better'?)"
  expect_in "$OUT" "t2exp $cmd: $WORK/typos.yaml:10:3: searcher.max_trails: unknown key (did you mean 'max_trials'?)"
  expect_in "$OUT" "t2exp $cmd: $WORK/typos.yaml:13:1: min_validation_perod: unknown key (did you mean 'min_validation_period'?)"
  expect_in "$OUT" "t2exp $cmd: 3 errors in $WORK/typos.yaml"
done
[ ! -e "$T2EXP_HOME/t2exp.db" ] || [ "$(sql 'SELECT count(*) FROM experiments')" = 0 ] || fail "a refused config made an experiment"

# Nothing hides the rest (probe_M): a duplicate key, and a missing searcher.name, are errors among
# the others; past 50 errors the count says how many were shown.
sed -e 's/^  max_trials: 2/  max_trials: 2\n  max_trials: 3/' -e 's/batches: 10}/batches: "10"}/' \
  -e 's/smaller_is_beter/smaller_is_better/' -e 's/max_trails: 2/max_concurrent_trials: 1/' "$WORK/typos.yaml" > "$WORK/dup.yaml"
expect_exit 2 "$T2EXP" preview "$WORK/dup.yaml"
expect_in "$OUT" "t2exp preview: $WORK/dup.yaml:12:3: searcher.max_trials: duplicate key"
expect_in "$OUT" "t2exp preview: $WORK/dup.yaml:13:25: searcher.max_length.batches: expected a positive integer, got the string \"10\""
expect_in "$OUT" "t2exp preview: $WORK/dup.yaml:14:1: min_validation_perod: unknown key"
expect_in "$OUT" "t2exp preview: 3 errors in $WORK/dup.yaml"
sed -e 's/^  name: random/  naem: random/' "$WORK/typos.yaml" > "$WORK/unnamed.yaml"
expect_exit 2 "$T2EXP" preview "$WORK/unnamed.yaml"
expect_in "$OUT" "t2exp preview: $WORK/unnamed.yaml:6:1: searcher.name: missing required key (is 'naem' at line 7, column 3 a typo of it?)"
expect_in "$OUT" "t2exp preview: $WORK/unnamed.yaml:9:3: searcher.smaller_is_beter: unknown key"
expect_in "$OUT" "t2exp preview: 5 errors in $WORK/unnamed.yaml"
{ cat "$WORK/typos.yaml"; for k in $(seq 10 69); do echo "typo_$k: 1"; done; } > "$WORK/many.yaml"
expect_exit 2 "$T2EXP" preview "$WORK/many.yaml"
expect_in "$OUT" "t2exp preview: 63 errors in $WORK/many.yaml (the first 50 shown)"

# --lenient: warnings with the same suggestions, and the run goes on.
expect_exit 0 "$T2EXP" preview "$WORK/typos.yaml" --lenient
expect_in "$OUT" "warning: $WORK/typos.yaml:10:3: unknown key 'searcher.max_trails' (ignored; did you mean 'max_trials'?)"
expect_exit 0 "$T2EXP" create "$WORK/typos.yaml" "$TRIALS/quadratic.so" --plain --lenient
expect_in "$OUT" "unknown key 'min_validation_perod' (ignored; did you mean 'min_validation_period'?)"
# --lenient is for the commands that load a config.
expect_exit 2 "$T2EXP" list --lenient
expect_in "$OUT" "unknown option --lenient"

# Determined's forms: time_metric + max_time, bare-integer max_length, slots_per_trial 0, a global
# batch that the slots do not divide, dotted names inside a group, the container keys.
cat > "$WORK/det.yaml" <<Y
name: det
hyperparameters:
  global_batch_size: 8
  overwrite_deepspeed_args:
    zero_optimization.stage: 2
  x: {type: int, minval: 0, maxval: 3}
searcher: {name: random, metric: loss, max_trials: 2, time_metric: batches, max_time: 20}
resources: {slots_per_trial: 0}
environment:
  image: determinedai/pytorch
  environment_variables: {cpu: [OMP_NUM_THREADS=1], cuda: [NCCL_DEBUG=INFO]}
Y
expect_exit 0 "$T2EXP" preview "$WORK/det.yaml"
expect_in "$OUT" "resources.slots_per_trial: 0 (Determined's CPU-only value) runs each trial on 1 slot"
expect_in "$OUT" "key 'environment.image' is accepted but ignored"
expect_in "$OUT" "key 'environment.environment_variables.cuda' is accepted but ignored: trials run on CPUs; the cpu list is used"
expect_in "$OUT" '"zero_optimization.stage":2'
expect_in "$OUT" "20"
# Three slots a trial: a pool with four (a hostfile; preview reads it, looks no host up).
printf 'localhost slots=4\n' > "$WORK/four.hosts"
expect_exit 0 "$T2EXP" preview "$WORK/det.yaml" --config searcher.max_length=30 --config searcher.time_metric=~ \
  --config searcher.max_time=~ --config resources.slots_per_trial=3 --config hyperparameters.global_batch_size=100 \
  --config resources.hostfile="$WORK/four.hosts"
expect_in "$OUT" "100 is not divisible by resources.slots_per_trial (3): each slot trains on 33 records a step, 99 in all"
expect_exit 2 "$T2EXP" preview "$WORK/det.yaml" --config searcher.time_metric=validation_loss
expect_in "$OUT" "searcher.time_metric: t2exp measures training in batches, records or epochs, got \"validation_loss\""

# Through the CLI: a key in the wrong section is named where it belongs, a misspelt word value gets
# a did-you-mean, a duplicate key has its path, and errors an override causes are placed at it.
cat > "$WORK/where.yaml" <<Y
name: where
max_concurrent_trials: 4
checkpoint_policy: bets
hyperparameters:
  global_batch_size: 4
  x: {type: double, minval: 1, maxval: 5}
searcher:
  name: radnom
  metric: loss
  max_length: 3
  max_trials: 2
  min_validation_period: {batches: 1}
Y
expect_exit 2 "$T2EXP" preview "$WORK/where.yaml"
expect_in "$OUT" "where.yaml:2:1: max_concurrent_trials: unknown key (did you mean 'searcher.max_concurrent_trials'?)"
expect_in "$OUT" "where.yaml:3:20: checkpoint_policy: expected one of best, all or none, got \"bets\" (did you mean 'best'?)"
expect_in "$OUT" "where.yaml:8:9: searcher.name: expected one of single, grid, random, adaptive_asha, tpe, pbt or custom, got \"radnom\" (did you mean 'random'?)"
sed -i -e '2,3d' -e 's/radnom/single/' "$WORK/where.yaml"
expect_exit 2 "$T2EXP" preview "$WORK/where.yaml"
expect_in "$OUT" "where.yaml:10:3: searcher.min_validation_period: unknown key (did you mean 'min_validation_period' at the top level?)"
sed -i '/min_validation_period/d' "$WORK/where.yaml"
printf '  max_trials: 3\n' >> "$WORK/where.yaml"
expect_exit 2 "$T2EXP" preview "$WORK/where.yaml"
expect_in "$OUT" "where.yaml:10:3: searcher.max_trials: duplicate key"
sed -i '$d' "$WORK/where.yaml"
expect_exit 2 "$T2EXP" preview "$WORK/where.yaml" --config searcher.metric=
expect_in "$OUT" "--config searcher.metric=: searcher.metric: missing required key"
expect_exit 2 "$T2EXP" preview "$WORK/where.yaml" --config hyperparameters.x.minval=10
expect_in "$OUT" "--config hyperparameters.x.minval=10: hyperparameters.x.minval: minval 10 is greater than maxval 5"
# A null max_length is absent: time_metric + max_time give the length.
expect_exit 0 "$T2EXP" preview "$WORK/where.yaml" --config searcher.max_length=null --config searcher.time_metric=batches --config searcher.max_time=7
expect_in "$OUT" "1 trial, 1 trained to 7"

# More slots a trial than the pool has: preview prints the plan and refuses as create does (exit 2),
# naming where slots_per_trial was set and what to change; a pool that has them (a hostfile) passes.
cat > "$WORK/eight.yaml" <<Y
name: eight
hyperparameters: {global_batch_size: 8}
searcher: {name: single, metric: loss, max_length: 2}
resources:
  slots_per_trial: 8
Y
printf 'localhost slots=8\n' > "$WORK/eight.hosts"
expect_exit 2 "$T2EXP" preview "$WORK/eight.yaml" --config resources.max_slots=1
expect_in "$OUT" "1 trial, 1 trained to 2"
expect_in "$OUT" "create would refuse this config here: $WORK/eight.yaml:5:20: resources.slots_per_trial = 8, but the slot pool has 1 slot(s)"
expect_in "$OUT" "give --config resources.slots_per_trial=1 (or fewer)"
expect_exit 2 "$T2EXP" create "$WORK/eight.yaml" "$TRIALS/quadratic.so" --plain --config resources.max_slots=1
expect_in "$OUT" "$WORK/eight.yaml:5:20: resources.slots_per_trial = 8, but the slot pool has 1 slot(s)"
expect_exit 0 "$T2EXP" preview "$WORK/eight.yaml" --config resources.hostfile="$WORK/eight.hosts"
expect_exit 2 "$T2EXP" preview "$WORK/eight.yaml" --config resources.hostfile="$WORK/none.hosts"
expect_in "$OUT" "resources.hostfile $WORK/none.hosts"

# A typed hyperparameter inside a list would be a constant, never searched: refused at its place.
# A map with keys of its own stays a constant (a schema's column).
cat > "$WORK/listed.yaml" <<Y
hyperparameters:
  global_batch_size: 1
  cols: [{name: age, type: int}]
  list_hparam: [10, {type: int, minval: 1, maxval: 2}]
searcher: {name: grid, metric: loss, max_length: 1}
Y
expect_exit 2 "$T2EXP" preview "$WORK/listed.yaml"
expect_in "$OUT" "listed.yaml:4:21: hyperparameters.list_hparam.1: a typed hyperparameter (type: int) inside a list would be a constant"
expect_exit 0 "$T2EXP" preview "$WORK/listed.yaml" --config 'hyperparameters.list_hparam=[10, 11]'
expect_in "$OUT" '"cols":[{"name":"age","type":"int"}]'

# A null controller_address is the key unset (it crashed the config's load: probe_L).
expect_exit 0 "$T2EXP" preview "$WORK/listed.yaml" --config 'hyperparameters.list_hparam=[1]' --config resources.controller_address=null
expect_exit 2 "$T2EXP" preview "$WORK/listed.yaml" --config 'hyperparameters.list_hparam=[1]' --config resources.controller_address=nowhere
expect_in "$OUT" "resources.controller_address: expected an IPv4 address of this machine"

# An experiment created with --lenient reads its stored config back under that rule (importance,
# evaluate, resume and activate refused it for its unknown key, and activate takes no --lenient:
# probe_M).
printf 'name: len\nhyperparameters: {global_batch_size: 1, x: {type: double, minval: 0, maxval: 1}, y: -2}\nsearcher: {name: random, metric: loss, max_length: 3, max_trials: 4}\nfooo: 1\n' > "$WORK/len.yaml"
expect_exit 0 "$T2EXP" create "$WORK/len.yaml" "$TRIALS/quadratic.so" --plain --lenient
n=$(sql "SELECT max(id) FROM experiments")
expect_exit 0 "$T2EXP" importance "$n"
expect_in "$OUT" "fANOVA"
# So are the overrides stored with it (review: an unknown key given as --config at create).
expect_exit 0 "$T2EXP" create "$WORK/len.yaml" "$TRIALS/quadratic.so" --plain --lenient --config fooo2=1
n=$(sql "SELECT max(id) FROM experiments")
expect_exit 0 "$T2EXP" importance "$n"
expect_in "$OUT" "fANOVA"

# Determined's other config files are named for what they are, not listed key by key.
printf 'port: 8080\ndb: {user: postgres, host: db}\ncheckpoint_storage: {type: shared_fs, host_path: /tmp}\n' > "$WORK/master.yaml"
expect_exit 2 "$T2EXP" preview "$WORK/master.yaml"
expect_in "$OUT" "$WORK/master.yaml:1:1: this looks like Determined's master configuration (master.yaml), with keys port, db, not an experiment config"
[ "$(grep -c "unknown key" <<<"$OUT")" = 0 ] || fail "a master.yaml got unknown-key errors: $OUT"
printf 'master_host: 10.0.0.1\nmaster_port: 8080\nresource_pool: default\n' > "$WORK/agent.yaml"
expect_exit 2 "$T2EXP" create "$WORK/agent.yaml" "$TRIALS/quadratic.so" --plain
expect_in "$OUT" "agent configuration (agent.yaml), with keys master_host, master_port, resource_pool"
# The kind with the most of its keys: the Helm chart's values.yaml has a db: section too.
printf 'masterPort: 8080\nuseNodePortForMaster: true\ndb:\n  hostAddress: x\nmaxSlotsPerPod: 1\n' > "$WORK/values.yaml"
expect_exit 2 "$T2EXP" preview "$WORK/values.yaml"
expect_in "$OUT" "Helm chart's values (values.yaml), with keys masterPort, useNodePortForMaster, maxSlotsPerPod"
# A near miss of searcher or hyperparameters makes it an experiment config with typos, whatever
# else it holds: the did-you-means, not "looks like a master config".
printf 'hyperparamters: {global_batch_size: 1}\nsearchr: {name: single}\nscheduler: {type: priority}\n' > "$WORK/typo.yaml"
expect_exit 2 "$T2EXP" preview "$WORK/typo.yaml"
expect_in "$OUT" "hyperparamters: unknown key (did you mean 'hyperparameters'?)"
[ "$(grep -c "looks like" <<<"$OUT")" = 0 ] || fail "a typo'd experiment config was taken for a master config: $OUT"
# An experiment config with one such key keeps its usual error at that key.
printf 'hyperparameters: {global_batch_size: 1}\nsearcher: {name: single, metric: loss, max_length: 1}\nport: 1\n' > "$WORK/port.yaml"
expect_exit 2 "$T2EXP" preview "$WORK/port.yaml"
expect_in "$OUT" "port.yaml:3:1: port: unknown key"

# environment_variables reach the trial's process: the hostile trial forges its report only when
# both variables are set, and neither is in this shell's environment.
command -v "${CC:-cc}" >/dev/null || { echo "config_strict: skipped the environment part (no C compiler)"; exit 77; }
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -shared -fPIC -I "$T2EXP_SOURCE/framework/include" \
  "$T2EXP_SOURCE/tests/integration/hostile_trial.c" -o "$WORK/hostile.so"
unset HOSTILE_ATTACK HOSTILE_VICTIM
echo "keep me" > "$WORK/victim"
cat > "$WORK/env.yaml" <<Y
name: env
hyperparameters: {global_batch_size: 1}
searcher: {name: single, metric: loss, max_length: 100}
max_restarts: 0
environment:
  environment_variables:
    - HOSTILE_ATTACK=abs
    - HOSTILE_VICTIM=$WORK/victim
Y
expect_exit 1 "$T2EXP" create "$WORK/env.yaml" "$WORK/hostile.so" --plain
n=$(sql "SELECT max(id) FROM experiments")
grep -q "hostile: forged a checkpoint report (abs)" <(exp_logs "$n") \
  || fail "environment_variables did not reach the trial: $(exp_logs "$n")"
[ -z "${HOSTILE_ATTACK:-}" ] || fail "the variable leaked into the shell"
[ "$(cat "$WORK/victim")" = "keep me" ] || fail "the victim file changed"
echo "config_strict: ok"
