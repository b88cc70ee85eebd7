"""The loader's JPEG decode against torchvision's: JPEG photographs through ``Resize(s) + CenterCrop(c)`` that
shrink them 2x, 4x and 8x, run by ``fastloop.Loader(..., transform=X)`` and by ``torchvision.io.decode_image`` +
the same v2 object ``X``.

Default (``decode="exact"``): fastloop decodes each JPEG at full scale, only the rows and columns the centre
crop reads (libjpeg-turbo's ``jpeg_crop_scanline`` / ``jpeg_skip_scanlines``, whose pixels are the full
decode's), so the batches are torchvision's under kernel_parity.py's resize rule: equal bytes where ATen
resizes with its AVX2 fixed-point kernel (AVX2, AVX-512), within 1 level under ``ATEN_CPU_CAPABILITY=default``.

``decode="fast"`` decodes at the smallest DCT scale (1/2, 1/4, 1/8) that covers the resize: libjpeg-turbo's
scaled IDCT averages each block where the antialiased resize weighs pixels with its triangle. Measured in
levels of the uint8 result (AVX-512 ATen; the share is of values off by more than 1):

    shrink   the photos below            240 photographs (make_photo_set.sh's val split, 500x375)
             mean   max   share          mean   max   share
    2x       1.99   59    34%            1.40   95    23%
    4x       2.46   46    42%            1.45   62    26%
    8x       5.01   62    63%            2.72   80    44%

asserted here with a margin (FAST_BOUND; the photos below have more fine detail than those photographs).

The photographs: real ones cannot be fetched by a test and none is committed, so they are made here,
deterministically, as a "dead leaves" scene (occluding discs of every size, the model of natural images'
edge and scale statistics) with textured, shaded leaves, lens blur and sensor noise, saved as a camera
saves them (JPEG quality 75-95, 4:2:0 chroma) at 512x384, 500x375 and 375x500 (ImageNet's sizes, which are
no multiple of the 16-pixel MCU).
"""

from __future__ import annotations

import pathlib
from typing import Dict, List, Tuple

import numpy as np
import pytest
import torch
import torchvision
import torchvision.transforms.v2 as T

from kernel_parity import torch_resize_is_fastloops

fastloop = pytest.importorskip("fastloop")

# (short side of the photos, shrink): Resize to short / shrink, then a centre crop inside it.
SIZES = [(512, 384), (500, 375), (375, 500)]  # (width, height), pixels
SHRINKS = [2, 4, 8]
# decode="fast"'s bound per shrink, in levels: mean, max and the share of values off by more than 1, each the
# measurement in the module's docstring with a margin (photographs of finer detail measure more).
FAST_BOUND = {2: (3.0, 100, 0.50), 4: (3.5, 100, 0.55), 8: (7.0, 100, 0.80)}


def _noise(rng: np.random.Generator, height: int, width: int, cell: int) -> np.ndarray:
    """Smooth random texture in about [-1, 1]: white noise on a grid of `cell`-pixel cells, bilinearly enlarged."""
    from PIL import Image

    grid = rng.normal(0, 0.5, (height // cell + 2, width // cell + 2)).astype(np.float32)
    big = Image.fromarray(grid, mode="F").resize((grid.shape[1] * cell, grid.shape[0] * cell), Image.BILINEAR)
    return np.asarray(big)[:height, :width]


def _dead_leaves(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """A float RGB scene in [0, 255]: discs of radius 8-250 px (density ~ 1/r^3, scale invariant), each of a
    muted colour (natural scenes' channels are correlated) with a shading gradient and a texture of its own
    grain, the nearer ones occluding the farther; a soft sky behind them."""
    yy, xx = np.mgrid[0:height, 0:width]
    out = (90 + 80 * yy / height)[..., None] * np.array([0.8, 0.9, 1.1]) + 20 * _noise(rng, height, width, 64)[..., None]
    covered = np.zeros((height, width), dtype=bool)
    textures = [_noise(rng, height, width, cell) for cell in (3, 6, 12, 24)]
    for _ in range(3000):  # front to back: a disc paints only the pixels no nearer disc covers
        r = 8.0 / (1 - rng.random() * (1 - (8.0 / 250) ** 2)) ** 0.5  # P(r) ~ r^-3 on [8, 250]
        cy, cx = rng.uniform(-r, height + r), rng.uniform(-r, width + r)
        y0, y1 = max(0, int(cy - r)), min(height, int(cy + r) + 1)
        x0, x1 = max(0, int(cx - r)), min(width, int(cx + r) + 1)
        if y0 >= y1 or x0 >= x1:
            continue
        sy, sx = yy[y0:y1, x0:x1], xx[y0:y1, x0:x1]
        inside = ((sy - cy) ** 2 + (sx - cx) ** 2 <= r * r) & ~covered[y0:y1, x0:x1]
        if not inside.any():
            continue
        luma = rng.uniform(25, 220)
        colour = luma * (1 + rng.normal(0, 0.18, 3))
        angle = rng.uniform(0, 2 * np.pi)
        shade = 1 + rng.uniform(0, 0.35) * ((sy - cy) * np.sin(angle) + (sx - cx) * np.cos(angle)) / r
        grain = textures[rng.integers(len(textures))][y0:y1, x0:x1] * rng.uniform(0, 25)
        patch = colour * shade[..., None] + grain[..., None]
        out[y0:y1, x0:x1][inside] = patch[inside]
        covered[y0:y1, x0:x1] |= inside
    return out


def _photo(seed: int, width: int, height: int) -> "PIL.Image.Image":  # noqa: F821
    from PIL import Image, ImageFilter

    rng = np.random.default_rng(seed)
    scene = _dead_leaves(rng, height, width)
    lens = Image.fromarray(np.clip(scene, 0, 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(1.0))
    pixels = np.asarray(lens, dtype=np.float64) + rng.normal(0, 3, (height, width, 3))  # sensor noise
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> List[pathlib.Path]:
    """Three JPEG photographs of each size in SIZES, at qualities 75-95 with 4:2:0 chroma."""
    folder = tmp_path_factory.mktemp("decode_photos")
    paths = []
    for s, (width, height) in enumerate(SIZES):
        for k in range(3):
            path = folder / f"{width}x{height}_{k}.jpg"
            _photo(100 * s + k, width, height).save(path, "JPEG", quality=75 + 10 * k, subsampling="4:2:0")
            paths.append(path)
    return paths


def _transform(short: int, shrink: int) -> T.Compose:
    side = short // shrink  # the resize's short side: exactly `shrink` times smaller (rounded down)
    return T.Compose([T.Resize(side), T.CenterCrop(side - side // 8), T.ToDtype(torch.float32, scale=True)])


def _levels(images: torch.Tensor) -> torch.Tensor:
    """ToDtype(float32, scale=True)'s values back in uint8 levels (exact: v / 255 * 255 rounds to v)."""
    return (images * 255).round().to(torch.uint8)


def _loader_levels(paths: List[pathlib.Path], transform: T.Compose, **kwargs) -> torch.Tensor:
    loader = fastloop.Loader(fastloop.Files(paths, [0] * len(paths)), split="val", batch_size=len(paths), workers=1,
                             transform=transform, **kwargs)
    (images, _), = list(loader)
    return _levels(images)


def _torchvision_levels(paths: List[pathlib.Path], transform: T.Compose) -> torch.Tensor:
    return torch.stack([_levels(transform(torchvision.io.decode_image(str(p)))) for p in paths])


def _cases(photos: List[pathlib.Path], shrink: int) -> List[Tuple[T.Compose, List[pathlib.Path]]]:
    """The transform of each short side at `shrink`, with the photos of that short side (one batch: the
    square centre crop gives landscape and portrait photos one size)."""
    by_short: Dict[int, List[pathlib.Path]] = {}
    for path in photos:
        width, height = (int(v) for v in path.stem.split("_")[0].split("x"))
        by_short.setdefault(min(width, height), []).append(path)
    return [(_transform(short, shrink), paths) for short, paths in sorted(by_short.items())]


def _differences(photos: List[pathlib.Path], shrink: int, **kwargs) -> torch.Tensor:
    """|fastloop.Loader - torchvision| in levels, over every photo at `shrink`, as int16."""
    diffs = []
    for transform, paths in _cases(photos, shrink):
        got, want = _loader_levels(paths, transform, **kwargs), _torchvision_levels(paths, transform)
        assert got.shape == want.shape, (got.shape, want.shape)
        diffs.append((got.to(torch.int16) - want.to(torch.int16)).abs().flatten())
    return torch.cat(diffs)


@pytest.mark.parametrize("shrink", SHRINKS)
def test_default_decode_gives_torchvisions_pixels(photos, shrink):
    d = _differences(photos, shrink)
    exact = torch_resize_is_fastloops()
    assert int(d.max()) <= (0 if exact else 1), (shrink, torch.backends.cpu.get_cpu_capability(), _stats(d))


def _stats(d: torch.Tensor) -> dict:
    return {"mean": float(d.float().mean()), "max": int(d.max()), "off_by_more_than_one": float((d > 1).float().mean())}


@pytest.mark.parametrize("shrink", SHRINKS)
def test_fast_decode_stays_within_its_stated_bound(photos, shrink):
    stats = _stats(_differences(photos, shrink, decode="fast"))
    mean, largest, share = FAST_BOUND[shrink]
    assert stats["mean"] <= mean and stats["max"] <= largest and stats["off_by_more_than_one"] <= share, (shrink, stats)
    assert stats["max"] > 1, (shrink, stats)  # it is the reduced decode: otherwise this test measures nothing


def test_fast_decode_is_the_default_at_no_shrink(photos):
    """Where the resize shrinks less than 2x there is no reduced scale to take: "fast" gives "exact"'s bytes."""
    group = [p for p in photos if p.stem.startswith("512x")]
    transform = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToDtype(torch.float32, scale=True)])
    assert torch.equal(_loader_levels(group, transform, decode="fast"), _loader_levels(group, transform))


@pytest.mark.parametrize("bad", ["Fast", "dct", "", None, 1])
def test_a_bad_decode_names_the_values_it_may_take(photos, bad):
    with pytest.raises(ValueError, match=r"decode must be one of 'exact', 'fast', got"):
        fastloop.Loader(fastloop.Files(photos[:1], [0]), split="val", decode=bad)


def test_decode_is_kept_by_pickling_and_shown_by_repr(photos):
    import pickle

    loader = fastloop.Loader(fastloop.Files(photos[:2], [0, 0]), split="val", batch_size=2, workers=0,
                             transform=_transform(384, 4), decode="fast")
    assert "decode='fast'" in repr(loader)
    again = pickle.loads(pickle.dumps(loader))
    (a, _), = list(loader)
    (b, _), = list(again)
    assert torch.equal(a, b)
