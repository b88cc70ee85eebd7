#!/usr/bin/env bash
# The loader against NVIDIA DALI (CPU), FFCV and SPDL, interleaved, with the decode limit, in one command:
#   bench/peers/run.sh [--rounds 3] [--workers 1,2] [--out bench/results/cpu-2core/peers/loaders] ...
# Makes what is missing: the photo set (scripts/make_photo_set.sh $FASTLOOP_PHOTOS, default /tmp/photos: 1,200
# train JPEGs ~500x375), the fastloop CLI (scripts/setup.sh fastloop_cli), each peer's pinned venv
# (bench/peers/envs.sh; a peer whose venv cannot be made is reported as not run, with the reason). Then
# bench/peers/peers_table.py runs the rounds (its arguments pass through) under flock /tmp/fastloop-bench.lock,
# so no other benchmark of this project runs at the same time.
set -euo pipefail
cd "$(dirname "$0")/../.."
photos="${FASTLOOP_PHOTOS:-/tmp/photos}"
[ -d "$photos/train" ] || scripts/make_photo_set.sh "$photos"
[ -x build/fastloop ] || scripts/setup.sh fastloop_cli
peers=()
for name in dali ffcv spdl; do
  log="$(mktemp)"
  if python="$(bench/peers/envs.sh "$name" 2>"$log")"; then
    peers+=(--peer "$name=$python")
  else
    echo "run.sh: the $name venv could not be made:" >&2; tail -5 "$log" >&2
    peers+=(--peer "$name=!its venv could not be made: $(tail -1 "$log" | tr -d '|' | cut -c1-150)")
  fi
  rm -f "$log"
done
exec flock /tmp/fastloop-bench.lock .venv/bin/python bench/peers/peers_table.py --data "$photos" "${peers[@]}" "$@"
