#!/usr/bin/env bash
# The README's main command: set up (idempotent), build the CLI, train the default recipe
# (recipes/fashion_mnist.toml: small residual CNN on Fashion-MNIST) and print the test accuracy.
# Extra arguments go to `fastloop train`. The recipe plans itself into 300 s on any machine (its
# run.time_budget); a run that ends below 85% test accuracy fails (exit 3): the recipe or the data changed.
# 85% holds where 300 s buy the fewest steps: ~1.4 epochs in float32 on a 2-core AVX2-only CPU, whose
# 8-epoch run was at 79.6% after one epoch and 88.3% after two (native bf16 reaches ~93%). Shorter runs,
# given --epochs or --max-steps, skip the check.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh fastloop_cli  # the CLI only: the test suite is scripts/test.sh's
expect=(--expect-test-acc 0.85)
for arg in "$@"; do case "$arg" in --expect-test-acc*|--max-steps*|--epochs*) expect=() ;; esac; done
exec "${BUILD_DIR:-build}/fastloop" train --config recipes/fashion_mnist.toml "${expect[@]}" "$@"
