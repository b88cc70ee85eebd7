"""``fastloop.Loader``'s parameters, declared once: one row each gives its name, type, default, where the C++
side takes it and its line in the docstring. The Loader's signature, its docstring's Args section, its repr,
what it pickles and the dict ``_C.Loader`` receives are all made from this table.
"""

import inspect
import textwrap
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Union

import torch

from . import _arrow
from ._files import Files

__all__ = ["PARAMETERS", "signature", "args_doc", "bind", "changed", "binding_args", "decode_check"]


def _same(value: Any) -> Any:
    return value


def _channels(values: Union[float, Sequence[float]]) -> str:
    """Per-channel values as the CLI's ``--mean`` / ``--std`` text: ``"0.5,0.4,0.3"``."""
    if isinstance(values, (int, float)):
        values = [values]
    return ",".join(repr(float(v)) for v in values)


def _mebibytes(size: int) -> int:
    """A byte count as the whole MiB ``--data-cache-size`` takes, rounded up."""
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"fastloop.Loader: cache_size must be a positive number of bytes, got {size!r}")
    return -(-size // 2**20)


_DECODES = ("exact", "fast")


def decode_check(decode: str) -> str:
    """``decode`` checked here, so that its error names the Python argument and what it may be."""
    if not isinstance(decode, str) or decode not in _DECODES:
        raise ValueError(f"fastloop.Loader: decode must be one of {', '.join(map(repr, _DECODES))}, got {decode!r} "
                         "('exact': JPEGs at full scale, torchvision's pixels; 'fast': at a reduced DCT scale)")
    return decode


def _dtype_name(dtype: torch.dtype) -> str:
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"fastloop.Loader: dtype must be a torch.dtype, got {type(dtype).__name__}")
    return str(dtype).replace("torch.", "")


def _source_name(source: Union[str, Files, Any]) -> str:
    if isinstance(source, list):  # a mixture (fastloop/_fields.py builds its sources)
        return "fields"
    if isinstance(source, Files):  # its lists travel beside it (binding_args)
        return "files"
    if _arrow.is_arrow_source(source):  # its split travels beside it (binding_args)
        return "arrow"
    if hasattr(source, "_fastloop_loader_args"):  # a data set with targets (fastloop.CocoDetection, ...)
        return source._fastloop_loader_args()["data.source"]
    if not isinstance(source, str):
        raise TypeError(f"fastloop.Loader: source must be a --data string, a fastloop.Files, a datasets.Dataset "
                        f"or a data set with targets (fastloop.CocoDetection, VOCSegmentation, SegmentationFiles), "
                        f"not {type(source).__name__}")
    return source


class Parameter(NamedTuple):
    """One argument of ``fastloop.Loader``."""

    name: str
    annotation: Any
    default: Any  # inspect.Parameter.empty: required
    # Where the C++ side takes it: a setting of `fastloop train` by its TOML key ("data.batch_size"; the
    # binding sets it through the config field table, so it is checked and named as the CLI's flag), else
    # the name of an argument only the Loader has (its split, device, rank...); None: Python applies it.
    setting: Optional[str]
    doc: str  # its entry under Args; "": documented in the entry before (one entry names both)
    to_binding: Callable[[Any], Any] = _same  # the value as the binding takes it (never given None)


_EMPTY = inspect.Parameter.empty

PARAMETERS: List[Parameter] = [
    Parameter("source", Union[str, Files, Any], _EMPTY, "data.source", to_binding=_source_name, doc=(
        "any ``--data`` of the CLI: ``imagefolder:DIR``, ``shards:PATTERN``, ``csv:TRAIN.csv[::VAL.csv]`` "
        "(a header row, ``path`` and ``label`` columns, paths relative to the CSV file), ``fashion-mnist[:DIR]``, "
        "``cifar10:DIR``, ``mnist:DIR``, ``synthetic[:CxHxW[:N]]``; ``parquet:TRAIN_PATTERN[::VAL_PATTERN]`` "
        "(Parquet files, a glob such as ``data/train-*.parquet`` or a brace list, local or ``s3://`` / "
        "``http(s)://`` URLs read by ranges, in the Hugging Face Hub's layout: "
        "encoded images in ``image_column``, class indices or names in ``label_column``, class names from the "
        "files' ``huggingface`` metadata; row groups are shuffled and shared by ranks as shards are, read "
        "through ``shuffle_buffer``; pyarrow reads them); or, as both splits (``split`` then only picks train or "
        "eval behaviour), a :class:`fastloop.Files` (image files and labels) or a Hugging Face "
        "``datasets.Dataset`` whose image column stores the files' bytes (its memory-mapped Arrow data read in "
        "place, its row order kept, shuffled whole).")),
    Parameter("split", str, "train", "split", doc=(
        '``"train"``, or ``"val"`` / ``"test"`` (the evaluation split).')),
    Parameter("batch_size", int, 128, "data.batch_size", doc="samples per batch."),
    Parameter("workers", Optional[int], None, "data.workers", doc=(
        "C++ threads assembling batches; 0 assembles in ``next()``; None: what ``--perf auto`` picks.")),
    Parameter("prefetch", int, 4, "data.prefetch", doc="batches assembled ahead of the consumer."),
    Parameter("augment", Optional[bool], None, "data.augment", doc=(
        "random crop and flip; None: on for train, off otherwise.")),
    Parameter("image_size", Optional[int], None, "data.image_size", doc=(
        "image files: side of the square batches, pixels; None: the size ``transform`` ends in (its last crop "
        "or resize to a size), 224 for the built-in augmentation. Given beside a transform that fixes the size, "
        "the two must agree.")),
    Parameter("mean", Optional[Sequence[float]], None, "data.mean", to_binding=_channels, doc=(
        "per-channel normalisation in [0, 1] units; None: the data set's own (ImageNet's for images).")),
    Parameter("std", Optional[Sequence[float]], None, "data.std", to_binding=_channels, doc=""),
    Parameter("dtype", torch.dtype, torch.float32, "dtype", to_binding=_dtype_name, doc=(
        "``torch.float32``, ``torch.float16`` or ``torch.bfloat16`` (what autocast computes in).")),
    Parameter("channels_last", bool, False, "perf.channels_last", doc=(
        "images NHWC in memory (sizes stay ``[B, C, H, W]``).")),
    Parameter("device", Union[str, torch.device], "cpu", "device", to_binding=str, doc=(
        'where batches arrive; ``"cuda"`` fills a ring of pinned buffers copied ``non_blocking`` '
        "on a side stream that the current stream waits on.")),
    Parameter("seed", int, 0, "run.seed", doc="the shuffle's and the augmentation's seed."),
    Parameter("shuffle", Optional[bool], None, "shuffle", doc="None: on for train, off otherwise."),
    Parameter("drop_last", Optional[bool], None, "drop_last", doc=(
        "drop the last partial batch; None: on for train, off otherwise.")),
    Parameter("rank", Optional[int], None, "rank", doc=(
        "this process's share of every epoch (``DistributedSampler`` semantics); None: "
        "``torch.distributed``'s group when it is initialised, else the whole split.")),
    Parameter("world_size", Optional[int], None, "world_size", doc=""),
    Parameter("bad_image_policy", str, "stop", "data.bad_image_policy", doc=(
        r'an undecodable image ``"stop"``\ s with its path (``ValueError``), or is '
        r'``"skip"``\ ped and replaced.')),
    Parameter("transform", Any, None, "transform", doc=(
        "a ``torchvision.transforms`` / ``transforms.v2`` pipeline (``Compose`` of supported "
        "operations) or a spec string, run per image by the C++ workers (``fastloop.transforms``); it must "
        "convert to float (``ToTensor()`` / ``ToDtype(torch.float32, scale=True)``, then ``Normalize``), and "
        "operations after the conversion run on float images as torchvision runs them; batches of image files "
        "take the size it ends in (one whose size follows each image's, such as ``ToImage(), ToDtype(...)`` "
        "alone, takes the first image's, and an image of another size is an error naming it, as "
        "``DataLoader``'s collate stacks them; or give ``image_size``). A ``FiveCrop`` or ``TenCrop`` makes "
        "the batch a list of 5 or 10 ``[B, C, H, W]`` tensors, as ``DataLoader`` collates their tuples. None: "
        "the built-in augmentation. A list of pipelines "
        "(each a ``Compose`` or a spec string) makes one view of each image per pipeline (see ``views``); a list "
        "of single transforms is one pipeline, as a ``Compose`` of them.")),
    Parameter("views", Optional[int], None, None, doc=(
        "several augmented views of each image, as SimCLR and DINO train on: each image is decoded once, then "
        "goes through each view's pipeline; batches arrive as ``(views, labels)``, ``views`` a list of one "
        "``[B, C, H_v, W_v]`` tensor per view (sizes may differ, e.g. DINO's 224 and 96 crops). With one "
        "``transform`` (or the built-in), the number of views of it; with a list of pipelines, None (or its "
        "length). View v draws from its own seed (view 0 from ``seed`` itself, so it equals the batch of a "
        "Loader with that view's pipeline alone; the others are independent of it), the same for any "
        "``workers``. A ``batch_transform`` cannot be combined with views (``TypeError``): MixUp and CutMix "
        "mix labels, which self-supervised views do not use. None: one view, batches ``(images, labels)``.")),
    Parameter("batch_transform", Any, None, None, doc=(
        "``torchvision.transforms.v2.MixUp(alpha=..., num_classes=...)``, ``v2.CutMix(...)`` or "
        "``v2.RandomChoice([MixUp(...), CutMix(...)], p=...)``: applied to each batch as torchvision users apply "
        "them after the DataLoader (in the loop or ``collate_fn``), with torchvision's rules (sample i mixed "
        "with sample i - 1, ``lam ~ Beta(alpha, alpha)``, CutMix's ``lam`` corrected to the area kept); labels "
        "then arrive as soft targets, float32 ``[B, num_classes]``. The draws come from ``seed``, the epoch, "
        "the rank and the batch number (not torch's global generator). ``num_classes`` must be given and at "
        "least the data's class count; anything else (another class, a ``labels_getter``) is a "
        "``TypeError`` naming it. MixUp or CutMix inside ``transform=`` is a ``TypeError`` that points here.")),
    Parameter("shuffle_buffer", int, 2048, "data.shuffle_buffer", doc=(
        "tar shards (``shards:``) and Parquet files: samples held in the streaming shuffle buffer (webdataset's "
        "``.shuffle(n)``); the train split reads each shard (row group) front to back through it.")),
    Parameter("image_column", str, "image", None, doc=(
        "Parquet and ``datasets.Dataset``: the column of encoded images (binary, or the Hub's ``Image`` struct "
        "of ``bytes`` and ``path``).")),
    Parameter("label_column", str, "label", None, doc=(
        "Parquet and ``datasets.Dataset``: the column of class indices (``ClassLabel``) or class names.")),
    Parameter("cache_dir", Optional[str], None, "data.cache", to_binding=str, doc=(
        "remote shards (``shards:s3://...``, ``http(s)://``) and Parquet files: a folder that keeps each fetched "
        "shard (Parquet file, fetched whole when its first row group is read), so later "
        "epochs read it from disk; processes (ranks) may share it. None: no cache, every epoch fetches.")),
    Parameter("cache_size", int, 10737418240, "data.cache_size", to_binding=_mebibytes, doc=(
        "bytes ``cache_dir`` may hold (whole MiB); the least recently used shards are removed beyond it.")),
    Parameter("timeout", float, 60.0, "data.timeout", to_binding=float, doc=(
        "remote shards and Parquet files: seconds without a byte from the store, across retries (a 5xx or a "
        "dropped connection is retried with backoff and resumed where it stopped), before the iteration raises "
        "``RuntimeError``. "
        "Unlike ``torch.utils.data.DataLoader``'s, it never waits forever.")),
    Parameter("decode", str, "exact", "data.decode", to_binding=decode_check, doc=(
        '``"exact"``: each JPEG is decoded at full scale (libjpeg-turbo, only the region the first crop reads, '
        "which gives the same pixels), so the batches are what ``torchvision.io.decode_image`` and the same "
        'transform give. ``"fast"``: when the first resize shrinks 2x or more, at the smallest DCT scale (1/2, '
        "1/4, 1/8) that covers it, which decodes and resizes up to 64x fewer pixels but averages each 8x8 block "
        "where the antialiased resize weighs pixels: measured against torchvision on 240 photographs (500x375) "
        "through ``Resize`` + ``CenterCrop`` shrinking 2x / 4x / 8x, a mean of 1.4 / 1.45 / 2.7 levels, at most "
        "95 / 62 / 80, 23% / 26% / 44% of the values off by more than 1 (``tests/python/test_decode_parity.py`` "
        "asserts its bound). Where the first resize shrinks less than 2x, and for other formats, both decode at "
        "full scale.")),
    Parameter("fields", Optional[Sequence[str]], None, None, doc=(
        "the fields of each sample, in the batch's order, as webdataset's ``to_tuple`` names them: for "
        '``shards:`` sources member extensions (``"jpg;png;webp"``: the first present wins; ``"txt"`` a ``str``; '
        '``"json"`` a parsed dict, ``"json:caption"`` its ``caption`` value; ``"cls"`` an int; any other '
        "extension its ``bytes``; an extension's kind is its last part: ``\"depth.png\"`` is an image), for "
        "Parquet and ``datasets.Dataset`` column names (``\"json:caption\"``: a key of a JSON column; image fields "
        "are the image column and any other Hub ``Image`` column, or binary column named as an image). The image "
        "fields are decoded and run through ``transform`` by the C++ workers (several: each its own tensor, drawn "
        "independently as views are; a list of one pipeline per image field gives each its own); the others are "
        "checked (present, not null, UTF-8 text, JSON that parses: a bad sample stops naming its shard and key, or "
        'its file, row and column, or is skipped with ``bad_image_policy="skip"``) and made Python objects once '
        "per batch. Batches are tuples in this order: a tensor per image field, a list per other field (an int64 "
        "tensor for whole numbers). None: ``(images, labels)``.")),
    Parameter("weights", Optional[Sequence[float]], None, None, doc=(
        "with a list of sources (a mixture): the share of each, drawn slot by slot from a seeded stream; None: "
        "equal. An epoch has as many samples as the sources together; each source is read in its own order "
        "(its shuffle, its shard split across ranks) and starts a fresh order when used up. Resumes and splits "
        "ranks as one source does.")),
    Parameter("resampled", bool, False, None, doc=(
        "``shards:`` sources with ``fields``: each rank draws shards with replacement (webdataset's "
        "``resampled=True``) for every epoch, an epoch being as many samples as the shards hold.")),
    Parameter("field_transforms", Optional[Dict[str, Callable[[Any], Any]]], None, None, doc=(
        "with ``fields``: a callable per field name, run once per batch on that field's list (a tokenizer: "
        '``{"txt": open_clip.get_tokenizer("ViT-B-32")}`` turns the captions into one ``[B, 77]`` tensor), '
        "as OpenCLIP's loop tokenizes a batch.")),
]


def signature() -> inspect.Signature:
    """``Loader.__init__``'s signature, ``self`` first."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=p.default,
                                 annotation=p.annotation) for p in PARAMETERS]
    return inspect.Signature(params, return_annotation=None)


def args_doc(indent: str = "        ", width: int = 112) -> str:
    """The docstring's Args entries (``name: text``, continuation lines indented once more), in signature
    order; a parameter with no text of its own shares the entry before (``mean, std: ...``)."""
    entries: List[List[str]] = []  # [names..., text]
    for p in PARAMETERS:
        if p.doc:
            entries.append([p.name, p.doc])
        else:
            entries[-1].insert(-1, p.name)
    lines = []
    for entry in entries:
        text = f"{', '.join(entry[:-1])}: {entry[-1]}".replace("\\ ", "\0")  # no line break in reST's "\ "
        lines.append(textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=indent + "    ",
                                   break_long_words=False, break_on_hyphens=False).replace("\0", "\\ "))
    return "\n".join(lines)


_SIGNATURE = signature()


def bind(loader: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """The Loader's arguments by name, defaults filled in; a TypeError as Python's for a wrong call."""
    try:
        bound = _SIGNATURE.bind(loader, *args, **kwargs)
    except TypeError as e:
        raise TypeError(f"fastloop.Loader(): {e}") from None
    bound.apply_defaults()
    out = dict(bound.arguments)
    del out["self"]
    return out


def changed(args: Dict[str, Any]) -> Dict[str, Any]:
    """The arguments that differ from their defaults, in signature order (what a repr shows)."""
    return {p.name: args[p.name] for p in PARAMETERS
            if p.default is _EMPTY or not _equal(args[p.name], p.default)}


def _equal(value: Any, default: Any) -> bool:
    try:
        return type(value) is type(default) and bool(value == default)
    except Exception:  # a value whose == is not a bool (a tensor)
        return False


def crop_views(transform: Any) -> bool:
    """Whether the compiled ``transform`` is the views of a FiveCrop or TenCrop (one per crop of its tuple)."""
    return isinstance(transform, list) and any("_CropView(" in spec for spec in transform)


def binding_args(args: Dict[str, Any]) -> Dict[str, Any]:
    """What ``_C.Loader`` takes: each argument under its setting, as the binding reads it; a None is left out
    (the C++ default, or on/off by split, or ``--perf auto``'s workers)."""
    out: Dict[str, Any] = {}
    for p in PARAMETERS:
        value = args[p.name]
        if p.setting is not None and value is not None:
            out[p.setting] = p.to_binding(value)
    views = args.get("views")
    if views is not None:  # several views: each one's spec ("": the built-in) in place of one transform
        transform = args["transform"]
        out["views"] = list(transform) if isinstance(transform, list) else [transform or ""] * views
        out.pop("transform", None)
        if crop_views(transform):  # torchvision draws once for the tuple of crops: every view draws as view 0
            out["view_seeds"] = [0] * len(out["views"])
    source = args["source"]
    if isinstance(source, Files):  # carried as lists; the C++ side checks each file
        out["files"], out["labels"], out["classes"] = source.paths, source.labels, source.classes or []
    elif _arrow.is_arrow_source(source):  # read with pyarrow here, handed over through Arrow's C interface
        split = _arrow.arrow_split(source, args["split"], args["image_column"], args["label_column"],
                                   args["timeout"], args["cache_dir"], args["cache_size"])
        if isinstance(split, Files):  # a datasets.Dataset of local image files: read as those files
            out["data.source"] = "files"
            out["files"], out["labels"], out["classes"] = split.paths, split.labels, split.classes
        else:
            out["arrow"] = split
    elif hasattr(source, "_fastloop_loader_args"):  # its C++ annotations, shared, and how to read them
        out.update(source._fastloop_loader_args())
    return out
