#!/usr/bin/env bash
# The controller acts only on checkpoint paths it made itself. A trial that writes forged
# checkpoint reports onto its channel (hostile_trial.c: an absolute path to a file outside the
# experiment, a "../"-laden uuid, a "../"-laden extension) gets each report refused and is
# stopped and errored; the file it named survives garbage collection (which, before, deleted it
# once newer checkpoints came), and the store never records it.
source "$(dirname "$0")/common.bash"
command -v "${CC:-cc}" >/dev/null || { echo "ckpt_report_trust: skipped (no C compiler)"; exit 77; }
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -shared -fPIC -I "$T2EXP_SOURCE/framework/include" \
  "$T2EXP_SOURCE/tests/integration/hostile_trial.c" -o "$WORK/hostile.so"

cat > "$WORK/c.yaml" <<Y
name: hostile
hyperparameters: {global_batch_size: 1}
searcher: {name: single, metric: loss, smaller_is_better: true, max_length: {batches: 200}}
min_checkpoint_period: {batches: 50}
min_validation_period: {batches: 50}
checkpoint_storage: {save_trial_latest: 1, save_trial_best: 0, save_experiment_best: 0}
max_restarts: 2
Y
export HOSTILE_VICTIM="$WORK/victim"
n=0
for attack in abs dots ext; do
  n=$((n + 1))
  echo "keep me" > "$HOSTILE_VICTIM"
  HOSTILE_ATTACK=$attack expect_exit 1 "$T2EXP" create "$WORK/c.yaml" "$WORK/hostile.so" --plain
  grep -q "hostile: forged" <(exp_logs "$n") || fail "$attack: the trial never forged its report"
  expect_in "$OUT" "rejected checkpoint report"
  [ "$(cat "$HOSTILE_VICTIM")" = "keep me" ] || fail "$attack: the file named by a forged report was deleted"
  [ "$(sql "SELECT count(*) FROM checkpoints c JOIN trials t ON t.id = c.trial_id
            WHERE t.experiment_id = $n AND (c.path NOT LIKE '%/experiments/$n/checkpoints/%' OR c.path LIKE '%victim%')")" = 0 ] \
    || fail "$attack: the store recorded a checkpoint outside the experiment"
  [ "$(sql "SELECT state || ' ' || restarts FROM trials WHERE experiment_id = $n")" = "ERRORED 0" ] \
    || fail "$attack: the trial should be errored without restarts"
  expect_in "$(sql "SELECT error FROM trials WHERE experiment_id = $n")" "rejected checkpoint report"
done
# Garbage collection ran and deleted inside the experiment (the 50-batch checkpoint was
# written before the forgery; the real ones are still the store's), yet never outside.
store_ok
echo "ckpt_report_trust: ok"
