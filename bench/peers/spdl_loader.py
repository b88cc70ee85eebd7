#!/usr/bin/env python3
"""SPDL as a loader peer of `fastloop bench loader` (bench/peers/run.sh runs it in its own venv,
bench/peers/envs.sh spdl): its PipelineBuilder over the shuffled files of DIR/train, each image read, demuxed and
decoded by spdl.io (FFmpeg's mjpeg decoder) through one FFmpeg filter graph that does torchvision's RandomResizedCrop
box (area 8-100%, aspect 3/4-4/3, drawn here as torchvision's get_params does), a bilinear scale to 224x224 and a
random horizontal flip, in `concurrency` = fastloop's workers threads (the pipeline's thread pool has as many);
batches of 128 are stacked and normalised (ImageNet mean/std, float32 NCHW) with numpy. Prints one JSON object
{spdl, rows: [{workers, img_per_s, cpu_us_per_img, images}]}; img/s is the median of --repeats timed runs.

    python bench/peers/spdl_loader.py --imagefolder /tmp/photos --workers 1,2
"""
import argparse
import glob
import json
import math
import os
import random
import statistics
import time
from importlib.metadata import version

import numpy as np
import spdl.io
from spdl.pipeline import PipelineBuilder

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(1, 3, 1, 1) * 255
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(1, 3, 1, 1) * 255


def crop_box(rng, height, width, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
    """torchvision's RandomResizedCrop.get_params: (top, left, h, w)."""
    area = height * width
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target = area * rng.uniform(*scale)
        aspect = math.exp(rng.uniform(*log_ratio))
        w, h = int(round(math.sqrt(target * aspect))), int(round(math.sqrt(target / aspect)))
        if 0 < w <= width and 0 < h <= height:
            return rng.randint(0, height - h), rng.randint(0, width - w), h, w
    in_ratio = width / height
    if in_ratio < ratio[0]:
        w, h = width, int(round(width / ratio[0]))
    elif in_ratio > ratio[1]:
        h, w = height, int(round(height * ratio[1]))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def make_load(size, seed):
    rng = random.Random(seed)  # draws from several threads: each call's draws are atomic enough for a benchmark

    def load(path):
        with open(path, "rb") as f:
            packets = spdl.io.demux_image(f.read())
        top, left, h, w = crop_box(rng, packets.height, packets.width)
        flip = ",hflip" if rng.random() < 0.5 else ""
        graph = f"crop={w}:{h}:{left}:{top},scale={size}:{size}:flags=bilinear{flip},format=rgb24"
        frames = spdl.io.decode_packets(packets, filter_desc=graph)
        return spdl.io.to_numpy(spdl.io.convert_frames(frames))

    return load


def collate(images):
    batch = np.stack(images).transpose(0, 3, 1, 2).astype(np.float32)  # N x C x H x W
    return (batch - MEAN) / STD


def epochs(files, seed):
    rng = random.Random(seed)
    while True:
        order = list(files)
        rng.shuffle(order)
        yield from order


def measure(a, files, threads):
    pipeline = (PipelineBuilder()
                .add_source(epochs(files, threads))
                .pipe(make_load(a.image_size, threads), concurrency=threads)
                .aggregate(a.batch_size, drop_last=True)
                .pipe(collate)
                .add_sink(3)
                .build(num_threads=threads))
    rates, cpus = [], []
    with pipeline.auto_stop():
        batches = iter(pipeline)
        for _ in range(a.warmup):
            next(batches)
        for _ in range(a.repeats):
            start, cpu = time.perf_counter(), time.process_time()
            for _ in range(a.batches):
                next(batches)
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            rates.append(a.batches * a.batch_size / seconds)
            cpus.append(1e6 * cpu / (a.batches * a.batch_size))
    return {"workers": threads, "img_per_s": statistics.median(rates), "cpu_us_per_img": statistics.median(cpus),
            "images": a.repeats * a.batches * a.batch_size}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--imagefolder", required=True, help="DIR with DIR/train/CLASS/IMAGE.jpg")
    p.add_argument("--workers", default="1,2", help="comma-separated thread counts (fastloop's workers)")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--batches", type=int, default=10, help="timed batches per repetition")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args()
    files = sorted(glob.glob(os.path.join(a.imagefolder, "train", "*", "*")))
    rows = [measure(a, files, int(w)) for w in a.workers.split(",")]
    print(json.dumps({"spdl": version("spdl"), "rows": rows}))


if __name__ == "__main__":
    main()
