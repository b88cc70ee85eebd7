"""Fixtures of the Python package's tests: the build's programs, small data sets made by the tests."""

import contextlib
import os
import pathlib
import signal
import subprocess
import threading
import time
from typing import Callable, Iterator, List

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("FASTLOOP_BUILD_DIR", ROOT / "build"))


@pytest.fixture(scope="session", autouse=True)
def _fastloop_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The package's cache (a transform's tensor files) in the session's temporary folder, not the user's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FASTLOOP_CACHE", str(tmp_path_factory.mktemp("fastloop-cache")))
        yield


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """FASTLOOP_REPEAT=N runs every selected test N times (scripts/stress.sh): a flake shows as a failure."""
    repeat = int(os.environ.get("FASTLOOP_REPEAT", "1"))
    if repeat > 1:
        metafunc.fixturenames.append("repeat_index")
        metafunc.parametrize("repeat_index", range(repeat))


def _program(name: str) -> pathlib.Path:
    path = BUILD / name
    if not path.exists():
        pytest.skip(f"{path} is not built (scripts/setup.sh builds it)")
    return path


@pytest.fixture(scope="session")
def cli() -> pathlib.Path:
    """The fastloop executable of the build the package was installed from."""
    return _program("fastloop")


@pytest.fixture(scope="session")
def loader_dump() -> pathlib.Path:
    """tests/loader_dump.cpp: the batches `fastloop train FLAGS` trains on, as safetensors."""
    return _program("tests/fastloop_loader_dump")


def run(args: List[str], **kwargs) -> subprocess.CompletedProcess:
    """Runs a program, failing the test with its output when it exits non-zero."""
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="session")
def image_folder(tmp_path_factory) -> pathlib.Path:
    """imagefolder:DIR with 3 classes, JPEG and PNG photos of varied sizes in train/ and val/."""
    from PIL import Image
    import numpy as np

    root = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(0)
    for split, count in (("train", 12), ("val", 4)):
        for c, name in enumerate(("ant", "bee", "cat")):
            folder = root / split / name
            folder.mkdir(parents=True)
            for i in range(count):
                h, w = int(rng.integers(40, 90)), int(rng.integers(40, 90))
                pixels = (rng.random((h, w, 3)) * 60 + c * 80).astype(np.uint8)
                ext = "png" if i % 3 == 0 else "jpg"
                Image.fromarray(pixels).save(folder / f"{i:03d}.{ext}")
    return root


def loader_threads() -> int:
    """The fastloop loader threads alive in this process (they are named fastloop-loader)."""
    count = 0
    for task in pathlib.Path("/proc/self/task").iterdir():
        try:
            count += (task / "comm").read_text().strip() == "fastloop-loader"
        except (FileNotFoundError, ProcessLookupError):  # a thread that just ended (ENOENT, or ESRCH mid-read)
            pass
    return count


def loader_threads_left(timeout: float = 10.0) -> int:
    """The loader threads still listed once the stopped ones have gone. pthread_join returns as soon as a
    thread has ended, but the kernel lists its task in /proc/self/task until it has finished exiting
    (microseconds; 14 of 300 Ctrl-C trials on 2 cores still saw it), so a count above zero is looked at
    again until `timeout`. A thread that still runs (a loader nobody stopped) stays counted."""
    deadline = time.monotonic() + timeout
    while (count := loader_threads()) and time.monotonic() < deadline:
        time.sleep(0.001)
    return count


@contextlib.contextmanager
def sigint_raises_keyboard_interrupt() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt inside the block, however the suite was started: a launcher that
    ignores SIGINT (``nohup``, a shell's ``cmd &``) starts Python with it ignored, and Python then installs
    no handler. The handler found is restored after the block."""
    found = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, found)


@contextlib.contextmanager
def ctrl_c_once_training(metrics: pathlib.Path) -> Iterator[threading.Event]:
    """Inside the block, one SIGINT to this process (raised as KeyboardInterrupt) once the run's `metrics` file
    holds its first record, when fastloop's handler is in place; yields the event set as it is sent."""
    started, ended = threading.Event(), threading.Event()

    def interrupt() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not started.is_set() and not ended.is_set():
            if metrics.exists() and metrics.stat().st_size > 0:
                started.set()
                os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)

    sender = threading.Thread(target=interrupt)
    with sigint_raises_keyboard_interrupt():
        sender.start()
        try:
            yield started
        finally:
            ended.set()  # a run that ended first: the sender stops waiting
            sender.join()


def fork_and_wait(child: Callable[[], int], timeout: float = 60.0) -> int:
    """Runs ``child()`` in a forked child process and returns its exit code; a child still running after
    ``timeout`` seconds is killed and fails the test as a hang. The child never returns into pytest."""
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            code = child()
        except BaseException as error:  # noqa: BLE001 (the child reports everything through its exit code)
            print(f"child: {type(error).__name__}: {error}", flush=True)
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    stacks = _native_stacks(pid)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError(f"the forked child hung: still running after {timeout:.0f} s\n{stacks}")


def _native_stacks(pid: int) -> str:
    """Every thread's native stack of process ``pid`` (gdb's), to say where a hang waits; "" without gdb."""
    try:
        done = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 12"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return "\n".join(line for line in done.stdout.splitlines() if line.startswith(("#", "Thread")))


def assert_boxes_close(actual, expected, what: object) -> None:
    """Boxes fastloop moved (float64) against torchvision's (float32, a tv_tensor or not): within 1e-3 px."""
    import torch

    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    torch.testing.assert_close(actual, expected.as_subclass(torch.Tensor).double(), atol=1e-3, rtol=0,
                               msg=lambda m: f"{what}: {m}")


def torchvision_error(make: Callable[[], object]) -> tuple:
    """(type, message) of the error torchvision raises making something; fails when it raises none."""
    try:
        make()
    except (TypeError, ValueError) as e:
        return type(e), str(e)
    raise AssertionError("torchvision accepted it")
