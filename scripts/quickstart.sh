#!/usr/bin/env bash
# quickstart.sh — the README's first command: install what is missing, build, and run the main
# job: the seeds' CNN trained on Fashion-MNIST (from the Debian package dataset-fashion-mnist).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
t2exp_install_deps
t2exp_build build
build/bench/cnn --epochs 1 --threads "$(nproc)"
