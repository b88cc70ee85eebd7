#!/usr/bin/env python3
"""NVIDIA DALI's CPU pipeline as a loader peer of `fastloop bench loader` (bench/peers/run.sh runs it in its own
venv, bench/peers/envs.sh dali): readers.file over DIR/train (shuffled) -> decoders.image_random_crop (libjpeg-turbo,
torchvision's RandomResizedCrop box: area 8-100%, aspect 3/4-4/3, ROI decode) -> resize to 224x224 (linear,
antialiased) -> crop_mirror_normalize (random flip, ImageNet mean/std, float32 CHW), batch 128, every operator on
the CPU (device_id=None) and `num_threads` = fastloop's workers. Prints one JSON object {dali, rows: [{workers,
img_per_s, cpu_us_per_img, images, seconds}]}; img/s is the median of --repeats timed runs of --batches batches.

    python bench/peers/dali_loader.py --imagefolder /tmp/photos --workers 1,2
"""
import argparse
import json
import os
import statistics
import time

import nvidia.dali as dali
import nvidia.dali.fn as fn
import nvidia.dali.types as types

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def make_pipeline(root, threads, batch_size, size, seed):
    @dali.pipeline_def(batch_size=batch_size, num_threads=threads, device_id=None, seed=seed)
    def pipeline():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="reader")
        images = fn.decoders.image_random_crop(jpegs, device="cpu", output_type=types.RGB,
                                               random_area=[0.08, 1.0], random_aspect_ratio=[3 / 4, 4 / 3],
                                               num_attempts=10)
        images = fn.resize(images, resize_x=size, resize_y=size, interp_type=types.INTERP_LINEAR, antialias=True)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=MEAN, std=STD,
                                          mirror=fn.random.coin_flip(probability=0.5))
        return images, labels

    pipe = pipeline()
    pipe.build()
    return pipe


def measure(a, threads):
    pipe = make_pipeline(os.path.join(a.imagefolder, "train"), threads, a.batch_size, a.image_size, seed=threads)
    for _ in range(a.warmup):
        pipe.run()
    rates, cpus, total = [], [], 0
    for _ in range(a.repeats):
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(a.batches):
            images, _ = pipe.run()
            total += len(images)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        rates.append(a.batches * a.batch_size / seconds)
        cpus.append(1e6 * cpu / (a.batches * a.batch_size))
    del pipe
    return {"workers": threads, "img_per_s": statistics.median(rates), "cpu_us_per_img": statistics.median(cpus),
            "images": total}


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
    rows = [measure(a, int(w)) for w in a.workers.split(",")]
    print(json.dumps({"dali": dali.__version__, "rows": rows}))


if __name__ == "__main__":
    main()
