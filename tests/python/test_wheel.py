"""The binary wheel: the installation checks that ``import fastloop`` and the ``fastloop`` command run, and
scripts/wheel_check.sh on the wheel of this Python in dist/ (scripts/wheel.sh makes it; CI's wheel stage
builds it and runs this file). Without such a wheel the check is a skip, never a pass."""

import glob
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load_install():  # type: ignore[no-untyped-def]
    """python/fastloop/_install.py of this tree by its path: torch-free, as the console script loads it."""
    spec = importlib.util.spec_from_file_location("fastloop_install_under_test", ROOT / "python/fastloop/_install.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_install = _load_install()


def test_torch_mismatch_names_the_release_needed_and_how_to_get_it() -> None:
    message = _install.torch_mismatch("2.14.1", "2.11.0", "0.1.0")
    assert message is not None
    assert "built against torch 2.14.1" in message and "this Python has torch 2.11.0" in message
    assert "pip install torch==2.14.1" in message and "scripts/wheel.sh" in message
    missing = _install.torch_mismatch("2.14.1", None, "0.1.0")
    assert missing is not None and "no torch is installed" in missing


def test_torch_mismatch_ignores_the_local_build_label() -> None:
    assert _install.torch_mismatch("2.14.1+cu130", "2.14.1", "0.1.0") is None
    assert _install.torch_mismatch("2.14.1", "2.14.1+cu130", "0.1.0") is None


def test_load_error_names_the_missing_file(monkeypatch: pytest.MonkeyPatch) -> None:
    gone = "/venv/site-packages/fastloop.libs/libturbojpeg-4292207e.so.0.2.0"
    monkeypatch.setattr(_install, "missing_files", lambda distribution="fastloop": [gone])
    message = _install.load_error(ImportError("libturbojpeg-4292207e.so.0.2.0: cannot open shared object file"))
    assert f"{gone} is missing" in message and "pip install --force-reinstall" in message


def test_load_error_of_a_cpu_only_torch_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_install, "missing_files", lambda distribution="fastloop": [])
    message = _install.load_error(ImportError("libc10_cuda.so: cannot open shared object file"))
    assert "CPU-only build" in message


def test_wheel_of_this_python_passes_wheel_check() -> None:
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    wheels = sorted(glob.glob(str(ROOT / "dist" / f"fastloop-*-{tag}-{tag}-*.whl")), key=os.path.getmtime)
    if not wheels:
        pytest.skip(f"no dist/fastloop-*-{tag}-*.whl: scripts/wheel.sh venv builds it")
    run = subprocess.run([str(ROOT / "scripts" / "wheel_check.sh"), wheels[-1]], capture_output=True, text=True)
    print(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "FAILED" not in run.stdout
    steps = ("import fastloop", "fastloop.Loader(transform=", "fastloop.train()", "fastloop doctor", "fastloop bench",
             "fastloop train", "fastloop train from shards over http://", "without the system's libcurl",
             "fastloop predict", "fastloop export: model.onnx", "a video clip through the system's FFmpeg",
             "images without FFmpeg", "video without FFmpeg says what to install", "torch elsewhere on sys.path",
             "beside the wrong torch", "with a bundled library missing", "is not a supported wheel")
    passed = [line for line in run.stdout.splitlines() if line.startswith("ok: ")]
    for step in steps:
        assert any(step in line for line in passed), f"no 'ok:' line for {step}:\n{run.stdout}"
