"""fastloop's transform core against the venv's torchvision: the spec language, compile_transform, the
containers, RandomResizedCrop / Resize / CenterCrop / RandomErasing and the output stage (ToTensor, ToDtype,
ConvertImageDtype, Normalize).

Parity: each operation with fixed parameters (or the parameters fastloop drew, from ``_transform_draws``,
replayed) against ``torchvision.transforms.v2.functional`` on the same uint8 tensor: photographs of several
sizes and aspect ratios, grey and RGBA.
Distributions: >= 10,000 draws of RandomResizedCrop's and RandomErasing's boxes and of the containers'
choices against torchvision's own sampling (two-sample Kolmogorov-Smirnov at 0.1 %, chi-square), each with a
check that the test rejects a different distribution.

Measured max difference, uint8 levels (bound asserted in brackets):
  resized_crop / resize bilinear, bicubic, nearest, nearest-exact, with and without antialias  0 [0]
  center_crop (incl. padding), erase  0 [0]
  output stage (ToTensor / ToDtype(scale) + Normalize), float32: 0 ulp [0]
"""

from __future__ import annotations

import math
from typing import Dict, List, Sequence

import numpy as np
import pytest
import torch
import torchvision.transforms as T1
import torchvision.transforms.v2 as T
import torchvision.transforms.v2.functional as F
from torchvision import tv_tensors
from kernel_parity import assert_within_one_level, torch_resize_is_fastloops

fastloop = pytest.importorskip("fastloop")
_C = fastloop._C
from fastloop.transforms import compile_transform  # noqa: E402

SEED = 20261203


# ---------------------------------------------------------------------------------------------- inputs
def _photos() -> List[torch.Tensor]:
    """uint8 CHW photo-like images (a JPEG round trip of smooth fractal/gradient channels and noise):
    square, landscape, portrait, small and thin."""
    import io

    from PIL import Image, ImageFilter

    rng = np.random.default_rng(0)
    size = (640, 480)
    r = Image.effect_mandelbrot(size, (-2.0, -1.2, 1.0, 1.2), 80)
    g = Image.linear_gradient("L").resize(size).rotate(20)
    b = Image.radial_gradient("L").resize(size).filter(ImageFilter.GaussianBlur(3))
    pixels = np.stack([np.asarray(c, dtype=np.float64) for c in (r, g, b)], -1) * 0.8 + rng.normal(0, 9, (480, 640, 3))
    buf = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(buf, "JPEG", quality=85)
    source = Image.open(buf).convert("RGB")
    out = []
    for h, w in [(224, 224), (375, 500), (500, 375), (61, 97), (180, 33)]:
        crop = source.resize((w, h), Image.BILINEAR)
        out.append(torch.from_numpy(np.asarray(crop).copy()).permute(2, 0, 1).contiguous())
    return out


@pytest.fixture(scope="module")
def images() -> List[torch.Tensor]:
    photos = _photos()
    grey = F.rgb_to_grayscale(photos[1], 1)
    alpha = (torch.arange(photos[2].shape[1] * photos[2].shape[2]) % 256).to(torch.uint8).view(1, *photos[2].shape[1:])
    return photos + [grey, torch.cat([photos[2], alpha])]


def _apply(spec: str, image: torch.Tensor, index: int = 0) -> torch.Tensor:
    return _C._transform_apply(spec, image, SEED, index)


def _draws(spec: str, height: int, width: int, count: int, position: int = 0) -> List[Dict[str, List[float]]]:
    return [dict(sample[position]) for sample in _C._transform_draws(spec, height, width, SEED, count)]


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> int:
    assert a.shape == b.shape, (a.shape, b.shape)
    return int((a.to(torch.int16) - b.to(torch.int16)).abs().max()) if a.numel() else 0


def _ks_rejects(a: Sequence[float], b: Sequence[float], alpha_c: float = 1.949) -> bool:
    """Two-sample Kolmogorov-Smirnov at 0.1 % (c(alpha) = 1.949): whether a and b differ in distribution."""
    a, b = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    grid = np.concatenate([a, b])
    d = np.max(np.abs(np.searchsorted(a, grid, "right") / len(a) - np.searchsorted(b, grid, "right") / len(b)))
    return d > alpha_c * math.sqrt((len(a) + len(b)) / (len(a) * len(b)))


def _chi2_rejects(counts_a: np.ndarray, counts_b: np.ndarray) -> bool:
    """Chi-square test of two count vectors at about 0.1 % (Wilson-Hilferty for the critical value)."""
    counts_a, counts_b = np.asarray(counts_a, float), np.asarray(counts_b, float)
    keep = (counts_a + counts_b) > 0
    counts_a, counts_b = counts_a[keep], counts_b[keep]
    na, nb = counts_a.sum(), counts_b.sum()
    expected_a = (counts_a + counts_b) * na / (na + nb)
    expected_b = (counts_a + counts_b) * nb / (na + nb)
    stat = ((counts_a - expected_a) ** 2 / expected_a).sum() + ((counts_b - expected_b) ** 2 / expected_b).sum()
    k = len(counts_a) - 1
    if k == 0:
        return False
    z = 3.09  # the 99.9 % normal quantile
    critical = k * (1 - 2 / (9 * k) + z * math.sqrt(2 / (9 * k))) ** 3
    return stat > critical


# ---------------------------------------------------------------------------------------------- spec language
@pytest.mark.parametrize(
    "spec,canonical",
    [
        ("RandomResizedCrop(224, scale=(0.35, 1))",
         "RandomResizedCrop(size=(224, 224), scale=(0.35, 1.0), ratio=(0.75, 1.3333333333333333), "
         "interpolation=InterpolationMode.BILINEAR, antialias=True)"),
        ("Resize(256, interpolation='bicubic')",
         "Resize(size=256, interpolation=InterpolationMode.BICUBIC, max_size=None, antialias=True)"),
        ("CenterCrop([10, 12])", "CenterCrop(size=(10, 12))"),
        ("RandomErasing(0.25, value='random')",
         "RandomErasing(p=0.25, scale=(0.02, 0.33), ratio=(0.3, 3.3), value='random', inplace=False)"),
        ("ToDtype(torch.float32, scale=True), Normalize((0.5,), (0.25,))",
         "ToDtype(torch.float32, scale=True), Normalize(mean=(0.5,), std=(0.25,), inplace=False)"),
        ("RandomApply([CenterCrop(8)], p=0.8)", "RandomApply([CenterCrop(size=(8, 8))], p=0.8)"),
    ],
)
def test_repr_is_the_canonical_spelling_and_parses_back(spec, canonical):
    assert _C._transform_repr(spec) == canonical
    assert _C._transform_repr(canonical) == canonical


def test_spec_errors_are_value_errors_naming_the_position():
    with pytest.raises(ValueError, match=r"at character 14: expected ',' or '\)'"):
        _C._transform_repr("RandomCrop(32")


def test_unknown_transforms_and_arguments_are_type_errors():
    with pytest.raises(TypeError, match="Lambda is not supported.*RandomResizedCrop"):
        _C._transform_repr("Lambda()")
    with pytest.raises(TypeError, match=r"RandomResizedCrop\(\) got an unexpected keyword argument 'scales'"):
        _C._transform_repr("RandomResizedCrop(224, scales=(0.1, 1))")
    with pytest.raises(TypeError, match=r"CenterCrop\(\) missing 1 required positional argument: 'size'"):
        _C._transform_repr("CenterCrop()")


def test_out_of_range_arguments_are_value_errors_with_torchvisions_message():
    with pytest.raises(ValueError, match="`p` should be a floating point value in the interval"):
        _C._transform_repr("RandomApply([CenterCrop(3)], p=2)")
    with pytest.raises(ValueError, match="Scale should be between 0 and 1"):
        _C._transform_repr("RandomErasing(scale=(-0.1, 0.3))")
    with pytest.raises(ValueError, match="If value is str, it should be 'random'"):
        _C._transform_repr("RandomErasing(value='noise')")
    with pytest.raises(ValueError, match="Please provide only two dimensions"):
        _C._transform_repr("CenterCrop((1, 2, 3))")
    with pytest.raises(ValueError, match="max_size = 100 must be strictly greater"):
        _C._transform_repr("Resize(200, max_size=100)")
    with pytest.raises(ValueError, match="Length of p doesn't match the number of transforms: 1 != 2"):
        _C._transform_repr("RandomChoice([CenterCrop(2), CenterCrop(3)], p=[1])")


# ---------------------------------------------------------------------------------------------- compile_transform
def test_compile_transform_reads_v1_and_v2_objects_alike():
    for M in (T1, T):
        pipeline = M.Compose([
            M.RandomResizedCrop(224, scale=(0.35, 1), interpolation=M.InterpolationMode.BICUBIC),
            M.RandomApply([M.CenterCrop(200)], p=0.3),
            M.RandomChoice([M.Resize(100), M.Resize((50, 60), antialias=False)], p=[1, 3]),
            M.RandomOrder([M.CenterCrop(20), M.CenterCrop(30)]),
            M.RandomErasing(0.25, value="random"),
        ])
        spec = compile_transform(pipeline)
        assert spec.startswith("RandomResizedCrop(size=(224, 224), scale=(0.35, 1.0), ")
        assert "interpolation=InterpolationMode.BICUBIC" in spec
        assert "RandomApply([CenterCrop(size=(200, 200))], p=0.3)" in spec
        assert "RandomChoice([Resize(" in spec and "p=[0.25, 0.75])" in spec
        assert "Resize(size=(50, 60), interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=False)" in spec
        assert "value='random'" in spec
        assert compile_transform(spec) == spec  # a spec string is accepted as is


def test_compile_transform_refuses_what_it_cannot_run():
    with pytest.raises(TypeError, match=r"Lambda is not supported; fastloop's transforms are: .*RandomResizedCrop"):
        compile_transform(T.Compose([T.RandomResizedCrop(224), T.Lambda(lambda x: x)]))

    class Mine(torch.nn.Module):
        def forward(self, x):
            return x

    with pytest.raises(TypeError, match=r"Mine is not a torchvision transform.*CenterCrop"):
        compile_transform(T.Compose([Mine()]))
    with pytest.raises(TypeError, match="a dtype for KeyPoints is not supported"):
        compile_transform(T.ToDtype({tv_tensors.KeyPoints: torch.float32, "others": None}))
    with pytest.raises(ValueError, match="No dtype was specified for type .*Image"):  # torchvision's, at compile time
        compile_transform(T.ToDtype({tv_tensors.Mask: torch.int64}))
    with pytest.raises(TypeError, match="LANCZOS"):
        compile_transform(T.Resize(10, interpolation=T.InterpolationMode.LANCZOS))
    with pytest.raises(TypeError, match="RandomPosterize.*on a float image"):  # CenterCrop would run there
        _C._transform_repr("ToDtype(torch.float32, scale=True), RandomPosterize(4)")
    with pytest.raises(TypeError, match="Input tensor should be a float tensor. Got torch.uint8"):
        _C._transform_repr("Normalize((0.5,), (0.5,))")


def test_to_dtype_takes_a_dict_of_dtypes_per_type_as_torchvision():
    """The image's dtype from its own key, else torch.Tensor's, else "others"'s (None: stays uint8); masks' and
    boxes' given to the loader's targets; the dict reads back as written."""
    image = torch.arange(48, dtype=torch.uint8).view(3, 4, 4)
    for dtype, image_dtype, mask in [
        ({tv_tensors.Image: torch.float32, tv_tensors.Mask: torch.int64, "others": None}, torch.float32, "int64"),
        ({torch.Tensor: torch.float64, "others": None}, torch.float64, ""),
        ({tv_tensors.Mask: torch.int64, "others": torch.float16}, torch.float16, "int64"),
        ({tv_tensors.Image: None, tv_tensors.Mask: torch.int64}, None, "int64"),
    ]:
        transform = T.ToDtype(dtype, scale=True)
        spec = compile_transform(transform)
        assert compile_transform(spec) == spec and spec.startswith("ToDtype(dtype=(")
        assert _C._transform_targets_output(spec)[1] == mask
        if image_dtype is None:
            assert torch.equal(_C._transform_apply(spec, image, SEED, 0), image)
            continue
        # torch.Tensor's key is the image's when it is a plain tensor (decode_image's), as the references' is
        want = transform(image if torch.Tensor in dtype else tv_tensors.Image(image)).as_subclass(torch.Tensor)
        assert want.dtype == image_dtype
        assert torch.equal(_C._transform_output(spec, image, SEED, 0), want.float()), dtype
    boxes_missing = compile_transform(T.ToDtype({tv_tensors.Image: torch.float32, tv_tensors.Mask: torch.int64}))
    assert _C._transform_targets_output(boxes_missing) == (False, "int64", "missing")


@pytest.mark.parametrize("spec", ["Identity()", "ToPureTensor()", "RGB()"])
def test_pass_through_transforms_leave_an_rgb_image_and_run_after_the_conversion(spec, images):
    image = images[0]
    assert torch.equal(_C._transform_apply(spec, image, SEED, 0), image)
    if spec != "RGB()":  # they touch no pixel: allowed after ToDtype, as torchvision allows them
        after = f"ToDtype(torch.float32, scale=True), {spec}"
        assert torch.equal(_C._transform_output(after, image, SEED, 0), T.ToDtype(torch.float32, scale=True)(image))


def test_rgb_spreads_a_grey_image_as_torchvision():
    grey = torch.arange(35, dtype=torch.uint8).view(1, 5, 7)
    assert torch.equal(_C._transform_apply("RGB()", grey, SEED, 0), T.RGB()(grey))
    with pytest.raises(ValueError):  # two channels: torchvision's unpacking fails, as fastloop's
        _C._transform_apply("RGB()", torch.zeros(2, 4, 4, dtype=torch.uint8), SEED, 0)


def test_random_channel_permutation_replays_torchvision_and_draws_every_order(images):
    image = images[0]
    draws = _draws("RandomChannelPermutation()", *image.shape[1:], 600)
    for index in range(6):
        order = [int(v) for v in draws[index]["permutation"]]
        want = F.permute_channels(image, order)
        assert torch.equal(_C._transform_apply("RandomChannelPermutation()", image, SEED, index), want), order
    counts = {}
    for d in draws:
        key = tuple(int(v) for v in d["permutation"])
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6 and min(counts.values()) > 600 / 6 * 0.6, counts  # uniform over 3! orders


# ---------------------------------------------------------------------------------------------- parity
RESIZE_CASES = [
    ("bilinear", True), ("bilinear", False), ("bicubic", True), ("bicubic", False),
    ("nearest", False), ("nearest-exact", False),
]


@pytest.mark.parametrize("mode,antialias", RESIZE_CASES)
def test_resize_matches_torchvision_bytes(images, mode, antialias):
    tv_mode = T.InterpolationMode(mode)
    for image in images:
        for size in ([96], [40, 300], [7]):
            spec = f"Resize({tuple(size) if len(size) > 1 else size[0]}, interpolation='{mode}', antialias={antialias})"
            want = F.resize(image, size, interpolation=tv_mode, antialias=antialias)
            assert_within_one_level(_apply(spec, image), want, mode != "bilinear" or torch_resize_is_fastloops(),
                                    (spec, tuple(image.shape)))


@pytest.mark.parametrize("mode,antialias", RESIZE_CASES)
def test_random_resized_crop_replays_through_torchvisions_resized_crop(images, mode, antialias):
    spec = f"RandomResizedCrop((64, 80), scale=(0.05, 1.0), interpolation='{mode}', antialias={antialias})"
    for image in images:
        _, h, w = image.shape
        for index, box in enumerate(_draws(spec, h, w, 6)):
            top, left, bh, bw = (int(box[k][0]) for k in ("top", "left", "height", "width"))
            want = F.resized_crop(image, top, left, bh, bw, [64, 80], interpolation=T.InterpolationMode(mode),
                                  antialias=antialias)
            assert_within_one_level(_apply(spec, image, index), want, mode != "bilinear" or torch_resize_is_fastloops(),
                                    (spec, tuple(image.shape), box))


def test_center_crop_matches_torchvision_bytes_including_its_padding(images):
    for image in images:
        for size in ((50, 40), (224, 224), (600, 20), (3, 700)):
            assert _max_diff(_apply(f"CenterCrop({size})", image), F.center_crop(image, list(size))) == 0, size


@pytest.mark.parametrize("value", ["0", "(10, 200, 30)", "7.9"])
def test_random_erasing_on_uint8_replays_through_torchvisions_erase(images, value):
    spec = f"RandomErasing(p=1, value={value})"
    for image in images[:3]:
        _, h, w = image.shape
        for index, box in enumerate(_draws(spec, h, w, 5)):
            assert box["erase"] == [1.0]
            v = torch.tensor(eval(value), dtype=torch.float32).reshape(-1, 1, 1)
            want = F.erase(image, int(box["i"][0]), int(box["j"][0]), int(box["h"][0]), int(box["w"][0]), v)
            assert _max_diff(_apply(spec, image, index), want) == 0, (value, box)


def test_output_stage_matches_torchvisions_float_pipeline(images):
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    cases = [
        (f"ToTensor(), Normalize({mean}, {std})", lambda x: T1.Normalize(mean, std)(x.float().div(255))),
        (f"ToDtype(torch.float32, scale=True), Normalize({mean}, {std})",
         T.Compose([T.ToDtype(torch.float32, scale=True), T.Normalize(mean, std)])),
        ("ConvertImageDtype(torch.float32)", T.ConvertImageDtype(torch.float32)),
        ("ToDtype(torch.float32), Normalize((100.0,), (50.0,))",
         T.Compose([T.ToDtype(torch.float32), T.Normalize((100.0,), (50.0,))])),
    ]
    for spec, reference in cases:
        for image in images[:4]:
            if image.shape[0] != 3 and "0.485" in spec:
                continue
            got = _C._transform_output(spec, image, SEED, 0)
            assert torch.equal(got, reference(image)), (spec, tuple(image.shape))


@pytest.mark.parametrize("value", ["0.5", "(0.1, -0.2, 3.0)"])
def test_random_erasing_after_normalize_erases_the_float_image_as_torchvision(images, value):
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    spec = f"ToTensor(), Normalize({mean}, {std}), RandomErasing(p=1, value={value})"
    v = torch.tensor(eval(value), dtype=torch.float32).reshape(-1, 1, 1)
    erased = 0
    for image in [im for im in images if im.shape[0] == 3][:3]:
        for index in range(4):
            box = _draws(spec, image.shape[1], image.shape[2], index + 1, position=2)[index]
            normalized = T1.Normalize(mean, std)(image.float().div(255))
            want = normalized
            if box["erase"] == [1.0]:
                erased += 1
                want = F.erase(normalized, int(box["i"][0]), int(box["j"][0]), int(box["h"][0]), int(box["w"][0]), v)
            assert torch.equal(_C._transform_output(spec, image, SEED, index), want), (value, box)
    assert erased > 0


# ---------------------------------------------------------------------------------------------- distributions
N = 12_000


def _torchvision_rrc_boxes(h: int, w: int, scale, ratio, count: int) -> np.ndarray:
    torch.manual_seed(0)
    image = torch.empty(1, h, w, dtype=torch.uint8)
    return np.array([T1.RandomResizedCrop.get_params(image, list(scale), list(ratio)) for _ in range(count)], float)


def _fastloop_rrc_boxes(h: int, w: int, scale, ratio, count: int) -> np.ndarray:
    spec = f"RandomResizedCrop(32, scale={tuple(scale)}, ratio={tuple(ratio)})"
    return np.array([[d["top"][0], d["left"][0], d["height"][0], d["width"][0]] for d in _draws(spec, h, w, count)])


@pytest.mark.parametrize("h,w,scale,ratio", [
    (375, 500, (0.08, 1.0), (3 / 4, 4 / 3)),
    (400, 180, (0.35, 1.0), (3 / 4, 4 / 3)),  # a narrow image: many tries fail, the fallback is hit often
    (64, 64, (0.5, 0.9), (0.5, 2.0)),
])
def test_random_resized_crop_boxes_follow_torchvisions_distribution(h, w, scale, ratio):
    ours = _fastloop_rrc_boxes(h, w, scale, ratio, N)
    theirs = _torchvision_rrc_boxes(h, w, scale, ratio, N)
    for k, name in enumerate(("top", "left", "height", "width")):
        assert not _ks_rejects(ours[:, k], theirs[:, k]), name
    assert not _ks_rejects(ours[:, 2] * ours[:, 3], theirs[:, 2] * theirs[:, 3]), "area"
    # The test can fail: another scale range is told apart.
    other = _torchvision_rrc_boxes(h, w, (scale[0] + 0.1, scale[1]), ratio, N)
    assert _ks_rejects(ours[:, 2] * ours[:, 3], other[:, 2] * other[:, 3])


def _torchvision_erasing_boxes(h: int, w: int, p: float, count: int) -> np.ndarray:
    torch.manual_seed(0)
    t = T.RandomErasing(p=p)
    image = torch.zeros(3, h, w, dtype=torch.uint8)
    out = []
    for _ in range(count):
        if torch.rand(1) >= t.p:
            out.append((-1, -1, 0, 0))
            continue
        params = t.make_params([image])
        out.append((params["i"], params["j"], params["h"], params["w"]) if params["v"] is not None else (-1, -1, 0, 0))
    return np.array(out, float)


def test_random_erasing_boxes_follow_torchvisions_distribution():
    h, w = 224, 160
    ours = np.array([[d["i"][0], d["j"][0], d["h"][0], d["w"][0]] if d["erase"] == [1.0] else [-1, -1, 0, 0]
                     for d in _draws("RandomErasing(p=0.7)", h, w, N)])
    theirs = _torchvision_erasing_boxes(h, w, 0.7, N)
    assert not _chi2_rejects([np.sum(ours[:, 2] == 0), np.sum(ours[:, 2] > 0)],
                             [np.sum(theirs[:, 2] == 0), np.sum(theirs[:, 2] > 0)])
    erased, erased_tv = ours[ours[:, 2] > 0], theirs[theirs[:, 2] > 0]
    for k, name in enumerate(("i", "j", "h", "w")):
        assert not _ks_rejects(erased[:, k], erased_tv[:, k]), name
    other = _torchvision_erasing_boxes(h, w, 0.5, N)
    assert _chi2_rejects([np.sum(ours[:, 2] == 0), np.sum(ours[:, 2] > 0)],
                         [np.sum(other[:, 2] == 0), np.sum(other[:, 2] > 0)])


def test_containers_draw_as_torchvision():
    draws = _C._transform_draws("RandomApply([CenterCrop(4)], p=0.3)", 10, 10, SEED, N)
    applied = sum(d[0]["applied"][0] for d in draws)
    assert not _chi2_rejects([applied, N - applied], [0.3 * N, 0.7 * N])
    assert _chi2_rejects([applied, N - applied], [0.35 * N, 0.65 * N])

    draws = _C._transform_draws("RandomChoice([CenterCrop(2), CenterCrop(3), CenterCrop(4)], p=[1, 2, 5])",
                                10, 10, SEED, N)
    counts = np.bincount([int(d[0]["index"][0]) for d in draws], minlength=3)
    torch.manual_seed(0)
    tv = np.bincount([int(torch.multinomial(torch.tensor([1 / 8, 2 / 8, 5 / 8]), 1)) for _ in range(N)], minlength=3)
    assert not _chi2_rejects(counts, tv)

    draws = _C._transform_draws("RandomOrder([CenterCrop(2), CenterCrop(3), CenterCrop(4)])", 10, 10, SEED, N)
    orders = [tuple(int(v) for v in d[0]["order"]) for d in draws]
    kinds = sorted(set(orders))
    assert len(kinds) == 6
    counts = np.array([orders.count(k) for k in kinds])
    torch.manual_seed(0)
    tv_orders = [tuple(torch.randperm(3).tolist()) for _ in range(N)]
    assert not _chi2_rejects(counts, np.array([tv_orders.count(k) for k in kinds]))


def test_the_same_seed_and_index_give_the_same_result_and_others_differ(images):
    spec = "RandomResizedCrop(48), RandomErasing(p=1, value='random')"
    image = images[1]
    first = _apply(spec, image, 3)
    assert torch.equal(first, _apply(spec, image, 3))
    assert not torch.equal(first, _apply(spec, image, 4))


# ---------------------------------------------------------------------------------------------- CLI
def _cli_batches(loader_dump, tmp_path, flags, batches: int):
    from safetensors.torch import load_file

    from conftest import run

    out = tmp_path / "cli.safetensors"
    run([loader_dump, *flags, "--dump-epoch", 1, "--dump-batches", batches, "--dump-out", out])
    tensors = load_file(str(out))
    return [tensors[f"images_{k}"] for k in range(batches)]


def test_the_built_in_augmentation_is_the_default_transform_spelled_out(loader_dump, tmp_path, image_folder):
    flags = ["--data", f"imagefolder:{image_folder}", "--batch-size", "8", "--image-size", "48", "--seed", "3",
             "--no-channels-last"]
    built_in = _cli_batches(loader_dump, tmp_path, flags, 3)
    spec = ("RandomResizedCrop(48), RandomHorizontalFlip(), ToTensor(), "
            "Normalize(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))")
    spelled = _cli_batches(loader_dump, tmp_path, flags + ["--transform", spec], 3)
    assert all(torch.equal(a, b) for a, b in zip(built_in, spelled))
    other = _cli_batches(loader_dump, tmp_path, flags + ["--transform", spec.replace("RandomResizedCrop(48)",
                                                                                      "RandomResizedCrop(48, scale=(0.5, 1))")], 3)
    assert not all(torch.equal(a, b) for a, b in zip(built_in, other))


# ---------------------------------------------------------------------------------------------- Loader(transform=)
def test_loader_takes_a_torchvision_pipeline_and_shows_it(image_folder):
    import pickle

    source = f"imagefolder:{image_folder}"
    default = fastloop.Loader(source, batch_size=8, workers=2, image_size=48, seed=3)
    spelled = fastloop.Loader(source, batch_size=8, workers=2, image_size=48, seed=3, transform=T.Compose([
        T.RandomResizedCrop(48), T.RandomHorizontalFlip(), T.ToTensor(),
        T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))]))
    assert spelled.transform.startswith("RandomResizedCrop(size=(48, 48)")
    assert "transform='RandomResizedCrop(size=(48, 48)" in repr(spelled)
    for (a, la), (b, lb) in zip(default, spelled):  # the built-in augmentation is this pipeline
        assert torch.equal(a, b) and torch.equal(la, lb)
    again = pickle.loads(pickle.dumps(spelled))
    assert again.transform == spelled.transform

    other = fastloop.Loader(source, batch_size=8, workers=1, image_size=48, seed=3, transform=T.Compose([
        T.RandomResizedCrop(48, scale=(0.5, 1)), T.TrivialAugmentWide(), T.ToImage(),
        T.ToDtype(torch.float32, scale=True), T.RandomErasing(0.5)]))
    images, labels = next(iter(other))
    assert images.shape == (8, 3, 48, 48) and images.dtype == torch.float32

    with pytest.raises(TypeError, match="Lambda is not supported"):
        fastloop.Loader(source, transform=T.Compose([T.Lambda(lambda x: x)]))
    with pytest.raises(TypeError, match="ends with uint8 images"):
        fastloop.Loader(source, image_size=48, transform=T.Compose([T.RandomResizedCrop(48)]))
    with pytest.raises(ValueError, match="transform ends in 40 x 40 images, but image_size is 48"):
        fastloop.Loader(source, batch_size=8, image_size=48, transform="CenterCrop(40), ToTensor()")
