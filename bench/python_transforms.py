#!/usr/bin/env python3
"""A user's own torchvision pipeline: ``fastloop.Loader(transform=X)`` against ``DataLoader(ImageFolder(transform=X))``.

The same ``X`` object on both sides (torchvision's classes, as a user writes them), the same workers and
batch size, on a folder of photographs (``scripts/make_photo_set.sh``). Four pipelines (issue 35):

  (a) ``crop-flip``: RandomResizedCrop + RandomHorizontalFlip + ToTensor + Normalize
  (b) ``simclr``: RandomResizedCrop + flip + RandomApply(ColorJitter(0.4, 0.4, 0.4, 0.1), p=0.8) +
      RandomGrayscale(0.2) + GaussianBlur(23) + ToTensor
  (c) ``reference``: torchvision's classification reference: RandomResizedCrop + flip + TrivialAugmentWide +
      PILToTensor + ConvertImageDtype + Normalize + RandomErasing(0.25)
  (d) ``randaugment``: RandomResizedCrop + flip + RandAugment(2, 9) + ToTensor + Normalize

plus ``builtin``: fastloop.Loader with no ``transform=`` (its built-in RandomResizedCrop + flip), to show
that (a) costs no more than the fused path it replaces. Per worker count the sides alternate over
``--pairs`` rounds (fastloop first, then DataLoader first, ...) so both see the machine at the same speed;
img/s is the median over a side's rounds. Writes OUT.json and OUT.md (the CPU named)::

    .venv/bin/python bench/python_transforms.py --data /tmp/photos --workers 1,2 \\
        --out bench/results/cpu-2core/python_transforms
"""
import argparse
import json
import os
import pathlib
import platform
import statistics
import sys
from typing import Callable, Dict, List

import PIL
import torch
import torchvision
from torch.utils.data import DataLoader
from torchvision import datasets, transforms as T

import fastloop

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from python_loader import children_gone, epochs, timed  # noqa: E402

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def crop_flip(size: int) -> List[object]:
    return [T.RandomResizedCrop(size), T.RandomHorizontalFlip()]


#: name -> the pipeline for a crop side of `size` pixels
PIPELINES: Dict[str, Callable[[int], T.Compose]] = {
    "crop-flip": lambda s: T.Compose(crop_flip(s) + [T.ToTensor(), T.Normalize(MEAN, STD)]),
    "simclr": lambda s: T.Compose(crop_flip(s) + [
        T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8), T.RandomGrayscale(0.2), T.GaussianBlur(23),
        T.ToTensor()]),
    "reference": lambda s: T.Compose(crop_flip(s) + [
        T.TrivialAugmentWide(), T.PILToTensor(), T.ConvertImageDtype(torch.float), T.Normalize(MEAN, STD),
        T.RandomErasing(0.25)]),
    "randaugment": lambda s: T.Compose(crop_flip(s) + [
        T.RandAugment(2, 9), T.ToTensor(), T.Normalize(MEAN, STD)]),
}


def cpu_name() -> str:
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def make_loader(side: str, pipeline: str, workers: int, a: argparse.Namespace):
    """The side's loader over DIR/train; ``builtin`` is fastloop's own augmentation (no transform=)."""
    x = None if pipeline == "builtin" else PIPELINES[pipeline](a.image_size)
    if side == "fastloop":
        return fastloop.Loader(f"imagefolder:{a.data}", batch_size=a.batch_size, workers=workers,
                               image_size=a.image_size, transform=x)
    dataset = datasets.ImageFolder(os.path.join(a.data, "train"), x)
    return DataLoader(dataset, batch_size=a.batch_size, shuffle=True, num_workers=workers, drop_last=True,
                      persistent_workers=workers > 0)


def measure(side: str, pipeline: str, workers: int, a: argparse.Namespace) -> float:
    loader = make_loader(side, pipeline, workers, a)
    batches = a.batches if side == "fastloop" else a.dataloader_batches
    img_per_s, _ = timed(epochs(loader), batches, a.warmup)
    del loader
    children_gone()
    return img_per_s


def run_row(pipeline: str, workers: int, a: argparse.Namespace) -> Dict[str, object]:
    sides = ["fastloop"] if pipeline == "builtin" else ["fastloop", "dataloader"]
    rounds: Dict[str, List[float]] = {s: [] for s in sides}
    for k in range(a.pairs):
        for side in (sides if k % 2 == 0 else sides[::-1]):
            rounds[side].append(measure(side, pipeline, workers, a))
    row: Dict[str, object] = {"pipeline": pipeline, "workers": workers, "rounds": rounds}
    row.update({f"{s}_img_per_s": statistics.median(v) for s, v in rounds.items()})
    print(json.dumps({k: v for k, v in row.items() if k != "rounds"}), flush=True)
    return row


def table(rows: List[Dict[str, object]], a: argparse.Namespace) -> List[str]:
    by = {(r["pipeline"], r["workers"]): r for r in rows}
    lines = [f"# fastloop.Loader(transform=X) vs DataLoader(ImageFolder(transform=X)): {a.data}",
             "", f"{cpu_name()}, {os.cpu_count()} cores; torch {torch.__version__}, torchvision "
             f"{torchvision.__version__}, Pillow {PIL.__version__}; batch {a.batch_size}, {a.image_size} px, "
             f"median of {a.pairs} interleaved rounds; `{' '.join(sys.argv)}`", "",
             "| pipeline | workers | fastloop img/s | DataLoader img/s | fastloop ÷ DataLoader | ÷ (a) crop-flip |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        base = by.get(("crop-flip", r["workers"]))
        dl = r.get("dataloader_img_per_s")
        lines.append(f"| {r['pipeline']} | {r['workers']} | {r['fastloop_img_per_s']:.0f} | "
                     f"{dl:.0f} | {r['fastloop_img_per_s'] / dl:.2f}× | " if dl else
                     f"| {r['pipeline']} (no transform=) | {r['workers']} | {r['fastloop_img_per_s']:.0f} | – | – | ")
        lines[-1] += f"{r['fastloop_img_per_s'] / base['fastloop_img_per_s']:.2f}× |" if base else "– |"
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="DIR with DIR/train/CLASS/IMAGE (scripts/make_photo_set.sh)")
    p.add_argument("--pipelines", default="builtin," + ",".join(PIPELINES))
    p.add_argument("--workers", default="1,2")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--batches", type=int, default=40, help="timed batches per fastloop round")
    p.add_argument("--dataloader-batches", type=int, default=8, help="timed batches per DataLoader round")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--pairs", type=int, default=2, help="rounds per side (the order alternates)")
    p.add_argument("--out", required=True, help="OUT.json and OUT.md")
    a = p.parse_args()
    torch.manual_seed(0)
    rows = [run_row(name, workers, a) for workers in map(int, a.workers.split(","))
            for name in a.pipelines.split(",")]
    result = {"cpu": cpu_name(), "cores": os.cpu_count(), "torch": torch.__version__,
              "torchvision": torchvision.__version__, "pillow": PIL.__version__, "fastloop": fastloop.__version__,
              "data": a.data, "batch_size": a.batch_size, "image_size": a.image_size, "rows": rows}
    pathlib.Path(a.out + ".json").write_text(json.dumps(result, indent=1) + "\n")
    lines = table(rows, a)
    pathlib.Path(a.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
