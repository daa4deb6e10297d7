#!/usr/bin/env bash
# A distributed trial with batchnorm validates with the statistics its checkpoint keeps: the ranks'
# running statistics are averaged after every batch (each rank validated with its own before, and
# only the checkpoint averaged them). So `create --test` passes on 2 slots (the checkpoint restored
# into a fresh model validates as the trial did; it failed, 8.52193942 against 8.52192842), and
# `t2exp evaluate` of the final checkpoint prints the validation recorded with it (0.0746 against
# 0.0820 before).
source "$(dirname "$0")/common.bash"
have_mpi || { echo "dist_batchnorm: skipped (built without MPI)"; exit 77; }
command -v "${CC:-cc}" >/dev/null || { echo "dist_batchnorm: skipped (no C compiler)"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"   # Open MPI's own allocations are not ours to check
"${CC:-cc}" -std=c11 -shared -fPIC -I "$T2EXP_SOURCE/framework/include" "$T2EXP_SOURCE/tests/integration/batchnorm_trial.c" \
  -o "$WORK/bn.so" -lm
cat > "$WORK/bn.yaml" <<Y
name: bn
hyperparameters: {global_batch_size: 20}
searcher: {name: single, metric: val_mse, smaller_is_better: true, max_length: {batches: 50}}
reproducibility: {experiment_seed: 1}
resources: {slots_per_trial: 2}
Y
expect_exit 0 "$T2EXP" create "$WORK/bn.yaml" "$WORK/bn.so" --test
expect_in "$OUT" "test mode: passed"
expect_exit 0 "$T2EXP" create "$WORK/bn.yaml" "$WORK/bn.so" --quiet
recorded=$(sql "SELECT printf('%.6f', metric) FROM checkpoints WHERE state = 'ACTIVE' ORDER BY batches DESC LIMIT 1")
e=$(sql "SELECT max(id) FROM experiments")
expect_exit 0 "$T2EXP" evaluate "$e" "$WORK/bn.so"
got=$(awk '$1 == "val_mse" { printf "%.6f", $2 }' <<<"$OUT")
[ -n "$recorded" ] && [ "$got" = "$recorded" ] || fail "evaluate gives val_mse $got, the checkpoint recorded $recorded: $OUT"
store_ok
echo "dist_batchnorm: --test passes on 2 slots; evaluate gives the recorded $recorded"
