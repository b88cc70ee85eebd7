"""ElasticTransform against torchvision's: the kernel and the draws apart.

The kernel: fastloop's drawn displacement (``_transform_draws``: the [1, H, W, 2] field, x then y) replayed through
``torchvision.transforms.v2.functional.elastic(image, displacement, interpolation, fill)`` equals fastloop's image
by kernel_parity's rule for one warp — equal bytes where ATen samples with its AVX-512 grid_sample kernel and this
process's ``torch.linspace`` builds the identity grid with the fused multiply-adds fastloop's restatement uses
(shown here on the tests' sizes, never inferred from the CPU's name); elsewhere a bilinear warp within 1 level on
at most 1% of the values and a nearest warp equal. Masks move with nearest sampling (equal), boxes as
elastic_bounding_boxes moves them (within 1e-3 px: fastloop computes in float64, as torchvision does float64 boxes).

The draws: fastloop draws the noise from its own per-sample generator, so the field is compared with
torchvision's make_params in distribution: the two-sample Kolmogorov-Smirnov test (test_transforms_detection's
``_ks_same``) on per-sample statistics of the field (a pixel's dx and dy, the mean and the spread of dx, the
correlation of neighbouring pixels), for blurred and unblurred fields."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pytest
import torch
import torchvision.transforms.v2 as T
import torchvision.transforms.v2.functional as F
from torchvision import tv_tensors
from torchvision.transforms import InterpolationMode

from kernel_parity import _fma32, difference_stats, warp_matches

fastloop = pytest.importorskip("fastloop")
from fastloop import _C  # noqa: E402
from fastloop.transforms import compile_transform  # noqa: E402

from test_decode_parity import _photo  # noqa: E402

SEED = 5
HEIGHT, WIDTH = 75, 100


def _identity_grid_restated(size: int) -> np.ndarray:
    """torch.linspace((1 - size) / size, (size - 1) / size, size) in float32 as fastloop computes it: ATen's
    linspace kernel (from both ends, meeting halfway) with its products fused into the sums."""
    start, end = np.float32((1 - size) / size), np.float32((size - 1) / size)
    step = np.float32((end - start) / np.float32(size - 1))
    i = np.arange(size)
    low = _fma32(np.full(size, step, np.float32), i.astype(np.float32), np.full(size, start, np.float32))
    high = _fma32(np.full(size, -step, np.float32), (size - i - 1).astype(np.float32), np.full(size, end, np.float32))
    return np.where(i < size // 2, low, high).astype(np.float32)


def torch_elastic_is_fastloops(sizes=((HEIGHT, WIDTH), (WIDTH, HEIGHT), (31, 47))) -> bool:
    """Whether torchvision's elastic runs fastloop's arithmetic here: the AVX-512 grid_sample kernel, and identity
    grids equal bit for bit to fastloop's restatement."""
    from torchvision.transforms.v2.functional._geometry import _create_identity_grid

    if torch.backends.cpu.get_cpu_capability() != "AVX512":
        return False
    for h, w in sizes:
        grid = _create_identity_grid((h, w), device=torch.device("cpu"), dtype=torch.float32)
        if not (np.array_equal(grid[0, 0, :, 0].numpy(), _identity_grid_restated(w))
                and np.array_equal(grid[0, :, 0, 1].numpy(), _identity_grid_restated(h))):
            return False
    return True


@pytest.fixture(scope="module")
def photo() -> torch.Tensor:
    return torch.from_numpy(np.asarray(_photo(3, WIDTH, HEIGHT))).permute(2, 0, 1).contiguous()


def _displacement(spec: str, height: int, width: int, index: int = 0) -> torch.Tensor:
    d = _C._transform_draws(spec, height, width, SEED, index + 1)[index][0]["displacement"]
    return torch.tensor(d, dtype=torch.float32).reshape(1, height, width, 2)


CASES = [
    T.ElasticTransform(),
    T.ElasticTransform(alpha=120.0, sigma=3.0, interpolation=InterpolationMode.NEAREST),
    T.ElasticTransform(alpha=(30.0, 80.0), sigma=(4.0, 6.0), fill=(10, 200, 30)),
    T.ElasticTransform(alpha=20.0, sigma=0.0, fill=None),
    T.ElasticTransform(alpha=60.0, sigma=2.0, interpolation=InterpolationMode.NEAREST, fill=255),
]


@pytest.mark.parametrize("transform", CASES, ids=repr)
def test_the_kernel_equals_torchvisions_elastic_given_the_displacement(photo, transform):
    spec = compile_transform(transform)
    exact = torch_elastic_is_fastloops()
    nearest = transform.interpolation == InterpolationMode.NEAREST
    for image in (photo, F.rgb_to_grayscale(photo)):
        fill = transform.fill if image.shape[0] == 3 or not isinstance(transform.fill, tuple) else transform.fill[0]
        one = spec if fill == transform.fill else compile_transform(
            T.ElasticTransform(transform.alpha, transform.sigma, transform.interpolation, fill))
        for index in range(3):
            displacement = _displacement(one, *image.shape[1:], index)
            got = _C._transform_apply(one, image, SEED, index)
            want = F.elastic(image, displacement, interpolation=transform.interpolation, fill=fill)
            assert warp_matches(got, want, nearest, exact), (one, index, exact, difference_stats(got, want))
            assert not torch.equal(got, image)


def test_boxes_and_masks_move_as_torchvision_moves_them(photo):
    transform = T.ElasticTransform(alpha=40.0, sigma=4.0, fill={tv_tensors.Image: 7, tv_tensors.Mask: 255})
    spec = compile_transform(transform)
    boxes = torch.tensor([[10.0, 5.0, 60.0, 40.0], [0.0, 0.0, 99.0, 74.0], [70.5, 30.2, 90.7, 70.1]])
    masks = torch.zeros(3, HEIGHT, WIDTH, dtype=torch.uint8)
    for k, (x0, y0, x1, y1) in enumerate(boxes.int().tolist()):
        masks[k, y0:y1, x0:x1] = k + 1
    labels = torch.tensor([1, 2, 3])
    for index in range(3):
        displacement = _displacement(spec, HEIGHT, WIDTH, index)
        image, got_boxes, _, _, _, got_masks = _C._transform_apply_targets(spec, photo, boxes.double(), masks, True,
                                                                           labels, SEED, index)
        want_boxes = F.elastic(tv_tensors.BoundingBoxes(boxes.double(), format="XYXY", canvas_size=(HEIGHT, WIDTH)),
                               displacement)
        torch.testing.assert_close(got_boxes, want_boxes.as_subclass(torch.Tensor), atol=1e-3, rtol=0)
        want_masks = F.elastic(tv_tensors.Mask(masks), displacement, interpolation=InterpolationMode.NEAREST, fill=255)
        assert warp_matches(got_masks, want_masks.as_subclass(torch.Tensor), True)
        want_image = F.elastic(photo, displacement, fill=7)
        assert warp_matches(image, want_image, False, torch_elastic_is_fastloops())


def _ks_same(a: Sequence[float], b: Sequence[float]) -> bool:
    """Two-sample Kolmogorov-Smirnov at 0.1 % (test_transforms_detection's)."""
    a, b = np.sort(np.asarray(a, np.float64)), np.sort(np.asarray(b, np.float64))
    grid = np.concatenate([a, b])
    d = float(np.abs(np.searchsorted(a, grid, "right") / len(a) - np.searchsorted(b, grid, "right") / len(b)).max())
    return d <= 1.949 * math.sqrt((len(a) + len(b)) / (len(a) * len(b)))


def _statistics(fields: torch.Tensor) -> dict:
    """Per-sample statistics of [N, H, W, 2] fields."""
    dx, dy = fields[..., 0], fields[..., 1]
    centred = dx - dx.mean(dim=(1, 2), keepdim=True)
    neighbour = (centred[:, :, 1:] * centred[:, :, :-1]).mean(dim=(1, 2)) / centred.pow(2).mean(dim=(1, 2))
    return {"dx at (7, 11)": dx[:, 7, 11], "dy at (20, 3)": dy[:, 20, 3], "mean dx": dx.mean(dim=(1, 2)),
            "std dx": dx.std(dim=(1, 2)), "std dy": dy.std(dim=(1, 2)), "corner dy": dy[:, 0, 0],
            "neighbour correlation": neighbour}


@pytest.mark.parametrize("transform", [T.ElasticTransform(alpha=50.0, sigma=2.0),
                                       T.ElasticTransform(alpha=(30.0, 10.0), sigma=0.0)], ids=repr)
def test_the_field_is_drawn_as_torchvisions_make_params_draws_it(transform):
    height, width, count = 24, 32, 400
    spec = compile_transform(transform)
    ours = torch.stack([_displacement(spec, height, width, i)[0] for i in range(count)])
    torch.manual_seed(0)
    image = tv_tensors.Image(torch.zeros(3, height, width, dtype=torch.uint8))
    theirs = torch.cat([transform.make_params([image])["displacement"] for _ in range(count)])
    assert ours.shape == theirs.shape == (count, height, width, 2)
    a, b = _statistics(ours), _statistics(theirs)
    for name in a:
        assert _ks_same(a[name].tolist(), b[name].tolist()), name
    bound = max(transform.alpha[0] / width, transform.alpha[1] / height)
    assert float(ours.abs().max()) <= bound


def test_arguments_are_checked():
    assert compile_transform(T.ElasticTransform()) == (
        "ElasticTransform(alpha=(50.0, 50.0), sigma=(5.0, 5.0), interpolation=InterpolationMode.BILINEAR, fill=0)")
    with pytest.raises(ValueError, match="sigma should have positive values"):  # torchvision: at its first call
        compile_transform(T.ElasticTransform(sigma=(2.0, 0.0)))
    with pytest.raises(ValueError, match="If alpha is a sequence its length should be 1 or 2. Got 3"):
        _C._transform_repr("ElasticTransform(alpha=(1, 2, 3))")
    with pytest.raises(ValueError, match="bicubic"):
        compile_transform(T.ElasticTransform(interpolation=InterpolationMode.BICUBIC))
    with pytest.raises(ValueError, match="reflect padding"):  # torch's pad refuses it too
        _C._transform_apply("ElasticTransform(sigma=5.0)", torch.zeros(3, 16, 64, dtype=torch.uint8), SEED)
