#!/usr/bin/env bash
# `t2exp export` never writes over its checkpoint and never leaves a half-written output:
#  - `export CK CK`, through a symlink, a hard link or "./CK", exits 2 naming both paths, and the
#    checkpoint stays byte-identical (it used to be truncated to 0 bytes: a Bus error or "write
#    failed: Bad address");
#  - an export that fails (a corrupt checkpoint, found while streaming) leaves the previous output
#    as it was and no temporary file;
#  - an output that is a symlink to a file replaces that file, the link stays;
#  - checkpoints are written private: mode 600 under umask 022.
source "$(dirname "$0")/common.bash"
have_fashion_mnist || { echo "ckpt_export_safe: skipped (no dataset-fashion-mnist)"; exit 77; }
umask 022

mlp_config "$WORK/a.yaml" 50
expect_exit 0 "$T2EXP" create "$WORK/a.yaml" "$TRIALS/fashion_mnist_mlp.so" --quiet
export_last 1 "$WORK/out.bin"
CK=$LAST
[ "$(stat -c %a "$CK")" = 600 ] || fail "checkpoint mode is $(stat -c %a "$CK"), wanted 600 under umask 022"
tar -xOf "$CK" params.bin | cmp -s - "$WORK/out.bin" || fail "export differs from params.bin"
cp -p "$CK" "$WORK/orig.tar"

expect_exit 2 "$T2EXP" export "$CK" "$CK"
expect_in "$OUT" "$CK is the same file as the input $CK: refusing to write over it"
cmp -s "$CK" "$WORK/orig.tar" || fail "export CK CK changed the checkpoint"

ln -s "$CK" "$WORK/link.tar"
expect_exit 2 "$T2EXP" export "$CK" "$WORK/link.tar"
expect_in "$OUT" "$WORK/link.tar is the same file as the input $CK"
cmp -s "$CK" "$WORK/orig.tar" || fail "export CK link-to-CK changed the checkpoint"
[ -L "$WORK/link.tar" ] || fail "the symlink was replaced"
expect_exit 2 "$T2EXP" export "$WORK/link.tar" "$CK"
cmp -s "$CK" "$WORK/orig.tar" || fail "export link-to-CK CK changed the checkpoint"

ln "$CK" "$WORK/hard.tar"
expect_exit 2 "$T2EXP" export "$CK" "$WORK/hard.tar"
expect_in "$OUT" "is the same file as the input"
(cd "$(dirname "$CK")" && expect_exit 2 "$T2EXP" export "$(basename "$CK")" "./$(basename "$CK")")
cmp -s "$CK" "$WORK/orig.tar" || fail "export through other names changed the checkpoint"
[ -z "$(find "$WORK" -name '*.tmp-*')" ] || fail "a refused export left a temporary file behind"

# A corrupt checkpoint: one byte flipped inside params.bin (a quarter into the archive, which
# holds params.bin and optimizer.bin of the same size), found while streaming.
cp "$CK" "$WORK/bad.tar"
size=$(stat -c %s "$WORK/bad.tar")
printf '\x55' | dd of="$WORK/bad.tar" bs=1 seek=$((size / 4)) conv=notrunc status=none
cp "$WORK/out.bin" "$WORK/prev.bin"
expect_exit 2 "$T2EXP" export "$WORK/bad.tar" "$WORK/out.bin"
expect_in "$OUT" "fails its CRC-32C check"
cmp -s "$WORK/out.bin" "$WORK/prev.bin" || fail "a failed export changed the previous output"
[ -z "$(find "$WORK" -name '*.tmp-*')" ] || fail "a failed export left a temporary file behind"

# An output that is a symlink to another file: the file is replaced, the link stays.
echo old > "$WORK/target.bin"
ln -s target.bin "$WORK/outlink.bin"
expect_exit 0 "$T2EXP" export "$CK" "$WORK/outlink.bin"
[ -L "$WORK/outlink.bin" ] || fail "the output symlink was replaced"
cmp -s "$WORK/target.bin" "$WORK/prev.bin" || fail "the symlink's target does not hold the parameters"
[ "$(stat -c %a "$WORK/target.bin")" = 644 ] || fail "export's output mode is $(stat -c %a "$WORK/target.bin")"
# An output that is not a regular file is refused, never replaced by one: a FIFO (a reader waiting on
# it got nothing while export said it succeeded), a symlink to one, and a device node (as root,
# `export CK /dev/null` replaced the system's /dev/null; a private node stands in for it here).
mkfifo "$WORK/pipe.bin"
ln -s pipe.bin "$WORK/pipelink.bin"
for out in "$WORK/pipe.bin" "$WORK/pipelink.bin"; do
  expect_exit 2 "$T2EXP" export "$CK" "$out"
  expect_in "$OUT" "not a regular file (a FIFO): refusing to replace it with one"
done
[ -p "$WORK/pipe.bin" ] && [ -L "$WORK/pipelink.bin" ] || fail "the FIFO or the link to it was replaced"
if mknod -m 666 "$WORK/null.bin" c 1 3 2>/dev/null; then
  expect_exit 2 "$T2EXP" export "$CK" "$WORK/null.bin"
  expect_in "$OUT" "not a regular file (a character device)"
  [ -c "$WORK/null.bin" ] || fail "the device node was replaced"
fi
expect_exit 2 "$T2EXP" export "$CK" ""
expect_in "$OUT" "the output path is empty"
[ -z "$(find "$WORK" -name '*.tmp-*')" ] || fail "a refused export left a temporary file behind"
echo "ckpt_export_safe: ok"
