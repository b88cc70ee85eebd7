#!/usr/bin/env python3
"""Detection and segmentation loading: ``fastloop.Loader(fastloop.CocoDetection(...) or VOCSegmentation(...),
transform=X)`` against torchvision's ``DataLoader(wrap_dataset_for_transforms_v2(CocoDetection(..., transforms=X)
or VOCSegmentation(...)), collate_fn=tuple(zip(*b)))``.

The photo set (``scripts/make_photo_set.sh``) gets COCO-style annotations, written once under ``--work`` with a
fixed seed: 1 to 8 objects per photo, each a random star-shaped polygon (8-16 points, COCO's two decimals), its
bbox the polygon's extent, category 1-5. Both sides read the same JPEGs and the same annotation file, run the
same transform object, the same workers and batch size:

  - ``ssd``: torchvision's SSD-style detection pipeline (references/detection/presets.py): RandomPhotometricDistort,
    RandomZoomOut, RandomIoUCrop, RandomHorizontalFlip, Resize((300, 300)), SanitizeBoundingBoxes,
    ToDtype(float32, scale=True); targets boxes + labels (``ssd``) and boxes + labels + masks (``ssd-masks``:
    every polygon rasterized, then moved by every op).
  - ``seg``: torchvision's segmentation reference pipeline (references/segmentation/presets.py, base 520, crop
    480): ToImage, RandomResize(260, 1040), RandomHorizontalFlip, RandomCrop(480) padded with 255 in the masks and 0 in
    the images, ToDtype(float32, scale=True), Normalize; over the same photos as a VOC tree (WORK/VOCdevkit:
    JPEGImages linked to the photos, SegmentationClass palette PNGs of the same polygons' categories, 255 on
    their outlines, as VOC's borders).

Per pipeline and worker count the sides alternate over ``--pairs`` rounds (the order rotates), so each sees the
machine at the same speed; img/s is the median of a side's rounds. Writes OUT.json and OUT.md (the CPU named)::

    .venv/bin/python bench/python_detection.py --data /tmp/photos --work /tmp/photos-coco --workers 1,2 \\
        --out bench/results/cpu-2core/python_detection
"""
import argparse
import contextlib
import io
import json
import os
import pathlib
import statistics
import sys
import time
from typing import Any, Dict, List

import numpy as np
import torch
import torchvision
import torchvision.transforms.v2 as T
from torch.utils.data import DataLoader
from torchvision import tv_tensors

import fastloop

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from python_loader import children_gone  # noqa: E402
from python_transforms import cpu_name  # noqa: E402

SIDES = ["fastloop", "torchvision"]
PIPELINES = {"ssd": ["boxes", "labels"], "ssd-masks": ["boxes", "labels", "masks"], "seg": []}
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def segmentation_pipeline() -> T.Compose:
    return T.Compose([T.ToImage(), T.RandomResize(260, 1040), T.RandomHorizontalFlip(),
                      T.RandomCrop(480, pad_if_needed=True, fill={tv_tensors.Mask: 255, "others": 0}),
                      T.ToDtype(torch.float32, scale=True), T.Normalize(MEAN, STD)])


def pipeline() -> T.Compose:
    return T.Compose([T.RandomPhotometricDistort(p=1), T.RandomZoomOut(fill=0), T.RandomIoUCrop(),
                      T.RandomHorizontalFlip(), T.Resize((300, 300)), T.SanitizeBoundingBoxes(),
                      T.ToDtype(torch.float32, scale=True)])


def _polygon(rng: np.random.Generator, height: int, width: int) -> List[float]:
    n = int(rng.integers(8, 17))
    cx, cy = rng.uniform(0.1, 0.9) * width, rng.uniform(0.1, 0.9) * height
    radius = rng.uniform(0.05, 0.35) * min(height, width) * rng.uniform(0.6, 1.0, n)
    angle = np.sort(rng.uniform(0, 2 * np.pi, n))
    xs = np.clip(cx + radius * np.cos(angle), 0, width)
    ys = np.clip(cy + radius * np.sin(angle), 0, height)
    return np.round(np.stack([xs, ys], 1).reshape(-1), 2).tolist()


def prepare(a: argparse.Namespace) -> pathlib.Path:
    """WORK/instances.json over DATA/train's photos (file names relative to DATA/train), once."""
    from PIL import Image

    out = pathlib.Path(a.work) / "instances.json"
    if out.exists():
        return out
    root = pathlib.Path(a.data) / "train"
    rng = np.random.default_rng(0)
    images, annotations = [], []
    for image_id, path in enumerate(sorted(root.glob("*/*")), start=1):
        with Image.open(path) as im:
            width, height = im.size
        images.append({"id": image_id, "file_name": str(path.relative_to(root)), "height": height, "width": width})
        for _ in range(int(rng.integers(1, 9))):
            poly = _polygon(rng, height, width)
            xs, ys = poly[0::2], poly[1::2]
            bbox = [min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)]
            annotations.append({"id": len(annotations) + 1, "image_id": image_id, "category_id": int(rng.integers(1, 6)),
                                "bbox": [round(v, 2) for v in bbox], "area": round(bbox[2] * bbox[3], 2),
                                "iscrowd": 0, "segmentation": [poly]})
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"images": images, "annotations": annotations,
                               "categories": [{"id": c, "name": f"class{c}"} for c in range(1, 6)]}))
    voc_prepare(root, images, annotations, pathlib.Path(a.work) / "VOCdevkit" / "VOC2012")
    return out


def voc_prepare(root: pathlib.Path, images: List[Dict[str, Any]], annotations: List[Dict[str, Any]],
                voc: pathlib.Path) -> None:
    """The photos as a VOC tree: each image's polygons filled with their category, outlined with 255."""
    from PIL import Image, ImageDraw

    for folder in ("JPEGImages", "SegmentationClass", "ImageSets/Segmentation"):
        (voc / folder).mkdir(parents=True, exist_ok=True)
    by_image: Dict[int, List[Dict[str, Any]]] = {}
    for annotation in annotations:
        by_image.setdefault(annotation["image_id"], []).append(annotation)
    palette = [v for c in range(256) for v in ((c * 37) % 256, (c * 91) % 256, (c * 53) % 256)]
    names = []
    for image in images:
        name = f"{image['id']:06d}"
        names.append(name)
        (voc / "JPEGImages" / f"{name}.jpg").symlink_to(root / image["file_name"])
        mask = Image.new("P", (image["width"], image["height"]), 0)
        mask.putpalette(palette)
        draw = ImageDraw.Draw(mask)
        for annotation in by_image.get(image["id"], []):
            draw.polygon(annotation["segmentation"][0], fill=annotation["category_id"], outline=255)
        mask.save(voc / "SegmentationClass" / f"{name}.png")
    (voc / "ImageSets" / "Segmentation" / "train.txt").write_text("\n".join(names) + "\n")


def timed(batches: Any, count: int, warmup: int) -> float:
    """img/s over `count` batches of an iterator after `warmup` untimed ones (a batch's images: a tensor, a list
    or a tuple)."""
    it = iter(batches)
    for _ in range(warmup):
        next(it)
    seen, start = 0, time.perf_counter()
    for _ in range(count):
        images, _ = next(it)
        seen += len(images)
    return seen / (time.perf_counter() - start)


def _epochs(loader: Any):
    while True:
        yield from loader


def make_loader(side: str, keys: List[str], workers: int, a: argparse.Namespace) -> Any:
    root, ann = str(pathlib.Path(a.data) / "train"), str(pathlib.Path(a.work) / "instances.json")
    if not keys:  # segmentation: the VOC tree
        x = segmentation_pipeline()
        if side == "fastloop":
            return fastloop.Loader(fastloop.VOCSegmentation(a.work), transform=x, batch_size=a.batch_size,
                                   workers=workers)
        dataset = torchvision.datasets.wrap_dataset_for_transforms_v2(
            torchvision.datasets.VOCSegmentation(a.work, transforms=x))
        return DataLoader(dataset, batch_size=a.batch_size, shuffle=True, num_workers=workers, drop_last=True,
                          collate_fn=lambda b: tuple(zip(*b)), persistent_workers=workers > 0)
    x = pipeline()
    if side == "fastloop":
        dataset = fastloop.CocoDetection(root, ann, target_keys=keys)
        return fastloop.Loader(dataset, transform=x, batch_size=a.batch_size, workers=workers)
    with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints its timings
        coco = torchvision.datasets.CocoDetection(root, ann, transforms=x)
    dataset = torchvision.datasets.wrap_dataset_for_transforms_v2(coco, target_keys=keys)
    return DataLoader(dataset, batch_size=a.batch_size, shuffle=True, num_workers=workers, drop_last=True,
                      collate_fn=lambda b: tuple(zip(*b)), persistent_workers=workers > 0)


def measure(side: str, keys: List[str], workers: int, a: argparse.Namespace) -> float:
    loader = make_loader(side, keys, workers, a)
    batches = a.batches if side == "fastloop" else a.dataloader_batches
    img_per_s = timed(_epochs(loader), batches, a.warmup)
    del loader
    children_gone()
    return img_per_s


def run_row(name: str, workers: int, a: argparse.Namespace) -> Dict[str, Any]:
    rounds: Dict[str, List[float]] = {s: [] for s in SIDES}
    for k in range(a.pairs):
        for side in SIDES[k % len(SIDES):] + SIDES[:k % len(SIDES)]:
            rounds[side].append(measure(side, PIPELINES[name], workers, a))
    row: Dict[str, Any] = {"pipeline": name, "workers": workers, "rounds": rounds}
    row.update({f"{s}_img_per_s": statistics.median(v) for s, v in rounds.items()})
    print(json.dumps({k: v for k, v in row.items() if k != "rounds"}), flush=True)
    return row


def table(rows: List[Dict[str, Any]], a: argparse.Namespace) -> List[str]:
    lines = [f"# fastloop.Loader vs torchvision's CocoDetection / VOCSegmentation + DataLoader: {a.data}", "",
             f"{cpu_name()}, {os.cpu_count()} cores; torch {torch.__version__}, torchvision {torchvision.__version__}; "
             f"batch {a.batch_size}, median of {a.pairs} interleaved rounds; `{' '.join(sys.argv)}`", "",
             "| pipeline | workers | fastloop img/s | DataLoader img/s | fastloop ÷ DataLoader |",
             "|---|---:|---:|---:|---:|"]
    for r in rows:
        f, d = r["fastloop_img_per_s"], r["torchvision_img_per_s"]
        lines.append(f"| {r['pipeline']} | {r['workers']} | {f:.0f} | {d:.0f} | **{f / d:.2f}×** |")
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="DIR with DIR/train/CLASS/IMAGE (scripts/make_photo_set.sh)")
    p.add_argument("--work", required=True, help="where the annotation file is written (once)")
    p.add_argument("--pipelines", default="ssd,ssd-masks,seg")
    p.add_argument("--workers", default="1,2")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--batches", type=int, default=20, help="timed batches per fastloop round")
    p.add_argument("--dataloader-batches", type=int, default=6, help="timed batches per DataLoader round")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--pairs", type=int, default=3, help="rounds per side (the order rotates)")
    p.add_argument("--out", required=True, help="OUT.json and OUT.md")
    a = p.parse_args()
    torch.manual_seed(0)
    prepare(a)
    rows = [run_row(name, workers, a) for name in a.pipelines.split(",") for workers in map(int, a.workers.split(","))]
    result = {"cpu": cpu_name(), "cores": os.cpu_count(), "torch": torch.__version__,
              "torchvision": torchvision.__version__, "fastloop": fastloop.__version__, "data": a.data,
              "batch_size": a.batch_size, "rows": rows}
    pathlib.Path(a.out + ".json").write_text(json.dumps(result, indent=1) + "\n")
    lines = table(rows, a)
    pathlib.Path(a.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
