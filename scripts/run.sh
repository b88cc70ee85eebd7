#!/usr/bin/env bash
# The README's main command: set up (idempotent), build the CLI, train the default recipe
# (recipes/fashion_mnist.toml: small residual CNN on Fashion-MNIST) and print the test accuracy.
# Extra arguments go to `fastloop train`. A full run that ends below 92% test accuracy fails (exit 3):
# the recipe or the data changed (shorter runs, given --epochs or --max-steps, skip the check).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh fastloop_cli  # the CLI only: the test suite is scripts/test.sh's
expect=(--expect-test-acc 0.92)
for arg in "$@"; do case "$arg" in --expect-test-acc*|--max-steps*|--epochs*) expect=() ;; esac; done
exec "${BUILD_DIR:-build}/fastloop" train --config recipes/fashion_mnist.toml "${expect[@]}" "$@"
