# Sourced by scripts/wheel.sh and scripts/wheel_check.sh: the venv with the pinned torch for each CPython
# (the venv's own Python uses .venv). Needs the working directory at the repository root.
version_of() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])'; }

find_python() {  # find_python 3.X: an interpreter of that version (PATH, then pyenv), else nothing
  local candidate
  for candidate in "$(command -v "python$1" || true)" \
    "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/"$1".*/bin/"python$1"; do
    if [ -x "$candidate" ] && [ "$(version_of "$candidate" 2>/dev/null)" = "$1" ]; then
      echo "$candidate"
      return
    fi
  done
}

# The venv's name is a hash of the torch, torchvision and build-backend pins (a new torch, a new venv); the
# ONNX exporter's packages (`fastloop export --format onnx` runs torch.onnx) are added where missing.
wheel_pins=$(grep -E '^(torch|torchvision|scikit-build-core)==' requirements.txt)
wheel_pins_id=$(printf '%s\n' "$wheel_pins" | sha256sum | cut -c1-12)
wheel_extra_pins=$(grep -E '^(onnx|onnxscript)==' requirements.txt)

torch_venv() {  # torch_venv 3.X: prints the python of a venv with the pinned torch for 3.X, making it once
  local base dir
  if [ "$(version_of .venv/bin/python)" = "$1" ]; then
    echo "$PWD/.venv/bin/python"
    return
  fi
  dir="${FASTLOOP_VENV_HOME:-$HOME/.cache/fastloop}/wheel-venvs/cp${1/./}-$wheel_pins_id"
  if ! "$dir/bin/python" -c 'import torch, torchvision, scikit_build_core' 2>/dev/null; then
    base=$(find_python "$1")
    [ -n "$base" ] || { echo "wheel: no python$1 on PATH or under pyenv" >&2; return 1; }
    echo "wheel: creating $dir (the pinned torch for Python $1, ~6 GB; once per machine)" >&2
    rm -rf "$dir" && "$base" -m venv "$dir"
    # shellcheck disable=SC2086  # one pin per word
    "$dir/bin/python" -m pip install -q $wheel_pins >&2
  fi
  if ! "$dir/bin/python" -c 'import onnx, onnxscript' 2>/dev/null; then
    # shellcheck disable=SC2086
    "$dir/bin/python" -m pip install -q $wheel_extra_pins >&2
  fi
  echo "$dir/bin/python"
}
