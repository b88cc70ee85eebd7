#!/usr/bin/env bash
# Builds and runs libFuzzer targets with clang-14 under ASan+UBSan: `scripts/fuzz.sh TARGET SECONDS`, or
# `scripts/fuzz.sh all SECONDS` for every target in turn; `scripts/fuzz.sh build [TARGET...]` only builds
# (every target without names), and FUZZ_NO_BUILD=1 runs a target built before (CI builds all at once, then
# runs them two at a time). fuzz/CMakeLists.txt lists each target's sources. Targets: the parsers of outside
# input --
# safetensors, config (TOML recipes), idx (plain and gzip), cifar (CIFAR-10 binary), checkpoint (as on
# disk: header, size, CRC-32) and checkpoint_archive (size and CRC fixed up, so LibTorch's archive reader
# behind them gets the mutations), tar (WebDataset shards' tar headers and key grouping) and metrics
# (`train --metrics` JSON lines, as `fastloop plot` reads and draws them), image_decode (every image format,
# chosen by the first bytes; seeded with JPEGs and PNGs), image_webp, image_tiff and image_bmp_pnm (those
# formats only, from their own seeds: libwebp, libtiff and the hand-written BMP/PNM decoders), model_info
# (the class names and evaluation transform of checkpoints and exports), transform_spec (`--transform` text:
# parsed, printed back, compiled), csv (`--data csv:FILE` listings), aws_ini (~/.aws/credentials and config
# for s3:// shards), remote_url (remote `shards:` URLs and patterns, and the shards.idx beside them), coco_json
# (COCO instances annotation files read with simdjson, and the polygon/RLE masks made from them), class_map
# (segmentation masks: palette and greyscale PNGs through libspng, sub-byte rows unpacked by hand), video (video
# files demuxed and decoded by the system's FFmpeg 5, uninstrumented, through fastloop's frame index and reader),
# video_index (the video frame index cache files under $FASTLOOP_CACHE/video-index: parsed, re-encoded, written
# and read back).
# safetensors, config and metrics need only the standard library, toml++ and nlohmann-json; idx, cifar, checkpoint,
# model_info and transform_spec store into tensors, so they link the venv's LibTorch (uninstrumented; only
# fastloop's sources are).
# Crashes land in build-fuzz/<target>-artifacts/; the seed corpus is tests/fuzz_corpus/<target>/ (copied,
# never written). Reproduce one: build-fuzz/<target>_fuzzer build-fuzz/<target>-artifacts/crash-...
# FUZZ_ARGS adds libFuzzer flags, e.g. FUZZ_ARGS=-runs=1000000 to stop after a million executions.
set -euo pipefail
cd "$(dirname "$0")/.."
all_targets=(safetensors config idx cifar checkpoint checkpoint_archive metrics tar image_decode image_webp image_tiff
  image_bmp_pnm model_info transform_spec csv aws_ini remote_url coco_json class_map video video_index field_shards)
out=build-fuzz

# fuzz_build TARGET...: configures build-fuzz/ (fuzz/CMakeLists.txt, clang-14, Ninja) and builds those targets.
fuzz_build() {
  local cxx="${CXX_FUZZ:-clang++-14}"
  command -v "$cxx" >/dev/null || { echo "$cxx not found: apt-get install -y clang-14 libclang-rt-14-dev" >&2; exit 2; }
  [ -x .venv/bin/python ] || scripts/setup.sh --venv-only
  local torch_dir
  torch_dir="$(.venv/bin/python -c 'import os, torch; print(os.path.dirname(torch.__file__))')"
  if ! cmake -S fuzz -B "$out" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DFASTLOOP_TORCH_DIR="$torch_dir" \
      >"$out/configure.log" 2>&1; then
    cat "$out/configure.log" >&2
    exit 1
  fi
  local targets=()
  for t in "$@"; do targets+=(--target "${t}_fuzzer"); done
  cmake --build "$out" -j "$(nproc)" "${targets[@]}"
}

mkdir -p "$out"
target="${1:-safetensors}"
seconds="${2:-60}"
case "$target" in
  build) shift
         if (($#)); then fuzz_build "$@"; else fuzz_build "${all_targets[@]}"; fi
         exit 0 ;;
  all) fuzz_build "${all_targets[@]}"
       for t in "${all_targets[@]}"; do FUZZ_NO_BUILD=1 "$0" "$t" "$seconds"; done
       exit 0 ;;
esac
case "$target" in
  safetensors | coco_json) max_len=8192 ;;
  config | metrics | idx | model_info | transform_spec | csv | aws_ini | remote_url) max_len=4096 ;;
  video_index) max_len=8192 ;;  # the seeds: 0.4-2.4 KB index files of videos of 10-90 frames
  class_map | video) max_len=16384 ;;  # video: the seeds are 2-10 KB files of 12 frames
  cifar) max_len=10000 ;;  # three 3073-byte records and a partial one
  # 16384 bytes: the seeds are 3-5 KB zip archives (a Linear(2, 2) with SGD state) behind the header, and
  # 4-6 KB shards.
  checkpoint | checkpoint_archive | tar) max_len=16384 ;;
  field_shards) max_len=32768 ;;  # the seeds: 10-20 KB image-caption shards
  image_decode | image_webp | image_tiff | image_bmp_pnm) max_len=65536 ;;
  *) echo "unknown fuzz target '$target' (known: ${all_targets[*]}, all, build)" >&2; exit 2 ;;
esac
[ -n "${FUZZ_NO_BUILD:-}" ] || fuzz_build "$target"
mkdir -p "$out/$target-corpus" "$out/$target-artifacts"
corpus="${target%_archive}"  # checkpoint_archive starts from the checkpoint seeds
cp -n tests/fuzz_corpus/"$corpus"/* "$out/$target-corpus/" 2>/dev/null || true
# The targets write their inputs to files (the parsers read paths): in memory, removed afterwards.
scratch="$(mktemp -d /dev/shm/fastloop_fuzz.XXXXXX 2>/dev/null || mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export TMPDIR="$scratch"
# LibTorch's own leaks on malformed archives are listed (and explained) in fuzz/lsan.supp.
export LSAN_OPTIONS="suppressions='$PWD/fuzz/lsan.supp'${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# -rss_limit_mb bounds what a hostile header length could make us allocate; -max_len lets headers grow.
"$out/${target}_fuzzer" "$out/$target-corpus" -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=2048 \
  -timeout=10 -print_final_stats=1 -artifact_prefix="$out/$target-artifacts/" ${FUZZ_ARGS:-}
