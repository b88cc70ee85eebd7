#!/usr/bin/env bash
# Builds and runs a libFuzzer target with clang-14 under ASan+UBSan: `scripts/fuzz.sh safetensors SECONDS`.
# The parser needs only the standard library and nlohmann-json, so no LibTorch is linked. Crashes land in
# build-fuzz/<target>-artifacts/; the seed corpus is tests/fuzz_corpus/<target>/ (copied, never written).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-safetensors}"
seconds="${2:-60}"
case "$target" in
  safetensors) sources=(fuzz/safetensors_fuzzer.cpp src/fastloop/io/safetensors.cpp) ;;
  *) echo "unknown fuzz target '$target' (known: safetensors)" >&2; exit 2 ;;
esac
CXX="${CXX_FUZZ:-clang++-14}"
command -v "$CXX" >/dev/null || { echo "$CXX not found: apt-get install -y clang-14 libclang-rt-14-dev" >&2; exit 2; }
out=build-fuzz
mkdir -p "$out/$target-corpus" "$out/$target-artifacts"
"$CXX" -std=c++17 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -Isrc "${sources[@]}" -o "$out/${target}_fuzzer"
cp -n tests/fuzz_corpus/"$target"/* "$out/$target-corpus/" 2>/dev/null || true
# -rss_limit_mb bounds what a hostile header length could make us allocate; -max_len lets headers grow.
"$out/${target}_fuzzer" "$out/$target-corpus" -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=2048 \
  -timeout=10 -print_final_stats=1 -artifact_prefix="$out/$target-artifacts/"
