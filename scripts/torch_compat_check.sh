#!/usr/bin/env bash
# Builds fastloop against another torch wheel's LibTorch — by default 2.11.0+cu130, the GPU machine's —
# and runs a CPU smoke test with it, so a LibTorch difference shows here (and is fixed in
# src/fastloop/core/compat.h) instead of costing the GPU run its one try. Not part of CI: it downloads a
# 530 MB wheel and compiles everything once more (~15 min on 2 cores).
#
#   scripts/torch_compat_check.sh [VERSION]      default 2.11.0; results in build-torch-VERSION/compat.log
#
# The wheel goes into its own venv without its dependencies (nothing imports it: CMake reads its
# share/cmake). Its CUDA libraries' dependencies (cuDNN, NCCL, cuBLAS, ...) are taken from the project
# venv's nvidia-* packages at link and run time (-rpath-link, LD_LIBRARY_PATH): same CUDA 13 sonames.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-2.11.0}
venv=${FASTLOOP_VENV_HOME:-$HOME/.cache/fastloop}/torch-$version
build=build-torch-$version
site=$venv/lib/python3.11/site-packages
if [ ! -d "$site/torch/share/cmake" ]; then
  echo "torch_compat_check: installing torch==$version (no dependencies) into $venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --no-deps --no-compile "torch==$version"
fi
nvidia_libs=$(find "$PWD/.venv/lib/python3.11/site-packages/nvidia" -name 'lib' -type d 2>/dev/null | paste -sd: -)
[ -n "$nvidia_libs" ] || { echo "torch_compat_check: no nvidia-* libraries in .venv; run scripts/setup.sh" >&2; exit 1; }

export CCACHE_BASEDIR=$PWD CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
mkdir -p "$build"
log=$PWD/$build/compat.log
{
  echo "# fastloop against torch $version ($(date -u +%FT%TZ), commit $(git rev-parse --short HEAD))"
  grep -m1 __version__ "$site/torch/version.py"
} > "$log"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$site/torch/share/cmake" \
  -DFASTLOOP_PYTHON="$PWD/.venv/bin/python" -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$nvidia_libs" \
  -DCMAKE_SHARED_LINKER_FLAGS="-Wl,-rpath-link,$nvidia_libs" 2>&1 | tail -3 | tee -a "$log"
# Also at build time: the test binary runs after linking (gtest_discover_tests lists its tests).
export LD_LIBRARY_PATH=$nvidia_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
start=$SECONDS
if ! nice cmake --build "$build" -j "$(nproc)" 2>&1 | tee "$build/build.log" | grep -E "error|FAILED" | head -40 | tee -a "$log"; then
  :
fi
if ! [ -x "$build/fastloop" ] || grep -q "FAILED" "$build/build.log"; then
  echo "build: FAILED (see $build/build.log)" | tee -a "$log"
  exit 1
fi
echo "build: ok in $((SECONDS - start)) s (every target, tests included)" | tee -a "$log"
"$build/fastloop" doctor 2>&1 | grep -iE "libtorch|torch" | head -3 | tee -a "$log"
"$build/fastloop" train --device cpu --data synthetic:1x28x28:256 --epochs 1 --batch-size 32 --threads 2 2>&1 |
  tail -2 | tee -a "$log"
"$build/tests/fastloop_tests" --gtest_filter='Config.*:Checkpoint.Stopped*:Techniques.Amp*:Collectives.*' 2>&1 |
  tail -3 | tee -a "$log"
