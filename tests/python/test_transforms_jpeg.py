"""JPEG(quality) against torchvision's: fastloop encodes and decodes with libjpeg-turbo's TurboJPEG API (the system's
libjpeg-turbo, 2.1 on Debian 12) with the settings of torchvision's encode_jpeg / decode_jpeg (4:2:0 chroma, grey as
one component, the accurate integer DCT both ways, fancy upsampling); torchvision's wheel bundles its own
libjpeg-turbo (3.1 for torchvision 0.29). Equal version names would prove nothing, so the test shows it: on
photographs of odd and even sizes (partial MCUs at the right and bottom edges), RGB and grey, at qualities from 1 to
100, fastloop's round trip equals ``F.jpeg``'s byte for byte — the forward DCT, quantisation, inverse DCT, colour
conversion and upsampling of the two libraries give the same integers (libjpeg-turbo's SIMD and C paths of the
accurate DCT are exact integer arithmetic, so this holds whichever SIMD either library picks). The quality is drawn
as torch.randint draws it (every integer of the range, uniformly), and the arguments are checked with torchvision's
messages."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
import torch
import torchvision.transforms.v2 as T
import torchvision.transforms.v2.functional as F
from conftest import torchvision_error

fastloop = pytest.importorskip("fastloop")
from fastloop import _C  # noqa: E402
from fastloop.transforms import compile_transform  # noqa: E402

from test_decode_parity import _photo  # noqa: E402  (a synthetic photograph: discs, shading, grain, sensor noise)

SEED = 11
SIZES = [(96, 128), (61, 97), (375 // 3, 500 // 3)]  # (height, width): whole and partial 16 x 16 MCUs
QUALITIES = [1, 10, 50, 75, 90, 95, 100]


@pytest.fixture(scope="module")
def photos():
    images = []
    for k, (h, w) in enumerate(SIZES):
        rgb = torch.from_numpy(np.asarray(_photo(7 + k, w, h))).permute(2, 0, 1).contiguous()
        images += [rgb, F.rgb_to_grayscale(rgb)]
    return images


def _jpeg(image: torch.Tensor, quality: int) -> torch.Tensor:
    return _C._transform_apply(f"JPEG(quality=({quality}, {quality}))", image, SEED)


@pytest.mark.parametrize("quality", QUALITIES)
def test_round_trip_equals_torchvisions_bytes(photos, quality):
    for image in photos:
        got, want = _jpeg(image, quality), F.jpeg(image, quality)
        assert got.shape == want.shape == image.shape
        d = (got.to(torch.int16) - want.to(torch.int16)).abs()
        assert int(d.max()) == 0, (tuple(image.shape), quality, int(d.max()), float((d > 0).float().mean()))
        assert not torch.equal(got, image)  # it did compress


def test_the_drawn_quality_is_the_one_applied(photos):
    spec = compile_transform(T.JPEG((20, 80)))
    assert spec == "JPEG(quality=(20, 80))"
    image = photos[0]
    for index in range(6):
        quality = int(_C._transform_draws(spec, *image.shape[1:], SEED, index + 1)[index][0]["quality"][0])
        assert torch.equal(_C._transform_apply(spec, image, SEED, index), F.jpeg(image, quality)), quality


def test_quality_is_uniform_over_the_range_as_torch_randint():
    draws = [int(d[0]["quality"][0]) for d in _C._transform_draws("JPEG(quality=(5, 14))", 8, 8, SEED, 4000)]
    counts = np.bincount(draws, minlength=15)[5:]
    assert min(draws) == 5 and max(draws) == 14 and counts.sum() == 4000
    chi2 = float(((counts - 400.0) ** 2 / 400.0).sum())
    assert chi2 < 27.9  # chi-square, 9 degrees of freedom, p = 0.001
    fixed = {int(d[0]["quality"][0]) for d in _C._transform_draws(compile_transform(T.JPEG(33)), 8, 8, SEED, 50)}
    assert fixed == {33}


@pytest.mark.parametrize("spec, make", [
    ("JPEG(quality=0)", lambda: T.JPEG(0)),
    ("JPEG(quality=(50, 101))", lambda: T.JPEG((50, 101))),
    ("JPEG(quality=(60, 40))", lambda: T.JPEG((60, 40))),
    ("JPEG(quality=(1, 2, 3))", lambda: T.JPEG((1, 2, 3))),
    ("JPEG(quality=True)", lambda: T.JPEG(True)),
    ("JPEG(quality=50.0)", lambda: T.JPEG(50.0)),
])
def test_arguments_are_checked_with_torchvisions_messages(spec, make):
    kind, message = torchvision_error(make)
    with pytest.raises(kind) as raised:
        _C._transform_repr(spec)
    assert str(raised.value) == message


def test_an_image_of_four_channels_is_refused_as_torchvision_refuses_it():
    rgba = torch.zeros(4, 16, 16, dtype=torch.uint8)
    with pytest.raises(RuntimeError, match=re.escape("The number of channels should be 1 or 3, got: 4")):
        F.jpeg(rgba, 50)
    with pytest.raises(ValueError, match=re.escape("The number of channels should be 1 or 3, got: 4")):
        _jpeg(rgba, 50)
