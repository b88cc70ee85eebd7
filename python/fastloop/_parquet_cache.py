"""``cache_dir`` for remote Parquet files (``parquet:s3://...``, ``http(s)://``): each file is fetched whole into
the folder the first time one of its row groups is read (what ``cache_dir`` does for remote tar shards), so later
epochs and later runs read it from disk, memory-mapped. Files are named by a hash of their URL; the least
recently used ones are removed beyond ``cache_size`` bytes. Processes may share the folder: a file arrives under
a temporary name and is renamed into place whole.
"""

import hashlib
import os
import tempfile
from typing import Optional

__all__ = ["cached_copy", "fetch_into_cache"]

_PREFIX = "parquet-"
_CHUNK = 8 << 20  # bytes per ranged GET while a file is fetched whole


def _cache_path(url: str, cache_dir: str) -> str:
    name = os.path.basename(url.split("?", 1)[0]) or "file.parquet"
    return os.path.join(cache_dir, f"{_PREFIX}{hashlib.sha1(url.encode()).hexdigest()[:16]}-{name}")


def cached_copy(url: str, cache_dir: Optional[str]) -> Optional[str]:
    """The copy of `url` in `cache_dir` (its use recorded for the eviction order), or None."""
    if not cache_dir:
        return None
    path = _cache_path(url, cache_dir)
    try:
        os.utime(path)
    except OSError:
        return None
    return path


def fetch_into_cache(remote: "object", url: str, cache_dir: str, cache_bytes: int) -> str:
    """Fetches `remote` (a ``_C._RemoteFile`` of `url`) whole into `cache_dir`, then removes the least recently
    used copies beyond `cache_bytes`. Returns the copy's path."""
    os.makedirs(cache_dir, exist_ok=True)
    path = _cache_path(url, cache_dir)
    fd, part = tempfile.mkstemp(dir=cache_dir, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out:
            for offset in range(0, remote.size, _CHUNK):
                out.write(remote.read(offset, _CHUNK))
        os.replace(part, path)
    except BaseException:
        os.unlink(part)
        raise
    _evict(cache_dir, cache_bytes, keep=path)
    return path


def _evict(cache_dir: str, cache_bytes: int, keep: str) -> None:
    """Removes the least recently used copies until the folder's copies fit in `cache_bytes` (`keep` stays)."""
    copies = []
    for entry in os.scandir(cache_dir):
        if entry.name.startswith(_PREFIX) and entry.is_file():
            stat = entry.stat()
            copies.append((stat.st_mtime, stat.st_size, entry.path))
    total = sum(size for _, size, _ in copies)
    for _, size, path in sorted(copies):
        if total <= cache_bytes:
            break
        if path != keep:
            try:
                os.unlink(path)
                total -= size
            except FileNotFoundError:  # another process removed it
                total -= size
