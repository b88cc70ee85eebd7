"""A random resize (RandomResize, RandomShortestSize, ScaleJitter), an optional flip, then RandomCrop: fastloop runs
them as one step that resizes only the window the crop keeps (src/fastloop/data/transforms/resize_crop_fusion.h).
Asserted against torchvision's functional run one transform after another with fastloop's draws (each transform's
own stream, the crop's drawn at the resized size): boxes within 1e-3 px, labels and masks equal, images equal
(kernel_parity's resize rule), for crops inside the resized image and past its edges (padding with a fill per
type), flipped and not, bilinear, bicubic and nearest; and the image alone (_transform_apply) equal to the image
with targets.
"""

from __future__ import annotations

import pytest
import torch
import torchvision.transforms.v2 as T
import torchvision.transforms.v2.functional as F
from torchvision import tv_tensors
from torchvision.transforms import InterpolationMode

from kernel_parity import assert_within_one_level, torch_resize_is_fastloops
from conftest import assert_boxes_close
from test_transforms_detection import HEIGHT, WIDTH, SEED, _sample, _tv

fastloop = pytest.importorskip("fastloop")
from fastloop.transforms import compile_transform  # noqa: E402
_C = fastloop._C

MASK_FILL, IMAGE_FILL = 255, 7
PIPELINES = [
    [T.RandomResize(20, 120), T.RandomHorizontalFlip(),
     T.RandomCrop(48, pad_if_needed=True, fill={tv_tensors.Mask: MASK_FILL, "others": IMAGE_FILL})],
    [T.RandomShortestSize([30, 60, 110]), T.RandomVerticalFlip(), T.RandomCrop((40, 56), padding=3, pad_if_needed=True,
                                                                                fill=5)],
    [T.ScaleJitter((64, 48)), T.RandomCrop(30, pad_if_needed=True)],
    [T.RandomResize(20, 120, interpolation=InterpolationMode.NEAREST), T.RandomHorizontalFlip(p=1.0),
     T.RandomCrop(48, pad_if_needed=True, fill={tv_tensors.Mask: MASK_FILL, "others": IMAGE_FILL})],
    [T.RandomResize(20, 120, interpolation=InterpolationMode.BICUBIC), T.RandomCrop(36, pad_if_needed=True)],
]


def _fill(crop: T.RandomCrop, x) -> float:
    fill = crop.fill
    if isinstance(fill, dict):
        return fill.get(type(x), fill.get("others", 0))
    return fill


def _replay(transforms, sizes: dict, draws: list, x):
    """The transforms on tv_tensor `x` with fastloop's draws: `sizes` the resize's, `draws` all of them at the
    resized size (the flip's and the crop's)."""
    resize, crop = transforms[0], transforms[-1]
    x = F.resize(x, [int(v) for v in sizes["size"]], interpolation=resize.interpolation, antialias=resize.antialias)
    if len(transforms) == 3 and draws[1]["flip"][0]:
        x = F.vertical_flip(x) if isinstance(transforms[1], T.RandomVerticalFlip) else F.horizontal_flip(x)
    left, top, right, bottom = (int(v) for v in draws[-1]["padding"])
    if left or top or right or bottom:
        x = F.pad(x, [left, top, right, bottom], fill=_fill(crop, x))
    return F.crop(x, int(draws[-1]["top"][0]), int(draws[-1]["left"][0]), int(draws[-1]["height"][0]),
                  int(draws[-1]["width"][0]))


@pytest.mark.parametrize("transforms", PIPELINES, ids=lambda ts: " + ".join(type(t).__name__ for t in ts))
def test_fused_resize_flip_crop_equals_torchvision_one_after_another(transforms):
    spec = ", ".join(compile_transform(t) for t in transforms)
    nearest = transforms[0].interpolation == InterpolationMode.NEAREST
    sizes = _C._transform_draws(spec, HEIGHT, WIDTH, SEED, 16)
    padded = cropped = 0
    for index in range(16):
        image, boxes, masks, labels = _sample(700 + index)
        h, w = (int(v) for v in sizes[index][0]["size"])
        draws = _C._transform_draws(spec, h, w, SEED, index + 1)[index]
        padded += any(draws[-1]["padding"])
        cropped += h > int(draws[-1]["height"][0]) or w > int(draws[-1]["width"][0])
        got_image, got_boxes, _, got_labels, kept, got_masks = _C._transform_apply_targets(
            spec, image, boxes.double(), masks, True, labels, SEED, index)
        want = [_replay(transforms, sizes[index][0], draws, x) for x in _tv(image, boxes, masks)]
        what = (spec, index, sizes[index][0], draws)
        assert_boxes_close(got_boxes, want[1], what)
        assert torch.equal(got_labels, labels) and torch.equal(kept, torch.arange(len(labels)))
        assert torch.equal(got_masks, want[2]), what
        assert_within_one_level(got_image, want[0], exact=nearest or torch_resize_is_fastloops(), what=what)
        assert torch.equal(_C._transform_apply(spec, image, SEED, index), got_image), what
    assert padded and cropped, (spec, padded, cropped)  # both kinds of window were tried
