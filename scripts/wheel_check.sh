#!/usr/bin/env bash
# Proves a wheel of scripts/wheel.sh on a machine that has nothing but Python and torch: a fresh venv, the
# wheel installed with `pip install --no-deps` beside an existing torch of the pinned release, then, in a
# bubblewrap sandbox that binds /dev/null over each of the system's image libraries (libturbojpeg, libjpeg,
# libspng, libwebp*, libtiff, libLerc, libjbig, libdeflate) and hides the compilers and /usr/include:
# `import fastloop`, a Loader with a torchvision transform= over JPEG, PNG, WebP and TIFF files, a short
# fastloop.train(), and the `fastloop` command's doctor / train / predict (also on an emulated CPU without
# AVX2) / bench / export, and with torch elsewhere on sys.path; a video clip through the system's FFmpeg, and
# with FFmpeg hidden too, images as before and video refused with what to install. Then the bad inputs: the
# wrong torch, a file missing from the installation, a Python the wheel was not built for.
# Usage: scripts/wheel_check.sh [WHEEL...]   default: every dist/fastloop-*.whl
# The fresh venv gets the torch venv's packages (scripts/wheel_venv.sh) as links in its site-packages, so the
# layout is pip's (torch beside fastloop) without copying 6 GB per check.
set -euo pipefail
cd "$(dirname "$0")/.."
unset PYTHONPATH PYTHONHOME  # a fresh venv: nothing of the caller's Python environment comes along
source scripts/wheel_venv.sh
command -v bwrap >/dev/null ||
  { echo "wheel_check: bwrap missing: apt-get install bubblewrap (scripts/setup.sh)" >&2; exit 1; }

wheels=("$@")
[ ${#wheels[@]} -gt 0 ] || wheels=(dist/fastloop-*.whl)
[ -f "${wheels[0]}" ] || { echo "wheel_check: no wheel in dist/: run scripts/wheel.sh first" >&2; exit 1; }

# The sandbox: each system image library (the files, whatever links name them) and each compiler read as
# /dev/null, no headers. Python's own libraries (zlib, ...) stay.
hide=(--dev-bind / / --tmpfs /usr/include)
# the CUDA toolkit: torch's nvidia-* wheels suffice
[ -d /usr/local/cuda ] && hide+=(--tmpfs "$(readlink -f /usr/local/cuda)")
hidden_libs=(libturbojpeg libjpeg libspng libwebp libsharpyuv libtiff libLerc libjbig libdeflate)
for name in "${hidden_libs[@]}"; do
  for lib in /usr/lib/x86_64-linux-gnu/"$name"*.so*; do
    [ -e "$lib" ] && hide+=(--ro-bind /dev/null "$(readlink -f "$lib")")
  done
done
for tool in cc c++ gcc g++ clang clang++ clang-14 ld; do
  path=$(command -v "$tool" || true)
  [ -n "$path" ] && hide+=(--ro-bind /dev/null "$(readlink -f "$path")")
done
sandboxed() { bwrap "${hide[@]}" --chdir "$PWD" -- "$@"; }
# FFmpeg, which the wheel opens at run time for video only (never bundled): hidden for the check without it.
hide_ffmpeg=()
for name in libavcodec libavformat libavutil libswscale libswresample; do
  for lib in /usr/lib/x86_64-linux-gnu/"$name".so*; do
    [ -e "$lib" ] && hide_ffmpeg+=(--ro-bind /dev/null "$(readlink -f "$lib")")
  done
done

expect_failure() {  # expect_failure NAME TEXT COMMAND...: COMMAND fails and its output contains TEXT
  local name=$1 text=$2 output
  shift 2
  if output=$("$@" 2>&1); then
    echo "FAILED: $name: it succeeded"; return 1
  fi
  if ! grep -qF -- "$text" <<<"$output"; then
    printf 'FAILED: %s: no "%s" in:\n%s\n' "$name" "$text" "$output"; return 1
  fi
  echo "ok: $name: $(grep -F -- "$text" <<<"$output" | head -1 | cut -c1-220)"
}

check_wheel() {  # check_wheel WHEEL
  local wheel=$1 tag version torch_python tmp venv site fl entry
  tag=$(basename "$wheel" | cut -d- -f3)  # cp312
  version="${tag:2:1}.${tag:3}"
  torch_python=$(torch_venv "$version")
  tmp=$(mktemp -d)
  venv="$tmp/venv"
  echo "=== wheel_check: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KB) with Python $version"
  # The glibc floor: 2.34 (Ubuntu 22.04, RHEL 9) at most; a new libstdc++ symbol in the code raises it
  # (src/fastloop/core/condition_variable.h says how one was kept out).
  local floor
  floor=$(basename "$wheel" | grep -oE 'manylinux_2_[0-9]+' | cut -d_ -f3)
  if [ -z "$floor" ] || [ "$floor" -gt 34 ]; then
    echo "FAILED: the wheel's tag is not manylinux_2_34 or older: tools/wheel_finish.py --floor $wheel says why"
    return 1
  fi
  echo "ok: manylinux_2_$floor: installs where glibc >= 2.$floor"
  "$torch_python" -m venv "$venv"
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  # Torch's venv's packages as links, then the wheel itself, as a user would install it.
  for entry in "$("$torch_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"/*; do
    case "$(basename "$entry")" in
      fastloop* | _fastloop_cli* | pip | pip-* | setuptools* | _distutils_hack | distutils-precedence.pth) ;;
      __pycache__) ;;
      *) ln -s "$entry" "$site/" ;;
    esac
  done
  "$venv/bin/python" -m pip install -q --no-deps "$wheel"
  fl="$venv/bin/fastloop"

  # JPEG, PNG, WebP and TIFF files (PIL, outside the sandbox): 2 classes x 4 formats, train and val.
  "$torch_python" - "$tmp/images" <<'EOF'
import os, sys
from PIL import Image
for split in ("train", "val"):
    for c, colour in enumerate([(200, 30, 30), (30, 30, 200)]):
        os.makedirs(os.path.join(sys.argv[1], split, f"c{c}"), exist_ok=True)
        for i, ext in enumerate(["jpg", "png", "webp", "tiff"]):
            image = Image.new("RGB", (40 + 8 * i, 36), colour)
            image.putpixel((i, i), (255, 255, 255))
            image.save(os.path.join(sys.argv[1], split, f"c{c}", f"{i}.{ext}"))
EOF
  # A clip for the video checks (Debian's ffmpeg, outside the sandbox).
  ffmpeg -hide_banner -loglevel error -f lavfi -i testsrc=size=64x48:rate=10 -frames:v 12 -pix_fmt yuv420p \
    "$tmp/clip.mp4"
  (
    cd "$tmp"
    sandboxed "$venv/bin/python" "$OLDPWD/tools/wheel_check.py" "$tmp/images" "$tmp"
    # FFmpeg needs the system's libwebp and others, which the sandbox hides: with FFmpeg, outside it
    "$venv/bin/python" "$OLDPWD/tools/wheel_check_video.py" "$tmp/clip.mp4" "$tmp/images" present
    bwrap "${hide[@]}" "${hide_ffmpeg[@]}" --chdir "$PWD" -- \
      "$venv/bin/python" "$OLDPWD/tools/wheel_check_video.py" "$tmp/clip.mp4" "$tmp/images" absent
    doctor=$(sandboxed "$fl" doctor)
    grep -q "fastloop.libs/libturbojpeg" <<<"$doctor" && grep -q "torch/lib/libtorch" <<<"$doctor" ||
      { echo "FAILED: fastloop doctor:"; echo "$doctor"; exit 1; }
    echo "ok: fastloop doctor: $(grep -E '^(fastloop|LibTorch) ' <<<"$doctor" | tr '\n' ' ')"
    echo "    $(grep 'JPEG:' <<<"$doctor" | head -1 | sed 's/^ *//')"
    sandboxed "$fl" train --data "imagefolder:$tmp/images" --image-size 24 --batch-size 4 --max-steps 2 \
      --checkpoint-dir "$tmp/run-cli" >"$tmp/train.log" 2>&1 || { cat "$tmp/train.log"; exit 1; }
    echo "ok: fastloop train: $(tail -1 "$tmp/train.log" | cut -c1-160)"
    # predict with LibTorch's baseline kernels, as on a CPU without AVX2 (fastloop's own AVX2 and AVX-512
    # code is chosen at run time, by __builtin_cpu_supports and target_clones)
    ATEN_CPU_CAPABILITY=default sandboxed "$fl" predict --checkpoint "$tmp/run-cli/last.ckpt" --out "$tmp/preds.csv" \
      "$tmp/images/val" >"$tmp/predict.log" 2>&1 || { cat "$tmp/predict.log"; exit 1; }
    echo "ok: fastloop predict (ATEN_CPU_CAPABILITY=default): $(($(wc -l <"$tmp/preds.csv") - 1)) rows in preds.csv"
    # A CPU without AVX and AVX2 (CPUID of a Westmere, emulated by qemu-user): every AVX2/AVX-512 path of
    # fastloop, LibTorch and the codecs must be chosen at run time. qemu 7.2 runs an AVX2 instruction all the
    # same, so this proves the dispatch, not the absence of unguarded instructions (docs/development.md).
    if command -v qemu-x86_64 >/dev/null; then
      sandboxed qemu-x86_64 -cpu Westmere "$site/fastloop/bin/fastloop" predict --checkpoint "$tmp/run-cli/last.ckpt" \
        --out "$tmp/preds-westmere.csv" "$tmp/images/val" >"$tmp/predict.log" 2>&1 ||
        { cat "$tmp/predict.log"; exit 1; }
      cmp -s <(cut -d, -f1-3 "$tmp/preds.csv") <(cut -d, -f1-3 "$tmp/preds-westmere.csv") ||
        { echo "FAILED: predict on a Westmere CPU gave other classes"; exit 1; }
      echo "ok: fastloop predict on a CPU without AVX/AVX2 (qemu-x86_64 -cpu Westmere): the same classes"
    else
      echo "skip: predict on a CPU without AVX2: no qemu-x86_64 here (apt-get install qemu-user)"
    fi
    sandboxed "$fl" bench --models small_cnn --rows baseline --steps 1 --eval-steps 1 --repeat 1 --warmup 0 \
      --batch-size 2 --out "$tmp/bench" >"$tmp/bench.log" 2>&1 || { cat "$tmp/bench.log"; exit 1; }
    echo "ok: fastloop bench: $(grep -c . "$tmp/bench.csv") lines in bench.csv"
    # Remote shards through the system's libcurl (opened at run time, not bundled: its TLS and CA files are the
    # system's): the folder the wheel's `fastloop pack` wrote, served over http:// on loopback; then, with
    # libcurl hidden too, the message that says what to install.
    sandboxed "$fl" pack "$tmp/images" "$tmp/shards" >"$tmp/pack.log" 2>&1 || { cat "$tmp/pack.log"; exit 1; }
    port=$("$torch_python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$torch_python" -m http.server --bind 127.0.0.1 --directory "$tmp/shards" "$port" >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 50); do "$torch_python" -c "import socket; socket.create_connection(('127.0.0.1', $port))" \
      2>/dev/null && break; sleep 0.1; done
    sandboxed "$fl" train --data "shards:http://127.0.0.1:$port/" --image-size 24 --batch-size 4 --max-steps 2 \
      >"$tmp/remote.log" 2>&1 || { kill "$server"; cat "$tmp/remote.log"; exit 1; }
    echo "ok: fastloop train from shards over http:// (the system's libcurl): $(tail -1 "$tmp/remote.log" | cut -c1-100)"
    curl_lib=$(readlink -f /usr/lib/x86_64-linux-gnu/libcurl.so.4)
    if bwrap "${hide[@]}" --ro-bind /dev/null "$curl_lib" --chdir "$PWD" -- "$fl" train \
      --data "shards:http://127.0.0.1:$port/" --max-steps 1 >"$tmp/nocurl.log" 2>&1 ||
      ! grep -q "libcurl.so.4.*apt-get install libcurl4" "$tmp/nocurl.log"; then
      kill "$server"; echo "FAILED: without libcurl:"; cat "$tmp/nocurl.log"; exit 1
    fi
    kill "$server"
    echo "ok: without the system's libcurl, remote shards say: $(grep -o 'need libcurl.so.4.*' "$tmp/nocurl.log" | cut -c1-90)"
    for format in pt onnx safetensors; do
      sandboxed "$fl" export --checkpoint "$tmp/run-cli/last.ckpt" --out "$tmp/model.$format" >"$tmp/export.log" 2>&1 ||
        { cat "$tmp/export.log"; exit 1; }
      echo "ok: fastloop export: model.$format ($(du -k "$tmp/model.$format" | cut -f1) KB)"
    done
  )

  # A torch elsewhere on sys.path (--system-site-packages, PYTHONPATH, a .pth): the command finds it through
  # the console script, which passes its folders on by LD_LIBRARY_PATH.
  "$torch_python" -m venv "$tmp/venv-pth"
  "$tmp/venv-pth/bin/python" -m pip install -q --no-deps "$wheel"
  local site_pth
  site_pth=$("$tmp/venv-pth/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$torch_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' >"$site_pth/torch-elsewhere.pth"
  sandboxed "$tmp/venv-pth/bin/fastloop" predict --checkpoint "$tmp/run-cli/last.ckpt" --out "$tmp/preds-pth.csv" \
    "$tmp/images/val" >"$tmp/predict.log" 2>&1 || { cat "$tmp/predict.log"; return 1; }
  echo "ok: fastloop with torch elsewhere on sys.path (a .pth file): predict ran"

  # Bad input. The wrong torch: the installed record of the torch it was built against changed, then the
  # package and the command are asked to run.
  local build="$site/fastloop/_build.py"
  cp "$build" "$tmp/_build.py"
  sed -i 's/^torch_version = .*/torch_version = "2.4.0"/' "$build"
  expect_failure "import fastloop beside the wrong torch" "pip install torch==2.4.0" \
    "$venv/bin/python" -c 'import fastloop'
  expect_failure "fastloop beside the wrong torch" "pip install torch==2.4.0" "$fl" doctor
  cp "$tmp/_build.py" "$build"
  # A damaged install: a bundled library gone.
  local lib
  lib=$(ls "$site"/fastloop.libs/libturbojpeg*.so* | head -1)
  mv "$lib" "$tmp/"
  expect_failure "import fastloop with a bundled library missing" "$(basename "$lib") is missing" \
    "$venv/bin/python" -c 'import fastloop'
  expect_failure "fastloop with a bundled library missing" "$(basename "$lib") is missing" "$fl" doctor
  mv "$tmp/$(basename "$lib")" "$lib"
  # A Python it was not built for: pip refuses the wheel by its tag.
  local other
  for other in 3.9 3.10 3.11 3.12 3.13; do
    [ "$other" != "$version" ] && other=$(find_python "$other") && [ -n "$other" ] && break
  done
  expect_failure "pip install into Python $(version_of "$other")" "is not a supported wheel on this platform" \
    "$other" -m pip install --no-deps --target "$tmp/other" "$wheel"
  rm -rf "$tmp"
}

for wheel in "${wheels[@]}"; do
  start=$SECONDS
  check_wheel "$wheel"
  echo "=== wheel_check: $(basename "$wheel") passed in $((SECONDS - start)) s"
done
