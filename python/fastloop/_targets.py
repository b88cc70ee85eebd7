"""Detection targets in the padded form DETR- and YOLO-style code consumes: one tensor per key for a whole batch."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import torch


def pad_targets(targets: Sequence[Dict[str, Any]], max_boxes: Optional[int] = None,
                keys: Sequence[str] = ("boxes", "labels")) -> Dict[str, torch.Tensor]:
    """A batch's list of target dicts (``fastloop.Loader`` over a detection data set) as padded tensors.

    Args:
        targets: B target dicts, each with ``keys`` holding one entry per box (a sample without boxes, as
            torchvision's ``{"image_id": id}``, counts zero boxes).
        max_boxes: K, the boxes kept per sample (the first K); None: the batch's largest count.
        keys: the per-box entries to pad: ``boxes`` ``[N, 4]`` becomes ``[B, K, 4]`` (padded with 0),
            ``labels`` ``[N]`` becomes ``[B, K]`` (padded with -1), any other per-box tensor likewise with 0.

    Returns:
        A dict with each key padded, ``counts`` (int64 ``[B]``: the real boxes of each sample, at most K) and
        ``valid`` (bool ``[B, K]``). Plain tensors (a ``BoundingBoxes``' format and canvas stay in the dicts).

    Example::

        >>> images, targets = next(iter(loader))
        >>> padded = fastloop.pad_targets(targets, max_boxes=100)
        >>> padded["boxes"].shape, padded["counts"]
        (torch.Size([8, 100, 4]), tensor([3, 0, 7, 1, 2, 5, 1, 4]))
    """
    if not targets:
        raise ValueError("fastloop.pad_targets: an empty batch")
    counts = [len(t["boxes"]) if "boxes" in t else 0 for t in targets]
    if max_boxes is not None and max_boxes < 0:
        raise ValueError(f"fastloop.pad_targets: max_boxes must be >= 0, got {max_boxes}")
    k = max(counts) if max_boxes is None else max_boxes
    kept = torch.tensor([min(c, k) for c in counts], dtype=torch.int64)
    out: Dict[str, torch.Tensor] = {"counts": kept, "valid": torch.arange(k)[None, :] < kept[:, None]}
    for key in keys:
        like = next((t[key] for t in targets if key in t), None)
        if like is None:
            raise KeyError(f"fastloop.pad_targets: no target has {key!r}")
        like = like.as_subclass(torch.Tensor)
        fill = -1 if key == "labels" else 0
        padded = torch.full((len(targets), k, *like.shape[1:]), fill, dtype=like.dtype, device=like.device)
        for i, t in enumerate(targets):
            n = int(kept[i])
            if n:
                padded[i, :n] = t[key].as_subclass(torch.Tensor)[:n]
        out[key] = padded
    return out


__all__: List[str] = ["pad_targets"]
