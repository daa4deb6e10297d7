#!/usr/bin/env bash
# raw_mlp (trials/raw_mlp.c: an MLP in plain arrays, t2_wrap_params, no t2_net) learns a known
# function from CSV files: y = sin(2 u1) + u2 u3 - 0.5 u4^2 + 1 plus Gaussian noise of standard
# deviation 0.1 (tests/tools/regression_csv.awk; x4 on another scale). The validation RMSE must
# end below 0.2 (the noise alone gives 0.1; predicting the mean gives 0.85). Then: export
# lists the raw buffers by name with the right sizes, and a warm start into a model whose hidden
# layer changed size fails naming the buffer and both sizes.
source "$(dirname "$0")/common.bash"
GEN="$T2EXP_SOURCE/tests/tools/regression_csv.awk"
awk -v n=2000 -v seed=1 -v noise=0.1 -f "$GEN" > "$WORK/train.csv"
awk -v n=500 -v seed=2 -v noise=0.1 -f "$GEN" > "$WORK/val.csv"
DATA=(--config "data.train_csv=$WORK/train.csv" --config "data.val_csv=$WORK/val.csv")

expect_exit 0 "$T2EXP" create "$EXAMPLES/raw_mlp.yaml" "$TRIALS/raw_mlp.so" --quiet "${DATA[@]}"
[ "$(sql "SELECT state FROM trials WHERE id=1")" = COMPLETED ] || fail "the trial did not complete"
rmse=$(sql "SELECT value FROM metrics WHERE trial_id=1 AND kind='validation' AND name='rmse' ORDER BY batches DESC LIMIT 1")
[ -n "$rmse" ] || fail "no validation rmse"
echo "raw_mlp: validation rmse $rmse (noise 0.1, bound 0.2)"
awk -v r="$rmse" 'BEGIN { exit !(r < 0.2) }' || fail "validation rmse $rmse is not below 0.2"

# The four arrays are the checkpoint's tensors: 4-64-1 is 256 + 64 + 64 + 1 floats.
export_last 1 "$WORK/params.bin"
for t in fc1.weight,256,0,256 fc1.bias,64,256,64 fc2.weight,64,320,64 fc2.bias,1,384,1; do
  grep -q "^$t" <<<"$OUT" || fail "export does not list $t: $OUT"
done
[ "$(stat -c %s "$WORK/params.bin")" = $((385 * 4)) ] || fail "params.bin should hold 385 floats"

# A buffer whose size changed since the checkpoint: the restore names it and both sizes.
expect_exit 1 "$T2EXP" create "$EXAMPLES/raw_mlp.yaml" "$TRIALS/raw_mlp.so" --quiet "${DATA[@]}" \
  --config hyperparameters.hidden=32 --config max_restarts=0 --from-checkpoint "$LAST"
log=$(exp_logs 2)
expect_in "$log" "raw buffer fc1.weight holds 256 floats in the checkpoint but 128 in the trial"
store_ok
echo "raw_mlp: ok"
