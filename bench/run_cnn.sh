#!/usr/bin/env bash
# The seeds' CNN: training and eval throughput (batch 64) against PyTorch
# (../shared/bench/torch_cnn.py) and the fraction of this machine's sgemm ceiling
# (../shared/bench/sgemm_peak.c), all measured in this run, one `cnn:` line per thread count.
#   THREADS="1 2 4 8 16"  thread counts (default 2)
#   PYTHON=/path/python3  the interpreter with the PyTorch to compare with (default /usr/bin/python3,
#                         Debian's python3-torch; current PyTorch lives in a venv or conda elsewhere)
#   BATCH, BATCHES        batch size (64) and timed batches (300)
# Everything runs on the BLAS core `t2exp` itself would run on (`t2exp info`), the sgemm ceiling
# included, unless OPENBLAS_CORETYPE is already set.
set -euo pipefail
shared="${T2EXP_SHARED:-$(cd "$(dirname "$0")/../.." && pwd)/shared}"
threads_list="${THREADS:-2}" batch="${BATCH:-64}" batches="${BATCHES:-300}" python="${PYTHON:-/usr/bin/python3}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  core=$(build/t2exp info --json | sed -n 's/.*"blas_core": "\([^"]*\)".*/\1/p')
  [ -n "$core" ] && export OPENBLAS_CORETYPE="$core"
fi
echo "blas core: ${OPENBLAS_CORETYPE:-OpenBLAS default}; $(lscpu | sed -n 's/^Model name: *//p')"
cc -O2 "$shared/bench/sgemm_peak.c" -o "$tmp/sgemm_peak" -lopenblas
get() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }
for threads in $threads_list; do
  peak=$(OPENBLAS_NUM_THREADS=$threads "$tmp/sgemm_peak" | sed -n 's/.*gflops=\([0-9.]*\).*/\1/p')
  torch=$("$python" "$shared/bench/torch_cnn.py" --batch "$batch" --threads "$threads" --batches "$batches")
  ours=$(build/bench/cnn --bench "$batches" --batch "$batch" --threads "$threads")
  echo "$torch"; echo "$ours"; echo "sgemm_peak gflops=$peak threads=$threads"
  # FLOPs per training image: forward (conv1 0.39M + conv2 21.23M + dense 2.36M + 0.003M) x 3 for
  # forward + both backward GEMMs, less conv1's input gradient, which is never computed.
  awk -v ot="$(get train_img_per_s "$ours")" -v tt="$(get train_img_per_s "$torch")" \
      -v oe="$(get eval_img_per_s "$ours")" -v te="$(get eval_img_per_s "$torch")" -v peak="$peak" -v th="$threads" 'BEGIN {
    flops = 3 * 23.98e6 - 0.39e6
    printf "cnn: ratio=%.2f threads=%d train_img_per_s=%.0f torch_train_img_per_s=%.0f eval_ratio=%.2f eval_img_per_s=%.0f torch_eval_img_per_s=%.0f gflops=%.1f sgemm_peak_gflops=%.1f ceiling_fraction=%.2f\n",
      ot / tt, th, ot, tt, oe / te, oe, te, ot * flops / 1e9, peak, ot * flops / 1e9 / peak }'
done
