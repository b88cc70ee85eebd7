"""The ``fastloop`` command of the Python package: a console script that starts the C++ program shipped in
the wheel (``fastloop/bin/fastloop``) in its own place, with the same arguments.

It is a module of its own, outside the ``fastloop`` package, so that starting the command does not import
torch (the package's ``__init__`` does): it only reads what it checks. Before it starts the program it checks
what would otherwise end in a dynamic-linker error: the torch release the program was built against, and
the files of the installation.
"""

import glob
import importlib.metadata
import importlib.util
import os
import sys
from types import ModuleType
from typing import List, NoReturn, Optional

__all__ = ["main"]


def _load(package_dir: str, name: str) -> ModuleType:
    """``fastloop.<name>`` loaded from its file, without running the package's ``__init__``."""
    spec = importlib.util.spec_from_file_location(f"_fastloop_cli_{name}", os.path.join(package_dir, f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _torch_libs() -> List[str]:
    """The folders of the libraries of the torch this Python would import (``torch/lib`` and the CUDA runtime's
    ``nvidia/*/lib`` beside it), found without importing it; empty without torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return []
    torch_dir = list(spec.submodule_search_locations)[0]
    return [os.path.join(torch_dir, "lib"), *sorted(glob.glob(os.path.join(torch_dir, "..", "nvidia", "*", "lib")))]


def _fail(message: str) -> NoReturn:
    print(f"fastloop: {message}", file=sys.stderr)
    sys.exit(2)


def main(argv: Optional[List[str]] = None) -> NoReturn:
    """Replaces this process with ``fastloop/bin/fastloop`` and `argv` (default: this command's arguments)."""
    spec = importlib.util.find_spec("fastloop")
    if spec is None or not spec.submodule_search_locations:
        _fail("the fastloop package is not installed in this Python (pip install fastloop-...whl)")
    package_dir = list(spec.submodule_search_locations)[0]
    if not os.path.exists(os.path.join(package_dir, "_build.py")):
        _fail(f"the fastloop package this Python finds first ({package_dir}) is a source tree, not an installed "
              f"one (PYTHONPATH?); install the wheel (pip install fastloop-...whl) or run a build's build/fastloop")
    build, install = _load(package_dir, "_build"), _load(package_dir, "_install")

    try:
        torch_version: Optional[str] = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = None
    mismatch = install.torch_mismatch(build.torch_version, torch_version, build.version)
    if mismatch is not None:
        _fail(mismatch)
    missing = install.missing_files()
    if missing:
        _fail(install.load_error(FileNotFoundError(missing[0])))
    program = os.path.join(package_dir, "bin", "fastloop")
    if not os.path.exists(program):
        _fail(f"{program} does not exist: the fastloop package this Python finds first ({package_dir}) is not an "
              f"installed wheel (a build tree on PYTHONPATH?); run that build's own build/fastloop, or install "
              f"the wheel: pip install fastloop-...whl")

    env = dict(os.environ)
    # The program finds torch beside the package (its RPATH, site-packages/torch/lib); a torch elsewhere on
    # sys.path (--system-site-packages, PYTHONPATH, a .pth file) is passed on by the library path.
    torch_libs = _torch_libs()
    beside = os.path.join(os.path.dirname(package_dir), "torch", "lib")
    if torch_libs and os.path.realpath(torch_libs[0]) != os.path.realpath(beside):
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [*torch_libs, env.get("LD_LIBRARY_PATH")]))
    # `export --format onnx` runs torch.onnx in a Python: this one, which has torch.
    env.setdefault("FASTLOOP_PYTHON", sys.executable)
    args = sys.argv[1:] if argv is None else argv
    os.execve(program, ["fastloop", *args], env)  # argv[0] as typed: usage lines say "fastloop"


if __name__ == "__main__":
    main()
