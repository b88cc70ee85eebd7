"""The presets of torchvision's references (references/{classification,detection,segmentation}/presets.py, their
``use_v2=True`` code, the default ``backend="pil"``), written here as those files compose them: the same
transforms, order and parameters, sizes made small for small test images where a parameter is a size.

Two classes the references define themselves, fastloop does not compile (it compiles torchvision's own classes,
never a user's): segmentation's ``PadIfSmaller`` (a pad to at least the crop size on the right and bottom;
refused with a TypeError naming it — the tests give images that RandomResize never makes smaller than the
crop, where it pads nothing, and run the preset without it) and the lsj preset's ``FixedSizeCrop`` (a copy of
``torchvision.prototype.transforms.FixedSizeCrop`` but for masks, which it pads with 0: fastloop compiles the
prototype's class or its spec, and the lsj preset is given with ``FixedSizeCrop(size=..., fill=(('Mask', 0),
('others', mean)))`` in its place, which pads as the references' class does).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, List, Tuple

import torch
import torchvision.transforms.v2 as T
from torchvision import tv_tensors

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
DETECTION_MEAN = (123.0, 117.0, 104.0)
BILINEAR = T.InterpolationMode.BILINEAR


def classification_train(crop_size: int, auto_augment_policy: str = None, random_erase_prob: float = 0.0,
                         hflip_prob: float = 0.5, ra_magnitude: int = 9, augmix_severity: int = 3) -> T.Compose:
    """ClassificationPresetTrain(use_v2=True): RandomResizedCrop, flip, the policy, to float, Normalize, erasing."""
    transforms: List[Any] = [T.RandomResizedCrop(crop_size, interpolation=BILINEAR, antialias=True)]
    if hflip_prob > 0:
        transforms.append(T.RandomHorizontalFlip(hflip_prob))
    if auto_augment_policy is not None:
        if auto_augment_policy == "ra":
            transforms.append(T.RandAugment(interpolation=BILINEAR, magnitude=ra_magnitude))
        elif auto_augment_policy == "ta_wide":
            transforms.append(T.TrivialAugmentWide(interpolation=BILINEAR))
        elif auto_augment_policy == "augmix":
            transforms.append(T.AugMix(interpolation=BILINEAR, severity=augmix_severity))
        else:
            transforms.append(T.AutoAugment(policy=T.AutoAugmentPolicy(auto_augment_policy), interpolation=BILINEAR))
    transforms.append(T.PILToTensor())
    transforms.extend([T.ToDtype(torch.float, scale=True), T.Normalize(mean=MEAN, std=STD)])
    if random_erase_prob > 0:
        transforms.append(T.RandomErasing(p=random_erase_prob))
    transforms.append(T.ToPureTensor())
    return T.Compose(transforms)


def classification_eval(crop_size: int, resize_size: int) -> T.Compose:
    """ClassificationPresetEval(use_v2=True): Resize, CenterCrop, to float, Normalize."""
    return T.Compose([T.Resize(resize_size, interpolation=BILINEAR, antialias=True), T.CenterCrop(crop_size),
                      T.PILToTensor(), T.ToDtype(torch.float, scale=True), T.Normalize(mean=MEAN, std=STD),
                      T.ToPureTensor()])


def detection_train(data_augmentation: str, hflip_prob: float = 0.5, size: int = 64) -> List[Any]:
    """DetectionPresetTrain(use_v2=True): the policy's transforms, ToImage, to float, boxes as XYXY, sanitized,
    plain tensors. A list (lsj holds FixedSizeCrop's spec): compile it with fastloop.transforms.compile_transform."""
    mean = DETECTION_MEAN
    if data_augmentation == "hflip":
        transforms: List[Any] = [T.RandomHorizontalFlip(p=hflip_prob)]
    elif data_augmentation == "lsj":
        transforms = [T.ScaleJitter(target_size=(size, size), antialias=True),
                      # the references' own class: it pads the image with `mean`, masks with 0
                      f"FixedSizeCrop(size=({size}, {size}), fill=(('Mask', 0), ('others', {mean})))",
                      T.RandomHorizontalFlip(p=hflip_prob)]
    elif data_augmentation == "multiscale":  # the references' (480, ..., 800) and 1333, scaled to the size
        transforms = [T.RandomShortestSize(min_size=tuple(size * s // 800 for s in range(480, 801, 32)),
                                           max_size=size * 1333 // 800),
                      T.RandomHorizontalFlip(p=hflip_prob)]
    elif data_augmentation == "ssd":
        fill = defaultdict(lambda: mean, {tv_tensors.Mask: 0})
        transforms = [T.RandomPhotometricDistort(), T.RandomZoomOut(fill=fill), T.RandomIoUCrop(),
                      T.RandomHorizontalFlip(p=hflip_prob)]
    elif data_augmentation == "ssdlite":
        transforms = [T.RandomIoUCrop(), T.RandomHorizontalFlip(p=hflip_prob)]
    else:
        raise ValueError(f'Unknown data augmentation policy "{data_augmentation}"')
    transforms += [T.ToImage(), T.ToDtype(torch.float, scale=True),
                   T.ConvertBoundingBoxFormat(tv_tensors.BoundingBoxFormat.XYXY), T.SanitizeBoundingBoxes(),
                   T.ToPureTensor()]
    return transforms


def detection_eval() -> T.Compose:
    """DetectionPresetEval(use_v2=True)."""
    return T.Compose([T.ToImage(), T.ToDtype(torch.float, scale=True), T.ToPureTensor()])


class PadIfSmaller(T.Transform):
    """references/segmentation/v2_extras.py's: pads the right and bottom to at least `size`."""

    def __init__(self, size: int, fill: Any = 0) -> None:
        super().__init__()
        self.size = size
        self.fill = fill

    def make_params(self, flat_inputs: List[Any]) -> dict:
        height, width = T.query_size(flat_inputs)
        padding = [0, 0, max(self.size - width, 0), max(self.size - height, 0)]
        return dict(padding=padding, needs_padding=any(padding))

    def transform(self, inpt: Any, params: dict) -> Any:
        if not params["needs_padding"]:
            return inpt
        fill = self.fill[type(inpt)] if type(inpt) in self.fill else self.fill["others"]
        return T.functional.pad(inpt, padding=params["padding"], fill=fill)


def segmentation_train(base_size: int, crop_size: int, hflip_prob: float = 0.5,
                       pad_if_smaller: bool = True) -> T.Compose:
    """SegmentationPresetTrain(use_v2=True); `pad_if_smaller=False` leaves out the references' PadIfSmaller."""
    transforms: List[Any] = [T.RandomResize(min_size=int(0.5 * base_size), max_size=int(2.0 * base_size))]
    if hflip_prob > 0:
        transforms.append(T.RandomHorizontalFlip(hflip_prob))
    if pad_if_smaller:
        transforms.append(PadIfSmaller(crop_size, fill={tv_tensors.Mask: 255, "others": 0}))
    transforms.append(T.RandomCrop(crop_size))
    transforms.append(T.PILToTensor())
    transforms += [T.ToDtype(dtype={torch.Tensor: torch.float32, tv_tensors.Mask: torch.int64, "others": None},
                             scale=True),
                   T.Normalize(mean=MEAN, std=STD), T.ToPureTensor()]
    return T.Compose(transforms)


def segmentation_eval(base_size: int) -> T.Compose:
    """SegmentationPresetEval(use_v2=True)."""
    return T.Compose([T.Resize(size=(base_size, base_size)), T.ToImage(), T.ToDtype(torch.float, scale=True),
                      T.Normalize(mean=MEAN, std=STD), T.ToPureTensor()])


def flattened(preset: Any) -> Tuple[Any, ...]:
    """The top-level transforms of a preset, in the order fastloop numbers their draw streams."""
    return tuple(preset.transforms) if isinstance(preset, T.Compose) else tuple(preset)
