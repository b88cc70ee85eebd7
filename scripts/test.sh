#!/usr/bin/env bash
# The README's test command: set up (idempotent), build, run the whole C++ test suite, then
# the Python package's tests (pytest, tests/python) against the fastloop that setup installed in .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Under ATEN_CPU_CAPABILITY (another CPU's kernels, scripts/test_capabilities.sh) the goldens of PyTorch's own
# training steps are made again with the same kernels: the build's come from this machine's own.
if [ -n "${ATEN_CPU_CAPABILITY:-}" ] && [ -z "${FASTLOOP_GOLDEN_DIR:-}" ]; then
  FASTLOOP_GOLDEN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/fastloop-goldens-$ATEN_CPU_CAPABILITY.XXXXXX")"
  export FASTLOOP_GOLDEN_DIR
  trap 'rm -rf "$FASTLOOP_GOLDEN_DIR"' EXIT
  .venv/bin/python tests/tools/make_test_goldens.py "$FASTLOOP_GOLDEN_DIR"
fi
# The GoogleTest suite in a few processes (scripts/gtest_shards.sh says why), then CTest's other tests.
scripts/gtest_shards.sh "${BUILD_DIR:-build}/tests/fastloop_tests"
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j 2 --timeout 900 -LE gtest)
FASTLOOP_BUILD_DIR="$PWD/${BUILD_DIR:-build}" .venv/bin/python -m pytest -q -p no:cacheprovider tests/python
