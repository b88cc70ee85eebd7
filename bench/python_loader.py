#!/usr/bin/env python3
"""The loader alone through Python: fastloop.Loader against the C++ loader bench (`fastloop bench loader`,
the binding's cost) and against torchvision's ImageFolder + DataLoader at equal workers (the reference
ImageNet transforms of bench/peers/loader_peer.py), training transform (RandomResizedCrop + flip, normalised).

Per worker count the three alternate over --pairs pairs (Python, DataLoader, C++; then C++, DataLoader,
Python; ...), so all see the machine at the same speed; img/s is the median over a side's repetitions, CPU
µs per image counts the process and its workers (a DataLoader's workers are waited for before the next
repetition starts). Writes OUT.json and OUT.md.

    .venv/bin/python bench/python_loader.py --data imagefolder:/tmp/photos --workers 0,1,2 \\
        --out bench/results/cpu-2core/python_loader
"""
import argparse
import gc
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import torch
from torch.utils.data import DataLoader
from torchvision import datasets

import fastloop

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "peers"))
from loader_peer import cpu_seconds, imagenet_transform  # noqa: E402


def timed(batches, count, warmup):
    """(img/s, CPU µs per image) over `count` batches of an iterator after `warmup` untimed ones."""
    it = iter(batches)
    for _ in range(warmup):
        next(it)
    seen, start, cpu = 0, time.perf_counter(), cpu_seconds()
    for _ in range(count):
        images, _ = next(it)
        seen += images.shape[0]
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    return seen / seconds, 1e6 * cpu / seen


def children_gone(timeout=20.0):
    """Waits until this process has no child left (a DataLoader's workers finish their prefetched batches
    after the loader is dropped: left running they would slow, and be counted in, the next repetition)."""
    gc.collect()
    deadline = time.perf_counter() + timeout
    me = str(os.getpid())
    while time.perf_counter() < deadline:
        alive = False
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    alive |= f.read().rsplit(")", 1)[1].split()[1] == me
            except OSError:
                pass
        if not alive:
            return
        time.sleep(0.05)


def epochs(loader):
    while True:
        yield from loader


def measure_pair(workers, a, order):
    folder = a.data.split(":", 1)[1]
    results = {}
    for side in order:
        if side == "fastloop":
            loader = fastloop.Loader(a.data, batch_size=a.batch_size, workers=workers, image_size=a.image_size)
        else:
            dataset = datasets.ImageFolder(os.path.join(folder, "train"), imagenet_transform(True, a.image_size))
            loader = DataLoader(dataset, batch_size=a.batch_size, shuffle=True, num_workers=workers, drop_last=True,
                                persistent_workers=workers > 0)
        results[side] = timed(epochs(loader), a.batches, a.warmup)
        del loader
        children_gone()
    return results


def cpp_bench(workers, a):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([a.cli, "bench", "loader", "--data", a.data, "--workers", str(workers), "--augment", "on",
                        "--batch-size", str(a.batch_size), "--batches", str(a.batches), "--warmup", str(a.warmup),
                        "--repeats", "1",
                        "--image-size", str(a.image_size), "--step-model", "", "--out", f"{tmp}/b"],
                       check=True, capture_output=True)
        row = json.loads(pathlib.Path(f"{tmp}/b.json").read_text())["rows"][0]
    return row["img_per_s"], row["cpu_us_per_img"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="imagefolder:DIR (DIR/train/CLASS/IMAGE)")
    p.add_argument("--workers", default="0,1,2")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--batches", type=int, default=10, help="timed batches per repetition")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--pairs", type=int, default=2, help="A B pairs per worker count (order alternates)")
    p.add_argument("--cli", default=str(ROOT / "build" / "fastloop"))
    p.add_argument("--out", required=True, help="OUT.json and OUT.md")
    a = p.parse_args()
    rows = []
    for workers in map(int, a.workers.split(",")):
        reps = {"fastloop": [], "dataloader": [], "cpp": []}
        for k in range(a.pairs):
            order = ("fastloop", "dataloader") if k % 2 == 0 else ("dataloader", "fastloop")
            if k % 2:
                reps["cpp"].append(cpp_bench(workers, a))
            for side, value in measure_pair(workers, a, order).items():
                reps[side].append(value)
            if k % 2 == 0:
                reps["cpp"].append(cpp_bench(workers, a))
        med = {s: (statistics.median(v[0] for v in r), statistics.median(v[1] for v in r)) for s, r in reps.items()}
        rows.append({"workers": workers, "python_img_per_s": med["fastloop"][0], "python_cpu_us": med["fastloop"][1],
                     "cpp_img_per_s": med["cpp"][0], "cpp_cpu_us": med["cpp"][1], "dataloader_img_per_s": med["dataloader"][0],
                     "dataloader_cpu_us": med["dataloader"][1], "repetitions": reps})
        print(workers, {k: round(v) for k, v in rows[-1].items() if isinstance(v, float)}, flush=True)
    result = {"torch": torch.__version__, "fastloop": fastloop.__version__, "data": a.data,
              "batch_size": a.batch_size, "image_size": a.image_size, "batches": a.batches, "cores": os.cpu_count(),
              "rows": rows}
    pathlib.Path(a.out + ".json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [f"# fastloop.Loader from Python: {a.data}, batch {a.batch_size}, {a.image_size}-px training transform",
             "", f"torch {torch.__version__}, {os.cpu_count()} cores; `{' '.join(sys.argv)}`", "",
             "| workers | fastloop.Loader img/s (CPU µs/img) | C++ loader bench img/s (CPU µs/img) | Python ÷ C++ | "
             "DataLoader img/s (CPU µs/img) | fastloop.Loader ÷ DataLoader |", "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['workers']} | {r['python_img_per_s']:.0f} ({r['python_cpu_us']:.0f}) | "
                     f"{r['cpp_img_per_s']:.0f} ({r['cpp_cpu_us']:.0f}) | {r['python_img_per_s'] / r['cpp_img_per_s']:.2f}× | "
                     f"{r['dataloader_img_per_s']:.0f} ({r['dataloader_cpu_us']:.0f}) | "
                     f"{r['python_img_per_s'] / r['dataloader_img_per_s']:.2f}× |")
    pathlib.Path(a.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
