#!/usr/bin/env python3
"""FFCV 1.0.2 as a loader peer of `fastloop bench loader` (bench/peers/run.sh runs it in its own venv,
bench/peers/envs.sh ffcv). Its .beton is written once, untimed, from DIR/train (--work/train.beton, reused while
newer than the folder): each photo as FFCV's RGBImageField stores it, re-encoded as JPEG (write_mode="jpg",
quality 90, OpenCV, 4:2:0; the photo set's own files are quality 75-95 4:2:0, so the decode work is alike) at its
own size, and its label. Then its Loader (order RANDOM, os_cache, batch 128, drop_last, `num_workers` = fastloop's
workers) with RandomResizedCropRGBImageDecoder((224, 224)) (libjpeg-turbo, DCT-scaled, torchvision's box
parameters, OpenCV's INTER_AREA resize), RandomHorizontalFlip, NormalizeImage (ImageNet mean/std, float32),
ToTensor and ToTorchImage (a float32 N x C x H x W batch). Prints one JSON object {ffcv, rows: [{workers,
img_per_s, cpu_us_per_img, images}]}; img/s is the median of --repeats timed runs of --batches batches.

    python bench/peers/ffcv_loader.py --imagefolder /tmp/photos --work /tmp/photos-ffcv --workers 1,2
"""
import argparse
import json
import os
import statistics
import time
from importlib.metadata import version

import numpy as np

MEAN = np.array([0.485, 0.456, 0.406]) * 255
STD = np.array([0.229, 0.224, 0.225]) * 255


class Folder:
    """DIR/train/CLASS/IMAGE as (PIL RGB image, class index) pairs, classes in sorted order (ImageFolder's)."""

    def __init__(self, root):
        classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
        self.items = [(os.path.join(root, c, f), i) for i, c in enumerate(classes)
                      for f in sorted(os.listdir(os.path.join(root, c)))]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        from PIL import Image
        path, label = self.items[i]
        with Image.open(path) as image:
            return image.convert("RGB"), label


def write_beton(root, path):
    from ffcv.fields import IntField, RGBImageField
    from ffcv.writer import DatasetWriter
    newest = max(os.path.getmtime(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)
    if os.path.exists(path) and os.path.getmtime(path) > newest:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    writer = DatasetWriter(path + ".part", {"image": RGBImageField(write_mode="jpg", jpeg_quality=90),
                                            "label": IntField()}, num_workers=1)
    writer.from_indexed_dataset(Folder(root))
    os.replace(path + ".part", path)


def make_loader(path, workers, batch_size, size):
    from ffcv.fields.basics import IntDecoder
    from ffcv.fields.rgb_image import RandomResizedCropRGBImageDecoder
    from ffcv.loader import Loader, OrderOption
    from ffcv.transforms import NormalizeImage, RandomHorizontalFlip, ToTensor, ToTorchImage
    image = [RandomResizedCropRGBImageDecoder((size, size)), RandomHorizontalFlip(),
             NormalizeImage(MEAN, STD, np.float32), ToTensor(), ToTorchImage()]
    return Loader(path, batch_size=batch_size, num_workers=workers, order=OrderOption.RANDOM, os_cache=True,
                  drop_last=True, pipelines={"image": image, "label": [IntDecoder(), ToTensor()]}, seed=workers)


def measure(a, path, workers):
    loader = make_loader(path, workers, a.batch_size, a.image_size)

    def batches():
        while True:
            yield from loader

    it = batches()
    for _ in range(a.warmup):
        next(it)
    rates, cpus = [], []
    for _ in range(a.repeats):
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(a.batches):
            images, _ = next(it)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        rates.append(a.batches * a.batch_size / seconds)
        cpus.append(1e6 * cpu / (a.batches * a.batch_size))
    assert tuple(images.shape[1:]) == (3, a.image_size, a.image_size), images.shape
    return {"workers": workers, "img_per_s": statistics.median(rates), "cpu_us_per_img": statistics.median(cpus),
            "images": a.repeats * a.batches * a.batch_size}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--imagefolder", required=True, help="DIR with DIR/train/CLASS/IMAGE.jpg")
    p.add_argument("--work", required=True, help="a folder for the .beton (written once)")
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--batches", type=int, default=10, help="timed batches per repetition")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--write-only", action="store_true", help="write the .beton and stop")
    a = p.parse_args()
    path = os.path.join(a.work, "train.beton")
    write_beton(os.path.join(a.imagefolder, "train"), path)
    if a.write_only:
        return
    rows = [measure(a, path, int(w)) for w in a.workers.split(",")]
    print(json.dumps({"ffcv": version("ffcv"), "rows": rows}))


if __name__ == "__main__":
    main()
