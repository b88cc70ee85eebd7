"""``fastloop.Files``: image files and their labels as a :class:`fastloop.Loader` source."""

import operator
import os
from typing import List, Optional, Sequence, Union

__all__ = ["Files"]

PathLike = Union[str, "os.PathLike[str]"]


class Files:
    r"""A list of image files with their labels, for :class:`fastloop.Loader` in place of a ``--data`` string.

    The files are read and decoded by the Loader's C++ workers as an image folder's are (JPEG, PNG, WebP, BMP,
    PPM/PGM, TIFF, with the same ``bad_image_policy``); each must exist and have one of torchvision's image
    extensions when the Loader is made (``ValueError`` naming ``paths[i]`` otherwise).

    Args:
        paths: the image files. Relative paths are made absolute here, against the current folder, so a
            spawn-started process reads the same files.
        labels: one per path, all class indices (``int``, ``0 <= label``) or all class names (``str``).
        classes: the class names, index by index. None: for names, the sorted distinct names (as
            ``torchvision.datasets.ImageFolder`` sorts its class folders); for indices, ``"0"`` ... up to the
            largest label. Give it to make a train and a val ``Files`` agree on the indices when a split may
            lack a class.

    A ``Files`` is one split: ``Loader(Files(train_paths, train_labels))`` trains (random augmentation,
    shuffled, ``split="train"``) and ``Loader(Files(val_paths, val_labels, classes=...), split="val")`` evaluates
    (Resize + CenterCrop, in order). The CLI and recipes spell the same as ``--data csv:TRAIN.csv::VAL.csv``.

    Example::

        train = fastloop.Files(["a.jpg", "b.png"], ["cat", "dog"])
        loader = fastloop.Loader(train, batch_size=2, image_size=64)
    """

    def __init__(self, paths: Sequence[PathLike], labels: Sequence[Union[int, str]],
                 classes: Optional[Sequence[str]] = None) -> None:
        if isinstance(paths, (str, bytes)) or isinstance(labels, (str, bytes)):
            raise TypeError("fastloop.Files: paths and labels must be sequences (one label per path), not a str")
        self.paths: List[str] = [os.path.abspath(os.fspath(p)) for p in paths]
        labels = list(labels)
        if len(labels) != len(self.paths):
            raise ValueError(f"fastloop.Files: {len(self.paths)} paths but {len(labels)} labels; give one label per path")
        if not self.paths:
            raise ValueError("fastloop.Files: no files; give at least one image file and its label")
        if classes is not None:
            if isinstance(classes, str) or not all(isinstance(c, str) for c in classes):
                raise TypeError("fastloop.Files: classes must be a sequence of str (the name of each class index)")
            classes = list(classes)
            if len(set(classes)) != len(classes):
                raise ValueError("fastloop.Files: classes has a name twice; each class index needs its own name")
        self.labels: List[int] = _indices(labels, classes)
        if classes is None and isinstance(labels[0], str):
            classes = sorted(set(labels))
        self.classes: Optional[List[str]] = classes

    def __len__(self) -> int:
        return len(self.paths)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Files) and (self.paths, self.labels, self.classes) ==
                (other.paths, other.labels, other.classes))

    def __repr__(self) -> str:
        classes = len(self.classes) if self.classes is not None else max(self.labels) + 1
        return f"fastloop.Files({len(self.paths)} files, {classes} classes)"


Files.__module__ = "fastloop"  # its public name (signatures, docs, pickles): fastloop.Files


def _indices(labels: List[Union[int, str]], classes: Optional[List[str]]) -> List[int]:
    """The labels as class indices: names looked up in ``classes`` (or the sorted names), indices checked."""
    if all(isinstance(label, str) for label in labels):
        names = classes if classes is not None else sorted(set(labels))
        index = {name: i for i, name in enumerate(names)}
        for i, label in enumerate(labels):
            if label not in index:
                raise ValueError(f"fastloop.Files: labels[{i}] {label!r} is not one of classes ({len(names)} names)")
        return [index[label] for label in labels]
    out = []
    for i, label in enumerate(labels):
        if isinstance(label, (str, bool)) or not hasattr(label, "__index__"):
            kinds = sorted({type(x).__name__ for x in labels})
            raise TypeError(f"fastloop.Files: labels[{i}] is {type(label).__name__}; labels are all class indices "
                            f"(int) or all class names (str), got {', '.join(kinds)}")
        value = operator.index(label)
        if value < 0 or (classes is not None and value >= len(classes)):
            bound = f"[0, {len(classes)})" if classes is not None else ">= 0"
            raise ValueError(f"fastloop.Files: labels[{i}] = {value} is not a class index {bound}")
        out.append(value)
    return out
