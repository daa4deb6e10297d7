#!/usr/bin/env bash
# t2exp dashboard's HTTP side: every /api answer equals the CLI's --json for the same question; it
# binds to loopback and says so (the model registry's answers too); it is read-only (writes refused, the store opened read-only); no
# path escapes the compiled-in pages, encoded or not; a silent client, garbage and a storm of 1,000
# requests leave it serving, and an experiment running meanwhile completes normally.
source "$(dirname "$0")/common.bash"
command -v curl >/dev/null || { echo "dashboard_api: skipped (no curl)"; exit 77; }
cat > "$WORK/asha.yaml" <<'Y'
name: asha_api
hyperparameters: {global_batch_size: 1, x: {type: double, minval: -2, maxval: 4}, y: -2, model: 1}
searcher: {name: adaptive_asha, metric: loss, max_length: {batches: 16}, max_trials: 6, max_rungs: 2, divisor: 4}
min_validation_period: {batches: 4}
reproducibility: {experiment_seed: 3}
Y
expect_exit 0 "$T2EXP" create "$WORK/asha.yaml" "$TRIALS/quadratic.so" --quiet
cat > "$WORK/run.yaml" <<'Y'
name: running
hyperparameters: {global_batch_size: 1, x: 1, y: -2, sleep_ms: 5}
searcher: {name: single, metric: loss, max_length: {batches: 800}}
min_validation_period: {batches: 100}
Y
running=
start_dashboard
dash=$DASH port=$PORT
trap 'kill $dash 2>/dev/null || true; [ -z "$running" ] || kill $running 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT
expect_in "$(cat "$WORK/dash.log")" "this machine only"
base="http://127.0.0.1:$port"
AUTH="Authorization: Bearer $TOKEN"
get() { curl -s --max-time 10 -H "$AUTH" "$base$1"; }
code() { curl -s -o /dev/null --max-time 10 -w '%{http_code}' -H "$AUTH" "$@"; }
# anon ARGS... — the status of a request that shows no token (or whatever ARGS show).
anon() { curl -s -o /dev/null --max-time 10 -w '%{http_code}' "$@"; }

# The token: every path answers 403 without it, with a wrong one, or with one a byte short or
# long; the printed address (?token=) sets a cookie for this port and sends the browser to /
# without it; that cookie, or the bearer header, then opens everything.
for p in / /static/app.js /api/experiments /api/version "/api/trials/1.0/log?offset=0"; do
  [ "$(anon "$base$p")" = 403 ] || fail "$p answered without the token"
  [ "$(anon -H "Authorization: Bearer x$TOKEN" "$base$p")" = 403 ] || fail "$p answered a wrong token"
  [ "$(anon -H "Authorization: Bearer ${TOKEN%?}" "$base$p")" = 403 ] || fail "$p answered a token a byte short"
  [ "$(anon -b "t2exp_dashboard_$port=${TOKEN}0" "$base$p")" = 403 ] || fail "$p answered a cookie a byte long"
  [ "$(anon -b "t2exp_dashboard_1=$TOKEN" "$base$p")" = 403 ] || fail "$p answered another port's cookie"
  [ "$(anon -H "$AUTH" "$base$p")" = 200 ] || fail "$p refused the bearer token"
  [ "$(anon -b "t2exp_dashboard_$port=$TOKEN" "$base$p")" = 200 ] || fail "$p refused the cookie"
done
expect_in "$(curl -s --max-time 10 "$base/api/experiments")" "this dashboard needs its token"
first=$(curl -s -D - -o /dev/null --max-time 10 "$DASH_URL" | tr -d '\r')
expect_in "$first" "HTTP/1.1 303"
expect_in "$first" "Location: /"
expect_in "$first" "Set-Cookie: t2exp_dashboard_$port=$TOKEN; Path=/; HttpOnly; SameSite=Strict"
[ "${#TOKEN}" = 64 ] || fail "the token is not 32 random bytes in hex: $TOKEN"
echo "dashboard_api: nothing answered without the token, the printed address sets its cookie"

# The same bytes as the CLI.
same() { # URL CLI-ARGS...
  local url=$1; shift
  [ "$(get "$url")" = "$("$T2EXP" "$@" --json)" ] || fail "$url differs from t2exp $* --json"
}
same /api/experiments list
same /api/experiments/1 describe 1
same "/api/experiments/1?top=2" describe 1 --top 2
same /api/experiments/1/trials trials 1
same /api/experiments/1/metrics metrics 1
same "/api/experiments/1/metrics?kind=validation" metrics 1 --kind validation
same /api/trials/1.0/metrics metrics 1.0
same /api/trials/1/checkpoints checkpoints 1.0
same /api/experiments/1/importance importance 1
# The model registry: a version of experiment 1's best checkpoint.
expect_exit 0 "$T2EXP" model register best 1
same /api/models model list
same /api/models/best model describe best
expect_in "$(get /api/models/nope)" "no model 'nope'"
[ "$(code "$base/api/models/no%20pe")" = 404 ] || fail "a bad model name is not a 404"
[ "$(get /api/experiments/1/config)" = "$(sql "SELECT config_yaml FROM experiments WHERE id = 1")" ] || fail "config differs"
echo "dashboard_api: /api answers equal the CLI's --json"

# The log in pieces: offset 0 is `t2exp logs`' first bytes, X-Next-Offset where the answer ended,
# and an offset past the end answers nothing and points back at the end.
hdr() { curl -s -D - -o "$WORK/body" --max-time 10 -H "$AUTH" "$base$1" | tr -d '\r' | sed -n 's/^X-Next-Offset: //Ip'; }
logsize=$("$T2EXP" logs 1.0 | wc -c)
[ "$logsize" -gt 0 ] || fail "trial 1.0 has an empty log"
[ "$(hdr "/api/trials/1.0/log?offset=0")" = "$logsize" ] || fail "X-Next-Offset is not the log's $logsize bytes"
cmp -s "$WORK/body" <("$T2EXP" logs 1.0) || fail "the log's bytes differ from t2exp logs"
[ "$(hdr "/api/trials/1.0/log?offset=5")" = "$logsize" ] || fail "a later offset does not end at the log's end"
[ "$(hdr "/api/trials/1.0/log?offset=99999999")" = "$logsize" ] || fail "an offset past the end is not clamped to it"
[ ! -s "$WORK/body" ] || fail "an offset past the end answered bytes"
[ "$(code "$base/api/trials/1.0/log?offset=-3")" = 400 ] || fail "a negative offset not 400"
echo "dashboard_api: the log endpoint's offsets ($logsize bytes)"

# Errors are JSON with a reason; bad arguments 400, unknown things 404.
[ "$(code "$base/api/experiments/99")" = 404 ] || fail "unknown experiment not 404"
[ "$(code "$base/api/trials/1.99")" = 404 ] || fail "unknown trial not 404"
[ "$(code "$base/api/experiments/1/metrics?kind=bogus")" = 400 ] || fail "bad kind not 400"
[ "$(code "$base/api/nothing")" = 404 ] || fail "unknown endpoint not 404"
expect_in "$(get /api/experiments/99)" '"error"'

# Read-only: no method but GET/HEAD, and the store is opened read-only (a write through its
# connection would fail; nothing here writes, and the file's rows are unchanged by all of this).
before=$(sql "SELECT count(*) FROM metrics WHERE trial_id IN (SELECT id FROM trials WHERE experiment_id = 1)")
[ "$(code -X POST "$base/api/experiments")" = 405 ] || fail "POST not refused"
[ "$(code -X DELETE "$base/api/experiments/1")" = 405 ] || fail "DELETE not refused"
# The process holds the database file open read-only (O_RDONLY in its descriptor's flags).
dbfd=
for f in /proc/$dash/fd/*; do [ "$(readlink "$f")" = "$T2EXP_HOME/t2exp.db" ] && dbfd=${f##*/}; done
[ -n "$dbfd" ] || fail "the dashboard has no descriptor on the store"
flags=$(awk '/^flags:/ { print $2 }' "/proc/$dash/fdinfo/$dbfd")
[ $(( 8#$flags & 3 )) = 0 ] || fail "the store is open for writing (flags $flags)"
[ "$before" = "$(sql "SELECT count(*) FROM metrics WHERE trial_id IN (SELECT id FROM trials WHERE experiment_id = 1)")" ] \
  || fail "the finished experiment's rows changed"

# No path escapes: plain, dot-dot, encoded, doubled slashes, the store's own file name.
for p in "/static/../t2exp.db" "/static/..%2f..%2fetc%2fpasswd" "/static/%2e%2e/%2e%2e/etc/passwd" "//etc/passwd" \
         "/static//etc/passwd" "/static/vendor/../../../../etc/passwd" "/t2exp.db" "/static/%00index.html"; do
  c=$(curl -s --path-as-is -o "$WORK/body" --max-time 10 -w '%{http_code}' -H "$AUTH" "$base$p")
  [ "$c" = 404 ] || [ "$c" = 400 ] || fail "$p answered $c"
  ! grep -q 'root:' "$WORK/body" || fail "$p served /etc/passwd"
done
echo "dashboard_api: read-only, no path traversal"

# A client that connects and says nothing, and one that sends garbage, do not stall the others.
exec 7<>"/dev/tcp/127.0.0.1/$port"
exec 8<>"/dev/tcp/127.0.0.1/$port"
printf '\x00\xff\x13GARBAGE\r\n\r\n%.0s' {1..50} >&8 || true
t0=$(date +%s%N)
[ "$(code "$base/api/version")" = 200 ] || fail "a silent client stalled the dashboard"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "dashboard_api: answered in $ms ms beside a silent and a garbage client"
[ "$ms" -lt 5000 ] || fail "an answer took $ms ms beside a silent client"
exec 7>&- 8>&-

"$T2EXP" create "$WORK/run.yaml" "$TRIALS/quadratic.so" --quiet > "$WORK/run.log" 2>&1 &
running=$!
wait_for "SELECT count(*) FROM trials WHERE experiment_id = 2 AND state = 'RUNNING'"
# A storm of 1,000 requests while an experiment runs: all answered, the dashboard still serving,
# and the experiment completes as it would have.
urls=(/api/version /api/experiments /api/experiments/2 /api/experiments/2/trials "/api/trials/2.0/log?offset=0" /)
printf '%s\n' $(for i in $(seq 1000); do echo "$base${urls[i % ${#urls[@]}]}"; done) > "$WORK/urls"
ok=$(xargs -P 8 -I{} curl -s -o /dev/null --max-time 30 -H "$AUTH" -w '%{http_code}\n' {} < "$WORK/urls" | grep -c '^200$' || true)
echo "dashboard_api: storm: $ok of 1000 answered 200"
[ "$ok" = 1000 ] || fail "only $ok of 1000 requests answered 200"
kill -0 $dash || fail "the dashboard died in the storm"
[ "$(code "$base/api/version")" = 200 ] || fail "the dashboard stopped serving after the storm"
wait $running || fail "the running experiment failed during the storm: $(cat "$WORK/run.log")"
[ "$(sql "SELECT state FROM experiments WHERE id = 2")" = COMPLETED ] || fail "experiment 2 not COMPLETED"
[ "$(sql "SELECT batches_trained FROM trials WHERE experiment_id = 2")" = 800 ] || fail "experiment 2 did not train 800 batches"
# Importance of a search that searched nothing: a reason, as 409 (the CLI's exit 1).
[ "$(code "$base/api/experiments/2/importance")" = 409 ] || fail "importance of experiment 2 not 409"
expect_in "$(get /api/experiments/2/importance)" "searched no hyperparameter"
[ "$(code "$base/api/experiments/99/importance")" = 404 ] || fail "importance of an unknown experiment not 404"
# Importance answers are kept while the store is unchanged (a forest fit is seconds on a large
# experiment, probe_J), and only then: asked twice, the same; after a store change, answered anew.
[ "$(get /api/experiments/1/importance)" = "$(get /api/experiments/1/importance)" ] || fail "importance changed with the store unchanged"
expect_exit 0 "$T2EXP" create "$WORK/asha.yaml" "$TRIALS/quadratic.so" --quiet
e=$(sql "SELECT max(id) FROM experiments")
[ "$(code "$base/api/experiments/$e/importance")" = 200 ] || fail "importance of new experiment $e not 200"
expect_exit 0 "$T2EXP" delete "$e" --yes
[ "$(code "$base/api/experiments/$e/importance")" = 404 ] || fail "importance of deleted experiment $e was still answered"

# Live: the data version moved while the experiment wrote.
v=$(get /api/version)
expect_in "$v" '"data_version":'

# Usage errors.
expect_exit 2 "$T2EXP" dashboard --bind not-an-address
expect_exit 2 "$T2EXP" dashboard --port 70000
expect_exit 2 "$T2EXP" dashboard --jsno
expect_in "$OUT" "dashboard takes: --port N --bind ADDR"
kill $dash
wait $dash 2>/dev/null || true
expect_in "$(cat "$WORK/dash.log")" "stopped"

# A token of one's own (a stable address): T2EXP_DASHBOARD_TOKEN, checked before anything starts.
T2EXP_DASHBOARD_TOKEN="short" expect_exit 2 "$T2EXP" dashboard --port 0
expect_in "$OUT" "T2EXP_DASHBOARD_TOKEN must be 16 to 256 characters"
T2EXP_DASHBOARD_TOKEN="a b c d e f g h i j" expect_exit 2 "$T2EXP" dashboard --port 0
export T2EXP_DASHBOARD_TOKEN="my-own.Token_0123456789~"
start_dashboard
dash=$DASH
unset T2EXP_DASHBOARD_TOKEN
[ "$TOKEN" = "my-own.Token_0123456789~" ] || fail "the dashboard did not take T2EXP_DASHBOARD_TOKEN: $(cat "$WORK/dash.log")"
[ "$(anon -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/version")" = 200 ] || fail "its own token refused"
[ "$(anon "http://127.0.0.1:$PORT/api/version")" = 403 ] || fail "answered without its own token"
kill $dash
wait $dash 2>/dev/null || true
echo "dashboard_api: ok"
