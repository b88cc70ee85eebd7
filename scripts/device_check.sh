#!/usr/bin/env bash
# The GPU check: one script that builds fastloop on the GPU machine's own LibTorch and runs, in the order
# of their value, the GPU training checks (the default Fashion-MNIST recipe; ResNet18 fp16 + GradScaler +
# channels_last + CUDA graph, stopped and resumed; DDP over Gloo with CUDA tensors; ResNet18 AMP
# throughput, fastloop.Loader from Python through the pinned ring and a PyTorch loop on it), the _CUDA tests and a quick subset of the rest, `fastloop doctor` and a trimmed bench grid
# against PyTorch. Each step has its own time limit, cut to what is left of the whole run's, and leaves
# its results under $OUT as soon as it ends: a run cut short keeps everything it finished.
#
#   scripts/device_check.sh --prepare   here (Debian): copy into prepared/ (git-ignored) what the GPU image
#                                       lacks (scripts/device_check/prepare.sh lists it). ~40 MB.
#   scripts/device_check.sh             on the GPU machine (python3 with a CUDA torch, cmake, ninja, nvcc; no
#                                       Debian packages, no network), with prepared/ carried along
#   scripts/device_check.sh --cpu       the same steps here on the venv's LibTorch, CPU, tiny sizes, under the
#                                       same limits (CI rehearses the script with it)
#
# Options: --tests all|quick|none   ctest: the _CUDA tests and a quick subset (default), the whole suite, none
#          --no-bench               skip the bench grid
#          --no-build               use BUILD_DIR's binaries as they are (no configure, no build)
# Env: OUT        results folder (default out/device-check): summary.md (a row per step: status, seconds,
#                 limit, note), device_check.log, logs/STEP.log (+ ctest.xml), work/ (metrics, checkpoints),
#                 bench/NAME.{md,csv,json,html}
#      BUILD_DIR  build folder (default build-device; with --cpu: build, reused as scripts/test.sh left it)
#      PYTHON     interpreter whose torch is built against (default python3; with --cpu: .venv/bin/python)
#      TORCH_CUDA_ARCH_LIST  (default 9.0: H100/H200) so that torch's CMake config does not probe the GPU
#      BENCH_ARGS, TRAIN_ARGS, AMP_ARGS  extra flags for those steps
#      DEADLINE_S  the whole run's seconds (default 570: the device tool allows 600 per command)
# Every step runs even when an earlier one failed (except those that need the build); the exit status is
# non-zero if any step failed.
# shellcheck disable=SC2054,SC1091  # comma-separated flag values in arrays; /etc/os-release
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PREPARED=$ROOT/prepared
HERE=$ROOT/scripts/device_check

mode=device
tests=quick
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
case "$tests" in all|quick|none) ;; *) echo "device_check: --tests must be all, quick or none" >&2; exit 2 ;; esac

source "$HERE/prepare.sh"
if [ "$mode" = prepare ]; then
  prepare
  exit $?
fi

# ------------------------------------------------------------------------------------------- settings
RESULTS=${OUT:-$ROOT/out/device-check}
mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
T0=$(date +%s)
DEADLINE_S=${DEADLINE_S:-570}
if [ "$mode" = cpu ]; then
  BUILD_DIR=${BUILD_DIR:-build}
  PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
  DEVICE=cpu
  BENCH_NAME=cpu
else
  BUILD_DIR=${BUILD_DIR:-build-device}
  PYTHON=${PYTHON:-python3}
  DEVICE=cuda
  BENCH_NAME=${BENCH_NAME:-h200}
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
  if ! command -v nvcc >/dev/null; then
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
      [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break
    done
  fi
fi
BUILD_DIR=$(mkdir -p "$BUILD_DIR" && cd "$BUILD_DIR" && pwd)
JOBS=$(nproc)
PY_EXE=$("$PYTHON" -c 'import sys; print(sys.executable)' 2>/dev/null || echo "$PYTHON")
export FASTLOOP_PYTHON=$PY_EXE  # the bench's and loader bench's PyTorch peer
FL=$BUILD_DIR/fastloop
export CCACHE_BASEDIR=$ROOT CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime

source "$HERE/runner.sh"
source "$HERE/build_steps.sh"
source "$HERE/run_steps.sh"
trap 'echo "device_check: interrupted" | tee -a "$LOG"; summary_write; exit 130' INT TERM

# ------------------------------------------------------------------------------------------------ run
# Limits are the GPU run's in both modes; the whole run's DEADLINE_S cuts the later ones.
echo "device_check: $mode mode; results in $RESULTS (deadline ${DEADLINE_S}s)"
step environment 30 s_environment
step python_peers 30 s_python_peers
[ "$mode" = cpu ] && step prepare 120 prepare
step prepared 10 s_prepared
built=1
if ((nobuild)); then
  skip configure "--no-build"
elif [ "$mode" = cpu ] && [ -f "$BUILD_DIR/CMakeCache.txt" ]; then
  skip configure "reusing $BUILD_DIR as configured by scripts/setup.sh"
else
  step configure 150 s_configure || built=0
fi
if ((nobuild)); then
  skip build "--no-build"
elif ((built)); then
  step build 300 s_build || built=0
else
  skip build "configure failed"
fi
[ "$mode" = cpu ] && step prepared_fallback 120 s_prepared_fallback
if ((!built)); then
  for s in fashion_mnist resnet18_graph_resume ddp_gloo resnet18_amp python_loader build_tests tests doctor bench; do skip "$s" "no build"; done
else
  step fashion_mnist 60 s_fashion_mnist
  # On the CPU the rehearsal's ResNet18 runs 32 steps in float32 where bf16 is not native: ~60 s on 2 AVX2 cores.
  step resnet18_graph_resume "$([ "$mode" = cpu ] && echo 180 || echo 90)" s_resnet18_graph_resume
  step ddp_gloo 60 s_ddp_gloo
  step resnet18_amp 60 s_resnet18_amp
  step python_loader 120 s_python_loader
  if [ "$tests" = none ]; then
    skip tests "--tests none"
  elif step build_tests 240 s_build_tests; then
    step tests 120 s_tests
  else
    skip tests "the tests did not build"
  fi
  step doctor 30 s_doctor
  if ((bench)); then step bench 200 s_bench; else skip bench "--no-bench"; fi
fi

summary_write
echo
cat "$SUMMARY"
((failed == 0))
