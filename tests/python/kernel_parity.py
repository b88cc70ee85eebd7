"""What "equal to torchvision" means for the warps (affine, rotate, perspective, the AutoAugment family's
geometric operations) and the colour blends, on every x86-64 CPU.

fastloop restates one arithmetic for its warps: ATen's grid_sample as it is compiled for AVX-512 (its fused
multiply-adds, its order of sums; src/fastloop/data/transforms/functional/warp.cpp), on every CPU, so its
batches are the same bits on any machine. torchvision's warps run the grid_sample kernel ATen picks at start-up
(``torch.backends.cpu.get_cpu_capability()``, lowered by ``ATEN_CPU_CAPABILITY``), and the AVX2 and baseline
kernels round differently: a bilinear value within a few float32 ulps of n + 0.5 rounds the other way, and a
nearest sample point within a few ulps of the middle between two pixels takes the other pixel.

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

The rule, asserted by ``assert_warp_matches`` and ``assert_chain_matches``: where ATen runs its AVX-512 kernels,
equal bytes; one colour blend and one bilinear resize equal under AVX2 too, within 1 level under default; chains
of colour operations equal under AVX2, within the chain bounds under default; otherwise one bilinear warp within 1 level with at most 1% of the values off by 1, one nearest warp
equal, and a chain of operations within the bounds below. ``test_warp_parity_rule_fails_a_wrong_warp`` shows the
rule still fails a half-pixel shift, the other interpolation and another fill.
"""

from __future__ import annotations

from typing import Optional

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
    """Whether ATen runs the AVX-512 kernels whose arithmetic fastloop's warps restate: then the bytes are equal."""
    return torch.backends.cpu.get_cpu_capability() == "AVX512"


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
