#!/usr/bin/env bash
# Bad input through the real CLI: each case a clear message, the right exit code, nothing
# aborted, and the store intact afterwards.
source "$(dirname "$0")/common.bash"
# A crashing trial must die by its signal, not by AddressSanitizer's report of it.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:handle_segv=0"
Q="$EXAMPLES/quadratic_random.yaml"
QT="$TRIALS/quadratic.so"
cfg() { printf '%s\n' "$@" > "$WORK/c.yaml"; }
# qcfg EXTRA_HPARAM MAX_RESTARTS METRIC [MORE LINES...] — a single-trial quadratic config.
qcfg() {
  local extra=$1 restarts=$2 metric=$3; shift 3
  cfg "name: q" "hyperparameters:" "  global_batch_size: 1" "  x: 0.5" "  y: -1" "  $extra" \
      "searcher:" "  name: single" "  metric: $metric" "  max_length: {batches: 3}" "max_restarts: $restarts" "$@"
}

# A first good experiment, so that later failures can be checked not to damage it.
expect_exit 0 "$T2EXP" create "$Q" "$QT" --config searcher.max_trials=2 --quiet

# Config errors: exit 2 with file:line:column and the key path.
cfg "name: q" "hyperparameters:" "  global_batch_size: [1" "searcher: {}"
expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$QT"
expect_in "$OUT" "c.yaml:"
expect_in "$OUT" "YAML syntax error"
cfg "name: q" "hyperparameters:" "  global_batch_size: 1" "searcher:" "  name: single" "  metric: loss" \
    "  max_length:" "    batches: ten"
expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$QT"
expect_in "$OUT" "c.yaml:8:14: searcher.max_length.batches"
cfg "name: q" "hyperparameters:" "  x: 1" "searcher: {name: single, metric: loss, max_length: {batches: 3}}"
expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$QT"
expect_in "$OUT" "global_batch_size"
qcfg "sleep_ms: 0" 0 loss "resources: {slots_per_trial: 2}"
expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$QT"
expect_in "$OUT" "1 is less than resources.slots_per_trial (2)" # not divisible is rounded now (a warning), as in Determined

# Trial objects: missing, not a shared object, no t2_trial symbol, another ABI version.
qcfg "sleep_ms: 0" 0 loss
expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$WORK/nope.so"
expect_in "$OUT" "no such file"
echo "not an ELF file" > "$WORK/text.so"
expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$WORK/text.so"
expect_in "$OUT" "cannot be loaded as a shared object"
# A path far longer than a message's buffer: the message keeps its end, the reason.
long="$WORK"; for _ in 1 2 3 4 5 6 7 8 9 10; do long="$long/$(printf 'p%.0s' $(seq 200))"; done
mkdir -p "$long" && cp "$WORK/text.so" "$long/text.so"
expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$long/text.so"
expect_in "$OUT" "ppp...ppp"
expect_in "$OUT" "/text.so: file too short"
expect_in "$OUT" "cannot be loaded as a shared object"
# Trial objects compiled here (skipped, saying so, without a C compiler: the rest still runs).
cc=${CC:-cc}
if command -v "$cc" >/dev/null; then
  echo 'int something(void) { return 1; }' > "$WORK/nosym.c"
  "$cc" -shared -fPIC "$WORK/nosym.c" -o "$WORK/nosym.so"
  expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$WORK/nosym.so"
  expect_in "$OUT" "does not export the symbol t2_trial"
  # A t2_trial that is a function, not the definition: refused, never read as one.
  echo 'int t2_trial(void) { return 1; }' > "$WORK/fnsym.c"
  "$cc" -shared -fPIC "$WORK/fnsym.c" -o "$WORK/fnsym.so"
  expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$WORK/fnsym.so"
  expect_in "$OUT" "its symbol t2_trial is code (a function?)"
  cat > "$WORK/abi.c" <<C
#include <t2exp.h>
__attribute__((visibility("default"))) const t2_trial_def t2_trial = {.abi_version = 999, .name = "old"};
C
  "$cc" -shared -fPIC -I"$T2EXP_SOURCE/framework/include" "$WORK/abi.c" -o "$WORK/abi.so"
  expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$WORK/abi.so"
  expect_in "$OUT" "ABI version 999"
else
  echo "cli_errors: trial objects that need a C compiler: skipped (no $cc)"
fi

# Trials that fail: an error from train_batch, a NaN loss, a crash, a metric never reported. Each
# experiment records the failure with its reason and exits 1.
last_trial_error() { sql "SELECT error FROM trials WHERE experiment_id=(SELECT max(id) FROM experiments)"; }

qcfg "fail_at_batch: 1" 0 loss
expect_exit 1 "$T2EXP" create "$WORK/c.yaml" "$QT" --plain
expect_in "$OUT" "errored"
expect_in "$(last_trial_error)" "train_batch: quadratic: failing at batch 1 as asked"
[ "$(sql "SELECT state FROM experiments WHERE id=(SELECT max(id) FROM experiments)")" = ERRORED ] || fail "experiment should be ERRORED"

qcfg "nan_at_batch: 2" 0 loss
expect_exit 1 "$T2EXP" create "$WORK/c.yaml" "$QT" --plain
expect_in "$(last_trial_error)" "loss is nan"

qcfg "crash_at_batch: 1" 1 loss
expect_exit 1 "$T2EXP" create "$WORK/c.yaml" "$QT" --plain
expect_in "$OUT" "restart 1 of 1"
expect_in "$(last_trial_error)" "killed by signal 11"
[ "$(sql "SELECT restarts FROM trials WHERE experiment_id=(SELECT max(id) FROM experiments)")" = 1 ] || fail "the crashed trial was restarted once"

qcfg "sleep_ms: 0" 0 accuracy
expect_exit 1 "$T2EXP" create "$WORK/c.yaml" "$QT" --plain
expect_in "$(last_trial_error)" "did not report the searcher metric 'accuracy' (reported: loss)"

# Invalid hyperparameters (T2_EHPARAM): no restart, and random search draws replacements until it
# has max_trials usable trials.
cat > "$WORK/inv.yaml" <<Y
name: invalid
hyperparameters:
  global_batch_size: 1
  x: {type: double, minval: -5, maxval: 5}
  y: -2
  invalid_above: 0
searcher: {name: random, metric: loss, max_length: {batches: 2}, max_trials: 6}
reproducibility: {experiment_seed: 5}
max_restarts: 3
Y
# Six trials completed beside the invalid ones: the experiment COMPLETED, exit 0.
expect_exit 0 "$T2EXP" create "$WORK/inv.yaml" "$QT" --plain
id=$(sql "SELECT max(id) FROM experiments")
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=$id AND state='COMPLETED'")" = 6 ] || fail "6 usable trials expected"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=$id AND state='ERRORED' AND restarts=0 AND error LIKE '%above invalid_above%'")" -ge 1 ] || fail "invalid trials errored without restarts"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=$id AND restarts > 0")" = 0 ] || fail "no restarts for invalid hparams"

# Nothing above disturbed the first experiment or the store.
[ "$(sql "SELECT state FROM experiments WHERE id=1")" = COMPLETED ] || fail "experiment 1 changed"
store_ok

# A damaged store is store trouble (exit 3) for every command, a run's too, and says where.
bad="$WORK/badhome"
mkdir -p "$bad"
head -c 65536 /dev/urandom > "$bad/t2exp.db"
cp "$T2EXP_HOME/t2exp.db" "$WORK/saved.db"
expect_exit 3 "$T2EXP" --home "$bad" list
expect_in "$OUT" "$bad/t2exp.db"
expect_exit 3 "$T2EXP" --home "$bad" create "$WORK/inv.yaml" "$QT" --plain
expect_in "$OUT" "t2exp create: store $bad/t2exp.db"
expect_exit 3 "$T2EXP" --home "$bad" resume 1
expect_in "$OUT" "t2exp resume: store $bad/t2exp.db"
cmp -s "$T2EXP_HOME/t2exp.db" "$WORK/saved.db" || fail "the working store changed"
# A home with no store yet lists as empty (a fresh machine's `list --json | jq` got exit 3 and no
# JSON): the same columns as an empty store, exit 0, and nothing made in the home or left in TMPDIR.
fresh="$WORK/fresh-home"
scratch="$WORK/scratch" && mkdir -p "$scratch"
TMPDIR="$scratch" expect_exit 0 "$T2EXP" --home "$fresh" list --json
[ "$OUT" = "[]" ] || fail "list --json of a fresh home: '$OUT'"
TMPDIR="$scratch" expect_exit 0 "$T2EXP" --home "$fresh" list --csv
[ "$OUT" = "id,name,state,searcher,trials,progress,best_metric,started,duration,controller_running" ] || fail "list --csv of a fresh home: '$OUT'"
TMPDIR="$scratch" expect_exit 0 "$T2EXP" --home "$fresh" model list --json
[ "$OUT" = "[]" ] || fail "model list --json of a fresh home: '$OUT'"
expect_exit 3 "$T2EXP" --home "$fresh" describe 1
expect_in "$OUT" "does not exist"
# So do the commands that name what they change: they made an empty store there and said "no
# experiment" with exit 2 (probe_M), and plot said it with exit 2.
for c in "kill 1.0" "resume 1" "activate 1" "delete 1 --yes" "model register m 1" "model delete m --yes" \
         "plot 1 --out $WORK/plots"; do
  expect_exit 3 "$T2EXP" --home "$fresh" $c
  expect_in "$OUT" "does not exist"
done
# A reader that leaves at once (SIGPIPE) leaves no scratch store behind; a TMPDIR that is not
# there falls back to /tmp.
for _ in 1 2 3; do
  TMPDIR="$scratch" "$T2EXP" --home "$fresh" list --json | true || true
  TMPDIR="$scratch" "$T2EXP" --home "$fresh" model list | true || true
done
TMPDIR="$WORK/not-there" expect_exit 0 "$T2EXP" --home "$fresh" list --json
[ "$OUT" = "[]" ] || fail "list --json with a missing TMPDIR: '$OUT'"
[ ! -e "$fresh" ] && [ -z "$(ls -A "$scratch")" ] || fail "listing a fresh home left files: $(ls -A "$fresh" "$scratch" 2>&1)"
# Every command's unknown option gets the nearest of its own and the list, also those that parse
# their own options (probe_M: pipelines, pipeline status/run, plot, model, dashboard and the global
# ones said only "unknown option").
for c in "pipelines --jsno:--json" "pipeline status x.yaml --jsno:--json" "pipeline run x.yaml --jbos 1:--jobs" \
         "plot 1 --otu x:--out" "model list --jsno:--json" "dashboard --prot 1:--port" "--hoem x list:--home"; do
  expect_exit 2 "$T2EXP" ${c%%:*}
  expect_in "$OUT" "(did you mean ${c##*:}?)"
  expect_in "$OUT" "takes"
done
# A usage error names its command's help, and ids are digits only (" 1" and "+1" once meant 1).
expect_exit 2 "$T2EXP" describe abc
expect_in "$OUT" "(see t2exp describe --help)"
expect_exit 2 "$T2EXP" delete --yes " 1"
expect_in "$OUT" "not an experiment id:  1"
expect_exit 2 "$T2EXP" resume +1
expect_in "$OUT" "not an experiment id: +1"
if command -v "$cc" >/dev/null; then # (the trial objects below are compiled here)
# A metric whose values overflow a double when combined fails its trial naming it (it said
# "report: json: cannot write inf").
cat > "$WORK/ovf.c" <<'C'
#include <t2exp.h>
#include "tiny_trial.h"
static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)ctx, (void)state, (void)b;
    int rc = t2_metric_reduce(m, "huge", 1.5e308, T2_REDUCE_SUM);
    return rc ? rc : t2_metric(m, "loss", 1.0);
}
T2_TRIAL(.name = "ovf", .build_model = tiny_net_state, .build_training_loader = build_training_loader,
         .build_validation_loader = build_validation_loader, .train_batch = train_batch,
         .evaluate_batch = tiny_validate_loss, .destroy = tiny_net_state_free);
C
"$cc" -std=c11 -shared -fPIC -I "$T2EXP_SOURCE/framework/include" -I "$T2EXP_SOURCE/tests/integration" "$WORK/ovf.c" \
  -o "$WORK/ovf.so" -lm
qcfg "sleep_ms: 0" 0 loss
expect_exit 1 "$T2EXP" create "$WORK/c.yaml" "$WORK/ovf.so" --plain --config max_restarts=0
expect_in "$(last_trial_error)" "metric huge: its sum over the window is inf"
# t2_step_optimizer outside train_batch (here in evaluate_batch) is refused: validation changed
# the model before, and --test then blamed the checkpoint.
cat > "$WORK/evalstep.c" <<'C'
#include <stdlib.h>
#include <t2exp.h>
#include "tiny_trial.h"
typedef struct { float w[1], g[1]; t2_optim *opt; } st;
static int build_model(t2_ctx *ctx, void **state)
{
    st *s = calloc(1, sizeof *s);
    if (!s) return T2_ENOMEM;
    *state = s;
    t2_sgd_params sp = t2_sgd_default();
    int rc = t2_wrap_params(ctx, "w", s->w, s->g, 1);
    if (!rc) rc = t2_sgd_create(&s->opt, &sp, 1);
    return rc ? rc : t2_wrap_optimizer(ctx, s->opt);
}
static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)state, (void)b;
    int rc = t2_step_optimizer(ctx);
    return rc ? rc : t2_metric(m, "loss", 1.0);
}
static int evaluate_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)state, (void)b;
    int rc = t2_step_optimizer(ctx);
    return rc ? rc : t2_metric(m, "loss", 1.0);
}
static void destroy(void *state)
{
    st *s = state;
    if (s) t2_optim_free(s->opt);
    free(s);
}
T2_TRIAL(.name = "evalstep", .build_model = build_model, .build_training_loader = build_training_loader,
         .build_validation_loader = build_validation_loader, .train_batch = train_batch,
         .evaluate_batch = evaluate_batch, .destroy = destroy);
C
"$cc" -std=c11 -shared -fPIC -I "$T2EXP_SOURCE/framework/include" -I "$T2EXP_SOURCE/tests/integration" "$WORK/evalstep.c" \
  -o "$WORK/evalstep.so" -lm
expect_exit 1 "$T2EXP" create "$WORK/c.yaml" "$WORK/evalstep.so" --plain --config max_restarts=0
expect_in "$(last_trial_error)" "evaluate_batch: t2_step_optimizer belongs in train_batch"
fi
echo "cli_errors: ok"
