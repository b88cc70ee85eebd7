#!/usr/bin/env python3
"""PyTorch peer of `fastloop bench loader`: torch.utils.data.DataLoader with torchvision transforms on
CIFAR-shaped synthetic uint8 data held as numpy and turned into PIL images per sample, as torchvision's
CIFAR10 dataset does. Prints one JSON list of {workers, augment, img_per_s, images, seconds} on stdout.

    .venv/bin/python tools/loader_peer.py --workers 0,1,2 --batch-size 128 --augment both --batches 40
"""
import argparse
import json
import time

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

CIFAR_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR_STD = (0.2470, 0.2435, 0.2616)


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


def measure(workers, augment, batch_size, batches, warmup, images):
    steps = [transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip()] if augment else []
    transform = transforms.Compose(steps + [transforms.ToTensor(), transforms.Normalize(CIFAR_MEAN, CIFAR_STD)])
    loader = DataLoader(SyntheticCifar(images, transform), batch_size=batch_size, shuffle=True, num_workers=workers,
                        drop_last=True, persistent_workers=workers > 0)
    seen, start, taken = 0, None, 0
    while taken < warmup + batches:
        for x, _ in loader:  # the epoch restarts when the data runs out, as in training
            if taken == warmup:
                start = time.perf_counter()
            if taken >= warmup:
                seen += x.shape[0]
            taken += 1
            if taken == warmup + batches:
                break
    seconds = time.perf_counter() - start
    return {"workers": workers, "augment": augment, "img_per_s": seen / seconds, "images": seen, "seconds": seconds}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", default="0,1,2", help="comma-separated worker counts")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--augment", choices=["both", "on", "off"], default="both")
    p.add_argument("--batches", type=int, default=40, help="timed batches per cell")
    p.add_argument("--warmup", type=int, default=3, help="untimed batches first (worker start-up)")
    p.add_argument("--images", type=int, default=10000, help="dataset size")
    a = p.parse_args()
    augments = {"both": [False, True], "on": [True], "off": [False]}[a.augment]
    rows = [measure(int(w), aug, a.batch_size, a.batches, a.warmup, a.images)
            for aug in augments for w in a.workers.split(",")]
    print(json.dumps({"torch": torch.__version__, "rows": rows}))


if __name__ == "__main__":
    main()
