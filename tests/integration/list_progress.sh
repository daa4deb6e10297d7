#!/usr/bin/env bash
# `t2exp list`'s progress counts the length the trials trained, not only the trials that ended (as
# Determined's searchers count work done): a single trial stopped at 300 of its 600 batches is
# 50% (it showed 0.0% until the trial ended), a random search of 2 at its first trial's 300 of
# 600 is 25%, a grid of 4 with two done and one at half 62.5%. Each
# experiment ends at 100%. The trial below waits at batch stall_at until the file `go` exists, so
# the experiment is ACTIVE with a known part trained while the test reads the listing.
source "$(dirname "$0")/common.bash"
command -v "${CC:-cc}" >/dev/null || { echo "list_progress: skipped (no C compiler)"; exit 77; }
cat > "$WORK/stall.c" <<'C'
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <t2exp.h>
#include "tiny_trial.h"
/* At batch stall_at (when the hparam is there), waits for the file `go` (a minute at most). The
 * batch before takes 20 ms: a worker's runner holds its reports until a batch that took 5 ms or
 * more ends, and the one that waits has not ended. */
static int train_batch(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)state, (void)b;
    int64_t at = -1;
    const char *go = NULL;
    struct timespec tick = {0, 20 * 1000 * 1000};
    if (t2_hp_int(ctx, "stall_at", &at) == T2_OK && t2_ctx_batches_trained(ctx) == at - 1) nanosleep(&tick, NULL);
    if (at >= 0 && t2_ctx_batches_trained(ctx) == at && t2_hp_str(ctx, "go", &go) == T2_OK)
        for (int i = 0; i < 3000 && access(go, F_OK) != 0; i++) nanosleep(&tick, NULL);
    return t2_metric(m, "loss", 1.0);
}
T2_TRIAL(.name = "stall", .build_model = tiny_net_state, .build_training_loader = build_training_loader,
         .build_validation_loader = build_validation_loader, .train_batch = train_batch,
         .evaluate_batch = tiny_validate_loss, .destroy = tiny_net_state_free);
C
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -shared -fPIC -I "$T2EXP_SOURCE/framework/include" \
  -I "$T2EXP_SOURCE/tests/integration" "$WORK/stall.c" -o "$WORK/stall.so" -lm

# progress N: experiment N's progress as the listing's CSV gives it (a fraction), to 4 places.
progress() { "$T2EXP" list --csv | awk -F, -v id="$1" '$1 == id { printf "%.4f\n", $6 }'; }

# run N WANT SEARCHER HPARAMS: experiment N waits at batch 300 of a trial; its progress must read WANT.
run() {
  local n=$1 want=$2 searcher=$3 hp=$4 p=
  rm -f "$WORK/go"
  cat > "$WORK/e$n.yaml" <<Y
name: progress_$n
hyperparameters: {global_batch_size: 1, go: "$WORK/go", $hp}
searcher: {$searcher, metric: loss, max_length: {batches: 600}, max_concurrent_trials: 1}
scheduling_unit: 50
min_validation_period: {batches: 600}
resources: {max_slots: 1}
Y
  "$T2EXP" create "$WORK/e$n.yaml" "$WORK/stall.so" --plain > "$WORK/e$n.out" 2>&1 &
  local ctl=$!
  # The trial reported batch 300 and waits; the report's commit carries the progress.
  for _ in $(seq 300); do
    p=$(progress "$n")
    [ "$p" = "$want" ] && break
    sleep 0.1
  done
  touch "$WORK/go"
  wait "$ctl" || fail "experiment $n failed: $(cat "$WORK/e$n.out")"
  [ "$p" = "$want" ] || fail "experiment $n ($searcher) with a trial at 300 of 600 batches shows progress $p, wanted $want
$("$T2EXP" trials "$n")"
  [ "$(progress "$n")" = 1.0000 ] || fail "experiment $n ended at $(progress "$n")"
  echo "list_progress: $searcher: $p while a trial was at 300 of 600 batches, 1 at its end"
}

run 1 0.5000 "name: single" "stall_at: 300"
# The first of two trials waits at 300: 0.5 / 2.
run 2 0.2500 "name: random, max_trials: 2" "stall_at: 300"
# The grid runs its points in `t2exp preview`'s order, 902, 901, 300, 900: two done, one at half,
# one to go: (2 + 0.5) / 4.
run 3 0.6250 "name: grid" "stall_at: {type: categorical, vals: [900, 300, 901, 902]}"
store_ok
echo "list_progress: ok"
