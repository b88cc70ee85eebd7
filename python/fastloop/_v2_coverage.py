"""Every transform class of the installed ``torchvision.transforms.v2`` and what fastloop does with it.

The status is read from the code at run time: a class *runs* when this build compiles it (its name is in
:func:`fastloop.transforms.supported_transforms`, or it is a container ``compile_transform`` nests); a few are
refused *by design* (below, each with its reason); any other class is *not yet* supported, with the one-line
reason kept here. docs/python.md's table is generated from :func:`v2_coverage`
(``tools/docs/make_python_md.py``) and tests/python/test_v2_coverage.py checks it against the classes.
"""

from __future__ import annotations

import inspect
from typing import Dict, List, NamedTuple

__all__ = ["V2Class", "v2_coverage", "v2_transform_classes", "coverage_table"]

RUNS = "runs"
BY_DESIGN = "by design"
NOT_YET = "not yet"

#: Classes fastloop leaves out of ``transform=`` on purpose, and what to do instead.
_BY_DESIGN: Dict[str, str] = {
    "Lambda": "refused: Python code per sample would hold the GIL in every worker thread; apply the function to "
              "the batch in the loop",
    "ToPILImage": "refused: a PIL image is not a tensor a batch can hold; the workers write tensors",
    "MixUp": "runs on batches as `Loader(batch_transform=...)` (alone or in a `RandomChoice` with `CutMix`), as "
             "torchvision applies it after the DataLoader",
    "UniformTemporalSubsample": "runs in video Loaders (`fastloop.VideoFolder`, `VideoFiles`, the CLI's `--transform` "
                                "with video data): at the pipeline's top level it picks each clip's frames before "
                                "they are decoded; image pipelines have no time axis to subsample",
    "CutMix": "runs on batches as `Loader(batch_transform=...)` (alone or in a `RandomChoice` with `MixUp`), as "
              "torchvision applies it after the DataLoader",
}

#: Why each class that this build does not compile is not supported yet (issue 60 tracks them). A class that
#: comes to run leaves its line unused; a class of a newer torchvision without a line here reads "no reason
#: recorded", which tests/python/test_v2_coverage.py fails.
_NOT_YET: Dict[str, str] = {
}


class V2Class(NamedTuple):
    """One class of ``torchvision.transforms.v2`` and what fastloop does with it."""

    name: str  #: the class name, e.g. ``"RandomResizedCrop"``
    status: str  #: ``"runs"``, ``"by design"`` or ``"not yet"``
    note: str  #: why, for the classes that do not run in ``transform=`` ("" for the others)


def v2_transform_classes() -> List[str]:
    """The names of the transform classes that ``torchvision.transforms.v2`` exports, sorted.

    A class counts when it is exported by name from ``torchvision.transforms.v2`` and subclasses
    ``v2.Transform`` (the base class itself excluded): every operation, the containers (``Compose``,
    ``RandomApply``, ``RandomChoice``, ``RandomOrder``) and the batch transforms (``MixUp``, ``CutMix``).

    Returns:
        The class names, e.g. ``["AugMix", "AutoAugment", "CenterCrop", ...]``.
    """
    from torchvision.transforms import v2

    return sorted(name for name, obj in vars(v2).items()
                  if inspect.isclass(obj) and issubclass(obj, v2.Transform) and obj is not v2.Transform)


def _compiled_names() -> List[str]:
    """What this build's ``compile_transform`` accepts: its operations and its containers."""
    from . import transforms

    return sorted(set(transforms.supported_transforms()) | set(transforms._CONTAINERS))


def v2_coverage() -> List[V2Class]:
    """What fastloop does with each transform class of the installed ``torchvision.transforms.v2``.

    A class *runs* when ``fastloop.transforms.compile_transform`` compiles it (this build's
    :func:`fastloop.transforms.supported_transforms` and the containers it nests); ``Lambda``, ``ToPILImage``,
    ``MixUp`` and ``CutMix`` are refused in ``transform=`` *by design* (the last two run as
    ``Loader(batch_transform=...)``); every other class is *not yet* supported and ``compile_transform`` raises
    ``TypeError`` for it.

    Returns:
        One :class:`V2Class` per class of :func:`v2_transform_classes`, in its order.

    Example::

        >>> from fastloop._v2_coverage import v2_coverage
        >>> [c for c in v2_coverage() if c.name == "Lambda"]
        [V2Class(name='Lambda', status='by design', note='refused: Python code per sample ...')]
    """
    compiled = set(_compiled_names())
    rows = []
    for name in v2_transform_classes():
        if name in compiled:
            rows.append(V2Class(name, RUNS, ""))
        elif name in _BY_DESIGN:
            rows.append(V2Class(name, BY_DESIGN, _BY_DESIGN[name]))
        else:
            rows.append(V2Class(name, NOT_YET, _NOT_YET.get(name, "no reason recorded")))
    return rows


def coverage_table(rows: List[V2Class]) -> str:
    """The rows as the markdown table of docs/python.md: ``| class | fastloop | note |``, one line per class.

    Args:
        rows: what :func:`v2_coverage` returns.

    Returns:
        The table's lines, ending in a newline.
    """
    lines = ["| class | fastloop | note |", "|---|---|---|"]
    lines += [f"| `{r.name}` | {r.status} | {r.note} |" for r in rows]
    return "\n".join(lines) + "\n"
