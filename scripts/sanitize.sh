#!/usr/bin/env bash
# Builds fastloop with sanitizers in its own folder and runs tests under them:
#   scripts/sanitize.sh address [CTEST_REGEX]   ASan+UBSan in build-asan/, the whole suite (or tests matching
#                                               the regex)
#   scripts/sanitize.sh thread  [CTEST_REGEX]   TSan in build-tsan/, the loader and distributed tests
#   SANITIZE_ONLY=data scripts/sanitize.sh address   only core/ and data/ and their tests (FASTLOOP_ONLY=data,
#                                               in build-asan-data/): the loader and the parsers; CI runs this
# Everything fastloop compiles is instrumented; LibTorch comes prebuilt and is not, which is why the
# options below exist (each says what it works around). Any report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-address}"
root="$PWD"
# Test names that exercise threads: the loader, sampler, device data and distributed (Dist) tests.
tsan_tests='Loader|Sampler|DeviceData|Dist'
# Left out under every sanitizer: the find_package consumer test installs the instrumented library and
# links it into an uninstrumented program, where the sanitizer runtime cannot load first (it checks
# packaging, not memory, and scripts/test.sh runs it).
exclude='FindPackageConsumer'
case "$mode" in
  # Also left out under ASan: the out-of-memory test limits virtual memory (ulimit -v 6 GB), and ASan
  # reserves ~15 TB of address space for its shadow at start, so that process cannot start under it.
  address) sanitize=address,undefined; build_dir=build-asan; exclude="$exclude|Faults.BatchTooBigForMemory" ;;
  thread) sanitize=thread; build_dir=build-tsan ;;
  *) echo "usage: [SANITIZE_ONLY=data] scripts/sanitize.sh address|thread [CTEST_REGEX]" >&2; exit 2 ;;
esac
case "${SANITIZE_ONLY:-}" in
  "") ;;
  data) build_dir=$build_dir-data ;;
  *) echo "SANITIZE_ONLY=$SANITIZE_ONLY: expected data (or unset for everything)" >&2; exit 2 ;;
esac

[ -x .venv/bin/python ] || scripts/setup.sh --venv-only  # apt packages and the venv whose LibTorch we build against
# CCACHE_NOHASHDIR: with -g ccache would hash the working directory, so another checkout (CI's clean clone)
# could never reuse this build's objects; paths are relative under CCACHE_BASEDIR anyway.
export CCACHE_BASEDIR="$PWD" CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
export CCACHE_NOHASHDIR=1
prefix="${CMAKE_PREFIX_PATH:-$(.venv/bin/python -c 'import torch; print(torch.utils.cmake_prefix_path)')}"
# -O1 -g1: reports keep their frames and lines, and the build is faster than the -O3 Release one.
# NDEBUG as LibTorch was built: some of its classes have members only without NDEBUG (RecordFunction's
# inputs_valid_), so code compiled without it reads LibTorch's objects at the wrong offsets — UBSan
# reported exactly that ("load of value 97, which is not a valid value for type 'bool'").
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_PREFIX_PATH="$prefix" -DFASTLOOP_PYTHON="$root/.venv/bin/python" -DFASTLOOP_SANITIZE="$sanitize" -DFASTLOOP_ONLY="${SANITIZE_ONLY:-}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"

# print_stacktrace: UBSan names the call chain (the build already stops at the first report,
# -fno-sanitize-recover=undefined). LeakSanitizer stays on: LibTorch's once-per-process singletons stay
# reachable from its globals, so they are not reported.
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="suppressions='$root/tests/tsan.supp':halt_on_error=1:second_deadlock_stack=1"

# The whole suite under ASan: the test binary in a few processes (scripts/gtest_shards.sh: a start under ASan
# costs ~1 s of CPU, and CTest starts one per test), the out-of-memory test left out, then CTest's others.
if [ "$mode" = address ] && [ -z "${2:-}" ] && [ -z "${SANITIZE_SKIP:-}" ]; then
  gtest_filter="-Faults.BatchTooBigForMemory*"
  [ "${SANITIZE_ONLY:-}" != data ] || gtest_filter="$gtest_filter:*Cli.*"  # not built there (no CLI)
  SHARD_TIMEOUT=3600 "$root/scripts/gtest_shards.sh" "$build_dir/tests/fastloop_tests" "$gtest_filter"
  cd "$build_dir"
  ctest --output-on-failure -j 2 --timeout 1800 -LE gtest -E "$exclude"
  exit 0
fi
cd "$build_dir"
case "$mode" in
  address) regex="${2:-.}" ;;
  thread) regex="${2:-$tsan_tests}" ;;
esac
# SANITIZE_SKIP: a CTest regex of more tests to leave out.
ctest --output-on-failure -j 2 --timeout 1800 -R "$regex" -E "$exclude${SANITIZE_SKIP:+|$SANITIZE_SKIP}"
