#!/usr/bin/env bash
# The GPU check (issue 9): one script that builds fastloop on the GPU machine's own LibTorch and runs the
# test suite with its _CUDA tests, `fastloop doctor`, the bench grid against PyTorch, the default
# Fashion-MNIST recipe and a ResNet18 AMP + channels_last throughput run.
#
#   scripts/device_check.sh --prepare   here (Debian): copy into prepared/ (git-ignored) what the GPU image
#                                       lacks: GoogleTest sources, CLI11, nlohmann-json, toml++, gloo and
#                                       zlib headers, Debian's libz.so.1, the Fashion-MNIST files. ~37 MB.
#   scripts/device_check.sh             on the GPU machine (python3 with a CUDA torch, cmake, ninja, nvcc; no
#                                       Debian packages, no network), with prepared/ carried along
#   scripts/device_check.sh --cpu       the same steps here on the venv's LibTorch, CPU, tiny sizes (CI)
#
# Options: --tests all|quick|none   ctest: the whole suite (default on the GPU), only the _CUDA tests and a
#                                   quick CLI test (default with --cpu: CI ran the suite just before), none
#          --no-bench               skip the bench grid
#          --no-build               use BUILD_DIR's binaries as they are (no configure, no build)
# Env: OUT        results folder (default out/device-check): summary.md (one row per step: status,
#                 seconds, note), device_check.log (every step's output), bench/<name>.{md,csv,json,html},
#                 details.tar.gz (per-step logs, ctest JUnit XML, metrics JSON lines)
#      BUILD_DIR  build folder (default build-device; with --cpu: build, reused as scripts/test.sh left it)
#      PYTHON     interpreter whose torch is built against (default python3; with --cpu: .venv/bin/python)
#      TORCH_CUDA_ARCH_LIST  (default 9.0: H100/H200) so that torch's CMake config does not probe the GPU
#      BENCH_ARGS, TRAIN_ARGS, AMP_ARGS  extra flags for those steps
#      DEADLINE_S  the whole run's seconds (default 570 on the GPU: the device tool's limit is 600; none with
#                  --cpu): a step's time limit is cut to what is left, and steps with none left are skipped
# Every step runs even when an earlier one failed (except those that need the build); the exit status is
# non-zero if any step failed.
# shellcheck disable=SC2054,SC1091  # comma-separated flag values in arrays; /etc/os-release
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

mode=device
tests=""
bench=1
nobuild=0
while (($#)); do
  case "$1" in
    --prepare) mode=prepare ;;
    --cpu) mode=cpu ;;
    --tests) tests="${2:?--tests needs all, quick or none}"; shift ;;
    --tests=*) tests="${1#--tests=}" ;;
    --no-bench) bench=0 ;;
    --no-build) nobuild=1 ;;
    -h|--help) sed -n '2,/^# shellcheck/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "device_check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

PREPARED=$ROOT/prepared

# ---------------------------------------------------------------------------------------------- prepare
prepare() {
  set -e
  local missing=()
  for f in /usr/src/googletest/CMakeLists.txt /usr/include/CLI/CLI.hpp /usr/include/nlohmann/json.hpp \
           /usr/include/toml++/toml.h /usr/include/gloo/config.h /usr/include/zlib.h \
           /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz; do
    [ -e "$f" ] || missing+=("$f")
  done
  if ((${#missing[@]})); then
    echo "device_check --prepare: missing ${missing[*]}; run scripts/setup.sh first (it installs googletest," \
         "libcli11-dev, nlohmann-json3-dev, libtomlplusplus-dev, libgloo-dev, zlib1g-dev, dataset-fashion-mnist)" >&2
    exit 1
  fi
  rm -rf "$PREPARED.tmp"
  mkdir -p "$PREPARED.tmp"
  local p=$PREPARED.tmp
  # GoogleTest: the top-level CMakeLists and googletest/ (gmock is not used; BUILD_GMOCK=OFF).
  mkdir -p "$p/googletest"
  cp -a /usr/src/googletest/CMakeLists.txt /usr/src/googletest/googletest "$p/googletest/"
  mkdir -p "$p/cli11/include" "$p/nlohmann_json/include" "$p/tomlplusplus/include" "$p/gloo/include" \
           "$p/zlib/include" "$p/zlib/lib" "$p/fashion-mnist"
  cp -a /usr/include/CLI "$p/cli11/include/"
  cp -a /usr/include/nlohmann "$p/nlohmann_json/include/"
  cp -a /usr/include/toml++ "$p/tomlplusplus/include/"
  cp -a /usr/include/gloo "$p/gloo/include/"
  cp -a /usr/include/zlib.h /usr/include/zconf.h "$p/zlib/include/"
  # Debian's libz.a is not position-independent (libfastloop is a shared library), so the build links the
  # image's own runtime libz.so.1; this copy (resolved, no symlink) is only the fallback if it has none.
  cp -L "$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')" "$p/zlib/lib/libz.so.1"
  cp -a /usr/share/datasets/fashion-mnist/*-ubyte.gz "$p/fashion-mnist/"
  {
    echo "# prepared/ for scripts/device_check.sh (git-ignored; carried to the GPU machine)"
    echo "# made $(date -u +%FT%TZ) on $(. /etc/os-release; echo "$PRETTY_NAME")"
    for pkg in googletest libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libgloo-dev zlib1g-dev zlib1g \
               dataset-fashion-mnist; do
      echo "$pkg $(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null)"
    done
  } > "$p/MANIFEST"
  rm -rf "$PREPARED"
  mv "$p" "$PREPARED"
  (cd "$PREPARED" && du -sh -- * | sed 's/^/  /')
  local bytes
  bytes=$(du -sb "$PREPARED" | cut -f1)
  echo "prepared/: $((bytes / 1024 / 1024)) MiB ($bytes bytes) in all; the limit for what travels is 64 MiB"
  if ((bytes > 60 * 1024 * 1024)); then
    echo "device_check --prepare: prepared/ is over 60 MiB, too close to the 64 MiB the tree may carry" >&2
    exit 1
  fi
}

if [ "$mode" = prepare ]; then
  prepare
  exit $?
fi

# ------------------------------------------------------------------------------------------ step runner
RESULTS=${OUT:-$ROOT/out/device-check}
mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
DETAILS=$(mktemp -d "${TMPDIR:-/tmp}/fastloop-device-check.XXXXXX")
mkdir -p "$DETAILS/logs"
LOG=$RESULTS/device_check.log
SUMMARY=$RESULTS/summary.md
: > "$LOG"
T0=$(date +%s)
failed=0
rows=()

summary_write() {
  {
    echo "# fastloop device check ($mode mode)"
    echo
    echo "$(date -u +%FT%TZ) · $(hostname) · commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
         "· total $(($(date +%s) - T0)) s · $( ((failed)) && echo "FAILED: $failed step(s)" || echo "all steps passed")"
    echo
    echo "| step | status | seconds | note |"
    echo "|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
  } > "$SUMMARY"
}

pack_details() {
  summary_write
  cp "$SUMMARY" "$DETAILS/" 2>/dev/null
  tar -czf "$RESULTS/details.tar.gz" -C "$DETAILS" . 2>/dev/null
}
trap 'pack_details; rm -rf "$DETAILS"' EXIT
trap 'echo "device_check: interrupted" | tee -a "$LOG"; exit 130' INT TERM

NOTE=""  # a step's function may set NOTE (one line for the summary)

# step NAME TIMEOUT_S COMMAND...: runs it with a time limit, its output to the step log and the
# combined log; records status and seconds; never stops the script.
step() {
  local name=$1 limit=$2
  shift 2
  NOTE=""
  if ((DEADLINE_S > 0)); then  # stay inside the whole run's time, leaving 15 s to write the results
    local left=$((DEADLINE_S - ($(date +%s) - T0) - 15))
    if ((left < 10)); then
      skip "$name" "no time left (DEADLINE_S=$DEADLINE_S)"
      failed=$((failed + 1))
      return 1
    fi
    ((limit > left)) && limit=$left
  fi
  local start rc
  start=$(date +%s)
  CURRENT_STEP=$name
  echo "=== [$name] $* (limit ${limit}s)" | tee -a "$LOG"
  # The command runs in a subshell of this one (so it may be a function) in its own process group, which
  # a watchdog (in another group) terminates at the limit; the watchdog's group is ended after it.
  (
    set -m
    ( "$@" ) > "$DETAILS/logs/$name.log" 2>&1 < /dev/null &
    child=$!
    ( sleep "$limit"; kill -TERM -- -"$child"; sleep 5; kill -KILL -- -"$child" ) > /dev/null 2>&1 &
    watchdog=$!
    wait "$child"
    rc=$?
    kill -- -"$watchdog" 2>/dev/null
    wait "$watchdog" 2>/dev/null
    exit "$rc"
  ) 2>/dev/null  # job-control notices; the command's own output is in its log
  rc=$?
  cat "$DETAILS/logs/$name.log" >> "$LOG"
  tail -n 15 "$DETAILS/logs/$name.log"
  local secs=$(($(date +%s) - start)) status
  [ -f "$DETAILS/logs/$name.note" ] && NOTE=$(cat "$DETAILS/logs/$name.note")
  if ((rc == 0)); then
    status=ok
  else
    status="FAILED (exit $rc$( ((rc == 143 || rc == 137)) && echo ", over its ${limit}s limit"))"
    failed=$((failed + 1))
  fi
  echo "=== [$name] $status in ${secs}s${NOTE:+: $NOTE}" | tee -a "$LOG"
  rows+=("| $name | $status | $secs | ${NOTE//|//} |")
  summary_write
  return "$rc"
}

skip() {  # skip NAME REASON
  echo "=== [$1] skipped: $2" | tee -a "$LOG"
  rows+=("| $1 | skipped | 0 | $2 |")
  summary_write
}

CURRENT_STEP=""
note() { echo "$*" > "$DETAILS/logs/$CURRENT_STEP.note"; }

# ------------------------------------------------------------------------------------------- settings
if [ "$mode" = cpu ]; then
  BUILD_DIR=${BUILD_DIR:-build}
  PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
  DEVICE=cpu
  tests=${tests:-quick}
  BENCH_NAME=cpu
  DEADLINE_S=${DEADLINE_S:-0}
else
  BUILD_DIR=${BUILD_DIR:-build-device}
  PYTHON=${PYTHON:-python3}
  DEVICE=cuda
  tests=${tests:-all}
  BENCH_NAME=${BENCH_NAME:-h200}
  DEADLINE_S=${DEADLINE_S:-570}
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
  if ! command -v nvcc >/dev/null; then
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
      [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break
    done
  fi
fi
case "$tests" in all|quick|none) ;; *) echo "device_check: --tests must be all, quick or none" >&2; exit 2 ;; esac
BUILD_DIR=$(mkdir -p "$BUILD_DIR" && cd "$BUILD_DIR" && pwd)
JOBS=$(nproc)
PY_EXE=$("$PYTHON" -c 'import sys; print(sys.executable)' 2>/dev/null || echo "$PYTHON")
export FASTLOOP_PYTHON=$PY_EXE  # the bench's and loader bench's PyTorch peer
FL=$BUILD_DIR/fastloop
export CCACHE_BASEDIR=$ROOT CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime

# ---------------------------------------------------------------------------------------------- steps
s_environment() {
  echo "mode $mode, build $BUILD_DIR, python $PY_EXE, $JOBS cores, $(uname -srm)"
  "$PY_EXE" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")'
  cmake --version | head -1
  ninja --version 2>/dev/null | sed 's/^/ninja /'
  c++ --version 2>/dev/null | head -1
  if [ "$mode" = device ]; then
    command -v nvcc && nvcc --version | tail -2
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 || true
    echo "TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST"
  fi
  local v
  v=$("$PY_EXE" -c 'import torch; print(torch.__version__)' 2>/dev/null) || return 1
  note "torch $v$( [ "$mode" = device ] && echo ", $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)")"
}

# What the tools/ scripts the tests and benches call import: tests that need a missing one skip.
s_python_peers() {
  "$PY_EXE" - "$DETAILS/logs/python_peers.note" <<'EOF'
import importlib
missing = []
for name in ["torch", "torchvision", "numpy", "safetensors", "PIL"]:
    try:
        m = importlib.import_module(name)
        print(f"{name} {getattr(m, '__version__', '?')}")
    except Exception as e:  # noqa: BLE001
        missing.append(name)
        print(f"{name}: MISSING ({e})")
import sys
found = [n for n in ["torchvision", "numpy", "safetensors", "PIL"] if n not in missing]
with open(sys.argv[1], "w") as f:
    f.write(", ".join(f"{n} {getattr(importlib.import_module(n), '__version__', '?')}" for n in found) + "\n")
if missing:
    raise SystemExit("missing: " + ", ".join(missing) + " (the PyTorch peers and Python round-trip tests need them)")
EOF
}

s_prepared() {
  local need=(googletest/CMakeLists.txt cli11/include/CLI/CLI.hpp nlohmann_json/include/nlohmann/json.hpp
              tomlplusplus/include/toml++/toml.h gloo/include/gloo/config.h zlib/include/zlib.h
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
  # shellcheck disable=SC2086
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DFASTLOOP_PYTHON="$PY_EXE" "${extra[@]}" ${FASTLOOP_CMAKE_ARGS:-}
}

s_build() {
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
              "tomlplusplus::tomlplusplus from $PREPARED" "GoogleTest built from $PREPARED"; do
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

s_tests() {
  local args=(--output-on-failure --timeout "$(lim 120 600)" -j "$( [ "$mode" = device ] && echo 8 || echo "$JOBS")"
              --output-junit "$DETAILS/ctest.xml")
  [ "$tests" = quick ] && args+=(-R '_CUDA$|^Cli\.HelpOfEachCommandListsItsFlags$')
  (cd "$BUILD_DIR" && ctest "${args[@]}")
  local rc=$?
  local line
  line=$(grep -E "tests passed|tests failed" "$DETAILS/logs/tests.log" | tail -1)
  local skipped
  skipped=$(grep -c "Skipped" "$DETAILS/logs/tests.log")
  note "${line:-no ctest summary} ($tests; $skipped skipped)"
  return $rc
}

s_doctor() {
  "$FL" doctor --model resnet18 --batch-size 128
}

s_bench() {
  mkdir -p "$RESULTS/bench"
  local args=(--models resnet18,mobilenet_v2 --device "$DEVICE" --compare-python --python "$PY_EXE"
              --out "$RESULTS/bench/$BENCH_NAME")
  # CPU: two rows, one repetition of tiny steps (the script is what is tested here, not the numbers).
  [ "$mode" = cpu ] && args+=(--rows baseline,channels-last --repeat 1 --steps 1 --eval-steps 1 --warmup 1
                              --batch-size 8 --threads "$JOBS")
  # shellcheck disable=SC2086
  "$FL" bench "${args[@]}" ${BENCH_ARGS:-}
}

epoch_note() {  # epoch_note STEP METRICS_FILE [SUFFIX]: the last epoch line of --metrics as one summary note
  [ -s "$2" ] || return 0
  "$PY_EXE" - "$2" "${3:-}" > "$DETAILS/logs/$1.note" <<'EOF' || true
import json, sys
last = None
for line in open(sys.argv[1]):
    rec = json.loads(line)
    if rec.get("kind") == "epoch":
        last = rec
if last:
    print(f"epoch {last.get('epoch')}: test_acc {100 * last.get('test_acc', 0):.2f}%, "
          f"{last.get('img_per_s', 0):,.0f} img/s, {last.get('elapsed_s', 0):.1f} s{sys.argv[2]}")
EOF
}

s_fashion_mnist() {
  local metrics=$DETAILS/fashion_mnist.jsonl args=()
  rm -f "$metrics"
  [ "$mode" = cpu ] && args+=(--max-steps 20 --threads "$JOBS")
  # shellcheck disable=SC2086
  "$FL" train --config "$ROOT/recipes/fashion_mnist.toml" --device "$DEVICE" \
    --data "fashion-mnist:$PREPARED/fashion-mnist" --metrics "$metrics" "${args[@]}" ${TRAIN_ARGS:-}
  local rc=$?
  local suffix=""
  [ "$mode" = cpu ] && suffix=" (CPU smoke run: the schedule squeezed into 20 steps, accuracy not meaningful)"
  epoch_note fashion_mnist "$metrics" "$suffix"
  return $rc
}

# The issue's goal: CIFAR-shaped ResNet18 with AMP + channels_last (seed 001: batch 128). Synthetic
# 3x32x32 data (no CIFAR-10 on the machine), one epoch of 50,000 images.
s_resnet18_amp() {
  local metrics=$DETAILS/resnet18_amp.jsonl args
  rm -f "$metrics"
  if [ "$mode" = cpu ]; then
    args=(--data synthetic:3x32x32:64 --amp bf16 --batch-size 16 --epochs 1 --threads "$JOBS")
  else
    args=(--data synthetic:3x32x32:50000 --amp bf16 --batch-size 128 --epochs 1 --cudnn-benchmark --pin-memory
          --workers 4)
  fi
  # shellcheck disable=SC2086
  "$FL" train --model resnet18 --stem cifar --channels-last --device "$DEVICE" --metrics "$metrics" \
    "${args[@]}" ${AMP_ARGS:-}
  local rc=$?
  epoch_note resnet18_amp "$metrics"
  return $rc
}

# ------------------------------------------------------------------------------------------------ run
lim() { if [ "$mode" = device ]; then echo "$1"; else echo "$2"; fi; }  # a step's limit: GPU, CPU
echo "device_check: $mode mode; results in $RESULTS"
step environment 120 s_environment
step python_peers 60 s_python_peers
if [ "$mode" = cpu ]; then
  step prepare 120 prepare
fi
step prepared 30 s_prepared
built=1
if ((nobuild)); then
  skip configure "--no-build"
elif [ "$mode" = cpu ] && [ -f "$BUILD_DIR/CMakeCache.txt" ]; then
  skip configure "reusing $BUILD_DIR as configured by scripts/setup.sh"
else
  step configure "$(lim 180 300)" s_configure || built=0
fi
if ((nobuild)); then
  skip build "--no-build"
elif ((built)); then
  step build "$(lim 360 900)" s_build || built=0
else
  skip build "configure failed"
fi
[ "$mode" = cpu ] && step prepared_fallback 300 s_prepared_fallback
if ((!built)); then
  for s in tests doctor bench fashion_mnist resnet18_amp; do skip "$s" "no build"; done
else
  if [ "$tests" = none ]; then skip tests "--tests none"; else step tests "$(lim 240 1200)" s_tests; fi
  step doctor "$(lim 60 120)" s_doctor
  if ((bench)); then step bench "$(lim 240 600)" s_bench; else skip bench "--no-bench"; fi
  step fashion_mnist "$(lim 120 600)" s_fashion_mnist
  step resnet18_amp "$(lim 90 300)" s_resnet18_amp
fi

summary_write
echo
cat "$SUMMARY"
((failed == 0))
