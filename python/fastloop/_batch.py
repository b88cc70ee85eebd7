"""``fastloop.Loader(batch_transform=...)``: torchvision.transforms.v2's MixUp and CutMix on each batch.

torchvision applies them to batches after the DataLoader (in the loop, or in ``collate_fn``); the Loader does
the same to the batches its workers assemble, with torchvision's own rules (the partner of sample i is sample
i - 1, ``batch.roll(1, 0)``; ``lam ~ Beta(alpha, alpha)``; CutMix's box centred at a uniform pixel, ``lam``
corrected to the area kept; one-hot labels mixed by the same ``lam``). The draws come from the Loader's seed,
epoch, rank and batch number instead of torch's global generator, so the same seed mixes the same way.
"""

import math
import random
from typing import Any, List, Optional, Sequence, Tuple

import torch

__all__ = ["compile_batch_transform", "batch_transform_repr", "batch_transform_apply", "batch_rng"]

# ("MixUp" | "CutMix", alpha, num_classes), or ("RandomChoice", (those...), (p...)): what a Loader keeps (it pickles).
BatchSpec = Tuple[Any, ...]

_SUPPORTED = ("torchvision.transforms.v2.MixUp(alpha=..., num_classes=...), v2.CutMix(alpha=..., num_classes=...), "
              "or RandomChoice([MixUp(...), CutMix(...)], p=...) of them")


def _name(obj: Any) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _mix_spec(obj: Any) -> BatchSpec:
    from torchvision.transforms import v2

    if type(obj) not in (v2.MixUp, v2.CutMix):
        raise TypeError(f"fastloop.Loader: batch_transform: {_name(obj)} is not supported; supported: {_SUPPORTED}")
    kind = type(obj).__name__
    if obj._labels_getter is not v2.MixUp(num_classes=1)._labels_getter:
        raise TypeError(f"fastloop.Loader: batch_transform: {kind}(labels_getter=...) is not supported: the Loader "
                        "gives its batches' labels itself (leave labels_getter='default')")
    if obj.num_classes is None:  # torchvision's own check, for the Loader's index labels
        raise ValueError(f"fastloop.Loader: batch_transform: {kind}(): num_classes must be passed if the labels are "
                         "index-based (1D)")
    return (kind, float(obj.alpha), int(obj.num_classes))


def compile_batch_transform(obj: Any) -> BatchSpec:
    """The spec of a MixUp, a CutMix or a RandomChoice of them (v1 or v2 RandomChoice); TypeError otherwise.
    A spec already compiled (an unpickled Loader's) is returned as it is."""
    if _is_spec(obj):
        return obj
    from torchvision import transforms as v1
    from torchvision.transforms import v2

    if type(obj) in (v2.RandomChoice, v1.RandomChoice):
        children = tuple(_mix_spec(t) for t in obj.transforms)
        weights = obj.p if obj.p is not None else [1.0] * len(children)  # v2 normalises p; v1 keeps it (None: equal)
        total = float(sum(weights))
        return ("RandomChoice", children, tuple(float(w) / total for w in weights))
    return _mix_spec(obj)


def _is_spec(obj: Any) -> bool:
    if not isinstance(obj, tuple) or len(obj) != 3:
        return False
    if obj[0] == "RandomChoice":
        return (isinstance(obj[1], tuple) and all(_is_spec(s) and s[0] != "RandomChoice" for s in obj[1])
                and isinstance(obj[2], tuple) and len(obj[2]) == len(obj[1]))
    return obj[0] in ("MixUp", "CutMix") and isinstance(obj[1], float) and isinstance(obj[2], int)


def batch_transform_repr(spec: BatchSpec) -> str:
    """torchvision's spelling: "RandomChoice([MixUp(alpha=1.0, num_classes=10), ...], p=[0.5, 0.5])"."""
    if spec[0] == "RandomChoice":
        return f"RandomChoice([{', '.join(batch_transform_repr(s) for s in spec[1])}], p={list(spec[2])})"
    return f"{spec[0]}(alpha={spec[1]!r}, num_classes={spec[2]})"


def batch_num_classes(spec: BatchSpec) -> List[int]:
    """Every num_classes in the spec (the Loader checks them against its data's classes)."""
    return [n for s in spec[1] for n in batch_num_classes(s)] if spec[0] == "RandomChoice" else [spec[2]]


def batch_rng(seed: int, epoch: int, rank: int, batch: int) -> random.Random:
    """The draws of one batch: a function of (seed, epoch, rank, batch) only."""
    return random.Random(f"fastloop.batch_transform:{seed}:{epoch}:{rank}:{batch}")


def mix_params(spec: BatchSpec, rng: random.Random, height: int, width: int) -> Tuple[BatchSpec, dict]:
    """The transform chosen (RandomChoice) and its make_params, as torchvision draws them (MixUp: lam; CutMix:
    box (x1, y1, x2, y2) and lam_adjusted)."""
    if spec[0] == "RandomChoice":
        spec = rng.choices(spec[1], weights=spec[2])[0]
    lam = rng.betavariate(spec[1], spec[1])
    if spec[0] == "MixUp":
        return spec, {"lam": lam}
    r_x, r_y = rng.randrange(width), rng.randrange(height)
    r = 0.5 * math.sqrt(1.0 - lam)
    r_w_half, r_h_half = int(r * width), int(r * height)
    x1, y1 = max(r_x - r_w_half, 0), max(r_y - r_h_half, 0)
    x2, y2 = min(r_x + r_w_half, width), min(r_y + r_h_half, height)
    return spec, {"box": (x1, y1, x2, y2), "lam_adjusted": float(1.0 - (x2 - x1) * (y2 - y1) / (width * height))}


def _mix_labels(labels: torch.Tensor, num_classes: int, lam: float) -> torch.Tensor:
    soft = torch.nn.functional.one_hot(labels, num_classes=num_classes).float()
    return soft.roll(1, 0).mul_(1.0 - lam).add_(soft.mul(lam))


def batch_transform_apply(spec: BatchSpec, images: torch.Tensor, labels: torch.Tensor,
                          rng: random.Random) -> Tuple[torch.Tensor, torch.Tensor]:
    """(images, labels [B]) -> (mixed images, soft labels [B, num_classes] float32), as torchvision computes them."""
    spec, params = mix_params(spec, rng, images.shape[-2], images.shape[-1])
    if spec[0] == "MixUp":
        lam = params["lam"]
        return images.roll(1, 0).mul_(1.0 - lam).add_(images.mul(lam)), _mix_labels(labels, spec[2], lam)
    x1, y1, x2, y2 = params["box"]
    output = images.clone()
    output[..., y1:y2, x1:x2] = images.roll(1, 0)[..., y1:y2, x1:x2]
    return output, _mix_labels(labels, spec[2], params["lam_adjusted"])


def contains_batch_transform(obj: Any, depth: int = 0) -> Optional[str]:
    """The name of a MixUp or CutMix inside a transform= pipeline (they are batch transforms), else None."""
    if depth > 32 or isinstance(obj, (str, bytes)):
        return None
    if type(obj).__name__ in ("MixUp", "CutMix") and type(obj).__module__.startswith("torchvision."):
        return type(obj).__name__
    children: Sequence[Any] = getattr(obj, "transforms", None) or []
    for child in children if isinstance(children, (list, tuple)) else []:
        found = contains_batch_transform(child, depth + 1)
        if found:
            return found
    return None
