#!/usr/bin/env python3
"""PyTorch peer of `fastloop bench loader`: torch.utils.data.DataLoader with torchvision transforms on
CIFAR-shaped synthetic uint8 data held as numpy and turned into PIL images per sample, as torchvision's
CIFAR10 dataset does; or, with --imagefolder DIR, torchvision's ImageFolder(DIR/train) with the reference
ImageNet transforms on PIL images (augment on: RandomResizedCrop + RandomHorizontalFlip, off: Resize +
CenterCrop; then ToTensor + Normalize). Prints one JSON object {torch, rows: [{workers, augment,
img_per_s, cpu_us_per_img, images, seconds}]} on stdout; CPU time counts this process and its workers.

    .venv/bin/python bench/peers/loader_peer.py --workers 0,1,2 --batch-size 128 --augment both --batches 40
    .venv/bin/python bench/peers/loader_peer.py --imagefolder DIR --image-size 224 --workers 0,1,2 --batches 10
"""
import argparse
import json
import os
import time

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import datasets, transforms

CIFAR_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR_STD = (0.2470, 0.2435, 0.2616)
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def cpu_seconds():
    """User + system CPU seconds of this process and every live descendant (the DataLoader's workers)."""
    parents, times = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(pid)] = int(fields[1])
        times[int(pid)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    total, me = 0.0, os.getpid()
    for pid, t in times.items():
        p = pid
        while p not in (0, 1, me) and p in parents:
            p = parents[p]
        if p == me:
            total += t
    return total


def imagenet_transform(augment, size):
    steps = ([transforms.RandomResizedCrop(size), transforms.RandomHorizontalFlip()] if augment
             else [transforms.Resize(size * 256 // 224), transforms.CenterCrop(size)])
    return transforms.Compose(steps + [transforms.ToTensor(), transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD)])


class SyntheticCifar(Dataset):
    def __init__(self, n, transform, seed=0):
        rng = np.random.default_rng(seed)
        self.images = rng.integers(0, 256, size=(n, 32, 32, 3), dtype=np.uint8)  # HWC, as CIFAR10.data
        self.labels = rng.integers(0, 10, size=n).tolist()
        self.transform = transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.transform(Image.fromarray(self.images[i])), self.labels[i]


def make_dataset(a, augment):
    if a.imagefolder:
        return datasets.ImageFolder(os.path.join(a.imagefolder, "train"), imagenet_transform(augment, a.image_size))
    steps = [transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip()] if augment else []
    transform = transforms.Compose(steps + [transforms.ToTensor(), transforms.Normalize(CIFAR_MEAN, CIFAR_STD)])
    return SyntheticCifar(a.images, transform)


def measure(workers, augment, a):
    batch_size, batches, warmup = a.batch_size, a.batches, a.warmup
    loader = DataLoader(make_dataset(a, augment), batch_size=batch_size, shuffle=True, num_workers=workers,
                        drop_last=True, persistent_workers=workers > 0)
    seen, start, taken, cpu_start = 0, None, 0, None
    while taken < warmup + batches:
        for x, _ in loader:  # the epoch restarts when the data runs out, as in training
            if taken == warmup:
                start, cpu_start = time.perf_counter(), cpu_seconds()
            if taken >= warmup:
                seen += x.shape[0]
            taken += 1
            if taken == warmup + batches:
                break
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    del loader  # stops persistent workers before the next cell
    return {"workers": workers, "augment": augment, "img_per_s": seen / seconds, "cpu_us_per_img": 1e6 * cpu / seen,
            "images": seen, "seconds": seconds}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", default="0,1,2", help="comma-separated worker counts")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--augment", choices=["both", "on", "off"], default="both")
    p.add_argument("--batches", type=int, default=40, help="timed batches per cell")
    p.add_argument("--warmup", type=int, default=3, help="untimed batches first (worker start-up)")
    p.add_argument("--images", type=int, default=10000, help="dataset size (synthetic data)")
    p.add_argument("--imagefolder", default="", help="an image folder DIR (DIR/train/CLASS/IMAGE) instead of synthetic data")
    p.add_argument("--image-size", type=int, default=224, help="output side of the image-folder transforms")
    a = p.parse_args()
    augments = {"both": [False, True], "on": [True], "off": [False]}[a.augment]
    rows = [measure(int(w), aug, a) for aug in augments for w in a.workers.split(",")]
    print(json.dumps({"torch": torch.__version__, "rows": rows}))


if __name__ == "__main__":
    main()
