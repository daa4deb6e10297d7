#!/usr/bin/env bash
# quickstart.sh — the README's first command: install what is missing, build, and run the main
# job: an experiment training the seeds' CNN on Fashion-MNIST (from the Debian package
# dataset-fashion-mnist) through `t2exp create`, then show it with `t2exp describe`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
t2exp_install_deps
t2exp_build build
build/t2exp create configs/examples/fashion_mnist_cnn.yaml build/trials/fashion_mnist_cnn.so "$@"
build/t2exp describe "$(build/t2exp list --csv | tail -n 1 | cut -d, -f1)" --top 5
