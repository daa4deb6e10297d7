#!/usr/bin/env bash
# dist_rank_death.sh — a rank killed mid-training ends the whole MPI job promptly with a failure
# status instead of leaving the other rank blocked in the gradient allreduce: what the controller
# relies on to restart the trial from its checkpoint (issue 7).
source "$(dirname "$0")/common.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"   # Open MPI's own allocations are not ours to check
bin="$T2EXP_BUILD/bench/dist"
[ -x "$T2EXP_BUILD/tests/test_dist_mpi_comm" ] || { echo "dist_rank_death: skipped (built without MPI)"; exit 77; }
have_fashion_mnist || { echo "dist_rank_death: skipped (no dataset-fashion-mnist)"; exit 77; }
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)

mpirun "${root[@]}" -np 2 --oversubscribe "$bin" --bench 1000000 --threads 1 > "$WORK/out" 2>&1 &
job=$!
# rank_pid R — the pid of rank R among mpirun's children (Open MPI puts the rank in their env);
# nothing if it has not started yet. Always status 0: under set -e, a failed last grep would end
# the script silently where it assigns r0 and r1 (it failed so once here, with no output, in 1 s).
rank_pid() {
  local p
  for p in $(pgrep -P "$job"); do
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && { echo "$p"; return 0; }
  done
  return 0
}
r0="" r1=""
for _ in $(seq 100); do
  r0=$(rank_pid 0) r1=$(rank_pid 1)
  [ -n "$r0" ] && [ -n "$r1" ] && break
  sleep 0.1
done
[ -n "$r1" ] || { kill "$job" 2>/dev/null; fail "ranks did not start: $(cat "$WORK/out")"; }
sleep 4 # loading the dataset and a few dozen training steps
kill -0 "$r0" || fail "rank 0 died before the kill: $(cat "$WORK/out")"
kill -9 "$r1"
start=$SECONDS
set +e
timeout 60 tail --pid="$job" -f /dev/null
wait "$job"
status=$?
set -e
[ "$status" -ne 0 ] || fail "mpirun exited 0 after a rank was killed"
[ "$status" -ne 124 ] || fail "mpirun still running 60 s after a rank was killed"
# alive PID — running (a zombie waiting to be reaped by init is dead enough).
alive() { [ -r "/proc/$1/stat" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
for _ in $(seq 50); do alive "$r0" || break; sleep 0.1; done
! alive "$r0" || { kill -9 "$r0"; fail "rank 0 survived its peer's death"; }
echo "dist_rank_death: rank 1 killed; mpirun exited $status after $((SECONDS - start)) s and took rank 0 with it"
