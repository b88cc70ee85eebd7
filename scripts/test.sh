#!/usr/bin/env bash
# The README's test command: set up (idempotent), build, run the whole C++ test suite with CTest, then
# the Python package's tests (pytest, tests/python) against the fastloop that setup installed in .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j 2 --timeout 900)
FASTLOOP_BUILD_DIR="$PWD/${BUILD_DIR:-build}" .venv/bin/python -m pytest -q -p no:cacheprovider tests/python
