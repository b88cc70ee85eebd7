"""Arrow sources of :class:`fastloop.Loader`: Parquet files (``"parquet:PATTERN[::VAL_PATTERN]"``, the layout of
Hugging Face's Hub) and a ``datasets.Dataset``, read with pyarrow and handed to the C++ workers through the
Arrow C data interface (``__arrow_c_array__``): C++ reads the image bytes in place and links no Arrow library,
so any pyarrow (>= 14) works and the wheel keeps torch as its one requirement.

A Parquet split is read one row group at a time, by the C++ source's reader thread calling :meth:`ParquetSplit.read`
(pyarrow releases the GIL while it reads and decompresses); row groups are the unit of shuffling and of
ranks' shares, as tar shards are. A ``datasets.Dataset`` is memory-mapped Arrow already: its chunks are
handed over once, and the sampler shuffles it whole.
"""

import glob
import io
import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _C, _parquet_cache
from ._files import Files

__all__ = ["ParquetSplit", "DatasetSplit", "arrow_split", "is_arrow_source", "is_dataset"]


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise ImportError("fastloop.Loader: Parquet and Hugging Face datasets are read with pyarrow, which this "
                          "Python lacks: pip install pyarrow") from None
    return pyarrow


def is_dataset(source: Any) -> bool:
    """Whether `source` is a Hugging Face ``datasets.Dataset`` (checked without importing ``datasets``)."""
    return type(source).__module__.startswith("datasets.") and hasattr(source, "features") and hasattr(source, "data")


def is_arrow_source(source: Any) -> bool:
    """Whether a Loader's `source` is read through Arrow: ``parquet:...`` text or a ``datasets.Dataset``."""
    return (isinstance(source, str) and source.startswith("parquet:")) or is_dataset(source)


def parquet_patterns(source: str, split: str) -> str:
    """The file pattern of `split` in ``parquet:TRAIN[::VAL]``; ``ValueError`` naming the source when it has none."""
    arg = source[len("parquet:"):]
    train, sep, val = arg.partition("::")
    if not train or (sep and not val):
        raise ValueError(f"fastloop.Loader: {source!r}: expected parquet:TRAIN_PATTERN or "
                         "parquet:TRAIN_PATTERN::VAL_PATTERN (a glob such as data/train-*.parquet, or a brace list)")
    if split == "train":
        return train
    if not val:
        raise ValueError(f"fastloop.Loader: {source!r} has no {split} split: give it as parquet:TRAIN::VAL")
    return val


def _remote(path: str) -> bool:
    return path.startswith(("s3://", "http://", "https://"))


def _expand(pattern: str) -> List[str]:
    """The files a pattern names: brace lists and ranges as shards' (``{000..099}``), then, for local files,
    glob's wildcards, each sorted; ``ValueError`` when it names none or a local file is missing."""
    paths: List[str] = []
    for expanded in _C._pattern_expand(pattern):
        if _remote(expanded):
            if glob.has_magic(expanded):
                raise ValueError(f"fastloop.Loader: parquet:{pattern}: remote files are named by brace lists "
                                 "({a,b}, {00000..00009}), not wildcards")
            paths.append(expanded)
        else:
            paths += sorted(glob.glob(expanded)) if glob.has_magic(expanded) else [expanded]
    if not paths:
        raise ValueError(f"fastloop.Loader: parquet:{pattern} names no file")
    for path in paths:
        if not _remote(path) and not os.path.isfile(path):
            raise ValueError(f"fastloop.Loader: parquet:{pattern}: {path} is not a file")
    return [p if _remote(p) else os.path.abspath(p) for p in paths]


class RemoteFile(io.RawIOBase):
    """An ``s3://`` or ``http(s)://`` object as a read-only file for pyarrow: each read is a ranged GET by
    fastloop's fetcher (retries that resume where a transfer broke, named errors, ``timeout``)."""

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        super().__init__()
        self.name = url
        self._file = _C._RemoteFile(url, timeout)
        self._at = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._at = {io.SEEK_SET: 0, io.SEEK_CUR: self._at, io.SEEK_END: self._file.size}[whence] + offset
        return self._at

    def tell(self) -> int:
        return self._at

    def readinto(self, buffer: Any) -> int:
        data = self._file.read(self._at, len(buffer))
        buffer[:len(data)] = data
        self._at += len(data)
        return len(data)

    def read(self, size: int = -1) -> bytes:
        data = self._file.read(self._at, self._file.size - self._at if size is None or size < 0 else size)
        self._at += len(data)
        return data


def _hf_class_names(schema: Any, label_column: str) -> Optional[List[str]]:
    """The ``ClassLabel`` names of `label_column` in a file's ``huggingface`` schema metadata, if it has them."""
    metadata = schema.metadata or {}
    if b"huggingface" not in metadata:
        return None
    try:
        features = json.loads(metadata[b"huggingface"])["info"]["features"]
        names = features[label_column]["names"]
    except (ValueError, KeyError, TypeError):
        return None
    return [str(n) for n in names] if isinstance(names, list) else None


def _image_bytes(column: Any, where: str, folder: Optional[str] = None) -> Any:
    """The encoded-image bytes of an image column (Hugging Face's ``struct<bytes, path>``, or binary) as a
    binary or large_binary array; ``ValueError`` naming `where` for a column that holds no image bytes. A cell
    with a path and no bytes (``datasets`` writes local images so) is the file's bytes when `folder` is given
    (relative paths from there), else an error."""
    pa = _pyarrow()
    if pa.types.is_struct(column.type):
        names = [column.type.field(i).name for i in range(column.type.num_fields)]
        if "bytes" not in names:
            raise ValueError(f"{where}: the image column is a struct without a 'bytes' field ({', '.join(names)})")
        fields = column.flatten()  # children with the struct's offset and nulls applied
        values = fields[names.index("bytes")]
        if values.null_count and "path" in names:
            values = _bytes_of_paths(values, fields[names.index("path")], where, folder)
        column = values
    if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
        return column
    if pa.types.is_binary_view(column.type) or pa.types.is_fixed_size_binary(column.type):
        return column.cast(pa.large_binary())
    raise ValueError(f"{where}: the image column is of type {column.type}, not encoded image bytes (binary, or "
                     "Hugging Face's Image struct); name the right one with image_column=")


def _bytes_of_paths(values: Any, paths: Any, where: str, folder: Optional[str]) -> Any:
    """`values` with each null cell that has a path filled with that file's bytes (read here)."""
    pa = _pyarrow()
    cells, names = values.to_pylist(), paths.to_pylist()
    for row, (cell, path) in enumerate(zip(cells, names)):
        if cell is not None or path is None:
            continue
        if folder is None:
            raise ValueError(f"{where}, row {row}: the image cell holds a path ({path}) and no bytes; store the "
                             "images' bytes (datasets: cast_column('image', Image()) on bytes, or embed_table_storage)")
        try:
            with open(os.path.join(folder, path), "rb") as f:
                cells[row] = f.read()
        except OSError as e:
            raise ValueError(f"{where}, row {row}: the image cell names {path}, which cannot be read ({e.strerror})") \
                from None
    return pa.array(cells, pa.large_binary())


def _labels(column: Any, where: str, names: Optional[List[str]]) -> Tuple[List[int], Optional[List[str]]]:
    """Class indices from a label column (integers, or class names as strings), with the class names."""
    pa = _pyarrow()
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if column.null_count:
        row = column.is_null().index(True).as_py()
        raise ValueError(f"{where}, row {row}: the label is null; every row needs its class")
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        values = column.to_pylist()
        classes = names if names is not None else sorted(set(values))
        index = {name: i for i, name in enumerate(classes)}
        missing = next((v for v in values if v not in index), None)
        if missing is not None:
            raise ValueError(f"{where}: label {missing!r} is not one of the {len(classes)} class names")
        return [index[v] for v in values], classes
    if not pa.types.is_integer(column.type):
        raise ValueError(f"{where}: the label column is of type {column.type}, not class indices or names; name the "
                         "right one with label_column=")
    values = column.to_pylist()
    bad = next((i for i, v in enumerate(values) if v < 0 or (names is not None and v >= len(names))), None)
    if bad is not None:
        bound = f"[0, {len(names)})" if names is not None else ">= 0"
        raise ValueError(f"{where}, row {bad}: label {values[bad]} is not a class index {bound} (a split without "
                         "labels, such as a Hub test split's -1, cannot train or evaluate)")
    return values, names


def _classes(labels: List[int], names: Optional[List[str]]) -> List[str]:
    return names if names is not None else [str(i) for i in range(max(labels, default=-1) + 1)]


class ParquetSplit:
    """The Parquet files of one split (``parquet:PATTERN``): their row groups, labels and class names, read
    with pyarrow; the image column's bytes one row group at a time (:meth:`read`). Several image columns
    (``fields``' images, each a part of the sample) are read together, by one reader; None: chosen later from
    :attr:`schema` (``image_columns``), each file's metadata read once all the same."""

    resident = False

    def __init__(self, pattern: str, image_column: Union[None, str, Sequence[str]] = "image",
                 label_column: Optional[str] = "label", timeout: float = 60.0, cache_dir: Optional[str] = None,
                 cache_size: int = 10 << 30) -> None:
        _pyarrow()
        self.timeout, self.cache_dir, self.cache_size = timeout, cache_dir, cache_size
        self._local: Dict[int, str] = {}  # file -> its copy in cache_dir
        self.paths = _expand(pattern)
        columns = [] if image_column is None else [image_column] if isinstance(image_column, str) else image_column
        self.image_columns: List[str] = list(columns)
        self.label_column = label_column
        self._files: Dict[int, Any] = {}
        self._pid = os.getpid()
        self.groups: List[Tuple[int, int]] = []  # (file, row group)
        self.group_names: List[str] = []
        self.group_rows: List[int] = []
        labels: List[int] = []
        names: Optional[List[str]] = None
        for f, path in enumerate(self.paths):
            parquet = self._file(f)
            schema = parquet.schema_arrow
            for column in (*self.image_columns, label_column):
                if column is not None and column not in schema.names:
                    argument = "label_column" if column == label_column else "image_column"
                    raise ValueError(f"{path}: no column {column!r} (it has {', '.join(schema.names)}); name the "
                                     f"right one with {argument}=")
            for g in range(parquet.metadata.num_row_groups):
                self.groups.append((f, g))
                self.group_names.append(f"{path}, row group {g}")
                self.group_rows.append(parquet.metadata.row_group(g).num_rows)
            if label_column is None:  # fields: each sample's label is its index (fastloop/_fields.py reads by it)
                labels += range(len(labels), len(labels) + parquet.metadata.num_rows)
                continue
            names = names if names is not None else _hf_class_names(schema, label_column)
            try:
                column = parquet.read(columns=[label_column]).column(0).combine_chunks()
            except Exception as e:  # pyarrow's own errors for a damaged file
                raise ValueError(f"{path}: cannot read its {label_column!r} column ({e}); the file is damaged or "
                                 "not Parquet") from None
            file_labels, names = _labels(column, path, names)
            labels += file_labels
        self.labels = labels
        self.classes = _classes(labels, names) if label_column is not None else []

    @property
    def image_column(self) -> str:
        """The first image column."""
        return self.image_columns[0]

    @property
    def parts(self) -> int:
        """Image columns read per row group (images per sample)."""
        return len(self.image_columns)

    @property
    def schema(self) -> Any:
        """The first file's Arrow schema."""
        return self._file(0).schema_arrow

    def _file(self, f: int, whole: bool = False) -> Any:
        """File f opened (memory-mapped) in this process (a forked child opens its own). A remote file is read by
        ranges, or from its copy in ``cache_dir``; `whole` (a row group is read): fetched into it first."""
        if self._pid != os.getpid():
            self._files, self._pid = {}, os.getpid()
        path = self.paths[f]
        if _remote(path) and self.cache_dir and (f not in self._files or whole and f not in self._local):
            copy = _parquet_cache.cached_copy(path, self.cache_dir)
            if copy is None and whole:
                copy = _parquet_cache.fetch_into_cache(_C._RemoteFile(path, self.timeout), path, self.cache_dir,
                                                       self.cache_size)
            if copy is not None:
                self._files.pop(f, None)
                self._local[f] = copy
        if f not in self._files:
            local = self._local.get(f, None if _remote(path) else path)
            source = local if local is not None else RemoteFile(path, self.timeout)  # a fetch names its URL itself
            try:
                self._files[f] = _pyarrow().parquet.ParquetFile(source, memory_map=local is not None)
            except Exception as e:
                raise ValueError(f"{path}: not a readable Parquet file ({e}); replace it, or leave it out "
                                 "of the pattern") from None
        return self._files[f]

    def read(self, group: int) -> Union[Tuple[Any, Any], List[Tuple[Any, Any]]]:
        """Row group `group`'s image bytes as an ``(arrow_schema, arrow_array)`` capsule pair; with several image
        columns, a list of them (one read of the group for all)."""
        f, g = self.groups[group]
        where = self.group_names[group]
        parquet = self._file(f, whole=True)
        try:
            table = parquet.read_row_group(g, columns=list(dict.fromkeys(self.image_columns)))
        except Exception as e:
            raise ValueError(f"{where}: cannot be read ({e}); the file is damaged") from None
        folder = None if _remote(self.paths[f]) else os.path.dirname(self.paths[f])
        pairs = [_image_bytes(table.column(name).combine_chunks(), where, folder).__arrow_c_array__()
                 for name in self.image_columns]
        return pairs[0] if len(pairs) == 1 else pairs

    def __getstate__(self) -> Dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_files", "_local")}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state, _files={}, _local={})


def _dataset_labels(dataset: Any, table: Any, label_column: str) -> Tuple[List[int], List[str]]:
    """A ``datasets.Dataset``'s labels by table row, and its class names (its ``ClassLabel``'s, if it has one)."""
    feature = dataset.features.get(label_column)
    names = [str(n) for n in feature.names] if hasattr(feature, "names") else None
    labels, names = _labels(table.column(label_column).combine_chunks(), "datasets.Dataset", names)
    return labels, _classes(labels, names)


class DatasetSplit:
    """A Hugging Face ``datasets.Dataset`` whose image column stores the encoded files' bytes: its Arrow chunks
    (memory-mapped cache files) handed to C++ as they are, its row order (``select``, ``shuffle``) kept."""

    resident = True

    def __init__(self, dataset: Any, image_column: str = "image", label_column: Optional[str] = "label") -> None:
        table = dataset.data.table if hasattr(dataset.data, "table") else dataset.data
        self.name = f"datasets.Dataset {getattr(dataset.info, 'dataset_name', None) or dataset._fingerprint}"
        for column in (image_column, label_column):
            if column is not None and column not in table.column_names:
                argument = "image_column" if column == image_column else "label_column"
                raise ValueError(f"{self.name}: no column {column!r} (it has {', '.join(table.column_names)}); "
                                 f"name the right one with {argument}=")
        indices = dataset._indices
        self.rows: List[int] = indices.column(0).to_pylist() if indices is not None else []
        self._chunks = [_image_bytes(chunk, f"{self.name}, chunk {c}")
                        for c, chunk in enumerate(table.column(image_column).chunks)]
        self.column_names = [f"{self.name}, chunk {c}" for c in range(len(self._chunks))]
        if label_column is None:  # fields: each sample's label is its index (fastloop/_fields.py reads by it)
            self.labels, self.classes = list(range(len(self.rows) if indices is not None else table.num_rows)), []
            return
        labels, self.classes = _dataset_labels(dataset, table, label_column)
        self.labels = [labels[r] for r in self.rows] if self.rows else labels

    def columns(self) -> List[Tuple[Any, Any]]:
        """Each chunk's image bytes as an ``(arrow_schema, arrow_array)`` capsule pair."""
        return [chunk.__arrow_c_array__() for chunk in self._chunks]


def _dataset_files(dataset: Any, image_column: str, label_column: str) -> Optional[Files]:
    """A ``datasets.Dataset`` whose image cells all hold a path and no bytes (``Image()`` cast on local files) as
    the :class:`fastloop.Files` of those paths, in its row order; None when it stores bytes."""
    table = dataset.data.table if hasattr(dataset.data, "table") else dataset.data
    if image_column not in table.column_names or label_column not in table.column_names:
        return None
    column = table.column(image_column)  # chunk by chunk: a set of bytes is not copied to be looked at
    pa = _pyarrow()
    if not pa.types.is_struct(column.type):
        return None
    names = [column.type.field(i).name for i in range(column.type.num_fields)]
    if "bytes" not in names or "path" not in names:
        return None
    chunks = [chunk.flatten() for chunk in column.chunks]
    if any(c[names.index("bytes")].null_count != len(c[0]) or c[names.index("path")].null_count for c in chunks):
        return None
    labels, classes = _dataset_labels(dataset, table, label_column)
    paths = [p for c in chunks for p in c[names.index("path")].to_pylist()]
    rows = dataset._indices.column(0).to_pylist() if dataset._indices is not None else range(len(paths))
    return Files([paths[r] for r in rows], [labels[r] for r in rows], classes)


def arrow_split(source: Any, split: str, image_column: str, label_column: str, timeout: float = 60.0,
                cache_dir: Optional[str] = None, cache_size: int = 10 << 30) -> Any:
    """The Arrow split a Loader's `source` names: ``parquet:...`` text or a ``datasets.Dataset`` (a
    :class:`fastloop.Files` for one whose image cells name local files)."""
    if is_dataset(source):
        files = _dataset_files(source, image_column, label_column)
        return files if files is not None else DatasetSplit(source, image_column, label_column)
    return ParquetSplit(parquet_patterns(source, split), image_column, label_column, timeout, cache_dir, cache_size)
