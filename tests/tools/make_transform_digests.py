"""Writes tests/python/transform_digests.json: SHA-256 digests of fastloop's own batches for fixed seeds.

fastloop promises the same batches on any machine: its transforms restate torchvision's arithmetic in its own
C++ kernels (tests/python/kernel_parity.py), so their bits follow neither ATen's kernel choice
(``ATEN_CPU_CAPABILITY``) nor the CPU. The digests pin those bits: each case below is a torchvision v2 pipeline
run by ``fastloop.Loader`` (seed fixed, shuffle off, 1 and 2 workers) over images generated here, and its
digest is one SHA-256 over every tensor of every batch of the epoch (dtype, shape, bytes; boxes as float64).
tests/python/test_transform_digests.py recomputes them, natively and under ``ATEN_CPU_CAPABILITY=avx2`` and
``=default`` (scripts/test_capabilities.sh).

The inputs depend on no third-party arithmetic: the pixels are integer formulas (a gradient, a disc, a
rectangle, stripes) plus noise from numpy's seeded integer generator, the boxes and polygons of the
detection cases are integers and halves, and everything is written losslessly as PNG, so fastloop's decode
gives exactly the generated pixels (the test asserts that, and the inputs' own digest).

Usage: .venv/bin/python tests/tools/make_transform_digests.py [--out tests/python/transform_digests.json] [--check]
A changed digest means fastloop's batches changed on every machine: regenerate only with the reason stated in
the commit message (a fixed bug, a new parity rule).

Other CPUs than this one, emulated (fastloop's kernels compiled for AVX2 and for the x86-64 baseline are picked
by the CPU, not by ATEN_CPU_CAPABILITY; ~3 minutes each on 2 cores):
    qemu-x86_64 -cpu Nehalem .venv/bin/python tests/tools/make_transform_digests.py --check   # SSE4.2 only
    qemu-x86_64 -cpu Haswell .venv/bin/python tests/tools/make_transform_digests.py --check   # AVX2, no AVX-512
Measured at the commit that added this file (torch 2.14.1, qemu 7.2, an AVX-512 Xeon host): all digests equal
natively (ATen AVX512), under avx2 and default, and on both emulated CPUs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import sys
from typing import Any, Callable, Dict, List, NamedTuple, Sequence, Tuple

import numpy as np
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/python/transform_digests.json"
SEED = 20260060  # the Loader's seed for every case
BATCH_SIZE = 4
# (width, height) of the generated photos: odd, even, portrait, landscape; each at least 47 pixels a side, so
# a CenterCrop(40) after a warp that keeps the size always fits.
SIZES: Tuple[Tuple[int, int], ...] = ((61, 47), (96, 72), (80, 80), (47, 90), (120, 64), (73, 59), (64, 96),
                                      (100, 75))
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def photo(index: int, width: int, height: int) -> np.ndarray:
    """A photo-like uint8 ``[H, W, 3]`` image from integer formulas only: a colour gradient, a disc, a rectangle,
    diagonal stripes and noise from numpy's seeded integer generator (PCG64: the same integers everywhere).
    Image 2 keeps its levels within 70..169, so AutoContrast and Equalize have something to stretch."""
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)
    r = x * 255 // (width - 1)
    g = y * 255 // (height - 1)
    b = (x + 2 * y) * 200 // (width + 2 * height) + 30
    image = np.stack([r, g, b], -1)
    cx, cy, radius = width * (3 + index % 3) // 8, height // 2, min(width, height) // 4
    disc = (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2
    image[disc] = (220 - 20 * (index % 4), 40 + 25 * (index % 5), 90)
    rect = (x >= width // 8) & (x < width // 8 + width // 4) & (y >= height * 5 // 8) & (y < height * 7 // 8)
    image[rect] = (30, 180, 200 - 15 * (index % 3))
    stripes = ((x + 2 * y) // 5) % 2 == 1
    image[stripes & (y < height // 4)] //= 2
    noise = np.random.default_rng(1000 + index).integers(-10, 11, size=image.shape)
    image = np.clip(image + noise, 0, 255)
    if index == 2:
        image = 70 + image * 100 // 256
    return image.astype(np.uint8)


def _objects(index: int, width: int, height: int) -> List[Dict[str, Any]]:
    """The disc's and the rectangle's annotations of photo ``index`` (COCO: XYWH boxes, polygons), plus a box
    without a polygon reaching past the right edge; halves only, so the JSON holds them exactly."""
    cx, cy, radius = width * (3 + index % 3) // 8, height // 2, min(width, height) // 4
    octagon = []
    for dx, dy in ((1, 0), (0.5, 0.5), (0, 1), (-0.5, 0.5), (-1, 0), (-0.5, -0.5), (0, -1), (0.5, -0.5)):
        octagon += [cx + dx * radius + (0.5 if dx and dy else 0), cy + dy * radius]
    x0, y0, w, h = width // 8, height * 5 // 8, width // 4, height * 7 // 8 - height * 5 // 8
    return [
        {"bbox": [cx - radius, cy - radius, 2 * radius + 0.5, 2 * radius + 0.5], "category_id": 1 + index % 3,
         "segmentation": [octagon]},
        {"bbox": [x0, y0, w, h], "category_id": 7, "segmentation": [[x0, y0, x0 + w, y0, x0 + w, y0 + h, x0, y0 + h]]},
        {"bbox": [width - 10.5, 2, 20, height // 3], "category_id": 12,
         "segmentation": [[width - 10.5, 2, width - 1, 2, width - 1, 2 + height // 3]]},
    ]


def _class_map(index: int, width: int, height: int) -> np.ndarray:
    """Photo ``index``'s class map: 0 background, 1 the disc, 2 the rectangle, 255 a border row (VOC's void)."""
    y, x = np.mgrid[0:height, 0:width]
    cx, cy, radius = width * (3 + index % 3) // 8, height // 2, min(width, height) // 4
    classes = np.zeros((height, width), np.uint8)
    classes[(x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2] = 1
    classes[(x >= width // 8) & (x < width // 8 + width // 4) & (y >= height * 5 // 8) & (y < height * 7 // 8)] = 2
    classes[height - 1] = 255
    return classes


class Inputs(NamedTuple):
    """The files made by :func:`write_inputs` and the pixels written into them."""

    images: List[pathlib.Path]
    pixels: List[np.ndarray]  # [H, W, 3] uint8, as written
    annotations: pathlib.Path  # COCO instances JSON over `images`
    class_maps: List[pathlib.Path]


def write_inputs(folder: pathlib.Path) -> Inputs:
    """Writes the photos (RGB PNG), their class maps (greyscale PNG) and a COCO annotation file into ``folder``."""
    from PIL import Image

    images, pixels, maps, coco_images, annotations = [], [], [], [], []
    for index, (width, height) in enumerate(SIZES):
        image = photo(index, width, height)
        path = folder / f"photo{index}.png"
        Image.fromarray(image).save(path)
        images.append(path)
        pixels.append(image)
        maps.append(folder / f"photo{index}_classes.png")
        Image.fromarray(_class_map(index, width, height), mode="L").save(maps[-1])
        coco_images.append({"id": 100 + index, "file_name": path.name, "width": width, "height": height})
        for obj in _objects(index, width, height):
            annotations.append(dict(obj, id=len(annotations) + 1, image_id=100 + index, iscrowd=0,
                                    area=obj["bbox"][2] * obj["bbox"][3]))
    categories = [{"id": i, "name": f"class{i}"} for i in range(1, 13)]
    coco = folder / "instances.json"
    coco.write_text(json.dumps({"images": coco_images, "annotations": annotations, "categories": categories}))
    return Inputs(images, pixels, coco, maps)


def inputs_digest(inputs: Inputs) -> str:
    """The SHA-256 of the generated pixels and annotations: pins the inputs, so a changed batch digest is known
    to be fastloop's change and not numpy's."""
    h = hashlib.sha256()
    for pixels in inputs.pixels:
        h.update(repr(pixels.shape).encode() + pixels.tobytes())
    h.update(inputs.annotations.read_bytes())
    for index, (width, height) in enumerate(SIZES):
        h.update(_class_map(index, width, height).tobytes())
    return h.hexdigest()


class Case(NamedTuple):
    """A pipeline whose batches are digested: ``source`` is "files", "coco" or "segmentation"."""

    source: str
    transform: Callable[[], Any]  # makes the torchvision v2 object (made fresh: a transform holds no state)
    loader: Dict[str, Any] = {}  # other fastloop.Loader arguments


def _out(*ops: Any) -> Any:
    """``ops``, then the output stage of most cases: ToDtype(float32, scale=True) and ImageNet's Normalize."""
    import torchvision.transforms.v2 as T

    return T.Compose([*ops, T.ToDtype(torch.float32, scale=True), T.Normalize(MEAN, STD)])


def cases() -> Dict[str, Case]:
    """Every pipeline digested, by name: each warp, blend, resize, blur and pointwise operation, the AutoAugment
    family, RandomErasing, the containers, the detection and segmentation targets, and the output dtypes."""
    import torchvision.transforms.v2 as T
    from torchvision import tv_tensors
    from torchvision.transforms.v2 import AutoAugmentPolicy
    from torchvision.transforms import InterpolationMode as I

    crop = T.CenterCrop(40)  # after an operation that keeps each image's size: batches need one size
    files: Dict[str, Callable[[], Any]] = {
        # warps (functional/warp.cpp: fastloop's restated grid_sample)
        "affine_bilinear_fill": lambda: _out(T.RandomAffine(25, translate=(0.1, 0.15), scale=(0.8, 1.2),
                                                           shear=(-10, 10, -5, 5), interpolation=I.BILINEAR,
                                                           fill=[20, 120, 230]), crop),
        "affine_nearest_fill": lambda: _out(T.RandomAffine((-40, 40), shear=15, interpolation=I.NEAREST, fill=77),
                                            crop),
        "affine_center": lambda: _out(T.RandomAffine(10, translate=(0.2, 0.2), center=(7, 11),
                                                     interpolation=I.BILINEAR), crop),
        "rotation_bilinear_fill": lambda: _out(T.RandomRotation(30, interpolation=I.BILINEAR, fill=[255, 0, 128]),
                                               crop),
        "rotation_nearest_center": lambda: _out(T.RandomRotation((-90, 90), center=(10, 20)), crop),
        "rotation_expand": lambda: _out(T.RandomRotation(45, expand=True, interpolation=I.BILINEAR, fill=9),
                                        T.Resize((48, 48))),
        "rotation_expand_nearest": lambda: _out(T.RandomRotation((-170, 170), expand=True), T.CenterCrop(44)),
        "perspective_bilinear_fill": lambda: _out(T.RandomPerspective(0.5, p=1.0, fill=[40, 80, 160]), crop),
        "perspective_nearest": lambda: _out(T.RandomPerspective(0.7, p=0.75, interpolation=I.NEAREST), crop),
        # colour blends and the colour space (functional/color.cpp, hue.cpp, sharpness.cpp)
        "color_jitter": lambda: _out(T.ColorJitter(0.4, 0.4, 0.4, 0.1), crop),
        "brightness": lambda: _out(T.ColorJitter(brightness=(0.3, 1.8)), crop),
        "contrast": lambda: _out(T.ColorJitter(contrast=(0.2, 1.9)), crop),
        "saturation": lambda: _out(T.ColorJitter(saturation=(0.0, 2.5)), crop),
        "hue": lambda: _out(T.ColorJitter(hue=0.5), crop),
        "sharpness_up": lambda: _out(T.RandomAdjustSharpness(2.5, p=1.0), crop),
        "sharpness_down": lambda: _out(T.RandomAdjustSharpness(0.2, p=0.7), crop),
        "grayscale": lambda: _out(T.Grayscale(3), T.RandomGrayscale(p=0.5), crop),
        "photometric_distort": lambda: _out(T.RandomPhotometricDistort(p=1.0), crop),
        # resizes (functional/resize.cpp, image_resize.cpp)
        "resize_shrink_antialias": lambda: _out(T.Resize(40), T.CenterCrop(36)),
        "resize_enlarge_bilinear": lambda: _out(T.Resize((101, 130))),
        "resize_no_antialias": lambda: _out(T.Resize((29, 35), antialias=False)),
        "resize_bicubic_shrink": lambda: _out(T.Resize((37, 33), interpolation=I.BICUBIC)),
        "resize_bicubic_enlarge": lambda: _out(T.Resize((110, 97), interpolation=I.BICUBIC)),
        "resize_bicubic_no_antialias": lambda: _out(T.Resize((31, 43), interpolation=I.BICUBIC, antialias=False)),
        "resize_nearest": lambda: _out(T.Resize((41, 53), interpolation=I.NEAREST)),
        "resize_nearest_exact": lambda: _out(T.Resize((83, 45), interpolation=I.NEAREST_EXACT)),
        "resize_max_size": lambda: _out(T.Resize(36, max_size=40), T.CenterCrop(36)),
        "random_resized_crop_small": lambda: _out(T.RandomResizedCrop(32, scale=(0.08, 0.3))),
        "random_resized_crop_default": lambda: _out(T.RandomResizedCrop(32)),
        "random_resized_crop_large": lambda: _out(T.RandomResizedCrop((36, 28), scale=(0.9, 1.0), ratio=(0.5, 2.0))),
        "random_resized_crop_bicubic": lambda: _out(T.RandomResizedCrop(64, scale=(0.2, 1.0),
                                                                        interpolation=I.BICUBIC)),
        "random_resized_crop_nearest": lambda: _out(T.RandomResizedCrop(48, interpolation=I.NEAREST)),
        "crop_pad_flip": lambda: _out(T.RandomCrop(40, padding=4, padding_mode="reflect"), T.RandomHorizontalFlip(),
                                      T.RandomVerticalFlip(0.3)),
        "pad_edge_fill": lambda: _out(T.Pad((3, 5, 7, 2), padding_mode="edge"), T.Pad(2, fill=[1, 2, 3]),
                                      T.RandomCrop(44, pad_if_needed=True, padding_mode="symmetric")),
        # blur (functional/blur.cpp)
        "gaussian_blur": lambda: _out(T.GaussianBlur(5, sigma=(0.1, 2.0)), crop),
        "gaussian_blur_rect": lambda: _out(T.GaussianBlur((3, 7), sigma=1.5), crop),
        # pointwise (functional/lookup.cpp, histogram.cpp)
        "posterize": lambda: _out(T.RandomPosterize(3, p=1.0), crop),
        "solarize": lambda: _out(T.RandomSolarize(128, p=0.8), crop),
        "equalize": lambda: _out(T.RandomEqualize(p=1.0), crop),
        "autocontrast": lambda: _out(T.RandomAutocontrast(p=1.0), crop),
        "invert": lambda: _out(T.RandomInvert(p=0.6), crop),
        # the AutoAugment family: chains of the warps and the colour operations above
        "autoaugment_imagenet": lambda: _out(T.AutoAugment(AutoAugmentPolicy.IMAGENET), crop),
        "autoaugment_cifar10": lambda: _out(T.AutoAugment(AutoAugmentPolicy.CIFAR10, interpolation=I.BILINEAR,
                                                          fill=[10, 20, 30]), crop),
        "autoaugment_svhn": lambda: _out(T.AutoAugment(AutoAugmentPolicy.SVHN), crop),
        "randaugment": lambda: _out(T.RandAugment(2, 9), crop),
        "randaugment_bilinear_fill": lambda: _out(T.RandAugment(num_ops=3, magnitude=15, interpolation=I.BILINEAR,
                                                                fill=128), crop),
        "trivialaugment": lambda: _out(T.TrivialAugmentWide(), crop),
        "trivialaugment_bilinear": lambda: _out(T.TrivialAugmentWide(num_magnitude_bins=11,
                                                                     interpolation=I.BILINEAR), crop),
        "augmix": lambda: _out(T.AugMix(), crop),
        "augmix_all_ops": lambda: _out(T.AugMix(severity=5, mixture_width=2, chain_depth=2, alpha=0.5,
                                                all_ops=False, interpolation=I.BILINEAR), crop),
        # RandomErasing, on the normalised float image as torchvision's recipes place it
        "erasing_zero": lambda: T.Compose([crop, T.ToDtype(torch.float32, scale=True), T.Normalize(MEAN, STD),
                                           T.RandomErasing(p=1.0)]),
        "erasing_random": lambda: T.Compose([crop, T.ToDtype(torch.float32, scale=True), T.Normalize(MEAN, STD),
                                             T.RandomErasing(p=0.9, scale=(0.1, 0.5), value="random")]),
        "erasing_values": lambda: T.Compose([crop, T.ToDtype(torch.float32, scale=True),
                                             T.RandomErasing(p=1.0, ratio=(0.5, 2.0), value=[0.1, 0.2, 0.3])]),
        # containers
        "containers": lambda: _out(T.RandomOrder([T.RandomHorizontalFlip(), T.ColorJitter(0.3, 0.3)]),
                                   T.RandomChoice([T.RandomRotation(20), T.RandomPosterize(4, p=1.0)], p=[0.3, 0.7]),
                                   T.RandomApply([T.GaussianBlur(3)], p=0.5), crop),
        # the output stage (output_stage.h: one table per channel from uint8 to the batch's dtype)
        "output_float32_no_normalize": lambda: T.Compose([crop, T.ToDtype(torch.float32, scale=True)]),
    }
    table: Dict[str, Case] = {name: Case("files", make) for name, make in files.items()}
    for dtype in (torch.float16, torch.bfloat16):  # the Loader's dtype, and ToDtype's own
        name = str(dtype).replace("torch.", "")
        table[f"output_{name}"] = Case("files", lambda: _out(T.RandomResizedCrop(32)), {"dtype": dtype})
        table[f"output_to_dtype_{name}"] = Case("files", lambda dtype=dtype: T.Compose([
            T.RandomResizedCrop(32), T.ToDtype(dtype, scale=True), T.Normalize(MEAN, STD)]), {"dtype": dtype})
    table["output_channels_last_bfloat16"] = Case("files", lambda: _out(T.Resize((40, 44))),
                                                  {"dtype": torch.bfloat16, "channels_last": True})
    # detection: image, boxes (as float64) and masks through the geometric operations
    table["detection_ssd"] = Case("coco", lambda: T.Compose([
        T.RandomPhotometricDistort(p=1.0), T.RandomZoomOut(fill={tv_tensors.Image: (123, 117, 104), "others": 0}),
        T.RandomIoUCrop(),
        T.RandomHorizontalFlip(), T.Resize((48, 48)), T.SanitizeBoundingBoxes(),
        T.ToDtype(torch.float32, scale=True)]))
    table["detection_flip_resize"] = Case("coco", lambda: T.Compose([
        T.RandomHorizontalFlip(p=0.5), T.RandomVerticalFlip(p=0.5), T.Resize((40, 44)), T.ClampBoundingBoxes(),
        T.ConvertBoundingBoxFormat("CXCYWH"), T.ToDtype(torch.float32, scale=True)]))
    table["detection_scale_jitter"] = Case("coco", lambda: T.Compose([
        T.ScaleJitter((48, 48), scale_range=(0.3, 1.5)), T.RandomShortestSize([32, 36, 40], max_size=60),
        T.RandomCrop(40, pad_if_needed=True, fill={tv_tensors.Image: 114, "others": 0}),
        T.SanitizeBoundingBoxes(), T.ToDtype(torch.float32, scale=True)]))
    table["detection_warps"] = Case("coco", lambda: T.Compose([
        T.RandomAffine(15, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5, fill=50),
        T.RandomRotation(20, expand=True), T.RandomPerspective(0.4, p=1.0), T.Resize((44, 44)),
        T.SanitizeBoundingBoxes(), T.ToDtype(torch.float32, scale=True)]))
    table["segmentation"] = Case("segmentation", lambda: T.Compose([
        T.RandomResizedCrop(40, scale=(0.3, 1.0)), T.RandomHorizontalFlip(), T.RandomRotation(15, fill=0),
        T.ColorJitter(0.2, 0.2, 0.2), T.ToDtype(torch.float32, scale=True), T.Normalize(MEAN, STD)]))
    return table


def _update(h: "hashlib._Hash", value: Any) -> None:
    """Feeds ``value`` into ``h``: a tensor as its dtype, shape and bytes (boxes as float64); a dict by its
    sorted keys; lists and tuples item by item; other values by their repr."""
    from torchvision import tv_tensors

    if isinstance(value, torch.Tensor):
        if isinstance(value, tv_tensors.BoundingBoxes):
            h.update(f"boxes {value.format.name} {tuple(value.canvas_size)}".encode())
            value = value.as_subclass(torch.Tensor).double()
        value = value.as_subclass(torch.Tensor).contiguous()  # channels_last: digest the [B, C, H, W] values
        h.update(f"{value.dtype} {tuple(value.shape)}".encode())
        h.update(value.reshape(-1).view(torch.uint8).numpy().tobytes())
    elif isinstance(value, dict):
        for key in sorted(value):
            h.update(repr(key).encode())
            _update(h, value[key])
    elif isinstance(value, (list, tuple)):
        h.update(f"{type(value).__name__} {len(value)}".encode())
        for item in value:
            _update(h, item)
    else:
        h.update(repr(value).encode())


def batches_digest(batches: Sequence[Any]) -> str:
    """The SHA-256 of every tensor of ``batches`` (see :func:`_update`)."""
    h = hashlib.sha256()
    for batch in batches:
        _update(h, batch)
    return h.hexdigest()


def source(case: Case, inputs: Inputs) -> Any:
    """The fastloop data set a case reads."""
    import fastloop

    if case.source == "files":
        return fastloop.Files([str(p) for p in inputs.images], [i % 3 for i in range(len(inputs.images))])
    if case.source == "coco":
        return fastloop.CocoDetection(inputs.annotations.parent, inputs.annotations,
                                      target_keys=["image_id", "boxes", "labels", "masks"])
    return fastloop.SegmentationFiles(inputs.images, inputs.class_maps)


def run_case(case: Case, inputs: Inputs, workers: int) -> List[Any]:
    """One epoch of ``fastloop.Loader`` over the case's source: seed :data:`SEED`, no shuffle, every sample."""
    import fastloop

    loader = fastloop.Loader(source(case, inputs), transform=case.transform(), batch_size=BATCH_SIZE,
                             workers=workers, seed=SEED, shuffle=False, drop_last=False, **case.loader)
    return [batch for batch in loader]


def digests(inputs: Inputs, names: Sequence[str] = ()) -> Dict[str, str]:
    """Each case's digest (all cases, or ``names``), with 1 worker; raises when 2 workers give other batches."""
    table = cases()
    out = {}
    for name in names or table:
        one = batches_digest(run_case(table[name], inputs, workers=1))
        two = batches_digest(run_case(table[name], inputs, workers=2))
        if one != two:
            raise AssertionError(f"{name}: 1 and 2 workers give other batches")
        out[name] = one
    return out


def main() -> int:
    import tempfile

    import torchvision

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    parser.add_argument("--check", action="store_true",
                        help="write nothing: exit 1 naming the cases whose digests differ from --out's")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inputs = write_inputs(pathlib.Path(tmp))
        record = {
            "made_by": "tests/tools/make_transform_digests.py",
            "torch": torch.__version__.split("+")[0], "torchvision": torchvision.__version__.split("+")[0],
            "numpy": np.__version__, "seed": SEED, "batch_size": BATCH_SIZE,
            "inputs": inputs_digest(inputs),
            "digests": digests(inputs),
        }
    if args.check:
        committed = json.loads(args.out.read_text())
        changed = [name for name in sorted(set(committed["digests"]) | set(record["digests"]))
                   if committed["digests"].get(name) != record["digests"].get(name)]
        changed += ["inputs"] if committed["inputs"] != record["inputs"] else []
        capability = torch.backends.cpu.get_cpu_capability()
        print(f"ATen capability {capability}: {len(record['digests']) - len(changed)} of {len(record['digests'])} "
              f"digests equal {args.out}" + (f"; changed: {', '.join(changed)}" if changed else ""))
        return 1 if changed else 0
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {len(record['digests'])} digests to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
