#!/usr/bin/env bash
# A trial's `batches` column is what it last reported, whichever way it failed. An error the runner
# catches (a returned error, a NaN loss) is reported with the batch it came at: 35. A process that
# dies without a word (SIGSEGV) cannot say where it died: the column keeps its last report (batch 30,
# reports every scheduling_unit 10; none with the default 100: 0, which read as "never trained"
# beside the others' 35), and its error says so ("its last report was of batch 30"), as cli.md's
# `trials` row does. The same in a worker (resources.isolation's default), whose runner holds its
# reports for up to 5 ms to send them together: a fatal signal sends what it held first. And a
# checkpoint reported just before a crash is recorded: its file is the trial's latest.
source "$(dirname "$0")/common.bash"
command -v "${CC:-cc}" >/dev/null || { echo "trial_batches_reported: skipped (no C compiler)"; exit 77; }
cat > "$WORK/fail.c" <<'C'
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <t2exp.h>
#include "tiny_trial.h"
static volatile int sink;
/* Recurses until the stack is gone (no tail call: the frame is used after the call). */
static int deep(int n)
{
    volatile char pad[256];
    pad[0] = (char)n;
    sink = pad[0];
    return n ? deep(n + 1) + pad[0] : 0;
}
/* At batch fail_at (counted before it trains): how = segv, error, nan or overflow (the stack). */
static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)state, (void)b;
    int64_t at = -1;
    const char *how = "";
    if (t2_hp_int(ctx, "fail_at", &at) == T2_OK && t2_ctx_batches_trained(ctx) == at &&
        t2_hp_str(ctx, "how", &how) == T2_OK) {
        if (how[0] == 's') raise(SIGSEGV);
        if (how[0] == 'e') return t2_seterr(T2_EINVAL, "failing at batch %lld as asked", (long long)at);
        if (how[0] == 'n') return t2_metric(m, "loss", NAN);
        if (how[0] == 'o') sink = deep(1);
    }
    return t2_metric(m, "loss", 1.0);
}
T2_TRIAL(.name = "fail", .build_model = tiny_net_state, .build_training_loader = build_training_loader,
         .build_validation_loader = build_validation_loader, .train_batch = train_batch,
         .evaluate_batch = tiny_validate_loss, .destroy = tiny_net_state_free);
C
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -shared -fPIC -I "$T2EXP_SOURCE/framework/include" \
  -I "$T2EXP_SOURCE/tests/integration" "$WORK/fail.c" -o "$WORK/fail.so" -lm
cat > "$WORK/fail.yaml" <<Y
name: fail_at_35
hyperparameters: {global_batch_size: 1, fail_at: 35, how: {type: categorical, vals: [segv, error, nan, overflow]}}
searcher: {name: grid, metric: loss, max_length: {batches: 100}}
resources: {isolation: process_per_trial}
max_restarts: 1
Y
# How the crash ends: ASan catches the SIGSEGV itself and exits with status 1.
crash="killed by signal 11 (Segmentation fault)"
if grep -q "T2EXP_SANITIZE:BOOL=ON" "$T2EXP_BUILD/CMakeCache.txt"; then crash="exited with status 1"; fi
# row N HOW: "batches|error" of experiment N's trial that fails by HOW.
row() { sql "SELECT batches_trained || '|' || error FROM trials WHERE experiment_id = $1 AND hparams LIKE '%\"$2\"%'"; }

expect_exit 1 "$T2EXP" create "$WORK/fail.yaml" "$WORK/fail.so" --plain --config scheduling_unit=10 # ERRORED: none completed
[ "$(row 1 error)" = "35|train_batch: failing at batch 35 as asked" ] || fail "a returned error: $(row 1 error)"
[ "$(row 1 nan)" = "35|train_batch: t2_metric: loss is nan" ] || fail "a NaN: $(row 1 nan)"
[ "$(row 1 segv)" = "30|the trial process $crash; its last report was of batch 30" ] ||
  fail "a crash after the report at batch 30: $(row 1 segv)"
expect_in "$OUT" "failed (the trial process $crash; its last report was of batch 30); restart 1 of 1"
expect_in "$("$T2EXP" trials 1)" "its last report was of batch 30"

expect_exit 1 "$T2EXP" create "$WORK/fail.yaml" "$WORK/fail.so" --plain # scheduling_unit 100: no report before 35
[ "$(row 2 error)" = "35|train_batch: failing at batch 35 as asked" ] || fail "a returned error: $(row 2 error)"
[ "$(row 2 segv)" = "0|the trial process $crash; it had reported no batch" ] ||
  fail "a crash before any report: $(row 2 segv)"

# Workers: the same rows (experiment 3).
expect_exit 1 "$T2EXP" create "$WORK/fail.yaml" "$WORK/fail.so" --plain --config scheduling_unit=10 \
  --config resources.isolation=worker
[ "$(row 3 segv)" = "30|the trial process $crash; its last report was of batch 30" ] ||
  fail "a crash in a worker after the report at batch 30: $(row 3 segv)"
[ "$(row 3 error)" = "35|train_batch: failing at batch 35 as asked" ] || fail "a returned error in a worker: $(row 3 error)"
# A stack overflow: the handler runs on its own stack (there is none left), in a process of its own
# and in a worker alike.
for e in 1 3; do
  case "$(row $e overflow)" in
    "30|the trial process "*"; its last report was of batch 30") ;;
    *) fail "a stack overflow after the report at batch 30 (experiment $e): $(row $e overflow)" ;;
  esac
done

# A checkpoint every batch, a crash in the batch after the third: the third's checkpoint is the
# latest in the store, and no file is left that the store does not know (experiment 4).
cat > "$WORK/ckpt.yaml" <<Y
name: crash_after_checkpoint
hyperparameters: {global_batch_size: 1, x: 1, y: 1, model: 1, crash_at_batch: 3}
searcher: {name: single, metric: loss, max_length: {batches: 5}}
min_checkpoint_period: {batches: 1}
max_restarts: 0
Y
expect_exit 1 "$T2EXP" create "$WORK/ckpt.yaml" "$T2EXP_BUILD/trials/quadratic.so" --plain
[ "$(sql "SELECT group_concat(c.batches) FROM checkpoints c JOIN trials t ON t.id = c.trial_id
          WHERE t.experiment_id = 4 AND c.state = 'ACTIVE'")" = 3 ] || fail "the checkpoint before the crash is not the latest: $(sql "SELECT batches, state FROM checkpoints")"
files=$(ls "$T2EXP_HOME/experiments/4/checkpoints" | wc -l)
[ "$files" = 1 ] || fail "$files checkpoint files for one recorded: $(ls "$T2EXP_HOME/experiments/4/checkpoints")"
store_ok
echo "trial_batches_reported: an error or NaN shows its batch (35), a crash its last report (30, or none), and says so, in a worker too; a crash keeps the checkpoint before it"
