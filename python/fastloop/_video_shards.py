"""``fastloop.video_shards``: videos in tar shards as WebDataset writes them (``KEY.mp4`` + ``KEY.cls``), local
(read in place from a mapping of each shard) or from object storage and web servers (fetched by the Loader as
``shards:`` sources of images are), as a :class:`fastloop.VideoFiles`."""

from __future__ import annotations

import glob
import os
import re
import tarfile
from typing import Any, Dict, List, Sequence, Union

from . import _C
from ._video import VIDEO_EXTENSIONS, VideoFiles, _remote

__all__ = ["video_shards"]

_KEY_EXT = re.compile(r"^((?:.*/|)[^./]+)[.]([^/]*)$")  # webdataset's base_plus_ext: KEY, then all after its first dot


def _shard_files(shards: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]]) -> List[str]:
    if not isinstance(shards, (str, os.PathLike)):
        return [os.fspath(s) for s in shards]
    shards = os.fspath(shards)
    if os.path.isdir(shards):
        found = sorted(glob.glob(os.path.join(shards, "*.tar")))
    elif os.path.isfile(shards):
        found = [shards]
    else:
        found = sorted(glob.glob(shards))
    if not found:
        raise ValueError(f"{shards}: no .tar shards (give a .tar file, a folder of them, a glob pattern or a list)")
    return found


def _remote_video_shards(spec: str, **kwargs: Any) -> VideoFiles:
    if kwargs.get("sampler") == "regular_timestamps":
        raise ValueError(f"{spec}: sampler='regular_timestamps' needs every video's duration when the data set is "
                         "made, which would fetch every shard first; use 'regular', 'random' or 'random_timestamps'")
    names, num_classes, classes = _C._remote_video_list(spec)
    dataset = VideoFiles(names, [-1] * len(names), classes, **kwargs)
    dataset.remote_shards = spec
    return dataset


def video_shards(shards: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]], **kwargs: Any) -> VideoFiles:
    """Videos in tar shards as WebDataset writes them: per sample a video member ``KEY.mp4`` (or ``.mkv``,
    ``.webm``, ``.avi``, ...) and its class index ``KEY.cls``. ``shards``: a ``.tar`` file, a folder of them (sorted),
    a glob pattern, or a list. The videos are read in place, from a mapping of each shard (no copy, no extraction):
    a sample's path is ``SHARD.tar/KEY.mp4``, which ``VideoFiles`` and the Loader take as a file's. ``kwargs`` as
    :class:`VideoFiles`. A sample without a video or without a ``.cls`` member, or a ``.cls`` that is not an
    integer, is a ``ValueError`` naming the shard and the key; a compressed shard is refused.

    From object storage or a web server, as ``shards:`` sources of images: ``shards`` a brace pattern of URLs
    (``"s3://bucket/videos/train-{000000..000099}.tar"``, ``http(s)://`` alike) or a URL folder (its ``train-*.tar``),
    with the ``shards.idx`` that ``fastloop pack --index-only DIR`` writes beside them (the video counts, read
    instead of the shards), credentials and endpoint as for image shards (``AWS_*``, ``~/.aws``). The Loader fetches
    the shards ahead of its workers, with its ``cache_dir``, ``cache_size``, ``timeout`` and ``shuffle_buffer``;
    shuffled, an epoch reads them in webdataset's order (shards shuffled and split across ranks, videos through the
    shuffle buffer, a video's clips one after the other). Labels come from the shards as they arrive: ``labels``
    holds -1, and ``dataset[i]`` is for local videos only; ``"regular_timestamps"`` is refused. A video is named
    ``URL/#K`` (the shard's K-th video)."""
    if isinstance(shards, str) and _remote(shards):
        return _remote_video_shards(shards, **kwargs)
    paths: List[str] = []
    labels: List[int] = []
    for shard in _shard_files(shards):
        videos: Dict[str, str] = {}
        classes: Dict[str, int] = {}
        try:
            with tarfile.open(shard, mode="r:") as archive:  # plain tar: fastloop reads the members in place
                for member in archive:
                    match = _KEY_EXT.match(member.name) if member.isfile() else None
                    if not match:
                        continue
                    key, ext = match.group(1), match.group(2).lower()
                    if "." + ext in VIDEO_EXTENSIONS:
                        videos.setdefault(key, member.name)
                    elif ext == "cls":
                        text = archive.extractfile(member).read().decode("utf-8", "replace").strip()
                        if not text.lstrip("-").isdigit():
                            raise ValueError(f"{shard}: {member.name} holds {text[:20]!r}, not a class index")
                        classes[key] = int(text)
        except tarfile.TarError as error:
            raise ValueError(f"{shard}: not a plain tar shard ({error}); fastloop reads uncompressed .tar") from None
        for key, name in videos.items():  # in archive order
            if key not in classes:
                raise ValueError(f"{shard}: sample {key!r} has no .cls member; each sample needs KEY.mp4 (or another "
                                 "video) and KEY.cls")
            paths.append(f"{shard}/{name}")
            labels.append(classes[key])
        if set(classes) - set(videos):
            raise ValueError(f"{shard}: sample {min(set(classes) - set(videos))!r} has a .cls but no video member")
    if not paths:
        raise ValueError(f"{shards}: the shards hold no videos (KEY.mp4 with KEY.cls)")
    return VideoFiles(paths, labels, **kwargs)
