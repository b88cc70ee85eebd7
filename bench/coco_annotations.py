"""COCO annotation file load: pycocotools' ``COCO(annFile)`` against ``fastloop.CocoDetection(root, annFile)``.

Writes a train2017-sized synthetic instances file (118,287 images, 860,001 annotations: polygons of 8 to 120
numbers with 2 decimals as COCO's, 1% crowd annotations with compressed RLE; ~450 MB; seed 0) into a temporary
folder, then constructs each in a fresh child process, rounds interleaved, and records the construction's wall
time, the child's peak resident memory (VmHWM, read in the child after constructing: ru_maxrss of a child would
count the pages it shared with this process between fork and exec) and its resident memory before constructing.
The goal (issue 53): fastloop in <= 1/5 of pycocotools' time and <= 1/2 of its peak memory.

    PYTHONPATH=build/python .venv/bin/python bench/coco_annotations.py --rounds 3 --out bench/results/cpu-2core
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

IMAGES, ANNOTATIONS = 118_287, 860_001
CATEGORIES = list(range(1, 91))


def _polygon_pool(rng: np.random.Generator, size: int) -> list[str]:
    """Polygons as COCO writes them ("[[x0,y0,...]]", 2 decimals), from which annotations draw."""
    pool = []
    for _ in range(size):
        parts = rng.choice([1, 1, 1, 2, 3])
        polys = []
        for _ in range(parts):
            n = 2 * int(rng.integers(4, 33))
            cx, cy, r = rng.uniform(50, 590), rng.uniform(50, 430), rng.uniform(5, 120)
            angle = np.sort(rng.uniform(0, 2 * np.pi, n // 2))
            xy = np.empty(n)
            xy[0::2] = cx + r * np.cos(angle)
            xy[1::2] = cy + r * np.sin(angle)
            polys.append("[" + ",".join(f"{v:.2f}" for v in xy) + "]")
        pool.append("[" + ",".join(polys) + "]")
    return pool


def _rle_pool(rng: np.random.Generator, size: int) -> list[str]:
    from pycocotools import mask as mask_util

    pool = []
    for _ in range(size):
        m = np.zeros((480, 640), np.uint8, order="F")
        for _ in range(int(rng.integers(2, 8))):
            x, y = int(rng.integers(0, 600)), int(rng.integers(0, 440))
            m[y:y + int(rng.integers(5, 80)), x:x + int(rng.integers(5, 120))] = 1
        counts = mask_util.encode(m)["counts"].decode()
        pool.append(json.dumps({"counts": counts, "size": [480, 640]}))
    return pool


def write_annotations(path: str, seed: int = 0) -> int:
    """The synthetic instances file at `path`; its size in bytes."""
    rng = np.random.default_rng(seed)
    ids = rng.permutation(np.arange(1, 600_000))[:IMAGES]
    images = [f'{{"license":3,"file_name":"{i:012d}.jpg","coco_url":"http://images.cocodataset.org/train2017/{i:012d}.jpg",'
              f'"height":480,"width":640,"date_captured":"2013-11-14 11:18:45",'
              f'"flickr_url":"http://farm4.staticflickr.com/3153/9833_5fe6b1b7a5_z.jpg","id":{i}}}' for i in ids]
    polygons, rles = _polygon_pool(rng, 4000), _rle_pool(rng, 50)
    image_of = rng.choice(ids[: int(IMAGES * 0.99)], ANNOTATIONS)  # 1% of the images have no annotation
    crowd = rng.random(ANNOTATIONS) < 0.01
    poly_pick = rng.integers(0, len(polygons), ANNOTATIONS)
    rle_pick = rng.integers(0, len(rles), ANNOTATIONS)
    cats = rng.choice(CATEGORIES, ANNOTATIONS)
    box = np.round(rng.uniform(0, 400, (ANNOTATIONS, 4)), 2)
    area = np.round(box[:, 2] * box[:, 3] * 0.6, 4)
    annotations = [
        f'{{"segmentation":{rles[rle_pick[k]] if crowd[k] else polygons[poly_pick[k]]},"area":{area[k]},'
        f'"iscrowd":{int(crowd[k])},"image_id":{image_of[k]},"bbox":[{box[k, 0]},{box[k, 1]},{box[k, 2]},{box[k, 3]}],'
        f'"category_id":{cats[k]},"id":{k + 1}}}' for k in range(ANNOTATIONS)]
    categories = [f'{{"supercategory":"thing","id":{c},"name":"class{c}"}}' for c in CATEGORIES]
    with open(path, "w") as f:
        f.write('{"info":{"description":"synthetic train2017-sized","year":2017},"licenses":[],"images":[')
        f.write(",".join(images))
        f.write('],"annotations":[')
        f.write(",".join(annotations))
        f.write('],"categories":[' + ",".join(categories) + "]}")
    return os.path.getsize(path)


CHILD = {
    "pycocotools": "from pycocotools.coco import COCO\nmake = lambda: COCO(ANN)",
    "fastloop": "import fastloop\nmake = lambda: fastloop.CocoDetection(ROOT, ANN)",
}
CHILD_TAIL = """
import contextlib, io, json, resource, time
def status(field):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(field + ":"))
before = status("VmRSS")
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    made = make()
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "rss_before": before, "peak_rss": status("VmHWM")}))
"""


def run_child(name: str, ann: str, root: str) -> dict:
    code = f"ANN = {ann!r}\nROOT = {root!r}\n" + CHILD[name] + CHILD_TAIL
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, env=os.environ.copy(), check=True)
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=None, help="folder for coco_annotations.{md,json}")
    parser.add_argument("--machine", default=f"{platform.node()}: {os.cpu_count()} CPUs")
    parser.add_argument("--note", default="", help="a line for the md (e.g. that the machine was shared)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ann = os.path.join(tmp, "instances_train2017.json")
        t = time.perf_counter()
        size = write_annotations(ann)
        print(f"wrote {size / 1e6:.0f} MB in {time.perf_counter() - t:.0f} s", flush=True)
        runs: dict[str, list[dict]] = {name: [] for name in CHILD}
        for r in range(args.rounds):
            for name in CHILD:
                runs[name].append(run_child(name, ann, tmp))
                print(f"round {r}: {name}: {runs[name][-1]}", flush=True)
    summary = {}
    for name, rs in runs.items():
        secs = [x["seconds"] for x in rs]
        summary[name] = {"seconds_median": statistics.median(secs), "seconds": secs,
                         "peak_rss_mb": max(x["peak_rss"] for x in rs) / 2**20,
                         "rss_before_mb": statistics.median(x["rss_before"] for x in rs) / 2**20}
    py, fl = summary["pycocotools"], summary["fastloop"]
    ratios = {"time": fl["seconds_median"] / py["seconds_median"], "peak_rss": fl["peak_rss_mb"] / py["peak_rss_mb"],
              "added_rss": (fl["peak_rss_mb"] - fl["rss_before_mb"]) / (py["peak_rss_mb"] - py["rss_before_mb"])}
    record = {"machine": args.machine, "file_bytes": size, "images": IMAGES, "annotations": ANNOTATIONS,
              "rounds": args.rounds, "note": args.note, "results": summary, "ratio_fastloop_to_pycocotools": ratios}
    print(json.dumps(record, indent=1))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "coco_annotations.json"), "w") as f:
            json.dump(record, f, indent=1)
        with open(os.path.join(args.out, "coco_annotations.md"), "w") as f:
            f.write(_markdown(record))


def _markdown(record: dict) -> str:
    r, q = record["results"], record["ratio_fastloop_to_pycocotools"]
    lines = [
        "# COCO annotation file load: pycocotools vs fastloop",
        "",
        f"Machine: {record['machine']}. {record['note']}".rstrip(),
        "",
        f"A synthetic train2017-sized instances file ({record['file_bytes'] / 1e6:.0f} MB, {record['images']:,} images, "
        f"{record['annotations']:,} annotations, seed 0), each constructor in a fresh process, {record['rounds']} rounds "
        "interleaved; time is the constructor's wall time (median), memory the process's peak RSS (max over rounds) "
        "(VmHWM) and the RSS before constructing (fastloop's includes `import torch`).",
        "",
        "| | construction (s) | peak RSS (MiB) | RSS before (MiB) | peak - before (MiB) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in ("pycocotools", "fastloop"):
        x = r[name]
        lines.append(f"| {name} | {x['seconds_median']:.2f} | {x['peak_rss_mb']:.0f} | {x['rss_before_mb']:.0f} | "
                     f"{x['peak_rss_mb'] - x['rss_before_mb']:.0f} |")
    lines += ["", f"fastloop / pycocotools: time {q['time']:.3f} (goal <= 0.2), peak RSS {q['peak_rss']:.3f} "
              f"(goal <= 0.5), RSS added by construction {q['added_rss']:.3f}.", "",
              "Command: `PYTHONPATH=build/python .venv/bin/python bench/coco_annotations.py --rounds 3 "
              "--out bench/results/cpu-2core`", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
