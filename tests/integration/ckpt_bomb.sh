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
# meta FILE SEAL [PAD]: metadata.json for one params tensor of 1 Gi floats (4 GiB) and no buffers;
# PAD goes into its strings map (to make the archive as big as the ratio budget wants).
meta() {
  printf '{"metadata_crc32c":"%s","format":"t2exp-checkpoint","format_version":2,"t2exp_version":"0.1.0",' "$2" > "$1"
  printf '"uuid":"00000000-0000-4000-8000-000000000000","created_unix":0,"experiment_id":0,"trial_id":0,' >> "$1"
  printf '"batches_trained":0,"epoch":0,"hparams":{},"loader":null,"rngs":{},"lr_schedule":null,' >> "$1"
  printf '"optimizer":null,"checksum":"crc32c","tensors":[{"name":"w","array":"params","shape":[1073741824],' >> "$1"
  printf '"offset":0,"size":1073741824,"crc32c":0}],"entries":{"params.bin":{"size":%s,"crc32c":0},' $GiB4 >> "$1"
  printf '"buffers.bin":{"size":0,"crc32c":0}},"strings":{%s}}' "${3:-}" >> "$1"
}
# bomb OUT [PAD]: the archive, with metadata.json sealed (the reader names the checksum it
# computed for an unsealed copy).
bomb() {
  meta "$B/metadata.json" 00000000 "${2:-}"
  (cd "$B" && tar --format=ustar -cf seal.tar metadata.json)
  expect_exit 2 "$T2EXP" export "$B/seal.tar" "$WORK/seal.bin"
  local crc
  crc=$(sed -n 's/.*stored 00000000, computed \([0-9a-f]\{8\}\).*/\1/p' <<<"$OUT")
  [ -n "$crc" ] || fail "could not seal metadata.json: $OUT"
  meta "$B/metadata.json" "$crc" "${2:-}"
  # tar's headers: metadata.json, then params.bin's header (the first bytes tar writes for a 4 GiB
  # sparse file; it stops at the pipe's end), then the zeros, then buffers.bin and the end blocks.
  local mlen head_len
  mlen=$(stat -c %s "$B/metadata.json")
  head_len=$((512 + (mlen + 511) / 512 * 512 + 512))
  truncate -s $GiB4 "$B/params.bin"
  : > "$B/buffers.bin"
  { (cd "$B" && tar --format=ustar -cf - metadata.json params.bin 2>/dev/null) || true; } | head -c $head_len > "$B/head.tar"
  [ "$(stat -c %s "$B/head.tar")" = $head_len ] || fail "tar header part is short"
  (cd "$B" && tar --format=ustar -cf tail.tar buffers.bin)
  zstd -q -1 -c "$B/head.tar" > "$1"
  [ -f "$B/zeros.zst" ] || head -c $((64 << 20)) /dev/zero | zstd -q -1 -c > "$B/zeros.zst"
  for _ in $(seq 64); do cat "$B/zeros.zst"; done >> "$1"
  zstd -q -1 -c "$B/tail.tar" >> "$1"
  rm -f "$B/params.bin"
}
bomb "$WORK/bomb.tar.zst"
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

# A bomb within the ratio budget: 4.2 MB of incompressible padding in metadata.json lets 4 GiB
# pass the 1032:1 check, so only the checksums can refuse it. Export verifies before it writes,
# so it never puts gigabytes into a temporary output: with a 64 MiB file size limit (prlimit)
# it still ends with the checksum error, not a write failure; memory stays small in every command.
if command -v prlimit > /dev/null; then
  bomb "$WORK/padded.tar.zst" "\"pad\":\"$(head -c 4200000 /dev/urandom | base64 -w0)\""
  echo "padded bomb: $(stat -c %s "$WORK/padded.tar.zst") bytes"
  set +e
  OUT=$(prlimit --fsize=$((64 << 20)) /usr/bin/time -v -o "$WORK/padded.time" "$T2EXP" export \
        "$WORK/padded.tar.zst" "$WORK/padded.bin" 2>&1)
  got=$?
  set -e
  [ "$got" = 2 ] || fail "padded export: exit $got (wanted 2): $OUT"
  expect_in "$OUT" "entry params.bin fails its CRC-32C check"
  kb=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$WORK/padded.time")
  echo "padded export: max RSS $kb KB"
  [ "$kb" -lt 200000 ] || fail "padded export: max RSS $kb KB (limit 200000)"
  [ ! -e "$WORK/padded.bin" ] && [ -z "$(find "$WORK" -maxdepth 1 -name '*.tmp-*')" ] || fail "padded export left output"
  for cmd in evaluate create; do
    set +e
    if [ $cmd = evaluate ]; then
      OUT=$(/usr/bin/time -v -o "$WORK/p.time" "$T2EXP" evaluate "$WORK/padded.tar.zst" "$TRIALS/quadratic.so" \
            "$EXAMPLES/quadratic_random.yaml" 2>&1)
    else
      OUT=$(/usr/bin/time -v -o "$WORK/p.time" "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" \
            --quiet --from-checkpoint "$WORK/padded.tar.zst" 2>&1)
    fi
    got=$?
    set -e
    [ "$got" = 2 ] || fail "padded $cmd: exit $got (wanted 2): $OUT"
    kb=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$WORK/p.time")
    echo "padded $cmd: max RSS $kb KB"
    [ "$kb" -lt 200000 ] || fail "padded $cmd: max RSS $kb KB (limit 200000)"
  done
fi
echo "ckpt_bomb: ok"
