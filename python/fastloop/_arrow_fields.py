"""The fields of an Arrow source of :class:`fastloop.Loader` (Parquet files, a ``datasets.Dataset``): which columns
are images (decoded by the C++ workers) and what each other column becomes (``fastloop/_fields.py`` reads them by
the batch's sample indices, one ``take`` per batch), checked once cell by cell, and the classes of its class
column.
"""

import json
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from . import _C
from ._arrow import _pyarrow

__all__ = ["ArrowFields", "arrow_image_fields", "dataset_class_names", "numbered"]


def numbered(count: int) -> List[str]:
    """Class names ``"0"``, ``"1"``, ... for `count` classes."""
    return [str(c) for c in range(count)]


_JSON_NAMES, _TEXT_NAMES = ("json", "jsn"), ("txt", "text", "transcript")
_IMAGE_NAMES = ("jpg", "jpeg", "png", "webp", "bmp", "gif", "tif", "tiff", "ppm", "pgm", "pnm")


def _arrow_field(schema: Any, name: str) -> Tuple[str, str, str]:
    """(column, kind, JSON key) of a field that names a column: ``"caption"``, or ``"COLUMN:KEY"`` for a key of a
    JSON column. The kind: ``int`` (integer columns: a tensor), ``json`` (a string or binary column named as webdataset
    names JSON: ``json``, ``*.json``; parsed), ``text`` (a string column, or a binary one named ``txt``, ``text``, ...:
    ``str``), ``bytes`` (another binary column) or ``value`` (any other type, as pyarrow gives it)."""
    pa = _pyarrow()
    column, key = name, ""
    if name not in schema.names and ":" in name:
        column, key = name.split(":", 1)
    kind = schema.field(column).type
    last = column.rsplit(".", 1)[-1].lower()
    binary = pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
    stringy = binary or pa.types.is_string(kind) or pa.types.is_large_string(kind)
    if key and not (stringy and last in _JSON_NAMES):
        raise ValueError(f"fastloop.Loader: fields: {name!r}: a key (':{key}') is picked from a JSON column only (a "
                         "string or binary column named json or *.json)")
    if pa.types.is_integer(kind):
        return column, "int", key
    if stringy and last in _JSON_NAMES:
        return column, "json", key
    if stringy and (not binary or last in _TEXT_NAMES):
        return column, "text", key
    return column, "bytes" if binary else "value", key


class ArrowFields:
    """A Parquet or ``datasets.Dataset`` source's fields: its columns, one ``take`` per batch. Each column a field
    reads is checked here once, cell by cell (a null, text that is not UTF-8, JSON that does not parse or lacks the
    picked key): a sample with a bad cell is in :attr:`problems`, which the workers treat as a shard sample whose
    field check failed (``bad_image_policy="stop"``: a ``ValueError`` naming the file, row and column; ``"skip"``:
    replaced by the next sample and counted)."""

    def __init__(self, table: Any, rows: Optional[List[int]], fields: Sequence[str], images: List[int],
                 where: Callable[[int, int], str], class_names: Callable[[str], Optional[List[str]]],
                 label_column: str) -> None:
        self.table, self.images, self.class_names, self.label_column = table, images, class_names, label_column
        self.rows = torch.tensor(rows, dtype=torch.long) if rows else None
        self.fields = [_arrow_field(table.schema, name) if f not in images else None for f, name in enumerate(fields)]
        self.problems: Dict[int, str] = {}  # sample -> the message naming it
        checked = set()
        for field in self.fields:
            if field is not None and (field[0], field[2]) not in checked:  # (column, key) once
                checked.add((field[0], field[2]))
                self._check(*field, where)

    def _check(self, column: str, kind: str, key: str, where: Callable[[int, int], str]) -> None:
        """Flags the samples whose cell of `column` is null, or not the text or JSON its kind says."""
        pa = _pyarrow()
        bad: Dict[int, str] = {}  # table row -> why
        at = 0
        for chunk in self.table.column(column).chunks:
            if chunk.null_count:
                for row in chunk.is_null().to_numpy(zero_copy_only=False).nonzero()[0].tolist():
                    bad.setdefault(at + row, "is null")
            if kind in ("text", "json"):
                large = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
                values = chunk.cast(pa.large_binary() if large else pa.binary()).fill_null(b"")
                check = "txt" if kind == "text" else "json" + (":" + key if key else "")
                for row, why in _C._column_problems(values.__arrow_c_array__(), check):
                    bad.setdefault(at + row, why)
            at += len(chunk)
        if not bad:
            return
        samples = range(len(self.rows)) if self.rows is not None else sorted(bad)
        for sample in samples:
            row = int(self.rows[sample]) if self.rows is not None else sample
            if row in bad and sample not in self.problems:
                self.problems[sample] = (f"{where(sample, row)}: column {column!r} {bad[row]} (drop such rows, or "
                                         "give bad_image_policy='skip' to skip such samples)")

    def classes(self) -> Optional[List[str]]:
        """The class names of the class field, None without one: the field named ``label_column``, else the first
        with Hugging Face ``ClassLabel`` names; its names, or numbered up to its largest value (what the image
        Loader reports for the same column)."""
        columns = [field[0] for field in self.fields if field is not None and field[1] == "int"]
        column = self.label_column if self.label_column in columns else \
            next((c for c in columns if self.class_names(c) is not None), None)
        if column is None:
            return None
        names = self.class_names(column)
        import pyarrow.compute
        largest = pyarrow.compute.max(self.table.column(column)).as_py()
        count = max(len(names or ()), (largest if largest is not None else -1) + 1)
        return names if names is not None and len(names) >= count else numbered(count)

    def read(self, indices: torch.Tensor, f: int) -> Any:
        pa = _pyarrow()
        column, kind, key = self.fields[f]
        rows = self.rows[indices] if self.rows is not None else indices
        values = self.table.column(column).take(pa.array(rows.numpy()))
        if kind == "int":
            return torch.tensor(values.to_pylist(), dtype=torch.long)
        if kind == "json":  # one json.loads per batch, as for shards
            docs = json.loads(b"[" + b",".join(values.cast(pa.large_binary()).to_pylist()) + b"]")
            return [doc[key] for doc in docs] if key else docs
        if kind == "text" and not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
            return [value.decode() for value in values.to_pylist()]
        return values.to_pylist()


def dataset_class_names(dataset: Any, column: str) -> Optional[List[str]]:
    """The names of a ``datasets.Dataset`` column's ``ClassLabel``, if it is one."""
    feature = dataset.features.get(column)
    return [str(n) for n in feature.names] if hasattr(feature, "names") else None


def arrow_image_fields(schema: Any, fields: Sequence[str], image_column: str, where: str) -> List[int]:
    """Which of `fields` the workers decode: the first is `image_column` when it is one of them, else the first
    binary or Hugging Face ``Image`` column; then any other ``Image`` column, or binary column named as webdataset
    names images (``jpg``, ``depth.png``)."""
    pa = _pyarrow()
    first = _arrow_image_field(schema, fields, image_column, where)

    def image(name: str) -> bool:
        if name not in schema.names:
            return False
        kind = schema.field(name).type
        if pa.types.is_struct(kind):
            return kind.get_field_index("bytes") >= 0
        last = name.rsplit(".", 1)[-1].lower()
        return (pa.types.is_binary(kind) or pa.types.is_large_binary(kind)) and last in _IMAGE_NAMES

    return sorted({first} | {f for f, name in enumerate(fields) if image(name)})


def _arrow_image_field(schema: Any, fields: Sequence[str], image_column: str, where: str) -> int:
    """Which of `fields` the workers decode first: `image_column` when it is one of them, else the first binary or
    Hugging Face ``Image`` column."""
    pa = _pyarrow()
    for f, name in enumerate(fields):
        if name not in schema.names and name.split(":", 1)[0] not in schema.names:
            raise ValueError(f"fastloop.Loader: {where}: no column {name!r} (it has {', '.join(schema.names)}); "
                             "fields= names its columns")
    if image_column in fields:
        return list(fields).index(image_column)
    for f, name in enumerate(fields):
        if name not in schema.names:
            continue
        kind = schema.field(name).type
        if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_struct(kind):
            return f
    raise ValueError(f"fastloop.Loader: {where}: none of fields={tuple(fields)} is an image column (binary, or "
                     "the Hub's Image struct)")
