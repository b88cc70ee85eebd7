"""Samples of named fields and mixtures of sources for :class:`fastloop.Loader` (``fields=``, a list of sources).

The C++ workers decode the image field and check the others (present, UTF-8 text, JSON that parses, whole
numbers; a bad sample is named or skipped by ``bad_image_policy``); each batch's labels are then the indices of
its samples, by which the fields are read here once per batch: a shard's text as ``str`` (made in C++), JSON by
one ``json.loads`` of the batch's documents, ``cls`` as an int64 tensor; an Arrow column by one ``take``.
"""

import glob
import json
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from . import _C
from ._arrow import DatasetSplit, ParquetSplit, RemoteFile, _expand, _pyarrow, is_dataset, parquet_patterns

__all__ = ["FieldSources", "wanted"]


def wanted(args: Dict[str, Any]) -> bool:
    """Whether a Loader's arguments ask for fields or a mixture (a list of sources)."""
    return args.get("fields") is not None or isinstance(args["source"], list)


def _remote(source: str) -> bool:
    """Whether a ``shards:`` source names shards in object storage or on a web server."""
    return source[len("shards:"):].startswith(("s3://", "http://", "https://"))


def _shard_paths(source: str, split: str) -> List[str]:
    """The tar files of `split` in a ``shards:`` source, as the C++ ``shards:`` reader names them."""
    arg = source[len("shards:"):]
    if os.path.isdir(arg):
        prefix = "train-" if split == "train" else "val-"
        paths = sorted(glob.glob(os.path.join(glob.escape(arg), prefix + "*.tar")))
        if not paths:
            raise ValueError(f"fastloop.Loader: {source!r} has no {prefix}*.tar shards")
        return paths
    train, sep, val = arg.partition("::")
    pattern = train if split == "train" else val
    if not pattern:
        raise ValueError(f"fastloop.Loader: {source!r} has no {split} split: give it as shards:TRAIN::VAL")
    paths = list(_C._pattern_expand(pattern))
    for path in paths:
        if not os.path.isfile(path):
            raise ValueError(f"fastloop.Loader: {source!r}: {path} is not a file")
    return paths


class _ShardFields:
    """A ``shards:`` source's fields: read from its ``_C.FieldShards`` by sample index."""

    def __init__(self, shards: Any, specs: List[Tuple[List[str], str, str]], image: int) -> None:
        self.shards, self.specs, self.image = shards, specs, image

    def read(self, indices: torch.Tensor, f: int) -> Any:
        value = self.shards.field(indices, f)
        if self.specs[f][1] == "json":
            return json.loads(value)
        return value


class _ArrowFields:
    """A Parquet or ``datasets.Dataset`` source's fields: its columns, one ``take`` per batch. A null cell is a
    ``ValueError`` naming its column and row (``bad_image_policy="stop"``), or arrives as None (``"skip"``)."""

    def __init__(self, table: Any, rows: Optional[List[int]], columns: List[str], image: int, where: str,
                 nulls_allowed: bool) -> None:
        self.table, self.columns, self.image = table, columns, image
        self.rows = torch.tensor(rows, dtype=torch.long) if rows else None
        for f, name in enumerate(columns):
            column = table.column(name) if f != image else None
            if column is not None and column.null_count and not nulls_allowed:
                row = column.is_null().index(True).as_py()
                raise ValueError(f"fastloop.Loader: {where}: column {name!r} is null in row {row} (of the files' rows "
                                 "in order); drop such rows, or give bad_image_policy=\"skip\" to receive None there")

    def read(self, indices: torch.Tensor, f: int) -> Any:
        pa = _pyarrow()
        rows = self.rows[indices] if self.rows is not None else indices
        column = self.table.column(self.columns[f]).take(pa.array(rows.numpy()))
        if pa.types.is_integer(column.type):
            return torch.tensor(column.to_pylist(), dtype=torch.long)
        return column.to_pylist()


def _arrow_image_field(schema: Any, fields: Sequence[str], image_column: str, where: str) -> int:
    """Which of `fields` the workers decode: `image_column` when it is one of them, else the first binary or
    Hugging Face ``Image`` column."""
    pa = _pyarrow()
    for f, name in enumerate(fields):
        if name not in schema.names:
            raise ValueError(f"fastloop.Loader: {where}: no column {name!r} (it has {', '.join(schema.names)}); "
                             "fields= names its columns")
    if image_column in fields:
        return list(fields).index(image_column)
    for f, name in enumerate(fields):
        kind = schema.field(name).type
        if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_struct(kind):
            return f
    raise ValueError(f"fastloop.Loader: {where}: none of fields={tuple(fields)} is an image column (binary, or "
                     "the Hub's Image struct)")


class FieldSources:
    r"""The sources of a Loader with ``fields`` or a mixture: what the C++ loader reads (``binding_args``) and
    what turns each batch's ``(images, indices)`` into the batch of fields (:meth:`batch`)."""

    def __init__(self, args: Dict[str, Any]) -> None:
        source, fields = args["source"], args.get("fields")
        sources = list(source) if isinstance(source, list) else [source]
        if not sources:
            raise ValueError("fastloop.Loader: an empty list of sources: give one source at least")
        weights = args.get("weights")
        if weights is None and len(sources) > 1:
            weights = [1.0] * len(sources)
        if weights is not None:
            weights = [float(w) for w in weights]
            if len(weights) != len(sources) or not all(w > 0 for w in weights):
                raise ValueError(f"fastloop.Loader: weights={args.get('weights')!r}: one positive number per source "
                                 f"({len(sources)} sources)")
        self.weights = weights
        self.fields: Optional[Tuple[str, ...]] = tuple(fields) if fields is not None else None
        train = args["split"] == "train"
        shuffled = train if args["shuffle"] is None else bool(args["shuffle"])
        if not shuffled and (weights is not None or args.get("resampled")):
            what = "a mixture" if weights is not None else "resampled=True"
            raise ValueError(f"fastloop.Loader: {what} is read in a seeded order of its own, which shuffle=False (the "
                             "default of the val and test splits) turns off; give shuffle=True")
        self.native: List[Any] = []  # what C++ reads: _C.FieldShards or an Arrow split
        self.readers: List[Any] = []
        for item in sources:
            native, reader = self._source(item, args, shuffled)
            self.native.append(native)
            self.readers.append(reader)
        if len({reader.image for reader in self.readers}) > 1:
            raise ValueError("fastloop.Loader: the sources' image fields stand at different places of fields=")
        self.starts = [0]
        for native in self.native:
            self.starts.append(self.starts[-1] + len(native.labels if hasattr(native, "labels") else native))

    def _source(self, item: Any, args: Dict[str, Any], shuffled: bool) -> Tuple[Any, Any]:
        fields = self.fields if self.fields is not None else ("jpg;jpeg;png;webp", "cls")
        if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[1], str):  # (source, its own names)
            item, fields = item
            fields = tuple(fields)
            if len(fields) != len(self.fields or ()):
                raise ValueError(f"fastloop.Loader: {item!r} names {len(fields)} fields, fields= has "
                                 f"{len(self.fields or ())}: one name per field")
        if isinstance(item, str) and item.startswith("shards:"):
            specs = [tuple(_C._field_spec(f)) for f in fields]
            images = [f for f, spec in enumerate(specs) if spec[1] == "image"]
            if len(images) != 1:
                raise ValueError(f"fastloop.Loader: fields={fields!r} has {len(images)} image fields; give exactly "
                                 "one (\"jpg;png;webp\": the first extension present wins), which the transform "
                                 "runs on")
            if _remote(item):
                if args.get("resampled"):
                    raise ValueError(f"fastloop.Loader: {item!r}: resampled=True reads local shards only")
                shards = _C.RemoteFieldShards(item[len("shards:"):], list(fields), args["split"] == "train",
                                              shuffled, args["shuffle_buffer"], float(args["timeout"]),
                                              args["cache_dir"] or "", int(args["cache_size"]))
            else:
                shards = _C.FieldShards(_shard_paths(item, args["split"]), list(fields), shuffled,
                                        args["shuffle_buffer"], bool(args.get("resampled")))
            return shards, _ShardFields(shards, specs, images[0])
        if self.fields is None and (is_dataset(item) or isinstance(item, str) and item.startswith("parquet:")):
            raise ValueError("fastloop.Loader: a mixture with Parquet or a datasets.Dataset needs fields= (its column "
                             "names, e.g. fields=(\"image\", \"label\"))")
        if is_dataset(item):
            table = item.data.table if hasattr(item.data, "table") else item.data
            image = self._image_column(table.schema, fields, args, "datasets.Dataset")
            split = DatasetSplit(item, image, None)
            return split, _ArrowFields(table, split.rows, list(fields), list(fields).index(image), "datasets.Dataset",
                                       args["bad_image_policy"] == "skip")
        if isinstance(item, str) and item.startswith("parquet:"):
            pq = _pyarrow().parquet
            pattern = parquet_patterns(item, args["split"])
            paths = _expand(pattern)
            first = paths[0] if os.path.isfile(paths[0]) else RemoteFile(paths[0], args["timeout"])
            image = self._image_column(pq.ParquetFile(first).schema_arrow, fields, args, item)
            split = ParquetSplit(pattern, image, None, args["timeout"], args["cache_dir"], args["cache_size"])
            # The other columns whole (text is small beside the images): one take per batch reads them.
            others = [f for f in fields if f != image]
            table = _pyarrow().concat_tables([split._file(f).read(columns=others) for f in range(len(paths))])
            return split, _ArrowFields(table, None, list(fields), list(fields).index(image), item,
                                       args["bad_image_policy"] == "skip")
        hint = "; image files with labels are fastloop.Files(paths, labels)" if isinstance(item, str) else ""
        raise TypeError(f"fastloop.Loader: fields and mixtures (a list of sources) read shards:, parquet: and "
                        f"datasets.Dataset sources, not {item!r}{hint}")

    @staticmethod
    def _image_column(schema: Any, fields: Sequence[str], args: Dict[str, Any], where: str) -> str:
        return list(fields)[_arrow_image_field(schema, fields, args["image_column"], where)]

    def binding_args(self) -> Dict[str, Any]:
        """What ``_C.Loader`` takes beside the settings: the sources, and the weights of a mixture."""
        out: Dict[str, Any] = {"data.source": "fields", "sources": self.native}
        if self.weights is not None:
            out["weights"] = self.weights
        return out

    def batch(self, images: Any, indices: torch.Tensor) -> Tuple[Any, ...]:
        """A batch of fields in the order asked: the images where the image field stands, each other field a list
        (a tensor for whole numbers); without ``fields`` (a mixture of classification shards), ``(images, labels)``."""
        indices = indices.cpu()  # on a CUDA loader the labels arrived on the device
        count = len(self.readers)
        if count == 1:
            parts = [(self.readers[0], indices, None)]
        else:
            which = torch.bucketize(indices, torch.tensor(self.starts[1:]), right=True)
            parts = [(self.readers[k], indices[which == k] - self.starts[k], which == k) for k in range(count)]
        reader0 = self.readers[0]
        out: List[Any] = []
        for f in range(len(self.fields or ("", ""))):
            if f == reader0.image:
                out.append(images)
                continue
            out.append(_merged([(r.read(i, f) if len(i) else None, mask) for r, i, mask in parts], len(indices)))
        return tuple(out)


def _merged(parts: List[Tuple[Any, Optional[torch.Tensor]]], count: int) -> Any:
    """One field's values of a batch from the parts each source gave (masks: which slots are whose)."""
    if len(parts) == 1:
        return parts[0][0]
    tensors = [v for v, _ in parts if isinstance(v, torch.Tensor)]
    if tensors:
        out = torch.empty(count, dtype=tensors[0].dtype)
        for value, mask in parts:
            if value is not None:
                out[mask] = value
        return out
    merged: List[Any] = [None] * count
    for value, mask in parts:
        if value is not None:
            for slot, v in zip(mask.nonzero().flatten().tolist(), value):
                merged[slot] = v
    return merged


def apply_field_transforms(batch: Tuple[Any, ...], fields: Tuple[str, ...],
                           transforms: Dict[str, Callable[[Any], Any]]) -> Tuple[Any, ...]:
    """Each ``field_transforms[name]`` applied once to its field's whole batch (a tokenizer: strings in, a tensor
    out)."""
    out = list(batch)
    for name, transform in transforms.items():
        out[fields.index(name)] = transform(out[fields.index(name)])
    return tuple(out)
