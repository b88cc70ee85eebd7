"""``fastloop.VideoFiles`` and ``fastloop.VideoFolder``: video clips for ``fastloop.Loader``, decoded by FFmpeg in
fastloop's C++ threads, clips chosen as torchcodec's samplers choose them (``clips_at_random_indices``,
``clips_at_regular_indices``, ``clips_at_random_timestamps``, ``clips_at_regular_timestamps``), and the user's ``transforms.v2`` pipeline run on each clip with one draw per clip."""

from __future__ import annotations

import bisect
import copy
import math
import numbers
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _C
from ._video_csv import _ranges_checked

__all__ = ["VideoFiles", "VideoFolder"]

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
        sampling_range_start, sampling_range_end (optional): where clips may start, ``[start, end)``, in every
            video: with the time samplers seconds (float), with the index samplers frame indices (int; a negative
            one counts from the end, as torchcodec's ``clips_at_random_indices(..., sampling_range_start=,
            sampling_range_end=)`` take them: an end past the last frame is the last, and frames a clip takes past
            the end are filled by ``policy``); None: the video's begin, and its end less a clip's span (torchcodec's
            defaults, so that no clip runs past the end). Not with ``ranges``.
        ranges (sequence of (start, end), optional): per video, the part its clips are drawn from, seconds of its
            presentation times ``[start, end)``, either None for the video's begin / end (:func:`video_csv` reads
            them from ``start`` and ``end`` columns). Index samplers: the frames whose pts lie in ``[start, end)``,
            as if the video were cut there: clips start among them, and a part shorter than a clip starts at its
            first frame, filled by ``policy``. Time samplers: torchcodec's ``sampling_range_start=start`` and
            ``sampling_range_end=end - (num_frames_per_clip - 1) * seconds_between_frames`` (start and end within
            the video's own), so every frame's time lies in ``[start, end)``; a part shorter than a clip is refused,
            as torchcodec refuses a video shorter than a clip. A part outside the video, or without a frame, is
            found when the video is read and named then (with the row of a CSV list).
        policy (str): a clip that runs past the video's end (a video shorter than a clip, which then starts at frame
            0, as torchcodec's default range makes it): ``"repeat_last"`` (torchcodec's default) repeats its last
            frame, ``"wrap"`` its frames from the clip's start, ``"error"`` raises naming the file.
        output_format (str): ``"TCHW"``: batches ``[B, T, C, H, W]``; ``"CTHW"``: ``[B, C, T, H, W]``, what
            torchvision's video models (``r3d_18``, ``mc3_18``, ``r2plus1d_18``) take.

    With ``"regular_timestamps"`` a video that cannot be indexed, or whose sampling range holds no clip, keeps one
    sample: reading it raises naming the file, and a Loader with ``bad_image_policy="skip"`` counts it as skipped
    and puts the next video's first clip in its place (so the epoch has the same length for any number of workers).

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
                 sampling_range_start: Optional[float] = None, sampling_range_end: Optional[float] = None,
                 ranges: Optional[Sequence[Tuple[Optional[float], Optional[float]]]] = None,
                 _origins: Optional[Sequence[str]] = None) -> None:
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
        if seconds_between_frames is not None and sampler not in _TIME_SAMPLERS:
            raise ValueError("seconds_between_frames is for the time samplers ('random_timestamps', "
                             "'regular_timestamps'); the index samplers take num_indices_between_frames")
        for name, value in (("sampling_range_start", sampling_range_start), ("sampling_range_end", sampling_range_end)):
            if value is not None and sampler not in _TIME_SAMPLERS and (isinstance(value, bool)
                                                                        or not isinstance(value, numbers.Integral)):
                raise ValueError(f"{name} ({value!r}): the index samplers take a frame index (int); seconds are for "
                                 "the time samplers ('random_timestamps', 'regular_timestamps')")
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
        #: Per video the name of its range in messages ("list.csv, row 3"), and its range (NaN: begin / end).
        self._origins: List[str] = list(_origins) if _origins is not None else [f"ranges[{i}]" for i in
                                                                                range(len(self.paths))]
        self.ranges: Optional[List[Tuple[float, float]]] = None
        if ranges is not None:
            self.ranges = _ranges_checked(ranges, len(self.paths), self._origins)
            if any(not (math.isnan(a) and math.isnan(b)) for a, b in self.ranges) and (
                    sampling_range_start is not None or sampling_range_end is not None):
                raise ValueError("sampling_range_start/_end apply to every video, ranges (a CSV list's start and end) "
                                 "to each: give one or the other")
        #: UniformTemporalSubsample's num_samples taken from the Loader's transform (0: none).
        self.temporal_subsample = 0
        #: Per video its first sample, then the number of samples (each video's clips follow each other).
        self.clip_offsets: List[int] = [0]
        for video in range(len(self.paths)):
            count = self.num_clips
            if sampler == "regular_timestamps":
                try:
                    count = len(self._clips_of(video, 0, 0))
                except ValueError:  # unreadable, or no clip in its range: one sample, which says so when read
                    count = 1
            self.clip_offsets.append(self.clip_offsets[-1] + count)

    def __len__(self) -> int:
        return self.clip_offsets[-1]

    def _seconds(self) -> List[float]:
        """The time samplers' seconds as fastloop's C++ side takes them (0 / NaN where not given)."""
        unset = math.nan
        return [float(self.seconds_between_frames or 0.0), float(self.seconds_between_clip_starts or 0.0),
                unset if self.sampling_range_start is None else float(self.sampling_range_start),
                unset if self.sampling_range_end is None else float(self.sampling_range_end)]

    def _range(self, video: int) -> List[float]:
        return list(self.ranges[video]) if self.ranges is not None else [math.nan, math.nan]

    def _clips_of(self, video: int, seed: int, epoch: int) -> List[List[int]]:
        return _C._video_clip_frames(self.paths[video], self.num_frames_per_clip, self.num_indices_between_frames,
                                     self.num_clips, self.sampler, self.policy, self.temporal_subsample,
                                     self._seconds(), seed, epoch, video, self._range(video),
                                     self._origins[video] if self.ranges is not None else "")

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
                "video_ranges": [t for v in range(len(self.paths)) for t in self._range(v)] if self.ranges else [],
                "video_origins": self._origins if self.ranges else [],
                **({"video_shards": self.remote_shards} if getattr(self, "remote_shards", None) else {})}

    def _fastloop_video_transform(self, transform: Any, views: Optional[int]) -> Tuple["VideoFiles", Any]:
        """(this data set with the pipeline's top-level UniformTemporalSubsample taken as its frame choice, the rest
        of the pipeline); TypeError for what fastloop does not run on clips."""
        if views is not None or (isinstance(transform, (list, tuple)) and transform
                                 and all(isinstance(t, str) or type(t).__name__ == "Compose" for t in transform)):
            raise TypeError("fastloop.Loader: several views of video clips are not supported; give one transform")
        if isinstance(transform, str):  # fastloop's C++ side takes its UniformTemporalSubsample out: so do the clips
            subsample = _C._transform_temporal_subsample(transform)
            if not subsample:
                return self, transform
            source = copy.copy(self)
            source.temporal_subsample = subsample
            return source, transform
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
