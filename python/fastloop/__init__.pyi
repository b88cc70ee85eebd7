# PEP 484 type hints (.pyi) of the public names of `import fastloop`; their docstrings are in _loader.py,
# _run.py, _coco.py and _voc.py.
import os
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

import torch

__version__: str
__all__: List[str]

class Files:
    paths: List[str]
    labels: List[int]
    classes: Optional[List[str]]
    def __init__(
        self,
        paths: Sequence[Union[str, "os.PathLike[str]"]],
        labels: Sequence[Union[int, str]],
        classes: Optional[Sequence[str]] = None,
    ) -> None: ...
    def __len__(self) -> int: ...

class CocoDetection:
    root: str
    annFile: str
    target_keys: Set[str]
    ids: List[int]
    def __init__(
        self,
        root: Union[str, "os.PathLike[str]"],
        annFile: Union[str, "os.PathLike[str]"],
        target_keys: Union[None, str, Sequence[str]] = None,
    ) -> None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Tuple[Any, Dict[str, Any]]: ...
    def image_path(self, index: int) -> str: ...
    def target(self, index: int, canvas_size: Tuple[int, int]) -> Dict[str, Any]: ...

class SegmentationFiles:
    images: List[str]
    masks: List[str]
    def __init__(
        self,
        images: Sequence[Union[str, "os.PathLike[str]"]],
        masks: Sequence[Union[str, "os.PathLike[str]"]],
    ) -> None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Tuple[Any, Any]: ...

class VOCSegmentation:
    root: str
    year: str
    image_set: str
    images: List[str]
    targets: List[str]
    def __init__(
        self,
        root: Union[str, "os.PathLike[str]"],
        year: str = "2012",
        image_set: str = "train",
    ) -> None: ...
    @property
    def masks(self) -> List[str]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Tuple[Any, Any]: ...

class VideoFiles:
    paths: List[str]
    labels: List[int]
    classes: Optional[List[str]]
    num_frames_per_clip: int
    num_indices_between_frames: int
    num_clips: int
    sampler: str
    policy: str
    output_format: str
    seconds_between_frames: Optional[float]
    seconds_between_clip_starts: Optional[float]
    sampling_range_start: Optional[float]
    sampling_range_end: Optional[float]
    ranges: Optional[List[Tuple[float, float]]]
    clip_offsets: List[int]
    def __init__(
        self,
        paths: Sequence[Union[str, "os.PathLike[str]"]],
        labels: Sequence[int],
        classes: Optional[Sequence[str]] = None,
        *,
        num_frames_per_clip: int = 16,
        num_indices_between_frames: int = 1,
        num_clips: int = 1,
        sampler: str = "random",
        policy: str = "repeat_last",
        output_format: str = "TCHW",
        seconds_between_frames: Optional[float] = None,
        seconds_between_clip_starts: Optional[float] = None,
        sampling_range_start: Optional[float] = None,
        sampling_range_end: Optional[float] = None,
        ranges: Optional[Sequence[Tuple[Optional[float], Optional[float]]]] = None,
    ) -> None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Tuple[Any, int]: ...
    def clip_frames(self, index: int, seed: int = 0, epoch: int = 0) -> List[int]: ...

class VideoFolder(VideoFiles):
    root: str
    split: Optional[str]
    def __init__(
        self,
        root: Union[str, "os.PathLike[str]"],
        num_frames_per_clip: int = 16,
        num_indices_between_frames: int = 1,
        num_clips: int = 1,
        sampler: str = "random",
        *,
        split: Optional[str] = None,
        policy: str = "repeat_last",
        output_format: str = "TCHW",
        seconds_between_frames: Optional[float] = None,
        seconds_between_clip_starts: Optional[float] = None,
        sampling_range_start: Optional[float] = None,
        sampling_range_end: Optional[float] = None,
        extensions: Sequence[str] = ...,
    ) -> None: ...

def video_csv(path: Union[str, "os.PathLike[str]"], **kwargs: Any) -> VideoFiles: ...
def video_shards(
    shards: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]], **kwargs: Any
) -> VideoFiles: ...

def pad_targets(
    targets: Sequence[Dict[str, Any]], max_boxes: Optional[int] = None, keys: Sequence[str] = ("boxes", "labels")
) -> Dict[str, torch.Tensor]: ...

class Loader:
    source: Union[str, Files, Any]
    split: str
    batch_size: int
    rank: int
    world_size: int
    def __init__(
        self,
        source: Union[str, Files, Any],
        split: str = "train",
        batch_size: int = 128,
        workers: Optional[int] = None,
        prefetch: int = 4,
        augment: Optional[bool] = None,
        image_size: Optional[int] = None,
        mean: Optional[Sequence[float]] = None,
        std: Optional[Sequence[float]] = None,
        dtype: torch.dtype = torch.float32,
        channels_last: bool = False,
        device: Union[str, torch.device] = "cpu",
        seed: int = 0,
        shuffle: Optional[bool] = None,
        drop_last: Optional[bool] = None,
        rank: Optional[int] = None,
        world_size: Optional[int] = None,
        bad_image_policy: str = "stop",
        transform: Any = None,
        views: Optional[int] = None,
        batch_transform: Any = None,
        shuffle_buffer: int = 2048,
        image_column: str = "image",
        label_column: str = "label",
        cache_dir: Optional[str] = None,
        cache_size: int = 10737418240,
        timeout: float = 60.0,
        decode: str = "exact",
        fields: Optional[Sequence[str]] = None,
        weights: Optional[Sequence[float]] = None,
        resampled: bool = False,
        field_transforms: Optional[Dict[str, Callable[[Any], Any]]] = None,
    ) -> None: ...
    @property
    def transform(self) -> Union[None, str, List[str]]: ...
    @property
    def views(self) -> Optional[int]: ...
    @property
    def batch_transform(self) -> Optional[str]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Tuple[Union[torch.Tensor, List[torch.Tensor]], torch.Tensor]]: ...
    @property
    def classes(self) -> Optional[List[str]]: ...
    @property
    def num_classes(self) -> Optional[int]: ...
    @property
    def samples_skipped(self) -> int: ...
    @property
    def epoch(self) -> int: ...
    def set_epoch(self, epoch: int) -> None: ...
    def state_dict(self) -> Dict[str, Any]: ...
    def load_state_dict(self, state_dict: Dict[str, Any]) -> None: ...
    def close(self) -> None: ...

def train(
    recipe: Optional[str] = None,
    model: Optional[torch.jit.ScriptModule] = None,
    quiet: bool = False,
    time_budget: Optional[str] = None,
    **fields: Any,
) -> Dict[str, Any]: ...

def evaluate(
    checkpoint: str,
    data: Optional[str] = None,
    batch_size: Optional[int] = None,
    workers: int = 1,
    fold_bn: bool = False,
    tta: Optional[str] = None,
) -> Dict[str, Any]: ...

def model_info(checkpoint: str) -> Dict[str, Any]: ...
def loader_state(checkpoint: str) -> Optional[Dict[str, Any]]: ...
