#!/usr/bin/env bash
# Makes (once) the pinned virtual environment of one loader peer and prints its python:
#   bench/peers/envs.sh dali|ffcv|spdl
# Each peer gets its own venv, built from PyPI by pip from bench/peers/envs/NAME.txt (the
# whole closure pinned, installed with --no-deps),
# under ${FASTLOOP_PEERS_HOME:-~/.cache/fastloop/peers}/NAME-HASH, HASH being that of the pins and the Python: a
# rerun with unchanged pins reuses it. FFCV builds from its sdist against Debian's OpenCV and libjpeg-turbo
# (installed here by apt-get when missing) and imports torch from the project's .venv (a .pth file placed after
# its own packages), the same torch that fastloop links, instead of a second multi-GB copy of it.
set -euo pipefail
cd "$(dirname "$0")/../.."
name="${1:?usage: bench/peers/envs.sh dali|ffcv|spdl}"
pins="bench/peers/envs/$name.txt"
[ -f "$pins" ] || { echo "envs.sh: no peer named '$name' (bench/peers/envs/*.txt)" >&2; exit 2; }
python="${FASTLOOP_PEERS_PYTHON:-python3}"
torch_venv=""  # FFCV's torch: the project venv's (its real path, so that the hash follows it)
[ "$name" != ffcv ] || torch_venv="$(readlink -f .venv 2>/dev/null || true)"
hash="$( (cat "$pins"; "$python" -VV; echo "$torch_venv") | sha256sum | cut -c1-12)"
env="${FASTLOOP_PEERS_HOME:-$HOME/.cache/fastloop/peers}/$name-$hash"
if [ ! -f "$env/.complete" ]; then
  if [ "$name" = ffcv ]; then
    missing=()
    for p in libopencv-dev libturbojpeg0-dev pkg-config; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    if [ "${#missing[@]}" -gt 0 ]; then
      [ "$(id -u)" = 0 ] || { echo "envs.sh: FFCV needs: sudo apt-get install ${missing[*]}" >&2; exit 2; }
      apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
  fi
  echo "envs.sh: making $env (pip, PyPI)" >&2
  rm -rf "$env"
  mkdir -p "$(dirname "$env")"
  "$python" -m venv "$env"
  "$env/bin/python" -m pip install -q --upgrade pip==25.3 setuptools==80.9.0 >&2
  if [ "$name" = ffcv ]; then
    [ -x .venv/bin/python ] || { echo "envs.sh: FFCV borrows torch from .venv: run scripts/setup.sh first" >&2; exit 2; }
    site="$("$env/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    .venv/bin/python -c 'import os, torch; print(os.path.dirname(os.path.realpath(os.path.dirname(torch.__file__))))' \
      >"$site/zz_fastloop_torch.pth"
    # FFCV's setup.py reads pkg-config and imports setuptools' distutils: built without isolation.
    "$env/bin/python" -m pip install -q --no-deps --no-build-isolation -r "$pins" >&2
  else
    "$env/bin/python" -m pip install -q --no-deps -r "$pins" >&2
  fi
  touch "$env/.complete"
fi
echo "$env/bin/python"
