# shellcheck shell=bash
# The device check's first steps (sourced by scripts/device_check.sh): what the machine has, what the
# Python peers can import, prepared/, configure and build.
# Needs: mode, ROOT, PREPARED, BUILD_DIR, PY_EXE, JOBS, LOGS.

s_environment() {
  echo "mode $mode, build $BUILD_DIR, python $PY_EXE, $JOBS cores, $(uname -srm)"
  "$PY_EXE" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")'
  cmake --version | sed -n 1p  # sed reads to the end: head exiting first could SIGPIPE it (pipefail)
  ninja --version 2>/dev/null | sed 's/^/ninja /'
  c++ --version 2>/dev/null | sed -n 1p
  if [ "$mode" = device ]; then
    command -v nvcc && nvcc --version | tail -2
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 || true
    echo "TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST"
  fi
  local v
  v=$("$PY_EXE" -c 'import torch; print(torch.__version__)' 2>/dev/null) || return 1
  note "torch $v$( [ "$mode" = device ] && echo ", $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)")"
}

# What the Python peers and golden generators (bench/peers/, tests/tools/) import. The check degrades
# without them instead of failing: a missing torchvision or PIL leaves the bench without its PyTorch
# column (the summary says why) and the tests that need one skip themselves. Writes LOGS/peer_missing
# (empty: all there).
s_python_peers() {
  "$PY_EXE" - "$LOGS/python_peers.note" "$LOGS/peer_missing" <<'PY'
import importlib, sys
found, missing = [], []
for name in ["torch", "torchvision", "numpy", "safetensors", "PIL"]:
    try:
        m = importlib.import_module(name)
        found.append(f"{name} {getattr(m, '__version__', '?')}")
    except Exception as e:  # noqa: BLE001
        missing.append(name)
        print(f"{name}: MISSING ({e})")
print("\n".join(found))
open(sys.argv[2], "w").write(" ".join(missing))
note = ", ".join(found[1:]) + (f"; missing {', '.join(missing)}: the PyTorch peer columns are skipped" if missing else "")
open(sys.argv[1], "w").write(note + "\n")
sys.exit(1 if "torch" in missing else 0)
PY
}

s_prepared() {
  local need=(googletest/CMakeLists.txt cli11/include/CLI/CLI.hpp nlohmann_json/include/nlohmann/json.hpp
              tomlplusplus/include/toml++/toml.h gloo/include/gloo/config.h zlib/include/zlib.h
              turbojpeg/include/turbojpeg.h jpeg/include/jpeglib.h spng/include/spng.h webp/include/webp/decode.h
              webpdemux/include/webp/demux.h tiff/include/tiffio.h simdjson/include/simdjson.h
              fashion-mnist/train-images-idx3-ubyte.gz)
  local f bad=0
  for f in "${need[@]}"; do
    [ -e "$PREPARED/$f" ] || { echo "missing prepared/$f"; bad=1; }
  done
  ((bad)) && { echo "run scripts/device_check.sh --prepare where the Debian packages are, and carry prepared/"; return 1; }
  cat "$PREPARED/MANIFEST"
  du -sh "$PREPARED"
}

s_configure() {
  local prefix
  prefix=$("$PY_EXE" -c 'import torch; print(torch.utils.cmake_prefix_path)') || return 1
  local extra=()
  [ "$mode" = device ] && extra+=(-DCMAKE_CUDA_COMPILER="$(command -v nvcc)")
  # The Python package (python/) where this Python has its C headers; the python_loader step skips otherwise.
  if "$PY_EXE" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
    extra+=(-DFASTLOOP_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PY_EXE")
  fi
  # shellcheck disable=SC2086
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DFASTLOOP_PYTHON="$PY_EXE" "${extra[@]}" ${FASTLOOP_CMAKE_ARGS:-}
}

# The library and the CLI first, so the GPU training checks run even when the tests' build would not fit;
# the test binaries are built by s_build_tests, just before the tests.
s_build() {
  local targets=(fastloop_cli)
  grep -q "^FASTLOOP_BUILD_PYTHON:BOOL=ON" "$BUILD_DIR/CMakeCache.txt" && targets+=(fastloop_python)
  cmake --build "$BUILD_DIR" -j "$JOBS" --target "${targets[@]}"
}

s_build_tests() {
  cmake --build "$BUILD_DIR" -j "$JOBS"
}

# CI: configure with every dependency taken from prepared/ (as on the GPU machine) and build GoogleTest
# from the prepared sources, so the fallback cannot rot. Configure only: the build is the one above.
s_prepared_fallback() {
  local dir=$ROOT/build-prepared prefix
  prefix=$("$PY_EXE" -c 'import torch; print(torch.utils.cmake_prefix_path)') || return 1
  local out
  out=$(cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DFASTLOOP_PYTHON="$PY_EXE" -DFASTLOOP_USE_PREPARED=ON 2>&1)
  local rc=$?
  echo "$out"
  ((rc == 0)) || return $rc
  local what missing=()
  for what in "zlib headers from $PREPARED" "CLI11::CLI11 from $PREPARED" "nlohmann_json::nlohmann_json from $PREPARED" \
              "tomlplusplus::tomlplusplus from $PREPARED" "libturbojpeg from $PREPARED" "libjpeg from $PREPARED" "spng from $PREPARED" \
              "libwebp from $PREPARED" "libwebpdemux from $PREPARED" "libtiff-4 from $PREPARED" "simdjson from $PREPARED" \
              "GoogleTest built from $PREPARED"; do
    grep -qF "$what" <<< "$out" || missing+=("$what")
  done
  if ((${#missing[@]})); then
    printf 'not taken from prepared/: %s\n' "${missing[@]}"
    return 1
  fi
  if grep -q "^FASTLOOP_GLOO_INCLUDE_DIR:" "$dir/CMakeCache.txt" &&
     ! grep -q "^FASTLOOP_GLOO_INCLUDE_DIR:PATH=$PREPARED/gloo/include$" "$dir/CMakeCache.txt"; then
    echo "gloo headers not taken from prepared/"
    return 1
  fi
  cmake --build "$dir" --target gtest_main -j "$JOBS" || return 1
  note "configured with FASTLOOP_USE_PREPARED=ON; GoogleTest built from prepared/"
}
