#!/usr/bin/env python3
"""A Hugging Face-style Parquet data set: ``fastloop.Loader("parquet:...")`` against ``datasets`` + ``DataLoader``,
and against fastloop's own rate on the same images as local tar shards.

The photo set (``scripts/make_photo_set.sh``) is written once under ``--work`` as the Hub writes image data
sets: a ``datasets.Dataset`` of the files' bytes (``Image()`` cells of ``bytes`` and ``path``) with its
``ClassLabel``, shuffled once, then ``to_parquet`` in row groups of 100 (what the Hub's image sets hold) in ``--files`` files; and as tar shards (``fastloop
pack``). Three sides, the same torchvision transform object on each (RandomResizedCrop + flip + ToTensor +
Normalize), the same workers and batch size:

  - ``fastloop``: ``fastloop.Loader("parquet:WORK/parquet/train-*.parquet", transform=X)``;
  - ``datasets``: ``load_dataset("parquet", data_files=...)`` with ``set_transform`` applying X to each
    decoded image (what the datasets documentation shows), in ``DataLoader(shuffle=True)``;
  - ``shards``: ``fastloop.Loader("shards:WORK/shards", transform=X)``.

Per worker count the sides alternate over ``--pairs`` rounds (the order rotates) so each sees the machine at
the same speed; img/s is the median over a side's rounds. Writes OUT.json and OUT.md (the CPU named)::

    .venv/bin/python bench/python_parquet.py --data /tmp/photos --work /tmp/photos-parquet --workers 1,2 \\
        --out bench/results/cpu-2core/python_parquet
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
from typing import Any, Dict, List

import datasets
import pyarrow
import torch
from torch.utils.data import DataLoader
from torchvision import transforms as T

import fastloop

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from python_loader import children_gone, epochs, timed  # noqa: E402
from python_transforms import MEAN, STD, cpu_name  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
SIDES = ["fastloop", "datasets", "shards"]


def pipeline(size: int) -> T.Compose:
    return T.Compose([T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])


def prepare(a: argparse.Namespace) -> None:
    """WORK/parquet/train-*.parquet (the Hub's layout, written by datasets) and WORK/shards, once."""
    work = pathlib.Path(a.work)
    parquet = work / "parquet"
    if not parquet.exists():
        train = pathlib.Path(a.data) / "train"
        classes = sorted(p.name for p in train.iterdir())
        files = sorted(train.glob("*/*"))
        features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=classes)})
        ds = datasets.Dataset.from_dict({"image": [{"bytes": p.read_bytes(), "path": p.name} for p in files],
                                         "label": [classes.index(p.parent.name) for p in files]}, features=features)
        ds = ds.shuffle(seed=0).flatten_indices()  # the Hub's files hold a split in one mixed order
        parquet.mkdir(parents=True)
        for k in range(a.files):
            shard = ds.shard(a.files, k, contiguous=True)  # row groups of 100 images, as the Hub's image sets
            shard.to_parquet(str(parquet / f"train-{k:05d}-of-{a.files:05d}.parquet"), batch_size=100)
    if not (work / "shards").exists():
        subprocess.run([str(ROOT / "build/fastloop"), "pack", a.data, str(work / "shards")], check=True)


def make_loader(side: str, workers: int, a: argparse.Namespace) -> Any:
    x = pipeline(a.image_size)
    if side == "fastloop":
        return fastloop.Loader(f"parquet:{a.work}/parquet/train-*.parquet", batch_size=a.batch_size,
                               workers=workers, transform=x)
    if side == "shards":
        return fastloop.Loader(f"shards:{a.work}/shards", batch_size=a.batch_size, workers=workers, transform=x)
    files = sorted(str(p) for p in (pathlib.Path(a.work) / "parquet").glob("train-*.parquet"))
    ds = datasets.load_dataset("parquet", data_files=files, split="train")

    def apply(batch: Dict[str, List[Any]]) -> Dict[str, List[Any]]:
        return {"image": [x(image.convert("RGB")) for image in batch["image"]], "label": batch["label"]}

    ds.set_transform(apply)
    loader = DataLoader(ds, batch_size=a.batch_size, shuffle=True, num_workers=workers, drop_last=True,
                        persistent_workers=workers > 0)
    return ((b["image"], b["label"]) for b in epochs(loader))


def measure(side: str, workers: int, a: argparse.Namespace) -> float:
    loader = make_loader(side, workers, a)
    batches = a.dataloader_batches if side == "datasets" else a.batches
    img_per_s, _ = timed(loader if side == "datasets" else epochs(loader), batches, a.warmup)
    del loader
    children_gone()
    return img_per_s


def run_row(workers: int, a: argparse.Namespace) -> Dict[str, Any]:
    rounds: Dict[str, List[float]] = {s: [] for s in SIDES}
    for k in range(a.pairs):
        for side in SIDES[k % len(SIDES):] + SIDES[:k % len(SIDES)]:
            rounds[side].append(measure(side, workers, a))
    row: Dict[str, Any] = {"workers": workers, "rounds": rounds}
    row.update({f"{s}_img_per_s": statistics.median(v) for s, v in rounds.items()})
    print(json.dumps({k: v for k, v in row.items() if k != "rounds"}), flush=True)
    return row


def table(rows: List[Dict[str, Any]], a: argparse.Namespace) -> List[str]:
    lines = [f"# fastloop.Loader(\"parquet:...\") vs datasets + DataLoader, and vs tar shards: {a.data}", "",
             f"{cpu_name()}, {os.cpu_count()} cores; torch {torch.__version__}, datasets {datasets.__version__}, "
             f"pyarrow {pyarrow.__version__}; batch {a.batch_size}, {a.image_size} px, {a.files} Parquet files, "
             f"median of {a.pairs} interleaved rounds; `{' '.join(sys.argv)}`", "",
             "| workers | fastloop Parquet img/s | datasets + DataLoader img/s | fastloop shards img/s | "
             "Parquet ÷ datasets | Parquet ÷ shards |", "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        f, d, s = (r[f"{side}_img_per_s"] for side in SIDES)
        lines.append(f"| {r['workers']} | {f:.0f} | {d:.0f} | {s:.0f} | **{f / d:.2f}×** | **{f / s:.2f}×** |")
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="DIR with DIR/train/CLASS/IMAGE (scripts/make_photo_set.sh)")
    p.add_argument("--work", required=True, help="where the Parquet files and shards are written (once)")
    p.add_argument("--files", type=int, default=4, help="Parquet files the train split is written as")
    p.add_argument("--workers", default="1,2")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--batches", type=int, default=40, help="timed batches per fastloop round")
    p.add_argument("--dataloader-batches", type=int, default=8, help="timed batches per datasets round")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--pairs", type=int, default=3, help="rounds per side (the order rotates)")
    p.add_argument("--out", required=True, help="OUT.json and OUT.md")
    a = p.parse_args()
    torch.manual_seed(0)
    prepare(a)
    rows = [run_row(workers, a) for workers in map(int, a.workers.split(","))]
    result = {"cpu": cpu_name(), "cores": os.cpu_count(), "torch": torch.__version__, "datasets": datasets.__version__,
              "pyarrow": pyarrow.__version__, "fastloop": fastloop.__version__, "data": a.data, "files": a.files,
              "batch_size": a.batch_size, "image_size": a.image_size, "rows": rows}
    pathlib.Path(a.out + ".json").write_text(json.dumps(result, indent=1) + "\n")
    lines = table(rows, a)
    pathlib.Path(a.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
