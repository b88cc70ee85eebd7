#!/usr/bin/env bash
# Where a loader worker's time goes (perf, Debian's linux-perf): samples the worker threads ("fastloop-loader")
# of `fastloop bench loader` on the photo set, 1 worker, RandomResizedCrop 224 + flip + normalise (exact decode),
# and prints each function's share of their samples, libjpeg-turbo's folded into one "decode" line:
#   bench/peers/profile.sh [PHOTOS=/tmp/photos] [extra `bench loader` flags, e.g. --decode fast]
set -euo pipefail
cd "$(dirname "$0")/../.."
photos="${1:-${FASTLOOP_PHOTOS:-/tmp/photos}}"
shift || true
command -v perf >/dev/null || { echo "profile.sh: needs perf: sudo apt-get install linux-perf" >&2; exit 2; }
data="$(mktemp -d)"
trap 'rm -rf "$data"' EXIT
flock /tmp/fastloop-bench.lock perf record -q -F 1999 -o "$data/perf.data" -- build/fastloop bench loader \
  --data "imagefolder:$photos" --workers 1 --augment on --step-model '' --batches 20 --repeats 1 --warmup 2 "$@" >/dev/null
perf script -i "$data/perf.data" -F comm,ip,sym,dso 2>/dev/null | .venv/bin/python -c '
import collections, re, sys
counts, n = collections.Counter(), 0
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("fastloop-loader"):
        continue
    dso = re.search(r"\((.*)\)\s*$", line)
    dso = dso.group(1).rsplit("/", 1)[-1] if dso else "?"
    fields = line.split(None, 2)
    sym = re.sub(r"\+0x[0-9a-f]+$", "", fields[2].rsplit("(", 1)[0].strip()) if len(fields) > 2 else "?"
    sym = "libjpeg-turbo (the decode)" if dso.startswith("libjpeg.so") else "[kernel]" if "kernel" in dso else sym
    counts[sym] += 1
    n += 1
print(f"{n} samples of the loader worker")
for sym, c in counts.most_common(12):
    print(f"{100 * c / n:5.1f}%  {sym}")
'
