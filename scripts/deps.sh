#!/usr/bin/env bash
# deps.sh — installs the Debian packages t2exp needs (only those missing). Sourced by the
# quick-start scripts; needs root (or sudo) when something is missing.
T2EXP_PACKAGES=(build-essential cmake pkg-config libopenblas-dev libyaml-dev libsqlite3-dev sqlite3
  libarchive-dev libdeflate-dev libssl-dev libopenmpi-dev openmpi-bin dataset-fashion-mnist
  time zstd libcsv-dev libmicrohttpd-dev libcairo2-dev)
# What only the test suite needs: clang and libFuzzer for fuzz/ci.sh, Chromium for the browser tests,
# Optuna for the search benchmark's reference, bash-completion for the completion test, and a
# single-node Slurm (munge, slurmctld, slurmd, the client commands) that it_slurm_pool starts itself.
T2EXP_TEST_PACKAGES=(clang libclang-rt-14-dev chromium python3-optuna bash-completion
  munge slurmctld slurmd slurm-client)

t2exp_install_deps() {
  local missing=()
  for p in "${T2EXP_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Configures and builds into $1 with the extra cmake arguments that follow.
t2exp_build() {
  local dir="$1"; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
}
