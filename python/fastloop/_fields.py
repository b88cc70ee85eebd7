"""Samples of named fields and mixtures of sources for :class:`fastloop.Loader` (``fields=``, a list of sources).

The C++ workers decode the image fields (several: one view each, ``Batch.views``) and check a shard's other fields
(present, UTF-8 text, JSON that parses, whole numbers; a bad sample is named or skipped by ``bad_image_policy``);
an Arrow source's columns are checked here once, and its bad samples flagged for the workers to treat alike. Each
batch's labels are then the indices of its samples, by which the fields are read here once per batch: a shard's
text as ``str`` (made in C++), JSON by one ``json.loads`` of the batch's documents, ``cls`` as an int64 tensor;
an Arrow column by one ``take``.
"""

import bisect
import glob
import json
import os
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from . import _C
from ._arrow import DatasetSplit, ParquetSplit, _hf_class_names, _pyarrow, is_dataset, parquet_patterns
from ._arrow_fields import ArrowFields, arrow_image_fields, dataset_class_names, numbered

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


_CLASS_NAMES = ("cls", "cls2", "class")


class _ShardFields:
    """A ``shards:`` source's fields: read from its ``_C.FieldShards`` by sample index."""

    def __init__(self, shards: Any, specs: List[Tuple[List[str], str, str]], images: List[int],
                 paths: Optional[List[str]] = None) -> None:
        self.shards, self.specs, self.images, self.paths = shards, specs, images, paths

    def classes(self) -> Optional[List[str]]:
        """The class names of the first class field (``cls``, ``cls2``, ``class``), None without one: those of the
        ``classes.txt`` beside the shards (as ``fastloop pack`` writes it), else numbered up to the largest class;
        remote shards count the classes by their ``shards.idx``, as the image Loader does."""
        f = next((f for f, spec in enumerate(self.specs) if spec[1] == "int" and spec[0][0] in _CLASS_NAMES), None)
        if f is None:
            return None
        if self.paths is None:  # remote: named by the classes.txt beside the shards, or numbered, in C++
            return list(self.shards.classes)
        count = self.shards.num_classes(f)
        names = os.path.join(os.path.dirname(self.paths[0]), "classes.txt")
        if not os.path.isfile(names):
            return numbered(count)
        with open(names, encoding="utf-8") as file:
            listed = [line.rstrip("\r\n") for line in file]
        while listed and not listed[-1]:
            listed.pop()
        if len(listed) < count:
            raise ValueError(f"fastloop.Loader: {names} names {len(listed)} classes, the shards' .{self.specs[f][0][0]} "
                             f"members count {count}: give one name per line for each class")
        return listed

    def read(self, indices: torch.Tensor, f: int) -> Any:
        value = self.shards.field(indices, f)
        if self.specs[f][1] == "json":
            return json.loads(value)
        return value


class _ImageParts:
    """A ``datasets.Dataset``'s splits, one per image column of `fields` (one: the split itself), as C++ reads
    them (``image_parts``: zipped into a split of several images per sample). A Parquet source reads its image
    columns together instead (one :class:`ParquetSplit` of several ``image_columns``)."""

    def __init__(self, parts: List[Any]) -> None:
        self.parts = self.image_parts = parts
        self.labels = parts[0].labels
        self.field_problems: Dict[int, str] = {}

    def native(self) -> Any:
        """What C++ reads: the split itself when it is one, else this (encoded_source_of zips ``image_parts``)."""
        if len(self.parts) == 1:
            self.parts[0].field_problems = self.field_problems
            return self.parts[0]
        return self


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
            self.native.append(native.native() if isinstance(native, _ImageParts) else native)
            self.readers.append(reader)
        if len({tuple(reader.images) for reader in self.readers}) > 1:
            raise ValueError("fastloop.Loader: the sources' image fields stand at different places of fields=")
        self.images: List[int] = self.readers[0].images  # where each image field stands in the batch
        self.transform, self.views = args["transform"], args["views"]
        self._classes: Optional[Tuple[Optional[List[str]]]] = None  # (classes,), once asked
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
            if not images:
                raise ValueError(f"fastloop.Loader: fields={fields!r} has no image fields; give one at least "
                                 "(\"jpg;png;webp\": the first extension present wins), which the transform runs on")
            if _remote(item):
                if args.get("resampled"):
                    raise ValueError(f"fastloop.Loader: {item!r}: resampled=True reads local shards only")
                shards = _C.RemoteFieldShards(item[len("shards:"):], list(fields), args["split"] == "train",
                                              shuffled, args["shuffle_buffer"], float(args["timeout"]),
                                              args["cache_dir"] or "", int(args["cache_size"]))
                return shards, _ShardFields(shards, specs, images)
            paths = _shard_paths(item, args["split"])
            shards = _C.FieldShards(paths, list(fields), shuffled, args["shuffle_buffer"], bool(args.get("resampled")))
            return shards, _ShardFields(shards, specs, images, paths)
        if self.fields is None and (is_dataset(item) or isinstance(item, str) and item.startswith("parquet:")):
            raise ValueError("fastloop.Loader: a mixture with Parquet or a datasets.Dataset needs fields= (its column "
                             "names, e.g. fields=(\"image\", \"label\"))")
        if is_dataset(item):
            table = item.data.table if hasattr(item.data, "table") else item.data
            images = arrow_image_fields(table.schema, fields, args["image_column"], "datasets.Dataset")
            split = _ImageParts([DatasetSplit(item, fields[f], None) for f in images])
            reader = ArrowFields(table, split.parts[0].rows, fields, images,
                                  lambda sample, row: f"datasets.Dataset row {sample}",
                                  lambda column: dataset_class_names(item, column), args["label_column"])
            split.field_problems = reader.problems  # bad when read (C++: FlaggedImages)
            return split, reader
        if isinstance(item, str) and item.startswith("parquet:"):
            split = ParquetSplit(parquet_patterns(item, args["split"]), None, None, args["timeout"],
                                 args["cache_dir"], args["cache_size"])  # each file's metadata read once
            schema, paths = split.schema, split.paths
            images = arrow_image_fields(schema, fields, args["image_column"], item)
            split.image_columns = [fields[f] for f in images]  # read together, by one reader
            # The other columns whole (text is small beside the images): one take per batch reads them.
            others = list(dict.fromkeys(name if name in schema.names else name.split(":", 1)[0]
                                        for f, name in enumerate(fields) if f not in images))
            tables = [split._file(f).read(columns=others) for f in range(len(paths))]
            starts = [0]
            for t in tables:
                starts.append(starts[-1] + t.num_rows)

            def where(sample: int, row: int) -> str:
                f = bisect.bisect_right(starts, row) - 1
                return f"{paths[f]} row {row - starts[f]}"

            reader = ArrowFields(_pyarrow().concat_tables(tables), None, fields, images, where,
                                  lambda column: _hf_class_names(schema, column), args["label_column"])
            split.field_problems = reader.problems  # bad when read (C++: FlaggedImages)
            return split, reader
        hint = "; image files with labels are fastloop.Files(paths, labels)" if isinstance(item, str) else ""
        raise TypeError(f"fastloop.Loader: fields and mixtures (a list of sources) read shards:, parquet: and "
                        f"datasets.Dataset sources, not {item!r}{hint}")

    def classes(self) -> Optional[List[str]]:
        """The class names of the samples' class field (a shard's ``cls``, an Arrow source's ``label_column`` or
        ``ClassLabel`` column), the most any source has; None when no field is one."""
        if self._classes is None:
            found = [names for names in (reader.classes() for reader in self.readers) if names is not None]
            self._classes = (max(found, key=len) if found else None,)
        return self._classes[0]

    def binding_args(self, binding: Dict[str, Any]) -> Dict[str, Any]:
        """What ``_C.Loader`` takes (`binding`: the settings): the sources, the weights of a mixture, and with
        several image fields one view per field (the transform's, or each field's of a list of pipelines)."""
        out: Dict[str, Any] = {**binding, "data.source": "fields", "sources": self.native}
        if self.weights is not None:
            out["weights"] = self.weights
        count = len(self.images)
        if count == 1:
            return out
        if isinstance(self.transform, list) and self.views == count and "view_seeds" not in out:
            return out  # one pipeline per image field, already the views
        if self.views is not None:
            raise ValueError(f"fastloop.Loader: fields={self.fields!r} has {count} image fields, each a view of the "
                             f"sample already; give one transform (or a list of {count} pipelines, one per image "
                             "field) and leave views out")
        out["views"] = [self.transform or ""] * count
        out.pop("transform", None)
        return out

    def batch(self, images: Any, indices: torch.Tensor) -> Tuple[Any, ...]:
        """A batch of fields in the order asked: the images where the image field stands (several image fields:
        each one's tensor where it stands, `images` being their list), each other field a list (a tensor for whole
        numbers); without ``fields`` (a mixture of classification shards), ``(images, labels)``."""
        indices = indices.cpu()  # on a CUDA loader the labels arrived on the device
        count = len(self.readers)
        if count == 1:
            parts = [(self.readers[0], indices, None)]
        else:
            which = torch.bucketize(indices, torch.tensor(self.starts[1:]), right=True)
            parts = [(self.readers[k], indices[which == k] - self.starts[k], which == k) for k in range(count)]
        out: List[Any] = []
        for f in range(len(self.fields or ("", ""))):
            if f in self.images:
                out.append(images if len(self.images) == 1 else images[self.images.index(f)])
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
