"""``fastloop.Loader``: batches of a ``--data`` source made by fastloop's C++ worker threads."""

import os
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

import torch

from . import _C
from . import _loader_params as _params
from ._batch import (batch_num_classes, batch_rng, batch_transform_apply, batch_transform_repr,
                     compile_batch_transform, contains_batch_transform)
from ._files import Files
from .transforms import compile_transform

__all__ = ["Loader"]


def _group_rank(rank: Optional[int], world_size: Optional[int]) -> Tuple[int, int]:
    """The rank and size given, or torch.distributed's when it is initialised (DistributedSampler's rule)."""
    dist = torch.distributed
    initialised = dist.is_available() and dist.is_initialized()
    if world_size is None:
        world_size = dist.get_world_size() if initialised else 1
    if rank is None:
        rank = dist.get_rank() if initialised else 0
    return rank, world_size


class Loader:
    r"""Batches of ``(images, labels)`` from one split of a data source, assembled by fastloop's C++ threads.

    The same batches as ``fastloop train`` for the same settings, seed and epoch, bit for bit: the images
    decoded, augmented (train: random crop and flip; image files: RandomResizedCrop and flip; val/test:
    Resize and CenterCrop) and normalised into float tensors ``[B, C, H, W]``, labels int64 ``[B]``.

    Args:
{args}

    Iterating starts an epoch: the one set by :meth:`set_epoch`, or else the one after the previous
    iteration's (so a loop that never calls it still reshuffles). One iteration is active at a time.
    The tensors are the loader's own buffers (no copy); a CPU buffer is reused once Python frees it.

    Across processes: a Loader pickles as its arguments and epoch (not its threads or buffers), so
    ``torch.multiprocessing.spawn`` and spawn-started workers re-create it. A CPU Loader inherited through
    ``fork()`` (a ``DataLoader`` worker, ``os.fork``) starts its threads afresh in the child on its next
    iteration; an iteration begun before the fork raises ``RuntimeError`` there, and so does a CUDA Loader.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The arguments by name (rank and world_size resolved, transforms compiled to their specs): what
        # pickling carries to another process and what a forked child rebuilds its threads from.
        self._args: Dict[str, Any] = _params.bind(self, args, kwargs)
        given = self._args
        given["rank"], given["world_size"] = _group_rank(given["rank"], given["world_size"])
        transform, batch_transform = given["transform"], given["batch_transform"]
        mix = contains_batch_transform(transform)
        if mix:
            raise TypeError(f"fastloop.Loader: {mix} in transform= is a batch transform (it mixes samples of a "
                            f"batch); give it as batch_transform={mix}(...) instead")
        if transform is not None:  # kept as its spec: it pickles, and TypeError names what cannot run
            transform = compile_transform(transform)
        if batch_transform is not None:  # kept as its spec (a tuple): it pickles
            batch_transform = compile_batch_transform(batch_transform)
        given["transform"], given["batch_transform"] = transform, batch_transform
        self._impl = _C.Loader(_params.binding_args(given))
        if batch_transform is not None and min(batch_num_classes(batch_transform)) < self._impl.num_classes:
            raise ValueError(f"fastloop.Loader: batch_transform {batch_transform_repr(batch_transform)}: num_classes "
                             f"is below the data's {self._impl.num_classes} classes (one_hot needs them all)")
        self._pid = os.getpid()
        self._epoch = 0
        self._epoch_set = True  # the first iteration runs epoch 0
        self._iteration = 0  # the number of the iteration that runs (an iterator of another is over)

    @property
    def source(self) -> Union[str, Files]:
        """The ``--data`` source, or the :class:`fastloop.Files` given."""
        return self._args["source"]

    @property
    def split(self) -> str:
        """``"train"``, ``"val"`` or ``"test"``."""
        return self._args["split"]

    @property
    def batch_size(self) -> int:
        """Samples per batch."""
        return self._args["batch_size"]

    @property
    def transform(self) -> Optional[str]:
        """The compiled transform pipeline in fastloop's spec (None: the built-in augmentation)."""
        return self._args["transform"]

    @property
    def batch_transform(self) -> Optional[str]:
        """The batch step (MixUp / CutMix) in torchvision's spelling; None: batches as assembled."""
        spec = self._args.get("batch_transform")
        return batch_transform_repr(spec) if spec is not None else None

    @property
    def rank(self) -> int:
        """This process's rank in the group the epochs are shared by."""
        return self._args["rank"]

    @property
    def world_size(self) -> int:
        """The number of ranks the epochs are shared by."""
        return self._args["world_size"]

    def __reduce__(self) -> Tuple[Any, ...]:
        """Pickles as the arguments and the epoch state, not the threads or buffers: the copy is a new Loader
        (``torch.multiprocessing.spawn`` and other spawn-started processes re-create it on unpickling)."""
        return (_loader_rebuild, (self._args, self._epoch, self._epoch_set))

    def __len__(self) -> int:
        """Batches per epoch of this rank's share."""
        return len(self._impl)

    @property
    def classes(self) -> List[str]:
        """The name of each class index."""
        return list(self._impl.classes)

    @property
    def num_classes(self) -> int:
        """The number of classes of the data set."""
        return self._impl.num_classes

    @property
    def epoch(self) -> int:
        """The epoch the next iteration runs (unless :meth:`set_epoch` changes it)."""
        return self._epoch if self._epoch_set else self._epoch + 1

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch the next iteration runs, as ``DistributedSampler.set_epoch``."""
        self._epoch = int(epoch)
        self._epoch_set = True

    def __iter__(self) -> Iterator[Tuple[torch.Tensor, torch.Tensor]]:
        self._check_device_after_fork()
        self._epoch = self.epoch
        self._epoch_set = False
        self._iteration += 1
        # The iterator exists before the workers do: whatever ends it (its end, a break, an exception, a
        # Ctrl-C right after start) stops them. A Ctrl-C during start stops them and raises.
        iterator = _LoaderIterator(self, self._iteration)
        try:
            self._impl.start(self._epoch)
        except BaseException:  # a Ctrl-C raised here, after start returned: this frame keeps `iterator`
            self._impl.stop()
            raise
        return iterator

    def _check_device_after_fork(self) -> None:
        """A CUDA Loader cannot follow a fork (CUDA does not work in a forked child); a CPU one restarts its
        threads in the child on its next iteration (the C++ side does it)."""
        if self._pid == os.getpid() or torch.device(self._args["device"]).type == "cpu":
            return
        raise RuntimeError(
            f"fastloop.Loader on {self._args['device']!r} was created before this process forked, and CUDA "
            "cannot be used in a forked child; create the Loader in the child, or start it with the 'spawn' "
            "start method (torch.multiprocessing.spawn, multiprocessing.get_context('spawn'))")

    def close(self) -> None:
        """Stops the worker threads (an iteration in progress ends); iterating again restarts them."""
        self._impl.stop()

    def __repr__(self) -> str:
        """The source, the split and its extent, then every other argument that differs from its default."""
        shown = dict(split=self.split, batch_size=self.batch_size, batches=len(self), rank=self.rank,
                     world_size=self.world_size)
        for name, value in _params.changed(self._args).items():
            if name not in shown and name != "source":
                shown[name] = getattr(self, name) if name == "batch_transform" else value
        return f"fastloop.Loader({self.source!r}, " + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + ")"


# Made from the parameter table (_loader_params.py): the signature inspect and help() show, and its Args.
Loader.__init__.__signature__ = _params.signature()  # type: ignore[attr-defined]
Loader.__doc__ = Loader.__doc__.format(args=_params.args_doc())  # type: ignore[union-attr]


class _LoaderIterator:
    """One epoch of a Loader. Its end, or abandoning it (a ``break``, an exception), stops the threads."""

    def __init__(self, loader: Loader, iteration: int) -> None:
        self._loader = loader
        self._iteration = iteration
        self._done = False
        self._batches = 0  # handed out so far: the batch_transform's draws are per batch number
        self._epoch = loader._epoch

    def _running(self) -> bool:
        return not self._done and self._loader._iteration == self._iteration

    def __iter__(self) -> "_LoaderIterator":
        return self

    # In C++: what comes out of _next but StopIteration (a Ctrl-C, even on _next's first line) stops the
    # workers, since the exception's traceback keeps this iterator alive and __del__ would not run.
    __next__ = _C._loader_iterator_next

    def _next(self) -> Tuple[torch.Tensor, torch.Tensor]:
        if not self._running():
            raise StopIteration
        batch = self._loader._impl.next()
        if batch is None:  # the epoch's end: its workers have nothing left to do
            self._done = True
            self._loader._impl.stop()
            raise StopIteration
        spec = self._loader._args.get("batch_transform")
        if spec is not None:
            args = self._loader._args
            rng = batch_rng(args["seed"], self._epoch, args["rank"], self._batches)
            batch = batch_transform_apply(spec, batch[0], batch[1], rng)
        self._batches += 1
        return batch

    def __del__(self) -> None:
        if getattr(self, "_loader", None) is not None and self._running():
            self._loader._impl.stop()


def _loader_rebuild(args: Dict[str, Any], epoch: int, epoch_set: bool) -> Loader:
    """Unpickling: the same Loader, made afresh in this process, at the same epoch."""
    loader = Loader(**args)
    loader._epoch, loader._epoch_set = epoch, epoch_set
    return loader
