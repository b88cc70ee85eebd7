"""Image operations after the conversion to float (``ToDtype(torch.float32, scale=True)`` first, as torchvision
accepts), on float images with torchvision's float semantics: no rounding to uint8 between operations.

fastloop runs them with ATen's own ops in torchvision's order (src/fastloop/data/transforms/float_ops.cpp), so
the values are torchvision's on the machine that runs them: compared here within 1e-6 (float32; measured equal,
bit for bit, on an AVX-512 Xeon natively, under ATEN_CPU_CAPABILITY=avx2 and default, and with MKL held to AVX2). Random operations replay fastloop's draws (``_C._transform_draws``) through torchvision's
own kernels, each at the size the image has when it comes. Also: GaussianNoise on uint8 and float images (its
kernel against torchvision's with the same standard normals, its normals' distribution), the operations fastloop
does not run on float images (TypeError naming them), and the same through ``fastloop.Loader`` with 1 and 2
workers, detection targets included.
"""

from __future__ import annotations

import math
from typing import Any, List
from unittest import mock

import numpy as np
import pytest
import torch
import torchvision.transforms.v2 as T
import torchvision.transforms.v2.functional as F
from torchvision import tv_tensors

fastloop = pytest.importorskip("fastloop")
from fastloop.transforms import compile_transform  # noqa: E402

_C = fastloop._C
SEED = 20261208
TO_FLOAT = T.ToDtype(torch.float32, scale=True)
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def _photo(seed: int, height: int, width: int) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    channels = [np.sin(x / rng.uniform(4, 20) + rng.uniform(0, 6)) * np.cos(y / rng.uniform(4, 20)) for _ in range(3)]
    image = (np.stack(channels, 0) * 100 + 128 + rng.normal(0, 12, (3, height, width))).clip(0, 255)
    return torch.from_numpy(image.astype(np.uint8))


@pytest.fixture(scope="module")
def images() -> List[torch.Tensor]:
    return [_photo(1, 48, 64), _photo(2, 61, 45), _photo(3, 40, 40)]


def _draw(spec: str, k: int, image: torch.Tensor, index: int) -> dict:
    h, w = image.shape[-2:]
    return {name: list(v) for name, v in _C._transform_draws(spec, h, w, SEED, index + 1)[index][k].items()}


def _replay(transforms: List[Any], index: int, first: int = 0) -> Any:
    """torchvision's result of transforms[first:] on an image, with fastloop's draws of those positions for the
    random ones."""
    spec = compile_transform(transforms)

    def run(image: torch.Tensor) -> torch.Tensor:
        x = image
        for k, t in list(enumerate(transforms))[first:]:
            if isinstance(t, T.RandomResizedCrop):
                d = _draw(spec, k, x, index)
                x = F.resized_crop(x, *(int(d[n][0]) for n in ("top", "left", "height", "width")), size=t.size,
                                   interpolation=t.interpolation, antialias=t.antialias)
            elif isinstance(t, (T.RandomHorizontalFlip, T.RandomVerticalFlip)):
                if _draw(spec, k, x, index)["flip"][0]:
                    x = F.horizontal_flip(x) if isinstance(t, T.RandomHorizontalFlip) else F.vertical_flip(x)
            elif isinstance(t, T.ColorJitter):
                d = _draw(spec, k, x, index)
                kernels = [F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue]
                names = ["brightness_factor", "contrast_factor", "saturation_factor", "hue_factor"]
                for fn in d["fn_idx"]:
                    if d[names[int(fn)]]:
                        x = kernels[int(fn)](x, d[names[int(fn)]][0])
            elif isinstance(t, (T.RandomInvert, T.RandomGrayscale)):
                if _draw(spec, k, x, index)["apply"][0]:
                    x = F.invert(x) if isinstance(t, T.RandomInvert) else F.rgb_to_grayscale(x, x.shape[0])
            elif isinstance(t, T.GaussianBlur):
                sigma = _draw(spec, k, x, index)["sigma"][0]
                x = F.gaussian_blur(x, list(t.kernel_size), [sigma, sigma])
            elif isinstance(t, T.RandomCrop):
                d = _draw(spec, k, x, index)
                padding = [int(v) for v in d["padding"]]
                if any(padding):
                    x = F.pad(x, padding, fill=t.fill[tv_tensors.Image] if isinstance(t.fill, dict) else t.fill)
                x = F.crop(x, int(d["top"][0]), int(d["left"][0]), int(d["height"][0]), int(d["width"][0]))
            elif isinstance(t, T.RandomErasing):
                d = _draw(spec, k, x, index)
                if d["erase"][0]:
                    v = torch.tensor(t.value)[:, None, None]
                    x = F.erase(x, int(d["i"][0]), int(d["j"][0]), int(d["h"][0]), int(d["w"][0]), v)
            else:
                x = t(x)
        return x

    return run


FLOAT_PIPELINES = [
    [TO_FLOAT, T.Resize(40), T.CenterCrop(32)],
    [TO_FLOAT, T.Resize(30, interpolation=T.InterpolationMode.BICUBIC), T.CenterCrop(36)],  # a crop past the image
    [TO_FLOAT, T.Resize((20, 50), interpolation=T.InterpolationMode.NEAREST)],
    [TO_FLOAT, T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.RandomVerticalFlip()],
    [TO_FLOAT, T.ColorJitter(0.4, 0.4, 0.4, 0.1)],
    [TO_FLOAT, T.ColorJitter(hue=0.5)],
    [TO_FLOAT, T.RandomInvert(0.7), T.RandomGrayscale(0.5), T.Grayscale(3)],
    [TO_FLOAT, T.GaussianBlur(5, sigma=(0.3, 2.0)), T.GaussianBlur((3, 7))],
    [TO_FLOAT, T.RandomCrop(36, padding=4, fill=0.25)],
    [TO_FLOAT, T.Normalize(MEAN, STD), T.Resize(33), T.RandomErasing(p=1.0, value=[0.5, -1.0, 2.0])],
    [T.ToDtype(torch.float64, scale=True), T.Resize(40), T.ToDtype(torch.float32), T.Normalize(MEAN, STD)],
    [T.RandomResizedCrop(40), TO_FLOAT, T.ColorJitter(0.4, 0.4, 0.4), T.Normalize(MEAN, STD), T.ToPureTensor()],
]


@pytest.mark.parametrize("transforms", FLOAT_PIPELINES, ids=lambda ts: ", ".join(type(t).__name__ for t in ts))
def test_operations_after_the_conversion_run_on_float_images_as_torchvision(transforms, images):
    spec = compile_transform(transforms)
    for index in range(6):
        image = images[index % len(images)]
        got = _C._transform_output(spec, image, SEED, index)
        if isinstance(transforms[0], T.ToDtype):
            want = _replay(transforms, index)(image)
        else:  # the uint8 part as fastloop made it (its bytes are tested elsewhere), then torchvision's float part
            want = _replay(transforms, index, 1)(_C._transform_apply(compile_transform(transforms[:1]), image, SEED, index))
        assert got.shape == want.shape and got.dtype == torch.float32, (got.shape, want.shape)
        torch.testing.assert_close(got, want.float(), atol=1e-6, rtol=0, msg=lambda m: f"{spec} #{index}: {m}")


# ---------------------------------------------------------------------------------------------- GaussianNoise
@pytest.mark.parametrize("dtype", [torch.uint8, torch.float32])
@pytest.mark.parametrize("mean,sigma,clip", [(0.0, 0.1, True), (0.2, 0.5, True), (-0.1, 0.3, False)])
def test_gaussian_noise_adds_torchvisions_noise_for_the_same_normals(dtype, mean, sigma, clip, images):
    transform = T.GaussianNoise(mean=mean, sigma=sigma, clip=clip)
    spec = compile_transform([TO_FLOAT, transform] if dtype == torch.float32 else [transform])
    for index in range(3):
        image = images[index][:, :20, :24].contiguous()
        position = 1 if dtype == torch.float32 else 0
        z = torch.tensor(_draw(spec, position, image, index)["noise"], dtype=torch.float32)
        z = z.view(3, 20, 24)
        x = TO_FLOAT(image) if dtype == torch.float32 else image
        with mock.patch("torch.randn_like", lambda t, **kw: z.to(kw.get("dtype", t.dtype))):
            want = transform(x)
        got = (_C._transform_output(spec, image, SEED, index) if dtype == torch.float32
               else _C._transform_apply(spec, image, SEED, index))
        assert got.dtype == want.dtype and torch.equal(got, want), (spec, index, (got.double() - want.double()).abs().max())


def test_gaussian_noise_draws_standard_normals():
    spec = "GaussianNoise()"
    z = np.asarray(_C._transform_draws(spec, 60, 60, SEED, 1)[0][0]["noise"])
    assert len(z) == 3 * 60 * 60
    # Kolmogorov-Smirnov against N(0, 1) at 0.1 %
    z = np.sort(z)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))
    d = max(np.abs(cdf - np.arange(1, len(z) + 1) / len(z)).max(), np.abs(cdf - np.arange(len(z)) / len(z)).max())
    assert d < 1.949 / math.sqrt(len(z)), d
    with pytest.raises(ValueError, match="sigma shouldn't be negative"):
        compile_transform(T.GaussianNoise(sigma=-1))


# ---------------------------------------------------------------------------------------------- refusals
def test_operations_fastloop_does_not_run_on_float_images_are_refused_by_name():
    with pytest.raises(TypeError, match=r"TrivialAugmentWide\(.*on a float image.*ColorJitter.*RandomRotation.*Resize"):
        compile_transform([TO_FLOAT, T.TrivialAugmentWide()])
    with pytest.raises(TypeError, match=r"RandomPosterize.*on a float image"):
        compile_transform([TO_FLOAT, T.RandomPosterize(4)])
    with pytest.raises(TypeError, match="converting the float image back to uint8"):
        compile_transform([TO_FLOAT, T.Resize(10), T.ToDtype(torch.uint8, scale=True)])


# ---------------------------------------------------------------------------------------------- through the Loader
@pytest.mark.parametrize("workers", [1, 2])
def test_a_loader_runs_a_pipeline_that_converts_first(workers, tmp_path, images):
    from PIL import Image

    paths = []
    for i in range(5):
        paths.append(str(tmp_path / f"{i}.png"))
        Image.fromarray(images[i % 3].permute(1, 2, 0).numpy()).save(paths[-1])
    transform = T.Compose([T.ToImage(), TO_FLOAT, T.RandomResizedCrop(32), T.RandomHorizontalFlip(),
                           T.ColorJitter(0.3, 0.3, 0.3, 0.05), T.GaussianBlur(3), T.Normalize(MEAN, STD),
                           T.RandomErasing(p=0.5), T.ToPureTensor()])
    loader = fastloop.Loader(fastloop.Files(paths, [0, 1, 2, 0, 1]), transform=transform, batch_size=2, shuffle=False,
                             drop_last=False, seed=SEED, workers=workers)
    got = torch.cat([batch for batch, _ in loader])
    spec = compile_transform(transform)
    for index in range(5):
        want = _C._transform_output(spec, images[index % 3], SEED, index)
        assert torch.equal(got[index], want), index


@pytest.mark.parametrize("workers", [1, 2])
def test_boxes_and_masks_move_with_a_float_resize_and_flip(workers, tmp_path):
    """The recipe many detection tutorials write: ToDtype first, then Resize and a flip, then ToPureTensor."""
    import json

    from PIL import Image

    rng = np.random.default_rng(5)
    entries, annotations = [], []
    for image_id, (h, w) in enumerate([(40, 60), (50, 30), (36, 36)], start=1):
        Image.fromarray(_photo(image_id, h, w).permute(1, 2, 0).numpy()).save(tmp_path / f"{image_id}.png")
        entries.append({"id": image_id, "file_name": f"{image_id}.png", "height": h, "width": w})
        for k in range(3):
            x0, y0 = float(rng.uniform(0, w / 2)), float(rng.uniform(0, h / 2))
            bw, bh = float(rng.uniform(3, w / 2)), float(rng.uniform(3, h / 2))
            annotations.append({"id": 10 * image_id + k, "image_id": image_id, "category_id": 1, "iscrowd": 0,
                                "bbox": [x0, y0, bw, bh], "area": bw * bh,
                                "segmentation": [[x0, y0, x0 + bw, y0, x0 + bw, y0 + bh, x0, y0 + bh]]})
    (tmp_path / "ann.json").write_text(json.dumps({"images": entries, "annotations": annotations,
                                                   "categories": [{"id": 1, "name": "a"}]}))
    dataset = fastloop.CocoDetection(tmp_path, tmp_path / "ann.json", target_keys=["boxes", "labels", "masks"])
    transforms = [TO_FLOAT, T.Resize((32, 48)), T.RandomHorizontalFlip(), T.ToPureTensor()]
    spec = compile_transform(transforms)
    loader = fastloop.Loader(dataset, transform=T.Compose(transforms), batch_size=2, shuffle=False, drop_last=False,
                             seed=SEED, workers=workers)
    got = [(image, target) for images, targets in loader for image, target in zip(images, targets)]
    for index, (image, target) in enumerate(got):
        x, raw = dataset[index]
        flip = _C._transform_draws(spec, 32, 48, SEED, index + 1)[index][2]["flip"][0]
        want_image, want = TO_FLOAT(x), raw
        want_image, want = T.Resize((32, 48))(want_image, want)
        if flip:
            want_image, want = T.RandomHorizontalFlip(p=1)(want_image, want)
        assert type(target["boxes"]) is torch.Tensor and type(target["masks"]) is torch.Tensor
        torch.testing.assert_close(image, want_image.as_subclass(torch.Tensor), atol=1e-6, rtol=0)
        torch.testing.assert_close(target["boxes"], want["boxes"].as_subclass(torch.Tensor), atol=1e-3, rtol=0)
        assert torch.equal(target["masks"], want["masks"].as_subclass(torch.Tensor))
        assert torch.equal(target["labels"], want["labels"])


# ---------------------------------------------------------------------------------------------- warps
def _with_params(transform: Any, params: dict, image: torch.Tensor) -> torch.Tensor:
    """torchvision's `transform` with `params` in place of its make_params (and its p, if any, as 1)."""
    transform.make_params = lambda flat_inputs: params
    p = getattr(transform, "p", None)
    try:
        if p is not None:
            transform.p = 1.0
        return transform(image)
    finally:
        del transform.make_params
        if p is not None:
            transform.p = p


WARPS = [
    T.RandomRotation(40, interpolation=T.InterpolationMode.BILINEAR),
    T.RandomRotation((-120, 120), expand=True, fill=0.3),
    T.RandomRotation((90, 90), interpolation=T.InterpolationMode.BILINEAR),  # torchvision's rot90 fast path
    T.RandomRotation(30, center=(5, 9), fill=[0.1, 0.5, 0.9]),
    T.RandomAffine(25, translate=(0.1, 0.2), scale=(0.8, 1.2), shear=(-10, 10, -5, 5),
                   interpolation=T.InterpolationMode.BILINEAR, fill=0.5),
    T.RandomAffine(0, shear=15),  # nearest, fill 0
    T.RandomPerspective(0.5, p=1.0, interpolation=T.InterpolationMode.BILINEAR, fill=0.25),
    T.RandomPerspective(0.3, p=0.5, interpolation=T.InterpolationMode.NEAREST),
]


@pytest.mark.parametrize("warp", WARPS, ids=repr)
def test_warps_after_the_conversion_run_on_float_images_as_torchvision(warp, images):
    from torchvision.transforms.v2.functional._geometry import _perspective_coefficients

    transforms = [TO_FLOAT, warp]
    spec = compile_transform(transforms)
    for index in range(6):
        image = images[index % len(images)]
        x = TO_FLOAT(image)
        d = _draw(spec, 1, image, index)
        if isinstance(warp, T.RandomPerspective):
            if not d["applied"][0]:
                want = x
            else:
                h, w = image.shape[-2:]
                start = [[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]]
                end = [[int(d["endpoints"][2 * i]), int(d["endpoints"][2 * i + 1])] for i in range(4)]
                want = _with_params(warp, {"coefficients": _perspective_coefficients(start, end, None)}, x)
        elif isinstance(warp, T.RandomAffine):
            want = _with_params(warp, {"angle": d["angle"][0], "translate": [int(v) for v in d["translate"]],
                                       "scale": d["scale"][0], "shear": list(d["shear"])}, x)
        else:
            want = _with_params(warp, {"angle": d["angle"][0]}, x)
        got = _C._transform_output(spec, image, SEED, index)
        assert got.shape == want.shape, (got.shape, want.shape)
        torch.testing.assert_close(got, want, atol=1e-6, rtol=0, msg=lambda m: f"{spec} #{index} {d}: {m}")
