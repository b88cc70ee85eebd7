#!/usr/bin/env bash
# The README's test command: set up (idempotent), build, and run the whole test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j 2 --timeout 900
