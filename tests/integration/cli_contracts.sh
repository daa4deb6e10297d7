#!/usr/bin/env bash
# Small promises of docs/cli.md that need no experiment: `info --json` has the table's keys (cores a
# number), `init` into a missing parent is I/O trouble (exit 3), `pipelines` of a home with no store
# is an empty listing (exit 0, as `list`), `--opt=value` works for the global --home too, and a value
# given to an option that takes none is called that.
source "$(dirname "$0")/common.bash"

# info: the same keys in the table and in --json; cores is a JSON number.
command -v python3 >/dev/null || { echo "cli_contracts: skipped (no python3)"; exit 77; }
expect_exit 0 "$T2EXP" info
table_keys=$(awk '{print $1}' <<<"$OUT" | sort)
expect_exit 0 "$T2EXP" info --json
json_keys=$(python3 -c 'import json, sys; print("\n".join(sorted(json.loads(sys.stdin.read()))))' <<<"$OUT") ||
  fail "info --json is not one JSON object: $OUT"
[ "$table_keys" = "$json_keys" ] || fail "info and info --json differ in keys: $(diff <(echo "$table_keys") <(echo "$json_keys"))"
grep -qx threads_per_trial <<<"$json_keys" || fail "info --json has no threads_per_trial: $OUT"
python3 -c 'import json, sys; c = json.loads(sys.stdin.read())["cores"]; sys.exit(0 if type(c) is int and c >= 1 else 1)' <<<"$OUT" ||
  fail "info --json: cores is not a number: $OUT"

# init: a parent that is not there is I/O trouble (3), and nothing is left behind.
cd "$WORK"
expect_exit 3 "$T2EXP" init sub/x
expect_in "$OUT" "t2exp init: cannot create sub/x: No such file or directory"
[ ! -e sub ] || fail "init sub/x left sub behind"

# pipelines of a home with no store: an empty listing and exit 0, as list prints one; nothing made.
fresh="$WORK/fresh-home"
expect_exit 0 "$T2EXP" --home "$fresh" pipelines --json
[ "$OUT" = "[]" ] || fail "pipelines --json of a fresh home: '$OUT'"
expect_exit 0 "$T2EXP" --home "$fresh" pipelines --csv
[ "$OUT" = "id,name,state,ran,up_to_date,not_successful,started,duration,flow,failed" ] || fail "pipelines --csv of a fresh home: '$OUT'"
expect_exit 0 "$T2EXP" --home "$fresh" pipelines
expect_in "$OUT" "up_to_date"
# describe names a run: no store is still store trouble.
expect_exit 3 "$T2EXP" --home "$fresh" pipelines describe 1
expect_in "$OUT" "does not exist"
[ ! -e "$fresh" ] || fail "listing a fresh home made it: $(ls -A "$fresh")"
[ -z "$(find "$WORK" -maxdepth 1 -name 't2exp-empty-*')" ] || fail "an empty listing left its scratch store"

# The global --home=DIR is --home DIR (it was "unknown option --home=DIR").
expect_exit 0 "$T2EXP" "--home=$fresh" list --json
[ "$OUT" = "[]" ] || fail "--home=DIR list --json: '$OUT'"
other="$WORK/other-home"
expect_exit 0 "$T2EXP" --home "$other" info
expect_exit 0 "$T2EXP" "--home=$other" info --json
expect_in "$OUT" "\"store\": \"$other\""
expect_exit 0 "$T2EXP" --home "$fresh" -- list --json # "--" ends the global options
[ "$OUT" = "[]" ] || fail "-- list --json: '$OUT'"

# A value given to a flag: "takes no value" (it said "--json=1 needs a value").
expect_exit 2 "$T2EXP" list --json=1
expect_in "$OUT" "t2exp list: --json=1: --json takes no value"
expect_exit 2 "$T2EXP" model list --csv=yes
expect_in "$OUT" "t2exp model: --csv=yes: --csv takes no value"
expect_exit 2 "$T2EXP" describe 1 --top
expect_in "$OUT" "--top needs a value"
# evaluate takes the checkpoint's own hyperparameters: an override of them is refused, not taken
# and ignored (a loss of 6.35 twice, with and without hyperparameters.y=-2); other keys still go.
cat > "$WORK/q.yaml" <<Y
name: q
hyperparameters: {global_batch_size: 1, x: 3, y: 0.5, model: 1}
searcher: {name: single, metric: loss, max_length: {batches: 2}}
Y
expect_exit 0 "$T2EXP" create "$WORK/q.yaml" "$T2EXP_BUILD/trials/quadratic.so" --quiet
e=$(sqlite3 "$T2EXP_HOME/t2exp.db" "SELECT max(id) FROM experiments")
expect_exit 2 "$T2EXP" evaluate "$e" "$T2EXP_BUILD/trials/quadratic.so" --config hyperparameters.y=-2
expect_in "$OUT" "--config hyperparameters.y=-2: evaluate takes the hyperparameters from the checkpoint"
expect_exit 2 "$T2EXP" evaluate "$e" "$T2EXP_BUILD/trials/quadratic.so" --config 'hyperparameters={x: 1}'
expect_exit 0 "$T2EXP" evaluate "$e" "$T2EXP_BUILD/trials/quadratic.so" --config scheduling_unit=5
expect_in "$OUT" "loss"
echo "cli_contracts: ok"
