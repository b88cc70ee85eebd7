#!/usr/bin/env python3
"""What the loader's recycled batch memory saves: fastloop.Loader on the photo set (RandomResizedCrop 224 + flip +
normalise, batch 128), interleaved A/B in one process, per worker count and round:

  recycled  every batch let go at once: the workers write into the loader's few buffers (Loader::host_acquire),
            whose pages were faulted in by the warm-up
  fresh     the warm-up's batches kept, so that every buffer of the loader's pool stays taken, and each timed
            batch held until two later ones arrived: every batch is a fresh 77 MB at::empty (glibc mmaps it,
            the kernel faults in and zeroes it page by page on the workers' first write, munmap when it goes),
            what a loader without the pool would pay

Prints per cell the CPU µs per image (this process: the workers and the consumer), img/s and page faults per
batch, with the load average:

    .venv/bin/python bench/peers/batch_memory.py --data /tmp/photos --workers 1,2 --rounds 3
"""
import argparse
import collections
import os
import resource
import time

import torch
from torchvision.transforms import v2

import fastloop


def batches(loader):
    while True:
        yield from loader


def cell(data, workers, fresh, warmup, timed):
    transform = v2.Compose([v2.RandomResizedCrop(224), v2.RandomHorizontalFlip(), v2.ToDtype(torch.float32, scale=True),
                            v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    loader = fastloop.Loader(f"imagefolder:{data}", transform=transform, batch_size=128, workers=workers)
    it = batches(loader)
    kept = []
    for _ in range(warmup):
        batch = next(it)
        if fresh:  # the pool's buffers stay taken
            kept.append(batch)
    del batch
    recent = collections.deque(maxlen=2 if fresh else 0)
    before, start, images = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter(), 0
    for _ in range(timed):
        batch = next(it)
        images += batch[0].shape[0]
        recent.append(batch)
        del batch
    seconds, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    del kept, recent, it, loader
    return {"cpu_us": 1e6 * cpu / images, "sys_us": 1e6 * (after.ru_stime - before.ru_stime) / images,
            "img_s": images / seconds, "faults": (after.ru_minflt - before.ru_minflt) / timed}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="/tmp/photos", help="an image folder (DIR/train/CLASS/*.jpg)")
    p.add_argument("--workers", default="1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=10, help="untimed batches (the pool's buffers first touched)")
    p.add_argument("--batches", type=int, default=27, help="timed batches per cell")
    a = p.parse_args()
    print(f"fastloop {fastloop.__file__}; load average at start {os.getloadavg()[0]:.1f}")
    print("| round | workers | mode | CPU µs/img | of it system | img/s | page faults/batch | load |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    for r in range(1, a.rounds + 1):
        for workers in map(int, a.workers.split(",")):
            modes = ("recycled", "fresh") if r % 2 else ("fresh", "recycled")  # order alternates by round
            for mode in modes:
                load = os.getloadavg()[0]
                c = cell(a.data, workers, mode == "fresh", a.warmup, a.batches)
                print(f"| {r} | {workers} | {mode} | {c['cpu_us']:.0f} | {c['sys_us']:.0f} | {c['img_s']:,.0f} | "
                      f"{c['faults']:,.0f} | {load:.1f} |", flush=True)


if __name__ == "__main__":
    main()
