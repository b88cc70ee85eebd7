#!/usr/bin/env python3
"""`fastloop predict` end to end (image files to top-5 rows) against a PyTorch script doing the same:
torchvision's model with the same weights (exported from the checkpoint), ImageFolder with PIL's
Resize + CenterCrop + ToTensor + Normalize, a DataLoader at the same workers, inference mode, softmax
top-5 with class names written as CSV. Both are whole processes timed from start to exit, alternating
A B C C B A over --pairs pairs, C being `fastloop predict --no-graph` (the model run eagerly: what the
optimized inference graph adds); img/s is the median over each side's runs. The peer runs in the
checkpoint's layout and autocast dtype, as predict does. Writes OUT.json and OUT.md.

    .venv/bin/python bench/predict_throughput.py --checkpoint ckpt/last.ckpt --images /tmp/photos/val \\
        --workers 0,1,2 --out bench/results/cpu-2core/predict
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

PEER = r'''
import csv, json, sys, torch, torchvision
from safetensors.torch import load_file
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
weights, folder, workers, out, info = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], json.loads(sys.argv[5])
torch.set_num_threads(int(sys.argv[6]))
model = getattr(torchvision.models, info["model"])(num_classes=len(info["classes"]))
model.load_state_dict(load_file(weights))
model.eval()
layout = torch.channels_last if info["channels_last"] else torch.contiguous_format
model = model.to(memory_format=layout)
dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(info["autocast"])
size = info["height"]
transform = transforms.Compose([transforms.Resize(info["resize"]), transforms.CenterCrop(size), transforms.ToTensor(),
                                transforms.Normalize(info["mean"], info["std"])])
dataset = datasets.ImageFolder(folder, transform) if any(p.is_dir() for p in __import__("pathlib").Path(folder).iterdir()) else None
loader = DataLoader(dataset, batch_size=64, num_workers=workers)
with open(out, "w", newline="") as f, torch.inference_mode():
    w = csv.writer(f)
    w.writerow(["path"] + [f"index_{j}" for j in range(1, 6)] + [f"label_{j}" for j in range(1, 6)] + [f"prob_{j}" for j in range(1, 6)])
    k = 0
    for images, _ in loader:
        with torch.autocast("cpu", dtype=dtype, enabled=dtype is not None):
            logits = model(images.contiguous(memory_format=layout))
        p, ix = logits.float().softmax(1).topk(min(5, len(info["classes"])), 1)
        for row_p, row_ix in zip(p.tolist(), ix.tolist()):
            w.writerow([dataset.samples[k][0]] + row_ix + [info["classes"][i] for i in row_ix] + [f"{v:.6f}" for v in row_p])
            k += 1
'''


def cpu_name() -> str:
    """The CPU's model name and whether it has AVX-512 (the forward's speed depends on both)."""
    info = pathlib.Path("/proc/cpuinfo").read_text() if pathlib.Path("/proc/cpuinfo").exists() else ""
    name = next((l.split(":", 1)[1].strip() for l in info.splitlines() if l.startswith("model name")), "unknown CPU")
    return f"{name}, {'AVX-512' if 'avx512f' in info else 'no AVX-512'}"


def timed(args):
    start = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - start


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--images", required=True, help="a folder of CLASS/IMAGE files (an image folder's val/)")
    p.add_argument("--workers", default="0,1,2")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--pairs", type=int, default=2)
    p.add_argument("--cli", default=str(ROOT / "build" / "fastloop"))
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    import fastloop  # the checkpoint's class names and evaluation transform
    tmp = pathlib.Path(tempfile.mkdtemp())
    subprocess.run([a.cli, "export", "--checkpoint", a.checkpoint, "--out", tmp / "w.safetensors"], check=True)
    info = fastloop.model_info(a.checkpoint)
    count = sum(1 for f in pathlib.Path(a.images).rglob("*") if f.is_file())
    rows = []
    for workers in map(int, a.workers.split(",")):
        ours = [a.cli, "predict", "--checkpoint", a.checkpoint, "--workers", str(workers), "--threads", str(a.threads),
                "--batch-size", "64", "--out", tmp / "ours.csv", a.images]
        theirs = [a.python, "-c", PEER, tmp / "w.safetensors", a.images, str(workers), tmp / "theirs.csv",
                  json.dumps(info), str(a.threads)]
        commands = {"fastloop": ours, "fastloop_eager": ours[:2] + ["--no-graph"] + ours[2:], "pytorch": theirs}
        times = {side: [] for side in commands}
        for k in range(a.pairs):
            for side in (list(commands) if k % 2 == 0 else list(reversed(commands))):
                times[side].append(timed(commands[side]))
        rate = {s: count / statistics.median(t) for s, t in times.items()}
        rows.append({"workers": workers, "fastloop_img_per_s": rate["fastloop"],
                     "fastloop_eager_img_per_s": rate["fastloop_eager"], "pytorch_img_per_s": rate["pytorch"],
                     "seconds": times})
        print(rows[-1], flush=True)
    result = {"images": count, "model": info["model"], "image_size": info["height"], "threads": a.threads,
              "cpu": cpu_name(), "rows": rows}
    pathlib.Path(a.out + ".json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [f"# fastloop predict vs a PyTorch script: {count} images of {a.images}, {info['model']} at "
             f"{info['height']} px, top-5, {a.threads} threads ({cpu_name()})", "", f"`{' '.join(sys.argv)}`; whole processes, "
             f"median of {a.pairs} runs each, A B C C B A; load average {os.getloadavg()[0]:.2f} at the end", "",
             "| workers | fastloop predict img/s | --no-graph img/s | PyTorch script img/s | fastloop ÷ PyTorch | "
             "--no-graph ÷ PyTorch |", "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['workers']} | {r['fastloop_img_per_s']:.1f} | {r['fastloop_eager_img_per_s']:.1f} | "
                     f"{r['pytorch_img_per_s']:.1f} | {r['fastloop_img_per_s'] / r['pytorch_img_per_s']:.2f}× | "
                     f"{r['fastloop_eager_img_per_s'] / r['pytorch_img_per_s']:.2f}× |")
    pathlib.Path(a.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
