"""What "equal to torchvision" means for the warps (affine, rotate, perspective, the AutoAugment family's
geometric operations) and the colour blends, on every x86-64 CPU.

fastloop restates one arithmetic for its warps (src/fastloop/data/transforms/functional/warp.cpp), on every CPU,
so its batches are the same bits on any machine: the grid as torchvision builds it on an Intel CPU with AVX-512,
then ATen's grid_sample as it is compiled for AVX-512 (its fused multiply-adds, its order of sums). torchvision's
own warps depend on two run-time choices, and either one gives other bits:

- the grid: ``_affine_grid`` and ``_perspective_grid`` multiply the base grid by theta with ``bmm``, which runs
  MKL's sgemm. MKL chooses its code path at start-up by the CPU's vendor as well as its instructions: on an Intel
  CPU with AVX-512 its kernel computes each coordinate as fma(y, t1, x * t0) + t2; its AVX2 path — on an
  AVX2-only CPU, and on AMD's CPUs with AVX-512 (Zen 4 and later: EPYC 9004, AWS m7a, GCP c3d, Azure's Genoa
  VMs), to which MKL's vendor check does not give its AVX-512 code (inferred: no AMD CPU was at hand, and the
  failures' pattern is the one reproduced here) — computes (x * t0 + y * t1) + t2 with no fma (reproduced on
  an Intel Xeon with ``MKL_ENABLE_INSTRUCTIONS=AVX2``: ATen's capability stays AVX512, the grid changes in the
  last bit on 18-32% of its coordinates). That was the 13 failures on an AMD EPYC with AVX-512: a rule that
  took capability "AVX512" to mean "fastloop's arithmetic" held on Intel's CPUs only.
- the sampling: ATen's grid_sample kernel, picked at start-up from the CPU's instructions alone
  (``torch.backends.cpu.get_cpu_capability()``, lowered by ``ATEN_CPU_CAPABILITY``); the AVX2 and baseline
  kernels round differently from the AVX-512 one.

Either way a bilinear value within a few float32 ulps of n + 0.5 rounds the other way, and a nearest sample point
within a few ulps of the middle between two pixels takes the other pixel. So equality is asserted only where this
process shows both: ``torch_kernels_are_fastloops()`` is the AVX-512 grid_sample kernel and
``torch_grids_are_fastloops()``, which builds torchvision's grids on probes and compares them bit for bit with
fastloop's restated arithmetic (computed exactly in numpy). Everywhere else, the measured bounds below.

Measured on the 12 replays of tests/python/test_transforms_{geometry,color}.py (torch 2.14.1, a 2-core AMD
EPYC, AVX2), fastloop against torchvision under each capability:

  one warp, bilinear    avx2: max 1 level, <= 0.011% of values differ; default: max 1, <= 0.52% (a rotation by
                        90 degrees about (20, 33.5), whose sample points all fall on the middles)
  one warp, nearest     avx2 and default: equal in every replay here (none of their sample points falls on a middle)
  chains (AutoAugment,  RandAugment / TrivialAugmentWide / AugMix bilinear: max 2 levels (a 1-level rounding
  RandAugment, AugMix,  raised by a later Contrast); with a nearest shear or translation: max 31 levels, in whole
  TrivialAugmentWide)   rows or columns where the shear puts the sample points on the middles (rows 7, 22, 37, ...
                        for a shear of 1/15), <= 0.52% of values off by more than 1, <= 1.38% differing, mean <= 0.028

The colour blends (brightness, contrast, saturation, sharpness: torch's ``add(..., alpha)``) restate the fused
multiply-add of ATen's vectorised kernels, AVX2 and AVX-512 alike (src/fastloop/data/transforms/functional/
color.cpp); the baseline kernel (``default``) multiplies and adds apart: chains of colour operations equal under
avx2, and under default off by 1 level where a product lands near n + 0.5 (and by 2 after a later Contrast).

The bilinear uint8 resize (Resize, RandomResizedCrop) restates ATen's fixed-point AVX2 kernel; the baseline
kernel interpolates in float32 and rounds: within 1 level (18-47% of values off by 1 under default).

The rule, asserted by ``assert_warp_matches`` and ``assert_chain_matches``: where torch_kernels_are_fastloops(),
equal bytes; one colour blend and one bilinear resize equal under AVX2 too, within 1 level under default; chains
of colour operations equal under AVX2, within the chain bounds under default; otherwise one bilinear warp within 1 level with at most 1% of the values off by 1, one nearest warp
equal, and a chain of operations within the bounds below. ``test_warp_parity_rule_fails_a_wrong_warp`` shows the
rule still fails a half-pixel shift, the other interpolation and another fill.
"""

from __future__ import annotations

import functools
from typing import Optional

import numpy as np
import torch

#: A chain's bounds where ATen's kernels are not AVX-512 (the measured worst in brackets).
CHAIN_MEAN_LEVELS = 0.1  # mean |difference| over the image's values [0.028]
CHAIN_SHARE_DIFFERENT = 0.03  # values that differ at all [0.0138]
CHAIN_SHARE_OFF_BY_MORE_THAN_ONE = 0.01  # values off by > 1 level [0.0052]
CHAIN_MAX_LEVELS_BILINEAR = 2  # the largest difference of a chain without a nearest warp [2], nor a stretch of
# the levels after it: AutoContrast / Equalize multiply a warp's 1-level difference by 255 / (the channel's range)
# (RandAugment's ShearX then AutoContrast on a dark photo: 6 levels on 0.007% of the values, measured under AVX2)
ONE_WARP_SHARE_OFF_BY_ONE = 0.01  # one bilinear warp: values off by 1 level [0.0052]


def torch_kernels_are_fastloops() -> bool:
    """Whether torchvision's warps here run the arithmetic fastloop's restate, so that the bytes are equal: ATen's
    AVX-512 grid_sample kernel (``get_cpu_capability()``) sampling a grid that torch's ``bmm`` made with the
    fused multiply-adds fastloop's grid rows use (torch_grids_are_fastloops(), shown on this machine, never
    inferred from the CPU's name)."""
    return torch.backends.cpu.get_cpu_capability() == "AVX512" and torch_grids_are_fastloops()


@functools.lru_cache(maxsize=None)
def torch_grids_are_fastloops() -> bool:
    """Whether torchvision's ``_affine_grid`` and ``_perspective_grid`` give, bit for bit, the grids of fastloop's
    restated arithmetic (functional/warp.cpp) on probes of the tests' sizes: x * a0 rounded, then
    fma(y, a1, that), then + a2 (and for a perspective, each of the three rows so, a division, minus 1).

    Their ``bmm`` runs MKL's sgemm, which picks its code path by the CPU's vendor and instructions: its
    AVX-512 path gives these fmas; its AVX2 path (an AVX2 CPU; an AMD CPU with AVX-512, which MKL does not
    run its AVX-512 code on; ``MKL_ENABLE_INSTRUCTIONS=AVX2`` here) multiplies and adds apart."""
    from torchvision.transforms.v2.functional._geometry import _affine_grid, _perspective_grid

    for w, h in ((64, 48), (37, 29), (224, 224), (500, 375), (375, 500)):
        theta = torch.tensor([[[0.9238795, -0.3826834, 1.7], [0.3826834, 0.9238795, -2.3]]])
        shear = torch.tensor([[[1.0, 0.792, -0.5 * 0.792 * h], [0.0, 1.0, 0.0]]])
        for t in (theta, shear):
            if not torch.equal(_affine_grid(t.clone(), w=w, h=h, ow=w, oh=h), _restated_affine_grid(t, w, h)):
                return False
        coeffs = [1.0123, 0.0531, -3.25, -0.0417, 0.9874, 2.125, 1.3e-4, -2.1e-4]
        if not torch.equal(_perspective_grid(coeffs, ow=w, oh=h, dtype=torch.float32, device=torch.device("cpu")),
                           _restated_perspective_grid(coeffs, w, h)):
            return False
    return True


def _fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 a * b + c rounded once: the product is exact in float64, TwoSum keeps the sum's rounding error,
    and a float64 sum that lands on a float32 midpoint is decided by that error's sign."""
    p, q = a.astype(np.float64) * b.astype(np.float64), np.broadcast_to(c, a.shape).astype(np.float64)
    s = p + q
    v = s - p
    error = (p - (s - v)) + (q - v)
    r = s.astype(np.float32)
    inf = np.float32(np.inf)
    other = np.nextafter(r, np.where(s > r, inf, -inf).astype(np.float32))  # the neighbour on s's side
    midpoint = (r.astype(np.float64) + other.astype(np.float64)) / 2 == s
    past = (error > 0) == (other > r)  # the exact sum lies beyond the midpoint, towards `other`
    return np.where(midpoint & (error != 0), np.where(past, other, r), r)


def _restated_rows(theta: np.ndarray, bx: np.ndarray, by: np.ndarray) -> list:
    """fma(y, t[1], x * t[0]) + t[2] for each output column of a 3 x k theta (float32)."""
    return [(_fma32(by, np.full_like(by, t[1]), bx * t[0]) + t[2]).astype(np.float32) for t in theta.T]


def _restated_affine_grid(theta: torch.Tensor, w: int, h: int) -> torch.Tensor:
    rescaled = (theta[0].T / torch.tensor([0.5 * w, 0.5 * h])).numpy()
    bx = torch.linspace((1.0 - w) * 0.5, (w - 1.0) * 0.5, steps=w).numpy()[None, :].repeat(h, 0)
    by = torch.linspace((1.0 - h) * 0.5, (h - 1.0) * 0.5, steps=h).numpy()[:, None].repeat(w, 1)
    return torch.from_numpy(np.stack(_restated_rows(rescaled, bx, by), -1)[None])


def _restated_perspective_grid(coeffs: list, w: int, h: int) -> torch.Tensor:
    numerator = (torch.tensor([coeffs[:3], coeffs[3:6]]).T / torch.tensor([0.5 * w, 0.5 * h])).numpy()
    denominator = torch.tensor([[coeffs[6], coeffs[7], 1.0]]).T.numpy()
    bx = torch.linspace(0.5, w - 0.5, steps=w).numpy()[None, :].repeat(h, 0)
    by = torch.linspace(0.5, h - 0.5, steps=h).numpy()[:, None].repeat(w, 1)
    den = _restated_rows(denominator, bx, by)[0]
    grid = [(row / den - np.float32(1)).astype(np.float32) for row in _restated_rows(numerator, bx, by)]
    return torch.from_numpy(np.stack(grid, -1)[None])


def torch_blends_are_fastloops() -> bool:
    """Whether ATen's colour blends fuse their multiply-add as fastloop's do (its AVX2 and AVX-512 kernels)."""
    return torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512")


def torch_resize_is_fastloops() -> bool:
    """Whether ATen resizes uint8 images bilinearly with its fixed-point AVX2 kernel (AVX2 and AVX-512), which
    fastloop's resize restates; the baseline kernel interpolates in float32: 1 level apart on 18-47% of values."""
    return torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512")


def assert_within_one_level(actual: torch.Tensor, expected: torch.Tensor, exact: bool, what: object = "") -> None:
    """Equal bytes where `exact` (ATen's kernel is the one fastloop restates), else every value within 1 level:
    a single resize or colour blend whose float32 result is rounded by another kernel."""
    s = difference_stats(actual, expected)
    assert s["max"] <= (0 if exact else 1), (what, torch.backends.cpu.get_cpu_capability(), s)


def difference_stats(actual: torch.Tensor, expected: torch.Tensor) -> dict:
    """Largest and mean |difference| in levels, the share of values that differ and of those off by more than 1."""
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == torch.uint8 and expected.dtype == torch.uint8
    d = (actual.to(torch.int16) - expected.to(torch.int16)).abs()
    if d.numel() == 0:
        return {"max": 0, "mean": 0.0, "different": 0.0, "off_by_more_than_one": 0.0}
    return {"max": int(d.max()), "mean": float(d.float().mean()), "different": float((d > 0).float().mean()),
            "off_by_more_than_one": float((d > 1).float().mean())}


def warp_matches(actual: torch.Tensor, expected: torch.Tensor, nearest: bool, exact: Optional[bool] = None) -> bool:
    """One warp against torchvision's (see the module's rule); `exact`: the AVX-512 rule (default: whether ATen
    runs those kernels here)."""
    s = difference_stats(actual, expected)
    if (torch_kernels_are_fastloops() if exact is None else exact) or nearest:
        return s["max"] == 0
    return s["max"] <= 1 and s["different"] <= ONE_WARP_SHARE_OFF_BY_ONE


def chain_matches(actual: torch.Tensor, expected: torch.Tensor, has_nearest_warp: bool,
                  exact: Optional[bool] = None, stretches_levels: bool = False) -> bool:
    """A chain of operations with at least one warp (or of colour operations, `exact` then
    torch_blends_are_fastloops()) against torchvision's replay (see the module's rule). `stretches_levels`: the
    chain has AutoContrast or Equalize, which scale a difference, or a hue shift after another operation (HSV turns
    a 1-level difference near grey into a larger one), so only the shares bound it."""
    s = difference_stats(actual, expected)
    if torch_kernels_are_fastloops() if exact is None else exact:
        return s["max"] == 0
    if not has_nearest_warp and not stretches_levels and s["max"] > CHAIN_MAX_LEVELS_BILINEAR:
        return False
    return (s["mean"] <= CHAIN_MEAN_LEVELS and s["different"] <= CHAIN_SHARE_DIFFERENT
            and s["off_by_more_than_one"] <= CHAIN_SHARE_OFF_BY_MORE_THAN_ONE)


def assert_warp_matches(actual: torch.Tensor, expected: torch.Tensor, nearest: bool, what: object = "") -> None:
    """warp_matches, failing with the difference's statistics, the capability and `what`."""
    assert warp_matches(actual, expected, nearest), (what, torch.backends.cpu.get_cpu_capability(),
                                                     difference_stats(actual, expected))


def assert_chain_matches(actual: torch.Tensor, expected: torch.Tensor, has_nearest_warp: bool,
                         what: object = "", exact: Optional[bool] = None, stretches_levels: bool = False) -> None:
    """chain_matches, failing with the difference's statistics, the capability and `what`."""
    assert chain_matches(actual, expected, has_nearest_warp, exact, stretches_levels), (
        what, torch.backends.cpu.get_cpu_capability(), difference_stats(actual, expected))
