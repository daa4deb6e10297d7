#!/usr/bin/env bash
# A FIFO (or a directory, or a device) named as a checkpoint is refused at once, naming the path:
# `export`, `evaluate` and `create --from-checkpoint` used to wait in open(2) for a writer that
# never comes. Each command runs under `timeout 20`, so a regression fails instead of hanging.
source "$(dirname "$0")/common.bash"
command -v mkfifo > /dev/null || { echo "ckpt_fifo: skipped (no mkfifo)"; exit 77; }

mkfifo "$WORK/ck.tar"
expect_exit 2 timeout 20 "$T2EXP" export "$WORK/ck.tar" "$WORK/out.bin"
expect_in "$OUT" "checkpoint $WORK/ck.tar: not a regular file (a FIFO)"
[ ! -e "$WORK/out.bin" ] || fail "export left an output behind"
[ -z "$(find "$WORK" -maxdepth 1 -name '*.tmp-*')" ] || fail "export left a temporary file behind"

expect_exit 2 timeout 20 "$T2EXP" evaluate "$WORK/ck.tar" "$TRIALS/quadratic.so" "$EXAMPLES/quadratic_random.yaml"
expect_in "$OUT" "checkpoint $WORK/ck.tar: not a regular file (a FIFO)"

expect_exit 2 timeout 20 "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" --quiet \
  --from-checkpoint "$WORK/ck.tar"
expect_in "$OUT" "ck.tar: not a regular file (a FIFO)"

# Other things that are not files: the same early refusal.
expect_exit 2 timeout 20 "$T2EXP" export "$WORK" "$WORK/out.bin"
expect_in "$OUT" "checkpoint $WORK: not a regular file (a directory)"
expect_exit 2 timeout 20 "$T2EXP" export /dev/zero "$WORK/out.bin"
expect_in "$OUT" "checkpoint /dev/zero: not a regular file (a character device)"
echo "ckpt_fifo: ok"
