#!/usr/bin/env bash
# Where a loader worker's time goes (perf, Debian's linux-perf): samples the worker threads ("fastloop-loader")
# of `fastloop bench loader` on the photo set, 1 worker, RandomResizedCrop 224 + flip + normalise (exact decode),
# and prints each function's share of their samples, libjpeg-turbo's folded into one "decode" line:
#   bench/peers/profile.sh [PHOTOS=/tmp/photos] [extra `bench loader` flags, e.g. --decode fast]
# The steady state: 8 warm-up and 60 timed batches, and the worker's first fifth of samples left out. The loader's
# first batches first-touch its recycled batch buffers (7 of 77 MB: ~130k page faults, the kernel zeroing each
# page); a short run counts them (the 10% "kernel" of an earlier 22-batch profile), a long one pays them once.
set -euo pipefail
cd "$(dirname "$0")/../.."
photos="${1:-${FASTLOOP_PHOTOS:-/tmp/photos}}"
shift || true
command -v perf >/dev/null || { echo "profile.sh: needs perf: sudo apt-get install linux-perf" >&2; exit 2; }
data="$(mktemp -d)"
trap 'rm -rf "$data"' EXIT
flock /tmp/fastloop-bench.lock perf record -q -F 1999 -o "$data/perf.data" -- build/fastloop bench loader \
  --data "imagefolder:$photos" --workers 1 --augment on --step-model '' --batches 60 --repeats 1 --warmup 8 "$@" >/dev/null
perf script -i "$data/perf.data" -F comm,time,ip,sym,dso 2>/dev/null | .venv/bin/python -c '
import collections, re, sys
samples = []
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("fastloop-loader"):
        continue
    fields = line.split(None, 3)
    dso = re.search(r"\((.*)\)\s*$", line)
    dso = dso.group(1).rsplit("/", 1)[-1] if dso else "?"
    sym = re.sub(r"\+0x[0-9a-f]+$", "", fields[3].rsplit("(", 1)[0].strip()) if len(fields) > 3 else "?"
    sym = "libjpeg-turbo (the decode)" if dso.startswith("libjpeg.so") else "[kernel]" if "kernel" in dso else sym
    samples.append((float(fields[1].rstrip(":")), sym))
if not samples:
    sys.exit("profile.sh: no samples of the loader worker (is perf allowed? see /proc/sys/kernel/perf_event_paranoid)")
first, last = samples[0][0], samples[-1][0]
counts = collections.Counter(sym for t, sym in samples if t >= first + (last - first) / 5)
n = sum(counts.values())
print(f"{n} samples of the loader worker (its first fifth, the warm-up, left out)")
for sym, c in counts.most_common(12):
    print(f"{100 * c / n:5.1f}%  {sym}")
'
