"""Keypoints (``tv_tensors.KeyPoints``) through fastloop's compiled pipeline against the venv's torchvision 0.29.

Each geometric transform runs on an image with boxes, labels and keypoints (``_C._transform_apply_targets`` with
``keypoints=``: what a detection loader's worker runs); deterministic specs are compared with the torchvision
transform itself, random ones with fastloop's draws (``_C._transform_draws``) replayed through
``transforms.v2.functional``, which dispatches KeyPoints to its ``*_keypoints`` kernels. ClampKeyPoints,
SanitizeKeyPoints and SetClampingMode against torchvision's classes; ``fastloop.CocoDetection(...,
target_keys=[..., "keypoints"])`` against torchvision's raw CocoDetection (its v2 wrapper refuses "keypoints", which
is asserted too) on a small person-keypoints set made here; a Loader with 1 and 2 workers.

Compared: keypoints within 1e-3 px. torchvision keeps keypoints in float32 and computes each kernel in float32;
fastloop keeps float32 too, and its flips, shifts and resizes are the same single float32 operation (equal bits),
while a warp's point is its float32 matrix applied in double and rounded once, within an ulp or two of torchvision's
float32 matmul (about 1e-5 px on these canvases): 1e-3 px leaves room for that and fails any real error (a flip by
width instead of width - 1 is 1 px off; a half-pixel shift 0.5 px). Labels equal; boxes within 1e-3 px.
"""

from __future__ import annotations

import contextlib
import io
import json
from typing import Tuple

import numpy as np
import pytest
import torch
import torchvision
import torchvision.transforms.v2 as T
import torchvision.transforms.v2.functional as F
from torchvision import tv_tensors
from torchvision.transforms import InterpolationMode
from conftest import assert_boxes_close

fastloop = pytest.importorskip("fastloop")
from fastloop.transforms import compile_transform  # noqa: E402
_C = fastloop._C

SEED = 20261207
HEIGHT, WIDTH = 53, 67
CANVAS = (HEIGHT, WIDTH)


def _sample(seed: int, count: int = 5, points: int = 4):
    """An image, XYXY boxes, labels and KeyPoints [count, points, 2]: fractional points inside, integer points on
    the last row and column (width - 1, height - 1: inside), and points past every edge (Sanitize drops those)."""
    g = torch.Generator().manual_seed(seed)
    image = torch.randint(0, 256, (3, HEIGHT, WIDTH), generator=g, dtype=torch.uint8)
    x1 = torch.rand(count, generator=g) * WIDTH - 4
    y1 = torch.rand(count, generator=g) * HEIGHT - 4
    boxes = torch.stack([x1, y1, x1 + torch.rand(count, generator=g) * 25 + 1,
                         y1 + torch.rand(count, generator=g) * 25 + 1], 1)
    labels = torch.randint(1, 91, (count,), generator=g)
    keypoints = torch.rand(count, points, 2, generator=g) * torch.tensor([WIDTH - 1.0, HEIGHT - 1.0])
    keypoints[1, 0] = torch.tensor([WIDTH - 1.0, HEIGHT - 1.0])
    keypoints[2, 1] = torch.tensor([0.0, 7.0])
    keypoints[3, 2] = torch.tensor([WIDTH + 0.5, 10.25])  # past the right edge
    keypoints[4, 3] = torch.tensor([12.0, -0.75])  # above the top
    return image, boxes, labels, keypoints


def _fastloop(spec: str, image, boxes, labels, keypoints, index: int = 0):
    """(image, boxes, labels, keypoints) after `spec` in fastloop's worker code."""
    out = _C._transform_apply_targets(spec, image, None if boxes is None else boxes.double(), None, False, labels,
                                      SEED, index, keypoints=keypoints)
    return out[0], out[1], out[3], out[6]


def _tv(image, boxes, labels, keypoints):
    return tv_tensors.Image(image), {"boxes": tv_tensors.BoundingBoxes(boxes, format="XYXY", canvas_size=CANVAS),
                                     "labels": labels, "keypoints": tv_tensors.KeyPoints(keypoints, canvas_size=CANVAS)}


def _assert_points(actual: torch.Tensor, expected: torch.Tensor, what: object) -> None:
    assert actual.dtype == torch.float32, what
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    torch.testing.assert_close(actual, expected.as_subclass(torch.Tensor).float(), atol=1e-3, rtol=0,
                               msg=lambda m: f"{what}: {m}")


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
    T.RandomInvert(p=1),  # pixels only: the points pass
    T.ClampKeyPoints(),
    T.Compose([T.Pad(6), T.CenterCrop(40), T.RandomHorizontalFlip(1), T.ClampKeyPoints()]),
    T.SanitizeKeyPoints(),
    T.SanitizeKeyPoints(labels_getter="default"),
    T.Compose([T.RandomVerticalFlip(1), T.CenterCrop(45), T.SanitizeKeyPoints(labels_getter="default")]),
]


@pytest.mark.parametrize("transform", DETERMINISTIC, ids=lambda t: repr(t)[:60])
def test_deterministic_transform_moves_keypoints_as_torchvision(transform):
    spec = compile_transform(transform)
    for seed in range(3):
        image, boxes, labels, keypoints = _sample(seed)
        got_image, got_boxes, got_labels, got_points = _fastloop(spec, image, boxes, labels, keypoints)
        want_image, want = transform(*_tv(image, boxes, labels, keypoints))
        _assert_points(got_points, want["keypoints"], spec)
        assert_boxes_close(got_boxes, want["boxes"], spec)
        assert torch.equal(got_labels, want["labels"]), spec
        assert torch.equal(got_image, want_image) or isinstance(transform, T.Resize), spec


def _replay(transform, d: dict, x):
    """`transform` on one tv_tensor with fastloop's draws `d`, through torchvision's functional."""
    fill = getattr(transform, "fill", None)
    if isinstance(transform, T.RandomResizedCrop):
        return F.resized_crop(x, int(d["top"][0]), int(d["left"][0]), int(d["height"][0]), int(d["width"][0]),
                              list(transform.size))
    if isinstance(transform, T.RandomCrop):
        left, top, right, bottom = (int(v) for v in d["padding"])
        if left or top or right or bottom:
            x = F.pad(x, [left, top, right, bottom], fill=fill)
        return F.crop(x, int(d["top"][0]), int(d["left"][0]), int(d["height"][0]), int(d["width"][0]))
    if isinstance(transform, T.RandomAffine):
        return F.affine(x, d["angle"][0], [int(v) for v in d["translate"]], d["scale"][0], d["shear"],
                        transform.interpolation, fill=fill, center=transform.center)
    if isinstance(transform, T.RandomRotation):
        return F.rotate(x, d["angle"][0], transform.interpolation, expand=transform.expand, center=transform.center,
                        fill=fill)
    if isinstance(transform, T.RandomPerspective):
        if not d["applied"][0]:
            return x
        ends = [[int(d["endpoints"][2 * i]), int(d["endpoints"][2 * i + 1])] for i in range(4)]
        start = [[0, 0], [WIDTH - 1, 0], [WIDTH - 1, HEIGHT - 1], [0, HEIGHT - 1]]
        return F.perspective(x, start, ends, transform.interpolation, fill=fill)
    if isinstance(transform, T.RandomZoomOut):
        return F.pad(x, [int(v) for v in d["padding"]], fill=transform.fill) if d["apply"][0] else x
    if isinstance(transform, (T.RandomShortestSize, T.RandomResize, T.ScaleJitter)):
        return F.resize(x, [int(v) for v in d["size"]], interpolation=transform.interpolation)
    if isinstance(transform, (T.RandomHorizontalFlip, T.RandomVerticalFlip)):
        flip = F.horizontal_flip if isinstance(transform, T.RandomHorizontalFlip) else F.vertical_flip
        return flip(x) if d["flip"][0] else x
    raise AssertionError(transform)


RANDOM = [
    T.RandomResizedCrop(32, scale=(0.2, 1.0)),
    T.RandomResizedCrop((60, 90), scale=(0.5, 1.0)),
    T.RandomCrop(40, padding=4, fill=3),
    T.RandomCrop((70, 60), pad_if_needed=True),
    T.RandomAffine(degrees=25, translate=(0.1, 0.2), scale=(0.8, 1.2), shear=(5, 10)),
    T.RandomAffine(degrees=10, scale=(0.9, 1.1), center=(20, 30)),
    T.RandomRotation(30, expand=True),
    T.RandomRotation(170, expand=True),
    T.RandomRotation(30, center=(10, 20)),
    T.RandomPerspective(0.5, p=1),
    T.RandomZoomOut(fill=7, side_range=(1.0, 2.5), p=1.0),
    T.RandomShortestSize([30, 40, 90], max_size=100),
    T.RandomResize(20, 80),
    T.ScaleJitter((64, 48), scale_range=(0.5, 1.5)),
    T.RandomHorizontalFlip(),
    T.RandomVerticalFlip(),
]


@pytest.mark.parametrize("transform", RANDOM, ids=lambda t: repr(t)[:60])
def test_random_transform_moves_keypoints_as_torchvision_with_its_draws(transform):
    spec = compile_transform(transform)
    draws = _C._transform_draws(spec, HEIGHT, WIDTH, SEED, 6)
    for index in range(6):
        image, boxes, labels, keypoints = _sample(100 + index)
        d = draws[index][0]
        _, got_boxes, got_labels, got_points = _fastloop(spec, image, boxes, labels, keypoints, index)
        _, target = _tv(image, boxes, labels, keypoints)
        _assert_points(got_points, _replay(transform, d, target["keypoints"]), (spec, d))
        assert_boxes_close(got_boxes, _replay(transform, d, target["boxes"]), (spec, d))
        assert torch.equal(got_labels, labels)


def test_a_fused_resize_flip_crop_moves_keypoints_as_the_three_transforms():
    """RandomResize, a flip and RandomCrop run as one step (resize_crop_fusion): the points as the three one after
    another, with fastloop's draws (the flip's and the crop's drawn at the resized size)."""
    steps = [T.RandomResize(40, 120), T.RandomHorizontalFlip(), T.RandomCrop(48, pad_if_needed=True)]
    spec = compile_transform(T.Compose(steps))
    sizes = _C._transform_draws(spec, HEIGHT, WIDTH, SEED, 8)
    for index in range(8):
        image, boxes, labels, keypoints = _sample(200 + index)
        h, w = (int(v) for v in sizes[index][0]["size"])
        d = _C._transform_draws(spec, h, w, SEED, index + 1)[index]
        _, got_boxes, _, got_points = _fastloop(spec, image, boxes, labels, keypoints, index)
        want = tv_tensors.KeyPoints(keypoints, canvas_size=CANVAS)
        want_boxes = tv_tensors.BoundingBoxes(boxes, format="XYXY", canvas_size=CANVAS)
        for step, params in zip(steps, [sizes[index][0], d[1], d[2]]):
            want, want_boxes = _replay(step, params, want), _replay(step, params, want_boxes)
        _assert_points(got_points, want, (spec, index, d))
        assert_boxes_close(got_boxes, want_boxes, (spec, index, d))


def test_random_iou_crop_and_fixed_size_crop_move_keypoints_with_the_crop():
    spec = "RandomIoUCrop()"
    moved = 0
    for index in range(12):
        image, boxes, labels, keypoints = _sample(400 + index)
        d = _C._transform_draws(spec, HEIGHT, WIDTH, SEED, index + 1, boxes.double())[index][0]
        _, _, _, got_points = _fastloop(spec, image, boxes, labels, keypoints, index)
        want = tv_tensors.KeyPoints(keypoints, canvas_size=CANVAS)
        if "top" in d:  # torchvision's _transform: F.crop on every type; only boxes are zeroed outside
            want = F.crop(want, int(d["top"][0]), int(d["left"][0]), int(d["height"][0]), int(d["width"][0]))
            moved += 1
        _assert_points(got_points, want, d)
    assert moved > 0
    for size in ((30, 40), (70, 90)):  # torchvision.prototype's _transform: F.crop, then F.pad right and bottom
        spec = f"FixedSizeCrop(size={size}, fill=5)"
        for index in range(4):
            image, boxes, labels, keypoints = _sample(500 + index)
            d = _C._transform_draws(spec, HEIGHT, WIDTH, SEED, index + 1)[index][0]
            _, _, _, got_points = _fastloop(spec, image, boxes, labels, keypoints, index)
            want = tv_tensors.KeyPoints(keypoints, canvas_size=CANVAS)
            if (int(d["height"][0]), int(d["width"][0])) != CANVAS:
                want = F.crop(want, int(d["top"][0]), int(d["left"][0]), int(d["height"][0]), int(d["width"][0]))
            if any(d["padding"]):
                want = F.pad(want, [int(v) for v in d["padding"]])
            _assert_points(got_points, want, (spec, d))


def test_sanitize_keypoints_drops_points_and_groups_as_torchvision():
    image, boxes, labels, keypoints = _sample(9)
    flat = keypoints.reshape(-1, 2)  # [M, 2]: each point on its own
    for transform in (T.SanitizeKeyPoints(), T.SanitizeKeyPoints(labels_getter="default")):
        spec = compile_transform(transform)
        flat_labels = torch.arange(len(flat))
        _, _, got_labels, got_points = _fastloop(spec, image, None, flat_labels, flat)
        want_image, want = transform(tv_tensors.Image(image),
                                     {"keypoints": tv_tensors.KeyPoints(flat, canvas_size=CANVAS),
                                      "labels": flat_labels})
        _assert_points(got_points, want["keypoints"], spec)
        assert len(got_points) == len(flat) - 2
        assert torch.equal(got_labels, want["labels"]), spec
    with pytest.raises(ValueError, match=r"Number of kepyoints .* must match the number of labels"):
        _fastloop("SanitizeKeyPoints(labels_getter='default')", image, boxes, labels[:3], keypoints)
    with pytest.raises(ValueError, match=r"No keypoints were found in the sample"):
        _C._transform_apply_targets("SanitizeKeyPoints()", image, boxes.double(), None, False, labels, SEED)


def test_set_clamping_mode_decides_whether_boxes_are_clamped_as_torchvision():
    for transform in (T.Compose([T.SetClampingMode(None), T.CenterCrop(30)]),
                      T.Compose([T.SetClampingMode(None), T.Pad(3), T.CenterCrop(40), T.ClampBoundingBoxes()]),
                      T.Compose([T.SetClampingMode(None), T.CenterCrop(30), T.ClampBoundingBoxes("soft")]),
                      T.Compose([T.SetClampingMode("hard"), T.RandomRotation((20, 20), expand=True)]),
                      T.Compose([T.SetClampingMode(None), T.RandomAffine((15, 15), scale=(1.3, 1.3))]),
                      T.Compose([T.SetClampingMode(None), T.RandomPerspective(0.5, p=1)])):
        spec = compile_transform(transform)
        for index in range(3):
            image, boxes, labels, keypoints = _sample(600 + index)
            _, got_boxes, _, got_points = _fastloop(spec, image, boxes, labels, keypoints, index)
            d = _C._transform_draws(spec, HEIGHT, WIDTH, SEED, index + 1)[index]
            if isinstance(transform.transforms[1], T.RandomPerspective):
                target = _tv(image, boxes, labels, keypoints)[1]
                want_boxes = _replay(transform.transforms[1], d[1], T.SetClampingMode(None)(target["boxes"]))
                assert_boxes_close(got_boxes, want_boxes, spec)
                continue
            _, want = transform(*_tv(image, boxes, labels, keypoints))
            assert_boxes_close(got_boxes, want["boxes"], spec)
            _assert_points(got_points, want["keypoints"], spec)
    image, boxes, labels, keypoints = _sample(1)
    _, unclamped, _, _ = _fastloop("SetClampingMode(None), CenterCrop(30)", image, boxes, labels, keypoints)
    _, clamped, _, _ = _fastloop("CenterCrop(30)", image, boxes, labels, keypoints)
    assert not torch.equal(unclamped, clamped)  # the sample reaches past the crop: the mode is seen
    with pytest.raises(ValueError, match=r"clamping_mode must be soft, hard or None, got auto"):
        _C._transform_repr("SetClampingMode('auto')")


def test_transforms_torchvision_refuses_for_keypoints_are_refused_with_its_error():
    image, boxes, labels, keypoints = _sample(1)
    with pytest.raises(ValueError, match=r"Padding mode 'reflect' is not supported with KeyPoints"):
        _fastloop("Pad(3, padding_mode='reflect')", image, None, labels, keypoints)
    with pytest.raises(ValueError, match=r"Padding mode 'edge' is not supported with KeyPoints"):
        T.Pad(3, padding_mode="edge")(tv_tensors.KeyPoints(keypoints, canvas_size=CANVAS))  # torchvision's words
    with pytest.raises(ValueError, match=r"Padding mode 'edge' is not supported with KeyPoints"):
        _fastloop("Pad(3, padding_mode='edge')", image, None, labels, keypoints)
    with pytest.raises(TypeError, match=r"RandAugment"):
        _fastloop("RandAugment()", image, boxes, labels, keypoints)
    with pytest.raises(TypeError, match=r"acts on keypoints"):
        _C._transform_apply("ClampKeyPoints()", image, SEED)
    for name, transform in (("ClampKeyPoints()", T.ClampKeyPoints()),
                            ("SanitizeKeyPoints(labels_getter='default')", T.SanitizeKeyPoints("default")),
                            ("SetClampingMode(clamping_mode=None)", T.SetClampingMode(None))):
        assert compile_transform(transform) == name


# -------------------------------------------------------------------------------------------- COCO keypoints
def _person(rng: np.random.Generator, h: int, w: int, floats: bool) -> list:
    """17 keypoint triplets as COCO writes them: integers (or 2-decimal floats), v = 0 points at (0, 0)."""
    out = []
    for _ in range(17):
        v = int(rng.integers(0, 3))
        if v == 0:
            out += [0, 0, 0]
        elif floats:
            out += [float(np.round(rng.uniform(0, w), 2)), float(np.round(rng.uniform(0, h), 2)), v]
        else:
            out += [int(rng.integers(0, w)), int(rng.integers(0, h)), v]
    return out


@pytest.fixture(scope="module")
def coco_people(tmp_path_factory):
    from PIL import Image

    rng = np.random.default_rng(17)
    root = tmp_path_factory.mktemp("coco_keypoints")
    sizes = {3: (48, 64), 8: (40, 30), 11: (33, 47)}
    images, annotations = [], []
    for image_id, (h, w) in sizes.items():
        name = f"{image_id:06d}.png"
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(root / name)
        images.append({"id": image_id, "file_name": name, "height": h, "width": w})
    next_id = 1
    for image_id, floats in ((3, False), (8, True), (3, True), (8, False), (3, False)):  # image 11: none
        h, w = sizes[image_id]
        bbox = [float(np.round(v, 2)) for v in (rng.uniform(0, w / 2), rng.uniform(0, h / 2), rng.uniform(2, w / 2),
                                                rng.uniform(2, h / 2))]
        kps = _person(rng, h, w, floats)
        annotations.append({"id": next_id, "image_id": image_id, "category_id": 1, "bbox": bbox, "iscrowd": 0,
                            "area": bbox[2] * bbox[3], "keypoints": kps, "num_keypoints": sum(v > 0 for v in kps[2::3]),
                            "segmentation": [[bbox[0], bbox[1], bbox[0] + bbox[2], bbox[1], bbox[0], bbox[1] + bbox[3]]]})
        next_id += 1
    categories = [{"id": 1, "name": "person", "keypoints": [f"k{i}" for i in range(17)], "skeleton": [[1, 2]]}]
    ann_file = root / "person_keypoints.json"
    ann_file.write_text(json.dumps({"images": images, "annotations": annotations, "categories": categories}))
    # the same without image 11 (no person): SanitizeKeyPoints on it raises "No keypoints were found", as torchvision's
    (root / "people_only.json").write_text(json.dumps({"images": images[:2], "annotations": annotations,
                                                       "categories": categories}))
    return root, ann_file


def _raw(root, ann_file):
    with contextlib.redirect_stdout(io.StringIO()):
        return torchvision.datasets.CocoDetection(str(root), str(ann_file))


def _expected(raw_target, canvas):
    """What fastloop gives: KeyPoints float32 [N, 17, 2] of the triplets' x, y; visibility int64 [N, 17]."""
    triplets = torch.tensor([a["keypoints"] for a in raw_target], dtype=torch.float64).reshape(len(raw_target), -1, 3)
    boxes = torch.tensor([a["bbox"] for a in raw_target], dtype=torch.float32)
    boxes = F.convert_bounding_box_format(tv_tensors.BoundingBoxes(boxes, format="XYWH", canvas_size=canvas),
                                          new_format=tv_tensors.BoundingBoxFormat.XYXY)
    return {"boxes": boxes, "labels": torch.tensor([a["category_id"] for a in raw_target]),
            "keypoints": tv_tensors.KeyPoints(triplets[..., :2].float(), canvas_size=canvas),
            "keypoints_visibility": triplets[..., 2].long()}


def test_torchvisions_wrapper_refuses_keypoints_so_fastloop_gives_keypoints_of_its_own(coco_people):
    root, ann_file = coco_people
    with pytest.raises(ValueError, match=r"Target keys \['keypoints'\] are not available"):
        torchvision.datasets.wrap_dataset_for_transforms_v2(_raw(root, ann_file), target_keys=["keypoints"])
    raw = _raw(root, ann_file)
    keys = ["image_id", "boxes", "labels", "keypoints", "keypoints_visibility"]
    dataset = fastloop.CocoDetection(root, ann_file, target_keys=keys)
    assert dataset.ids == raw.ids == [3, 8, 11]
    for i in range(len(dataset)):
        image, target = dataset[i]
        _, raw_target = raw[i]
        if not raw_target:
            assert target == {"image_id": raw.ids[i]}
            continue
        want = _expected(raw_target, tuple(image.shape[-2:]))
        assert set(target) == set(keys)
        assert isinstance(target["keypoints"], tv_tensors.KeyPoints)
        assert target["keypoints"].canvas_size == tuple(image.shape[-2:])
        assert target["keypoints"].shape == (len(raw_target), 17, 2)
        assert torch.equal(target["keypoints"].as_subclass(torch.Tensor), want["keypoints"].as_subclass(torch.Tensor))
        assert torch.equal(target["keypoints_visibility"], want["keypoints_visibility"])
    assert "keypoints" not in fastloop.CocoDetection(root, ann_file, target_keys="all").target_keys
    with pytest.raises(ValueError, match=r"Target keys \['keypoint'\] are not available"):
        fastloop.CocoDetection(root, ann_file, target_keys=["keypoint"])


def test_coco_keypoints_of_the_wrong_shape_are_a_value_error_naming_the_file(tmp_path):
    ann_file = tmp_path / "bad.json"
    ann_file.write_text(json.dumps({"images": [{"id": 1, "file_name": "a.png"}], "annotations": [
        {"id": 7, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "keypoints": [1, 2, 2, 3]}]}))
    with pytest.raises(ValueError, match=r"bad.json.*keypoints.*has 4 numbers.*triplets"):
        fastloop.CocoDetection(tmp_path, ann_file)
    ann_file.write_text(json.dumps({"images": [{"id": 1, "file_name": "a.png"}], "annotations": [
        {"id": 7, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "keypoints": [1, 2, 2]},
        {"id": 8, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]}]}))
    dataset = fastloop.CocoDetection(tmp_path, ann_file, target_keys=["keypoints"])
    with pytest.raises(ValueError, match=r"annotation id 8 .* has 0 keypoints"):
        dataset.target(0, (5, 5))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_loader_gives_keypoints_moved_through_the_transform(coco_people, workers):
    root, ann_file = coco_people
    transform = T.Compose([T.RandomHorizontalFlip(p=1), T.Pad((2, 3, 1, 0)), T.Resize((32, 40)),
                           T.CenterCrop((30, 36)), T.ClampKeyPoints(), T.ToDtype(torch.float32, scale=True)])
    keys = ["image_id", "boxes", "labels", "keypoints", "keypoints_visibility"]
    dataset = fastloop.CocoDetection(root, ann_file, target_keys=keys)
    loader = fastloop.Loader(dataset, transform=transform, batch_size=2, shuffle=False, drop_last=False,
                             workers=workers)
    got = [target for _, targets in loader for target in targets]
    raw = _raw(root, ann_file)
    assert len(got) == len(raw) == 3
    for index, target in enumerate(got):
        pil, raw_target = raw[index]
        if not raw_target:
            assert target == {"image_id": raw.ids[index]}
            continue
        image = tv_tensors.Image(F.pil_to_tensor(pil))
        want = _expected(raw_target, tuple(image.shape[-2:]))
        _, moved = transform(image, want)
        assert isinstance(target["keypoints"], tv_tensors.KeyPoints) and target["keypoints"].canvas_size == (30, 36)
        _assert_points(target["keypoints"], moved["keypoints"], index)
        torch.testing.assert_close(target["boxes"], moved["boxes"], atol=1e-3, rtol=0)
        assert torch.equal(target["labels"], moved["labels"])
        assert torch.equal(target["keypoints_visibility"], want["keypoints_visibility"])


def test_a_loader_sanitizes_keypoints_with_their_labels(coco_people):
    root, ann_file = coco_people
    transform = T.Compose([T.RandomRotation((40, 40)), T.CenterCrop(24), T.SanitizeKeyPoints(labels_getter="default")])
    with pytest.raises(ValueError, match=r"No keypoints were found in the sample"):  # image 11 has no person
        list(fastloop.Loader(fastloop.CocoDetection(root, ann_file, target_keys=["keypoints"]), transform=transform,
                             batch_size=3, shuffle=False, workers=1))
    ann_file = root / "people_only.json"
    dataset = fastloop.CocoDetection(root, ann_file, target_keys=["boxes", "labels", "keypoints"])
    got = [t for _, targets in fastloop.Loader(dataset, transform=transform, batch_size=3, shuffle=False, workers=1,
                                               drop_last=False) for t in targets]
    raw = _raw(root, ann_file)
    assert len(got) == len(raw) == 2
    dropped = 0
    for index, target in enumerate(got):
        pil, raw_target = raw[index]
        if not raw_target:
            continue
        image = tv_tensors.Image(F.pil_to_tensor(pil))
        _, moved = transform(image, _expected(raw_target, tuple(image.shape[-2:])))
        _assert_points(target["keypoints"], moved["keypoints"], index)
        assert torch.equal(target["labels"], moved["labels"])
        dropped += len(raw_target) - len(target["keypoints"])
    assert dropped > 0  # the crop leaves some persons with a point off the canvas
