"""Boxes and masks through fastloop's compiled pipeline against the venv's torchvision.transforms.v2.

Each transform runs on an image with its targets (``_C._transform_apply_targets``: what a detection loader's
worker runs) and the result is compared with torchvision on ``(tv_tensors.Image, {"boxes": BoundingBoxes,
"masks": Mask, "labels": ...})``: deterministic specs through the torchvision transform itself, random ones
with the parameters fastloop drew (``_transform_draws``) replayed through ``transforms.v2.functional``, which
dispatches on the tv_tensor type (boxes by their kernel, masks with nearest). Asserted: boxes within 1e-3 px
(fastloop computes in double, torchvision in float32), labels and kept indices equal, masks equal (a warped
mask: kernel_parity's rule for one nearest warp), images by the rules of test_transforms_geometry.py.
"""

from __future__ import annotations

from typing import Tuple

import pytest
import torch
import torchvision.transforms.v2 as T
import torchvision.transforms.v2.functional as F
from torchvision import tv_tensors
from torchvision.transforms import InterpolationMode
from conftest import assert_boxes_close

from kernel_parity import assert_warp_matches, assert_within_one_level, torch_resize_is_fastloops

fastloop = pytest.importorskip("fastloop")
from fastloop.transforms import compile_transform  # noqa: E402
_C = fastloop._C

SEED = 20261206
HEIGHT, WIDTH = 53, 67


def _sample(seed: int, count: int = 6) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """An image, `count` XYXY boxes (some reaching past the canvas, one degenerate), one filled-rectangle mask
    per box (its box's pixels, clipped) and labels."""
    g = torch.Generator().manual_seed(seed)
    image = torch.randint(0, 256, (3, HEIGHT, WIDTH), generator=g, dtype=torch.uint8)
    x1 = torch.rand(count, generator=g) * (WIDTH + 10) - 8
    y1 = torch.rand(count, generator=g) * (HEIGHT + 10) - 8
    w = torch.rand(count, generator=g) * 30 + 1
    h = torch.rand(count, generator=g) * 30 + 1
    boxes = torch.stack([x1, y1, x1 + w, y1 + h], 1)
    boxes[0] = torch.tensor([10.25, 12.5, 10.25, 30.0])  # zero width: SanitizeBoundingBoxes drops it
    masks = torch.zeros(count, HEIGHT, WIDTH, dtype=torch.uint8)
    for i, (a, b, c, d) in enumerate(boxes.tolist()):
        masks[i, max(int(b), 0):max(int(d), 0), max(int(a), 0):max(int(c), 0)] = 1
    labels = torch.randint(1, 91, (count,), generator=g)
    return image, boxes, masks, labels


def _fastloop(spec: str, image, boxes, masks, labels, index: int = 0):
    return _C._transform_apply_targets(spec, image, boxes.double(), masks, True, labels, SEED, index)


def _torchvision_inputs(image, boxes, masks, labels):
    return (tv_tensors.Image(image),
            {"boxes": tv_tensors.BoundingBoxes(boxes, format="XYXY", canvas_size=(HEIGHT, WIDTH)),
             "masks": tv_tensors.Mask(masks), "labels": labels})


DETERMINISTIC = [
    T.RandomHorizontalFlip(p=1),
    T.RandomVerticalFlip(p=1),
    T.Resize((37, 50), interpolation=InterpolationMode.NEAREST),
    T.Resize(40),
    T.Resize((80, 71)),
    T.CenterCrop(30),
    T.CenterCrop((71, 90)),  # larger than the image, by odd and even amounts
    T.Pad((3, 5, 7, 2)),
    T.Pad(4, fill=7),
    T.RandomInvert(p=1),
    T.GaussianBlur(3, sigma=1.0),
    T.ClampBoundingBoxes(),
    T.ConvertBoundingBoxFormat("CXCYWH"),
    T.ConvertBoundingBoxFormat(tv_tensors.BoundingBoxFormat.XYWH),
    T.Compose([T.Pad(6), T.CenterCrop(40), T.RandomHorizontalFlip(1), T.SanitizeBoundingBoxes()]),
    T.Compose([T.ClampBoundingBoxes(), T.SanitizeBoundingBoxes(min_size=3, min_area=20)]),
    T.Compose([T.RandomVerticalFlip(1), T.SanitizeBoundingBoxes(labels_getter=None)]),
]


@pytest.mark.parametrize("transform", DETERMINISTIC, ids=lambda t: repr(t)[:60])
def test_deterministic_transform_moves_targets_as_torchvision(transform):
    spec = compile_transform(transform)
    for seed in range(3):
        image, boxes, masks, labels = _sample(seed)
        got_image, got_boxes, fmt, got_labels, kept, got_masks = _fastloop(spec, image, boxes, masks, labels)
        want_image, want = transform(*_torchvision_inputs(image, boxes, masks, labels))
        assert fmt == want["boxes"].format.name, (spec, fmt)
        assert_boxes_close(got_boxes, want["boxes"], spec)
        if isinstance(transform, T.Compose) and transform.transforms[-1].labels_getter is None:
            assert torch.equal(got_labels, labels)  # labels_getter=None: the labels are left as they were
        else:
            assert torch.equal(got_labels, want["labels"]), spec
        assert torch.equal(labels[kept], got_labels) or "labels_getter=None" in spec
        assert torch.equal(got_masks, want["masks"]), spec
        if isinstance(transform, T.GaussianBlur):
            assert_within_one_level(got_image, want_image, exact=False, what=spec)
        elif isinstance(transform, T.Resize) and transform.interpolation != InterpolationMode.NEAREST:
            assert_within_one_level(got_image, want_image, exact=torch_resize_is_fastloops(), what=spec)
        else:
            assert torch.equal(got_image, want_image), spec


def _replay(transform, d: dict, x, image_size: Tuple[int, int]):
    """`transform` on tv_tensor `x` with fastloop's draws `d`, through torchvision's functional (which picks each
    type's kernel: nearest for masks, the box kernels for boxes)."""
    h, w = image_size
    fill = getattr(transform, "fill", None)
    if isinstance(transform, T.RandomResizedCrop):
        return F.resized_crop(x, int(d["top"][0]), int(d["left"][0]), int(d["height"][0]), int(d["width"][0]),
                              list(transform.size), antialias=True)
    if isinstance(transform, T.RandomCrop):
        left, top, right, bottom = (int(v) for v in d["padding"])
        if left or top or right or bottom:
            x = F.pad(x, [left, top, right, bottom], fill=fill)  # a number: every type's fill, masks' too
        return F.crop(x, int(d["top"][0]), int(d["left"][0]), int(d["height"][0]), int(d["width"][0]))
    if isinstance(transform, T.RandomAffine):
        return F.affine(x, d["angle"][0], [int(v) for v in d["translate"]], d["scale"][0], d["shear"],
                        transform.interpolation, fill=fill, center=transform.center)
    if isinstance(transform, T.RandomRotation):
        return F.rotate(x, d["angle"][0], transform.interpolation, expand=transform.expand, center=transform.center,
                        fill=fill)
    if isinstance(transform, T.RandomPerspective):
        ends = [[int(d["endpoints"][2 * i]), int(d["endpoints"][2 * i + 1])] for i in range(4)]
        start = [[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]]
        return F.perspective(x, start, ends, transform.interpolation, fill=fill)
    raise AssertionError(transform)


RANDOM = [
    (T.RandomResizedCrop(32, scale=(0.2, 1.0)), False),
    (T.RandomCrop(40, padding=4, fill=3), False),
    (T.RandomCrop((70, 60), pad_if_needed=True, fill=3), False),
    (T.RandomAffine(degrees=25, translate=(0.1, 0.2), scale=(0.8, 1.2), shear=(5, 10)), True),
    (T.RandomAffine(degrees=10, scale=(0.9, 1.1), interpolation=InterpolationMode.BILINEAR, center=(20, 30)), True),
    (T.RandomRotation(30, interpolation=InterpolationMode.NEAREST, expand=True), True),
    (T.RandomRotation(30, interpolation=InterpolationMode.BILINEAR, center=(10, 20), fill=5), True),
    (T.RandomPerspective(0.5, p=1), True),
]


@pytest.mark.parametrize("transform,warp", RANDOM, ids=lambda t: repr(t)[:50])
def test_random_transform_moves_targets_as_torchvision_with_its_draws(transform, warp):
    spec = compile_transform(transform)
    nearest = getattr(transform, "interpolation", None) == InterpolationMode.NEAREST
    for index in range(4):
        image, boxes, masks, labels = _sample(100 + index)
        d = _C._transform_draws(spec, HEIGHT, WIDTH, SEED, index + 1)[index][0]
        got_image, got_boxes, _, got_labels, _, got_masks = _fastloop(spec, image, boxes, masks, labels, index)
        timage, target = _torchvision_inputs(image, boxes, masks, labels)
        want_image = _replay(transform, d, timage, (HEIGHT, WIDTH))
        want_boxes = _replay(transform, d, target["boxes"], (HEIGHT, WIDTH))
        want_masks = _replay(transform, d, target["masks"], (HEIGHT, WIDTH))
        assert_boxes_close(got_boxes, want_boxes, (spec, d))
        assert torch.equal(got_labels, labels)
        if warp:
            assert_warp_matches(got_image, want_image, nearest, (spec, d))
            assert_warp_matches(got_masks, want_masks, True, (spec, d))
        else:
            assert_within_one_level(got_image, want_image, exact=torch_resize_is_fastloops(), what=(spec, d))
            assert torch.equal(got_masks, want_masks), (spec, d)


def test_a_class_map_moves_with_the_image_and_keeps_its_border_value():
    image, _, _, _ = _sample(7)
    class_map = torch.randint(0, 21, (1, HEIGHT, WIDTH), dtype=torch.uint8)
    class_map[:, :5] = 255
    for fill in ({tv_tensors.Mask: 255, "others": 0}, {tv_tensors.Image: (1, 2, 3), tv_tensors.Mask: 255},
                 {"others": 9}):
        transform = T.Compose([T.Pad(5, fill=fill), T.RandomHorizontalFlip(1)])
        spec = compile_transform(transform)
        got_image, _, _, _, _, got = _C._transform_apply_targets(spec, image, None, class_map, False, torch.zeros(0),
                                                                 SEED)
        want_image, want = transform(tv_tensors.Image(image), tv_tensors.Mask(class_map))
        assert torch.equal(got, want), fill
        assert torch.equal(got_image, want_image), fill
    for fill in ({tv_tensors.Mask: 255}, {tv_tensors.Image: 7, "others": 1}):  # the warps' fills per type too
        transform = T.RandomRotation((30, 30), fill=fill)
        got_image, _, _, _, _, got = _C._transform_apply_targets(compile_transform(transform), image, None, class_map,
                                                                 False, torch.zeros(0), SEED)
        want_image, want = transform(tv_tensors.Image(image), tv_tensors.Mask(class_map))
        assert_warp_matches(got, want, True, fill)
        assert_warp_matches(got_image, want_image, True, fill)


def test_a_transform_torchvision_refuses_for_boxes_is_a_type_error_naming_it():
    image, boxes, masks, labels = _sample(1)
    with pytest.raises(TypeError, match=r"RandAugment.*cannot move bounding boxes"):
        _fastloop("RandAugment()", image, boxes, masks, labels)
    with pytest.raises(TypeError, match=r"AutoAugment"):
        _fastloop("Compose([RandomHorizontalFlip(), AutoAugment()])", image, boxes, masks, labels)
    with pytest.raises(ValueError, match=r"Padding mode 'reflect' is not supported with bounding boxes"):
        _fastloop("Pad(3, padding_mode='reflect')", image, boxes, masks, labels)
    with pytest.raises(ValueError, match=r"fill has 3 values.*masks have one channel"):
        _fastloop("RandomAffine(10, fill=(1, 2, 3))", image, boxes, masks, labels)
    with pytest.raises(TypeError, match=r"labels_getter"):
        _C._transform_repr("SanitizeBoundingBoxes(labels_getter='boxes')")
    with pytest.raises(ValueError, match=r"min_size must be >= 1"):
        _C._transform_repr("SanitizeBoundingBoxes(min_size=0.5)")


def test_the_image_comes_out_as_the_image_only_pipeline_makes_it():
    spec = ("Compose([RandomResizedCrop(40, scale=(0.3, 1)), RandomHorizontalFlip(), RandomAffine(10), "
            "ColorJitter(0.3, 0.3, 0.3, 0.05), RandomPerspective(0.3)])")
    for index in range(6):
        image, boxes, masks, labels = _sample(200 + index)
        got_image = _fastloop(spec, image, boxes, masks, labels, index)[0]
        assert torch.equal(got_image, _C._transform_apply(spec, image, SEED, index))
