"""Checks of the installed package that need neither torch nor the compiled module: the torch it was built
against and the files its installation wrote. ``import fastloop`` and the ``fastloop`` command (a console
script, ``_fastloop_cli``) run them, so a wrong torch or a damaged install is a message that says what to do,
never a dynamic-linker error.

Nothing here imports torch or ``fastloop._C``: the command loads this file by its path, without importing the
package (whose ``__init__`` imports torch).
"""

import csv
import importlib.metadata
import os
import re
from typing import List, Optional

__all__ = ["torch_mismatch", "missing_files", "load_error"]

_NATIVE = re.compile(r"(\.so(\.[0-9]+)*|/bin/[^/]+)$")


def _public(version: str) -> str:
    """``"2.14.1+cu130"`` -> ``"2.14.1"``: the local label names the build, not the release."""
    return version.split("+", 1)[0]


def torch_mismatch(built: str, found: Optional[str], version: str) -> Optional[str]:
    """The message for a fastloop `version` built against torch `built` under torch `found` (None: no torch
    installed), or None when they are the same release."""
    if found is not None and _public(found) == _public(built):
        return None
    have = "no torch is installed" if found is None else f"this Python has torch {found}"
    return (
        f"fastloop {version} was built against torch {built}, but {have}. Install that torch: "
        f"pip install torch=={_public(built)}; or, to keep your torch, build fastloop against it: "
        f"scripts/wheel.sh (or pip install .) in fastloop's source tree, in this environment"
    )


def missing_files(distribution: str = "fastloop") -> List[str]:
    """The shared libraries and programs that the installed `distribution` recorded (its RECORD file) but
    that are not on disk now, as absolute paths; empty when it is complete or was not installed by pip
    (a build tree on PYTHONPATH)."""
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return []
    # RECORD itself, not Distribution.files: since Python 3.12 that leaves out the files that are missing.
    record = dist.read_text("RECORD") or ""
    missing = []
    for row in csv.reader(record.splitlines()):
        if row and _NATIVE.search(row[0]):
            path = os.path.abspath(str(dist.locate_file(row[0])))
            if not os.path.exists(path):
                missing.append(path)
    return missing


def load_error(error: BaseException) -> str:
    """What to say when loading fastloop's compiled code failed with `error`: the files missing from the
    installation if any (a damaged install), else the loader's own message with what to check."""
    missing = missing_files()
    if missing:
        return (
            f"fastloop's installation is damaged: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing (installed by pip, removed since). Reinstall it: "
            f"pip install --force-reinstall --no-deps fastloop (or the wheel file you installed)"
        )
    if re.search(r"lib(torch|c10)_cuda\.so", str(error)):
        return (
            f"fastloop's compiled module did not load: {error}. fastloop was built against a CUDA build of "
            f"torch and this torch has no CUDA libraries (a CPU-only build): install PyPI's default torch "
            f"(pip install torch==<the version in fastloop/_build.py>), or build fastloop against this one"
        )
    return (
        f"fastloop's compiled module did not load: {error}. Check that torch imports in this Python and that "
        f"it is the release fastloop was built against (fastloop/_build.py names it)"
    )
