"""``fastloop.CocoDetection``: a COCO instances dataset as torchvision's
``wrap_dataset_for_transforms_v2(torchvision.datasets.CocoDetection(root, annFile), target_keys)`` gives it, with
the annotation file read once by fastloop's C++ reader (simdjson) instead of pycocotools, masks rasterized as
pycocotools does, and images decoded by fastloop's decoder."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

import torch

from . import _C

#: torchvision's keys for COCO (tv_tensors/_dataset_wrapper.py): the file's own and the wrapper's.
AVAILABLE_TARGET_KEYS = frozenset({"segmentation", "area", "iscrowd", "image_id", "bbox", "category_id", "boxes",
                                   "masks", "labels"})
DEFAULT_TARGET_KEYS = frozenset({"image_id", "boxes", "labels"})
#: fastloop's keys for COCO person keypoints, asked for by name ("all" is torchvision's set): torchvision 0.29's
#: wrapper has no keypoints (``ValueError: Target keys ['keypoints'] are not available``).
KEYPOINT_TARGET_KEYS = frozenset({"keypoints", "keypoints_visibility"})


def _target_keys(target_keys: Union[None, str, Sequence[str]]) -> Set[str]:
    if target_keys is None:
        return set(DEFAULT_TARGET_KEYS)
    if target_keys == "all":
        return set(AVAILABLE_TARGET_KEYS)
    keys = set(target_keys)
    extra = keys - AVAILABLE_TARGET_KEYS - KEYPOINT_TARGET_KEYS
    if extra:
        raise ValueError(f"Target keys {sorted(extra)} are not available")
    return keys


class CocoDetection:
    """`MS COCO Detection <https://cocodataset.org/#detection-2016>`_ dataset, as
    ``torchvision.datasets.wrap_dataset_for_transforms_v2(torchvision.datasets.CocoDetection(root, annFile),
    target_keys=target_keys)``.

    The annotation file is read once, when constructed, by fastloop's C++ reader: in about a tenth of
    pycocotools' time and a fraction of its memory (bench/coco_annotations.py); images are read when indexed.

    Args:
        root (str or ``pathlib.Path``): Root directory the images' ``file_name`` are relative to.
        annFile (str or ``pathlib.Path``): Path to the COCO instances JSON annotation file.
        target_keys (sequence of str or "all", optional): Keys of the target dictionaries, among
            ``"boxes"``, ``"labels"``, ``"masks"``, ``"image_id"`` and the file's own ``"segmentation"``,
            ``"area"``, ``"iscrowd"``, ``"bbox"``, ``"category_id"``, and fastloop's ``"keypoints"`` and
            ``"keypoints_visibility"`` (below). Default: ``{"image_id", "boxes", "labels"}``; ``"all"`` is
            torchvision's set, without the keypoint keys.

    A sample is ``(image, target)``: ``image`` a ``tv_tensors.Image`` uint8 ``[3, H, W]`` (RGB), ``target`` a dict
    with ``boxes`` a ``tv_tensors.BoundingBoxes`` (XYXY, float32, ``canvas_size=(H, W)``), ``labels`` an int64
    tensor of the category ids, ``masks`` a ``tv_tensors.Mask`` uint8 ``[N, H, W]``; an image without annotations
    gives ``{"image_id": id}`` alone, as torchvision. Two differences, both where torchvision has no useful answer:
    boxes are float32 even when all of an image's numbers are integers in the file (torchvision then makes int64
    boxes), and an annotation whose ``image_id`` or ``category_id`` names nothing in the file is a ``ValueError``
    when constructed (pycocotools keeps it; torchvision never reads it).

    Keypoints (COCO person keypoints files, ``person_keypoints_*.json``): torchvision 0.29's wrapper refuses
    ``target_keys=[..., "keypoints"]`` (``ValueError: Target keys ['keypoints'] are not available``), so fastloop
    gives them its own way: ``keypoints`` a ``tv_tensors.KeyPoints`` float32 ``[N, K, 2]`` (``canvas_size=(H, W)``)
    of each annotation's ``keypoints`` triplets' x, y (K = 17 for COCO persons; ``[N, 0, 2]`` for annotations
    without keypoints), and ``keypoints_visibility`` an int64 ``[N, K]`` tensor of their v flags (0 not labelled,
    1 labelled but not visible, 2 visible). Points with v = 0 are (0, 0) in the file and are kept as such. Through
    ``fastloop.Loader(..., transform=...)`` the keypoints move with every geometric transform as torchvision's
    ``*_keypoints`` kernels move them (never clamped but by ``ClampKeyPoints``); ``keypoints_visibility`` is the
    file's, untouched by the transform, as a plain tensor in a torchvision target is (``SanitizeKeyPoints`` drops
    keypoints, and labels with ``labels_getter="default"``, not the visibility). Annotations of one image with
    different numbers of keypoints raise ``ValueError`` when their keypoints are asked for.

    Raises:
        ValueError: the annotation file is malformed (the message names the file and the element), or a target
            key is unknown.

    Example::

        >>> dataset = fastloop.CocoDetection("coco/train2017", "coco/annotations/instances_train2017.json",
        ...                                  target_keys=["boxes", "labels", "masks"])
        >>> image, target = dataset[0]
    """

    def __init__(self, root: Union[str, os.PathLike], annFile: Union[str, os.PathLike],
                 target_keys: Union[None, str, Sequence[str]] = None) -> None:
        self.root: str = os.fspath(root)
        self.annFile: str = os.fspath(annFile)
        self.target_keys: Set[str] = _target_keys(target_keys)
        #: The C++ annotations (``_C.CocoAnnotations``), shared with a Loader over this dataset.
        self._C = _C.CocoAnnotations(self.annFile)
        #: Image ids in sample order (sorted), as torchvision's ``dataset.ids``.
        self.ids: List[int] = self._C.ids

    def __len__(self) -> int:
        return len(self.ids)

    def image_path(self, index: int) -> str:
        """The image file of sample ``index``: ``os.path.join(root, file_name)``."""
        return os.path.join(self.root, self._C.image(self._index(index))[1])

    def _index(self, index: int) -> int:
        if not isinstance(index, int):
            raise ValueError(f"Index must be of type integer, got {type(index)} instead.")
        n = len(self.ids)
        if not -n <= index < n:
            raise IndexError(f"list index out of range: {index} for {n} images")
        return index + n if index < 0 else index

    def __getitem__(self, index: int) -> Tuple[Any, Dict[str, Any]]:
        from torchvision import tv_tensors

        index = self._index(index)
        image = tv_tensors.Image(_C._image_decode(self.image_path(index)))
        return image, self.target(index, canvas_size=(image.shape[-2], image.shape[-1]))

    def target(self, index: int, canvas_size: Tuple[int, int]) -> Dict[str, Any]:
        """The target of sample ``index`` for an image of ``canvas_size`` (H, W) pixels, without decoding it."""
        index = self._index(index)
        if self._C.annotation_count(index) == 0:
            return {"image_id": self.ids[index]}
        return self._target_dict(index, canvas_size, lambda: self._C.boxes_xyxy(index), "XYXY",
                                 lambda: self._C.labels(index),
                                 lambda: self._C.masks(index, canvas_size[0], canvas_size[1]),
                                 lambda: self._C.keypoints(index)[0])

    def __reduce__(self) -> Tuple[Any, ...]:
        """Pickles as its arguments: a copy in another process reads the annotation file again."""
        return (type(self), (self.root, self.annFile, sorted(self.target_keys)))

    def _fastloop_loader_args(self) -> Dict[str, Any]:
        """What ``fastloop.Loader(dataset)`` hands its C++ side: the annotations read once (shared, not read
        again), the image root, and whether the workers make masks."""
        return {"data.source": "coco", "coco": self._C, "coco_root": self.root,
                "coco_masks": "masks" in self.target_keys, "coco_keypoints": "keypoints" in self.target_keys}

    def _fastloop_target(self, index: int, canvas_size: Tuple[int, int], boxes: Optional[torch.Tensor], fmt: str,
                         labels: Optional[torch.Tensor], kept: Optional[torch.Tensor],
                         masks: Optional[torch.Tensor], keypoints: Optional[torch.Tensor] = None) -> Dict[str, Any]:
        """The target dict of a Loader's sample: what ``target()`` gives, with the boxes, labels, masks and
        keypoints the transform made (``kept``: the boxes left by SanitizeBoundingBoxes, by their index in the
        file's order; the file's own keys and keypoints_visibility are given whole, as torchvision's
        SanitizeBoundingBoxes leaves them)."""
        if boxes is None:
            return {"image_id": self.ids[index]}
        return self._target_dict(index, canvas_size, lambda: boxes, fmt, lambda: labels, lambda: masks,
                                 lambda: keypoints)

    def _target_dict(self, index: int, canvas_size: Tuple[int, int], boxes: Callable[[], torch.Tensor], fmt: str,
                     labels: Callable[[], torch.Tensor], masks: Callable[[], torch.Tensor],
                     keypoints: Callable[[], torch.Tensor]) -> Dict[str, Any]:
        """The target_keys of sample ``index`` in torchvision's order; boxes, labels and masks made only when
        asked for (masks cost a rasterization)."""
        from torchvision import tv_tensors

        keys = self.target_keys
        target: Dict[str, Any] = {}
        if "image_id" in keys:
            target["image_id"] = self.ids[index]
        if "boxes" in keys:
            target["boxes"] = tv_tensors.BoundingBoxes(boxes(), format=fmt, canvas_size=tuple(canvas_size))
        if "masks" in keys:
            target["masks"] = tv_tensors.Mask(masks())
        if "labels" in keys:
            target["labels"] = labels()
        if "keypoints" in keys:
            target["keypoints"] = tv_tensors.KeyPoints(keypoints(), canvas_size=tuple(canvas_size))
        if "keypoints_visibility" in keys:
            target["keypoints_visibility"] = self._C.keypoints(index)[1]
        for key in keys - {"image_id", "boxes", "masks", "labels"} - KEYPOINT_TARGET_KEYS:
            target[key] = self._C.native(index, key)
        return target

    def __repr__(self) -> str:
        return (f"fastloop.CocoDetection(root={self.root!r}, annFile={self.annFile!r}, "
                f"target_keys={sorted(self.target_keys)!r}): {len(self)} images")
