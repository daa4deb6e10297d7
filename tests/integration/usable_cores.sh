#!/usr/bin/env bash
# "All cores" means the cores this process may use (framework/common/cores.c): under `taskset -c 0`
# on a machine of 2 or more cores, `t2exp info` says 1 core, and a search's slot pool is 1 slot:
# one worker (worker-0.log alone), the experiment's parts 1 and its trials' logs "threads 1,
# parts 1" (the machine's count gave 2 workers and parts 2, each trial on a core it may not use).
# Then, where this machine lets the test make a cgroup with a CPU quota (root, cgroup v1's cpu
# hierarchy or v2 with the cpu controller), a quota of 1 core and of 1.5 cores: `info` says 1 and 2.
# Then the same hierarchy mounted elsewhere, in a mount namespace of the test's own (`unshare`)
# where the standard mount point is gone: the quota is found through /proc/self/mountinfo (reading
# only the standard mount points, `info` said the machine's cores).
source "$(dirname "$0")/common.bash"
command -v taskset >/dev/null || { echo "usable_cores: skipped (no taskset)"; exit 77; }
[ "$(nproc --all)" -ge 2 ] || { echo "usable_cores: skipped (fewer than 2 cores)"; exit 77; }
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[,-].*//') # the first core this test may use

cores() { sed -n 's/^cores  *//p' <<<"$1"; }
expect_exit 0 taskset -c "$cpu" "$T2EXP" info
[ "$(cores "$OUT")" = 1 ] || fail "taskset -c $cpu: info said cores $(cores "$OUT"), wanted 1"

cat > "$WORK/search.yaml" <<'Y'
name: usable_cores
hyperparameters: {global_batch_size: 1, x: {type: double, minval: -10, maxval: 10}, y: -2}
searcher: {name: random, metric: loss, max_length: {batches: 1}, max_trials: 4}
reproducibility: {experiment_seed: 3}
Y
expect_exit 0 taskset -c "$cpu" "$T2EXP" create "$WORK/search.yaml" "$TRIALS/quadratic.so" --plain
expect_in "$OUT" "4 trial(s) completed, 0 errored"
logs=$(cd "$T2EXP_HOME/experiments/1" && ls worker-*.log | tr '\n' ' ')
[ "$logs" = "worker-0.log " ] || fail "taskset -c $cpu: workers' logs $logs, wanted worker-0.log alone"
[ "$(sql 'SELECT parts FROM experiments WHERE id = 1')" = 1 ] || fail "experiment parts $(sql 'SELECT parts FROM experiments WHERE id = 1'), wanted 1"
for t in $(sql "SELECT id FROM trials WHERE experiment_id = 1"); do
  expect_in "$("$T2EXP" logs "$t")" "threads 1, parts 1"
done

# quota_dir — a fresh cgroup directory whose CPU quota this test may set (v1 cpu or v2), or "".
quota_dir() {
  local base
  for base in /sys/fs/cgroup/cpu /sys/fs/cgroup /sys/fs/cgroup/unified; do
    [ -w "$base" ] || continue
    if [ -e "$base/cpu.cfs_quota_us" ] || grep -qw cpu "$base/cgroup.subtree_control" 2>/dev/null; then
      mkdir "$base/t2exp-test-$$" 2>/dev/null && { echo "$base/t2exp-test-$$"; return; }
    fi
  done
}
dir=$(quota_dir)
if [ -z "$dir" ]; then
  echo "usable_cores: the cgroup quota part skipped (no writable cgroup with the cpu controller here)"
  exit 0
fi
trap 'rmdir "$dir" 2>/dev/null; rm -rf "$WORK"' EXIT
# set_quota QUOTA PERIOD — in microseconds, as v1 and v2 both take them.
set_quota() {
  if [ -e "$dir/cpu.max" ]; then echo "$1 $2" > "$dir/cpu.max"
  else echo "$2" > "$dir/cpu.cfs_period_us" && echo "$1" > "$dir/cpu.cfs_quota_us"; fi
}
# In a child shell that joins the cgroup (the test itself stays out, so rmdir works after).
in_cgroup() { sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$dir" "$@"; }
for q in "100000 1" "150000 2"; do
  set -- $q
  set_quota "$1" 100000 || fail "cannot set $dir's quota"
  expect_exit 0 in_cgroup "$T2EXP" info
  [ "$(cores "$OUT")" = "$2" ] || fail "quota $1/100000: info said cores $(cores "$OUT"), wanted $2"
done

# The hierarchy at a mount point of the test's choosing: mountinfo names the mount (v1: type cgroup
# with the cpu option; v2: cgroup2), the cgroup's path is relative to it.
base=${dir%/*} name=${dir##*/}
if ! command -v unshare >/dev/null || ! mountpoint -q "$base"; then
  echo "usable_cores: the moved mount part skipped (no unshare, or $base is not a mount point)"
  exit 0
fi
fstype=$(awk -v p="$base" '$5 == p { for (i = 7; $i != "-"; i++); print $(i + 1); exit }' /proc/self/mountinfo)
opts=$([ "$fstype" = cgroup ] && echo "-o cpu" || true)
mkdir "$WORK/moved"
set_quota 100000 100000 || fail "cannot set $dir's quota"
# shellcheck disable=SC2016
expect_exit 0 unshare --mount --propagation private sh -c '
  umount -l "$1" && mount -t "$2" $3 cgroup "$4" || exit 90
  [ ! -e "$1/$5" ] || exit 91
  echo $$ > "$4/$5/cgroup.procs" && exec "$6" info' sh "$base" "$fstype" "$opts" "$WORK/moved" "$name" "$T2EXP"
[ "$(cores "$OUT")" = 1 ] || fail "quota 1 core, hierarchy mounted at $WORK/moved: info said cores $(cores "$OUT"), wanted 1"
echo "usable_cores: ok"
