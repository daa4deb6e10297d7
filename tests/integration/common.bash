# common.bash — shared by the integration tests: paths, a scratch home, and assertions.
set -euo pipefail
: "${T2EXP_BUILD:?set by ctest}" "${T2EXP_SOURCE:?set by ctest}"
T2EXP="$T2EXP_BUILD/t2exp"
TRIALS="$T2EXP_BUILD/trials"
EXAMPLES="$T2EXP_SOURCE/configs/examples"
WORK=$(mktemp -d)
export T2EXP_HOME="$WORK/home"
export TMPDIR="$WORK"
trap 'rm -rf "$WORK"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_exit CODE CMD... — runs CMD, captures stdout+stderr in $OUT, checks the exit code.
expect_exit() {
  local want=$1; shift
  set +e
  OUT=$("$@" 2>&1)
  local got=$?
  set -e
  [ "$got" -eq "$want" ] || fail "exit $got (wanted $want) from: $*
$OUT"
}

# expect_in TEXT NEEDLE — TEXT contains NEEDLE (fixed string).
expect_in() { grep -qF -- "$2" <<<"$1" || fail "expected '$2' in:
$1"; }

# sql QUERY — one value from the store.
sql() { sqlite3 "$T2EXP_HOME/t2exp.db" "$1"; }

store_ok() { [ "$(sql 'PRAGMA integrity_check')" = "ok" ] || fail "store integrity check failed"; }

# json EXPR — evaluates an SQLite JSON expression over $OUT, available as column j.
json() {
  printf '%s' "$OUT" > "$WORK/out.json"
  sqlite3 :memory: "WITH d(j) AS (SELECT CAST(readfile('$WORK/out.json') AS TEXT)) SELECT $1 FROM d"
}
