"""``fastloop pack parquet:TRAIN[::VAL] OUT``: Parquet files in the Hugging Face Hub's layout written as the
WebDataset tar shards ``fastloop pack`` writes for an image folder (OUT/train-NNNNNN.tar, OUT/val-NNNNNN.tar,
OUT/classes.txt; the C++ command then writes OUT/shards.idx), so ``fastloop train --data shards:OUT`` reads
what ``fastloop.Loader("parquet:...")`` reads. The C++ command runs this module with ``FASTLOOP_PYTHON``: the
Parquet files are read with pyarrow, which the C++ program does not link.

Each sample is KEY.EXT (the image cell's bytes, untouched; EXT from the bytes' signature) + KEY.cls (its class
index, when the files have the label column) + KEY.txt (a ``caption``, ``text`` or ``txt`` column of strings) +
KEY.json (the row's other columns), so a caption Parquet packs into the image-caption shards img2dataset writes.
The train split is read a row group at a time in a seeded order of row groups, each group's rows
shuffled (a shard is read front to back through a bounded shuffle buffer, so it must be mixed already); the
val split keeps the files' order.
"""

import argparse
import json
import os
import random
import sys
import tarfile
import time
from io import BytesIO
from typing import Any, Callable, List, Optional, Tuple

from ._arrow import ParquetSplit, _image_bytes, _pyarrow, parquet_patterns

__all__ = ["image_extension", "pack_split", "main"]

# The leading bytes of each image format fastloop decodes, and the extension `fastloop pack` gives it.
_SIGNATURES = [(b"\xff\xd8\xff", "jpg"), (b"\x89PNG\r\n\x1a\n", "png"), (b"BM", "bmp"), (b"II*\x00", "tiff"),
               (b"MM\x00*", "tiff")] + [(b"P" + bytes([c]), "ppm") for c in b"123456"]


def image_extension(data: bytes, where: str) -> str:
    """The member extension for encoded image bytes; ``ValueError`` naming `where` for bytes of no image format."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    for signature, ext in _SIGNATURES:
        if data.startswith(signature):
            return ext
    raise ValueError(f"{where}: the image cell is not a JPEG, PNG, WebP, BMP, TIFF or PNM file (it starts "
                     f"{data[:8]!r}); fix or drop the row before packing")


class _Shards:
    """OUT/SPLIT-NNNNNN.tar of at most `shard_bytes` each, opened as samples come."""

    def __init__(self, out: str, split: str, shard_bytes: int) -> None:
        self.out, self.split, self.shard_bytes = out, split, shard_bytes
        self.tar: Optional[tarfile.TarFile] = None
        self.count = 0
        self.size = 0

    def add(self, key: str, ext: str, data: bytes, label: Optional[int],
            others: Tuple[Tuple[str, bytes], ...] = ()) -> None:
        members = [(f"{key}.{ext}", data)]
        if label is not None:
            members.append((f"{key}.cls", str(label).encode()))
        members += [(f"{key}.{other}", payload) for other, payload in others]
        need = sum(512 + -(-len(payload) // 512) * 512 for _, payload in members)
        if self.tar is not None and self.size + need + 1024 > self.shard_bytes:
            self.close()
        if self.tar is None:
            path = os.path.join(self.out, f"{self.split}-{self.count:06d}.tar")
            print(path, flush=True)
            self.tar = tarfile.open(path, "w", format=tarfile.USTAR_FORMAT)
            self.count += 1
            self.size = 0
        for name, payload in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(payload), int(time.time()), 0o644
            self.tar.addfile(info, BytesIO(payload))
        self.size += need

    def close(self) -> None:
        if self.tar is not None:
            self.tar.close()
            self.tar = None


_CAPTION_COLUMNS = ("caption", "text", "txt")  # the first one present, of strings, is each sample's KEY.txt


def _extra_fields(table: Any, image_column: str,
                  label_column: Optional[str]) -> Callable[[int], Tuple[Tuple[str, bytes], ...]]:
    """Row r's other columns as members: the caption column as txt, all of them as one json object (what
    img2dataset writes beside each image), so that a caption Parquet packs into image-caption shards."""
    pa = _pyarrow()
    names = [n for n in table.column_names if n not in (image_column, label_column)]
    if not names:
        return lambda r: ()
    def text(n: str) -> bool:
        return pa.types.is_string(table.schema.field(n).type) or pa.types.is_large_string(table.schema.field(n).type)
    caption = next((n for n in _CAPTION_COLUMNS if n in names and text(n)), None)
    rows = table.select(names).to_pylist()

    def members(r: int) -> Tuple[Tuple[str, bytes], ...]:
        row = rows[r]
        out = [("txt", row[caption].encode())] if caption is not None and row[caption] is not None else []
        try:
            out.append(("json", json.dumps(row, ensure_ascii=False, default=str).encode()))
        except (TypeError, ValueError):  # a value JSON cannot hold: the caption alone
            pass
        return tuple(out)

    return members


def pack_split(split: ParquetSplit, out: str, name: str, shard_bytes: int, seed: Optional[int]) -> int:
    """Writes `split` as OUT/NAME-NNNNNN.tar shards; `seed`: the shuffled order (train), None: the files' order.
    Returns the number of shards."""
    groups = list(range(len(split.groups)))
    rng = random.Random(seed)
    if seed is not None:
        rng.shuffle(groups)
    shards = _Shards(out, name, shard_bytes)
    first = [0]
    for rows in split.group_rows:
        first.append(first[-1] + rows)
    key = 0
    for g in groups:
        f, group = split.groups[g]
        table = split._file(f).read_row_group(group)
        column = _image_bytes(table.column(split.image_column).combine_chunks(), split.group_names[g],
                              os.path.dirname(split.paths[f]))
        extra = _extra_fields(table, split.image_column, split.label_column)
        rows = list(range(len(column)))
        if seed is not None:
            rng.shuffle(rows)
        for r in rows:
            where = f"{split.group_names[g]}, row {r}"
            value = column[r].as_py()
            if value is None:
                raise ValueError(f"{where}: the image cell is null (no bytes); drop the row before packing")
            label = split.labels[first[g] + r] if split.label_column is not None else None
            shards.add(f"{key:08d}", image_extension(value, where), value, label, extra(r))
            key += 1
    shards.close()
    return shards.count


def _has_column(pattern: str, column: str) -> bool:
    """Whether the first file of `pattern` has `column`."""
    from ._arrow import _expand
    path = _expand(pattern)[0]
    try:
        schema = _pyarrow().parquet.read_schema(path)
    except Exception as e:  # named as the reader names it (_arrow.ParquetSplit)
        raise ValueError(f"{path}: not a readable Parquet file ({e}); replace it, or leave it out "
                         "of the pattern") from None
    return column in schema.names


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="fastloop pack", description=__doc__.splitlines()[0])
    p.add_argument("source", help="parquet:TRAIN_PATTERN[::VAL_PATTERN]")
    p.add_argument("out")
    p.add_argument("--shard-mb", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--image-column", default="image")
    p.add_argument("--label-column", default="label")
    a = p.parse_args(argv)
    try:
        _pyarrow()
        pattern = parquet_patterns(a.source, "train")
        label = a.label_column if _has_column(pattern, a.label_column) else None  # caption sets have none
        train = ParquetSplit(pattern, a.image_column, label)
        val = None
        if "::" in a.source:
            val = ParquetSplit(parquet_patterns(a.source, "val"), a.image_column, label)
        os.makedirs(a.out, exist_ok=True)
        train_shards = pack_split(train, a.out, "train", a.shard_mb << 20, a.seed)
        val_shards = pack_split(val, a.out, "val", a.shard_mb << 20, None) if val is not None else 0
        if label is not None:
            with open(os.path.join(a.out, "classes.txt"), "w") as f:
                f.write("".join(f"{c}\n" for c in train.classes))
    except (ValueError, ImportError, OSError) as e:
        print(f"fastloop pack: {str(e).replace('fastloop.Loader: ', '')}", file=sys.stderr)
        return 2
    classes = f"of {len(train.classes)} classes " if label is not None else "(no label column: no .cls) "
    print(f"packed {len(train.labels)} train images {classes}into {train_shards} shards"
          + (f", {len(val.labels)} val images into {val_shards} shards" if val is not None else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
