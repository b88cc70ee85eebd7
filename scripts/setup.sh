#!/usr/bin/env bash
# Idempotent setup on Debian 12: apt packages, the project venv (.venv) with the pinned torch wheel
# (whose LibTorch fastloop builds against), then a Release build in build/ (library, CLI, tests and the
# Python module), then `pip install .` of the Python package into .venv from that same build.
# Usage: scripts/setup.sh [TARGET...]   builds only those CMake targets (scripts/run.sh: fastloop_cli) and
#                                       installs no Python package; with none, everything.
#        scripts/setup.sh --venv-only   the packages and the venv, no build (scripts/sanitize.sh and
#                                       scripts/fuzz.sh build their own: a Release build here would be waste)
# Env: FASTLOOP_VENV_HOME  where the venv really lives (default ~/.cache/fastloop); .venv links to it,
#                          so fresh clones on one machine share the 5 GB torch install.
#      CMAKE_PREFIX_PATH   set it to use your own LibTorch instead (the venv still runs bench/peers/ and tests/tools/).
#      BUILD_DIR           build folder (default build)
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=(build-essential cmake ninja-build ccache pkg-config zlib1g-dev libgtest-dev libgmock-dev
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libgloo-dev iproute2 chromium dataset-fashion-mnist
  clang-14 libclang-rt-14-dev python3 python3-venv libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev
  libwebp-dev libtiff-dev libsimdjson-dev libcurl4-openssl-dev curl bubblewrap qemu-user
  ffmpeg libavcodec-dev libavformat-dev libavutil-dev libswscale-dev)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

venv_id="venv-$(sha256sum requirements.txt | cut -c1-12)"
venv_real="${FASTLOOP_VENV_HOME:-$HOME/.cache/fastloop}/$venv_id"
if [ ! -x "$venv_real/bin/python" ] || ! "$venv_real/bin/python" -c 'import torch, torchvision, numpy, safetensors' 2>/dev/null; then
  echo "setup: creating $venv_real (torch wheel, several GB; once per machine)"
  mkdir -p "$(dirname "$venv_real")"
  python3 -m venv "$venv_real"
  "$venv_real/bin/python" -m pip install -q -r requirements.txt
fi
if [ "$(readlink .venv 2>/dev/null)" != "$venv_real" ]; then
  [ -L .venv ] && rm .venv
  [ -e .venv ] || ln -s "$venv_real" .venv
fi
[ "${1:-}" != --venv-only ] || exit 0

# ccache across clones (CI builds a fresh clone in another folder) and with the precompiled header.
export CCACHE_BASEDIR="$PWD" CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
build_dir="${BUILD_DIR:-build}"
# The Python package builds against the venv's torch only (its LibTorch is what torch imports).
python_args=(-DFASTLOOP_BUILD_PYTHON=OFF)
[ -n "${CMAKE_PREFIX_PATH:-}" ] || python_args=(-DFASTLOOP_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PWD/.venv/bin/python")
prefix="${CMAKE_PREFIX_PATH:-$(.venv/bin/python -c 'import torch; print(torch.utils.cmake_prefix_path)')}"
# Configure output goes to a log (LibTorch's own CMake files warn about CUDA architectures and kineto,
# which nothing here can act on); it is shown when configuring fails.
mkdir -p "$build_dir"
if ! cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DFASTLOOP_PYTHON="$PWD/.venv/bin/python" "${python_args[@]}" ${FASTLOOP_CMAKE_ARGS:-} >"$build_dir/configure.log" 2>&1; then
  cat "$build_dir/configure.log" >&2
  exit 1
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
# import fastloop in .venv: scikit-build-core reuses $build_dir (pyproject.toml), so nothing compiles again.
if [ $# -eq 0 ] && [ -z "${CMAKE_PREFIX_PATH:-}" ]; then
  .venv/bin/python -m pip install -q --no-build-isolation --no-deps -C build-dir="$build_dir" .
fi
