#!/usr/bin/env bash
# Runs a GoogleTest binary in SHARDS processes (GoogleTest's own GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX), JOBS at
# a time, in the binary's folder as CTest runs it. CTest starts one process per test, and each start of a
# LibTorch-linked binary costs ~0.65 s of CPU on the 2-core EPYC (LibTorch's static initialisers), ~1 s under
# ASan: 537 tests paid ~6 minutes of CPU for it, the sanitizer stage's 202 tests 152 s of its wall against 34 s
# in two shards. Prints a line per shard, and a failed shard's whole log; exits 1 when any failed.
# Usage: scripts/gtest_shards.sh BINARY [GTEST_FILTER]
# Env: SHARDS (default 4 per job), JOBS (default nproc), SHARD_TIMEOUT seconds per shard (default 1800).
# One test by name stays `ctest -R NAME` or `BINARY --gtest_filter=NAME`.
set -euo pipefail
binary="$(realpath "$1")"
filter="${2:-*}"
jobs="${JOBS:-$(nproc)}"
shards="${SHARDS:-$((4 * jobs))}"
logs="$(mktemp -d "${TMPDIR:-/tmp}/fastloop-shards.XXXXXX")"
trap 'rm -rf "$logs"' EXIT
cd "$(dirname "$binary")"
export binary filter shards logs timeout_s="${SHARD_TIMEOUT:-1800}"
start=$SECONDS
run_shard() {  # run_shard INDEX: one shard, its log in $logs/INDEX.log
  local i=$1 t0=$SECONDS rc=0
  GTEST_TOTAL_SHARDS="$shards" GTEST_SHARD_INDEX="$i" timeout "$timeout_s" "$binary" --gtest_filter="$filter" \
    >"$logs/$i.log" 2>&1 || rc=$?
  local ran
  ran=$(grep -m1 -oE '^\[==========\] [0-9]+ tests? from' "$logs/$i.log" | grep -oE '[0-9]+' || echo "?")
  if ((rc == 0)); then
    echo "shard $((i + 1))/$shards: $ran tests passed in $((SECONDS - t0)) s"
  else
    cat "$logs/$i.log"
    echo "shard $((i + 1))/$shards: FAILED (exit $rc$( ((rc == 124)) && echo ": over ${timeout_s} s"))"
    return 1
  fi
}
export -f run_shard
failed=0
seq 0 $((shards - 1)) | xargs -P "$jobs" -I{} bash -c 'run_shard {}' || failed=1
if ((failed)); then
  echo "gtest_shards: $(basename "$binary") failed (above) after $((SECONDS - start)) s"
  exit 1
fi
echo "gtest_shards: $(basename "$binary"), $shards shards, all passed in $((SECONDS - start)) s"
