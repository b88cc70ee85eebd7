"""Finishes a wheel that ``auditwheel repair`` made (scripts/wheel.sh): points each binary inside it at the
user's torch and pins the torch it was built against. Rewrites the wheel in place, its RECORD included.

Why: fastloop links LibTorch (libtorch*, libc10*) and the CUDA runtime torch depends on (libcudart, from the
nvidia-* wheels), which the wheel does not carry (``--exclude``): the user's ``torch`` provides them, installed
beside the package in site-packages, as torchvision's wheels find it. auditwheel keeps only RPATH entries
that point inside the wheel, so for each library a binary needs from there (looked up in SITE, the build's
site-packages: ``torch/lib``, ``nvidia/cu13/lib``, ...) an ``$ORIGIN``-relative entry is added here, after
it. And a wheel runs only under the torch release it was compiled against, so ``Requires-Dist: torch``
becomes ``torch==<that release>``, read from the wheel's own ``fastloop/_build.py``.

Usage: python tools/wheel_finish.py WHEEL SITE       (patchelf on PATH; scripts/wheel.sh installs it)
       python tools/wheel_finish.py --floor WHEEL   the newest glibc / libstdc++ symbol versions its binaries
                                                    need, and which symbols need them (objdump -T): what sets
                                                    the manylinux tag's glibc floor
"""

import argparse
import base64
import glob
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections import defaultdict
from typing import Dict, List, Set, Tuple

TORCH_LIB = "torch/lib"  # relative to site-packages, where pip installs torch
SYSTEM_FAMILIES = ("GLIBC", "GLIBCXX", "CXXABI", "GCC")  # the versions of glibc, libstdc++ and libgcc_s


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def _patchelf(*args: str) -> str:
    return subprocess.run(["patchelf", *args], check=True, capture_output=True, text=True).stdout.strip()


def _site_dirs(site: str) -> Dict[str, str]:
    """soname -> its folder relative to site-packages, for the libraries of torch/lib and nvidia/*/lib."""
    dirs: Dict[str, str] = {}
    for pattern in (TORCH_LIB, "nvidia/*/lib", "nvidia/*/*/lib"):
        for folder in sorted(glob.glob(os.path.join(site, pattern))):
            for name in os.listdir(folder):
                dirs.setdefault(name, os.path.relpath(folder, site))
    return dirs


def _patch_rpath(data: bytes, member: str, site_dirs: Dict[str, str], in_wheel: Set[str]) -> Tuple[bytes, List[str]]:
    """`data` (an ELF file at `member`) with an ``$ORIGIN``-relative RPATH entry appended for each folder of
    site-packages that holds a library it needs and the wheel does not carry; the entries added."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, os.path.basename(member))
        with open(path, "wb") as f:
            f.write(data)
        entries = [e for e in _patchelf("--print-rpath", path).split(":") if e]
        folders = [TORCH_LIB] + [site_dirs[name] for name in _patchelf("--print-needed", path).split()
                                 if name in site_dirs and name not in in_wheel]
        added = []
        for folder in folders:
            entry = "$ORIGIN/" + os.path.relpath(folder, os.path.dirname(member) or ".")
            if entry not in entries:
                entries.append(entry)
                added.append(entry)
        if added:
            _patchelf("--set-rpath", ":".join(entries), path)
        with open(path, "rb") as f:
            return f.read(), added


def _torch_version(files: Dict[str, bytes]) -> str:
    build = next((data for name, data in files.items() if name.endswith("fastloop/_build.py")), None)
    match = re.search(rb'^torch_version = "([^"]+)"', build or b"", re.MULTILINE)
    if match is None:
        sys.exit("wheel_finish: the wheel has no fastloop/_build.py naming torch_version: not a fastloop wheel")
    return match.group(1).decode().split("+", 1)[0]


def _pin_torch(metadata: bytes, version: str) -> bytes:
    text, count = re.subn(r"^Requires-Dist: torch\b[^;\n]*", f"Requires-Dist: torch=={version}", metadata.decode(),
                          flags=re.MULTILINE)
    if count != 1:
        sys.exit("wheel_finish: METADATA has no single 'Requires-Dist: torch' line to pin")
    return text.encode()


def finish(wheel: str, site: str) -> List[str]:
    """Rewrites `wheel`, whose torch came from `site`; returns one line per change, for the log."""
    with zipfile.ZipFile(wheel) as z:
        infos = z.infolist()
        files = {info.filename: z.read(info) for info in infos}
    version = _torch_version(files)
    site_dirs = _site_dirs(site)
    if "libtorch.so" not in site_dirs:
        sys.exit(f"wheel_finish: {site} has no {TORCH_LIB}/libtorch.so: pass the site-packages of the build's torch")
    in_wheel = {os.path.basename(name) for name in files}
    changes = []
    for name, data in files.items():
        if data[:4] == b"\x7fELF":
            files[name], added = _patch_rpath(data, name, site_dirs, in_wheel)
            changes.append(f"{name}: RPATH += {':'.join(added) or '(nothing)'}")
        elif name.endswith(".dist-info/METADATA"):
            files[name] = _pin_torch(data, version)
            changes.append(f"{name}: Requires-Dist: torch=={version}")
    record = next(name for name in files if name.endswith(".dist-info/RECORD"))
    lines = [f"{name},{_record_hash(data)},{len(data)}" for name, data in files.items()
             if name != record and not name.endswith("/")]  # RECORD lists files, not folders
    files[record] = ("\n".join(lines + [f"{record},,"]) + "\n").encode()
    tmp = wheel + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for info in infos:  # same order and permissions (the CLI stays executable)
            out = zipfile.ZipInfo(info.filename, info.date_time)
            out.external_attr, out.compress_type = info.external_attr, zipfile.ZIP_DEFLATED
            z.writestr(out, files[info.filename])
    os.replace(tmp, wheel)
    return changes


def _version_key(version: str) -> Tuple[str, Tuple[int, ...]]:
    """``"GLIBCXX_3.4.30"`` -> ``("GLIBCXX", (3, 4, 30))``."""
    family, _, number = version.partition("_")
    return family, tuple(int(part) for part in number.split(".") if part.isdigit())


def floor(wheel: str) -> List[str]:
    """Per symbol-version family (GLIBC, GLIBCXX, CXXABI, GCC): the newest version some binary of `wheel`
    needs, and the symbols (with their files) that need exactly it."""
    needs: Dict[str, Set[Tuple[str, str]]] = defaultdict(set)  # version -> {(symbol, file)}
    with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory() as tmp:
        for info in z.infolist():
            data = z.read(info)
            if data[:4] != b"\x7fELF":
                continue
            path = os.path.join(tmp, "elf")
            with open(path, "wb") as f:
                f.write(data)
            dump = subprocess.run(["objdump", "-T", path], check=True, capture_output=True, text=True).stdout
            for match in re.finditer(r"\*UND\*\s+\S+\s+\(?([A-Z]+_[0-9.]+)\)?\s+(\S+)$", dump, re.MULTILINE):
                needs[match.group(1)].add((match.group(2), info.filename))
    newest: Dict[str, str] = {}
    for version in needs:
        family, number = _version_key(version)
        if family not in SYSTEM_FAMILIES:  # a bundled library's own versions (LIBJPEG_6.2, ...) set no floor
            continue
        if family not in newest or number > _version_key(newest[family])[1]:
            newest[family] = version
    lines = []
    for family in sorted(newest):
        version = newest[family]
        users = sorted(needs[version])
        shown = ", ".join(f"{symbol} ({os.path.basename(file)})" for symbol, file in users[:4])
        more = f" and {len(users) - 4} more" if len(users) > 4 else ""
        lines.append(f"{version}: {shown}{more}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--floor", action="store_true", help="print what sets the glibc floor; change nothing")
    parser.add_argument("wheel", help="a wheel written by auditwheel repair")
    parser.add_argument("site", nargs="?", help="the site-packages whose torch the wheel was built against")
    args = parser.parse_args()
    if args.floor:
        for line in floor(args.wheel):
            print(f"  needs {line}")
        return
    if args.site is None:
        parser.error("SITE is required (the site-packages of the torch the wheel was built against)")
    for line in finish(args.wheel, args.site):
        print(f"wheel_finish: {line}")


if __name__ == "__main__":
    main()
