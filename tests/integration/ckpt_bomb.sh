#!/usr/bin/env bash
# A checkpoint decompression bomb: a 150 KB .tar.zst whose metadata.json (sealed, format 2)
# declares a 4 GiB params.bin, and which really holds 4 GiB of zeros. `t2exp export`, `evaluate`
# and `create --from-checkpoint` must each refuse it with an error naming the entry and the limit,
# without decoding it: under 200 MB of RSS (/usr/bin/time -v). Before the reader had a budget,
# export grew to 4.2 GB and failed only at the CRC. The bomb is built here from concatenated
# zstd frames (tar's headers, 64 copies of one frame of 64 MiB of zeros, tar's end), so making it
# decodes nothing big either.
source "$(dirname "$0")/common.bash"
for tool in zstd tar /usr/bin/time; do
  command -v "$tool" > /dev/null || { echo "ckpt_bomb: skipped (no $tool)"; exit 77; }
done

B="$WORK/bomb"
mkdir -p "$B"
GiB4=4294967296
# meta FILE SEAL: metadata.json for one params tensor of 1 Gi floats (4 GiB) and no buffers.
meta() {
  printf '{"metadata_crc32c":"%s","format":"t2exp-checkpoint","format_version":2,"t2exp_version":"0.1.0",' "$2" > "$1"
  printf '"uuid":"00000000-0000-4000-8000-000000000000","created_unix":0,"experiment_id":0,"trial_id":0,' >> "$1"
  printf '"batches_trained":0,"epoch":0,"hparams":{},"loader":null,"rngs":{},"lr_schedule":null,' >> "$1"
  printf '"optimizer":null,"checksum":"crc32c","tensors":[{"name":"w","array":"params","shape":[1073741824],' >> "$1"
  printf '"offset":0,"size":1073741824,"crc32c":0}],"entries":{"params.bin":{"size":%s,"crc32c":0},' $GiB4 >> "$1"
  printf '"buffers.bin":{"size":0,"crc32c":0}},"strings":{}}' >> "$1"
}
# Seal it: the reader names the checksum it computed for an unsealed copy.
meta "$B/metadata.json" 00000000
(cd "$B" && tar --format=ustar -cf seal.tar metadata.json)
expect_exit 2 "$T2EXP" export "$B/seal.tar" "$WORK/seal.bin"
crc=$(sed -n 's/.*stored 00000000, computed \([0-9a-f]\{8\}\).*/\1/p' <<<"$OUT")
[ -n "$crc" ] || fail "could not seal metadata.json: $OUT"
meta "$B/metadata.json" "$crc"

# tar's headers: metadata.json, then params.bin's header (the first bytes tar writes for a 4 GiB
# sparse file; it stops at the pipe's end), then the zeros, then buffers.bin and the end blocks.
mlen=$(stat -c %s "$B/metadata.json")
head_len=$((512 + (mlen + 511) / 512 * 512 + 512))
truncate -s $GiB4 "$B/params.bin"
: > "$B/buffers.bin"
{ (cd "$B" && tar --format=ustar -cf - metadata.json params.bin 2>/dev/null) || true; } | head -c $head_len > "$B/head.tar"
[ "$(stat -c %s "$B/head.tar")" = $head_len ] || fail "tar header part is short"
(cd "$B" && tar --format=ustar -cf tail.tar buffers.bin)
zstd -q -1 -c "$B/head.tar" > "$WORK/bomb.tar.zst"
head -c $((64 << 20)) /dev/zero | zstd -q -1 -c > "$B/zeros.zst"
for _ in $(seq 64); do cat "$B/zeros.zst"; done >> "$WORK/bomb.tar.zst"
zstd -q -1 -c "$B/tail.tar" >> "$WORK/bomb.tar.zst"
rm -f "$B/params.bin"
[ "$(zstd -q -dc "$B/zeros.zst" | wc -c)" = $((64 << 20)) ] || fail "the zero frame does not decode to 64 MiB"
echo "bomb: $(stat -c %s "$WORK/bomb.tar.zst") bytes declaring and holding $GiB4"

# run NAME CMD...: CMD must fail (exit 2) naming params.bin and the limit, under 200 MB max RSS.
run() {
  local name=$1; shift
  set +e
  OUT=$(timeout 120 /usr/bin/time -v -o "$WORK/$name.time" "$@" 2>&1)
  local got=$?
  set -e
  [ "$got" = 2 ] || fail "$name: exit $got (wanted 2): $OUT"
  expect_in "$OUT" "entry params.bin declares $GiB4 bytes"
  expect_in "$OUT" "times its size, at least 64 MiB"
  local kb
  kb=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$WORK/$name.time")
  echo "$name: max RSS $kb KB, $(sed -n 's/.*Elapsed (wall clock) time.*: *//p' "$WORK/$name.time")"
  [ "$kb" -lt 200000 ] || fail "$name: max RSS $kb KB (limit 200000)"
}

run export "$T2EXP" export "$WORK/bomb.tar.zst" "$WORK/out.bin"
[ ! -e "$WORK/out.bin" ] || fail "export left an output behind"
[ -z "$(find "$WORK" -maxdepth 1 -name '*.tmp-*')" ] || fail "export left a temporary file behind"
run evaluate "$T2EXP" evaluate "$WORK/bomb.tar.zst" "$TRIALS/quadratic.so" "$EXAMPLES/quadratic_random.yaml"
run create "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" --quiet \
  --from-checkpoint "$WORK/bomb.tar.zst"
echo "ckpt_bomb: ok"
