"""``fastloop.video_csv``: videos listed in a CSV file, with the optional ``start`` and ``end`` seconds of the part of
each video its clips are drawn from (``VideoFiles(..., ranges=)``), each bad value named with its file, row and
column. The CLI's ``--data videocsv:`` reads the same columns with the same rules (data/sources/video_csv.h)."""

from __future__ import annotations

import csv
import math
import numbers
import os
import re
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:
    from ._video import VideoFiles

__all__ = ["video_csv"]

#: What a time field may hold: digits, a point and an exponent (float() alone also takes "nan", "inf", "1_0").
_SECONDS = re.compile(r"\+?[0-9.eE+-]+")


def _ranges_checked(ranges: Sequence[Any], count: int, origins: Sequence[str]) -> List[Tuple[float, float]]:
    """Each video's (start, end) seconds, NaN for None; ValueError naming the range for a bad one."""
    ranges = list(ranges)
    if len(ranges) != count:
        raise ValueError(f"{count} videos but {len(ranges)} ranges: give one (start, end) per video")
    checked = []
    for origin, item in zip(origins, ranges):
        try:
            start, end = item
        except (TypeError, ValueError):
            raise ValueError(f"{origin}: a range is (start, end) in seconds, got {item!r}") from None
        values = []
        for column, value in (("start", start), ("end", end)):
            if value is None:
                values.append(math.nan)
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise ValueError(f"{origin}, column {column!r}: {value!r} is not a number of seconds; give seconds "
                                 "from the video's begin (1.5), or None")
            if value < 0:
                raise ValueError(f"{origin}, column {column!r}: {value} is negative; times are seconds from the "
                                 "video's begin, >= 0")
            values.append(float(value))
        if values[1] <= values[0]:
            raise ValueError(f"{origin}, column 'end': {end} is not after the start ({start}); a range is [start, "
                             "end) seconds, end > start")
        checked.append((values[0], values[1]))
    return checked


def _csv_seconds(text: Optional[str], where: str, column: str) -> Optional[float]:
    """A start or end field: empty is None; else seconds >= 0; ValueError naming the row and column."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = float(text) if _SECONDS.fullmatch(text) else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        side = "begin" if column == "start" else "end"
        raise ValueError(f"{where}, column {column!r}: {text[:40]!r} is not a number of seconds; write seconds from "
                         f"the video's begin (1.5), or leave the field empty for the video's {side}")
    if value < 0:
        raise ValueError(f"{where}, column {column!r}: {text} is negative; times are seconds from the video's begin, "
                         ">= 0")
    return value


def video_csv(path: Union[str, os.PathLike], **kwargs: Any) -> "VideoFiles":
    """Videos listed in a CSV file: a header row with columns ``path`` and ``label`` (class indices, or class
    names: sorted, as ImageFolder's folders), paths relative to the CSV file, and optional columns ``start`` and
    ``end``: seconds of the part of the video its clips are drawn from (either may be empty: the video's begin / its
    end; see :class:`VideoFiles`' ``ranges`` for how each sampler keeps to it). ``kwargs`` as :class:`VideoFiles`.

    Example (``train.csv``)::

        path,label,start,end
        videos/abseiling/0001.mp4,abseiling,12.5,22.5
        videos/zumba/0042.mp4,zumba,,

    A row naming a missing file, without a label, or with a bad time (not a number, negative, an end not after its
    start) is a ``ValueError`` naming the file, the row and the column; a range that holds no frame or no clip is
    named (with its row) when the video is read."""
    from ._video import VideoFiles

    path = os.fspath(path)
    base = os.path.dirname(os.path.abspath(path))
    paths, names, origins, ranges = [], [], [], []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        columns = {name.strip().lower(): name for name in reader.fieldnames or [] if name}
        if "path" not in columns or "label" not in columns:
            raise ValueError(f"{path}: a video list needs a header row with columns 'path' and 'label'")
        for row in reader:
            where = f"{path}, row {reader.line_num}"
            video, label = row.get(columns["path"]), row.get(columns["label"])
            if not video or label in (None, ""):
                raise ValueError(f"{where}: needs a path and a label")
            video = os.path.join(base, video)
            if not os.path.isfile(video):
                raise ValueError(f"{where}: {video}: no such video file")
            span = tuple(_csv_seconds(row.get(columns[c]) if c in columns else None, where, c) for c in ("start", "end"))
            _ranges_checked([span], 1, [where])  # named here, before the videos are looked at
            ranges.append(span)
            paths.append(video)
            names.append(label)
            origins.append(where)
    if not paths:
        raise ValueError(f"{path}: no rows after the header; add a row per video (path,label)")
    ranged = {"ranges": ranges, "_origins": origins} if any(a is not None or b is not None for a, b in ranges) else {}
    if all(n.strip().lstrip("-").isdigit() for n in names):
        return VideoFiles(paths, [int(n) for n in names], **ranged, **kwargs)
    classes = sorted(set(names))
    return VideoFiles(paths, [classes.index(n) for n in names], classes, **ranged, **kwargs)
