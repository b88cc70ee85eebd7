"""fastloop's colour and automatic-augmentation transforms against the venv's torchvision.

Parity: each kernel through its transform with a deterministic spec (``ColorJitter(brightness=(1.25, 1.25))``,
``RandomPosterize(bits=3, p=1)``) against ``torchvision.transforms.v2.functional`` on the same uint8 tensor,
on photographs of several sizes and aspect ratios, grey and RGBA. Random transforms are checked by replaying
the parameters fastloop drew (``_transform_draws``) through torchvision's kernels.
Distributions: >= 10,000 draws of ColorJitter's factors and order, RandAugment's and TrivialAugmentWide's
operations and magnitudes against torchvision's own sampling (chi-square and Kolmogorov-Smirnov at 0.1 %).

Measured max difference, uint8 levels (bound asserted in brackets):
  adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue, adjust_sharpness 0 [0]
  rgb_to_grayscale, invert, posterize, solarize, autocontrast, equalize 0 [0]
  ColorJitter(0.4, 0.4, 0.4, 0.1) replayed 0 [0]; under ATEN_CPU_CAPABILITY=default 2 (kernel_parity.py's blends)
  TrivialAugmentWide, RandAugment, AutoAugment replayed (every operation, geometric ones through torchvision's
  affine / rotate, nearest and bilinear): chains of colour operations 0 [0]; chains with a warp 0 [0] where ATen
  runs its AVX-512 kernels, elsewhere within kernel_parity.py's chain bounds (a nearest shear's sample points on
  the middles between pixels: up to 19 levels on 0.5% of values)
  AugMix replayed (weights, chains, float32 mix), nearest and bilinear: as the chains above (up to 31 levels)
"""

from __future__ import annotations

import glob
import io
import math
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np
import pytest
import torch
import torchvision.transforms.v2 as T
import torchvision.transforms.v2.functional as F
from kernel_parity import assert_chain_matches, assert_within_one_level, torch_blends_are_fastloops

fastloop = pytest.importorskip("fastloop")
_C = fastloop._C
if not hasattr(_C, "_transform_apply"):
    pytest.skip("this build has no _transform_apply binding", allow_module_level=True)

SEED = 20261203
#: The AutoAugment family's operations that warp (torchvision's affine / rotate): their bytes follow ATen's kernels.
WARPS = {"ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate"}


# ---------------------------------------------------------------------------------------------- inputs
def _photo_sources() -> List[np.ndarray]:
    """Real photographs where Debian's mate-backgrounds is installed, else photo-like images made with PIL:
    fractal and gradient channels, noise, and a JPEG round trip (camera-like 4:2:0 blocks and ringing)."""
    from PIL import Image, ImageFilter

    paths = sorted(glob.glob("/usr/share/backgrounds/mate/nature/*.jpg"))[:3]
    if paths:
        return [np.asarray(Image.open(p).convert("RGB").reduce(4)) for p in paths]
    rng = np.random.default_rng(0)
    sources = []
    for k in range(3):
        size = (640, 480)
        r = Image.effect_mandelbrot(size, (-2.0 + 0.3 * k, -1.2, 1.0, 1.2), 60 + 20 * k)
        g = Image.linear_gradient("L").resize(size).rotate(30 * k + 10)
        b = Image.radial_gradient("L").resize(size).filter(ImageFilter.GaussianBlur(3))
        pixels = np.stack([np.asarray(c, dtype=np.float64) for c in (r, g, b)], -1)
        pixels = pixels * (0.6 + 0.2 * k) + rng.normal(0, 9, pixels.shape) + 20 * k
        image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
        buf = io.BytesIO()
        image.save(buf, "JPEG", quality=85)
        sources.append(np.asarray(Image.open(buf).convert("RGB")))
    return sources


def _photos() -> List[torch.Tensor]:
    """uint8 CHW photographs: square, landscape, portrait, small and thin crops."""
    from PIL import Image

    out = []
    sizes = [(224, 224), (375, 500), (500, 375), (61, 97), (180, 33)]
    for i, (h, w) in enumerate(sizes):
        src = _photo_sources()[i % 3]
        crop = Image.fromarray(src).resize((w, h), Image.BILINEAR)
        out.append(torch.from_numpy(np.asarray(crop).copy()).permute(2, 0, 1).contiguous())
    return out


@pytest.fixture(scope="module")
def photos() -> List[torch.Tensor]:
    return _photos()


@pytest.fixture(scope="module")
def grey(photos) -> torch.Tensor:
    return F.rgb_to_grayscale(photos[1], 1)


@pytest.fixture(scope="module")
def rgba(photos) -> torch.Tensor:
    alpha = torch.arange(photos[0].shape[1] * photos[0].shape[2], dtype=torch.int64) % 256
    return torch.cat([photos[0], alpha.to(torch.uint8).view(1, *photos[0].shape[1:])])


# ---------------------------------------------------------------------------------------------- fastloop
def _apply(spec: str, image: torch.Tensor, index: int = 0) -> torch.Tensor:
    return _C._transform_apply(spec, image, SEED, index)


def _draws(spec: str, height: int, width: int, count: int) -> List[Dict[str, List[float]]]:
    """Per sample 0..count-1, the draws of the (single) transform of `spec`."""
    return [dict(per_transform[0]) for per_transform in _C._transform_draws(spec, height, width, SEED, count)]


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> int:
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == torch.uint8 and b.dtype == torch.uint8
    return int((a.to(torch.int16) - b.to(torch.int16)).abs().max()) if a.numel() else 0


def _f32(x: float) -> float:
    return float(np.float32(x))


# ---------------------------------------------------------------------------------------------- parity
KERNEL_CASES: List[Tuple[str, Callable[[torch.Tensor], torch.Tensor]]] = [
    ("ColorJitter(brightness=(1.25, 1.25))", lambda x: F.adjust_brightness(x, 1.25)),
    ("ColorJitter(brightness=(0.37, 0.37))", lambda x: F.adjust_brightness(x, _f32(0.37))),
    ("ColorJitter(contrast=(1.7, 1.7))", lambda x: F.adjust_contrast(x, _f32(1.7))),
    ("ColorJitter(contrast=(0.45, 0.45))", lambda x: F.adjust_contrast(x, _f32(0.45))),
    ("ColorJitter(saturation=(1.5, 1.5))", lambda x: F.adjust_saturation(x, 1.5)),
    ("ColorJitter(saturation=(0.3, 0.3))", lambda x: F.adjust_saturation(x, _f32(0.3))),
    ("ColorJitter(hue=(0.1, 0.1))", lambda x: F.adjust_hue(x, _f32(0.1))),
    ("ColorJitter(hue=(-0.4, -0.4))", lambda x: F.adjust_hue(x, _f32(-0.4))),
    ("Grayscale()", lambda x: F.rgb_to_grayscale(x, 1)),
    ("Grayscale(num_output_channels=3)", lambda x: F.rgb_to_grayscale(x, 3)),
    ("RandomGrayscale(p=1)", lambda x: F.rgb_to_grayscale(x, x.shape[0])),
    ("RandomInvert(p=1)", F.invert),
    ("RandomPosterize(bits=3, p=1)", lambda x: F.posterize(x, 3)),
    ("RandomPosterize(bits=0, p=1)", lambda x: F.posterize(x, 0)),
    ("RandomSolarize(threshold=128, p=1)", lambda x: F.solarize(x, 128)),
    ("RandomSolarize(threshold=100.5, p=1)", lambda x: F.solarize(x, 100.5)),
    ("RandomAdjustSharpness(sharpness_factor=2, p=1)", lambda x: F.adjust_sharpness(x, 2.0)),
    ("RandomAdjustSharpness(sharpness_factor=0.3, p=1)", lambda x: F.adjust_sharpness(x, 0.3)),
    ("RandomAutocontrast(p=1)", F.autocontrast),
    ("RandomEqualize(p=1)", F.equalize),
]


@pytest.mark.parametrize("spec,reference", KERNEL_CASES, ids=[c[0] for c in KERNEL_CASES])
def test_kernel_matches_torchvision_bytes(spec, reference, photos, grey):
    for image in photos + [grey]:
        assert_within_one_level(_apply(spec, image), reference(image), torch_blends_are_fastloops(),
                                (spec, tuple(image.shape)))


@pytest.mark.parametrize(
    "spec,reference",
    [
        ("RandomInvert(p=1)", F.invert),
        ("RandomPosterize(bits=5, p=1)", lambda x: F.posterize(x, 5)),
        ("RandomSolarize(threshold=77, p=1)", lambda x: F.solarize(x, 77)),
        ("RandomEqualize(p=1)", F.equalize),
    ],
)
def test_rgba_keeps_torchvision_bytes_where_it_takes_four_channels(spec, reference, rgba):
    assert _max_diff(_apply(spec, rgba), reference(rgba)) == 0


@pytest.mark.parametrize(
    "spec,reference",
    [
        ("ColorJitter(brightness=(1.25, 1.25))", lambda x: F.adjust_brightness(x, 1.25)),
        ("ColorJitter(hue=(0.1, 0.1))", lambda x: F.adjust_hue(x, 0.1)),
        ("RandomAutocontrast(p=1)", F.autocontrast),
        ("RandomAdjustSharpness(sharpness_factor=2, p=1)", lambda x: F.adjust_sharpness(x, 2.0)),
        ("Grayscale()", lambda x: F.rgb_to_grayscale(x, 1)),
    ],
)
def test_rgba_is_refused_where_torchvision_refuses_it(spec, reference, rgba):
    with pytest.raises((TypeError, ValueError)):
        reference(rgba)
    with pytest.raises((TypeError, ValueError)):
        _apply(spec, rgba)


def test_probability_zero_leaves_the_image(photos):
    for spec in ("RandomInvert(p=0)", "RandomEqualize(p=0.0)", "RandomGrayscale(p=0)", "RandomPosterize(2, 0)"):
        assert torch.equal(_apply(spec, photos[0]), photos[0]), spec


def test_color_jitter_replays_torchvision_with_its_draws(photos):
    spec = "ColorJitter(brightness=0.4, contrast=0.4, saturation=0.4, hue=0.1)"
    kernels = [F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue]
    names = ["brightness_factor", "contrast_factor", "saturation_factor", "hue_factor"]
    for image in photos:
        h, w = image.shape[1:]
        for index in range(6):
            d = _draws(spec, h, w, index + 1)[index]
            expected = image
            for fn in d["fn_idx"]:
                expected = kernels[int(fn)](expected, d[names[int(fn)]][0])
            order = [int(fn) for fn in d["fn_idx"]]  # hue (3) through HSV: a 1-level difference before it, near
            stretches = order.index(3) > 0  # grey, turns the hue and comes back larger (3 levels, real photos)
            assert_chain_matches(_apply(spec, image, index), expected, False, (tuple(image.shape), d),
                                 exact=torch_blends_are_fastloops(), stretches_levels=stretches)


@pytest.mark.parametrize(
    "spec,make",
    [
        ("TrivialAugmentWide()", lambda: T.TrivialAugmentWide()),
        ("TrivialAugmentWide(interpolation=InterpolationMode.BILINEAR, fill=[10, 20, 30])",
         lambda: T.TrivialAugmentWide(interpolation=T.InterpolationMode.BILINEAR, fill=[10, 20, 30])),
        ("RandAugment(2, 9)", lambda: T.RandAugment(2, 9)),
        # bilinear with fill=None: no mask, the zero padding stays (a fill of 0 would blend the borders)
        ("RandAugment(2, 15, interpolation=InterpolationMode.BILINEAR)",
         lambda: T.RandAugment(2, 15, interpolation=T.InterpolationMode.BILINEAR)),
        ("AutoAugment(AutoAugmentPolicy.IMAGENET)", lambda: T.AutoAugment(T.AutoAugmentPolicy.IMAGENET)),
        ("AutoAugment(AutoAugmentPolicy.SVHN)", lambda: T.AutoAugment(T.AutoAugmentPolicy.SVHN)),
    ],
)
def test_auto_augment_replays_torchvision_with_its_draws(spec, make, photos, grey):
    """Each sample's drawn operations and magnitudes through torchvision's own
    _apply_image_or_video_transform (its affine/rotate for the geometric ones) give fastloop's bytes."""
    transform = make()
    names = list(transform._AUGMENTATION_SPACE.keys())
    images = photos + [grey]
    checked_warps = 0
    for index in range(40):
        image = images[index % len(images)]
        h, w = image.shape[1:]
        d = _draws(spec, h, w, index + 1)[index]
        if "policy_index" in d:
            policy = transform._policies[int(d["policy_index"][0])]
            ops = [(step[0], m) for step, a, m in zip(policy, d["applied"], d["magnitude"]) if a == 1.0]
        else:
            ops = [(names[int(i)], m) for i, m in zip(d["op_index"], d["magnitude"])]
        expected = image
        try:
            for name, magnitude in ops:
                expected = transform._apply_image_or_video_transform(
                    expected, name, magnitude, interpolation=transform.interpolation, fill=transform._fill
                )
        except ValueError:  # a 3-value fill on a grey image: torchvision refuses it, so must fastloop
            with pytest.raises(ValueError):
                _apply(spec, image, index)
            continue
        actual = _apply(spec, image, index)
        if not any(name in WARPS for name, _ in ops):  # colour operations alone: their blends' rule
            assert_chain_matches(actual, expected, False, (index, ops), exact=torch_blends_are_fastloops())
            continue
        nearest = T.InterpolationMode(transform.interpolation) == T.InterpolationMode.NEAREST  # 'nearest' or the enum
        stretches = any(name in ("AutoContrast", "Equalize") for name, _ in ops)
        assert_chain_matches(actual, expected, nearest, (index, ops), stretches_levels=stretches)
        checked_warps += 1
    assert checked_warps > 0


AUG_MIX_CASES = [
    ("AugMix(interpolation=InterpolationMode.NEAREST)", True),
    ("AugMix()", True),  # bilinear, its default
    ("AugMix(severity=5, mixture_width=2, chain_depth=2, all_ops=False, interpolation=InterpolationMode.NEAREST)", False),
]


@pytest.mark.parametrize("spec,all_ops", AUG_MIX_CASES)
def test_aug_mix_replays_torchvision_with_its_draws(spec, all_ops, photos):
    """fastloop's Beta/Dirichlet weights and chains through torchvision's op code and its float32 mixing,
    nearest and its default bilinear (whose fill=None warps once blended their borders with a fill of 0)."""
    mode = T.InterpolationMode.NEAREST if "NEAREST" in spec else T.InterpolationMode.BILINEAR
    transform = T.AugMix(all_ops=all_ops, interpolation=mode)
    space = transform._AUGMENTATION_SPACE if all_ops else transform._PARTIAL_AUGMENTATION_SPACE
    names = list(space.keys())
    for index in range(12):
        image = photos[index % len(photos)]
        h, w = image.shape[1:]
        d = _draws(spec, h, w, index + 1)[index]
        m = torch.tensor(d["beta"], dtype=torch.float32)
        weights = torch.tensor(d["weights"], dtype=torch.float32)
        mix = m[0] * image
        ops = iter(zip(d["op_index"], d["magnitude"]))
        for i, depth in enumerate(d["depth"]):
            aug = image
            for _ in range(int(depth)):
                op, magnitude = next(ops)
                aug = transform._apply_image_or_video_transform(
                    aug, names[int(op)], magnitude, interpolation=transform.interpolation, fill=transform._fill
                )
            mix.add_(weights[i] * aug)
        warped = any(names[int(op)] in WARPS for op in d["op_index"])
        assert_chain_matches(_apply(spec, image, index), mix.to(torch.uint8), warped and mode == T.InterpolationMode.NEAREST,
                             index)


# ---------------------------------------------------------------------------------------------- checks
@pytest.mark.parametrize(
    "spec,error,message",
    [
        ("ColorJitter(brightness=-0.1)", ValueError, "If brightness is a single number, it must be non negative."),
        ("ColorJitter(hue=0.6)", ValueError, "hue values should be between (-0.5, 0.5) and increasing"),
        ("ColorJitter(contrast=(1.5, 0.5))", ValueError, "contrast values should be between (0, inf) and increasing"),
        ("ColorJitter(saturation=(1, 2, 3))", TypeError, "should be a single number or a sequence with length 2"),
        ("RandomInvert(p=2)", ValueError, "`p` should be a floating point value in the interval [0.0, 1.0]."),
        ("RandomPosterize(bits=9)", TypeError, "bits must be a positive integer in the range [0, 8], got 9 instead."),
        ("Grayscale(num_output_channels=2)", ValueError, "num_output_channels must be 1 or 3, got 2."),
        ("RandomAdjustSharpness(sharpness_factor=-1)", ValueError, "sharpness_factor (-1.0) is not non-negative."),
    ],
)
def test_arguments_are_refused_with_torchvision_messages(spec, error, message):
    with pytest.raises(error) as caught:
        _apply(spec, torch.zeros(3, 8, 8, dtype=torch.uint8))
    assert message in str(caught.value)


# ---------------------------------------------------------------------------------------------- distributions
def _chi2_critical(dof: int, alpha_z: float = 3.090) -> float:
    """The chi-square quantile at 1 - 0.001 (z = 3.090), Wilson-Hilferty's approximation."""
    return dof * (1 - 2 / (9 * dof) + alpha_z * math.sqrt(2 / (9 * dof))) ** 3


def _assert_same_counts(ours: Sequence, theirs: Sequence, what: str) -> None:
    """Two-sample chi-square test of homogeneity; categories seen fewer than 5 times in all are pooled."""
    keys = sorted(set(ours) | set(theirs))
    a = np.array([sum(1 for x in ours if x == k) for k in keys], dtype=np.float64)
    b = np.array([sum(1 for x in theirs if x == k) for k in keys], dtype=np.float64)
    small = (a + b) < 5
    if small.any():
        a = np.append(a[~small], a[small].sum())
        b = np.append(b[~small], b[small].sum())
    n, m = a.sum(), b.sum()
    expected_a, expected_b = (a + b) * n / (n + m), (a + b) * m / (n + m)
    stat = float((((a - expected_a) ** 2) / expected_a).sum() + (((b - expected_b) ** 2) / expected_b).sum())
    dof = max(len(a) - 1, 1)
    assert stat < _chi2_critical(dof), f"{what}: chi-square {stat:.1f} >= {_chi2_critical(dof):.1f} ({dof} dof)"


def _assert_same_distribution(ours: Sequence[float], theirs: Sequence[float], what: str) -> None:
    """Two-sample Kolmogorov-Smirnov test at 0.1 %."""
    a, b = np.sort(np.asarray(ours)), np.sort(np.asarray(theirs))
    grid = np.concatenate([a, b])
    d = float(np.abs(np.searchsorted(a, grid, "right") / len(a) - np.searchsorted(b, grid, "right") / len(b)).max())
    limit = 1.949 * math.sqrt((len(a) + len(b)) / (len(a) * len(b)))
    assert d < limit, f"{what}: KS distance {d:.4f} >= {limit:.4f}"


N_DRAWS = 10_000


def test_color_jitter_draws_are_distributed_as_torchvision():
    spec = "ColorJitter(brightness=0.4, contrast=(0.2, 1.1), saturation=0.4, hue=0.1)"
    ours = _draws(spec, 32, 32, N_DRAWS)
    torch.manual_seed(0)
    jitter = T.ColorJitter(brightness=0.4, contrast=(0.2, 1.1), saturation=0.4, hue=0.1)
    theirs = [jitter.make_params([]) for _ in range(N_DRAWS)]
    _assert_same_counts([tuple(int(v) for v in d["fn_idx"]) for d in ours],
                        [tuple(int(v) for v in p["fn_idx"]) for p in theirs], "order")
    for name in ("brightness_factor", "contrast_factor", "saturation_factor", "hue_factor"):
        _assert_same_distribution([d[name][0] for d in ours], [p[name] for p in theirs], name)


def _record_auto_augment(transform, image: torch.Tensor, count: int) -> List[Tuple[str, float]]:
    """(operation, magnitude) of `count` calls of torchvision's forward."""
    seen: List[Tuple[str, float]] = []

    def record(img, transform_id, magnitude, interpolation, fill):
        seen.append((transform_id, magnitude))
        return img

    transform._apply_image_or_video_transform = record
    torch.manual_seed(0)
    for _ in range(count):
        transform(image)
    return seen


@pytest.mark.parametrize(
    "spec,make",
    [
        ("TrivialAugmentWide()", lambda: T.TrivialAugmentWide()),
        ("TrivialAugmentWide(num_magnitude_bins=7)", lambda: T.TrivialAugmentWide(num_magnitude_bins=7)),
        ("RandAugment(num_ops=2, magnitude=9)", lambda: T.RandAugment(num_ops=2, magnitude=9)),
        ("RandAugment(num_ops=1, magnitude=30)", lambda: T.RandAugment(num_ops=1, magnitude=30)),
    ],
)
def test_auto_augment_choices_are_distributed_as_torchvision(spec, make):
    h, w = 40, 64
    transform = make()
    names = list(transform._AUGMENTATION_SPACE.keys())
    theirs = _record_auto_augment(transform, torch.zeros(3, h, w, dtype=torch.uint8), N_DRAWS)
    ours = []
    for d in _draws(spec, h, w, N_DRAWS):
        ours += [(names[int(i)], m) for i, m in zip(d["op_index"], d["magnitude"])]
    assert len(ours) == len(theirs)
    _assert_same_counts([o for o, _ in ours], [o for o, _ in theirs], f"{spec} operations")
    # Magnitudes as categories per operation, rounded to float32's precision (torch.linspace's values).
    key = lambda pair: (pair[0], round(pair[1], 4))  # noqa: E731
    _assert_same_counts([key(p) for p in ours], [key(p) for p in theirs], f"{spec} magnitudes")
