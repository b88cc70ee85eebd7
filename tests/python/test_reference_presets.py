"""torchvision's reference presets (reference_presets.py: classification train with each policy and random erasing,
and eval; detection hflip, lsj, multiscale, ssd, ssdlite and eval; segmentation train and eval) through
``fastloop.Loader`` with 1 and 2 workers, against torchvision running the same objects.

fastloop draws its own random parameters, so torchvision replays them: each top-level transform in turn, on
the sample as fastloop's pipeline left it one transform earlier (``_C._transform_apply[_targets]`` of the
pipeline's prefix, with the draws of the same streams), with fastloop's draws for it (``_C._transform_draws``
at the size, and for RandomIoUCrop the boxes, it sees) given to torchvision's own ``transform()`` in place of
its ``make_params``. Each transform's result is held to its parity rule (tests/python/kernel_parity.py: flips,
crops and pads equal; resizes, warps and colour blends by their rules), boxes within 1e-3 px, masks and labels
equal; then the conversion to float, Normalize, RandomErasing and the target operations after it (box format,
sanitize, ToPureTensor), run by torchvision on fastloop's last uint8 sample, must equal the Loader's batch:
equal floats, the targets' values, dtypes and types (plain tensors after ToPureTensor).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import pytest
import torch
import torchvision.transforms.v2 as T
import torchvision.transforms.v2.functional as F
from torchvision import tv_tensors

import reference_presets as presets
from kernel_parity import (assert_chain_matches, assert_within_one_level, torch_blends_are_fastloops,
                           torch_resize_is_fastloops)

fastloop = pytest.importorskip("fastloop")
from fastloop.transforms import compile_transform  # noqa: E402

_C = fastloop._C
SEED = 20261207
WARPS = {"ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate"}
RESIZES = (T.RandomResizedCrop, T.Resize, T.ScaleJitter, T.RandomShortestSize, T.RandomResize)


# ---------------------------------------------------------------------------------------------- inputs
def _photo(rng: np.random.Generator, height: int, width: int, grey: bool = False) -> np.ndarray:
    """Smooth colour fields, edges and noise: photo-like content (PNG, so both sides decode the same pixels)."""
    y, x = np.mgrid[0:height, 0:width]
    channels = [np.sin(x / rng.uniform(4, 25) + rng.uniform(0, 6)) * np.cos(y / rng.uniform(4, 25)) for _ in range(3)]
    image = np.stack(channels, -1) * 90 + 128 + rng.normal(0, 10, (height, width, 3))
    image[height // 3:height // 2, width // 4:width // 2] += 60  # a bright patch: AutoContrast and Equalize act
    image = image.clip(0, 255).astype(np.uint8)
    return image.mean(-1, keepdims=True).astype(np.uint8).repeat(3, -1) if grey else image


def _write_png(path, pixels: np.ndarray) -> str:
    from PIL import Image

    Image.fromarray(pixels.squeeze()).save(path)
    return str(path)


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> Tuple[List[str], List[int]]:
    """PNG photos of varied sizes and aspect ratios, one grey."""
    root = tmp_path_factory.mktemp("presets")
    rng = np.random.default_rng(11)
    sizes = [(72, 96), (96, 72), (80, 80), (61, 97), (90, 60), (70, 110)]
    paths = [_write_png(root / f"{i}.png", _photo(rng, h, w, grey=i == 4)) for i, (h, w) in enumerate(sizes)]
    return paths, [i % 3 for i in range(len(paths))]


@pytest.fixture(scope="module")
def coco(tmp_path_factory):
    """A COCO set of PNG photos with boxes and polygon masks, some boxes tiny or at the borders."""
    import json

    root = tmp_path_factory.mktemp("presets_coco")
    rng = np.random.default_rng(12)
    images, annotations = [], []
    for image_id, (h, w) in enumerate([(60, 80), (72, 56), (64, 64), (50, 90)], start=1):
        _write_png(root / f"{image_id}.png", _photo(rng, h, w))
        images.append({"id": image_id, "file_name": f"{image_id}.png", "height": h, "width": w})
        for k in range(int(rng.integers(2, 6))):
            bw, bh = float(rng.uniform(2, w * 0.6)), float(rng.uniform(2, h * 0.6))
            x0, y0 = float(rng.uniform(0, w - bw)), float(rng.uniform(0, h - bh))
            polygon = [x0, y0, x0 + bw, y0, x0 + bw, y0 + bh, x0, y0 + bh]
            annotations.append({"id": 100 * image_id + k, "image_id": image_id, "category_id": int(rng.integers(1, 4)),
                                "bbox": [x0, y0, bw, bh], "area": bw * bh, "iscrowd": 0, "segmentation": [polygon]})
    ann = root / "instances.json"
    ann.write_text(json.dumps({"images": images, "annotations": annotations,
                               "categories": [{"id": c, "name": f"c{c}"} for c in (1, 2, 3)]}))
    return fastloop.CocoDetection(root, ann, target_keys=["boxes", "labels", "masks"])


@pytest.fixture(scope="module")
def segmentation(tmp_path_factory):
    """Photos with class maps (values 0-3 and 255 borders), of sizes RandomResize never shrinks below the crop."""
    root = tmp_path_factory.mktemp("presets_seg")
    rng = np.random.default_rng(13)
    images, masks = [], []
    for i, (h, w) in enumerate([(64, 80), (80, 64), (70, 70), (66, 100)]):
        images.append(_write_png(root / f"{i}.png", _photo(rng, h, w)))
        y, x = np.mgrid[0:h, 0:w]
        mask = ((x // 17 + y // 13) % 4).astype(np.uint8)
        mask[(x % 17 == 0) | (y % 13 == 0)] = 255
        masks.append(_write_png(root / f"{i}_mask.png", mask))
    return fastloop.SegmentationFiles(images, masks)


# ---------------------------------------------------------------------------------------------- replays
def _draw(spec: str, k: int, size: Tuple[int, int], index: int, boxes: Optional[torch.Tensor] = None) -> dict:
    """fastloop's draws of top-level transform k for sample `index` of an image of `size` (and `boxes`)."""
    drawn = _C._transform_draws(spec, size[0], size[1], SEED, index + 1, boxes=boxes)
    return {name: list(values) for name, values in drawn[index][k].items()}


def _with_params(transform: T.Transform, params: Dict[str, Any], *inputs: Any) -> Any:
    """torchvision's `transform` on `inputs` with `params` in place of its make_params (and its p as 1)."""
    transform.make_params = lambda flat_inputs: params
    p = getattr(transform, "p", None)
    try:
        if p is not None:
            transform.p = 1.0
        return transform(*inputs)
    finally:
        del transform.make_params
        if p is not None:
            transform.p = p


def _auto_augment(t: T.Transform, d: dict, image: torch.Tensor) -> Tuple[torch.Tensor, List[str]]:
    """The AutoAugment family with fastloop's draws through torchvision's own op code; returns the op names."""
    if isinstance(t, T.AugMix):
        space = t._AUGMENTATION_SPACE if t.all_ops else t._PARTIAL_AUGMENTATION_SPACE
        names = list(space.keys())
        m, weights = torch.tensor(d["beta"], dtype=torch.float32), torch.tensor(d["weights"], dtype=torch.float32)
        mix, ops = m[0] * image, iter(zip(d["op_index"], d["magnitude"]))
        for i, depth in enumerate(d["depth"]):
            aug = image
            for _ in range(int(depth)):
                op, magnitude = next(ops)
                aug = t._apply_image_or_video_transform(aug, names[int(op)], magnitude, interpolation=t.interpolation,
                                                        fill=t._fill)
            mix.add_(weights[i] * aug)
        return mix.to(torch.uint8), [names[int(op)] for op in d["op_index"]]
    if "policy_index" in d:
        policy = t._policies[int(d["policy_index"][0])]
        ops = [(step[0], m) for step, a, m in zip(policy, d["applied"], d["magnitude"]) if a == 1.0]
    else:
        names = list(t._AUGMENTATION_SPACE.keys())
        ops = [(names[int(i)], m) for i, m in zip(d["op_index"], d["magnitude"])]
    for name, magnitude in ops:
        image = t._apply_image_or_video_transform(image, name, magnitude, interpolation=t.interpolation, fill=t._fill)
    return image, [name for name, _ in ops]


def _params(t: Any, d: dict, size: Tuple[int, int]) -> Optional[Dict[str, Any]]:
    """torchvision's make_params of `t` from fastloop's draws `d`; None: the transform does not apply."""
    first = {k: int(v[0]) for k, v in d.items() if k in ("top", "left", "height", "width") and v}
    if isinstance(t, (T.RandomHorizontalFlip, T.RandomVerticalFlip)):
        return {} if d["flip"][0] else None
    if isinstance(t, T.RandomResizedCrop):
        return first
    if isinstance(t, (T.ScaleJitter, T.RandomShortestSize, T.RandomResize)):
        return {"size": [int(v) for v in d["size"]]}
    if isinstance(t, T.RandomZoomOut):
        return {"padding": [int(v) for v in d["padding"]]} if d["apply"][0] else None
    if isinstance(t, T.RandomIoUCrop):
        if "top" not in d:  # the option "leave the sample as it is"
            return None
        return dict(first, is_within_crop_area=torch.tensor([bool(v) for v in d["is_within_crop_area"]]))
    if isinstance(t, T.RandomCrop):
        return dict(first, needs_crop=(first["height"], first["width"]) != size, needs_pad=False, padding=[0, 0, 0, 0])
    if isinstance(t, T.RandomPhotometricDistort):
        out = {k: (d[k][0] if d[k] else None) for k in ("brightness_factor", "contrast_factor", "saturation_factor",
                                                        "hue_factor")}
        out["contrast_before"] = bool(d["contrast_before"][0])
        out["channel_permutation"] = torch.tensor([int(v) for v in d["channel_permutation"]]) if d["channel_permutation"] else None
        return out
    raise AssertionError(f"no replay for {t!r}")


def _fixed_size_crop(spec: str, d: dict, image, target) -> Tuple[Any, Dict[str, Any]]:
    """The references' FixedSizeCrop with fastloop's draws (crop, drop emptied boxes, pad: masks with 0), via
    v2.functional."""
    fill = presets.DETECTION_MEAN
    if (int(d["height"][0]), int(d["width"][0])) != tuple(image.shape[-2:]):
        image = F.crop(image, *(int(d[k][0]) for k in ("top", "left", "height", "width")))
        boxes = F.crop(target["boxes"], *(int(d[k][0]) for k in ("top", "left", "height", "width")))
        wh = F.convert_bounding_box_format(F.clamp_bounding_boxes(boxes), new_format="XYWH")[..., 2:]
        valid = torch.all(wh > 0, dim=-1)
        masks = F.crop(target["masks"], *(int(d[k][0]) for k in ("top", "left", "height", "width")))
        target = {"boxes": F.clamp_bounding_boxes(tv_tensors.wrap(boxes[valid], like=boxes)),
                  "masks": tv_tensors.wrap(masks[valid], like=masks), "labels": target["labels"][valid]}
    padding = [int(v) for v in d["padding"]]
    if any(padding):
        image = F.pad(image, padding, fill=list(fill))
        target = dict(target, boxes=F.pad(target["boxes"], padding), masks=F.pad(target["masks"], padding, fill=0))
    return image, target


# ---------------------------------------------------------------------------------------------- the stages
def _image_rule(t: Any, d: dict, got: torch.Tensor, want: torch.Tensor, what: Any, ops: List[str] = ()) -> None:
    """One transform's image against torchvision's by its parity rule."""
    if isinstance(t, RESIZES):
        assert_within_one_level(got, want, exact=torch_resize_is_fastloops(), what=what)
    elif isinstance(t, (T.RandAugment, T.TrivialAugmentWide, T.AutoAugment, T.AugMix)):
        stretches = any(name in ("AutoContrast", "Equalize") for name in ops)
        if any(name in WARPS for name in ops):
            assert_chain_matches(got, want, False, what, stretches_levels=stretches)
        else:
            assert_chain_matches(got, want, False, what, exact=torch_blends_are_fastloops(), stretches_levels=stretches)
    elif isinstance(t, T.RandomPhotometricDistort):
        stretches = d["hue_factor"] and (d["brightness_factor"] or d["saturation_factor"] or (
            d["contrast_factor"] and d["contrast_before"][0]))
        assert_chain_matches(got, want, False, what, exact=torch_blends_are_fastloops(), stretches_levels=bool(stretches))
    else:
        assert torch.equal(got, want), what


def _uint8_end(transforms: Tuple[Any, ...]) -> int:
    """The number of top-level transforms before the conversion to float."""
    return next(k for k, t in enumerate(transforms) if isinstance(t, T.ToDtype))


def _check_image_stages(transforms: Tuple[Any, ...], image: torch.Tensor, index: int) -> torch.Tensor:
    """Each uint8 transform of an image-only preset replayed by torchvision from fastloop's previous result;
    returns fastloop's last uint8 image."""
    current = image
    for k in range(_uint8_end(transforms)):
        t, prefix = transforms[k], compile_transform(list(transforms[:k + 1]))
        got = _C._transform_apply(prefix, image, SEED, index)
        if isinstance(t, (T.PILToTensor, T.ToImage, T.Resize, T.CenterCrop)):  # no draws: torchvision's own call
            want, d, ops = t(current), {}, []
        else:
            d = _draw(prefix, k, tuple(current.shape[-2:]), index)
            if isinstance(t, (T.RandAugment, T.TrivialAugmentWide, T.AutoAugment, T.AugMix)):
                want, ops = _auto_augment(t, d, current)
            else:
                params, ops = _params(t, d, tuple(current.shape[-2:])), []
                want = current if params is None else _with_params(t, params, current)
        _image_rule(t, d, got, want, (index, k, t, d, ops), ops)
        current = got
    return current


def _image_tail(transforms: Tuple[Any, ...], image: torch.Tensor, spec: str, index: int) -> torch.Tensor:
    """The conversion to float and what follows it, by torchvision, on fastloop's last uint8 image."""
    x = image
    for k in range(_uint8_end(transforms), len(transforms)):
        t = transforms[k]
        if isinstance(t, T.RandomErasing):
            d = _draw(spec, k, tuple(x.shape[-2:]), index)
            if d["erase"][0]:
                params = {"i": int(d["i"][0]), "j": int(d["j"][0]), "h": int(d["h"][0]), "w": int(d["w"][0]),
                          "v": torch.tensor(t.value, dtype=x.dtype)[:, None, None]}
                x = _with_params(t, params, x)
        else:
            x = t(x)
    return x


CLASSIFICATION = {
    "train": lambda: presets.classification_train(48),
    "train-ra": lambda: presets.classification_train(48, "ra", random_erase_prob=0.25),
    "train-ta_wide": lambda: presets.classification_train(48, "ta_wide", random_erase_prob=0.25),
    "train-augmix": lambda: presets.classification_train(48, "augmix"),
    "train-imagenet": lambda: presets.classification_train(48, "imagenet", random_erase_prob=0.1),
    "eval": lambda: presets.classification_eval(48, 55),
}


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("name", list(CLASSIFICATION))
def test_classification_preset_equals_torchvision(name, workers, photos):
    preset = CLASSIFICATION[name]()
    transforms = presets.flattened(preset)
    spec = compile_transform(preset)
    files = fastloop.Files(*photos)
    loader = fastloop.Loader(files, transform=preset, batch_size=4, shuffle=False, drop_last=False, seed=SEED,
                             workers=workers)
    got = torch.cat([images for images, _ in loader])
    assert got.shape == (len(photos[0]), 3, 48, 48) and got.dtype == torch.float32
    for index, path in enumerate(photos[0]):
        image = torchvision_decode(path)
        last = _check_image_stages(transforms, image, index)
        want = _image_tail(transforms, last, spec, index)
        assert type(want) is torch.Tensor and torch.equal(got[index], want), (name, index)


def torchvision_decode(path: str) -> torch.Tensor:
    """The image as torchvision's reference reads it: decoded, RGB, uint8 CHW."""
    from torchvision.io import ImageReadMode, decode_image

    return decode_image(path, mode=ImageReadMode.RGB)


# ---------------------------------------------------------------------------------------------- detection
def _tv_target(boxes: torch.Tensor, masks: torch.Tensor, labels: torch.Tensor, size: Tuple[int, int]) -> dict:
    return {"boxes": tv_tensors.BoundingBoxes(boxes.float(), format="XYXY", canvas_size=size),
            "masks": tv_tensors.Mask(masks), "labels": labels}


def _check_detection_stages(transforms: Tuple[Any, ...], image, boxes, masks, labels, index: int):
    """Each uint8 transform of a detection preset replayed by torchvision from fastloop's previous sample;
    returns fastloop's last uint8 sample (image, XYXY float64 boxes, masks, labels)."""
    state = (image, boxes.double(), masks, labels)
    for k in range(_uint8_end(transforms)):
        t, prefix = transforms[k], compile_transform(list(transforms[:k + 1]))
        got_image, got_boxes, fmt, got_labels, _, got_masks = _C._transform_apply_targets(
            prefix, image, boxes.double(), masks, True, labels, SEED, index)
        assert fmt == "XYXY"
        size = tuple(state[0].shape[-2:])
        current = (tv_tensors.Image(state[0]), _tv_target(state[1], state[2], state[3], size))
        d = {}
        if isinstance(t, (T.PILToTensor, T.ToImage)):
            want_image, want = t(*current)
        elif isinstance(t, str):  # FixedSizeCrop's spec
            d = _draw(prefix, k, size, index, boxes=state[1])
            want_image, want = _fixed_size_crop(t, d, *current)
        else:
            d = _draw(prefix, k, size, index, boxes=state[1])  # RandomIoUCrop draws by them
            params = _params(t, d, size)
            want_image, want = current if params is None else _with_params(t, params, *current)
            if isinstance(t, T.RandomIoUCrop) and params is not None:  # fastloop keeps the dropped boxes too
                assert torch.equal(got_labels, state[3])
        what = (index, k, t, d)
        _image_rule(t, d, got_image, want_image.as_subclass(torch.Tensor), what)
        torch.testing.assert_close(got_boxes, want["boxes"].as_subclass(torch.Tensor).double(), atol=1e-3, rtol=0,
                                   msg=lambda m: f"{what}: {m}")
        assert torch.equal(got_masks, want["masks"].as_subclass(torch.Tensor)), what
        assert torch.equal(got_labels, want["labels"]), what
        state = (got_image, got_boxes, got_masks, got_labels)
    return state


DETECTION = ["hflip", "lsj", "multiscale", "ssd", "ssdlite", "eval"]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("name", DETECTION)
def test_detection_preset_equals_torchvision(name, workers, coco):
    preset = presets.detection_eval() if name == "eval" else presets.detection_train(name)
    transforms = presets.flattened(preset)
    spec = compile_transform(list(transforms))
    loader = fastloop.Loader(coco, transform=spec, batch_size=2, shuffle=False, drop_last=False, seed=SEED,
                             workers=workers)
    got = [(image, target) for images, targets in loader for image, target in zip(images, targets)]
    assert len(got) == len(coco)
    for index, (got_image, got_target) in enumerate(got):
        image, target = coco[index]
        last = _check_detection_stages(transforms, image.as_subclass(torch.Tensor),
                                       target["boxes"].as_subclass(torch.Tensor), target["masks"].as_subclass(torch.Tensor),
                                       target["labels"], index)
        sample = (tv_tensors.Image(last[0]), _tv_target(last[1], last[2], last[3], tuple(last[0].shape[-2:])))
        for t in transforms[_uint8_end(transforms):]:  # to float, XYXY, sanitized, plain tensors
            sample = t(*sample)
        want_image, want = sample
        assert type(got_image) is type(want_image) is torch.Tensor and torch.equal(got_image, want_image), index
        for key in ("boxes", "masks", "labels"):
            assert type(got_target[key]) is type(want[key]) is torch.Tensor, (key, type(got_target[key]))
            assert got_target[key].dtype == want[key].dtype, key
        torch.testing.assert_close(got_target["boxes"], want["boxes"], atol=1e-3, rtol=0)
        assert torch.equal(got_target["masks"], want["masks"]) and torch.equal(got_target["labels"], want["labels"])


def test_the_detection_presets_compile_as_torchvision_writes_them():
    """What was refused before: ToPureTensor, a box operation after ToDtype, the ssd preset's defaultdict fill."""
    spec = compile_transform(presets.detection_train("ssd"))
    # the defaultdict's default is never used by torchvision (_get_fill): images are padded with 0, as here
    assert "RandomZoomOut(fill=(('Mask', 0),), " in spec
    assert spec.endswith("ToDtype(torch.float32, scale=True), ConvertBoundingBoxFormat(format=BoundingBoxFormat.XYXY), "
                         "SanitizeBoundingBoxes(min_size=1.0, min_area=1.0, labels_getter='default'), ToPureTensor()")
    hflip = compile_transform(presets.detection_train("hflip"))  # its box operations after ToDtype: on images alone
    with pytest.raises(TypeError, match="ConvertBoundingBoxFormat.*bounding boxes"):  # (an image folder) refused
        _C._transform_apply(hflip, torch.zeros(3, 8, 8, dtype=torch.uint8), SEED, 0)


# ---------------------------------------------------------------------------------------------- segmentation
def _check_segmentation_stages(transforms: Tuple[Any, ...], image, mask, index: int):
    """As _check_detection_stages, for an image and its class map (a Mask [1, H, W])."""
    state = (image, mask)
    for k in range(_uint8_end(transforms)):
        t, prefix = transforms[k], compile_transform(list(transforms[:k + 1]))
        got_image, _, _, _, _, got_mask = _C._transform_apply_targets(prefix, image, None, mask, False,
                                                                      torch.zeros(0, dtype=torch.int64), SEED, index)
        size = tuple(state[0].shape[-2:])
        current = (state[0], tv_tensors.Mask(state[1]))  # the image a plain tensor, as the references' PILToTensor
        d = {}
        if isinstance(t, (T.PILToTensor, T.ToImage, T.Resize)):  # no draws
            want_image, want_mask = t(*current)
        else:
            d = _draw(prefix, k, size, index)
            params = _params(t, d, size)
            want_image, want_mask = current if params is None else _with_params(t, params, *current)
        _image_rule(t, d, got_image, want_image.as_subclass(torch.Tensor), (index, k, t, d))
        assert torch.equal(got_mask, want_mask.as_subclass(torch.Tensor)), (index, k, t, d)
        state = (got_image, got_mask)
    return state


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("name", ["train", "eval"])
def test_segmentation_preset_equals_torchvision(name, workers, segmentation):
    if name == "train":
        preset = presets.segmentation_train(base_size=64, crop_size=32, pad_if_smaller=False)
    else:
        preset = presets.segmentation_eval(base_size=40)
    transforms = presets.flattened(preset)
    loader = fastloop.Loader(segmentation, transform=preset, batch_size=1, shuffle=False, drop_last=False, seed=SEED,
                             workers=workers)
    got = [(images[0], masks[0]) for images, masks in loader]
    assert len(got) == len(segmentation)
    for index, (got_image, got_mask) in enumerate(got):
        image, mask = segmentation[index]
        last = _check_segmentation_stages(transforms, image.as_subclass(torch.Tensor), mask.as_subclass(torch.Tensor),
                                          index)
        sample = (last[0], tv_tensors.Mask(last[1]))
        for t in transforms[_uint8_end(transforms):]:
            sample = t(*sample)
        want_image, want_mask = sample
        assert type(got_mask) is type(want_mask) is torch.Tensor
        assert got_mask.dtype == want_mask.dtype == (torch.int64 if name == "train" else torch.uint8)
        assert torch.equal(got_image, want_image) and torch.equal(got_mask, want_mask[0]), index


def test_the_references_own_pad_if_smaller_is_refused_by_name():
    preset = presets.segmentation_train(base_size=64, crop_size=32)
    with pytest.raises(TypeError, match="PadIfSmaller is not a torchvision transform"):
        compile_transform(preset)
