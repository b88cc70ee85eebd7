"""The detection and segmentation transforms of torchvision's references (RandomZoomOut, RandomIoUCrop,
RandomPhotometricDistort, RandomShortestSize, RandomResize, ScaleJitter, FixedSizeCrop) against the venv's
torchvision.transforms.v2.

Each runs on an image with boxes, instance masks and labels (``_C._transform_apply_targets``, what a detection
loader's worker runs); the parameters fastloop drew (``_transform_draws``, with the sample's boxes for
RandomIoUCrop) are replayed through ``transforms.v2.functional``, which dispatches on the tv_tensor type.
Asserted: boxes within 1e-3 px, labels and masks equal, images equal (a bilinear resize: kernel_parity's rule;
the photometric chain: its colour-chain rule). FixedSizeCrop is torchvision.prototype's, which torchvision's
wheels do not ship: its _transform is restated here through the same functional calls. RandomIoUCrop's
sampling is also compared with torchvision's own over 2000 samples (Kolmogorov-Smirnov at 0.1 %).

Measured (torch 2.14 / torchvision 0.29, a 2-core AMD EPYC, AVX2): every replayed image equal, resizes and the
photometric chains included (0 levels); RandomIoUCrop over 2000 samples of one 8-box image: KS distance 0.019
(boxes kept) and 0.023 (crop area) against a 0.062 bound; over 10,000, boxes kept 1/2/3/all: 2228/2471/2158/3143
(fastloop) vs 2309/2484/2168/3039 (torchvision).
"""

from __future__ import annotations

import math
import re
from typing import Sequence, Tuple

import numpy as np
import pytest
import torch
import torchvision.transforms.v2 as T
import torchvision.transforms.v2.functional as F
from torchvision import tv_tensors
from torchvision.ops import box_iou
from torchvision.transforms import InterpolationMode
from conftest import assert_boxes_close

from kernel_parity import assert_chain_matches, assert_within_one_level, torch_blends_are_fastloops, \
    torch_resize_is_fastloops

fastloop = pytest.importorskip("fastloop")
from fastloop.transforms import compile_transform  # noqa: E402
_C = fastloop._C

SEED = 20261207
HEIGHT, WIDTH = 53, 67


def _sample(seed: int, count: int = 6) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """An image, `count` XYXY boxes (some reaching past the canvas), one filled-rectangle mask per box (its
    pixels wholly inside the box), labels."""
    g = torch.Generator().manual_seed(seed)
    image = torch.randint(0, 256, (3, HEIGHT, WIDTH), generator=g, dtype=torch.uint8)
    x1 = torch.rand(count, generator=g) * (WIDTH + 4) - 4
    y1 = torch.rand(count, generator=g) * (HEIGHT + 4) - 4
    w = torch.rand(count, generator=g) * 35 + 2
    h = torch.rand(count, generator=g) * 35 + 2
    boxes = torch.stack([x1, y1, x1 + w, y1 + h], 1)
    masks = torch.zeros(count, HEIGHT, WIDTH, dtype=torch.uint8)
    for i, (a, b, c, d) in enumerate(boxes.tolist()):  # the pixels wholly inside the box
        masks[i, max(math.ceil(b), 0):max(math.floor(d), 0), max(math.ceil(a), 0):max(math.floor(c), 0)] = 1
    labels = torch.randint(1, 91, (count,), generator=g)
    return image, boxes, masks, labels


def _fastloop(spec: str, image, boxes, masks, labels, index: int = 0):
    return _C._transform_apply_targets(spec, image, boxes.double(), masks, True, labels, SEED, index)


def _tv(image, boxes, masks):
    canvas = tuple(image.shape[-2:])
    return (tv_tensors.Image(image), tv_tensors.BoundingBoxes(boxes, format="XYXY", canvas_size=canvas),
            tv_tensors.Mask(masks))


def _ks_same(a: Sequence[float], b: Sequence[float]) -> bool:
    """Two-sample Kolmogorov-Smirnov at 0.1 % (test_transforms_geometry's; conservative for discrete values)."""
    a, b = np.sort(np.asarray(a, np.float64)), np.sort(np.asarray(b, np.float64))
    grid = np.concatenate([a, b])
    d = float(np.abs(np.searchsorted(a, grid, "right") / len(a) - np.searchsorted(b, grid, "right") / len(b)).max())
    return d <= 1.949 * math.sqrt((len(a) + len(b)) / (len(a) * len(b)))


# ------------------------------------------------------------------------------------ replays of fastloop's draws
def _replay_geometry(transform, d: dict, x):
    """`transform` on one tv_tensor with fastloop's draws `d` (FixedSizeCrop's dropping is done by the caller)."""
    if isinstance(transform, T.RandomZoomOut):
        return F.pad(x, [int(v) for v in d["padding"]], fill=transform.fill) if d["apply"][0] else x
    if isinstance(transform, (T.RandomShortestSize, T.RandomResize, T.ScaleJitter)):
        return F.resize(x, [int(v) for v in d["size"]], interpolation=transform.interpolation,
                        antialias=transform.antialias)
    raise AssertionError(transform)


GEOMETRY = [
    T.RandomZoomOut(fill=7, side_range=(1.0, 2.5), p=1.0),
    T.RandomZoomOut(),
    T.RandomShortestSize([30, 40, 90], max_size=100),
    T.RandomShortestSize(45, interpolation=InterpolationMode.NEAREST),
    T.RandomResize(20, 80),
    T.ScaleJitter((64, 48), scale_range=(0.5, 1.5)),
    T.ScaleJitter((100, 100), interpolation=InterpolationMode.NEAREST, antialias=False),
]


@pytest.mark.parametrize("transform", GEOMETRY, ids=lambda t: repr(t)[:60])
def test_transform_moves_image_boxes_and_masks_as_torchvision_with_its_draws(transform):
    spec = compile_transform(transform)
    nearest = getattr(transform, "interpolation", None) == InterpolationMode.NEAREST
    resizes = not isinstance(transform, T.RandomZoomOut)
    draws = _C._transform_draws(spec, HEIGHT, WIDTH, SEED, 8)
    for index in range(8):
        image, boxes, masks, labels = _sample(300 + index)
        d = draws[index][0]
        got_image, got_boxes, _, got_labels, kept, got_masks = _fastloop(spec, image, boxes, masks, labels, index)
        want = [_replay_geometry(transform, d, x) for x in _tv(image, boxes, masks)]
        assert_boxes_close(got_boxes, want[1], (spec, d))
        assert torch.equal(got_labels, labels) and torch.equal(kept, torch.arange(len(labels)))
        assert torch.equal(got_masks, want[2]), (spec, d)
        if resizes and not nearest:
            assert_within_one_level(got_image, want[0], exact=torch_resize_is_fastloops(), what=(spec, d))
        else:
            assert torch.equal(got_image, want[0]), (spec, d)


def test_random_resizes_draw_the_sizes_torchvision_draws():
    image = torch.zeros(3, HEIGHT, WIDTH, dtype=torch.uint8)
    for transform in (T.RandomShortestSize([30, 40, 90], max_size=100), T.RandomResize(20, 80)):
        ours = {tuple(d[0]["size"]) for d in _C._transform_draws(compile_transform(transform), HEIGHT, WIDTH, SEED, 2000)}
        torch.manual_seed(SEED)
        theirs = set()
        for _ in range(2000):
            size = transform.make_params([image])["size"]
            theirs.add(tuple(float(v) for v in F.resize(image, size).shape[-2:]))
        assert ours == theirs, transform
    transform = T.ScaleJitter((640, 480))
    ours = [d[0]["size"][0] for d in _C._transform_draws(compile_transform(transform), HEIGHT, WIDTH, SEED, 2000)]
    torch.manual_seed(SEED)
    theirs = [transform.make_params([image])["size"][0] for _ in range(2000)]
    assert _ks_same(ours, theirs)


# ---------------------------------------------------------------------------------------------- FixedSizeCrop
def _fixed_size_crop(size, fill, d: dict, image, boxes, masks, labels):
    """torchvision.prototype.transforms.FixedSizeCrop._transform with fastloop's draws, through v2.functional."""
    x = list(_tv(image, boxes, masks)) + [labels]
    top, left, height, width = (int(d[k][0]) for k in ("top", "left", "height", "width"))
    if (height, width) != tuple(image.shape[-2:]):
        x[:3] = [F.crop(v, top, left, height, width) for v in x[:3]]
        wh = F.convert_bounding_box_format(F.clamp_bounding_boxes(x[1]), new_format="XYWH")[..., 2:]
        valid = torch.all(wh > 0, dim=-1)
        x[1] = F.clamp_bounding_boxes(tv_tensors.wrap(x[1][valid], like=x[1]))
        x[2], x[3] = tv_tensors.wrap(x[2][valid], like=x[2]), x[3][valid]
    padding = [int(v) for v in d["padding"]]
    if any(padding):
        x[:3] = [F.pad(v, padding, fill=fill) for v in x[:3]]
    return x


@pytest.mark.parametrize("size", [(40, 80), (30, 30), (70, 90), 53])
def test_fixed_size_crop_crops_drops_empty_boxes_and_pads_as_torchvision(size):
    spec = f"FixedSizeCrop(size={size}, fill=5)"
    draws = _C._transform_draws(spec, HEIGHT, WIDTH, SEED, 8)
    dropped = 0
    for index in range(8):
        image, boxes, masks, labels = _sample(400 + index)
        d = draws[index][0]
        got_image, got_boxes, _, got_labels, kept, got_masks = _fastloop(spec, image, boxes, masks, labels, index)
        want_image, want_boxes, want_masks, want_labels = _fixed_size_crop(size, 5, d, image, boxes, masks, labels)
        assert got_image.shape[-2:] == ((size, size) if isinstance(size, int) else size)
        assert torch.equal(got_image, want_image), (spec, d)
        assert_boxes_close(got_boxes, want_boxes, (spec, d))
        assert torch.equal(got_labels, want_labels) and torch.equal(labels[kept], got_labels)
        assert torch.equal(got_masks, want_masks), (spec, d)
        dropped += len(labels) - len(got_labels)
    if size == (30, 30):
        assert dropped > 0  # the case of dropping was exercised


def test_fixed_size_crop_compiles_from_the_prototype_class():
    cls = type("FixedSizeCrop", (), {"__module__": "torchvision.prototype.transforms._geometry"})
    obj = cls()
    obj.crop_height, obj.crop_width, obj.fill, obj.padding_mode = 30, 40, 0, "constant"
    assert compile_transform(obj) == "FixedSizeCrop(size=(30, 40), fill=0, padding_mode='constant')"


# ---------------------------------------------------------------------------------------------- RandomIoUCrop
def test_random_iou_crop_keeps_the_boxes_torchvision_keeps_for_the_crop_it_draws():
    transform = T.RandomIoUCrop()
    spec = compile_transform(transform)
    assert "sampler_options=(0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)" in spec
    cropped = 0
    for index in range(24):
        image, boxes, masks, labels = _sample(500 + index)
        d = _C._transform_draws(spec, HEIGHT, WIDTH, SEED, index + 1, boxes=boxes.double())[index][0]
        got_image, got_boxes, _, got_labels, kept, got_masks = _fastloop(spec, image, boxes, masks, labels, index)
        assert torch.equal(got_labels, labels) and torch.equal(kept, torch.arange(len(labels)))
        if "top" not in d:  # the "leave as is" option
            assert d["min_jaccard_overlap"][0] >= 1.0
            assert torch.equal(got_image, image) and torch.equal(got_masks, masks)
            assert_boxes_close(got_boxes, boxes, d)
            continue
        cropped += 1
        top, left, height, width = (int(d[k][0]) for k in ("top", "left", "height", "width"))
        assert 0.5 <= width / height <= 2.0 and 0.3 * WIDTH - 1 <= width and 0.3 * HEIGHT - 1 <= height
        cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
        within = (left < cx) & (cx < left + width) & (top < cy) & (cy < top + height)
        assert within.tolist() == [bool(v) for v in d["is_within_crop_area"]], d
        iou = box_iou(boxes[within], torch.tensor([[left, top, left + width, top + height]], dtype=boxes.dtype))
        assert iou.max() >= d["min_jaccard_overlap"][0]
        want_image, want_boxes, want_masks = (F.crop(x, top, left, height, width) for x in _tv(image, boxes, masks))
        want_boxes[~within] = 0  # torchvision's _transform: degenerate, for SanitizeBoundingBoxes to drop
        assert torch.equal(got_image, want_image) and torch.equal(got_masks, want_masks), d
        assert_boxes_close(got_boxes, want_boxes, d)
    assert cropped >= 12


def test_random_iou_crop_samples_as_torchvision_does():
    """The number of boxes a crop keeps and the crop's area, over 2000 samples, against torchvision's own
    RandomIoUCrop on the same image and boxes."""
    image, boxes, masks, labels = _sample(600, count=8)
    transform = T.RandomIoUCrop()
    draws = _C._transform_draws(compile_transform(transform), HEIGHT, WIDTH, SEED, 2000, boxes=boxes.double())
    ours_kept = [sum(d[0].get("is_within_crop_area", [1.0] * 8)) for d in draws]
    ours_area = [d[0]["height"][0] * d[0]["width"][0] if "top" in d[0] else HEIGHT * WIDTH for d in draws]
    torch.manual_seed(SEED)
    theirs_kept, theirs_area = [], []
    tv_image, tv_boxes, _ = _tv(image, boxes, masks)
    for _ in range(2000):
        out_image, out_boxes = transform(tv_image, tv_boxes)
        theirs_kept.append(int((out_boxes != 0).any(dim=1).sum()))
        theirs_area.append(out_image.shape[-1] * out_image.shape[-2])
    assert _ks_same(ours_kept, theirs_kept), (np.bincount(np.array(ours_kept, int)), np.bincount(theirs_kept))
    assert _ks_same(ours_area, theirs_area)
    assert not _ks_same([a * 0.9 for a in ours_area], theirs_area)  # the test can fail: a 10 % smaller crop


def test_ssd_chain_keeps_every_mask_inside_its_box_and_every_box_on_the_canvas():
    transform = T.Compose([T.RandomPhotometricDistort(p=1), T.RandomZoomOut(fill=0), T.RandomIoUCrop(),
                           T.RandomHorizontalFlip(p=0.5), T.Resize((300, 300)), T.SanitizeBoundingBoxes()])
    spec = compile_transform(transform)
    total = 0
    for index in range(40):
        image, boxes, masks, labels = _sample(700 + index)
        got_image, got_boxes, _, got_labels, kept, got_masks = _fastloop(spec, image, boxes, masks, labels, index)
        assert got_image.shape == (3, 300, 300)
        assert torch.equal(labels[kept], got_labels) and len(got_masks) == len(got_boxes) == len(got_labels)
        assert ((got_boxes >= 0) & (got_boxes <= 300)).all(), got_boxes
        assert ((got_boxes[:, 2:] - got_boxes[:, :2]) >= 1).all()
        for box, mask in zip(got_boxes.tolist(), got_masks):
            ys, xs = torch.nonzero(mask, as_tuple=True)
            if len(xs):
                assert xs.min() >= box[0] - 2 and xs.max() + 1 <= box[2] + 2, (box, xs.min(), xs.max())
                assert ys.min() >= box[1] - 2 and ys.max() + 1 <= box[3] + 2, (box, ys.min(), ys.max())
        total += len(got_boxes)
    assert total > 40


def test_random_iou_crop_needs_boxes_as_torchvision():
    image, boxes, masks, labels = _sample(1)
    with pytest.raises(TypeError) as theirs:
        T.RandomIoUCrop()(tv_tensors.Image(image))
    with pytest.raises(TypeError, match=re.escape(str(theirs.value))):
        _C._transform_apply("RandomIoUCrop()", image, SEED)
    with pytest.raises(TypeError, match=re.escape(str(theirs.value))):
        _C._transform_apply_targets("RandomIoUCrop()", image, None, masks, True, labels, SEED)
    with pytest.raises(TypeError, match=re.escape(str(theirs.value))):
        _C._transform_draws("RandomIoUCrop()", HEIGHT, WIDTH, SEED, 1)


# ------------------------------------------------------------------------------------- RandomPhotometricDistort
@pytest.mark.parametrize("transform", [T.RandomPhotometricDistort(p=1.0), T.RandomPhotometricDistort(),
                                       T.RandomPhotometricDistort(brightness=(0.5, 1.5), hue=(-0.2, 0.2), p=0.7)],
                         ids=repr)
def test_photometric_distort_replays_torchvision_with_its_draws(transform):
    spec = compile_transform(transform)
    draws = _C._transform_draws(spec, HEIGHT, WIDTH, SEED, 16)
    permuted = 0
    for index in range(16):
        image, boxes, masks, labels = _sample(800 + index)
        d = draws[index][0]
        got_image, got_boxes, _, got_labels, _, got_masks = _fastloop(spec, image, boxes, masks, labels, index)
        assert_boxes_close(got_boxes, boxes, d)
        assert torch.equal(got_masks, masks) and torch.equal(got_labels, labels)
        assert torch.equal(got_image, _C._transform_apply(spec, image, SEED, index))
        factor = {k: (d[k][0] if d[k] else None) for k in ("brightness_factor", "contrast_factor",
                                                            "saturation_factor", "hue_factor")}
        x = tv_tensors.Image(image)
        if factor["brightness_factor"] is not None:
            x = F.adjust_brightness(x, factor["brightness_factor"])
        if factor["contrast_factor"] is not None and d["contrast_before"][0]:
            x = F.adjust_contrast(x, factor["contrast_factor"])
        if factor["saturation_factor"] is not None:
            x = F.adjust_saturation(x, factor["saturation_factor"])
        if factor["hue_factor"] is not None:
            x = F.adjust_hue(x, factor["hue_factor"])
        if factor["contrast_factor"] is not None and not d["contrast_before"][0]:
            x = F.adjust_contrast(x, factor["contrast_factor"])
        if d["channel_permutation"]:
            x = F.permute_channels(x, [int(v) for v in d["channel_permutation"]])
            permuted += 1
        before_hue = [factor[k] is not None for k in ("brightness_factor", "saturation_factor")]
        stretches = factor["hue_factor"] is not None and (any(before_hue) or (
            factor["contrast_factor"] is not None and d["contrast_before"][0]))
        assert_chain_matches(got_image, x.as_subclass(torch.Tensor), False, (spec, d),
                             exact=torch_blends_are_fastloops(), stretches_levels=stretches)
    assert permuted > 0


def test_photometric_distort_draws_as_torchvision():
    transform = T.RandomPhotometricDistort(p=0.5)
    draws = [d[0] for d in _C._transform_draws(compile_transform(transform), HEIGHT, WIDTH, SEED, 2000)]
    torch.manual_seed(SEED)
    image = torch.zeros(3, HEIGHT, WIDTH, dtype=torch.uint8)
    theirs = [transform.make_params([image]) for _ in range(2000)]
    for key in ("brightness_factor", "contrast_factor", "saturation_factor", "hue_factor"):
        ours = [d[key][0] for d in draws if d[key]]
        their = [p[key] for p in theirs if p[key] is not None]
        assert _ks_same(ours, their), key
        assert abs(len(ours) - len(their)) < 200, key  # each applied with p = 0.5: 1000 +- 22 of 2000
    perms = [tuple(int(v) for v in d["channel_permutation"]) for d in draws if d["channel_permutation"]]
    their_perms = [tuple(p["channel_permutation"].tolist()) for p in theirs if p["channel_permutation"] is not None]
    codes = sorted(set(perms) | set(their_perms))
    assert len(codes) == 6 and _ks_same([codes.index(p) for p in perms], [codes.index(p) for p in their_perms])


# ---------------------------------------------------------------------------------------------- argument errors
@pytest.mark.parametrize("make,spec", [
    (lambda: T.RandomZoomOut(side_range=(0.5, 2.0)), "RandomZoomOut(side_range=(0.5, 2.0))"),
    (lambda: T.RandomZoomOut(side_range=(3.0, 2.0)), "RandomZoomOut(side_range=(3.0, 2.0))"),
    (lambda: T.RandomZoomOut(side_range=(1.0, 2.0, 3.0)), "RandomZoomOut(side_range=(1.0, 2.0, 3.0))"),
    (lambda: T.RandomZoomOut(side_range=2.0), "RandomZoomOut(side_range=2.0)"),
    (lambda: T.RandomZoomOut(p=1.5), "RandomZoomOut(p=1.5)"),
    (lambda: T.RandomZoomOut(fill="x"), "RandomZoomOut(fill='x')"),
])
def test_argument_errors_are_torchvisions(make, spec):
    with pytest.raises((TypeError, ValueError)) as theirs:
        make()
    with pytest.raises(type(theirs.value), match=re.escape(str(theirs.value))):
        _C._transform_repr(spec)


def test_errors_torchvision_raises_on_the_first_sample_come_at_compile_time():
    with pytest.raises(ValueError, match="Please provide only two dimensions"):
        _C._transform_repr("FixedSizeCrop(size=(1, 2, 3))")
    with pytest.raises(ValueError, match="from=5 >= to=5"):
        _C._transform_repr("RandomResize(5, 5)")
    with pytest.raises(ValueError, match="sampler_options is empty"):
        _C._transform_repr("RandomIoUCrop(sampler_options=())")
    image, boxes, masks, labels = _sample(2)
    with pytest.raises(TypeError, match="also requires it to contain a Label"):
        _fastloop("FixedSizeCrop(30)", image, boxes, masks, labels[:0])
    with pytest.raises(ValueError, match="Padding mode 'edge' is not supported with bounding boxes"):
        _fastloop("FixedSizeCrop(90, padding_mode='edge')", image, boxes, masks, labels)


def test_reprs_read_back_and_sizes_are_known_only_where_fixed():
    for transform in GEOMETRY + [T.RandomIoUCrop(sampler_options=[0.5, 1.0], trials=3), T.RandomPhotometricDistort()]:
        text = compile_transform(transform)
        assert _C._transform_repr(text) == text
    assert compile_transform(T.RandomIoUCrop(sampler_options=[0.5, 1.0])).endswith("sampler_options=(0.5, 1.0), trials=40)")
