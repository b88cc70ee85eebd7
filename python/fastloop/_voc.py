"""``fastloop.VOCSegmentation`` and ``fastloop.SegmentationFiles``: image files paired with class-map files
(palette or greyscale PNGs), as ``torchvision.datasets.wrap_dataset_for_transforms_v2(VOCSegmentation(...))``
gives them, decoded by fastloop's C++ decoders here and by its loader's workers in ``fastloop.Loader``."""

from __future__ import annotations

import os
from typing import Any, List, Optional, Sequence, Tuple, Union

import torch

from . import _C

__all__ = ["SegmentationFiles", "VOCSegmentation"]

PathLike = Union[str, os.PathLike]

#: torchvision's VOC years (datasets/voc.py DATASET_YEAR_DICT): where each one's tree is under ``root``.
_VOC_BASE_DIRS = {
    "2012": os.path.join("VOCdevkit", "VOC2012"),
    "2011": os.path.join("TrainVal", "VOCdevkit", "VOC2011"),
    "2010": os.path.join("VOCdevkit", "VOC2010"),
    "2009": os.path.join("VOCdevkit", "VOC2009"),
    "2008": os.path.join("VOCdevkit", "VOC2008"),
    "2007": os.path.join("VOCdevkit", "VOC2007"),
}


def _verify_str_arg(value: Any, arg: str, valid_values: Sequence[str]) -> str:
    """torchvision.datasets.utils.verify_str_arg: its checks and messages."""
    if not isinstance(value, str):
        raise ValueError(f"Expected type str for argument {arg}, but got type {type(value)}.")
    if value not in valid_values:
        valid = ", ".join(f"'{v}'" for v in valid_values)
        raise ValueError(f"Unknown value '{value}' for argument {arg}. Valid values are {{{valid}}}.")
    return value


class _ClassMaps:
    """What both data sets share: ``images[i]`` and its class map ``masks[i]``, a sample of each, and the
    protocol ``fastloop.Loader`` reads them through (``_fastloop_loader_args``, ``_fastloop_target``)."""

    images: List[str]
    masks: List[str]

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        from torchvision import tv_tensors

        image = _C._image_decode(self.images[index])
        mask = _C._class_map_decode(self.masks[index])
        if image.shape[-2:] != mask.shape[-2:]:
            (h, w), (mh, mw) = image.shape[-2:], mask.shape[-2:]
            raise ValueError(f"mask {self.masks[index]} is {mw}x{mh} pixels but its image {self.images[index]} is "
                             f"{w}x{h}; a class map must have its image's size")
        return tv_tensors.Image(image), tv_tensors.Mask(mask)

    def _fastloop_loader_args(self) -> dict:
        """What ``fastloop.Loader(dataset)`` hands its C++ side: the image and mask paths (absolute, so a
        spawn-started process reads the same files); the C++ side checks that each exists."""
        return {"data.source": "segmentation", "files": [os.path.abspath(p) for p in self.images],
                "mask_files": [os.path.abspath(p) for p in self.masks]}

    def _fastloop_target(self, index: int, canvas_size: Tuple[int, int], boxes: Optional[torch.Tensor], fmt: str,
                         labels: Optional[torch.Tensor], kept: Optional[torch.Tensor],
                         masks: Optional[torch.Tensor], keypoints: Optional[torch.Tensor] = None) -> torch.Tensor:
        """A Loader sample's class map (uint8 ``[H, W]``, moved with the pixels); the Loader stacks them."""
        return masks


class SegmentationFiles(_ClassMaps):
    r"""Image files paired with class-map files, for semantic segmentation data that is not laid out as VOC.

    A sample is what ``torchvision.datasets.wrap_dataset_for_transforms_v2`` gives for ``VOCSegmentation``:
    ``(image, mask)``, ``image`` a ``tv_tensors.Image`` uint8 ``[3, H, W]`` (RGB), ``mask`` a ``tv_tensors.Mask``
    uint8 ``[1, H, W]`` holding the class map's pixels as PIL reads them: a palette PNG's indices (mode ``"P"``,
    not its colours), a greyscale PNG's values (mode ``"L"``). ``fastloop.Loader(dataset, transform=...)`` moves
    each mask with its image through the transform (nearest) and yields ``(images [B, 3, H, W], masks [B, H, W])``.

    Args:
        images (sequence of str or ``pathlib.Path``): the image files (JPEG, PNG, WebP, BMP, PPM/PGM, TIFF).
        masks (sequence of str or ``pathlib.Path``): ``masks[i]`` is the class map of ``images[i]``, of its size: a
            palette or greyscale PNG of 8 bits or fewer.

    Raises:
        ValueError: ``images`` and ``masks`` differ in length or are empty. A missing file, a mask that is not
            such a PNG, or one of another size than its image, is a ``ValueError`` naming the file when the sample
            is read (and when a Loader is made, for a missing file).

    Example::

        >>> dataset = fastloop.SegmentationFiles(sorted(glob("img/*.jpg")), sorted(glob("ann/*.png")))
        >>> image, mask = dataset[0]
    """

    def __init__(self, images: Sequence[PathLike], masks: Sequence[PathLike]) -> None:
        if isinstance(images, (str, bytes, os.PathLike)) or isinstance(masks, (str, bytes, os.PathLike)):
            raise TypeError("fastloop.SegmentationFiles: images and masks must be sequences of paths (one mask per "
                            "image), not one path")
        self.images: List[str] = [os.path.abspath(os.fspath(p)) for p in images]
        self.masks: List[str] = [os.path.abspath(os.fspath(p)) for p in masks]
        if len(self.images) != len(self.masks):
            raise ValueError(f"fastloop.SegmentationFiles: {len(self.images)} images but {len(self.masks)} masks; "
                             "give one mask file per image, in the same order")
        if not self.images:
            raise ValueError("fastloop.SegmentationFiles: no files; give at least one image and its mask")

    def __repr__(self) -> str:
        return f"fastloop.SegmentationFiles({len(self)} images)"


class VOCSegmentation(_ClassMaps):
    r"""`Pascal VOC <https://www.robots.ox.ac.uk/~vgg/projects/pascal/VOC/>`_ Segmentation Dataset, as
    ``torchvision.datasets.wrap_dataset_for_transforms_v2(torchvision.datasets.VOCSegmentation(root, year,
    image_set))`` gives it, with images and masks decoded by fastloop (no download).

    Args:
        root (str or ``pathlib.Path``): Root directory of the VOC Dataset (holding ``VOCdevkit/``).
        year (string, optional): The dataset year, supports years ``"2007"`` to ``"2012"``.
        image_set (string, optional): Select the image_set to use, ``"train"``, ``"trainval"`` or ``"val"``. If
            ``year=="2007"``, can also be ``"test"``.

    The files are torchvision's: ``VOC{year}/ImageSets/Segmentation/{image_set}.txt`` names the samples,
    ``JPEGImages/{name}.jpg`` their images (:attr:`images`) and ``SegmentationClass/{name}.png`` their class
    maps (:attr:`masks`). A sample is ``(image, mask)``: ``image`` a ``tv_tensors.Image`` uint8 ``[3, H, W]``,
    ``mask`` a ``tv_tensors.Mask`` uint8 ``[1, H, W]`` of the palette PNG's class indices, 255 on object
    borders, kept as VOC stores it (torchvision's segmentation references ignore it in the loss). Two
    differences from torchvision's wrapper: the image is a ``tv_tensors.Image`` tensor, not a PIL image, and a
    mask of another size than its image is a ``ValueError`` naming both files.

    Raises:
        ValueError: ``year`` or ``image_set`` is not one of the values above (torchvision's message).
        RuntimeError: ``root`` holds no ``VOCdevkit/VOC{year}`` folder (torchvision's message).
        FileNotFoundError: the image set's list is missing.

    Example::

        >>> dataset = fastloop.VOCSegmentation("data/voc", year="2012", image_set="train")
        >>> loader = fastloop.Loader(dataset, transform=v2.Compose([...]), batch_size=16)
        >>> for images, masks in loader:  # [16, 3, H, W] float, [16, H, W] uint8
        ...     ...
    """

    def __init__(self, root: PathLike, year: str = "2012", image_set: str = "train") -> None:
        self.root: str = os.fspath(root)
        self.year: str = _verify_str_arg(year, "year", [str(yr) for yr in range(2007, 2013)])
        valid_image_sets = ["train", "trainval", "val"] + (["test"] if year == "2007" else [])
        self.image_set: str = _verify_str_arg(image_set, "image_set", valid_image_sets)
        voc_root = os.path.join(self.root, _VOC_BASE_DIRS[year])
        if not os.path.isdir(voc_root):
            raise RuntimeError(f"Dataset not found or corrupted: {voc_root} is not a folder (fastloop does not "
                               "download VOC; torchvision.datasets.VOCSegmentation(root, download=True) does)")
        split_f = os.path.join(voc_root, "ImageSets", "Segmentation", image_set.rstrip("\n") + ".txt")
        with open(split_f) as f:
            file_names = [x.strip() for x in f.readlines()]
        image_dir = os.path.join(voc_root, "JPEGImages")
        self.images: List[str] = [os.path.join(image_dir, x + ".jpg") for x in file_names]
        target_dir = os.path.join(voc_root, "SegmentationClass")
        self.targets: List[str] = [os.path.join(target_dir, x + ".png") for x in file_names]

    @property
    def masks(self) -> List[str]:  # type: ignore[override]
        """The class-map files, ``SegmentationClass/{name}.png`` (torchvision's ``masks``: the list ``targets``)."""
        return self.targets

    def __repr__(self) -> str:
        return (f"fastloop.VOCSegmentation(root={self.root!r}, year={self.year!r}, image_set={self.image_set!r}): "
                f"{len(self)} images")
