#!/usr/bin/env python3
"""A PyTorch training loop fed by torch.utils.data.DataLoader and by fastloop.Loader, at equal workers:
torchvision's model (ResNet-18 by default), SGD, autocast (bf16 on a CPU that has it natively, fp16 on
CUDA), channels_last, the training transform (RandomResizedCrop + flip, normalised) on an image folder.

The two loaders alternate A B B A over --pairs pairs; each repetition trains --steps steps after
--warmup untimed ones. Reported per side: img/s (median over its repetitions, min-max) and the share of
the time spent waiting for the next batch. Writes OUT.json and OUT.md.

    .venv/bin/python bench/python_loop.py --data imagefolder:/tmp/photos --workers 2 \\
        --out bench/results/cpu-2core/python_loop
    python3 bench/python_loop.py --data imagefolder:DIR --device cuda --model resnet50 --workers 8 --out OUT
"""
import argparse
import json
import os
import pathlib
import statistics
import sys
import time

import torch
import torchvision
from torch.utils.data import DataLoader
from torchvision import datasets

import fastloop

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "peers"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from loader_peer import imagenet_transform  # noqa: E402
from python_loader import children_gone  # noqa: E402


def autocast_dtype(device):
    if device.type == "cuda":
        return torch.float16
    flags = open("/proc/cpuinfo").read()
    return torch.bfloat16 if ("avx512_bf16" in flags or "amx_bf16" in flags) else None


def make_loader(side, a, device):
    if side == "fastloop":
        return fastloop.Loader(a.data, batch_size=a.batch_size, workers=a.workers, image_size=a.image_size,
                               channels_last=True, device=device)
    dataset = datasets.ImageFolder(os.path.join(a.data.split(":", 1)[1], "train"),
                                   imagenet_transform(True, a.image_size))
    return DataLoader(dataset, batch_size=a.batch_size, shuffle=True, num_workers=a.workers, drop_last=True,
                      pin_memory=device.type == "cuda", persistent_workers=a.workers > 0)


def repetition(side, model, optimizer, a, device, dtype):
    """img/s and the share of wall time spent waiting for batches, over a.steps timed steps."""
    loader = make_loader(side, a, device)
    batches = (b for _ in iter(int, 1) for b in loader)  # epochs restart as in training
    waited, seen, start = 0.0, 0, None
    for step in range(a.warmup + a.steps):
        if step == a.warmup:
            if device.type == "cuda":
                torch.cuda.synchronize()
            waited, seen, start = 0.0, 0, time.perf_counter()
        t = time.perf_counter()
        images, labels = next(batches)
        images = images.to(device, non_blocking=True).contiguous(memory_format=torch.channels_last)
        labels = labels.to(device, non_blocking=True)
        waited += time.perf_counter() - t
        with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        seen += images.shape[0]
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    del batches, loader
    children_gone()
    return seen / seconds, waited / seconds


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="imagefolder:DIR")
    p.add_argument("--model", default="resnet18")
    p.add_argument("--device", default="cpu")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--pairs", type=int, default=2)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    device = torch.device(a.device)
    dtype = autocast_dtype(device)
    classes = fastloop.Loader(a.data, batch_size=1, workers=0).num_classes
    model = getattr(torchvision.models, a.model)(num_classes=classes).to(device, memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    reps = {"dataloader": [], "fastloop": []}
    for k in range(a.pairs):
        for side in (("dataloader", "fastloop") if k % 2 == 0 else ("fastloop", "dataloader")):
            reps[side].append(repetition(side, model, optimizer, a, device, dtype))
            print(side, [round(v, 3) for v in reps[side][-1]], flush=True)
    rows = {s: {"img_per_s": statistics.median(r[0] for r in v), "min": min(r[0] for r in v),
                "max": max(r[0] for r in v), "wait_share": statistics.median(r[1] for r in v)} for s, v in reps.items()}
    name = torch.cuda.get_device_name(0) if device.type == "cuda" else f"{os.cpu_count()} CPU cores"
    result = {"torch": torch.__version__, "device": name, "model": a.model, "autocast": str(dtype), "args": vars(a),
              "rows": rows, "repetitions": reps}
    pathlib.Path(a.out + ".json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [f"# A PyTorch loop ({a.model}, autocast {dtype}, channels_last) on DataLoader vs fastloop.Loader",
             "", f"{name}, torch {torch.__version__}, {a.data}, batch {a.batch_size}, {a.image_size} px, "
             f"{a.workers} workers; {a.pairs} A B pairs of {a.steps} steps; `{' '.join(sys.argv)}`", "",
             "| loader | img/s, median (min–max) | time waiting for data |", "|---|---:|---:|"]
    for side, r in rows.items():
        lines.append(f"| {side} | {r['img_per_s']:.1f} ({r['min']:.1f}–{r['max']:.1f}) | {100 * r['wait_share']:.0f}% |")
    ratio = rows["fastloop"]["img_per_s"] / rows["dataloader"]["img_per_s"]
    lines += ["", f"fastloop.Loader ÷ DataLoader: {ratio:.2f}×"]
    pathlib.Path(a.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
