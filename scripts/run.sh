#!/usr/bin/env bash
# The README's main command: set up (idempotent), build, train the default recipe
# (recipes/fashion_mnist.toml: small residual CNN on Fashion-MNIST) and print the test accuracy.
# Extra arguments go to `fastloop train`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec "${BUILD_DIR:-build}/fastloop" train --config recipes/fashion_mnist.toml "$@"
