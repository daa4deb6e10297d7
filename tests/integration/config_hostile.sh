#!/usr/bin/env bash
# Hostile and careless configs through the real CLI (issue 18, items 4-8): each is refused with
# exit 2 and a message that says where, quickly and in little memory, and `create` records
# nothing. Before: the alias bomb took 10.4 GB over 16 s and exited 0; max_trials=2^63-1 reached
# 5.6 GB; a NaN hyperparameter recorded an experiment that then ERRORED ("json: cannot write
# nan", exit 1); a FIFO as the config hung at open.
source "$(dirname "$0")/common.bash"
QT="$TRIALS/quadratic.so"
# An AddressSanitizer build reserves terabytes of address space and pads every allocation, so the
# address-space guard and the RSS bound apply to plain builds only.
asan=0
# (grep reads all of ldd's output: with -q it could stop early, ldd would die of SIGPIPE, and
# pipefail would then call an ASan build a plain one, whose shadow memory the limit below refuses.)
ldd "$T2EXP" 2>/dev/null | grep libasan >/dev/null && asan=1

# run_measured CMD... — runs CMD under /usr/bin/time -v: output in $OUT, exit code in $RC, peak
# resident set in RSS_KB (0 without /usr/bin/time). Without ASan the command also runs under a
# 4 GB address-space limit, so that a regression fails instead of eating the machine.
run_measured() {
  set +e
  if [ -x /usr/bin/time ]; then
    OUT=$( ( [ $asan = 1 ] || ulimit -v 4000000; exec /usr/bin/time -v -o "$WORK/time.txt" "$@" ) 2>&1 )
    RC=$?
    RSS_KB=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$WORK/time.txt")
  else
    OUT=$( ( [ $asan = 1 ] || ulimit -v 4000000; exec "$@" ) 2>&1 )
    RC=$?
    RSS_KB=0
  fi
  set -e
}

header() {
  cat <<Y
name: hostile
hyperparameters:
  global_batch_size: 1
  x: 0.5
  y: -1
searcher: {name: single, metric: loss, max_length: {batches: 1}}
Y
}

# ---- 4. a 1 MiB anchored string aliased 100 x 10 x 4 times: refused at the alias, in little memory
{
  header
  printf 'data:\n  s: &s "'
  head -c 1048576 /dev/zero | tr '\0' x
  printf '"\n  l1: &l1 [*s'; for _ in $(seq 99); do printf ', *s'; done; printf ']\n'
  printf '  l2: &l2 [*l1'; for _ in $(seq 9); do printf ', *l1'; done; printf ']\n'
  printf '  l3: [*l2, *l2, *l2, *l2]\n'
} > "$WORK/bomb.yaml"
run_measured "$T2EXP" preview "$WORK/bomb.yaml"
[ "$RC" = 2 ] || fail "alias bomb: exit $RC (wanted 2): $OUT"
expect_in "$OUT" "bomb.yaml:9:"
expect_in "$OUT" "the document expands to more than"
expect_in "$OUT" "refusing to load"
echo "alias bomb: peak RSS ${RSS_KB} KB"
if [ $asan = 0 ] && [ "$RSS_KB" -gt 0 ]; then
  [ "$RSS_KB" -lt 204800 ] || fail "alias bomb: peak RSS $RSS_KB KB, wanted under 200 MB"
fi

# Anchors for shared hyperparameter blocks still work, through preview and create.
cat > "$WORK/shared.yaml" <<Y
name: shared
hyperparameters:
  global_batch_size: 1
  x: &range {type: double, minval: -1, maxval: 1, count: 3}
  y: *range
searcher: {name: grid, metric: loss, max_length: {batches: 1}}
Y
expect_exit 0 "$T2EXP" preview "$WORK/shared.yaml" --json
[ "$(json 'json_array_length(j)')" = 9 ] || fail "shared anchors: 3 x 3 grid expected"

# ---- 6. plans past the stated maxima
expect_exit 2 "$T2EXP" preview "$EXAMPLES/quadratic_random.yaml" --config searcher.max_trials=9223372036854775807
expect_in "$OUT" "--config searcher.max_trials=9223372036854775807: searcher.max_trials: expected at most 1000000 trials"
cat > "$WORK/asha.yaml" <<Y
hyperparameters: {global_batch_size: 1, x: {type: double, minval: -5, maxval: 5}}
searcher: {name: adaptive_asha, metric: loss, max_length: {batches: 64},
           max_trials: 5000000}
Y
expect_exit 2 "$T2EXP" preview "$WORK/asha.yaml"
expect_in "$OUT" "asha.yaml:3:24: searcher.max_trials: expected at most 1000000 trials, got 5000000"
cat > "$WORK/grid.yaml" <<Y
hyperparameters:
  global_batch_size: 1
  a: {type: double, minval: 0, maxval: 1, count: 4294967296}
  b: {type: double, minval: 0, maxval: 1, count: 4294967296}
  c: {type: int, minval: 0, maxval: 9, count: 10}
searcher: {name: grid, metric: loss, max_length: {batches: 1}}
Y
expect_exit 2 "$T2EXP" preview "$WORK/grid.yaml"
expect_in "$OUT" "grid.yaml:2:3: hyperparameters: the grid has more than 18446744073709551615 points"
expect_exit 2 "$T2EXP" preview "$EXAMPLES/quadratic_random.yaml" --config searcher.max_length.batches=9223372036854775807
expect_in "$OUT" "expected at most 1000000000000 batches"

# ---- 7. NaN and infinity as hyperparameters: refused at load, nothing recorded
expect_exit 2 "$T2EXP" preview "$EXAMPLES/quadratic_random.yaml" --config hyperparameters.z=.nan
expect_in "$OUT" "--config hyperparameters.z=.nan: hyperparameters.z: expected a finite number, got .nan"
cat > "$WORK/inf.yaml" <<Y
name: inf
hyperparameters:
  global_batch_size: 1
  x: 0.5
  y: -1
  opt: {sgd: {lr: .inf}}
searcher: {name: single, metric: loss, max_length: {batches: 1}}
Y
expect_exit 2 "$T2EXP" preview "$WORK/inf.yaml"
expect_in "$OUT" "inf.yaml:6:19: hyperparameters.opt.sgd.lr: expected a finite number, got .inf"
expect_exit 2 "$T2EXP" create "$WORK/inf.yaml" "$QT"
expect_exit 2 "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$QT" --config 'hyperparameters.z={type: categorical, vals: [1, .nan]}'
expect_in "$OUT" "hyperparameters.z.vals.1: expected a finite number, got .nan"
if [ -e "$T2EXP_HOME/t2exp.db" ]; then
  [ "$(sql 'SELECT count(*) FROM experiments')" = 0 ] || fail "a refused config was recorded"
fi

# ---- 7b. ranges whose values are no doubles: a log end refused at load (it used to load, then fail
# at run time with "json: cannot write inf" while preview printed nothing); a double range wider
# than DBL_MAX and an int grid over the whole int64 range give finite, exact points
expect_exit 2 "$T2EXP" preview "$EXAMPLES/quadratic_random.yaml" --config 'hyperparameters.z={type: log, minval: 300, maxval: 400}'
expect_in "$OUT" "--config hyperparameters.z={type: log, minval: 300, maxval: 400}: hyperparameters.z.maxval: 10^400 is too large for a double"
cat > "$WORK/wide.yaml" <<Y
name: wide
hyperparameters:
  global_batch_size: 1
  x: {type: double, minval: -1.7e308, maxval: 1.7e308, count: 3}
  z: {type: int, minval: -9223372036854775808, maxval: 9223372036854775807, count: 3}
searcher: {name: grid, metric: loss, max_length: {batches: 1}}
Y
expect_exit 0 "$T2EXP" preview "$WORK/wide.yaml"
expect_in "$OUT" '{"global_batch_size":1,"x":0.0,"z":-1}'
expect_in "$OUT" '{"global_batch_size":1,"x":-1.7e+308,"z":9223372036854775807}'
expect_exit 0 "$T2EXP" preview "$WORK/wide.yaml" --config searcher.name=random --config searcher.max_trials=50
grep -q 'inf\|nan' <<<"$OUT" && fail "a drawn value is not finite: $OUT"

# ---- 7c. checkpoint paths, batch sizes and lengths that used to load: each refused at the key with
# exit 2 by preview and create, and nothing recorded or made. Before: host_path "" put checkpoints at
# /<store id>/experiment-1 (the filesystem root), storage_path ../../x was joined on and escaped
# host_path, global_batch_size 9223372036854775807 with max_length {records: 100} overflowed the
# runner's rounding (UBSan abort, the experiment left ACTIVE; a release build "COMPLETED after 0
# batches"), 4294967424 reached the trial as 128, and 10^6 epochs of 10^12 records (each within its
# own maximum) were 10^18 batches, a run that never ends.
QR="$EXAMPLES/quadratic_random.yaml"
mkdir -p "$WORK/a/b/host"
refused() { # refused MESSAGE --config ...: preview and create both exit 2 with MESSAGE
  local msg=$1; shift
  expect_exit 2 "$T2EXP" preview "$QR" "$@"
  expect_in "$OUT" "$msg"
  expect_exit 2 "$T2EXP" create "$QR" "$QT" "$@"
  expect_in "$OUT" "$msg"
}
refused "--config checkpoint_storage.host_path=\"\": checkpoint_storage.host_path: expected an absolute path, got an empty string" \
  --config 'checkpoint_storage.host_path=""'
refused "--config checkpoint_storage.host_path=ckpts: checkpoint_storage.host_path: expected an absolute path (as Determined's shared_fs requires)" \
  --config checkpoint_storage.host_path=ckpts
refused "--config checkpoint_storage.storage_path=../../x: checkpoint_storage.storage_path: has a '..' component" \
  --config "checkpoint_storage.host_path=$WORK/a/b/host" --config checkpoint_storage.storage_path=../../x
refused "checkpoint_storage.storage_path: \"$WORK/a/x\" is not under host_path \"$WORK/a/b/host\"" \
  --config "checkpoint_storage.host_path=$WORK/a/b/host" --config "checkpoint_storage.storage_path=$WORK/a/x"
[ -z "$(ls -A "$WORK/a/b/host")" ] && [ ! -e "$WORK/a/x" ] && [ ! -e "$WORK/x" ] \
  || fail "a refused checkpoint path made a directory: $(find "$WORK/a" "$WORK/x" 2>&1)"
refused "hyperparameters.global_batch_size: expected at most 2147483647 records a step (the trial API gives the batch size as an int: t2_ctx_global_batch_size), got 9223372036854775807" \
  --config hyperparameters.global_batch_size=9223372036854775807 --config searcher.max_length='{records: 100}'
refused "hyperparameters.global_batch_size.vals.1: expected at most 2147483647 records a step" \
  --config 'hyperparameters.global_batch_size={type: categorical, vals: [1, 4294967424]}'
refused "hyperparameters.global_batch_size.maxval: expected at most 2147483647 records a step" \
  --config 'hyperparameters.global_batch_size={type: int, minval: 1, maxval: 2147483648}'
refused "searcher.max_length.epochs: 1000000 epochs are 1000000000000000000 batches (records_per_epoch 1000000000000 at global_batch_size 1: 1000000000000 batches an epoch), more than the 1000000000000 batches a length may be" \
  --config searcher.max_length='{epochs: 1000000}' --config records_per_epoch=1000000000000
refused "min_checkpoint_period.epochs: 2 epochs are 2000000000000 batches" \
  --config min_checkpoint_period='{epochs: 2}' --config records_per_epoch=1000000000000
# The largest batch the API can give, and the longest length, still load.
expect_exit 0 "$T2EXP" preview "$QR" --config hyperparameters.global_batch_size=2147483647 --config searcher.max_trials=1 \
  --config searcher.max_length='{epochs: 1000000}' --config records_per_epoch=1000000000000
if [ -e "$T2EXP_HOME/t2exp.db" ]; then
  [ "$(sql 'SELECT count(*) FROM experiments')" = 0 ] || fail "a refused config was recorded"
fi

# ---- 8. a FIFO as the config: refused at once (no writer ever comes), for preview and create
mkfifo "$WORK/fifo.yaml"
expect_exit 2 timeout 20 "$T2EXP" preview "$WORK/fifo.yaml"
expect_in "$OUT" "$WORK/fifo.yaml: not a regular file (a FIFO); a config must be a YAML file"
expect_exit 2 timeout 20 "$T2EXP" create "$WORK/fifo.yaml" "$QT"
expect_in "$OUT" "not a regular file (a FIFO)"
expect_exit 2 timeout 20 "$T2EXP" preview /dev/null
expect_in "$OUT" "/dev/null: not a regular file (a character device)"

# evaluate with a CONFIG: a real checkpoint (the MLP on Fashion-MNIST, 2 batches), then the FIFO
# as its config. The checkpoint needs the dataset; without it this one case is skipped.
if have_fashion_mnist; then
  mlp_config "$WORK/mlp.yaml" 2
  expect_exit 0 "$T2EXP" create "$WORK/mlp.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet
  ck=$(sql "SELECT path FROM checkpoints LIMIT 1")
  [ -n "$ck" ] || fail "the MLP experiment left no checkpoint"
  expect_exit 2 timeout 20 "$T2EXP" evaluate "$ck" "$TRIALS/fashion_mnist_mlp.so" "$WORK/fifo.yaml"
  expect_in "$OUT" "not a regular file (a FIFO)"
  store_ok
else
  echo "config_hostile: evaluate with a FIFO config skipped (no Fashion-MNIST)"
fi
echo "config_hostile: ok"
