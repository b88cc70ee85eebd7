"""``fastloop.Loader``: batches of a ``--data`` source made by fastloop's C++ worker threads."""

import numbers
import os
import zlib
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

import torch

from . import _C
from . import _fields
from . import _loader_params as _params
from ._batch import (batch_num_classes, batch_rng, batch_transform_apply, batch_transform_repr,
                     compile_batch_transform, contains_batch_transform)
from ._arrow import is_dataset
from ._files import Files
from .transforms import compile_transform, compile_views

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

    Decoding: a JPEG is decoded by libjpeg-turbo at full scale, only the rows and columns the transform's first
    crop or resize reads (``jpeg_crop_scanline`` / ``jpeg_skip_scanlines``, the same pixels as a whole decode),
    so the images are what ``torchvision.io.decode_image`` and the same ``transform`` object give, as far as
    the transforms' own parity goes (a resize: equal bytes where ATen resizes uint8 images with its AVX2 or
    AVX-512 kernel, within 1 level elsewhere; ``tests/python/test_decode_parity.py`` over JPEG photographs
    shrunk 2x, 4x and 8x). Nothing is approximated unless ``decode="fast"`` asks for it (see its entry above).

    Iterating starts an epoch: the one set by :meth:`set_epoch`, or else the one after the previous
    iteration's (so a loop that never calls it still reshuffles). One iteration is active at a time.
    The tensors are the loader's own buffers (no copy); a CPU buffer is reused once Python frees it.

    Resuming mid-epoch: :meth:`state_dict` after k batches of epoch e, given to :meth:`load_state_dict` of a
    Loader made with the same arguments, makes its next iteration yield batches k + 1, ... of epoch e, then
    the same later epochs, bit for bit, without decoding the first k again. Ranks that save at the same step
    save the same state, and a group of another size may load it: its ranks share the rest of the epoch.

    Several views of each image (SimCLR, DINO): ``transform=[P1, P2, ...]`` (one pipeline per view) or
    ``views=N`` (N views of one ``transform``) yields ``(views, labels)``, ``views`` a list of
    ``[B, C, H_v, W_v]`` tensors from one decode of each image. Example::

        loader = fastloop.Loader("imagefolder:photos", transform=[global_crop, global_crop, local_crop])
        for (g1, g2, local), labels in loader:  # [B, 3, 224, 224] twice, [B, 3, 96, 96]

    A pipeline with ``FiveCrop`` or ``TenCrop`` (in it or in a ``Compose``) yields what ``DataLoader`` collates of
    its tuple of crops: ``(crops, labels)``, ``crops`` a list of 5 (10) tensors ``[B, C, H, W]``, made as views of
    one decode that draw alike (torchvision draws the transforms after the crop once for the whole tuple).

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
        _params.decode_check(given["decode"])  # None too, which binding_args would leave out
        transform, batch_transform = given["transform"], given["batch_transform"]
        if hasattr(given["source"], "_fastloop_video_transform"):  # clips: a temporal subsample picks their frames
            given["source"], transform = given["source"]._fastloop_video_transform(transform, given["views"])
        # Kept as specs (a list of them for views): they pickle, and TypeError names what cannot run.
        given["transform"], given["views"] = _transforms_compiled(transform, given["views"])
        if _params.crop_views(given["transform"]):
            if batch_transform is not None:
                raise TypeError(f"fastloop.Loader: batch_transform={type(batch_transform).__name__}(...) with a "
                                "FiveCrop or TenCrop: DataLoader would give the batch transform a list of crops, "
                                "which MixUp and CutMix refuse; drop batch_transform")
            if hasattr(given["source"], "_fastloop_target"):
                raise TypeError("fastloop.Loader: BoundingBoxes'es and Mask's are not supported by FiveCrop() or "
                                "TenCrop() (torchvision refuses them too): use them on a classification source")
        if given["views"] is not None and batch_transform is not None:
            raise TypeError(f"fastloop.Loader: batch_transform={type(batch_transform).__name__}(...) with several "
                            "views: MixUp and CutMix mix the labels of a batch, which views for self-supervised "
                            "learning do not use; drop batch_transform, or mix each view in the loop")
        if batch_transform is not None and hasattr(given["source"], "_fastloop_target"):
            raise TypeError(f"fastloop.Loader: batch_transform={type(batch_transform).__name__}(...) mixes the "
                            "labels of classification batches; a data set with boxes and masks has targets it "
                            "cannot mix: drop batch_transform")
        if batch_transform is not None:  # kept as its spec (a tuple): it pickles
            batch_transform = compile_batch_transform(batch_transform)
        given["batch_transform"] = batch_transform
        self._fields = _fields.FieldSources(given) if _fields.wanted(given) else None
        binding = _params.binding_args(given if self._fields is None else {**given, "source": "fields"})
        if self._fields is not None:
            _fields_check(given)
            binding = self._fields.binding_args(binding)
        self._impl = _C.Loader(binding)
        self._targets_output = _targets_output(given["transform"])  # what the targets' types become
        if batch_transform is not None and min(batch_num_classes(batch_transform)) < self._impl.num_classes:
            raise ValueError(f"fastloop.Loader: batch_transform {batch_transform_repr(batch_transform)}: num_classes "
                             f"is below the data's {self._impl.num_classes} classes (one_hot needs them all)")
        self._pid = os.getpid()
        self._epoch = 0
        self._epoch_set = True  # the first iteration runs epoch 0
        self._iteration = 0  # the number of the iteration that runs (an iterator of another is over)
        self._resume: Optional[_Position] = None  # where the next iteration starts, from load_state_dict
        self._progress: Optional[_Progress] = None  # the latest iteration, until it ends

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
    def transform(self) -> Union[None, str, List[str]]:
        """The compiled transform pipeline in fastloop's spec (None: the built-in augmentation); a list of them,
        one per view, when given a list."""
        return self._args["transform"]

    @property
    def views(self) -> Optional[int]:
        """The views of each image per batch; None: one, batches of ``(images, labels)`` tensors."""
        return self._args["views"]

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
        """Pickles as the arguments and the epoch state (with a state loaded and not yet run), not the threads
        or buffers: the copy is a new Loader (``torch.multiprocessing.spawn`` and other spawn-started
        processes re-create it on unpickling)."""
        resume = tuple(self._resume) if self._resume is not None else None
        return (_loader_rebuild, (self._args, self._epoch, self._epoch_set, resume))

    def __len__(self) -> int:
        """Batches per epoch of this rank's share."""
        return len(self._impl)

    @property
    def classes(self) -> Optional[List[str]]:
        """The name of each class index. With ``fields``, those of its class field (``cls``; an Arrow source's
        ``label_column`` or ``ClassLabel`` column), or None when it asks for none (image-caption samples)."""
        if self._fields is not None:
            names = self._fields.classes()
            return list(names) if names is not None else None
        return list(self._impl.classes)

    @property
    def num_classes(self) -> Optional[int]:
        """The number of classes of the data set (None: a Loader with ``fields`` that asks for no class field)."""
        if self._fields is not None:
            names = self._fields.classes()
            return len(names) if names is not None else None
        return self._impl.num_classes

    @property
    def samples_skipped(self) -> int:
        """Bad samples skipped (and replaced by the next one) in the epoch that runs or ran last, with
        ``bad_image_policy="skip"``: undecodable images, and with ``fields`` samples that lack a field or hold text
        that is not UTF-8, JSON that does not parse or a class that is not a whole number."""
        return self._impl.samples_skipped

    @property
    def epoch(self) -> int:
        """The epoch the next iteration runs (unless :meth:`set_epoch` changes it)."""
        return self._epoch if self._epoch_set else self._epoch + 1

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch the next iteration runs, as ``DistributedSampler.set_epoch``. The epoch of a state
        loaded by :meth:`load_state_dict` keeps its position; another starts at its first batch."""
        self._epoch = int(epoch)
        self._epoch_set = True
        self._progress = None
        if self._resume is not None and self._resume.epoch != self._epoch:
            self._resume = None

    def state_dict(self) -> Dict[str, Any]:
        r"""Where the loader stands, as a small picklable dict (``torchdata``'s ``StatefulDataLoader`` names).

        The position after the last batch the latest iteration handed out (where it stopped, if it was
        abandoned); when it handed out its last one, or none runs, the start of the epoch the next iteration
        runs. A position counts the samples of the epoch's order that all ranks took together, so ranks that
        save after the same number of batches save the same state. Beside it, the arguments the state must
        agree with (source, split, seed, batch size, ...) and the data set's size and class count.

        Example::

            state = loader.state_dict()                 # after k batches of epoch e, in a checkpoint
            loader = fastloop.Loader(...)               # the same arguments, in a new process
            loader.load_state_dict(state)
            for images, labels in loader:               # batch k + 1 of epoch e, ...

        Returns:
            ``{"version", "epoch", "position", "order_world_size", "world_size", "samples", "num_classes",
            "source", "split", "seed", "batch_size", "shuffle", "drop_last", "shuffle_buffer"}``: ints, bools
            and strings.
        """
        progress, resume = self._progress, self._resume
        if progress is not None and progress.batch < progress.end:
            step = self.batch_size * self.world_size
            at = _Position(progress.epoch, progress.start.taken + (progress.batch - progress.first) * step,
                           progress.start.order_world_size)
        elif progress is not None:  # its last batch was handed out: the next epoch, from its start
            at = _Position(progress.epoch + 1, 0, self.world_size)
        elif resume is not None:
            at = resume
        else:
            at = _Position(self.epoch, 0, self.world_size)
        state: Dict[str, Any] = {"version": _STATE_VERSION, "epoch": at.epoch, "position": at.taken,
                                 "order_world_size": at.order_world_size, "world_size": self.world_size}
        state.update(self._identity())
        return state

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        r"""Makes the next iteration start where :meth:`state_dict` left: the rest of its epoch, then the
        later epochs as the saving loader would have run them. An iteration in progress ends.

        With another ``world_size`` than the saving group's (any rank's state will do, they are the same),
        the ranks share the rest of the epoch: each sample of it is visited once across the old and the new
        ranks (but the padding DistributedSampler's rule adds when the rest does not divide evenly), and the
        epochs after it are this group's. ``workers``, ``prefetch``, ``device`` and the rank may differ.
        ``len(loader)`` stays a whole epoch's count; the resumed iteration yields the batches left.

        Args:
            state_dict: what :meth:`state_dict` returned, by a Loader of the same source and split, seed,
                batch_size, shuffle, drop_last and shuffle_buffer.

        Raises:
            ValueError: the state does not fit this Loader (another data set, seed, batch size, ...): the
                message names each field that differs, with both values; or it is not a state of this
                version, or its position is past its epoch's end.
            TypeError: ``state_dict`` is not a dict.
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"fastloop.Loader.load_state_dict: the state must be a dict (Loader.state_dict()), "
                            f"not {type(state_dict).__name__}")
        missing = [k for k in ("version", "epoch", "position", "order_world_size", *self._identity())
                   if k not in state_dict]
        if state_dict.get("version", _STATE_VERSION) != _STATE_VERSION:
            raise ValueError(f"fastloop.Loader.load_state_dict: a state of version {state_dict['version']!r}; this "
                             f"fastloop reads version {_STATE_VERSION}")
        if missing:
            raise ValueError(f"fastloop.Loader.load_state_dict: the state has no {', '.join(missing)}: it is not a "
                             "fastloop.Loader.state_dict()")
        differ = [f"{k} is {state_dict[k]!r} in the state, {v!r} here" for k, v in self._identity().items()
                  if state_dict[k] != v]
        if differ:
            raise ValueError("fastloop.Loader.load_state_dict: the state does not fit this Loader: " + "; ".join(differ)
                             + " (a state resumes a Loader made with the same data and arguments)")
        at = _Position(*(state_dict[k] for k in ("epoch", "position", "order_world_size")))
        if not all(isinstance(v, int) for v in at) or at.epoch < 0 or at.taken < 0 or at.order_world_size < 1:
            raise ValueError(f"fastloop.Loader.load_state_dict: epoch {at.epoch!r}, position {at.taken!r} and "
                             f"order_world_size {at.order_world_size!r} must be ints >= 0, 0 and 1")
        samples = self._impl.samples
        end = -(-samples // at.order_world_size) * at.order_world_size  # its order's size with any padding
        if at.taken > end:
            raise ValueError(f"fastloop.Loader.load_state_dict: position {at.taken} is past the end of an epoch of "
                             f"{samples} samples")
        self._iteration += 1  # an iteration in progress is over
        self._impl.stop()
        self._epoch, self._epoch_set = at.epoch, True
        self._resume, self._progress = at, None

    def _identity(self) -> Dict[str, Any]:
        """What a state must agree with: the arguments that fix the epochs' order, the data set's extent."""
        args = self._args
        train = args["split"] == "train"
        source = _source_key(args["source"])
        for name in ("fields", "weights"):  # a state of other fields or weights is another order or other batches
            if args.get(name) is not None:
                source += f" {name}={list(args[name])!r}"
        if args.get("resampled"):
            source += " resampled"
        return {"source": source, "split": args["split"], "samples": self._impl.samples,
                "num_classes": self.num_classes, "seed": args["seed"], "batch_size": args["batch_size"],
                "shuffle": train if args["shuffle"] is None else bool(args["shuffle"]),
                "drop_last": train if args["drop_last"] is None else bool(args["drop_last"]),
                "shuffle_buffer": args["shuffle_buffer"]}

    def __iter__(self) -> Iterator[Tuple[torch.Tensor, torch.Tensor]]:
        self._check_device_after_fork()
        self._epoch = self.epoch
        self._epoch_set = False
        self._iteration += 1
        resume, self._resume = self._resume, None
        start = resume if resume is not None and resume.epoch == self._epoch else _Position(self._epoch, 0, 0)
        start = start._replace(order_world_size=start.order_world_size or self.world_size)
        self._progress = None
        # The iterator exists before the workers do: whatever ends it (its end, a break, an exception, a
        # Ctrl-C right after start) stops them. A Ctrl-C during start stops them and raises.
        iterator = _LoaderIterator(self, self._iteration)
        try:
            first, end = self._impl.start(self._epoch, start.taken, start.order_world_size)
        except BaseException:  # a Ctrl-C raised here, after start returned: this frame keeps `iterator`
            self._impl.stop()
            raise
        iterator._batches = first
        self._progress = _Progress(self._epoch, start, first, first, end)
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


_STATE_VERSION = 1


class _Position(NamedTuple):
    """Where an epoch starts: ``taken`` samples of its order (made for ``order_world_size`` ranks) taken."""

    epoch: int
    taken: int
    order_world_size: int


class _Progress:
    """The latest iteration: its epoch, where it started, and the numbers of its first, next and end batch."""

    def __init__(self, epoch: int, start: _Position, first: int, batch: int, end: int) -> None:
        self.epoch, self.start, self.first, self.batch, self.end = epoch, start, first, batch, end


def _fields_check(args: Dict[str, Any]) -> None:
    """The arguments that cannot go with fields or a mixture, and field_transforms' names; TypeError / ValueError."""
    if args["batch_transform"] is not None:
        raise TypeError("fastloop.Loader: batch_transform (MixUp / CutMix) mixes class labels; with fields= or a "
                        "mixture, mix in the loop instead, or give field_transforms for a per-batch step of a field")
    transforms, fields = args.get("field_transforms"), args.get("fields")
    if transforms is not None:
        if fields is None:
            raise ValueError("fastloop.Loader: field_transforms needs fields= (the names it transforms)")
        unknown = [name for name in transforms if name not in tuple(fields)]
        if unknown or not all(callable(t) for t in transforms.values()):
            raise ValueError(f"fastloop.Loader: field_transforms must map names of fields={tuple(fields)!r} to "
                             f"callables; {unknown or list(transforms)} are not")


def _batch_transform_refused(transform: Any, where: str) -> None:
    """MixUp or CutMix in a pipeline (or a list of transforms) is a TypeError that points to batch_transform."""
    items = transform if isinstance(transform, (list, tuple)) else [transform]
    mix = next((found for found in map(contains_batch_transform, items) if found), None)
    if mix:
        raise TypeError(f"fastloop.Loader: {mix} in {where} is a batch transform (it mixes samples of a batch); "
                        f"give it as batch_transform={mix}(...) instead")


def _is_pipeline(transform: Any) -> bool:
    """A whole pipeline, as an item of a list of views: a spec string or a Compose (v1 or v2)."""
    return isinstance(transform, str) or type(transform).__name__ == "Compose"


def _transforms_compiled(transform: Any, views: Optional[int]) -> Tuple[Any, Optional[int]]:
    """(transform, views) as the Loader keeps them: one spec (None: the built-in) or a list of specs, one per
    view, and the number of views (None: one, batches of tensors)."""
    if views is not None:
        if isinstance(views, bool) or not isinstance(views, numbers.Integral) or views < 1:
            raise ValueError(f"fastloop.Loader: views must be an int >= 1 (views of each image), got {views!r}")
        views = int(views)
    items = list(transform) if isinstance(transform, (list, tuple)) else None
    if items is not None and not items:
        raise ValueError("fastloop.Loader: transform=[] is an empty list: give a pipeline, or a list of one "
                         "pipeline per view (each a Compose or a spec string)")
    if items is None or not any(_is_pipeline(t) for t in items):  # one pipeline (a list: its transforms)
        _batch_transform_refused(transform, "transform=")
        if transform is None:
            return None, views
        spec = compile_transform(transform)
        crops = compile_views(spec)
        if len(crops) == 1:
            return spec, views
        # FiveCrop / TenCrop: its tuple of crops as views that draw alike (DataLoader's collate: a list of tensors)
        if views is not None:
            raise TypeError(f"fastloop.Loader: views={views} with a pipeline that has a FiveCrop or TenCrop, whose "
                            f"{len(crops)} crops are the views already; leave views out")
        return crops, len(crops)
    for v, item in enumerate(items):
        _batch_transform_refused(item, f"transform[{v}]")
        if _is_pipeline(item) and len(compile_views(compile_transform(item))) > 1:
            raise TypeError(f"fastloop.Loader: transform[{v}] has a FiveCrop or TenCrop, whose crops fastloop makes "
                            "views of each image: give that pipeline alone as transform=, not in a list of views")
    if not all(_is_pipeline(t) for t in items):
        odd = next(type(t).__name__ for t in items if not _is_pipeline(t))
        raise TypeError(f"fastloop.Loader: transform= mixes whole pipelines with a single {odd}: give a list of "
                        "pipelines, one per view (each a Compose or a spec string), or one pipeline")
    if views is not None and views != len(items):
        raise ValueError(f"fastloop.Loader: views={views} beside a list of {len(items)} pipelines: one view per "
                         "pipeline; leave views out")
    return [compile_transform(item) for item in items], len(items)


def _source_key(source: Union[str, Files, Any]) -> str:
    """The source as a state names it: the ``--data`` text, a ``datasets.Dataset`` by its fingerprint, a data set
    with targets (CocoDetection, VOCSegmentation, ...) by a checksum of its files, or a :class:`fastloop.Files` by
    a checksum of its files, labels and class names."""
    if isinstance(source, str):
        return source
    if isinstance(source, list):
        return "[" + ", ".join(map(_source_key, source)) + "]"
    if isinstance(source, tuple):  # a mixture's (source, its names of the fields)
        return f"({_source_key(source[0])}, {list(source[1])!r})"
    if is_dataset(source):
        return f"datasets.Dataset {source._fingerprint}"
    if hasattr(source, "_fastloop_loader_args"):  # a data set with targets: its kind and the files it names
        args = source._fastloop_loader_args()
        text = "\0".join([getattr(source, "annFile", "")] + [f"{k}={v}" for k, v in sorted(args.items())
                                                              if isinstance(v, (str, bool, list))])
        return f"{type(source).__name__} ({len(source)} samples, crc32 {zlib.crc32(text.encode()):08x})"
    text = "\0".join([*source.paths, *map(str, source.labels), *(source.classes or [])])
    return f"files ({len(source.paths)} files, crc32 {zlib.crc32(text.encode()):08x})"


# Made from the parameter table (_loader_params.py): the signature inspect and help() show, and its Args.
Loader.__init__.__signature__ = _params.signature()  # type: ignore[attr-defined]
Loader.__doc__ = Loader.__doc__.format(args=_params.args_doc())  # type: ignore[union-attr]


class _LoaderIterator:
    """One epoch of a Loader. Its end, or abandoning it (a ``break``, an exception), stops the threads."""

    def __init__(self, loader: Loader, iteration: int) -> None:
        self._loader = loader
        self._iteration = iteration
        self._done = False
        self._batches = 0  # the next batch's number (Loader.__iter__ sets the first): the batch_transform's draws
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
            self._loader._progress = None  # state_dict: the next epoch's start
            raise StopIteration
        fields = self._loader._fields
        if fields is not None:  # (images, sample indices) -> the fields asked for
            batch = fields.batch(*batch)
            transforms = self._loader._args.get("field_transforms")
            if transforms:
                batch = _fields.apply_field_transforms(batch, self._loader._args["fields"], transforms)
        source = self._loader._args["source"]
        if hasattr(source, "_fastloop_target"):  # (images or None, samples) -> torchvision's batch of targets
            batch = _targets_batch(source, batch, self._loader._targets_output)
        spec = self._loader._args.get("batch_transform")
        if spec is not None:
            args = self._loader._args
            rng = batch_rng(args["seed"], self._epoch, args["rank"], self._batches)
            batch = batch_transform_apply(spec, batch[0], batch[1], rng)
        self._batches += 1
        progress = self._loader._progress
        if progress is not None:  # None: set_epoch was called meanwhile
            progress.batch = self._batches
        return batch

    def __del__(self) -> None:
        if getattr(self, "_loader", None) is not None and self._running():
            self._loader._impl.stop()


def _targets_output(transform: Optional[str]) -> Tuple[bool, str, str]:
    """What the pipeline makes of the targets' types (``_C._transform_targets_output``); a ToDtype dict that
    names neither masks nor boxes nor ``"others"`` raises torchvision's ValueError here, when a sample has them."""
    return _C._transform_targets_output(transform) if isinstance(transform, str) else (False, "", "")


def _target_convert(value: Any, dtype: str, pure: bool, kind: str) -> Any:
    """A mask or boxes tensor of a target as the pipeline's ToDtype dict and ToPureTensor leave it."""
    if dtype == "missing":
        raise ValueError(f"No dtype was specified for type <class 'torchvision.tv_tensors.{kind}'>. If you're passing "
                         "a dict as dtype, you can use \"others\" as a catch-all key e.g. dtype={tv_tensors.Mask: "
                         "torch.int64, \"others\": None} to pass-through the rest of the inputs.")
    if dtype:
        value = value.to(getattr(torch, dtype))
    return value.as_subclass(torch.Tensor) if pure else value


def _targets_typed(targets: List[Any], output: Tuple[bool, str, str]) -> List[Any]:
    """Each target's masks and boxes in the dtypes and types the pipeline gives them."""
    pure, mask_dtype, boxes_dtype = output
    if not (pure or mask_dtype or boxes_dtype):
        return targets
    out = []
    for target in targets:
        if isinstance(target, torch.Tensor):  # a class map
            out.append(_target_convert(target, mask_dtype, pure, "Mask"))
            continue
        target = dict(target)
        for key, dtype, kind in (("masks", mask_dtype, "Mask"), ("boxes", boxes_dtype, "BoundingBoxes"),
                                 ("keypoints", "", "KeyPoints")):
            if key in target:
                target[key] = _target_convert(target[key], dtype, pure, kind)
        out.append(target)
    return out


def _targets_batch(source: Any, batch: Tuple[Optional[torch.Tensor], List[tuple], Optional[torch.Tensor]],
                   output: Tuple[bool, str, str] = (False, "", "")) -> Tuple[Any, Any]:
    """A batch of a data set with targets as detection and segmentation code consumes it: ``(images, targets)``,
    images one tensor when their sizes agree (else a list), targets a list of the source's target dicts; a
    segmentation source's class maps (tensors) stacked like the images (by the loader's worker when their sizes
    agree: torch.stack here would wake an OpenMP team that spins on the workers' cores)."""
    images, samples, masks = batch
    targets = [source._fastloop_target(index, tuple(image.shape[-2:]), boxes, fmt, labels, kept, masks,
                                       keypoints=keypoints)
               for index, image, boxes, fmt, labels, kept, masks, keypoints in samples]
    if images is None:
        return [sample[1] for sample in samples], _targets_typed(targets, output)
    if targets and all(isinstance(t, torch.Tensor) for t in targets):
        stacked = masks is not None and all(t is sample[6] for t, sample in zip(targets, samples))
        return images, _targets_typed([masks if stacked else torch.stack(targets)], output)[0]
    return images, _targets_typed(targets, output)


def _loader_rebuild(args: Dict[str, Any], epoch: int, epoch_set: bool,
                    resume: Optional[Tuple[int, int, int]] = None) -> Loader:
    """Unpickling: the same Loader, made afresh in this process, at the same epoch (and loaded state)."""
    loader = Loader(**args)
    loader._epoch, loader._epoch_set = epoch, epoch_set
    loader._resume = _Position(*resume) if resume is not None else None
    return loader
