#!/usr/bin/env bash
# Builds and runs libFuzzer targets with clang-14 under ASan+UBSan: `scripts/fuzz.sh TARGET SECONDS`, or
# `scripts/fuzz.sh all SECONDS` for every target in turn. Targets: the parsers of outside input --
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
# (segmentation masks: palette and greyscale PNGs through libspng, sub-byte rows unpacked by hand).
# safetensors, config and metrics need only the standard library, toml++ and nlohmann-json; idx, cifar and checkpoint
# store into tensors, so they link the venv's LibTorch (uninstrumented; only fastloop's sources are).
# Crashes land in build-fuzz/<target>-artifacts/; the seed corpus is tests/fuzz_corpus/<target>/ (copied,
# never written). Reproduce one: build-fuzz/<target>_fuzzer build-fuzz/<target>-artifacts/crash-...
# FUZZ_ARGS adds libFuzzer flags, e.g. FUZZ_ARGS=-runs=1000000 to stop after a million executions.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-safetensors}"
seconds="${2:-60}"
all_targets=(safetensors config idx cifar checkpoint checkpoint_archive metrics tar image_decode image_webp image_tiff
  image_bmp_pnm model_info transform_spec csv aws_ini remote_url coco_json class_map)
if [ "$target" = all ]; then
  for t in "${all_targets[@]}"; do "$0" "$t" "$seconds"; done
  exit 0
fi
torch=0
libs=()
case "$target" in
  safetensors) sources=(fuzz/safetensors_fuzzer.cpp src/fastloop/io/safetensors.cpp); max_len=8192 ;;
  config) sources=(fuzz/config_fuzzer.cpp src/fastloop/core/config.cpp src/fastloop/core/config_fields.cpp)
          max_len=4096 ;;
  # metrics: `fastloop plot`'s --metrics JSON lines, parsed and drawn into the HTML page.
  metrics) sources=(fuzz/metrics_fuzzer.cpp src/fastloop/io/metrics_file.cpp src/fastloop/plot/plot.cpp
    src/fastloop/core/html_svg.cpp); max_len=4096 ;;
  idx) sources=(fuzz/idx_fuzzer.cpp src/fastloop/data/sources/idx.cpp); max_len=4096; torch=1 ;;
  # model_info: the class names and transform JSON of checkpoints and exports (its header reaches ATen's).
  model_info) sources=(fuzz/model_info_fuzzer.cpp src/fastloop/models/model_info.cpp); max_len=4096; torch=1 ;;
  # transform_spec: `--transform` text and the eval transform of checkpoints, parsed and compiled (every op's
  # argument checks); its headers reach ATen's. The batch assembly beside them (decoders) is not linked.
  transform_spec) sources=(fuzz/transform_spec_fuzzer.cpp src/fastloop/data/transforms/functional/*.cpp
    src/fastloop/data/loader/sampler.cpp); max_len=4096; torch=1
    for f in src/fastloop/data/transforms/*.cpp; do
      case "$f" in */augment.cpp | */image_augment.cpp | */random_erasing.cpp | */target_batch.cpp) ;; *) sources+=("$f") ;; esac
    done ;;
  # csv: `--data csv:TRAIN.csv` listings (RFC 4180 fields, the path/label columns and label kinds).
  csv) sources=(fuzz/csv_fuzzer.cpp src/fastloop/data/sources/csv_files.cpp src/fastloop/data/sources/image_files.cpp)
    max_len=4096 ;;
  # aws_ini: the AWS credentials/config files and the credential chain over them (s3:// shards).
  aws_ini) sources=(fuzz/aws_ini_fuzzer.cpp src/fastloop/data/sources/aws_credentials.cpp); max_len=4096 ;;
  # remote_url: a remote shards spec (URLs, brace patterns, "::") and its shards.idx.
  remote_url) sources=(fuzz/remote_url_fuzzer.cpp src/fastloop/data/sources/remote_url.cpp
    src/fastloop/data/sources/shard_index_file.cpp src/fastloop/data/sources/shards.cpp src/fastloop/data/sources/tar.cpp
    src/fastloop/data/sources/shard_order.cpp src/fastloop/data/sources/class_names.cpp); max_len=4096 ;;
  # coco_json: COCO annotation files (simdjson, linked as the library links it) and their masks.
  coco_json) sources=(fuzz/coco_json_fuzzer.cpp src/fastloop/data/targets/coco_annotations.cpp
    src/fastloop/data/targets/coco_annotations_read.cpp src/fastloop/data/targets/coco_mask.cpp
    src/fastloop/data/targets/json_chunks.cpp); max_len=8192
    libs=(-DSIMDJSON_THREADS_ENABLED=1 -lsimdjson) ;;
  # class_map: segmentation masks (VOC's palette PNGs, greyscale ones) through libspng, uninstrumented.
  class_map) sources=(fuzz/class_map_fuzzer.cpp src/fastloop/data/codecs/class_map.cpp); max_len=16384
    libs=(-lspng) ;;
  # 10000 bytes: three 3073-byte records and a partial one.
  cifar) sources=(fuzz/cifar_fuzzer.cpp src/fastloop/data/sources/cifar.cpp); max_len=10000; torch=1 ;;
  # 16384 bytes: the seeds (a Linear(2, 2) with SGD state) are 3-5 KB zip archives behind the header.
  checkpoint | checkpoint_archive) sources=(fuzz/${target}_fuzzer.cpp src/fastloop/train/checkpoint.cpp
    src/fastloop/train/amp.cpp src/fastloop/train/lookahead.cpp); max_len=16384; torch=1 ;;
  # tar: the shard reader's tar headers and WebDataset grouping; 16384 bytes: the seeds are 4-6 KB shards.
  tar) sources=(fuzz/tar_fuzzer.cpp src/fastloop/data/sources/tar.cpp src/fastloop/data/sources/shards.cpp
    src/fastloop/data/sources/shard_order.cpp src/fastloop/data/sources/class_names.cpp); max_len=16384 ;;
  # image_*: headers and pixels through libjpeg-turbo, libspng, libwebp and libtiff (uninstrumented system
  # libraries) and the BMP/PNM decoders; every target links every decoder (ImageDecoder dispatches).
  image_decode | image_webp | image_tiff | image_bmp_pnm) sources=(fuzz/${target}_fuzzer.cpp
    src/fastloop/data/codecs/image_decode.cpp src/fastloop/data/codecs/jpeg_region.cpp src/fastloop/data/codecs/image_bmp.cpp
    src/fastloop/data/codecs/image_pnm.cpp src/fastloop/data/codecs/image_webp.cpp src/fastloop/data/codecs/image_tiff.cpp); max_len=65536
    libs=(-lturbojpeg -ljpeg -lspng -lwebpdemux -lwebp -ltiff) ;;
  *) echo "unknown fuzz target '$target' (known: ${all_targets[*]}, all)" >&2; exit 2 ;;
esac
CXX="${CXX_FUZZ:-clang++-14}"
command -v "$CXX" >/dev/null || { echo "$CXX not found: apt-get install -y clang-14 libclang-rt-14-dev" >&2; exit 2; }
std=-std=c++17
torch_flags=()
if ((torch)); then
  [ -x .venv/bin/python ] || scripts/setup.sh --venv-only
  torch_dir="$(.venv/bin/python -c 'import os, torch; print(os.path.dirname(torch.__file__))')"
  # LibTorch's headers from 2.10 on need C++20, as in CMakeLists.txt.
  std=-std=c++20
  torch_flags=(-I"$torch_dir/include" -I"$torch_dir/include/torch/csrc/api/include"
    -L"$torch_dir/lib" -Wl,-rpath,"$torch_dir/lib" -ltorch_cpu -lc10)
fi
out=build-fuzz
mkdir -p "$out/$target-corpus" "$out/$target-artifacts"
corpus="${target%_archive}"  # checkpoint_archive starts from the checkpoint seeds
"$CXX" "$std" -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -Isrc -Ifuzz "${sources[@]}" "${torch_flags[@]}" "${libs[@]}" -lz -o "$out/${target}_fuzzer"
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
