#!/usr/bin/env bash
# The example trials' dataset cache is tied to the files it was decoded from and private: with
# data.dir pointing nowhere an experiment fails even though a cache from the real data dir
# exists (it used to COMPLETE from /tmp/t2exp-fashion-mnist-*.t2c, a path any local user could
# plant a dataset at); the cache lives in $T2EXP_HOME/cache (0700) as 0600 files; a planted
# world-writable cache is not used. Needs Fashion-MNIST (exit 77 without it).
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "data_cache_trust: skipped (apt-get install dataset-fashion-mnist)"; exit 77; }
M="$TRIALS/fashion_mnist_mlp.so"
mlp_config "$WORK/m.yaml" 20

expect_exit 0 "$T2EXP" create "$WORK/m.yaml" "$M" --plain
expect_in "$OUT" "COMPLETED"
[ "$(stat -c %a "$T2EXP_HOME/cache")" = 700 ] || fail "cache dir mode $(stat -c %a "$T2EXP_HOME/cache") (wanted 700)"
n=0
for f in "$T2EXP_HOME"/cache/*.t2c; do
  [ "$(stat -c %a "$f")" = 600 ] || fail "$f has mode $(stat -c %a "$f") (wanted 600)"
  n=$((n + 1))
done
[ "$n" = 2 ] || fail "$n cache files (wanted 2: train and test)"
ls "$WORK"/t2exp-fashion-mnist-* >/dev/null 2>&1 && fail "a cache was written to \$TMPDIR"

# data.dir points nowhere: no cache stands in for the missing files.
cp "$T2EXP_HOME"/cache/train-images-idx3-ubyte-*.t2c "$WORK/t2exp-fashion-mnist-train.t2c"
cp "$T2EXP_HOME"/cache/t10k-images-idx3-ubyte-*.t2c "$WORK/t2exp-fashion-mnist-test.t2c"
expect_exit 1 "$T2EXP" create "$WORK/m.yaml" "$M" --config data.dir=/nonexistent --plain
expect_in "$OUT" "prepare_data: Fashion-MNIST not found: /nonexistent/train-images-idx3-ubyte.gz does not exist"
[ "$(sql "SELECT state FROM experiments WHERE id=2")" = ERRORED ] || fail "experiment 2 should be ERRORED"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id=2")" = 0 ] || fail "a trial ran without its data"

# A world-writable cache (anyone could have put it there) is replaced, not used.
train=$(ls "$T2EXP_HOME"/cache/train-images-idx3-ubyte-*.t2c)
chmod 666 "$train"
ino=$(stat -c %i "$train")
expect_exit 0 "$T2EXP" create "$WORK/m.yaml" "$M" --plain
[ "$(stat -c %a "$train")" = 600 ] || fail "the world-writable cache was kept"
[ "$(stat -c %i "$train")" != "$ino" ] || fail "the world-writable cache was not rewritten"
echo "data_cache_trust: ok"
