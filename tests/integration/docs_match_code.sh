#!/usr/bin/env bash
# docs_match_code.sh — what README.md and docs/*.md document exists in the code:
#  (a) every `t2exp COMMAND` is a command of the built t2exp, and every --option written on a
#      t2exp line is one that t2exp knows (its --help, or the CLI's sources);
#  (b) every config key in docs/config-reference.md's key tables and "Accepted and ignored" lists
#      is known to the config loader (`t2exp preview` with the key set names it "unknown"
#      otherwise), and every ```yaml example in the docs loads without an unknown key;
#  (c) every t2_/T2_ name is declared in framework/include (t2__ names: in the sources), and
#      every public function declared there is exported by the built libt2exp.so.
# Only code is read (code blocks and `spans`, by tests/tools/docs_refs.awk). Each missing item is
# printed with the FILE:LINE where it is documented. T2EXP_DOCS (files, relative to the source
# tree or absolute) replaces the default list, to try the test on a scratch copy of a doc.
source "$(dirname "$0")/common.bash"
cd "$T2EXP_SOURCE"

[ -x "$T2EXP" ] || { echo "SKIP: $T2EXP not built"; exit 77; }
export OPENBLAS_NUM_THREADS=1 # t2exp would re-exec itself to set it: ~100 runs below
LIB=$(ls "$T2EXP_BUILD"/libt2exp.so 2>/dev/null || true)
read -r -a DOCS <<<"${T2EXP_DOCS:-README.md $(echo docs/*.md)}"
awk -f tests/tools/docs_refs.awk "${DOCS[@]}" > "$WORK/refs.tsv"
[ -s "$WORK/refs.tsv" ] || fail "nothing extracted from ${DOCS[*]}"

MISSING="$WORK/missing"
: > "$MISSING"
# missing WHAT ITEM: one line per item, with every place it is documented.
missing() {
  local where
  where=$(awk -F'\t' -v k="$3" -v v="$2" '$1 == k && $3 == v { print $2 }' "$WORK/refs.tsv" | sort -u -t: -k1,1 -k2,2n | paste -sd' ')
  printf 'MISSING %s %s: documented at %s\n' "$1" "$2" "${where:-?}" | tee -a "$MISSING" >&2
}
items() { awk -F'\t' -v k="$1" '$1 == k { print $3 }' "$WORK/refs.tsv" | sort -u; }

# ---------- (a) commands and options ----------
USAGE=$("$T2EXP" --help 2>&1) || fail "t2exp --help failed: $USAGE"
# known_command CMD: `t2exp CMD --help` succeeds, or at least does not call CMD an unknown command
# (run-trial, internal, has no --help of its own).
known_command() {
  local out rc=0
  out=$("$T2EXP" "$1" --help 2>&1 </dev/null) || rc=$?
  [ "$rc" -eq 0 ] && return 0
  ! grep -qi "unknown command" <<<"$out"
}
known_command h5-no-such-command && fail "the command check is broken: t2exp accepts 'h5-no-such-command'"
for c in $(items cmd); do known_command "$c" || missing command "$c" cmd; done

# An option is known when `t2exp CMD --help` (or `t2exp --help`) shows it or the CLI's sources
# compare an argument with it.
while IFS=$'\t' read -r opt cmd; do
  help="$USAGE"
  [ -n "$cmd" ] && help+=$'\n'$("$T2EXP" "$cmd" --help 2>&1 </dev/null || true)
  grep -qE -- "(^|[^a-z-])$opt([^a-z-]|\$)" <<<"$help" && continue
  grep -qF -- "\"$opt\"" framework/cli/*.c && continue
  missing option "$opt" opt
done < <(awk -F'\t' '$1 == "opt" { print $3 "\t" $4 }' "$WORK/refs.tsv" | sort -u)

# ---------- (b) config keys ----------
# The smallest config every key is tried on (ASHA, so that every searcher key applies).
cat > "$WORK/probe.yaml" <<'Y'
name: docs_probe
hyperparameters: {global_batch_size: 1, x: 1}
searcher: {name: adaptive_asha, metric: loss, max_length: {batches: 16}, max_trials: 2}
Y
OUT=$("$T2EXP" preview "$WORK/probe.yaml" 2>&1) || fail "the probe config does not load: $OUT"
# unknown_key KEY: the loader says KEY is unknown (a warning or an error, whatever its wording
# around the word "unknown"). A bad value is a different complaint, so 1 does for every key.
unknown_key() {
  local out
  out=$("$T2EXP" preview "$WORK/probe.yaml" --config "$1=1" 2>&1 || true)
  grep -i "unknown" <<<"$out" | grep -qE "(^|[^a-z0-9_.])$(sed 's/\./\\./g' <<<"$1")([^a-z0-9_]|\$)"
}
unknown_key searcher.h5_no_such_key || fail "the key check is broken: 'searcher.h5_no_such_key' is not reported unknown"
unknown_key h5_no_such_key || fail "the key check is broken: 'h5_no_such_key' is not reported unknown"
for k in $(items key); do unknown_key "$k" && missing "config key" "$k" key; done

# Every ```yaml block: completed with the probe's searcher/hyperparameters when it has none, it
# must load (preview exits 0) with no unknown key. Lines in messages map back to the doc.
awk -F'\t' -v dir="$WORK" '
  $1 == "yaml" { n++; f = dir "/block" n ".yaml"; split($2, w, ":"); print w[1] "\t" $4 "\t" f; next }
  $1 == "yline" { print $3 > f }
  $1 == "yend" { close(f) }' "$WORK/refs.tsv" > "$WORK/blocks.tsv"
while IFS=$'\t' read -r doc first file; do
  [ -s "$file" ] || continue
  grep -q '^searcher:' "$file" || sed -n 3p "$WORK/probe.yaml" >> "$file"
  grep -q '^hyperparameters:' "$file" || sed -n 2p "$WORK/probe.yaml" >> "$file"
  # A hostfile named in an example is given one, so that the key (not the file) is what is tried.
  hf=$(sed -n 's/^ *hostfile: *\([A-Za-z0-9_.-]*\).*/\1/p' "$file")
  set +e
  out=$(cd "$WORK" && { [ -z "$hf" ] || echo "localhost slots=2" > "$hf"; } && "$T2EXP" preview "$file" 2>&1)
  rc=$?
  set -e
  # FILE:LINE:COL: in a message -> the doc's line.
  mapped=$(awk -v f="$file" -v doc="$doc" -v first="$first" '{
      i = index($0, f ":")
      if (i) { rest = substr($0, i + length(f) + 1); n = rest + 0; sub(/^[0-9]+/, "", rest)
               $0 = substr($0, 1, i - 1) doc ":" (first + n - 1) rest }
      print }' <<<"$out")
  if [ "$rc" -ne 0 ]; then
    printf 'MISSING a loadable config: the yaml example at %s:%s fails `t2exp preview`:\n%s\n' "$doc" "$first" "$mapped" | tee -a "$MISSING" >&2
  elif grep -qi unknown <<<"$mapped"; then
    printf 'MISSING config keys: the yaml example at %s:%s has unknown keys:\n%s\n' "$doc" "$first" "$(grep -i unknown <<<"$mapped")" | tee -a "$MISSING" >&2
  fi
done < "$WORK/blocks.tsv"

# ---------- (c) API names ----------
HEADERS=(framework/include/t2exp.h framework/include/t2exp/*.h)
SOURCES=(framework checkpoints configs searchers)
EXPORTED="$WORK/exported"
if [ -n "$LIB" ] && command -v nm >/dev/null; then
  nm -D --defined-only "$LIB" | awk '{ print $NF }' | sort -u > "$EXPORTED"
else
  echo "note: no nm or no $T2EXP_BUILD/libt2exp.so: exports not checked" >&2
  EXPORTED=
fi
# api_ok NAME: declared (public) or defined (internal t2__), and exported if a public function.
api_ok() {
  local name=$1
  if [[ $name == t2__* ]]; then
    grep -rqw --include='*.[ch]' -- "$name" "${SOURCES[@]}"
    return
  fi
  grep -qw -- "$name" "${HEADERS[@]}" || return 1
  [ -n "$EXPORTED" ] && [[ $name == t2_* ]] || return 0
  # A function: NAME( in a header, not a macro, not static inline. Then the library exports it.
  if grep -hE -- "(^|[^A-Za-z0-9_])$name *\(" "${HEADERS[@]}" | grep -qvE '#[ ]*define|static'; then
    grep -qx -- "$name" "$EXPORTED" || { API_WHY="declared but not exported by $LIB"; return 1; }
  fi
  return 0
}
API_WHY=
api_ok t2_h5_no_such_function && fail "the API check is broken: t2_h5_no_such_function passes"
api_ok t2_errmsg || fail "the API check is broken: t2_errmsg (error.h) fails${API_WHY:+: $API_WHY}"
for f in $(items api); do
  API_WHY=
  api_ok "$f" || missing "API name${API_WHY:+ ($API_WHY)}" "$f" api
done

n=$(grep -c '^MISSING' "$MISSING" || true)
[ "$n" -eq 0 ] || fail "$n documented item(s) do not exist in the code (above)"
printf 'ok: %d commands, %d options, %d config keys, %d yaml examples, %d API names documented in %s all exist\n' \
  "$(items cmd | wc -l)" "$(items opt | wc -l)" "$(items key | wc -l)" "$(wc -l < "$WORK/blocks.tsv")" \
  "$(items api | wc -l)" "${DOCS[*]}"
