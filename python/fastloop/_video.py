"""``fastloop.VideoFiles`` and ``fastloop.VideoFolder``: video clips for ``fastloop.Loader``, decoded by FFmpeg in
fastloop's C++ threads, clips chosen as torchcodec's samplers choose them (``clips_at_random_indices``,
``clips_at_regular_indices``, ``clips_at_random_timestamps``, ``clips_at_regular_timestamps``), and the user's ``transforms.v2`` pipeline run on each clip with one draw per clip."""

from __future__ import annotations

import bisect
import copy
import csv
import glob
import math
import os
import re
import tarfile
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _C

__all__ = ["VideoFiles", "VideoFolder", "video_csv", "video_shards"]

#: The containers VideoFolder lists (FFmpeg reads more; give VideoFiles their paths).
VIDEO_EXTENSIONS = (".mp4", ".mkv", ".webm", ".avi", ".mov", ".m4v")
_SAMPLERS = ("random", "regular", "random_timestamps", "regular_timestamps")
_TIME_SAMPLERS = ("random_timestamps", "regular_timestamps")
_POLICIES = ("repeat_last", "wrap", "error")
_OUTPUT_FORMATS = ("TCHW", "CTHW")
#: Transforms of a pipeline fastloop cannot run on clips.
_REFUSED = {"FiveCrop": "its tuple of crops", "TenCrop": "its tuple of crops"}


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} ({value!r}) must be strictly positive")
    return value


class VideoFiles:
    r"""Video files with class indices, each giving ``num_clips`` clips (samples) of ``num_frames_per_clip`` frames
    ``num_indices_between_frames`` apart, as torchcodec's samplers choose them.

    Args:
        paths (sequence of str or ``os.PathLike``): the video files (any container and codec the system's FFmpeg 5
            reads: mp4, mkv, webm, avi with H.264, HEVC, VP9, AV1, MPEG-4, ...).
        labels (sequence of int): the class index of each video.
        classes (sequence of str, optional): the name of each class index (default: "0", "1", ...).
        num_frames_per_clip (int): frames per clip. Default: 16.
        num_indices_between_frames (int): the step between a clip's frames ("dilation"). Default: 1.
        num_clips (int): clips per video; sample ``i`` is clip ``i % num_clips`` of video ``i // num_clips`` (with
            ``"regular_timestamps"`` each video's clips follow each other, as many as fit it).
        sampler (str): ``"random"``: ``torchcodec.samplers.clips_at_random_indices`` (starts drawn anew each epoch
            from the Loader's seed, per video, the same for any number of workers); ``"regular"``:
            ``clips_at_regular_indices`` (evenly spaced, the same every epoch); ``"random_timestamps"``:
            ``clips_at_random_timestamps`` (starts uniform in seconds, frames ``seconds_between_frames`` apart, each
            the frame played at its time; ``num_indices_between_frames`` is then not used);
            ``"regular_timestamps"``: ``clips_at_regular_timestamps`` (starts ``seconds_between_clip_starts`` apart
            through the sampling range: each video gives as many clips as fit, so the videos are indexed when the
            data set is made, and ``num_clips`` is not used).
        seconds_between_frames (float, optional): with the time samplers, the seconds between a clip's frames;
            None: one frame's average duration (torchcodec's default).
        seconds_between_clip_starts (float, optional): with ``"regular_timestamps"`` (required there), the seconds
            between clip starts.
        sampling_range_start, sampling_range_end (float, optional): with the time samplers, the seconds ``[start,
            end)`` in which clips start; None: the video's begin, and its end less a clip's span (torchcodec's
            defaults, so that no clip runs past the end).
        policy (str): a clip that runs past the video's end (a video shorter than a clip, which then starts at frame
            0, as torchcodec's default range makes it): ``"repeat_last"`` (torchcodec's default) repeats its last
            frame, ``"wrap"`` its frames from the clip's start, ``"error"`` raises naming the file.
        output_format (str): ``"TCHW"``: batches ``[B, T, C, H, W]``; ``"CTHW"``: ``[B, C, T, H, W]``, what
            torchvision's video models (``r3d_18``, ``mc3_18``, ``r2plus1d_18``) take.

    A sample (``dataset[i]``) is ``(tv_tensors.Video uint8 [T, C, H, W], label)``, its frames those the Loader's
    epoch 0 draws with seed 0. Through ``fastloop.Loader(dataset, transform=...)`` each clip goes through the
    transform as a ``tv_tensors.Video`` does in torchvision: one draw of its random parameters for the whole clip.
    A ``UniformTemporalSubsample(n)`` at the pipeline's top level picks the clip's frames before they are decoded.

    Raises:
        ValueError: a path that is not a file, a label count that differs, an argument out of range.
    """

    def __init__(self, paths: Sequence[Union[str, os.PathLike]], labels: Sequence[int],
                 classes: Optional[Sequence[str]] = None, *, num_frames_per_clip: int = 16,
                 num_indices_between_frames: int = 1, num_clips: int = 1, sampler: str = "random",
                 policy: str = "repeat_last", output_format: str = "TCHW",
                 seconds_between_frames: Optional[float] = None, seconds_between_clip_starts: Optional[float] = None,
                 sampling_range_start: Optional[float] = None, sampling_range_end: Optional[float] = None) -> None:
        self.paths: List[str] = [os.fspath(p) for p in paths]
        self.labels: List[int] = [int(label) for label in labels]
        if len(self.paths) != len(self.labels):
            raise ValueError(f"{len(self.paths)} videos but {len(self.labels)} labels: give one label per video")
        #: video_shards of s3:// or http(s):// shards: their spec, its videos named "URL/#K" (None: local files).
        self.remote_shards: Optional[str] = None
        for path in self.paths:
            if not _remote(path) and not os.path.isfile(path) and _shard_of(path) is None:
                raise ValueError(f"{path}: no such video file; check the path (or the CSV row naming it)")
        self.classes: Optional[List[str]] = list(classes) if classes is not None else None
        self.num_frames_per_clip = _positive("num_frames_per_clip", num_frames_per_clip)
        self.num_indices_between_frames = _positive("num_indices_between_frames", num_indices_between_frames)
        self.num_clips = _positive("num_clips", num_clips)
        if sampler not in _SAMPLERS:
            raise ValueError(f"sampler must be one of {_SAMPLERS}, got {sampler!r}")
        if policy not in _POLICIES:
            raise ValueError(f"Invalid policy ({policy}). Supported values are {_POLICIES}.")
        if output_format not in _OUTPUT_FORMATS:
            raise ValueError(f"output_format must be one of {_OUTPUT_FORMATS}, got {output_format!r}")
        self.sampler, self.policy, self.output_format = sampler, policy, output_format
        if seconds_between_frames is not None and not seconds_between_frames > 0:
            raise ValueError(f"seconds_between_frames ({seconds_between_frames}) must be > 0")
        timed = {"seconds_between_frames": seconds_between_frames, "sampling_range_start": sampling_range_start,
                 "sampling_range_end": sampling_range_end}
        for name, value in timed.items():
            if value is not None and sampler not in _TIME_SAMPLERS:
                raise ValueError(f"{name} is for the time samplers ('random_timestamps', 'regular_timestamps'); the "
                                 "index samplers take num_indices_between_frames")
        if (sampler == "regular_timestamps") != (seconds_between_clip_starts is not None):
            raise ValueError("sampler='regular_timestamps' takes seconds_between_clip_starts (and only it does)")
        if seconds_between_clip_starts is not None and not seconds_between_clip_starts > 0:
            raise ValueError(f"seconds_between_clip_starts ({seconds_between_clip_starts}) must be > 0")
        if sampler == "regular_timestamps" and num_clips != 1:
            raise ValueError("sampler='regular_timestamps' takes no num_clips: each video gives the clips that fit, "
                             "seconds_between_clip_starts apart")
        self.seconds_between_frames = seconds_between_frames
        self.seconds_between_clip_starts = seconds_between_clip_starts
        self.sampling_range_start, self.sampling_range_end = sampling_range_start, sampling_range_end
        #: UniformTemporalSubsample's num_samples taken from the Loader's transform (0: none).
        self.temporal_subsample = 0
        #: Per video its first sample, then the number of samples (each video's clips follow each other).
        self.clip_offsets: List[int] = [0]
        for video in range(len(self.paths)):
            count = len(self._clips_of(video, 0, 0)) if sampler == "regular_timestamps" else self.num_clips
            self.clip_offsets.append(self.clip_offsets[-1] + count)

    def __len__(self) -> int:
        return self.clip_offsets[-1]

    def _seconds(self) -> List[float]:
        """The time samplers' seconds as fastloop's C++ side takes them (0 / NaN where not given)."""
        unset = math.nan
        return [float(self.seconds_between_frames or 0.0), float(self.seconds_between_clip_starts or 0.0),
                unset if self.sampling_range_start is None else float(self.sampling_range_start),
                unset if self.sampling_range_end is None else float(self.sampling_range_end)]

    def _clips_of(self, video: int, seed: int, epoch: int) -> List[List[int]]:
        return _C._video_clip_frames(self.paths[video], self.num_frames_per_clip, self.num_indices_between_frames,
                                     self.num_clips, self.sampler, self.policy, self.temporal_subsample,
                                     self._seconds(), seed, epoch, video)

    def _video_of(self, index: int) -> int:
        return bisect.bisect_right(self.clip_offsets, index) - 1

    def _index(self, index: int) -> int:
        n = len(self)
        if not isinstance(index, int) or not -n <= index < n:
            raise IndexError(f"sample index {index!r} out of range for {n} clips")
        return index + n if index < 0 else index

    def clip_frames(self, index: int, seed: int = 0, epoch: int = 0) -> List[int]:
        """The frame indices of sample ``index`` in ``epoch`` of a Loader with ``seed``."""
        index = self._index(index)
        video = self._video_of(index)
        return list(self._clips_of(video, seed, epoch)[index - self.clip_offsets[video]])

    def __getitem__(self, index: int) -> Tuple[Any, int]:
        from torchvision import tv_tensors

        if getattr(self, "remote_shards", None):
            raise TypeError(f"{self.remote_shards}: the clips of remote shards are read through fastloop.Loader "
                            "(which fetches their shards); dataset[i] reads local videos only")
        index = self._index(index)
        video = self._video_of(index)
        data, _ = _C._video_frames(self.paths[video], self.clip_frames(index))
        if self.output_format == "CTHW":
            data = data.permute(1, 0, 2, 3)
        return tv_tensors.Video(data), self.labels[video]

    def __reduce__(self) -> Tuple[Any, ...]:
        return (_video_files_rebuild, (self.__dict__.copy(),))

    def _fastloop_loader_args(self) -> Dict[str, Any]:
        """What ``fastloop.Loader(dataset)`` hands its C++ side."""
        return {"data.source": "video", "files": self.paths, "labels": self.labels, "classes": self.classes or [],
                "video_clip": [self.num_frames_per_clip, self.num_indices_between_frames, self.num_clips,
                               int(self.sampler in ("random", "random_timestamps")), self.temporal_subsample,
                               int(self.output_format == "CTHW"), int(self.sampler in _TIME_SAMPLERS)],
                "video_policy": self.policy, "video_seconds": self._seconds(),
                **({"video_shards": self.remote_shards} if getattr(self, "remote_shards", None) else {})}

    def _fastloop_video_transform(self, transform: Any, views: Optional[int]) -> Tuple["VideoFiles", Any]:
        """(this data set with the pipeline's top-level UniformTemporalSubsample taken as its frame choice, the rest
        of the pipeline); TypeError for what fastloop does not run on clips."""
        if views is not None or (isinstance(transform, (list, tuple)) and transform
                                 and all(isinstance(t, str) or type(t).__name__ == "Compose" for t in transform)):
            raise TypeError("fastloop.Loader: several views of video clips are not supported; give one transform")
        items = None
        if type(transform).__name__ == "Compose":
            items = list(transform.transforms)
        elif isinstance(transform, (list, tuple)):
            items = list(transform)
        elif transform is not None and not isinstance(transform, str):
            items = [transform]
        if items is None:
            return self, transform
        for t in items:
            if type(t).__name__ in _REFUSED:
                raise TypeError(f"fastloop.Loader: {type(t).__name__}() on video clips: fastloop batches one clip per "
                                f"sample, not {_REFUSED[type(t).__name__]}; drop it")
        subsample = [t for t in items if type(t).__name__ == "UniformTemporalSubsample"]
        if not subsample:
            return self, transform
        if len(subsample) > 1:
            raise TypeError("fastloop.Loader: more than one UniformTemporalSubsample in the pipeline; keep one")
        source = copy.copy(self)
        source.temporal_subsample = int(subsample[0].num_samples)
        rest = [t for t in items if t is not subsample[0]]
        if not rest:
            raise TypeError("fastloop.Loader: a pipeline of UniformTemporalSubsample alone makes uint8 clips; "
                            "add ToDtype(torch.float32, scale=True) (the Loader's batches are float)")
        return source, rest

    def __repr__(self) -> str:
        return (f"fastloop.{type(self).__name__}({len(self.paths)} videos, num_frames_per_clip="
                f"{self.num_frames_per_clip}, num_indices_between_frames={self.num_indices_between_frames}, "
                f"num_clips={self.num_clips}, sampler={self.sampler!r}): {len(self)} clips")


def _remote(path: str) -> bool:
    return path.startswith(("s3://", "http://", "https://"))


def _shard_of(path: str) -> Optional[str]:
    """The local .tar shard whose member ``path`` names (``SHARD.tar/KEY.mp4``), or None."""
    at = path.find(".tar/")
    while at >= 0:
        if os.path.isfile(path[: at + 4]):
            return path[: at + 4]
        at = path.find(".tar/", at + 1)
    return None


def _video_files_rebuild(state: Dict[str, Any]) -> VideoFiles:
    made = VideoFiles.__new__(VideoFiles)
    made.__dict__.update(state)
    return made


def _classes_of(root: str) -> List[str]:
    return sorted(entry.name for entry in os.scandir(root) if entry.is_dir())


def _videos_listed(root: str, extensions: Tuple[str, ...]) -> Tuple[List[str], List[int], List[str]]:
    """ImageFolder's listing of videos: root/CLASS/**/VIDEO, classes sorted, files sorted in each class."""
    classes = _classes_of(root)
    paths, labels = [], []
    for label, name in enumerate(classes):
        for folder, _, files in sorted(os.walk(os.path.join(root, name), followlinks=True)):
            for file in sorted(files):
                if file.lower().endswith(extensions):
                    paths.append(os.path.join(folder, file))
                    labels.append(label)
    return paths, labels, classes


class VideoFolder(VideoFiles):
    r"""Videos laid out as ``torchvision.datasets.ImageFolder`` lays out images: ``root/CLASS/VIDEO.mp4`` (class
    indices by sorted folder name), or torchvision's Kinetics layout ``root/SPLIT/CLASS/VIDEO.mp4`` with
    ``split="train"`` (or ``"val"``, ...). Clips and the other arguments as :class:`VideoFiles`.

    Example::

        >>> dataset = fastloop.VideoFolder("kinetics", split="train", num_frames_per_clip=16,
        ...                                num_indices_between_frames=2, output_format="CTHW")
        >>> loader = fastloop.Loader(dataset, transform=v2.Compose([v2.RandomResizedCrop(112), ...]), batch_size=8)
        >>> for clips, labels in loader:  # [8, 3, 16, 112, 112], [8]
    """

    def __init__(self, root: Union[str, os.PathLike], num_frames_per_clip: int = 16,
                 num_indices_between_frames: int = 1, num_clips: int = 1, sampler: str = "random", *,
                 split: Optional[str] = None, policy: str = "repeat_last", output_format: str = "TCHW",
                 seconds_between_frames: Optional[float] = None, seconds_between_clip_starts: Optional[float] = None,
                 sampling_range_start: Optional[float] = None, sampling_range_end: Optional[float] = None,
                 extensions: Sequence[str] = VIDEO_EXTENSIONS) -> None:
        self.root = os.fspath(root)
        folder = os.path.join(self.root, split) if split else self.root
        if not os.path.isdir(folder):
            raise ValueError(f"{folder}: no such folder (VideoFolder wants root/CLASS/VIDEO or root/SPLIT/CLASS/VIDEO)")
        paths, labels, classes = _videos_listed(folder, tuple(e.lower() for e in extensions))
        if not paths:
            raise ValueError(f"{folder}: no videos ({', '.join(extensions)}) in class folders (root/CLASS/VIDEO)")
        super().__init__(paths, labels, classes, num_frames_per_clip=num_frames_per_clip,
                         num_indices_between_frames=num_indices_between_frames, num_clips=num_clips, sampler=sampler,
                         policy=policy, output_format=output_format, seconds_between_frames=seconds_between_frames,
                         seconds_between_clip_starts=seconds_between_clip_starts,
                         sampling_range_start=sampling_range_start, sampling_range_end=sampling_range_end)
        self.split = split


def video_csv(path: Union[str, os.PathLike], **kwargs: Any) -> VideoFiles:
    """Videos listed in a CSV file: a header row with columns ``path`` and ``label`` (class indices, or class
    names: sorted, as ImageFolder's folders), paths relative to the CSV file; ``kwargs`` as :class:`VideoFiles`.
    A row naming a missing file, or without a label, is a ``ValueError`` naming the file and the row."""
    path = os.fspath(path)
    base = os.path.dirname(os.path.abspath(path))
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows or "path" not in rows[0] or "label" not in rows[0]:
        raise ValueError(f"{path}: a video list needs a header row with columns 'path' and 'label'")
    paths, names = [], []
    for line, row in enumerate(rows, start=2):
        if not row.get("path") or row.get("label") in (None, ""):
            raise ValueError(f"{path}, row {line}: needs a path and a label")
        video = os.path.join(base, row["path"])
        if not os.path.isfile(video):
            raise ValueError(f"{path}, row {line}: {video}: no such video file")
        paths.append(video)
        names.append(row["label"])
    if all(n.strip().lstrip("-").isdigit() for n in names):
        return VideoFiles(paths, [int(n) for n in names], **kwargs)
    classes = sorted(set(names))
    return VideoFiles(paths, [classes.index(n) for n in names], classes, **kwargs)


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
