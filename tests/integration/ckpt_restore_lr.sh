#!/usr/bin/env bash
# A restored optimizer has the rate its last step used: a trial that reads t2_optim_lr() before
# stepping sees, after a restart from a checkpoint, what a run that never stopped sees (it saw the
# rate the optimizer was created with until its first step, and so reported, or trained, otherwise).
source "$(dirname "$0")/common.bash"
command -v "${CC:-cc}" >/dev/null || { echo "ckpt_restore_lr: skipped (no C compiler)"; exit 77; }
"${CC:-cc}" -std=c11 -shared -fPIC -I "$T2EXP_SOURCE/framework/include" "$T2EXP_SOURCE/tests/integration/lr_probe_trial.c" \
  -o "$WORK/lr.so" -lm
cat > "$WORK/lr.yaml" <<Y
name: lr_probe
hyperparameters: {global_batch_size: 10}
searcher: {name: single, metric: val_mse, smaller_is_better: true, max_length: {batches: 40}}
min_checkpoint_period: {batches: 5}
scheduling_unit: 1
max_restarts: 1
reproducibility: {experiment_seed: 1}
Y
expect_exit 0 "$T2EXP" create "$WORK/lr.yaml" "$WORK/lr.so" --quiet
touch "$WORK/fail_once"
expect_exit 0 "$T2EXP" create "$WORK/lr.yaml" "$WORK/lr.so" --quiet --config data.fail_once_file="$WORK/fail_once"
[ ! -e "$WORK/fail_once" ] || fail "the second run did not fail and restart"
[ "$(sql "SELECT restarts FROM trials WHERE experiment_id = 2")" = 1 ] || fail "the second run should have restarted once"
lrs() { sql "SELECT group_concat(batches || '=' || printf('%.12g', value), ' ') FROM (SELECT m.batches, m.value FROM metrics m
             JOIN trials t ON t.id = m.trial_id WHERE t.experiment_id = $1 AND m.name = 'lr_before_step' AND m.batches > 20
             ORDER BY m.batches)"; }
a=$(lrs 1) b=$(lrs 2)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "the rates read after the restart differ:
uninterrupted $a
restarted     $b"
echo "ckpt_restore_lr: the rate read before each step after a restart is the uninterrupted run's"
