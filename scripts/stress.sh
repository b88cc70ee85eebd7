#!/usr/bin/env bash
# Flake hunt, outside CI: the C++ suite with `ctest --repeat until-fail`, its thread, signal and process
# tests many more times, and the Python suite and its signal, fork and spawn tests repeated, on an idle
# machine and beside CPU burners. The first failure stops its stage with the test's output; every stage's
# count and time close the log. Run it on a built tree (scripts/test.sh first).
#
#   scripts/stress.sh [--burn N] [--cpp N] [--cpp-threads N] [--py N] [--py-processes N] [--only cpp|py]
#     --burn N          N busy-looping processes beside the tests (default 0: idle)
#     --cpp N           repeats of the whole C++ suite (default 5)
#     --cpp-threads N   repeats of the C++ thread, signal and process tests (default 50)
#     --py N            repeats of every Python test (default 20)
#     --py-processes N  repeats of the Python signal, fork and spawn tests (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
burn=0 cpp=5 cpp_threads=50 py=20 py_processes=200 only=""
while (($#)); do
  case "$1" in
    --burn) burn=$2; shift ;;
    --cpp) cpp=$2; shift ;;
    --cpp-threads) cpp_threads=$2; shift ;;
    --py) py=$2; shift ;;
    --py-processes) py_processes=$2; shift ;;
    --only) only=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "stress: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
build="$PWD/${BUILD_DIR:-build}"
[ -x "$build/tests/fastloop_tests" ] || { echo "stress: $build is not built (run scripts/test.sh)" >&2; exit 2; }

burners=()
stop_burners() { ((${#burners[@]})) && kill "${burners[@]}" 2>/dev/null; true; }
trap stop_burners EXIT
for ((i = 0; i < burn; i++)); do
  sh -c 'while :; do :; done' &
  burners+=($!)
done

# The C++ tests that start threads, send signals or start processes.
threaded='^(Loader|ImageFolderLoader|Dist|DistNetns|Faults|Cli|ImageFolderCli|RecipeCli|Crash|Restart|Collectives|HostMemory|DeviceData)\.'
summary=()
stage() {  # stage NAME COMMAND...
  local name=$1 start=$SECONDS
  shift
  echo "=== stress: $name (burners: $burn)"
  "$@"
  summary+=("$name: passed in $((SECONDS - start)) s")
}
python_tests() {  # python_tests REPEAT [pytest args...]
  local repeat=$1
  shift
  FASTLOOP_REPEAT=$repeat FASTLOOP_BUILD_DIR="$build" .venv/bin/python -m pytest -q -x -p no:cacheprovider "$@" tests/python
}
if [ "$only" != py ]; then
  stage "C++ suite x$cpp" ctest --test-dir "$build" -j 2 --timeout 900 --output-on-failure --repeat "until-fail:$cpp"
  stage "C++ thread/signal/process tests x$cpp_threads" ctest --test-dir "$build" -j 2 --timeout 900 \
    --output-on-failure -R "$threaded" --repeat "until-fail:$cpp_threads"
fi
if [ "$only" != cpp ]; then
  stage "Python suite x$py" python_tests "$py"
  stage "Python signal/fork/spawn tests x$py_processes" python_tests "$py_processes" \
    -k "ctrl_c or fork or spawn or pickle or interrupt"
fi
printf '%s\n' "${summary[@]}"
echo "=== stress: no failure ($(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores)"
